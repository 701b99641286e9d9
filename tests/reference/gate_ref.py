"""The reference rule for nodegate's gate, and one `gate --batch` line judged by it.

Everything between the two "reference" markers below is the decision rule from the
fabric qualification gate runbook (section "The decision rule"), transcribed exactly:
same constants, same order of checks, same numpy calls. It is the specification that
nodegate's C gate must reproduce verdict for verdict. Do not "improve" it, tidy it or
fix it here: a change to this block is a change to the specification, and the C side
would then be tested against something nobody agreed to. If the runbook changes, copy
the new block in verbatim.

Below the block, judge_case() reads one batch case the way `nodegate gate --batch`
documents it (src/cli/cmd_gate.c, src/cli/cmd_gate_batch.c) and calls the reference.
"""
# ---- reference: begin (runbook "The decision rule", verbatim) ----
import numbers
# gate.py -- validated: decide a verdict for one qualification run against a baseline,
# and refuse to pass anything the run did not actually measure.
# numpy only.
import numpy as np

WARN, BLOCK = 0.05, 0.10          # matches the fabric-regression runbook's policy table
# Chosen conventions, not derived quantities. Both bound "the run measured something
# other than what the baseline measured" rather than "the fabric is slow".
FAST, SLOW = 1.5, 0.25
# The gate asserts on a NAMED SET, because a test that never registered contributes no
# status at all and an absent status is not a failed one.
REQUIRED_DIAG = ("pcie", "memory", "nccl_tests")


def _drop(samples, baseline_median):
    """Fractional shortfall of this run's median against the baseline median."""
    return 1.0 - float(np.median(samples)) / baseline_median


def _noise_bar(cv, n):
    """Two standard errors of the baseline's own run-to-run spread.

    cv/sqrt(n) is the standard error of the MEAN, used here for the median's, which is
    wider by about 25% on normal data. The substitution makes the bar mildly permissive.
    It is the requirement to repeat, not the constant, that carries the argument.
    """
    return 2.0 * cv / np.sqrt(n)


def _significant(drop, bar, cv, n):
    """A shortfall counts only if it clears both the policy bar and the measurement noise."""
    return drop > bar and drop > _noise_bar(cv, n)


# Verdicts that are not statements about performance. None of them may be admitted, and
# none may be rewritten by hysteresis, which only smooths pass / warn / block.
HARD = ("corrupt", "correctness-unverified", "invalid-input", "no-measurement",
        "no-baseline", "diag-incomplete", "diag-failed", "incomparable", "unstable",
        "implausible", "insufficient-samples")
DIAG_STATES = ("pass", "skip", "fail")


def _finite(*vals):
    """NaN and infinity compare false against every threshold, so a rule that does not
    reject them fails OPEN: every rejection branch is skipped and the verdict is pass.

    numbers.Real rather than (int, float) so numpy scalars are accepted consistently:
    np.float64 subclasses float but np.int64 and np.float32 do not, and an accept rule
    resting on that inheritance accepts or rejects by accident.
    """
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            return False
        if v != v or v in (float("inf"), float("-inf")):
            return False
    return True


def _unmeasured(record, baseline):
    """Every way a run can fail to be a measurement. Checked before any arithmetic."""
    # Corruption is baseline-independent and outranks everything, so it really is first.
    # Ordering it after the sample and baseline checks lets a rollout-stopping result be
    # downgraded to a harness repair.
    wrong = record.get("wrong", "missing")
    if wrong == "missing" or (wrong is not None and not _finite(wrong)):
        return "invalid-input"
    if wrong is None:
        return "correctness-unverified"               # the #wrong column read N/A
    if wrong < 0:
        return "invalid-input"          # a negative count of wrong elements is not a count
    if wrong > 0:
        return "corrupt"
    if not record.get("samples"):
        return "no-measurement"                       # exit status 0 is not a measurement
    if not _finite(*record["samples"]) or any(s <= 0 for s in record["samples"]):
        return "invalid-input"          # a non-positive bandwidth is not a measurement
    if (not _finite(baseline.get("median"), baseline.get("cv"))
            or baseline["median"] <= 0 or baseline["cv"] <= 0):
        return "no-baseline"            # a non-positive spread cannot describe run-to-run noise                          # absent, zero or non-finite
    diag = record.get("diag") or {}
    if any(s not in DIAG_STATES for s in diag.values()):
        return "invalid-input"          # an unrecognised status is not a pass
    # Absent, skipped and failed are three different things, and the page says so. A rule
    # that collapses them reports a diagnostic that FAILED as merely missing, which routes
    # a hardware finding to the harness queue.
    if any(t not in diag for t in REQUIRED_DIAG) or any(s == "skip" for s in diag.values()):
        return "diag-incomplete"
    if any(s == "fail" for s in diag.values()):
        return "diag-failed"
    if record.get("class") != baseline.get("class"):
        return "incomparable"                         # a baseline is a topology, not a number
    spread = float(np.std(record["samples"]) / np.mean(record["samples"]))
    if len(record["samples"]) > 1 and spread > 3.0 * baseline["cv"]:
        return "unstable"                             # the run disagrees with itself
    return None


def gate(record, baseline, cohort_drops=()):
    """Verdict for one candidate measurement. Anything not clearly measured blocks."""
    unmeasured = _unmeasured(record, baseline)
    if unmeasured:
        return unmeasured

    ratio = float(np.median(record["samples"])) / baseline["median"]
    if ratio >= FAST or ratio <= SLOW:
        return "implausible"

    drop, n = _drop(record["samples"], baseline["median"]), len(record["samples"])
    # A median describes the middle, not the population. A run that is half at baseline and
    # half well under it has a clean median and a spread that can stay inside the
    # instability bar, so the slow fraction is checked separately, and only where the
    # aggregate already looks acceptable. A uniformly slow run is not bimodal, it is slow,
    # and belongs in the ordinary warn/block path below.
    slow = float(np.mean(np.asarray(record["samples"]) < baseline["median"] * (1 - BLOCK)))
    if not _significant(drop, WARN, baseline["cv"], n):
        if slow >= 0.25:
            return "bimodal"
        # Failing to detect a regression is not evidence of equivalence. If the run could
        # not have resolved the policy bar at this sample count, say so instead of passing.
        if _noise_bar(baseline["cv"], n) > WARN and drop > 0:
            return "insufficient-samples"
        return "pass"
    # A fleet event excuses a node only if the node is NO WORSE than the fleet, within
    # noise. The test is deliberately one-sided: a node better than the cohort is still
    # explained by the fleet event. Comparing against the cohort median with no bound at
    # all is what would excuse an arbitrarily bad node.
    # Cohort data is validated exactly as strictly as candidate data. Unvalidated, five
    # infinities or five booleans satisfy the majority test and excuse an arbitrarily bad
    # node, which makes the alibi easier to obtain than the accusation.
    cohort = [d for d in cohort_drops if _finite(d) and -1.0 <= d <= 1.0]
    if len(cohort) == len(cohort_drops) and len(cohort) >= 5 and np.mean(np.asarray(cohort) > WARN) >= 0.6:
        if drop - float(np.median(cohort)) <= _noise_bar(baseline["cv"], n):
            return "fleet-regression"
    if _significant(drop, BLOCK, baseline["cv"], n):
        return "block"
    return "warn"


def with_hysteresis(verdict, raw_history, blocked=False, clear_after=2, escalate_after=3):  # noqa: C901
    """Damp both edges, from RAW gate verdicts plus an explicit blocked flag.

    Taking history as raw verdicts and blocked-ness separately is what makes this
    well-defined. Feeding it back its own output cannot work: store effective verdicts and
    a block never clears, because each attempted pass is recorded as another block; store
    raw ones with no flag and a block raised by accumulated warnings clears on one pass.
    Returns (effective verdict, still blocked).
    """
    # bool is a subclass of int and True >= 1, so an unexcluded bool passes as the count 1.
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1
           for v in (clear_after, escalate_after)):
        raise ValueError("thresholds are counts of runs, minimum 1")
    # Hysteresis smooths a noisy performance signal. It has no business rewriting a verdict
    # that is not about performance: a corrupt or unmeasured run must stay non-admissible,
    # and must not be relabelled "block" either, which would erase the reason.
    if verdict in HARD:
        return verdict, True
    recent = [v for v in raw_history if v not in HARD] + [verdict]
    if blocked:
        cleared = len(recent) >= clear_after and all(v == "pass" for v in recent[-clear_after:])
        return ("pass", False) if cleared else ("block", True)
    if verdict == "block":
        return "block", True
    if len(recent) >= escalate_after and all(v == "warn" for v in recent[-escalate_after:]):
        return "block", True
    return verdict, False

# ---- reference: end ----


CASE_KEYS = ("record", "baseline", "cohort_drops", "history", "blocked",
             "clear_after", "escalate_after")


class CaseError(ValueError):
    """A batch line nodegate answers with {"error": ...} rather than a verdict."""


def _count(case, key, default):
    # Validated whenever present, with or without a history: the same test
    # with_hysteresis() applies to its thresholds.
    if key not in case:
        return default
    v = case[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise CaseError(f"{key} must be a whole number of runs, at least 1")
    return v


def _not_iterable(v):
    return isinstance(v, (bool, int, float))


def _gate_as_nodegate(record, baseline, cohort):
    """gate(), with the places where the reference raises mapped to what nodegate
    answers at the same position in the order of checks (src/core/record.c turns
    the field into something the C gate rejects at exactly that check):

      samples truthy but not iterable (a nonzero number, true): _finite(*samples)
          raises TypeError. record.c read_samples() reads any truthy non-array as
          one non-number, so the samples check answers invalid-input.
      diag truthy but not an object (a non-empty list or string, a nonzero number,
          true): diag.values() raises AttributeError. record.c read_diag() sets
          diag_malformed, so the diag status check answers invalid-input.
      a sample, the baseline median or the baseline cv written as a positive
          integer too large for a float (1 followed by 400 zeros): the reference
          keeps it as an exact int, finite and positive, so it passes every check,
          and raises OverflowError where arithmetic first converts it (the spread,
          3.0 * cv, the ratio, the noise bar). record.c marks it (samples_overflow,
          median_overflow, cv_overflow) and judge/gate.c answers invalid-input at
          those same points (NG_STEP_OVERFLOW).

    Anything else the reference raises is not mapped: it propagates, and the
    differential test reports it as a failure of the reference itself.
    """
    try:
        return gate(record, baseline, cohort)
    except TypeError:
        samples = record.get("samples")
        if samples and _not_iterable(samples):
            return "invalid-input"
        raise
    except AttributeError:
        diag = record.get("diag")
        if diag and not isinstance(diag, dict):
            return "invalid-input"
        raise
    except OverflowError:
        if (any(_too_big(s) for s in record.get("samples") or ())
                or _too_big(baseline.get("median")) or _too_big(baseline.get("cv"))):
            return "invalid-input"
        raise


def _too_big(v):
    """A positive int that no float can hold."""
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        return False
    try:
        float(v)
    except OverflowError:
        return True
    return False


def judge_case(case):
    """One `nodegate gate --batch` line, already parsed by json.loads: returns
    {"verdict": v}, plus "effective" and "blocked" when the case carries a history
    or a blocked flag, or {"error": reason} where nodegate refuses the line."""
    try:
        if not isinstance(case, dict):
            raise CaseError("a case must be a JSON object with at least \"record\"")
        for k in case:
            if k not in CASE_KEYS:
                raise CaseError(f"unknown key {k!r}")
        if "record" not in case:
            raise CaseError("the case has no \"record\"")
        record = case["record"]
        if not isinstance(record, dict):
            raise CaseError("a record must be a JSON object")
        baseline = case.get("baseline")
        if baseline is None:
            baseline = {}
        elif not isinstance(baseline, dict):
            raise CaseError("a baseline must be a JSON object")
        # cohort_drops: null or absent is no cohort. A list is passed as it is. Any
        # other value is, to nodegate (record.c ng_gate_input_cohort_json), an invalid
        # cohort: one non-number, so no fleet attribution. The reference would iterate
        # a string or an object (its characters or keys are not numbers: invalid, or
        # empty and so too small) and raise on a number or a boolean; in every case
        # the only effect a cohort has, fleet-regression, is impossible. An empty
        # string iterates as an empty cohort on both sides.
        drops = case.get("cohort_drops")
        if drops is None or drops == "":
            cohort = ()
        elif isinstance(drops, list):
            cohort = drops
        else:
            cohort = (float("nan"),)
        history = case.get("history")
        if "history" in case and not isinstance(history, list):
            raise CaseError("history must be an array of raw verdicts")
        clear_after = _count(case, "clear_after", 2)
        escalate_after = _count(case, "escalate_after", 3)
    except CaseError as e:
        return {"error": str(e)}

    with np.errstate(all="ignore"):
        verdict = _gate_as_nodegate(record, baseline, cohort)
    out = {"verdict": verdict}
    if "history" in case or "blocked" in case:
        effective, blocked = with_hysteresis(verdict, history or [], bool(case.get("blocked")),
                                             clear_after, escalate_after)
        out["effective"] = effective
        out["blocked"] = blocked
    return out

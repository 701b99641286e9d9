#!/usr/bin/python3
"""Differential test: `nodegate gate --batch` against the runbook's reference rule.

    diff_gate.py --nodegate PATH [--n N] [--seed S] [--show K]

Generates N batch lines (gen_cases.py, profile "mixed"), judges each with json.loads
and gate_ref.judge_case(), runs PATH gate --batch once over all of them, and compares
line by line: the same verdict (and effective verdict and blocked flag where the line
asks for hysteresis), or an error on both sides (the texts are not compared). It also
runs the runbook's 15-row "Executed output" table through the binary, verdict for
verdict, and checks that the lines nodegate refuses by design (gen_cases.deviation_lines)
get an error. Ends with "P passed, F failed"; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy
except ImportError as e:
    print(f"diff_gate: numpy is not importable by {sys.executable} ({e}); the reference "
          "rule needs it. Install python3-numpy (scripts/setup-deps --test).")
    print("0 passed, 1 failed")
    sys.exit(1)

import gate_ref                     # noqa: E402
import gen_cases                    # noqa: E402

# The default case count keeps the whole test well under 60 s on a slow 2-core machine.
DEFAULT_N = 20000

# The runbook's "Executed output", verbatim.
EXECUTED_OUTPUT = """\
case                              n  verdict
at baseline                       9  pass
exit 0, nothing parsed            0  no-measurement
diag block absent                 9  diag-incomplete
nccl_tests skipped                9  diag-incomplete
#wrong read N/A                   9  correctness-unverified
corrupt + wrong baseline          9  corrupt
run disagrees with itself         5  unstable
0.4% of baseline                  9  implausible
7% down, 1 sample                 1  insufficient-samples
NaN in samples                    9  invalid-input
corrupt with no samples           0  corrupt
7% down, 9 samples                9  warn
12% down, cohort also down        9  fleet-regression
50% down, cohort mildly down      9  block
12% down, cohort healthy          9  block
"""


def runbook_rows():
    """The runbook's ROWS, built as it builds them. Returns (label, record, cohort,
    record as nodegate receives it). JSON has no NaN that nodegate accepts, so the NaN
    row reaches the binary as non-numbers, which the C record reader turns into NaN
    (src/core/record.c number_or_nan); the reference is run on the real NaN."""
    BASE = {"class": "8xH100-SXM/2node/1rail", "median": 240.0, "cv": 0.04}

    def rec(**kw):
        r = {"class": BASE["class"], "samples": [240.0] * 9, "wrong": 0,
             "diag": {t: "pass" for t in gate_ref.REQUIRED_DIAG}}
        r.update(kw)
        return r

    bare = rec()
    del bare["diag"]
    fleet = (0.12, 0.115, 0.125, 0.118, 0.122)
    mild = (0.06, 0.055, 0.051, 0.06, 0.058)
    nan = float("nan")
    rows = [
        ("at baseline",                 rec(),                                      ()),
        ("exit 0, nothing parsed",      rec(samples=[]),                            ()),
        ("diag block absent",           bare,                                       ()),
        ("nccl_tests skipped",          rec(diag={"pcie": "pass", "memory": "pass",
                                                  "nccl_tests": "skip"}),           ()),
        ("#wrong read N/A",             rec(wrong=None),                            ()),
        ("corrupt + wrong baseline",    rec(wrong=3, **{"class": "other"}),          ()),
        ("run disagrees with itself",   rec(samples=[100., 100., 240., 380., 380.]), ()),
        ("0.4% of baseline",            rec(samples=[1.0] * 9),                     ()),
        ("7% down, 1 sample",           rec(samples=[223.2]),                       ()),
        ("NaN in samples",              rec(samples=[nan] * 9),                     ()),
        ("corrupt with no samples",     rec(wrong=7, samples=[]),                   ()),
        ("7% down, 9 samples",          rec(samples=[223.2] * 9),                   ()),
        ("12% down, cohort also down",  rec(samples=[211.2] * 9),                 fleet),
        ("50% down, cohort mildly down", rec(samples=[120.0] * 9),                 mild),
        ("12% down, cohort healthy",    rec(samples=[211.2] * 9), (0.0, 0.01, 0.0, 0.005, 0.0)),
    ]
    out = []
    for label, r, coh in rows:
        wire = dict(r)
        if label == "NaN in samples":
            wire["samples"] = ["NaN"] * 9
        line = json.dumps({"record": wire, "baseline": BASE, "cohort_drops": list(coh)})
        out.append((label, r, BASE, coh, line))
    return out


def expected_table():
    rows = []
    for text in EXECUTED_OUTPUT.splitlines()[1:]:
        label, n, verdict = text[:32].rstrip(), int(text[33:35]), text[37:]
        rows.append((label, n, verdict))
    return rows


def reference(line):
    """What the reference says about one line."""
    try:
        case = json.loads(line)
    except (ValueError, RecursionError) as e:
        return {"error": f"json: {e}"}
    return gate_ref.judge_case(case)


def same(ref, got):
    if "error" in ref or (isinstance(got, dict) and "error" in got):
        return "error" in ref and isinstance(got, dict) and "error" in got
    return ref == got


def show(line, limit=600):
    r = repr(line)
    return r if len(r) <= limit else r[:limit] + f"... ({len(line)} chars)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--n", type=int, default=DEFAULT_N)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--show", type=int, default=10, help="mismatches to print in full")
    a = ap.parse_args()

    t0 = time.monotonic()
    lines = list(gen_cases.generate(a.n, a.seed, "mixed"))
    rows = runbook_rows()
    deviations = gen_cases.deviation_lines()
    t_gen = time.monotonic() - t0

    expected = []
    for line in lines:
        try:
            expected.append(reference(line))
        except Exception as e:  # the reference raised where no mapping applies
            expected.append({"reference raised": f"{type(e).__name__}: {e}"})
    t_ref = time.monotonic() - t0 - t_gen

    wire = lines + [r[4] for r in rows] + deviations
    payload = "".join(line + "\n" for line in wire).encode("utf-8")
    t1 = time.monotonic()
    proc = subprocess.run([a.nodegate, "gate", "--batch"], input=payload,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    t_c = time.monotonic() - t1
    out = proc.stdout.decode("utf-8", "replace").split("\n")
    if out and out[-1] == "":
        out.pop()

    passed = failed = 0
    shown = 0

    def fail(what, line, ref, got):
        nonlocal failed, shown
        failed += 1
        if shown < a.show:
            shown += 1
            print(f"MISMATCH {what}")
            print(f"  input:     {show(line)}")
            print(f"  reference: {json.dumps(ref)}")
            print(f"  nodegate:  {got if isinstance(got, str) else json.dumps(got)}")

    if proc.returncode not in (0, 1) or len(out) != len(wire):
        print(f"nodegate gate --batch exited {proc.returncode} with {len(out)} output lines "
              f"for {len(wire)} input lines")
        err = proc.stderr.decode("utf-8", "replace").strip()
        if err:
            print("  stderr: " + err[-2000:])
        failed += 1

    def got_at(i):
        if i >= len(out):
            return "(no output line)"
        try:
            return json.loads(out[i])
        except ValueError:
            return out[i]

    kinds = {}
    for i, (line, ref) in enumerate(zip(lines, expected)):
        got = got_at(i)
        if same(ref, got):
            passed += 1
            k = "error" if "error" in ref else ref["verdict"]
            kinds[k] = kinds.get(k, 0) + 1
        else:
            fail(f"line {i + 1}", line, ref, got)

    # The runbook's table, through the binary and through the reference.
    table = expected_table()
    for j, ((label, r, base, coh, line), (tlabel, tn, tverdict)) in enumerate(zip(rows, table)):
        got = got_at(len(lines) + j)
        ref_v = gate_ref.gate(r, base, coh)
        ok = (label == tlabel and len(r.get("samples", [])) == tn and ref_v == tverdict
              and isinstance(got, dict) and got.get("verdict") == tverdict)
        if ok:
            passed += 1
        else:
            fail(f"runbook row {label!r} (expected {tverdict})", line, {"verdict": ref_v}, got)
    if len(table) != len(rows) or len(rows) != 15:
        print(f"runbook table has {len(table)} rows, ROWS has {len(rows)}; expected 15")
        failed += 1

    # Refused by design: nodegate must answer with an error (and json.loads must accept
    # them, or they are not deviations but ordinary cases).
    base = len(lines) + len(rows)
    for j, line in enumerate(deviations):
        got = got_at(base + j)
        try:
            json.loads(line)
            accepted = True
        except ValueError:
            accepted = False
        if accepted and isinstance(got, dict) and "error" in got:
            passed += 1
        else:
            fail(f"documented deviation {j + 1} (nodegate must refuse it)", line,
                 {"json.loads accepts": accepted}, got)

    total = time.monotonic() - t0
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1]))
    print(f"{len(lines)} generated cases (seed {a.seed}, numpy {numpy.__version__}): {summary}")
    print(f"time: generate {t_gen:.1f} s, reference {t_ref:.1f} s, nodegate {t_c:.2f} s, "
          f"total {total:.1f} s")
    if failed > shown:
        print(f"({failed - shown} more failures not shown; --show N prints more)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

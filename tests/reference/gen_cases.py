#!/usr/bin/python3
"""Deterministic generator of `nodegate gate --batch` lines, as raw JSON text.

    gen_cases.py --n N --seed S [--profile mixed|realistic]   (JSON Lines on stdout)

Profiles:
  realistic  well-formed records with 9..64 samples around a baseline, sometimes a
             cohort and a history. The benchmark uses it too (generate()).
  mixed      mostly realistic cases with samples from 1 to a few thousand (a few past
             8192, where numpy's summation changes shape), values built to sit exactly
             on the warn, block, noise, implausibility, bimodal and cohort bars, and
             the rest adversarial: every field of the case mutated into the shapes a
             broken harness or a hostile file produces, and JSON text that tests the
             parser (duplicate keys, 2 vs 2.0, huge integer literals, key order,
             escapes, and syntax that Python's json module refuses).

Lines are assembled as text, not only with json.dumps, so that literal spellings the
decoded value cannot carry (2.0 against 2, 1 followed by 400 zeros, -0, duplicate
keys) reach nodegate as written. A line never contains a newline; it may contain
other characters that str.splitlines() would split on, so read the output by
splitting on "\\n" only.

Not generated here, because nodegate refuses them by design (see deviation_lines()):
the \\u0000 escape, NaN and Infinity literals, and lone UTF-16 surrogates.
"""
import argparse
import json
import math
import random
import sys

WARN, BLOCK, FAST, SLOW = 0.05, 0.10, 1.5, 0.25
REQUIRED = ("pcie", "memory", "nccl_tests")
HUGE = "1" + "0" * 400                      # a finite int to Python, inf to a double


# --------------------------------------------------------------------------- text

class Raw:
    """A JSON literal written exactly as given."""
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Obj:
    """An object with its members in this order, duplicates allowed."""
    __slots__ = ("pairs",)

    def __init__(self, pairs):
        self.pairs = list(pairs)


class _Absent:
    """A member that is left out. One instance, kept by copies."""
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


ABSENT = _Absent()


def _ws(rng):
    r = rng.random()
    if r < 0.75:
        return ""
    return rng.choice((" ", "  ", "\t", "\r", " \t"))


def _num(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if x != x or x in (math.inf, -math.inf):
        raise ValueError("NaN and infinity are not JSON; use Raw")
    return repr(x)


def enc(v, rng, compact=False):
    """v as JSON text. Dicts keep insertion order; Obj keeps duplicates."""
    w = (lambda: "") if compact else (lambda: _ws(rng))
    if isinstance(v, Raw):
        return v.text
    if v is None:
        return "null"
    if isinstance(v, (bool, int, float)):
        return _num(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=compact or rng.random() < 0.8)
    if isinstance(v, (list, tuple)):
        return "[" + w() + ("," + w()).join(enc(x, rng, compact) for x in v) + w() + "]"
    if isinstance(v, dict):
        v = Obj(v.items())
    if isinstance(v, Obj):
        parts = []
        for k, x in v.pairs:
            if x is ABSENT:
                continue
            key = k.text if isinstance(k, Raw) else json.dumps(k)
            parts.append(key + w() + ":" + w() + enc(x, rng, compact))
        return "{" + w() + ("," + w()).join(parts) + w() + "}"
    raise TypeError(f"cannot encode {type(v).__name__}")


def case_text(case, rng, shuffle=0.3):
    """A case (dict of members, ABSENT dropped) as one line, members sometimes reordered."""
    pairs = [(k, v) for k, v in case.items() if v is not ABSENT]
    if rng.random() < shuffle:
        rng.shuffle(pairs)
    return enc(Obj(pairs), rng)


# --------------------------------------------------------------------------- numbers

def _ulps(x, k):
    """x moved k ulps (k may be negative)."""
    d = math.inf if k > 0 else -math.inf
    for _ in range(abs(k)):
        x = math.nextafter(x, d)
    return x


def _on_drop(median, target):
    """A sample value v for which 1 - v/median == target exactly, when one is near;
    otherwise the nearest miss. Both are what a boundary test wants."""
    v0 = median * (1.0 - target)
    best = v0
    for k in range(-4, 5):
        v = _ulps(v0, k)
        if 1.0 - v / median == target:
            return v
        if abs((1.0 - v / median) - target) < abs((1.0 - best / median) - target):
            best = v
    return best


def _noise_bar(cv, n):
    # The reference's expression, evaluated the way it evaluates it.
    import numpy as np
    return float(2.0 * cv / np.sqrt(n))


# --------------------------------------------------------------------------- realistic

CLASSES = ("8xH100-SXM/2node/1rail", "8xH100-SXM/8node/4rail", "8xA100-SXM4/1node",
           "4xL40S/1node/pcie", "8xH200/16node/8rail drv550.90 cuda12.4 nccl2.21.5",
           "8xB200/2node/2rail fw 96.00.A5", "8xMI300X/4node")
MEDIANS = (240.0, 200.0, 25.0, 48.5, 390.0, 12.3, 1.6, 0.37, 180.25, 96.0)


def _diag_pass():
    return {t: "pass" for t in REQUIRED}


def _pick_n(rng, lo, hi):
    """Log-uniform-ish sample count in [lo, hi]."""
    return max(lo, min(hi, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))))


def _pick_drop(rng, cv, n):
    r = rng.random()
    nb = _noise_bar(cv, n)
    if r < 0.25:
        return rng.gauss(0.0, 0.02)
    if r < 0.45:
        return WARN + rng.uniform(-0.01, 0.01)
    if r < 0.60:
        return BLOCK + rng.uniform(-0.01, 0.01)
    if r < 0.75:
        return nb + rng.uniform(-0.005, 0.005)
    if r < 0.85:
        return rng.uniform(0.1, 0.6)
    return rng.uniform(-0.4, 0.9)


def _samples_around(rng, median, drop, n, noise):
    centre = median * (1.0 - drop)
    out = []
    for _ in range(n):
        s = centre * (1.0 + rng.gauss(0.0, noise))
        out.append(s if s > 0 else centre)
    return out


def _cohort(rng, drop, cv, n):
    r = rng.random()
    if r < 0.35:                                          # the fleet moved with the node
        k = rng.randint(5, 9)
        spread = rng.choice((0.002, 0.005, 0.01, 0.03))
        centre = drop + rng.uniform(-0.03, 0.03)
        return [round(centre + rng.gauss(0, spread), rng.choice((3, 4, 17))) for _ in range(k)]
    if r < 0.55:                                          # mildly down
        return [round(rng.uniform(0.04, 0.07), 3) for _ in range(rng.randint(5, 7))]
    if r < 0.70:                                          # healthy
        return [round(abs(rng.gauss(0, 0.01)), 4) for _ in range(rng.randint(5, 8))]
    if r < 0.80:                                          # too small to attribute
        return [round(drop + rng.gauss(0, 0.005), 4) for _ in range(rng.randint(0, 4))]
    if r < 0.90:                                          # a clear majority, or just not
        k = 5 * rng.randint(1, 3)
        past = rng.choice((k * 3 // 5, k * 3 // 5 - 1, k * 3 // 5 + 1))
        vals = [drop] * past + [0.0] * (k - past)
        rng.shuffle(vals)
        return vals
    # the node exactly one noise bar worse than the cohort median, or one ulp either side
    nb = 2.0 * cv / math.sqrt(n)
    c = drop - nb
    c = _ulps(c, rng.randint(-2, 2))
    return [c] * rng.randint(5, 7)


VERDICT_WORDS = ("pass", "warn", "block", "fleet-regression", "bimodal", "corrupt",
                 "invalid-input", "no-measurement", "diag-incomplete", "diag-failed",
                 "incomparable", "unstable", "implausible", "insufficient-samples",
                 "correctness-unverified", "no-baseline")


def _history(rng, adversarial=False):
    k = rng.choice((0, 1, 1, 2, 2, 3, 4, 6))
    if not adversarial:
        pool = ("pass", "pass", "warn", "warn", "warn", "block", "corrupt", "insufficient-samples")
        return [rng.choice(pool) for _ in range(k)]
    pool = VERDICT_WORDS + ("PASS", "Warn", " warn", "ok", "", "blocked", "pass\t")
    out = []
    for _ in range(k + rng.randint(0, 3)):
        r = rng.random()
        if r < 0.75:
            out.append(rng.choice(pool))
        elif r < 0.8:
            out.append(Raw('"\\u0070ass"'))               # "pass", spelt with an escape
        elif r < 0.85:
            out.append(Raw('"w\\u0061rn"'))
        else:
            out.append(rng.choice((None, 1, 0, True, ["warn"], {"v": "pass"}, 2.5)))
    return out


def realistic_case(rng, nmin=9, nmax=64, big=0.0, extras=True):
    """A well-formed case as a dict of members (values may be Raw/Obj)."""
    cls = rng.choice(CLASSES)
    median = rng.choice(MEDIANS) if rng.random() < 0.6 else round(rng.uniform(5.0, 500.0), rng.choice((1, 2, 6)))
    cv = rng.choice((0.04, 0.01, 0.02, 0.005, 0.1)) if rng.random() < 0.5 else round(rng.uniform(0.005, 0.2), 4)
    n = _pick_n(rng, nmin, nmax)
    if big and rng.random() < big:
        n = rng.randint(8100, 20000)
    drop = _pick_drop(rng, cv, n)
    r = rng.random()
    if r < 0.12:                                                      # constant run on a bar
        target = rng.choice((WARN, BLOCK, _noise_bar(cv, n), 1 - FAST, 1 - SLOW, 0.0))
        v = _on_drop(median, target)
        v = _ulps(v, rng.choice((0, 0, 0, -1, 1)))
        samples = [v] * n
    elif r < 0.22:                                                    # bimodal split
        frac = rng.choice((0.25, 0.24, 0.26, 0.3, 0.5, rng.uniform(0.1, 0.6)))
        slow_n = int(round(frac * n))
        line = median * (1 - BLOCK)
        slow_v = rng.choice((line, _ulps(line, -1), median * rng.uniform(0.6, 0.89)))
        samples = [median * (1 + rng.gauss(0, cv / 4)) for _ in range(n - slow_n)] + [slow_v] * slow_n
        rng.shuffle(samples)
    else:
        noise = cv * rng.choice((0.1, 0.3, 0.6, 1.0, 1.5, 2.5, 3.2))
        samples = _samples_around(rng, median, drop, n, noise)
    rec = {"class": cls, "samples": samples, "wrong": 0, "diag": _diag_pass()}
    if extras and rng.random() < 0.3:
        rec = {"schema": "nodegate/record/1", "id": f"run-{rng.randrange(10**6)}",
               "node": f"gpu{rng.randrange(4096):04d}", "domain": "fabric",
               "metric": "nccl.all_reduce.busbw", "unit": "GB/s", **rec}
    if rng.random() < 0.5:
        items = list(rec.items())
        rng.shuffle(items)
        rec = dict(items)
    case = {"record": rec, "baseline": {"class": cls, "median": median, "cv": cv}}
    if rng.random() < 0.3:
        case["cohort_drops"] = _cohort(rng, 1.0 - float(_median(samples)) / median, cv, n)
    if rng.random() < 0.25:
        case["history"] = _history(rng)
        if rng.random() < 0.5:
            case["blocked"] = rng.random() < 0.4
    elif rng.random() < 0.05:
        case["blocked"] = rng.random() < 0.5
    return case


def _median(xs):
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def fitted_case(rng):
    """A realistic run whose baseline is then fitted so that one of the rule's bars
    falls exactly on (or one ulp either side of) the value numpy computes for it: the
    spread against 3 x cv, the drop against the noise bar, the ratio against 1.5 or
    0.25, a sample against the slow line. Any rounding difference between nodegate's
    arithmetic and numpy's then shows as a different verdict."""
    import numpy as np
    n = rng.choice((2, 3, 5, 8, 9, 16, 17, 64, 127, 128, 129, 257, 1000, 4099, 8191, 8192,
                    8193, 9000, 16385, 20000)) if rng.random() < 0.5 else _pick_n(rng, 2, 3000)
    median = rng.choice(MEDIANS)
    drop = rng.uniform(-0.05, 0.2)
    s = _samples_around(rng, median, drop, n, rng.choice((0.001, 0.01, 0.04, 0.1)))
    arr = np.asarray(s)
    smed = float(np.median(s))
    cv = rng.choice((0.04, 0.02, 0.1))
    which = rng.randrange(5)
    k = rng.choice((0, 0, -1, 1))
    if which == 0:                                   # spread == 3.0 * cv
        spread = float(np.std(s) / np.mean(s))
        cv = spread / 3.0
        for j in (0, 1, -1, 2, -2):
            if 3.0 * _ulps(cv, j) == spread:
                cv = _ulps(cv, j)
                break
        cv = _ulps(cv, k)
    elif which == 1:                                 # drop == noise bar
        d = 1.0 - smed / median
        if d > 0:
            cv = d * math.sqrt(n) / 2.0
            for j in (0, 1, -1, 2, -2):
                if float(2.0 * _ulps(cv, j) / np.sqrt(n)) == d:
                    cv = _ulps(cv, j)
                    break
            cv = _ulps(cv, k)
            if 3.0 * cv < float(np.std(s) / np.mean(s)):
                s = [smed] * n                       # keep it stable, same median
    elif which == 2:                                 # ratio == FAST or SLOW
        bar = rng.choice((FAST, SLOW))
        median = smed / bar
        for j in (0, 1, -1, 2, -2):
            if smed / _ulps(median, j) == bar:
                median = _ulps(median, j)
                break
        median = _ulps(median, k)
    elif which == 3:                                 # a sample exactly on the slow line
        x = float(arr[rng.randrange(n)])
        median = x / (1 - BLOCK)
        for j in (0, 1, -1, 2, -2):
            if _ulps(median, j) * (1 - BLOCK) == x:
                median = _ulps(median, j)
                break
        median = _ulps(median, k)
    else:                                            # drop == WARN or BLOCK, nearest miss
        median = smed / (1 - rng.choice((WARN, BLOCK)))
        median = _ulps(median, rng.randint(-2, 2))
    cls = rng.choice(CLASSES)
    case = {"record": {"class": cls, "samples": s, "wrong": 0, "diag": _diag_pass()},
            "baseline": {"class": cls, "median": median, "cv": cv}}
    if rng.random() < 0.3:
        d = 1.0 - smed / median
        case["cohort_drops"] = _cohort(rng, d, cv, n)
    return case


# --------------------------------------------------------------------------- adversarial

def _pick(rng, options):
    o = rng.choice(options)
    return o(rng) if callable(o) else o


WRONG_VALUES = (ABSENT, None, 0, 0.0, Raw("-0"), Raw("-0.0"), -1, 3, 0.5, True, False,
                "missing", "0", [], {}, [0], Raw(HUGE), Raw("-" + HUGE), Raw("1e400"),
                Raw("-1e400"), Raw("1e-400"), Raw("-1e-400"), Raw("0e5"), Raw("0E-3"),
                Raw("1" + "0" * 300), 2 ** 53 + 1, 1e-300, -1e-300, Raw("0.0e0"))


def _sample_list_with(rng, bad):
    base = [240.0 * (1 + rng.gauss(0, 0.01)) for _ in range(rng.randint(1, 12))]
    base.insert(rng.randrange(len(base) + 1), bad)
    return base


SAMPLES_VALUES = (
    ABSENT, None, [], 0, 0.0, False, "", {}, "abc", "240", {"a": 240.0}, 5, -3, True,
    Raw(HUGE), Raw("1e400"), Raw("-0"), Raw("1e-400"),
    lambda r: _sample_list_with(r, "240"), lambda r: _sample_list_with(r, True),
    lambda r: _sample_list_with(r, False), lambda r: _sample_list_with(r, None),
    lambda r: _sample_list_with(r, -1.0), lambda r: _sample_list_with(r, 0),
    lambda r: _sample_list_with(r, Raw("-0.0")), lambda r: _sample_list_with(r, [240.0]),
    lambda r: _sample_list_with(r, {}), lambda r: _sample_list_with(r, Raw("1e400")),
    lambda r: _sample_list_with(r, Raw("-1e400")), lambda r: _sample_list_with(r, Raw("-" + HUGE)),
    lambda r: _sample_list_with(r, "inf"), lambda r: _sample_list_with(r, Raw("5e-324")),
    lambda r: [Raw(HUGE)] * r.randint(1, 3),
    lambda r: _sample_list_with(r, Raw(HUGE)),
    lambda r: [240] * r.randint(1, 12),                                   # integer literals
    lambda r: [Raw(r.choice(("240", "2.4e2", "24E1", "2400e-1", "240.000", "2.40E+2")))
               for _ in range(r.randint(1, 12))],
    lambda r: [5e-324] * r.randint(1, 9),
    lambda r: [1e308, 1e308, 1.5e308][: r.randint(1, 3)],
    lambda r: [1e-300 * (1 + r.gauss(0, 0.01)) for _ in range(r.randint(1, 9))],
    lambda r: [240.0 + i * 1e-13 for i in range(r.randint(2, 40))],
)


def _big_baseline(rng, scale):
    """A record and baseline scaled far from 1, to exercise extreme magnitudes."""
    med = 240.0 * scale
    return [med * (1 + rng.gauss(0, 0.01)) for _ in range(rng.randint(1, 20))], med


DIAG_VALUES = (
    ABSENT, None, {}, [], [1], ["pass"], "pass", "", 0, 1, True, False, 0.0, Raw(HUGE),
    lambda r: _diag_pass(),
    lambda r: {t: "pass" for t in REQUIRED if t != r.choice(REQUIRED)},
    lambda r: {**_diag_pass(), r.choice(REQUIRED): "skip"},
    lambda r: {**_diag_pass(), r.choice(REQUIRED): "fail"},
    lambda r: {**_diag_pass(), r.choice(REQUIRED): r.choice(("bogus", "PASS", "Pass", "pass ", ""))},
    lambda r: {**_diag_pass(), r.choice(REQUIRED): r.choice((1, 0, None, True, ["pass"], {"s": "pass"}))},
    lambda r: {**_diag_pass(), "targeted_stress": r.choice(("pass", "skip", "fail", "bogus", None))},
    lambda r: {**_diag_pass(), "diagnostic": "fail", "memtest": "skip"},
    lambda r: {"pcie": "pass", "memory": "fail", "nccl_tests": "skip"},
    lambda r: {"pcie": "fail", "memory": "bogus", "nccl_tests": "pass"},
    lambda r: {"PCIe": "pass", "memory": "pass", "nccl_tests": "pass"},
    lambda r: Obj([("nccl_tests", "fail"), ("pcie", "pass"), ("memory", "pass"), ("nccl_tests", "pass")]),
    lambda r: Obj([("nccl_tests", "pass"), ("pcie", "pass"), ("memory", "pass"), ("nccl_tests", "fail")]),
    lambda r: Obj([("nccl_tests", "bogus"), ("pcie", "pass"), ("memory", "pass"), ("nccl_tests", "pass")]),
    lambda r: Obj([("pcie", "pass"), ("memory", "pass"), ("nccl_tests", "skip"), ("nccl_tests", "pass")]),
    lambda r: Obj([(Raw('"\\u0070cie"'), "pass"), ("memory", "pass"), (Raw('"nccl\\u005ftests"'), "pass")]),
    lambda r: Obj([("pcie", Raw('"p\\u0061ss"')), ("memory", "pass"), ("nccl_tests", Raw('"\\u0066ail"'))]),
    # more than 32 members, with repeats: the sorted path that drops earlier duplicates
    lambda r: Obj([(f"t{i % 30}", r.choice(("pass", "pass", "skip", "fail"))) for i in range(40)]
                  + [(t, "pass") for t in REQUIRED] + [("t3", "pass"), ("t7", r.choice(("pass", "fail")))]),
    lambda r: Obj([(t, "pass") for t in REQUIRED] + [(f"x{i}", "pass") for i in range(35)]
                  + [("x5", r.choice(("skip", "bogus", "pass")))] + [("pcie", r.choice(("pass", "fail")))]),
)

CLASS_VALUES = (
    ABSENT, None, "8xH100-SXM/2node/1rail", "8xH100-SXM/8node/4rail", "", "1", "true",
    1, 1.0, True, Raw("1.0"), Raw("1E0"), Raw("10e-1"), 0, Raw("-0"), Raw("-0.0"), False, 2,
    [1, "a"], [1.0, "a"], [True, "a"], ["a", 1], [], {}, [None], [[]],
    {"gpu": "H100", "n": 8}, Obj([("n", 8), ("gpu", "H100")]), Obj([("n", 8.0), ("gpu", "H100")]),
    Obj([("gpu", "A100"), ("n", 8), ("gpu", "H100")]), Obj([("n", 8), ("gpu", "H100"), ("n", 4)]),
    {"gpu": "H100", "n": 8, "x": None}, {"gpu": "H100"},
    Raw('"8xH100-SXM\\/2node\\/1rail"'), Raw('"\\u0038xH100-SXM/2node/1rail"'), "8xH100-SXM/2node/1rail ",
    "\u00e9", Raw('"\\u00e9"'), Raw('"\\ud83d\\ude00"'), "\U0001f600", "\\u0000",
    Raw(HUGE), Raw(HUGE + "1"), Raw("1e400"), Raw("1" + "0" * 22), Raw("1e22"),
    Raw("9007199254740993"), Raw("9007199254740992"), Raw("9007199254740992.0"),
    Raw("18446744073709551617"), Raw("18446744073709551616"), Raw("1.8446744073709552e19"),
    0.1, Raw("0.10000000000000001"), Raw("1e-400"), "e\u0301",
    # more than 32 members (the sorted path), repeated keys, int against float values
    Obj([(f"k{i}", i) for i in range(40)] + [("k3", "x")]),
    Obj([(f"k{i}", float(i)) for i in reversed(range(40))] + [("k3", "y"), ("k3", "x")]),
    Obj([(f"k{i}", float(i)) for i in reversed(range(40))] + [("k3", "x"), ("k3", "y")]),
    lambda r: [[[[["deep"]]]]], lambda r: _nested(r.randint(50, 300)),
)


def _nested(depth):
    v = "x"
    for _ in range(depth):
        v = [v]
    return v


BASELINE_VALUES = (
    ABSENT, None, [], "x", 0, True, {},
    lambda r: {"class": r.choice(CLASSES)},
    lambda r: {"median": 240.0},
    lambda r: {"cv": 0.04},
    lambda r: {"median": r.choice((0, 0.0, Raw("-0.0"), -240.0, True, False, "240", None, [240.0],
                                   Raw(HUGE), Raw("-" + HUGE), Raw("1e400"), Raw("1e-400"),
                                   Raw("5e-324"), 1e300, Raw("1" + "0" * 300), 240, Raw("240.0")))},
    lambda r: {"cv": r.choice((0, 0.0, Raw("-0"), -0.04, True, "0.04", None, [0.04], Raw(HUGE),
                               Raw("1e400"), Raw("1e-400"), 1e-300, 1.0, 5.0, 1, Raw("1" + "0" * 300)))},
)

COHORT_VALUES = (
    ABSENT, None, [], "", "abcde", 5, 0, True, False, {}, {"a": 0.12}, 0.12, [[0.12] * 5],
    lambda r: [0.12, 0.115, 0.125, 0.118, 0.122],
    lambda r: [0.06, 0.055, 0.051, 0.06, 0.058],
    lambda r: [0.12, 0.11, 0.0],
    lambda r: [True] * 5, lambda r: [1] * 5, lambda r: [Raw("1.0")] * 5, lambda r: [-1] * 5,
    lambda r: ["0.12"] * 5, lambda r: ["inf"] * 5, lambda r: [None] * 5,
    lambda r: [Raw("1e400")] * 5, lambda r: [Raw(HUGE)] * 5,
    lambda r: [0.12, 0.12, 0.12, 0.12, r.choice((1.5, -1.5, 1.0, -1.0, 1.0000000000000002, Raw("-1.0e0"),
                                                 Raw("1e400"), True, "0.1", None, Raw(HUGE), [0.1]))],
    lambda r: [0.12, 0.12, 0.12, 0.0, 0.0],                               # majority exactly 0.6
    lambda r: [0.12, 0.12, 0.0, 0.0, 0.0],
    lambda r: [WARN] * 5, lambda r: [_ulps(WARN, 1)] * 5,
    lambda r: [r.uniform(0.09, 0.15) for _ in range(1000)],
    lambda r: [r.uniform(-1, 1) for _ in range(r.randint(5, 12))],
)

HISTORY_VALUES = (
    ABSENT, None, "warn", 5, {}, {"0": "warn"}, True, [],
    lambda r: _history(r), lambda r: _history(r, adversarial=True),
    lambda r: ["warn"] * r.randint(1, 6), lambda r: ["pass"] * r.randint(1, 4),
    lambda r: ["warn", "corrupt", "warn"], lambda r: ["pass", "insufficient-samples", "pass"],
    lambda r: ["pass", "block"], lambda r: ["warn", "fleet-regression", "warn"],
    lambda r: ["warn", "bimodal"], lambda r: [r.choice(VERDICT_WORDS) for _ in range(r.randint(1, 200))],
)

BLOCKED_VALUES = (ABSENT, True, False, None, 1, 0, 0.0, Raw("-0"), Raw("-0.0"), Raw("1e-400"),
                  Raw(HUGE), "", "yes", "0", "false", [], [0], {}, {"a": 0}, 2.5)

COUNT_VALUES = (ABSENT, 1, 2, 3, 5, Raw("2.0"), Raw("3.0"), True, False, 0, -1, Raw("-0"),
                Raw(HUGE), Raw("-" + HUGE), Raw("1e0"), Raw("2E0"), Raw("1e400"), "2", None, [2],
                2 ** 63, 2 ** 64 + 1, 10 ** 20, Raw("0.5"))


def _mutate(rng, case):
    """Replace one member (or one field of the record or baseline) with an adversarial
    shape. Returns the case."""
    rec = case["record"]
    which = rng.choice(("wrong", "wrong", "samples", "samples", "samples", "diag", "diag",
                        "class", "class", "baseline", "baseline", "cohort", "cohort",
                        "history", "blocked", "counts", "magnitude"))
    if which == "wrong":
        rec["wrong"] = _pick(rng, WRONG_VALUES)
    elif which == "samples":
        rec["samples"] = _pick(rng, SAMPLES_VALUES)
    elif which == "diag":
        rec["diag"] = _pick(rng, DIAG_VALUES)
    elif which == "class":
        a = _pick(rng, CLASS_VALUES)
        b = _pick(rng, CLASS_VALUES) if rng.random() < 0.6 else a
        rec["class"] = a
        if isinstance(case.get("baseline"), dict):
            case["baseline"]["class"] = b
    elif which == "baseline":
        b = _pick(rng, BASELINE_VALUES)
        if isinstance(b, dict) and isinstance(case.get("baseline"), dict) and rng.random() < 0.7:
            b = {**case["baseline"], **b}                 # one field replaced, others kept
        case["baseline"] = b
    elif which == "cohort":
        case["cohort_drops"] = _pick(rng, COHORT_VALUES)
    elif which == "history":
        case["history"] = _pick(rng, HISTORY_VALUES)
        if rng.random() < 0.5:
            case["blocked"] = _pick(rng, BLOCKED_VALUES)
    elif which == "blocked":
        case["blocked"] = _pick(rng, BLOCKED_VALUES)
        if rng.random() < 0.5:
            case["history"] = _pick(rng, HISTORY_VALUES)
    elif which == "counts":
        case[rng.choice(("clear_after", "escalate_after"))] = _pick(rng, COUNT_VALUES)
        if rng.random() < 0.5:
            case[rng.choice(("clear_after", "escalate_after"))] = _pick(rng, COUNT_VALUES)
        if rng.random() < 0.6:
            case["history"] = _pick(rng, HISTORY_VALUES)
            case["blocked"] = _pick(rng, BLOCKED_VALUES)
    elif which == "magnitude":
        scale = rng.choice((1e300, 1e-300, 1e150, 1e-150, 5e305, 1e-307))
        samples, med = _big_baseline(rng, scale)
        rec["samples"] = samples
        if isinstance(case.get("baseline"), dict):
            case["baseline"]["median"] = med
    return case


def _syntax_line(rng, good):
    """A line that is not JSON to Python's json module (or, in a few, is JSON that looks
    suspicious but is fine). Built by editing the text of a good case."""
    k = rng.randrange(30)
    if k >= 26:                                            # a few characters replaced
        text = list(good)
        for _ in range(rng.randint(1, 3)):
            text[rng.randrange(len(text))] = rng.choice('{}[]:,"\\-+.eE019 \t\r\x0b\x01tfnu')
        return "".join(text)
    if k == 0:
        return good.replace('"wrong": 0', '"wrong": 00', 1).replace('"wrong":0', '"wrong":00', 1)
    if k == 1:
        return good.replace('"wrong": 0', '"wrong": 01', 1).replace('"wrong":0', '"wrong":01', 1)
    if k == 2:
        return '{"record": {"class": "c", "samples": [240.0, 1., 240.0], "wrong": 0}}'
    if k == 3:
        return '{"record": {"class": "c", "samples": [-.5], "wrong": 0}}'
    if k == 4:
        return '{"record": {"class": "c", "samples": [.5], "wrong": 0}}'
    if k == 5:
        return '{"record": {"class": "c", "samples": [+1], "wrong": 0}}'
    if k == 6:
        return '{"record": {"class": "c", "samples": [1.e3], "wrong": 0}}'
    if k == 7:
        return '{"record": {"class": "c", "samples": [1e], "wrong": 0}}'
    if k == 8:
        return '{"record": {"class": "c", "samples": [240.0,], "wrong": 0}}'
    if k == 9:
        return good[:-1] + ',}'
    if k == 10:
        return good + rng.choice(("x", " {}", "]", "}", " 0"))
    if k == 11:                                            # a raw control character in a string
        c = rng.choice(("\x01", "\x1f", "\t", "\x0b", "\x0c", "\x7f", "\x1c", "\r"))
        return good.replace('"record"', '"rec' + c + 'ord"', 1) if rng.random() < 0.3 else \
            '{"record": {"class": "a' + c + 'b", "samples": [240.0], "wrong": 0}}'
    if k == 12:                                            # white space Python does not accept
        c = rng.choice(("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x01", "\xa0", "\u3000"))
        pos = rng.choice((0, 1, len(good)))
        return good[:pos] + c + good[pos:]
    if k == 13:
        return "\ufeff" + good                             # a byte order mark
    if k == 14:
        return good.replace(":", "\ufeff:", 1)
    if k == 15:
        return ""
    if k == 16:
        return rng.choice(("  ", "\t", "\r", " \r "))
    if k == 17:
        return good.replace("true", "True", 1) if "true" in good else "{'record': {}}"
    if k == 18:
        return rng.choice(("null", "[]", "0", '"record"', "true", "[{}]", "{}"))
    if k == 19:
        return '{"record": {"class": "c", "samples": [240.0], "wrong": 0} "baseline": {}}'
    if k == 20:
        return '{"record": {"class": "c", "samples": [240.0], "wrong": 0}, "baseline": {"median": 240.0, "cv": 0.04 // c\n}}'.replace("\n", " ")
    if k == 21:
        return good.replace("0", "0" * 2, 1) if rng.random() < 0.5 else good.replace('"', "'", 2)
    if k == 22:                                            # fine: white space Python accepts
        return "\r\t " + good.replace(",", " ,\r\t", 3) + " \t\r"
    if k == 23:                                            # fine: escapes
        return good.replace('"record"', '"\\u0072ecord"', 1).replace('"wrong"', '"\\u0077rong"', 1)
    if k == 24:
        return '{"record": {"class": "c", "samples": [240.0], "wrong": 0x0}}'
    return '{"record": {"class": "c", "samples": [1E400, 240.0e0, 2.4E+2], "wrong": -0E0}}'


def _case_level(rng, case):
    """Case-shape adversaria: unknown keys, missing or non-object record, duplicates."""
    k = rng.randrange(12)
    if k == 0:
        case[rng.choice(("Blocked", "blocked ", "extra", "record_", "cohort", "escalate", ""))] = True
        return case_text(case, rng)
    if k == 1:
        del case["record"]
        return case_text(case, rng)
    if k == 2:
        case["record"] = rng.choice((None, [], [case["record"]], "record", 0, True, Raw(HUGE)))
        return case_text(case, rng)
    if k == 3:                                          # the last "record" is the one that counts
        bad = rng.choice((None, [], "x"))
        pairs = list(case.items())
        if rng.random() < 0.5:
            pairs = [("record", bad)] + pairs
        else:
            pairs = pairs + [("record", bad)]
        return enc(Obj(pairs), rng)
    if k == 4:
        other = realistic_case(rng)
        return enc(Obj(list(case.items()) + [("baseline", other["baseline"])]), rng)
    if k == 5:
        return enc(Obj(list(case.items()) + [("history", rng.choice((None, ["warn"] * 3, "warn")))]), rng)
    if k == 6:
        return enc(Obj([(Raw('"\\u0062locked"'), True)] + list(case.items())), rng)
    if k == 7:
        return enc(Obj([(Raw('"r\\u0065cord"'), case["record"])] +
                       [(k2, v) for k2, v in case.items() if k2 != "record"]), rng)
    if k == 8:
        case["record"] = Obj(list(case["record"].items()) + [("wrong", rng.choice((None, 1, 0, "x")))])
        return case_text(case, rng)
    if k == 9:
        case["record"] = Obj(list(case["record"].items()) +
                             [("samples", rng.choice(([], [240.0], None, [0.0], [240.0] * 3)))])
        return case_text(case, rng)
    if k == 10:
        case["baseline"] = Obj(list(case["baseline"].items()) + [("median", rng.choice((0, 240.0, None, 120.0)))])
        return case_text(case, rng)
    return enc([case["record"]], rng)


# --------------------------------------------------------------------------- systematic

def _base_cases():
    """Clean cases that reach different verdicts, for one field at a time to be replaced."""
    cls = "8xH100-SXM/2node/1rail"

    def case(samples, cohort=ABSENT):
        return {"record": {"class": cls, "samples": samples, "wrong": 0, "diag": _diag_pass()},
                "baseline": {"class": cls, "median": 240.0, "cv": 0.04}, "cohort_drops": cohort}
    return [case([240.0] * 9),                                          # pass
            case([211.2] * 9, [0.12, 0.115, 0.125, 0.118, 0.122]),      # fleet-regression
            case([120.0] * 9, [0.06, 0.055, 0.051, 0.06, 0.058]),       # block
            case([223.2]),                                               # insufficient-samples
            case([223.2] * 9),                                           # warn
            case([240.0] * 501 + [204.0] * 499)]                        # bimodal


def systematic():
    """Every adversarial value of every field, each put into each clean case; every
    pair of the class values whose equality is subtle; the runbook's own assertions.
    Deterministic, and the same for every seed."""
    import copy
    rng = random.Random("nodegate-gate-systematic")
    lines = []

    def emit(case):
        lines.append(case_text(case, rng, shuffle=0.0))

    for base in _base_cases():
        small = len(base["record"]["samples"]) < 100
        for field, values in (("wrong", WRONG_VALUES), ("samples", SAMPLES_VALUES),
                              ("diag", DIAG_VALUES), ("class", CLASS_VALUES)):
            if field == "samples" and not small:
                continue
            for v in values:
                c = copy.deepcopy(base)
                c["record"][field] = v(rng) if callable(v) else v
                emit(c)
        for v in BASELINE_VALUES:
            c = copy.deepcopy(base)
            b = v(rng) if callable(v) else v
            c["baseline"] = {**base["baseline"], **b} if isinstance(b, dict) and b else b
            emit(c)
            if isinstance(b, dict) and b:
                c = copy.deepcopy(base)
                c["baseline"] = {"class": base["baseline"]["class"], **b}
                emit(c)
        for v in COHORT_VALUES:
            c = copy.deepcopy(base)
            c["cohort_drops"] = v(rng) if callable(v) else v
            emit(c)
        for member, values in (("history", HISTORY_VALUES), ("blocked", BLOCKED_VALUES),
                               ("clear_after", COUNT_VALUES), ("escalate_after", COUNT_VALUES)):
            for v in values:
                c = copy.deepcopy(base)
                c[member] = v(rng) if callable(v) else v
                emit(c)
    # hysteresis: every small history of pass/warn/hard/other, blocked or not, counts 1..3
    for hist in ([], ["pass"], ["warn"], ["warn", "warn"], ["pass", "pass"], ["warn", "corrupt", "warn"],
                 ["pass", "corrupt"], ["block", "pass"], ["warn", "bimodal"], ["warn", "Warn"],
                 ["pass", None, "pass"]):
        for base in _base_cases()[:5]:
            for blocked in (False, True):
                for clear_after, escalate_after in ((1, 1), (2, 3), (3, 2), (1, 3)):
                    c = copy.deepcopy(base)
                    c.update(history=hist, blocked=blocked, clear_after=clear_after,
                             escalate_after=escalate_after)
                    emit(c)
    # classes whose equality turns on Python's rules for numbers, containers and keys
    subtle = [v for v in CLASS_VALUES if not callable(v)]
    for a in subtle:
        for b in subtle:
            c = copy.deepcopy(_base_cases()[0])
            c["record"]["class"] = a
            c["baseline"]["class"] = b
            emit(c)
    # the runbook's assertions (those with a JSON form)
    base = _base_cases()[0]
    for rec_kw, bl in (
            ({"samples": []}, None), ({"diag": {"pcie": "pass", "memory": "pass"}}, None),
            ({"diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "skip"}}, None),
            ({"wrong": None}, None), ({"wrong": 3, "class": "8xH100-SXM/8node/4rail"}, None),
            ({"class": "8xH100-SXM/8node/4rail"}, None), ({}, {"median": 0.0}),
            ({"samples": [100.0, 100.0, 240.0, 380.0, 380.0]}, None),
            ({"samples": [380.0] * 9}, None), ({"samples": [1.0] * 9}, None),
            ({"samples": [223.2]}, None), ({"samples": [223.2] * 9}, None),
            ({"samples": [360.0] * 9}, None), ({"samples": [60.0] * 9}, None),
            ({"samples": [0.0] * 9}, None), ({"samples": [-240.0] * 9}, None),
            ({}, {"cv": 0.0}), ({}, {"cv": -0.04}), ({"wrong": "missing"}, None),
            ({"wrong": True}, None), ({"samples": [120.0]}, None), ({"wrong": -1}, None),
            ({"wrong": 7, "samples": []}, None), ({"wrong": 3}, {"median": 0.0}),
            ({"diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "fail"}}, None),
            ({"diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "bogus"}}, None)):
        c = copy.deepcopy(base)
        c["record"].update(rec_kw)
        if bl:
            c["baseline"].update(bl)
        emit(c)
    for coh in ([0.12, 0.11, 0.0], [0.0, 0.01, 0.0, 0.005, 0.0], [True] * 5):
        c = copy.deepcopy(base)
        c["record"]["samples"] = [211.2] * 9 if coh[0] is not True else [120.0] * 9
        c["cohort_drops"] = coh
        emit(c)
    return lines


# --------------------------------------------------------------------------- profiles

def generate(n, seed, profile="mixed"):
    """Yield n lines (str, no newline) of JSON text, deterministically from seed. The
    mixed profile starts with the systematic lines (the same for every seed)."""
    if profile not in ("mixed", "realistic"):
        raise ValueError(f"unknown profile {profile!r}")
    rng = random.Random(f"nodegate-gate-{profile}-{seed}")
    if profile == "mixed":
        fixed = systematic()
        yield from fixed[:n]
        n -= min(n, len(fixed))
    for _ in range(n):
        if profile == "realistic":
            yield case_text(realistic_case(rng, 9, 64), rng, shuffle=0.1)
            continue
        r = rng.random()
        if r < 0.50:                                       # realistic, wider sample counts
            yield case_text(realistic_case(rng, 1, 3000, big=0.004), rng)
        elif r < 0.55:                                     # a bar fitted to the run
            yield case_text(fitted_case(rng), rng)
        elif r < 0.88:                                     # one or more adversarial fields
            case = realistic_case(rng, 1, 40)
            for _ in range(1 if rng.random() < 0.7 else rng.randint(2, 4)):
                case = _mutate(rng, case)
            yield case_text(case, rng)
        elif r < 0.95:
            yield _case_level(rng, realistic_case(rng, 1, 20))
        else:
            yield _syntax_line(rng, enc(realistic_case(rng, 1, 6, extras=False), rng, compact=True))


def deviation_lines():
    """Lines Python's json module accepts and nodegate refuses by design (documented in
    src/core/json.h): the \\u0000 escape, NaN/Infinity literals, lone surrogates.
    nodegate must answer each with {"error": ...}."""
    rec = '"samples": [240.0], "wrong": 0, "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}'
    base = '"baseline": {"class": "c", "median": 240.0, "cv": 0.04}'
    return [
        '{"record": {"class": "c\\u0000", %s}, %s}' % (rec, base),
        '{"record": {"class": "c", %s, "x\\u0000": 1}, %s}' % (rec, base),
        '{"record": {"class": "c", %s}, %s, "history": ["pass\\u0000"]}' % (rec, base),
        '{"record": {"class": "c", "samples": [NaN], "wrong": 0}, %s}' % base,
        '{"record": {"class": "c", "samples": [240.0], "wrong": NaN}, %s}' % base,
        '{"record": {"class": "c", "samples": [Infinity], "wrong": 0}, %s}' % base,
        '{"record": {"class": "c", "samples": [-Infinity], "wrong": 0}, %s}' % base,
        '{"record": {"class": "c", %s}, "baseline": {"class": "c", "median": 240.0, "cv": NaN}}' % rec,
        '{"record": {"class": "c", %s}, %s, "cohort_drops": [Infinity, 0.1, 0.1, 0.1, 0.1]}' % (rec, base),
        '{"record": {"class": "\\ud800", %s}, %s}' % (rec, base),
        '{"record": {"class": "\\udc00x", %s}, %s}' % (rec, base),
        '{"record": {"class": "\\ud83dx", %s}, %s}' % (rec, base),
        '{"record": {"class": "c", %s}, %s, "history": ["\\udfff"]}' % (rec, base),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", choices=("mixed", "realistic"), default="mixed")
    a = ap.parse_args(argv)
    out = sys.stdout
    for line in generate(a.n, a.seed, a.profile):
        out.write(line)
        out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

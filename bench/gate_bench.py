#!/usr/bin/python3
"""Throughput of the gate: the library, `nodegate gate --batch`, and the
reference rule, on the same generated cases in the same run.

Run with Debian's /usr/bin/python3 (it carries python3-numpy, which the
reference rule needs):

    /usr/bin/python3 bench/gate_bench.py --nodegate build/nodegate \\
        --lib-bench build/bench/gate_bench [--cases 1000000] [--ref-cases 20000] [--out DIR]

What is timed:
  library    gate_bench: ng_gate() over every case, already converted to the
             rule's views, one thread, best of repeated passes (>= ~2 s).
  batch      `nodegate gate --batch < cases > file`: wall clock, best of 3,
             JSON parsing and output included.
  reference  the seed runbook's rule in Python: json.loads + judge_case() per
             line, on the first --ref-cases lines (the same per-line work the
             batch command does), best of --ref-repeats.

Checks, any of which failing exits 2: the library's verdicts equal
ng_gate_input_judge's (gate_bench checks it), the batch output has one line per
case, the library's verdict counts equal the batch's, and the reference's
answers on its subset equal the batch's for the same lines.

Targets (exit 1 when one is missed): library >= 5,000,000 cases/s on one core;
batch >= 10x the reference's cases/s.
"""

import argparse
import collections
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))

LIB_TARGET = 5_000_000.0   # cases/s, one core
BATCH_TARGET = 10.0        # times the reference's cases/s


def fail(msg):
    print("gate_bench: " + msg, file=sys.stderr)
    sys.exit(2)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def build_config(binary):
    """CMAKE_BUILD_TYPE and NODEGATE_SANITIZE of the CMake build that made
    binary (from the CMakeCache.txt above it), or None where there is none."""
    d = os.path.dirname(os.path.abspath(binary))
    while True:
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            conf = {}
            with open(cache, errors="replace") as f:
                for line in f:
                    for key in ("CMAKE_BUILD_TYPE", "NODEGATE_SANITIZE"):
                        if line.startswith(key + ":"):
                            conf[key] = line.split("=", 1)[1].strip()
            return {"build_dir": d, "build_type": conf.get("CMAKE_BUILD_TYPE", ""),
                    "sanitize": conf.get("NODEGATE_SANITIZE", "OFF")}
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def generate_cases(path, n, seed):
    from gen_cases import generate
    t0 = time.perf_counter()
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in generate(n, seed, "realistic"):
            f.write(line if line.endswith("\n") else line + "\n")
            count += 1
    if count != n:
        fail(f"gen_cases.generate({n}, {seed}, 'realistic') yielded {count} lines")
    return time.perf_counter() - t0


def run_library(lib_bench, cases_path, min_seconds):
    proc = subprocess.run([lib_bench, cases_path, "--min-seconds", str(min_seconds)],
                          capture_output=True, text=True)
    sys.stdout.write("".join("  " + l + "\n" for l in proc.stdout.splitlines()[:-1]))
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        fail(f"{lib_bench} exited {proc.returncode}")
    lines = proc.stdout.strip().splitlines()
    if not lines:
        fail(f"{lib_bench} printed nothing")
    return json.loads(lines[-1])


def run_batch(nodegate, cases_path, out_path, n, repeats):
    times = []
    for _ in range(repeats):
        with open(cases_path, "rb") as fin, open(out_path, "wb") as fout:
            t0 = time.perf_counter()
            proc = subprocess.run([nodegate, "gate", "--batch"], stdin=fin, stdout=fout)
            times.append(time.perf_counter() - t0)
        # 0: every line judged; 1: some line answered with an error. Both are runs.
        if proc.returncode not in (0, 1):
            fail(f"{nodegate} gate --batch exited {proc.returncode}")
        with open(out_path, "rb") as f:
            got = sum(1 for _ in f)
        if got != n:
            fail(f"nodegate gate --batch wrote {got} lines for {n} cases")
    return times


def batch_counts(out_path):
    """Verdict counts and error count over the batch output."""
    counts = collections.Counter()
    errors = 0
    with open(out_path, encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for line in f:
            d = json.loads(line)
            if "error" in d:
                errors += 1
            else:
                counts[d["verdict"]] += 1
    return counts, errors


def run_reference(cases_path, k, repeats):
    from gate_ref import judge_case
    lines = []
    # Split on "\n" only: a case may hold other characters Python calls line breaks.
    with open(cases_path, encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for line in f:
            if len(lines) == k:
                break
            lines.append(line)
    best, answers = None, None
    for _ in range(repeats):
        out = []
        t0 = time.perf_counter()
        for line in lines:
            out.append(judge_case(json.loads(line)))
        dt = time.perf_counter() - t0
        if best is None or dt < best:
            best = dt
        answers = out
    return lines, answers, best


def same_answer(ref, got):
    """The reference's answer and the batch's for one line: both errors (the
    message text may differ), or the same verdict and, where the reference
    gives them, the same hysteresis fields."""
    if "error" in ref or "error" in got:
        return "error" in ref and "error" in got
    return all(got.get(k) == v for k, v in ref.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodegate", required=True, help="path to the nodegate binary")
    ap.add_argument("--lib-bench", required=True, help="path to build/bench/gate_bench")
    ap.add_argument("--cases", type=int, default=1_000_000, help="cases to generate")
    ap.add_argument("--ref-cases", type=int, default=20_000,
                    help="leading cases the reference rule judges")
    ap.add_argument("--ref-repeats", type=int, default=3, help="reference passes (best is kept)")
    ap.add_argument("--batch-repeats", type=int, default=3, help="batch runs (best is kept)")
    ap.add_argument("--min-seconds", type=float, default=2.0,
                    help="least time the library spends in timed passes")
    ap.add_argument("--seed", type=int, default=1, help="generator seed")
    ap.add_argument("--out", default=os.path.join(HERE, "out"),
                    help="where the cases, the batch output and gate_bench.json go")
    args = ap.parse_args()
    if args.cases < 1 or args.ref_cases < 1:
        fail("--cases and --ref-cases must be at least 1")
    ref_k = min(args.ref_cases, args.cases)

    try:
        import numpy
    except ImportError:
        fail(f"{sys.executable} has no numpy; run this with /usr/bin/python3 "
             "(Debian's python3-numpy)")

    # The targets are about an optimised build. A build directory configured
    # as Debug (make reuses whatever build/ holds) measures something else.
    builds = {}
    for name, binary in (("nodegate", args.nodegate), ("gate_bench", args.lib_bench)):
        conf = build_config(binary)
        builds[name] = conf
        if conf is None:
            print(f"note: no CMakeCache.txt above {binary}; cannot tell how it was built")
        elif (conf["build_type"] not in ("Release", "RelWithDebInfo", "MinSizeRel")
              or conf["sanitize"].upper() in ("ON", "1", "TRUE", "YES")):
            print(f"WARNING: {binary} comes from {conf['build_dir']}, configured as "
                  f"CMAKE_BUILD_TYPE={conf['build_type'] or '(none)'}, "
                  f"NODEGATE_SANITIZE={conf['sanitize']}: its figures are not comparable with "
                  "the targets. Benchmark an optimised build: make bench BUILD=build-rel "
                  "configures a fresh directory as RelWithDebInfo.")

    os.makedirs(args.out, exist_ok=True)
    cases_path = os.path.join(args.out, "cases.jsonl")
    batch_out = os.path.join(args.out, "batch-out.jsonl")

    print(f"generating {args.cases} cases (seed {args.seed}, profile realistic) ...")
    gen_s = generate_cases(cases_path, args.cases, args.seed)
    size = os.path.getsize(cases_path)
    print(f"  {size / 2**20:.1f} MiB in {gen_s:.1f} s -> {cases_path}")

    print("library (gate_bench) ...")
    lib = run_library(args.lib_bench, cases_path, args.min_seconds)
    if lib.get("crosscheck") != "ok":
        fail("the library's verdicts differ from ng_gate_input_judge's")
    lib_rate = lib["cases_per_second"]

    print(f"batch (nodegate gate --batch, best of {args.batch_repeats}) ...")
    times = run_batch(args.nodegate, cases_path, batch_out, args.cases, args.batch_repeats)
    batch_best = min(times)
    batch_rate = args.cases / batch_best
    print("  runs: " + ", ".join(f"{t:.3f} s" for t in times))
    counts, errors = batch_counts(batch_out)
    lib_counts = lib["verdicts"]
    if dict(counts) != lib_counts or errors != lib["left_out"]:
        fail(f"the batch's verdict counts {dict(counts)} (+{errors} errors) differ from the "
             f"library's {lib_counts} (+{lib['left_out']} left out)")
    print(f"  verdict counts equal the library's on all {args.cases} cases "
          f"({errors} lines answered with an error)")

    print(f"reference (json.loads + gate_ref.judge_case, first {ref_k} cases, "
          f"best of {args.ref_repeats}) ...")
    ref_lines, ref_answers, ref_s = run_reference(cases_path, ref_k, args.ref_repeats)
    ref_rate = ref_k / ref_s
    mismatches = []
    with open(batch_out, encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for i, (ref, got_line) in enumerate(zip(ref_answers, f)):
            got = json.loads(got_line)
            if not same_answer(ref, got):
                mismatches.append((i + 1, ref, got))
    if mismatches:
        for line_no, ref, got in mismatches[:5]:
            print(f"  line {line_no}: reference {ref}, nodegate {got}", file=sys.stderr)
        fail(f"{len(mismatches)} of the first {ref_k} cases: the reference's answer differs "
             "from nodegate's")
    print(f"  answers equal nodegate's on all {ref_k} cases")

    lib_ratio = lib_rate / ref_rate
    batch_ratio = batch_rate / ref_rate
    lib_ok = lib_rate >= LIB_TARGET
    batch_ok = batch_ratio >= BATCH_TARGET

    print()
    print(f"{'':<11}{'cases/s':>14}  {'vs reference':>13}  target")
    print(f"{'library':<11}{lib_rate:>14,.0f}  {lib_ratio:>12,.1f}x  "
          f">= {LIB_TARGET:,.0f} cases/s: {'met' if lib_ok else 'MISSED'}")
    print(f"{'batch':<11}{batch_rate:>14,.0f}  {batch_ratio:>12,.1f}x  "
          f">= {BATCH_TARGET:g}x reference: {'met' if batch_ok else 'MISSED'}")
    print(f"{'reference':<11}{ref_rate:>14,.0f}  {1.0:>12,.1f}x")

    summary = {
        "cases": args.cases,
        "ref_cases": ref_k,
        "seed": args.seed,
        "profile": "realistic",
        "cases_bytes": size,
        "library": {"cases_per_second": lib_rate, "detail": lib},
        "batch": {"cases_per_second": batch_rate, "seconds": times, "errors": errors},
        "reference": {"cases_per_second": ref_rate, "seconds": ref_s,
                      "repeats": args.ref_repeats},
        "ratios": {"library_over_reference": lib_ratio, "batch_over_reference": batch_ratio},
        "targets": {
            "library_cases_per_second": LIB_TARGET, "library_met": lib_ok,
            "batch_over_reference": BATCH_TARGET, "batch_met": batch_ok,
        },
        "machine": {
            "cpu": cpu_model(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "numpy": numpy.__version__, "commit": git_commit(), "builds": builds,
        },
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    summary_path = os.path.join(args.out, "gate_bench.json")
    with open(summary_path + ".tmp", "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(summary_path + ".tmp", summary_path)
    print(f"\nsummary -> {summary_path}")
    return 0 if lib_ok and batch_ok else 1


if __name__ == "__main__":
    sys.exit(main())

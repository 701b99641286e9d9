#!/usr/bin/env python3
"""The storage probe beside fio on the same machine, the same file, in one run.

For each case the probe writes its test file once (--keep; that run is not
counted: a freshly written file reads slower on some devices while their
write-back settles). Then fio and the probe (--file, reusing that file) read
the same file in turn, in the order fio, probe, probe, fio per round so a
drift in the machine falls on both alike, with the same pattern, block size,
queue depth, O_DIRECT and io_uring, for the same time. Both give one figure
per second; the script prints the ratio of the medians (probe / fio) and
exits 1 when a ratio is more than --tolerance away from 1, 0 otherwise (and
stops with a message when a run fails). Cases:

  seqread   1 MiB sequential reads at depth 16  (decimal GB/s)
  randread  4 KiB random reads at depth 32      (IOPS)

Usage:
  bench/storage_bench.py --nodegate build/nodegate [--dir DIR] [--size 1G]
                         [--duration 5] [--rounds 1] [--out bench/out]
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

CASES = [
    # name, probe pattern, fio rw, block, depth, unit
    ("seqread", "read", "read", "1M", 16, "GB/s"),
    ("randread", "randread", "randread", "4K", 32, "IOPS"),
]


def run_probe(args, pattern, block, depth, reuse=None, duration=None):
    where = ["--file", reuse] if reuse else ["--path", args.dir, "--size", args.size, "--keep"]
    cmd = [args.nodegate, "probe", "storage", *where, "--pattern", pattern, "--block", block,
           "--depth", str(depth), "--duration", str(duration or args.duration), "--interval", "1",
           "--cache", "cold", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        sys.exit(f"probe failed ({p.returncode}): {p.stderr}")
    rec = json.loads(p.stdout)["records"][0]
    if not rec["samples"] or rec["wrong"] != 0:
        sys.exit(f"probe measured nothing or found corruption: {rec.get('reason')}")
    return rec


def run_fio(args, rec, rw, block, depth, unit, logdir):
    path = rec["detail"]["file"]
    prefix = os.path.join(logdir, "fio")
    cmd = ["fio", "--name=ref", f"--filename={path}", "--readonly", f"--rw={rw}",
           f"--bs={block}", f"--iodepth={depth}", "--direct=1", "--ioengine=io_uring",
           f"--size={int(rec['conditions']['file_bytes'])}", "--time_based",
           f"--runtime={args.duration}", "--invalidate=1", "--output-format=json",
           "--per_job_logs=0", "--log_avg_msec=1000",
           f"--write_bw_log={prefix}", f"--write_iops_log={prefix}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"fio failed ({p.returncode}): {p.stderr}")
    summary = json.loads(p.stdout[p.stdout.index("{"):])
    log = prefix + ("_bw.log" if unit == "GB/s" else "_iops.log")
    values = []
    with open(log) as f:
        for line in f:
            parts = [x.strip() for x in line.split(",")]
            if len(parts) >= 2 and parts[1]:
                v = float(parts[1])
                # fio logs bandwidth in KiB/s; the probe reports decimal GB/s
                values.append(v * 1024 / 1e9 if unit == "GB/s" else v)
    for suffix in ("_bw.log", "_iops.log"):
        if os.path.exists(prefix + suffix):
            os.unlink(prefix + suffix)
    return values, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--dir", help="directory on the storage to test (default: a new one in the "
                    "current directory)")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--duration", type=float, default=5, help="seconds per run (4 runs a round)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"))
    args = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (scripts/setup-deps --bench)")
    made = None
    if not args.dir:
        made = args.dir = tempfile.mkdtemp(prefix="storage-bench.", dir=".")
    logdir = tempfile.mkdtemp(prefix="storage-bench-fio.")
    results = []
    try:
        for name, pattern, rw, block, depth, unit in CASES:
            probe_all, fio_all = [], []
            writer = run_probe(args, pattern, block, depth, duration=1)
            path = writer["detail"]["file"]
            rec = writer
            try:
                for _ in range(args.rounds):
                    for who in ("fio", "probe", "probe", "fio"):
                        if who == "fio":
                            fio_all += run_fio(args, writer, rw, block, depth, unit, logdir)[0]
                        else:
                            rec = run_probe(args, pattern, block, depth, reuse=path)
                            probe_all += rec["samples"]
            finally:
                os.unlink(path)
            pm, fm = statistics.median(probe_all), statistics.median(fio_all)
            results.append({
                "case": name, "unit": unit, "block": block, "depth": depth,
                "probe_median": pm, "fio_median": fm, "ratio": pm / fm,
                "probe_samples": probe_all, "fio_samples": fio_all,
                "where": {k: rec["conditions"].get(k) for k in ("fs_type", "mount_source", "device", "direct")},
            })
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
        if made:
            shutil.rmtree(made, ignore_errors=True)
    ok = True
    print(f"{'case':9} {'unit':5} {'probe median':>14} {'fio median':>14} {'ratio':>7}")
    for r in results:
        good = abs(r["ratio"] - 1) <= args.tolerance
        ok &= good
        print(f"{r['case']:9} {r['unit']:5} {r['probe_median']:14.4f} {r['fio_median']:14.4f} "
              f"{r['ratio']:7.3f}  {'ok' if good else 'MISSED'} (target within {args.tolerance:.0%})")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "storage_bench.json.tmp"), "w") as f:
        json.dump({"results": results, "size": args.size, "duration_s": args.duration,
                   "rounds": args.rounds, "machine": platform.node(),
                   "cpus": os.cpu_count()}, f, indent=1)
    os.replace(os.path.join(args.out, "storage_bench.json.tmp"), os.path.join(args.out, "storage_bench.json"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

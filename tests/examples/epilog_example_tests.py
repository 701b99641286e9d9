#!/usr/bin/env python3
"""examples/epilog.c, built against include/nodegate/ alone, run on synthetic
GPUs: it must decide exactly as `nodegate epilog` does (the same result JSON,
the same exit status) for a healthy job, a job whose GPU has a fatal fault,
a neighbour's fault the job never touched, and a hung NVML.
Prints one line per case and ends with "N passed, N failed"."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SCHEMA = "nodegate/synthetic-gpus/1"
BAD_ECC = {"ecc": {"volatile": {"corrected": 0, "uncorrected": 3},
                   "aggregate": {"corrected": 0, "uncorrected": 3}}}


def env_for(tmp, gpus):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SLURM_") and not k.startswith("NODEGATE_")}
    path = os.path.join(tmp, "gpus.json")
    with open(path, "w") as f:
        json.dump(gpus, f)
    root = os.path.join(tmp, "root")
    os.makedirs(root, exist_ok=True)
    e.update(NODEGATE_NVML_LIBRARY=ARGS.synth, NODEGATE_SYNTH_GPUS=path, NODEGATE_ROOT=root,
             NODEGATE_NOW="2026-12-01T12:00:00Z")
    return e


def comparable(doc):
    """The run's result, less what differs between two runs by design."""
    doc = dict(doc)
    doc.pop("notes", None)
    return doc


def case(name, gpus, job, want_severity, want_exit):
    tmp = tempfile.mkdtemp(prefix="ng-example-")
    try:
        e = env_for(tmp, gpus)
        ex = subprocess.run([ARGS.example, job, "2"], env=e, capture_output=True, timeout=60)
        ng = subprocess.run([ARGS.nodegate, "epilog", "--gpus", job, "--no-kmsg", "--no-store",
                             "--deadline", "2", "--json"], env=e, capture_output=True, timeout=60)
        out = ex.stdout.decode()
        last = out.rstrip("\n").rsplit("\n", 1)[-1]
        doc = json.loads(out[: len(out) - len(last) - 1])
        ng_doc = json.loads(ng.stdout.decode())
        problems = []
        if ex.returncode != want_exit:
            problems.append(f"example exit {ex.returncode}, wanted {want_exit}")
        if ng.returncode != ex.returncode:
            problems.append(f"nodegate epilog exit {ng.returncode}, example {ex.returncode}")
        if doc.get("severity") != want_severity:
            problems.append(f"severity {doc.get('severity')}, wanted {want_severity}")
        if comparable(doc) != comparable(ng_doc):
            problems.append("the example's result differs from nodegate epilog's:\n"
                            f"{json.dumps(doc, indent=1)}\n{json.dumps(ng_doc, indent=1)}")
        if not last.startswith(f"epilog: {want_severity}: "):
            problems.append(f"verdict line {last!r}")
        print(("ok   " if not problems else "FAIL ") + name)
        for p in problems:
            print("     " + p)
        if problems:
            print("     stderr: " + ex.stderr.decode())
        return not problems
    finally:
        shutil.rmtree(tmp, True)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True)
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ARGS = ap.parse_args()
    two = {"schema": SCHEMA, "gpus": [{}, {}]}
    results = [
        case("healthy job GPUs: ok, exit 0", two, "0,1", "ok", 0),
        case("fatal ECC on the job's GPU: drain, exit 1",
             {"schema": SCHEMA, "gpus": [{}, BAD_ECC]}, "1", "fatal", 1),
        case("fatal ECC on a neighbour's GPU: ok, exit 0",
             {"schema": SCHEMA, "gpus": [{}, BAD_ECC]}, "0", "ok", 0),
        case("NVML hangs: unknown, exit 0",
             {"schema": SCHEMA, "fail": {"hang": "nvmlDeviceGetTotalEccErrors"}, "gpus": [{}]},
             "0", "unknown", 0),
    ]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

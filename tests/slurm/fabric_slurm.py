#!/usr/bin/env python3
"""`nodegate fabric` through a real srun: several slurmd on this one host
(scripts/slurm-fabric-cluster), the stand-in all_reduce_perf on every node
(src/synth/fabric_synth.c reads the step's nodes from SLURM_STEP_NODELIST,
and only rank 0 prints, as with MPI), the port counters read by the real
`nodegate fabric ports` on each node through srun, and Slurm's own
topology.conf as --topology.

  gang_slow   a gang of 3 with fab3 at half speed and fab4 a known-good
              reference: found by bisection, launched by Slurm (the
              records' argv is srun's), each lone node beside a known-good
              node of its own leaf, the fault localised to leaf2
  gang_ok     a healthy gang of 4: one test, every node passes, exit 0
  pair        fab3 with two peers: blamed on the candidate

Sets the cluster up, starts it, runs the cases and stops it. Exit status: 0
pass, 1 fail, 77 skip (not root, or Slurm or munge not installed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER = os.path.join(HERE, "..", "..", "scripts", "slurm-fabric-cluster")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    ng, synth, d = os.path.abspath(a.nodegate), os.path.abspath(a.synth), os.path.abspath(a.dir)
    setup = subprocess.run([CLUSTER, "setup", d, "4"])
    if setup.returncode == 77:
        return 77
    if setup.returncode != 0:
        print("FAIL  setup")
        return 1
    start = subprocess.run([CLUSTER, "start", d])
    if start.returncode != 0:
        subprocess.run([CLUSTER, "stop", d])
        print("FAIL  start (exit %d)" % start.returncode)
        return 77 if start.returncode == 77 else 1
    failed = 0
    try:
        failed = run_cases(ng, synth, d)
    finally:
        subprocess.run([CLUSTER, "stop", d])
    return 1 if failed else 0


def run_cases(ng, synth, d):
    tmp = tempfile.mkdtemp(prefix="ng-fabric-slurm-", dir=d)
    os.chmod(tmp, 0o755)
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir)
    # all_reduce_perf only: srun is Slurm's own.
    os.symlink(synth, os.path.join(bin_dir, "all_reduce_perf"))
    fleet = os.path.join(tmp, "fleet.json")
    topo = os.path.join(d, "etc", "topology.conf")

    def run(cfg, *args):
        with open(fleet, "w") as fh:
            json.dump(dict({"busbw": 180, "seconds": 0.05, "hcas": ["mlx5_0"]}, **cfg), fh)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "NODEGATE_"))}
        env.update(SLURM_CONF=os.path.join(d, "etc", "slurm.conf"), NODEGATE_FABRIC_SYNTH=fleet,
                   PATH=bin_dir + ":/usr/sbin:/usr/bin:/sbin:/bin", TMPDIR=tmp)
        p = subprocess.run([ng, "fabric"] + list(args) + ["--expect-busbw", "180", "--timeout", "60",
                                                          "--json"],
                           env=env, capture_output=True, timeout=300)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            doc = None
        return p, doc

    def verdicts(doc):
        return {v["node"]: v["verdict"] for v in doc["verdicts"]}

    failed = 0

    def case(name, fn):
        nonlocal failed
        try:
            fn()
            print("pass  %s" % name)
        except AssertionError as e:
            print("FAIL  %s: %s" % (name, e))
            failed += 1

    def gang_slow():
        # fab4 is a known-good reference outside the gang, under fab3's leaf.
        p, doc = run({"nodes": {"fab3": {"slow": 0.5}}}, "gang", "fab[1-3]", "--peers", "fab4",
                     "--topology", topo)
        assert doc, "no JSON (exit %d): %s" % (p.returncode, p.stderr.decode(errors="replace")[-1500:])
        v = verdicts(doc)
        assert p.returncode == 1 and v == {"fab1": "pass", "fab2": "pass", "fab3": "slow"}, v
        argv = doc["tests"][0]["record"]["tool"]["argv"]
        assert argv[0] == "srun" and "--nodelist=fab1,fab2,fab3" in argv, argv
        assert doc["fault_domain"]["switch"] == "leaf2", doc.get("fault_domain")
        beside = {t["nodes"][0]: t["nodes"][1] for t in doc["tests"] if "known-good" in t["changed"]}
        assert beside.get("fab3") == "fab4" and beside.get("fab2") == "fab1", \
            "each lone node beside a known-good node of its own leaf: %s" % beside
        assert all(t["ports_changed"] == [] for t in doc["tests"]), "counters read on each node"
        print("    gang of 3 and a reference through srun: %d rounds, %d tests, %.2f s in all, "
              "%.2f s nodegate's own" % (doc["rounds"], len(doc["tests"]), doc["wall_s"], doc["overhead_s"]))

    def gang_ok():
        p, doc = run({}, "gang", "fab[1-4]")
        assert doc and p.returncode == 0, (p.returncode, p.stderr[-800:])
        assert len(doc["tests"]) == 1 and set(verdicts(doc).values()) == {"pass"}, doc["verdicts"]
        t = doc["tests"][0]
        assert t["transport"]["kind"] == "ib", t["transport"]
        print("    healthy gang of 4 through srun: %.2f s in all, %.2f s nodegate's own"
              % (doc["wall_s"], doc["overhead_s"]))

    def pair():
        p, doc = run({"nodes": {"fab3": {"slow": 0.5}}}, "pair", "fab3", "--peers", "fab4,fab1",
                     "--topology", topo)
        assert doc, (p.returncode, p.stderr[-800:])
        assert doc["verdict"] == "slow" and doc["blame"] == "candidate", (doc["verdict"], doc["blame"])
        assert doc["switches"] == {"fab3": "leaf2", "fab4": "leaf2", "fab1": "leaf1"}, doc["switches"]

    case("gang_slow", gang_slow)
    case("gang_ok", gang_ok)
    case("pair", pair)
    return failed


if __name__ == "__main__":
    sys.exit(main())

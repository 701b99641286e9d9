#!/usr/bin/env python3
"""`nodegate health|epilog --land slurm` through the real binary, the
synthetic NVML library and the stand-in scontrol (tests/standins/
fake_scontrol.c, one node's state in a file): a degraded GPU drains with its
specific reason, a healthy node and a node without NVML touch nothing, an
operator's drain is left alone, an unreachable controller is retried, and
the exit statuses stay what Slurm's hooks expect.

Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

NODEGATE = SYNTH = FAKE = None
SCHEMA = "nodegate/synthetic-gpus/1"


def node(overrides=None, n=8):
    gpus = [{} for _ in range(n)]
    for i, o in (overrides or {}).items():
        gpus[i] = o
    return {"schema": SCHEMA, "gpus": gpus}


PCIE_X8 = node({1: {"pcie": {"width": 8}}})


class Run:
    def __init__(self, p, tmp, state_path):
        self.exit = p.returncode
        self.out = p.stdout.decode(errors="replace")
        self.err = p.stderr.decode(errors="replace")
        self.tmp = tmp
        self.state_path = state_path
        try:
            self.json = json.loads(self.out)
        except ValueError:
            self.json = None

    def state(self):
        d = {}
        with open(self.state_path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                d[k] = v
        return d

    def calls(self):
        try:
            with open(self.state_path + ".log") as f:
                return [l.rstrip("\n").split("\t") for l in f]
        except FileNotFoundError:
            return []

    def __repr__(self):
        return (f"exit {self.exit}\nstdout:\n{self.out}\nstderr:\n{self.err}\n"
                f"scontrol calls: {self.calls()}")


def run(args, gpus=None, env=None, library=None, node_state=("IDLE", "")):
    tmp = tempfile.mkdtemp(prefix="ng-landing-test-")
    atexit.register(shutil.rmtree, tmp, True)
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SLURM_") and not k.startswith("NODEGATE_")
         and not k.startswith("FAKE_SCONTROL")}
    sfile = os.path.join(tmp, "gpus.json")
    with open(sfile, "w") as f:
        json.dump(gpus if gpus is not None else node(), f)
    kfile = os.path.join(tmp, "kmsg.log")
    open(kfile, "w").close()
    pfile = os.path.join(tmp, "policy.json")
    with open(pfile, "w") as f:
        f.write("{}")
    state = os.path.join(tmp, "node")
    with open(state, "w") as f:
        f.write(f"name=node1\nstate={node_state[0]}\nreason={node_state[1]}\nstar=0\n")
    e["NODEGATE_NVML_LIBRARY"] = library or SYNTH
    e["NODEGATE_STATE_DIR"] = tmp  # health's run lock: each run its own
    e["NODEGATE_SYNTH_GPUS"] = sfile
    e["NODEGATE_KMSG"] = kfile
    e["NODEGATE_SCONTROL"] = FAKE
    e["FAKE_SCONTROL_STATE"] = state
    e["SLURMD_NODENAME"] = "node1"
    e.update(env or {})
    p = subprocess.run([NODEGATE, "--policy", pfile] + args, capture_output=True, env=e,
                       timeout=120, cwd=tmp)
    return Run(p, tmp, state)


def check(cond, what, r=None):
    if not cond:
        raise AssertionError(what + ("\n" + repr(r) if r is not None else ""))


def test_health_drains_with_the_reason():
    r = run(["health", "--land", "slurm", "--json"], gpus=PCIE_X8)
    check(r.exit == 1, "exit 1 on degraded", r)
    check(r.json and r.json["drain"] is True, "drain", r)
    want = r.json["reason"]
    check(want.startswith("ng:degraded pcie GPU1 ") and "degraded" in want and "pcie" in want,
          "a specific reason", r)
    st = r.state()
    check(st["state"] == "IDLE+DRAIN", "the node is drained", r)
    check(st["reason"] == want, "with the check's reason", r)
    land = r.json["landing"]
    check(land["result"] == "done" and land["changed"] is True, "landing changed it", r)
    check(land["state_before"] == "IDLE" and land["state_after"] == "IDLE+DRAIN", "before/after",
          r)
    check(r.json["drain_by"] == "scontrol", "drain_by", r)
    check(not any("DOWN" in a for c in r.calls() for a in c), "never DOWN", r)
    # text output says what landing did
    r = run(["health", "--land", "slurm"], gpus=PCIE_X8)
    check("health: landing: slurm: drained node1" in r.out, "text line", r)


def test_health_without_land_touches_nothing():
    r = run(["health", "--json"], gpus=PCIE_X8)
    check(r.exit == 1 and r.json["drain"] is True, "still reports the drain", r)
    check(r.calls() == [], "no scontrol call without --land slurm", r)
    check("landing" not in r.json, "no landing", r)


def test_healthy_node_does_nothing():
    r = run(["health", "--land", "slurm", "--json"])
    check(r.exit == 0 and r.json["drain"] is False, "healthy", r)
    check(r.calls() == [], "no scontrol call", r)


def test_nvml_missing_does_nothing():
    r = run(["health", "--land", "slurm", "--json"], library="/nonexistent/libnvidia-ml.so.1")
    check(r.exit == 0 and r.json["severity"] == "n/a", "n/a", r)
    check(r.calls() == [], "no scontrol call", r)


def test_operator_drain_left_alone():
    r = run(["health", "--land", "slurm", "--json"], gpus=PCIE_X8,
            node_state=("IDLE+DRAIN", "replacing PSU, ticket 99"))
    check(r.exit == 1, "exit 1", r)
    check(r.state()["reason"] == "replacing PSU, ticket 99", "the operator's reason kept", r)
    check(r.json["landing"]["result"] == "left-alone", "left alone", r)
    check("already drained by an operator: left alone" in r.json["landing"]["message"], "says so",
          r)
    check(not any(c and c[0] == "update" for c in r.calls()), "no update sent", r)


def test_unreachable_controller_retried():
    r = run(["health", "--land", "slurm", "--json"], gpus=PCIE_X8,
            env={"FAKE_SCONTROL_UNREACHABLE": "2"})
    check(r.exit == 1 and r.state()["state"] == "IDLE+DRAIN", "drained after retries", r)
    check(r.json["landing"]["calls"] >= 5, "retried", r)


def test_unreachable_past_budget_is_reported():
    # health's budget is 30 s by default; the epilog's is 10 s.
    t0 = time.monotonic()
    r = run(["epilog", "--land", "slurm", "--json"], gpus=PCIE_X8,
            env={"FAKE_SCONTROL_UNREACHABLE": "100000", "SLURM_JOB_GPUS": "1"})
    took = time.monotonic() - t0
    check(r.exit == 1, "the epilog still exits 1: Slurm drains it", r)
    check(took < 20, f"bounded ({took:.1f} s)", r)
    check(r.json["landing"]["result"] == "failed", "landing failed", r)
    check("Unable to contact slurm controller" in r.json["landing"]["message"], "why", r)


def test_epilog_sets_reason_and_exits_1():
    r = run(["epilog", "--land", "slurm", "--json"], gpus=PCIE_X8,
            env={"SLURM_JOB_GPUS": "0,1", "SLURM_JOB_ID": "42"})
    check(r.exit == 1, "exit 1: Slurm drains the node", r)
    check(r.state()["reason"].startswith("ng:degraded pcie GPU1 "), "nodegate's reason set first", r)
    check(r.json["drain_by"].startswith("exit status"), "drain_by", r)
    # the job's GPUs only: GPU 1 not in the job, nothing happens
    r = run(["epilog", "--land", "slurm", "--json"], gpus=PCIE_X8,
            env={"SLURM_JOB_GPUS": "0", "SLURM_JOB_ID": "42"})
    check(r.exit == 0 and r.calls() == [], "not the job's GPU: nothing", r)


def test_slurm_epilog_error_after_our_epilog_is_ours():
    """Slurm's own "Epilog error" drain, stamped right after a nodegate epilog
    there exited 1 (as its store records), is nodegate's: the next check sets
    its own reason in its place. After an epilog that passed, the same
    reason is an operator's and is left alone."""
    shared = tempfile.mkdtemp(prefix="ng-landing-hook-")
    atexit.register(shutil.rmtree, shared, True)
    # The stand-in scontrol stamps every reason [root@2026-01-01T00:00:00].
    stamp = int(time.mktime((2026, 1, 1, 0, 0, 0, 0, 0, -1)))
    for passed_first in (False, True):
        store = os.path.join(shared, f"store-{passed_first}.db")
        env = {"NODEGATE_STORE": store, "SLURM_JOB_GPUS": "0,1", "SLURM_JOB_ID": "7",
               "NODEGATE_NOW": str(stamp - 20)}
        r = run(["epilog"], gpus=node() if passed_first else PCIE_X8, env=env)
        check(r.exit == (0 if passed_first else 1), "the epilog, without --land", r)
        env["NODEGATE_NOW"] = str(stamp + 30)
        r = run(["health", "--land", "slurm", "--json"], gpus=PCIE_X8, env=env,
                node_state=("IDLE+DRAIN", "Epilog error"))
        land = r.json["landing"]
        if passed_first:
            check(land["result"] == "left-alone" and r.state()["reason"] == "Epilog error",
                  "after a passing epilog, Slurm's drain is not nodegate's", r)
        else:
            check(land["result"] == "done" and land.get("hook_drain") is True
                  and r.state()["reason"].startswith("ng:degraded pcie GPU1 "),
                  "Slurm's drain after our epilog exited 1 is ours: reason replaced", r)


def test_epilog_landing_ends_by_the_deadline():
    # scontrol hangs, ignoring SIGTERM: the epilog still drains (exit 1) and
    # ends by its --deadline, the landing cut short and said so. Before the
    # landing shared the deadline this took its own 10 s budget and more.
    t0 = time.monotonic()
    r = run(["epilog", "--land", "slurm", "--deadline", "2", "--json"], gpus=PCIE_X8,
            env={"FAKE_SCONTROL_HANG": "all", "FAKE_SCONTROL_IGNORE_TERM": "1",
                 "SLURM_JOB_GPUS": "1"})
    took = time.monotonic() - t0
    check(r.exit == 1, "the epilog still exits 1: Slurm drains it", r)
    check(took < 2 + 1.5, f"ends by the 2 s deadline ({took:.1f} s)", r)
    check(r.json and r.json["landing"]["result"] == "failed", "landing failed", r)
    check("did not answer" in r.json["landing"]["message"]
          or "deadline" in r.json["landing"]["message"], "says why", r)


def test_usage():
    r = run(["health", "--land", "kube"])
    check(r.exit == 0 and "CONFIGURATION ERROR" in r.err and "--land takes slurm or none" in r.err,
          "bad --land is a configuration error, never a drain", r)
    r = run(["epilog", "--land", "kube"], env={"SLURM_JOB_ID": "1"})
    check(r.exit == 0, "under Slurm a usage error never drains", r)
    r = run(["health", "--land", "slurm", "--from-nvidia-smi", "/dev/null"])
    check(r.exit == 0 and "no landing" not in r.out and "--from-nvidia-smi" in r.err,
          "no landing from a saved dump", r)
    r = run(["health", "--help"])
    check("--land slurm|none" in r.out, "documented", r)


def test_newline_in_node_name_is_escaped():
    # SLURMD_NODENAME comes from outside: echoed raw, a newline in it would
    # forge a line of the report ("...: no drain") under the real one.
    forged = "health: ok: 8 GPUs checked: no drain"
    r = run(["health", "--land", "slurm"], gpus=PCIE_X8,
            env={"SLURMD_NODENAME": "n1\n" + forged})
    check(r.exit == 1, "the degraded GPU still fails the check", r)
    check(forged not in r.out.splitlines(), "no forged line", r)
    check("n1\\nhealth: ok" in r.out, "the newline is shown as \\n", r)
    check(r.calls() == [], "nothing was drained under a bad name", r)


def test_slurm_conf_passed():
    r = run(["health", "--land", "slurm", "--slurm-conf", "/etc/slurm-x/slurm.conf", "--json"],
            gpus=PCIE_X8)
    with open(r.state_path + ".conf") as f:
        check(f.read().strip() == "/etc/slurm-x/slurm.conf", "SLURM_CONF for scontrol", r)


def main():
    global NODEGATE, SYNTH, FAKE
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--fake-scontrol", required=True)
    a = ap.parse_args()
    NODEGATE, SYNTH, FAKE = a.nodegate, a.synth, a.fake_scontrol
    passed = failed = 0
    for name, fn in sorted(globals().items()):
        if not name.startswith("test_") or not callable(fn):
            continue
        try:
            fn()
            print(f"ok   {name}")
            passed += 1
        except Exception as ex:  # noqa: BLE001
            print(f"FAIL {name}: {ex}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

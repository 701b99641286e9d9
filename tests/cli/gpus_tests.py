#!/usr/bin/env python3
"""nodegate gpus list|forget through the real binary: the inventory the GPU
checks keep, a GPU taken out on purpose (missing: a drain) forgotten with
an audit entry so the next check passes, and the errors: no --reason, a GPU
the node does not have, a bus naming two, a store that does not exist.
On SQLite, or PostgreSQL (NODEGATE_TEST_BACKEND=postgres: a fresh database
per test on the test server; exit 77 skips without one).
Prints one line per test and ends with "N passed, N failed"."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "store"))
from admission_flow import pg_fresh  # noqa: E402

NODEGATE = SYNTH = None
SCHEMA = "nodegate/synthetic-gpus/1"
TWO = {"schema": SCHEMA, "gpus": [{}, {}]}
ONE = {"schema": SCHEMA, "gpus": [{}]}


class Env:
    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix="ng-gpus-test-")
        self.db = os.path.join(self.tmp, "store.db")
        if os.environ.get("NODEGATE_TEST_BACKEND") == "postgres":
            self.db = pg_fresh(os.environ.get("NODEGATE_TEST_PG_URI_FILE"), "gpus_" + name)
        os.makedirs(os.path.join(self.tmp, "root"))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("SLURM_") and not k.startswith("NODEGATE_")}
        self.env.update(NODEGATE_NVML_LIBRARY=SYNTH, NODEGATE_ROOT=os.path.join(self.tmp, "root"),
                        NODEGATE_STATE_DIR=self.tmp, SLURMD_NODENAME="gpu-node-7",
                        NODEGATE_SYNTH_GPUS=os.path.join(self.tmp, "gpus.json"))

    def gpus(self, doc):
        with open(self.env["NODEGATE_SYNTH_GPUS"], "w") as f:
            json.dump(doc, f)

    def run(self, *args, store=True):
        argv = [NODEGATE] + (["--store", self.db] if store else []) + list(args)
        p = subprocess.run(argv, capture_output=True, env=self.env, timeout=60, cwd=self.tmp)
        p.out, p.err = p.stdout.decode(), p.stderr.decode()
        return p

    def health(self):
        p = self.run("health", "--no-kmsg", "--json")
        return p.returncode, json.loads(p.out)

    def close(self):
        shutil.rmtree(self.tmp, True)


def check(cond, what, p=None):
    if not cond:
        extra = f"\nexit {p.returncode}\nstdout:\n{p.out}\nstderr:\n{p.err}" if p is not None else ""
        raise AssertionError(what + extra)


def seeded():
    """A node whose checks have seen two GPUs."""
    e = Env(sys._getframe(1).f_code.co_name)
    e.gpus(TWO)
    rc, doc = e.health()
    check(rc == 0 and doc["severity"] == "ok", f"first health: {rc} {doc['severity']}")
    return e


def test_list():
    e = seeded()
    try:
        p = e.run("gpus", "list", "--json")
        check(p.returncode == 0, "exit 0", p)
        gpus = json.loads(p.out)["gpus"]
        check([g["bus"] for g in gpus] == ["0000:18:00", "0000:2a:00"], "both GPUs kept", p)
        check(all(g["uuid"].startswith("GPU-") and g["last_seen"] for g in gpus), "rows", p)
        by_name = e.run("gpus", "list", "gpu-node-7", "--json")
        check(json.loads(by_name.out)["gpus"] == gpus, "NODE by its scheduler name", by_name)
        text = e.run("gpus", "list")
        check(text.returncode == 0 and text.out.count("\n") == 2 and "0000:2a:00" in text.out,
              "one line per GPU", text)
        none = e.run("gpus", "list", "no-such-node")
        check(none.returncode == 0 and none.out.startswith("no GPUs kept for no-such-node"),
              "an unknown node has none", none)
    finally:
        e.close()


def test_forget_a_gpu_removed_on_purpose():
    e = seeded()
    try:
        e.gpus(ONE)  # GPU 1 taken out
        rc, doc = e.health()
        check(rc == 1 and doc["severity"] == "fatal", f"the pulled GPU is missing: {rc} {doc}")
        check(any(r["signal"] == "gpu.missing" for g in doc["gpus"] for r in g["reasons"]),
              "gpu.missing")
        p = e.run("gpus", "forget", "gpu-node-7", "00000000:2A:00.0", "--reason", "RMA-2231: pulled",
                  "--json")
        check(p.returncode == 0, "forget exits 0", p)
        f = json.loads(p.out)
        check(f["bus"] == "0000:2a:00" and f["reason"] == "RMA-2231: pulled" and
              f["node_name"] == "gpu-node-7" and f["audit"] == "gpu.forget", "the JSON", p)
        rc, doc = e.health()
        check(rc == 0 and doc["severity"] == "ok" and doc["checked"] == 1,
              f"the next check passes: {rc} {doc}")
        audit = e.run("audit", "show", "--json")
        entries = json.loads(audit.out)["entries"]
        mine = [x for x in entries if x.get("action") == "gpu.forget"]
        check(len(mine) == 1, "one audit entry", audit)
        detail = mine[0]["detail"]
        detail = json.loads(detail) if isinstance(detail, str) else detail
        check(detail["reason"] == "RMA-2231: pulled" and detail["bus"] == "0000:2a:00",
              "the entry keeps the row and the reason", audit)
        verify = e.run("audit", "verify")
        check(verify.returncode == 0, "the audit chain still verifies", verify)
        again = e.run("gpus", "forget", "gpu-node-7", f["uuid"], "--reason", "twice")
        check(again.returncode == 2 and "no GPU" in again.err, "forgotten already: exit 2", again)
    finally:
        e.close()


def test_forget_by_uuid_text():
    e = seeded()
    try:
        uuid = json.loads(e.run("gpus", "list", "--json").out)["gpus"][0]["uuid"]
        p = e.run("gpus", "forget", "gpu-node-7", uuid.lower(), "--reason", "swap")
        check(p.returncode == 0 and p.out.startswith(f"forgot GPU {uuid} at 0000:18:00 of node "),
              "one line", p)
        check(p.out.rstrip().endswith("swap (audited as gpu.forget)"), "the reason", p)
        left = json.loads(e.run("gpus", "list", "--json").out)["gpus"]
        check([g["bus"] for g in left] == ["0000:2a:00"], "the other GPU stays", p)
    finally:
        e.close()


def test_errors():
    e = seeded()
    try:
        p = e.run("gpus", "forget", "gpu-node-7", "0000:2a:00")
        check(p.returncode == 2 and "--reason" in p.err, "no --reason: exit 2", p)
        p = e.run("gpus", "forget", "gpu-node-7", "0000:99:00", "--reason", "x")
        check(p.returncode == 2 and "no GPU \"0000:99:00\"" in p.err and "0000:2a:00" in p.err,
              "an unknown GPU names the known ones", p)
        p = e.run("gpus", "forget", "gpu-node-7", "--reason", "x")
        check(p.returncode == 2, "no GPU named: exit 2", p)
        p = e.run("gpus", "forget", "gpu-node-7", "0000:2a:00", "--reason", "")
        check(p.returncode == 2, "an empty reason: exit 2", p)
        p = e.run("gpus", "bogus")
        check(p.returncode == 2, "an unknown subcommand: exit 2", p)
        p = e.run("gpus", "forget", "gpu-node-7", "0000:2a:00", "--reason", "x",
                  "--store", os.path.join(e.tmp, "nope.db"), store=False)
        check(p.returncode == 3 and not os.path.exists(os.path.join(e.tmp, "nope.db")),
              "a store that does not exist: exit 3, none made", p)
        p = e.run("gpus", "forget", "--help")
        check(p.returncode == 0 and "forget NODE UUID|BUS" in p.out, "--help", p)
        left = json.loads(e.run("gpus", "list", "--json").out)["gpus"]
        check(len(left) == 2, "nothing forgotten by the errors")
    finally:
        e.close()


def main():
    global NODEGATE, SYNTH
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    a = ap.parse_args()
    NODEGATE, SYNTH = a.nodegate, a.synth
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    failed = 0
    for t in tests:
        try:
            t()
            print(f"ok    {t.__name__}")
        except AssertionError as ex:
            failed += 1
            print(f"FAIL  {t.__name__}: {ex}")
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

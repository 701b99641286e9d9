#!/usr/bin/env python3
"""nodegate as the Prolog, Epilog and HealthCheckProgram of a real Slurm.

Runs against the single-host cluster of scripts/slurm-test-cluster (started
by the CTest fixture `slurm`), one case per run:

  healthy          a job on healthy GPUs: the node returns to idle
  job_gpu_fault    a volatile uncorrectable ECC error on one of the job's
                   GPUs during the job: the epilog drains the node, and the
                   reason says nodegate did it; prints the job-end-to-drain time
  other_gpu_fault  the same fault on GPU 3, not the job's: the node stays idle
  nvml_missing     NVML cannot be loaded: no drain by prolog, epilog or
                   health check
  operator_drain   an operator's drain (reason "ops: cable check") survives the
                   epilog and a health check of a job whose GPU 0 then has a
                   fatal fault, reason unchanged
  resume           after a nodegate drain, RESUME returns the node to idle
  health_drain     a fault on GPU 3 while idle: the health check drains with
                   a "nodegate:" reason
  release_after_two_passes
                   `nodegate admit --land slurm` quarantines the node (its
                   fabric failed twice) and drains it; two passing runs later
                   `nodegate release --land slurm` returns it to idle
  vanished_job_gpu GPU 0 (the job's, device minor 0) vanishes from NVML during
                   the job; NVML renumbers the rest: the epilog drains with a
                   reason naming GPU 0 missing, not its neighbour
  admission_queue  the node comes back unscreened: an ordinary job never lands
                   on it (job_submit.lua requires ng_admitted); the admission
                   partition's exclusive job (docs/slurm.md's nodegate-admit)
                   lands there and gives the node ng_admitted, and the job
                   then runs; a held screen leaves it off with the reason in
                   the node's comment, and an operator's comment stays
  unscreen_on_drain
                   an operator drains the node: the strigger program of
                   docs/slurm.md takes ng_admitted off and puts unscreened
                   on; resumed, it takes no ordinary job until the admission
                   job admits it again
  reboot_through_triggers
                   Slurm itself orders the reboot (scontrol reboot, then
                   scontrol reboot ASAP nextstate=RESUME), with the down and
                   drained triggers of docs/slurm.md set: the node, followed
                   until it is idle again, is unscreened by then, never back
                   admitted from before. RebootProgram is docs/slurm.md's
                   nodegate-reboot with its last line, the reboot, a line in
                   a log instead
  admit_prolog     a job that asks (--comment ng:screen, --constraint
                   ng_screen) has its node screened in the Prolog and runs; one
                   that does not ask is not screened; a node the Prolog's
                   screen quarantines holds the job off it (Slurm drains the
                   node and requeues the job)
  resumed_not_drained_again
                   a health check drains on an Xid 79 in the kernel log; the
                   operator resumes the node without a reboot: a job's epilog
                   and the next health check see the same old line and the node
                   stays idle

Jobs are `sbatch --gres=gpu:2 --wrap 'sleep 1'`: their GPUs are 0,1. Each
case starts and ends by putting the cluster back: healthy GPUs, the
original nodegate.env, health checks paused, no jobs, node idle.

Exit status: 0 pass, 1 fail, 77 skip (not root, Slurm not installed, or the
cluster not set up).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

NODE = "node1"
SKIP = 77


class Fail(Exception):
    pass


def skip(msg):
    print(f"slurm_integration: {msg}: skipping the Slurm tests", file=sys.stderr)
    sys.exit(SKIP)


class Cluster:
    def __init__(self, d):
        self.dir = d
        self.env = dict(os.environ, SLURM_CONF=os.path.join(d, "etc", "slurm.conf"))
        self.gpus = os.path.join(d, "gpus.json")
        self.ngenv = os.path.join(d, "etc", "nodegate.env")
        self.ngenv_orig = os.path.join(d, "nodegate.env.orig")
        self.paused = os.path.join(d, "health-paused")
        self.health_log = os.path.join(d, "log", "health.log")
        self.prolog_log = os.path.join(d, "log", "prolog.log")
        with open(os.path.join(d, "epilog-land")) as f:
            self.land = f.read().strip()

    # -- Slurm ------------------------------------------------------------
    def cmd(self, *args, check=True):
        p = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=30)
        if check and p.returncode != 0:
            raise Fail(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
        return p.stdout.strip()

    def state(self):
        return self.cmd("sinfo", "-h", "-n", NODE, "-o", "%T", check=False)

    def reason(self):
        out = self.cmd("scontrol", "show", "node", NODE)
        m = re.search(r"^\s*Reason=(.*?)(?: \[[^\]]*\])?\s*$", out, re.M)
        return m.group(1) if m else ""

    def wait(self, what, pred, timeout, step=0.05):
        t0 = time.monotonic()
        while True:
            v = pred()
            if v:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise Fail(f"{what}: not within {timeout} s (node {self.state()!r}, "
                           f"reason {self.reason()!r})")
            time.sleep(step)

    def wait_state(self, want, timeout=15):
        return self.wait(f"node {want}", lambda: self.state() == want, timeout)

    def submit(self):
        out = self.cmd("sbatch", "--parsable", "--gres=gpu:2", "-o",
                       os.path.join(self.dir, "out", "%j.out"), "--wrap", "sleep 1")
        return out.split(";")[0]

    def job_gone(self, job):
        return self.cmd("squeue", "-h", "-j", job, check=False) == ""

    def job_state(self, job):
        out = self.cmd("scontrol", "show", "job", job, check=False)
        m = re.search(r"JobState=(\S+)", out)
        return m.group(1) if m else "?"

    def wait_prolog(self, job, timeout=20):
        def seen():
            try:
                with open(self.prolog_log) as f:
                    return f"nodegate-prolog: job={job} " in f.read()
            except FileNotFoundError:
                return False
        self.wait(f"the prolog of job {job}", seen, timeout, step=0.02)

    def wait_job_end(self, job, timeout=30):
        self.wait(f"job {job} ending", lambda: self.job_gone(job), timeout)
        return time.monotonic()

    # -- what nodegate reads ----------------------------------------------
    def write_gpus(self, faults=None):
        gpus = [{} for _ in range(4)]
        for i, g in (faults or {}).items():
            gpus[i] = g
        tmp = self.gpus + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"schema": "nodegate/synthetic-gpus/1", "gpus": gpus}, f)
        os.replace(tmp, self.gpus)

    def write_gpu_list(self, gpus):
        tmp = self.gpus + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"schema": "nodegate/synthetic-gpus/1", "gpus": gpus}, f)
        os.replace(tmp, self.gpus)

    def write_kmsg(self, lines):
        with open(os.path.join(self.dir, "kmsg"), "w") as f:
            f.write("".join(l + "\n" for l in lines))

    def set_nvml_library(self, path):
        self.set_env("NODEGATE_NVML_LIBRARY", path)

    def set_env(self, name, value):
        """Sets NAME in the environment the three hooks read (until restore)."""
        with open(self.ngenv) as f:
            lines = [l for l in f.read().splitlines() if not l.startswith(name + "=")]
        lines.insert(0, f"{name}='{value}'")
        tmp = self.ngenv + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, self.ngenv)

    def set_nvml_library(self, path):
        shutil.copyfile(self.ngenv_orig, self.ngenv)
        self.set_env("NODEGATE_NVML_LIBRARY", path)

    # -- health checks ----------------------------------------------------
    def health_running(self):
        me = os.path.join(self.dir, "etc", "healthcheck.sh").encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if me in f.read():
                        return True
            except OSError:
                pass
        return False

    def pause_health(self):
        open(self.paused, "a").close()
        self.wait("a running health check ending", lambda: not self.health_running(), 15)

    def health_runs(self):
        try:
            with open(self.health_log) as f:
                return f.read().count("nodegate-health: rc=")
        except FileNotFoundError:
            return 0

    def run_health_once(self, timeout=15):
        """Unpauses the health check, waits for slurmd to run it once, pauses it."""
        n = self.health_runs()
        os.unlink(self.paused)
        try:
            self.wait("a health check run", lambda: self.health_runs() > n, timeout, step=0.1)
        finally:
            self.pause_health()

    # -- between cases -----------------------------------------------------
    def features(self):
        out = self.cmd("scontrol", "show", "node", NODE, "-o")
        m = re.search(r"(?:^| )ActiveFeatures=(\S*)", out)
        return set(m.group(1).split(",")) if m and m.group(1) != "(null)" else set()

    def comment(self):
        out = self.cmd("scontrol", "show", "node", NODE, "-o")
        m = re.search(r"(?:^| )Comment=(.*?)(?= [A-Z][A-Za-z]*=|$)", out)
        return m.group(1) if m and m.group(1) != "(null)" else ""

    def set_features(self, words, comment=""):
        f = ",".join(words)
        self.cmd("scontrol", "update", f"NodeName={NODE}", f"AvailableFeatures={f}",
                 f"ActiveFeatures={f}", f"Comment={comment}")

    def restore(self):
        self.cmd("strigger", "--clear", "--user=root", check=False)
        self.set_features(["ng_admitted", "ng_screen"])
        if not os.path.exists(self.ngenv_orig):
            shutil.copyfile(self.ngenv, self.ngenv_orig)
        self.pause_health()
        self.write_gpus()
        self.write_kmsg([])
        shutil.copyfile(self.ngenv_orig, self.ngenv)
        self.cmd("scancel", "-u", "root", check=False)
        self.wait("the queue emptying", lambda: self.cmd("squeue", "-h", check=False) == "", 30)
        if self.state() != "idle":
            self.cmd("scontrol", "update", f"NodeName={NODE}", "State=RESUME", check=False)
            self.wait_state("idle")


# -- the cases ----------------------------------------------------------------

def expect(cond, msg):
    if not cond:
        raise Fail(msg)


BUSY = ("mixed", "allocated", "completing")


def stays_idle(c, what):
    # The node's state follows the job's end by a few ms: the epilog first.
    c.wait(f"{what}: node settling", lambda: c.state() not in BUSY, 15, step=0.02)
    st = c.state()
    expect(st == "idle", f"{what}: node is {st!r} (reason {c.reason()!r}), expected idle")
    time.sleep(0.3)
    st = c.state()
    expect(st == "idle", f"{what}: node became {st!r} (reason {c.reason()!r}), expected idle")


def drained(c):
    return c.state() in ("drained", "draining", "drain")


def check_nodegate_reason(c, what):
    r = c.reason()
    if c.land == "slurm":
        expect(r.startswith("ng:") and r.endswith(" [nodegate]"),
               f"{what}: reason {r!r} is not nodegate's ('ng:... [nodegate]')")
    else:
        # The Epilog exit-status contract: Slurm writes its own reason.
        expect(r == "Epilog error", f"{what}: reason {r!r}, expected 'Epilog error'")
    return r


def epilog_said(c, job):
    """What nodegate's epilog printed for JOB, and the wrapper's exit status."""
    with open(os.path.join(c.dir, "log", "epilog.log"), errors="replace") as f:
        lines = f.read().splitlines()
    start = 0
    for i, l in enumerate(lines):
        if l.startswith("nodegate-epilog: job="):
            if l.startswith(f"nodegate-epilog: job={job} "):
                return lines[start:i], l.rsplit("rc=", 1)[-1]
            start = i + 1
    raise Fail(f"no epilog run logged for job {job}")


def check_epilog_drained(c, job, gpu):
    said, rc = epilog_said(c, job)
    want = "epilog: fatal: drain: ng:fatal "
    expect(any(l.startswith(want) and f" GPU{gpu} " in l for l in said),
           f"epilog of job {job} said {said!r}, expected a line {want!r}...")
    if c.land == "slurm":
        expect(any(l.startswith("epilog: landing: slurm: drained ") for l in said),
               f"epilog of job {job} said {said!r}, expected it to drain through scontrol")
    expect(rc == "1", f"epilog of job {job} exited {rc}, expected 1")


def case_healthy(c):
    job = c.submit()
    c.wait_job_end(job)
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)}")
    stays_idle(c, "healthy job")


ECC = {"ecc": {"volatile": {"uncorrected": 2}}}


def case_job_gpu_fault(c):
    t0 = time.monotonic()
    job = c.submit()
    c.wait_prolog(job)            # the prolog saw healthy GPUs; the fault comes during the job
    c.write_gpus({0: ECC})
    t_end = c.wait_job_end(job)
    c.wait("drain", lambda: drained(c), 15, step=0.02)
    t_drain = time.monotonic()
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)}")
    r = check_nodegate_reason(c, "fault on a job GPU")
    check_epilog_drained(c, job, 0)
    print(f"job-end->drain {t_drain - t_end:.3f} s (submit->drain {t_drain - t0:.2f} s); "
          f"drained by {c.land}; reason {r!r}")


def case_other_gpu_fault(c):
    c.write_gpus({3: ECC})
    job = c.submit()
    c.wait_job_end(job)
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)}")
    stays_idle(c, "fault on GPU 3, job on 0,1")


def case_nvml_missing(c):
    c.set_nvml_library(os.path.join(c.dir, "no-such-dir", "libnvidia-ml.so.1"))
    job = c.submit()
    c.wait_job_end(job)
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)}")
    stays_idle(c, "NVML missing, after a job")
    c.run_health_once()
    stays_idle(c, "NVML missing, after a health check")


def case_broken_policy(c):
    # A policy rolled out with one mistake: the Prolog and the Epilog check
    # nothing and exit 0, even with a fault planted on a job GPU that a
    # working check would drain for; each says so and the store keeps it.
    bad = os.path.join(c.dir, "broken-policy.json")
    with open(bad, "w") as f:
        f.write('{"gate": {"warn": 0.05,}}')
    c.set_env("NODEGATE_POLICY", bad)
    job = c.submit()
    c.wait_prolog(job)
    c.write_gpus({0: ECC})
    c.wait_job_end(job)
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)} (requeued?)")
    stays_idle(c, "broken policy, fault on a job GPU")
    said, rc = epilog_said(c, job)
    expect(rc == "0", f"epilog of job {job} exited {rc}, expected 0")
    expect(any("CONFIGURATION ERROR" in l and "broken-policy.json" in l for l in said),
           f"epilog of job {job} said {said!r}, expected the configuration error")
    db = os.path.join(c.dir, "store", "nodegate.db")
    import sqlite3
    con = sqlite3.connect(db)
    verbs = sorted(v for (v,) in con.execute(
        "SELECT verb FROM config_errors WHERE kind = 'policy' AND message LIKE '%broken-policy.json%'"))
    con.close()
    expect("epilog" in verbs and "prolog" in verbs, f"config_errors kept: {verbs}")


def case_operator_drain(c):
    job = c.submit()
    c.wait_prolog(job)
    ops = "ops: cable check"
    c.cmd("scontrol", "update", f"NodeName={NODE}", "State=DRAIN", f"Reason={ops}")
    # A real fault on one of the job's GPUs: the epilog and the health check
    # both find something to drain for, and must still leave the operator's
    # drain (and its reason) alone. With healthy GPUs nodegate would never
    # try, and the rule could break unseen.
    c.write_gpus({0: ECC})
    c.wait_job_end(job)
    c.wait_state("drained")
    expect(c.reason() == ops, f"after the epilog: reason {c.reason()!r}, expected {ops!r}")
    said, rc = epilog_said(c, job)
    expect(any(l.startswith("epilog: fatal: drain: ng:fatal ecc GPU0 ") for l in said),
           f"epilog of job {job} said {said!r}: it did not find the fault on GPU 0")
    if c.land == "slurm":
        expect(any("already drained by an operator: left alone" in l for l in said),
               f"epilog of job {job} said {said!r}, expected it to leave the operator's drain alone")
    c.run_health_once()
    time.sleep(0.3)
    expect(c.state() == "drained", f"after a health check: node {c.state()!r}")
    expect(c.reason() == ops, f"after a health check: reason {c.reason()!r}, expected {ops!r}")


def case_resume(c):
    job = c.submit()
    c.wait_prolog(job)
    c.write_gpus({1: ECC})
    c.wait_job_end(job)
    c.wait("drain", lambda: drained(c), 15, step=0.02)
    check_nodegate_reason(c, "fault on a job GPU")
    check_epilog_drained(c, job, 1)
    c.write_gpus()               # the card was replaced
    c.cmd("scontrol", "update", f"NodeName={NODE}", "State=RESUME")
    dt = c.wait_state("idle")
    print(f"RESUME->idle {dt:.2f} s")
    case_healthy(c)              # and it takes jobs again


def case_health_drain(c):
    c.write_gpus({3: ECC})
    n = c.health_runs()
    os.unlink(c.paused)
    try:
        dt = c.wait("a health-check drain", lambda: drained(c), 15, step=0.05)
    finally:
        c.pause_health()
    r = c.reason()
    expect(r.startswith("ng:") and " GPU3 " in r[:24],
           f"reason {r!r}, expected 'ng:SEVERITY WHAT GPU3 ...'")
    expect(c.health_runs() > n, "drained, but no health check logged its run")
    print(f"health check drained after {dt:.2f} s; reason {r!r}")


def case_vanished_job_gpu(c):
    job = c.submit()
    c.wait_prolog(job)   # the prolog saw (and the store kept) four GPUs, minors 0-3
    # GPU 0 falls off: NVML lists the other three, renumbered 0-2.
    c.write_gpu_list([{"pci_bus_id": f"00000000:{b}:00.0", "minor": m,
                       "uuid": f"GPU-00000000-0000-4000-8000-{m:012x}"}
                      for m, b in ((1, "2A"), (2, "3A"), (3, "5D"))])
    c.wait_job_end(job)
    c.wait("drain", lambda: drained(c), 15, step=0.02)
    check_nodegate_reason(c, "a vanished job GPU")
    check_epilog_drained(c, job, 0)
    said, _ = epilog_said(c, job)
    line = next(l for l in said if l.startswith("epilog: fatal: drain: "))
    expect("gpu.missing" in line and "0000:18:00" in line,
           f"the reason names the missing GPU 0 at 0000:18:00: {line!r}")
    print(f"drained: {line[:160]!r}")


XID79_GPU0 = "4,9120,7200000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=python3, GPU has fallen off the bus."


def case_resumed_not_drained_again(c):
    root = os.path.join(c.dir, "root")
    os.makedirs(os.path.join(root, "proc", "sys", "kernel", "random"), exist_ok=True)
    with open(os.path.join(root, "proc", "sys", "kernel", "random", "boot_id"), "w") as f:
        f.write("6d1f0c2a-1b3e-4f5a-8c7d-9e0f1a2b3c4d\n")
    c.set_env("NODEGATE_ROOT", root)   # the boot id the marks are kept under
    c.write_kmsg([XID79_GPU0])
    n = c.health_runs()
    os.unlink(c.paused)
    try:
        c.wait("a health-check drain", lambda: drained(c), 15, step=0.05)
    finally:
        c.pause_health()
    r = c.reason()
    expect(r.startswith("ng:fatal xid79 GPU0 ") and "xid.79" in r, f"reason {r!r}")
    expect(c.health_runs() > n, "drained, but no health check logged its run")
    # The operator looked, reseated the card, and resumed without a reboot:
    # the line stays in the kernel's buffer.
    c.cmd("scontrol", "update", f"NodeName={NODE}", "State=RESUME")
    c.wait_state("idle")
    job = c.submit()
    c.wait_job_end(job)
    expect(c.job_state(job) == "COMPLETED", f"job {job} is {c.job_state(job)}")
    stays_idle(c, "a job's epilog after the resume")
    said, rc = epilog_said(c, job)
    expect(rc == "0", f"the epilog exited {rc}: {said}")
    c.run_health_once()
    time.sleep(0.3)
    stays_idle(c, "a health check after the resume")
    # A new Xid later in the log still drains.
    c.write_kmsg([XID79_GPU0, XID79_GPU0.replace("4,9120,7200000000", "4,9500,7300000000")])
    os.unlink(c.paused)
    try:
        c.wait("a drain on the new Xid", lambda: drained(c), 15, step=0.05)
    finally:
        c.pause_health()
    print(f"drained again only on the new line; reason {c.reason()!r}")


def admission_records(node, busbw, software="sw-slurm-ci", name=None):
    """One fabric run of NODE: nine samples around busbw, checked and clean;
    name: the scheduler name the records give beside the stable id."""
    spread = [busbw * (1 + 0.004 * k) for k in (-4, -3, -2, -1, 0, 1, 2, 3, 4)]
    extra = {"node_name": name} if name else {}
    return [{"schema": "nodegate/record/1", "node": node, **extra, "class": "slurm-ci",
             "software": software,
             "domain": "fabric", "metric": "nccl.all_reduce.busbw", "unit": "GB/s",
             "samples": spread, "wrong": 0,
             "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}]


def case_release_after_two_passes(c):
    ng = c.nodegate
    store = os.path.join(c.dir, "store", "admission.db")
    if os.path.exists(store):
        os.unlink(store)
    files = os.path.join(c.dir, "admission")
    os.makedirs(files, exist_ok=True)

    def write(name, recs):
        p = os.path.join(files, name)
        with open(p, "w") as f:
            json.dump(recs, f)
        return p

    def nodegate(*args, want):
        p = subprocess.run([ng, "--store", store, *args], env=c.env, capture_output=True,
                           text=True, timeout=60)
        if p.returncode != want:
            raise Fail(f"nodegate {' '.join(args)}: exit {p.returncode}, expected {want}\n"
                       f"{p.stdout}{p.stderr}")
        return p.stdout
    history = []
    for i in range(12):
        history += admission_records(f"peer{i:02d}", 300.0 * (1 + 0.001 * (i - 6)))
    nodegate("ingest", "--accepted", write("history.json", history), want=0)
    # As on a real node: records keyed by the machine id, naming the node as
    # Slurm does; admit lands on that name without being told it.
    node_id = "5e1f0000000000000000000000c1c1c1"
    slow, healthy = write("slow.json", admission_records(node_id, 250.0, name=NODE)), \
        write("healthy.json", admission_records(node_id, 300.0, name=NODE))
    out = nodegate("admit", "--land", "slurm", "--from", slow, "--confirm-from", slow, want=1)
    expect("outcome: quarantined" in out, f"admit said:\n{out}")
    c.wait("the quarantine drain", lambda: drained(c), 15, step=0.02)
    r = c.reason()
    expect(r.startswith("ng:quarantine fabric nccl.all_reduce.busbw case 1: "),
           f"reason {r!r}")
    # One pass is not enough; a reboot alone never is.
    nodegate("admit", "--from", healthy, want=1)
    out = nodegate("release", NODE, "--land", "slurm", want=1)
    expect(drained(c), f"released after one pass: node {c.state()!r}")
    nodegate("admit", "--from", healthy, want=1)
    t0 = time.monotonic()
    out = nodegate("release", NODE, "--land", "slurm", want=0)
    c.wait_state("idle")
    print(f"release->idle {time.monotonic() - t0:.2f} s")
    case_healthy(c)  # and it takes jobs again
    audit = nodegate("audit", "verify", want=0)
    expect("verified" in audit, f"audit: {audit}")


def admit_log(c):
    try:
        with open(os.path.join(c.dir, "log", "admit.log")) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def admission_job(c, *wrap):
    """The admission partition's exclusive job on node1: docs/slurm.md's
    nodegate-admit, or the command given."""
    args = ["sbatch", "--parsable", "--partition=admission", "--exclusive",
            "--constraint=unscreened", f"--nodelist={NODE}", "-o",
            os.path.join(c.dir, "out", "%j.out")]
    if wrap:
        env = os.path.join(c.dir, "etc", "nodegate.env")
        args += ["--wrap", f"set -a; . {env}; set +a; " + " ".join(wrap)]
    else:
        args.append(os.path.join(c.dir, "etc", "admit.sh"))
    return c.cmd(*args).split(";")[0]


def case_admission_queue(c):
    # The node comes back: unscreened, not admitted (what a repair's runbook
    # or slurm.conf's Features=unscreened gives it).
    c.set_features(["unscreened", "ng_screen"])
    p = subprocess.run(["sbatch", "--parsable", "--gres=gpu:2", "-o",
                        os.path.join(c.dir, "out", "%j.out"), "--wrap", "sleep 1"],
                       env=c.env, capture_output=True, text=True, timeout=30)
    ordinary = p.stdout.strip().split(";")[0] if p.returncode == 0 else None
    if ordinary:
        job = c.cmd("scontrol", "show", "job", ordinary)
        expect(re.search(r"Features=\S*ng_admitted", job), f"job_submit.lua required "
               f"ng_admitted: {job}")
        time.sleep(3)
        expect(c.job_state(ordinary) == "PENDING" and c.state() == "idle",
               f"an ordinary job on an unscreened node: {c.job_state(ordinary)}, node {c.state()}")
    else:
        # No node has ng_admitted: Slurm refuses the job outright.
        expect("Requested node configuration is not available" in p.stderr,
               f"sbatch said: {p.stderr}")
    # The admission job runs there, alone, and admits it.
    t0 = time.monotonic()
    job = admission_job(c)
    c.wait_job_end(job, timeout=90)
    log = admit_log(c)
    expect(f"nodegate-admit: job={job} node={NODE} rc=0" in log, f"admit.log:\n{log[-2000:]}")
    f = c.features()
    expect("ng_admitted" in f and "unscreened" not in f and "ng_screen" in f,
           f"admitted: features {f}")
    print(f"admission job: {time.monotonic() - t0:.1f} s to ng_admitted")
    if ordinary:
        c.wait_job_end(ordinary, timeout=30)
        out = c.cmd("scontrol", "show", "job", ordinary, check=False)
        expect(not out or "JobState=COMPLETED" in out, f"the ordinary job ran after: {out}")
    else:
        case_healthy(c)
    # A screen that cannot measure (held): ng_admitted off, the reason in the comment.
    held = ["nodegate", "admit", "--queue", "--quick", "--skip", "compute", "--skip", "memory",
            "--storage-path", "/nonexistent/ng-admit"]
    held[0] = c.nodegate
    c.set_features(["unscreened", "ng_screen"])
    c.wait_job_end(admission_job(c, *held), timeout=60)
    f, comment = c.features(), c.comment()
    expect("ng_admitted" not in f and "unscreened" in f, f"held: features {f}")
    expect(comment.startswith("ng:held: ") and "/nonexistent/ng-admit" in comment,
           f"held: the comment says why: {comment!r}")
    # ... and an operator's comment is never written over.
    c.set_features(["unscreened", "ng_screen"], comment="ops: fan swap Tuesday")
    c.wait_job_end(admission_job(c, *held), timeout=60)
    expect(c.comment() == "ops: fan swap Tuesday" and "ng_admitted" not in c.features(),
           f"the operator's comment: {c.comment()!r}, features {c.features()}")


def case_unscreen_on_drain(c):
    c.cmd("strigger", "--set", "--drained", "--flags=PERM",
          f"--program={os.path.join(c.dir, 'etc', 'unscreen.sh')}")
    c.cmd("scontrol", "update", f"NodeName={NODE}", "State=DRAIN", "Reason=ops: cable check")
    c.wait_state("drained")
    # slurmctld looks at its triggers every 15 s.
    t = c.wait("the trigger putting the node back in the queue",
               lambda: "unscreened" in c.features() and "ng_admitted" not in c.features(), 45,
               step=0.5)
    print(f"drained -> unscreened in {t:.1f} s")
    expect(c.reason() == "ops: cable check", f"the operator's reason stays: {c.reason()!r}")
    expect(c.comment().startswith("ng:unscreened: left service"), f"comment {c.comment()!r}")
    expect("ng_screen" in c.features(), f"other features kept: {c.features()}")
    c.cmd("strigger", "--clear", "--user=root", check=False)
    c.cmd("scontrol", "update", f"NodeName={NODE}", "State=RESUME")
    c.wait_state("idle")
    # Resumed, yet unscreened: an ordinary job does not land; the queue admits it.
    p = subprocess.run(["sbatch", "--parsable", "--gres=gpu:2", "-o",
                        os.path.join(c.dir, "out", "%j.out"), "--wrap", "sleep 1"],
                       env=c.env, capture_output=True, text=True, timeout=30)
    if p.returncode == 0:
        job = p.stdout.strip().split(";")[0]
        time.sleep(3)
        expect(c.job_state(job) == "PENDING", f"an ordinary job on the resumed node: "
               f"{c.job_state(job)}")
    else:
        expect("Requested node configuration is not available" in p.stderr, p.stderr)
    c.wait_job_end(admission_job(c), timeout=90)
    expect("ng_admitted" in c.features(), f"admitted again: {c.features()}")


def case_reboot_through_triggers(c):
    prog = f"--program={os.path.join(c.dir, 'etc', 'unscreen.sh')}"
    c.cmd("strigger", "--set", "--down", "--flags=PERM", prog)
    c.cmd("strigger", "--set", "--drained", "--flags=PERM", prog)
    log = os.path.join(c.dir, "log", "reboot.log")
    for how in (["reboot", NODE], ["reboot", "ASAP", "nextstate=RESUME", "reason=ng-reboot-test",
                                   NODE]):
        if os.path.exists(log):
            os.unlink(log)
        c.set_features(["ng_admitted", "ng_screen"])
        t0 = time.monotonic()
        c.cmd("scontrol", *how)
        seen, unscreened_at, back_at, left = [], None, None, False
        while time.monotonic() - t0 < 60:
            out = c.cmd("sinfo", "-h", "-n", NODE, "-o", "%T", check=False).strip()
            f = c.features()
            step = (out, "ng_admitted" in f, "unscreened" in f)
            if not seen or seen[-1][1:] != step:
                seen.append((round(time.monotonic() - t0, 1),) + step)
            left = left or out.startswith("reboot")
            if unscreened_at is None and "unscreened" in f:
                unscreened_at = time.monotonic() - t0
            if back_at is None and left and out == "idle":
                back_at = time.monotonic() - t0
            if back_at is not None and unscreened_at is not None:
                break
            time.sleep(0.25)
        what = f"scontrol {' '.join(how)}"
        print(f"{what}: (s, state, ng_admitted, unscreened): {seen}")
        expect(os.path.exists(log), f"{what}: RebootProgram was not run")
        expect(back_at is not None, f"{what}: the node did not come back: {seen}")
        # docs/slurm.md's RebootProgram takes it out of the queue before the
        # reboot: it never comes back admitted from before it went.
        expect(unscreened_at is not None and unscreened_at <= back_at,
               f"{what}: idle again at {back_at} s and still admitted: {seen}")
        print(f"{what}: unscreened after {unscreened_at:.1f} s, idle again after {back_at:.1f} s")
    c.cmd("strigger", "--clear", "--user=root", check=False)


def prolog_said(c, job, what):
    with open(c.prolog_log) as f:
        text = f.read()
    return what in text and f"nodegate-prolog: job={job} " in text


def case_admit_prolog(c):
    # A job that does not ask: one scontrol call, no screen.
    job = c.submit()
    c.wait_job_end(job)
    expect(prolog_said(c, job, f"job {job}: 1 node, no ng_screen constraint"),
           "the Prolog did not screen a job that did not ask")
    # Asking by comment and by feature: screened, admitted, the job runs.
    for how in (["--comment=run 3, ng:screen"], ["--constraint=ng_screen"]):
        out = c.cmd("sbatch", "--parsable", "--gres=gpu:2", *how, "-o",
                    os.path.join(c.dir, "out", "%j.out"), "--wrap", "sleep 1")
        job = out.split(";")[0]
        t0 = time.monotonic()
        c.wait_job_end(job, timeout=60)
        expect(prolog_said(c, job, f"job {job}: screening this node"),
               f"{how}: the Prolog screened the node")
        c.wait_state("idle")  # in service: not drained by the screen
        expect(not drained(c), f"{how}: the node stays in service: {c.state()}")
        print(f"{how[0].split('=')[0]}: screened and ran in {time.monotonic() - t0:.1f} s")
    # A node that fails the screen: quarantined, the job held off it.
    pol = os.path.join(c.dir, "etc", "unreachable-floor.json")
    with open(pol, "w") as f:
        # This test host runs other work beside the cluster: the confirmation's
        # exclusivity check is the real node's, not this host's.
        json.dump({"floors": {"cpu.fp64.gflops": 1e9},
                   "admission": {"exclusive_max_runnable": 1000}}, f)
    c.set_env("NODEGATE_POLICY", pol)
    # Its case goes to a store of its own: the other cases screen node1 in
    # the cluster's store, and an open case there would hold it.
    scratch = os.path.join(c.dir, "store", "prolog-quarantine.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(scratch + suffix):
            os.unlink(scratch + suffix)
    c.set_env("NODEGATE_STORE", scratch)
    out = c.cmd("sbatch", "--parsable", "--gres=gpu:2", "--comment=ng:screen", "-o",
                os.path.join(c.dir, "out", "%j.out"), "--wrap", "sleep 1")
    job = out.split(";")[0]
    c.wait("the drain of the quarantined node", lambda: drained(c), 90, step=0.2)
    c.wait("the Prolog's exit", lambda: prolog_said(c, job, f"job={job} gpus=0,1 rc=1"), 30)
    c.wait("the job requeued", lambda: c.job_state(job) in ("PENDING", "REQUEUED", "REQUEUE_HOLD"),
           30)
    time.sleep(2)
    expect(c.job_state(job) != "RUNNING" and drained(c),
           f"the job is held off the drained node: {c.job_state(job)}, node {c.state()}")
    expect(not os.path.exists(os.path.join(c.dir, "out", f"{job}.out")),
           "the job's script never ran on the node")
    with open(c.prolog_log) as f:
        text = f.read()
    expect("quarantined" in text and "the job is held off this node" in text,
           f"prolog.log:\n{text[-1500:]}")


def case_probation_job(c):
    """Release puts the node on probation; the next real job's Epilog (with
    the hooks' store) returns it to admitted."""
    ng = c.nodegate
    store = os.path.join(c.dir, "store", "nodegate.db")
    for suffix in ("", "-queue", ".audit-head"):
        if os.path.exists(store + suffix):
            os.unlink(store + suffix)
    files = os.path.join(c.dir, "admission")
    os.makedirs(files, exist_ok=True)

    def write(name, recs):
        p = os.path.join(files, name)
        with open(p, "w") as f:
            json.dump(recs, f)
        return p

    def nodegate(*args, want):
        p = subprocess.run([ng, "--store", store, *args], env=c.env, capture_output=True,
                           text=True, timeout=60)
        if p.returncode != want:
            raise Fail(f"nodegate {' '.join(args)}: exit {p.returncode}, expected {want}\n"
                       f"{p.stdout}{p.stderr}")
        return p.stdout
    # The Epilog keys the node by this machine's id: the case must be that id's.
    ident = json.loads(nodegate("identity", "--json", want=0))
    node_id = ident["profile"]["node_id"]
    history = []
    for i in range(12):
        history += admission_records(f"peer{i:02d}", 300.0 * (1 + 0.001 * (i - 6)),
                                     software="sw-probation")
    nodegate("ingest", "--accepted", write("history.json", history), want=0)
    slow = write("slow.json", admission_records(node_id, 250.0, software="sw-probation",
                                                name=NODE))
    nodegate("admit", "--land", "slurm", "--from", slow, "--confirm-from", slow, want=1)
    c.wait("the quarantine drain", lambda: drained(c), 15, step=0.02)
    t0 = time.monotonic()
    nodegate("release", NODE, "--manual", "--by", "ci", "--reason", "probation test",
             "--land", "slurm", want=0)
    c.wait_state("idle")
    shown = json.loads(nodegate("quarantine", "show", "1", "--json", want=0))
    expect(shown.get("state") == "probation", f"after release: {shown.get('state')}")
    job = c.submit()
    c.wait_job_end(job)

    def ended():
        s = json.loads(nodegate("quarantine", "show", "1", "--json", want=0))
        return s.get("probation", {}).get("outcome") not in (None, "in force")
    c.wait("the probation's end", ended, 15, step=0.1)
    shown = json.loads(nodegate("quarantine", "show", "1", "--json", want=0))
    p = shown["probation"]
    expect(p["outcome"] == "passed" and p["job"] == str(job),
           f"probation ended {p['outcome']} by job {p['job']} (job {job}): {p['why']}")
    stays_idle(c, "after its probation job")
    print(f"release->probation passed {time.monotonic() - t0:.2f} s; {p['why']}")


CASES = {name[5:]: f for name, f in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="the cluster's DIR (scripts/slurm-test-cluster)")
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--nodegate", help="the nodegate binary under test")
    a = ap.parse_args()

    if os.geteuid() != 0:
        skip("needs root (the cluster's slurmd runs as root)")
    missing = [p for p in ("sbatch", "squeue", "sinfo", "scontrol", "scancel") if not shutil.which(p)]
    if missing:
        skip(f"not installed: {' '.join(missing)} (scripts/setup-deps --test installs them)")
    d = os.path.realpath(a.dir)
    if not os.path.exists(os.path.join(d, "epilog-land")):
        skip(f"no cluster set up in {d}")

    c = Cluster(d)
    c.nodegate = a.nodegate
    t0 = time.monotonic()
    try:
        c.restore()
        CASES[a.case](c)
        c.restore()
    except (Fail, subprocess.TimeoutExpired) as e:
        print(f"FAIL {a.case}: {e}", file=sys.stderr)
        for log in ("prolog.log", "epilog.log", "health.log", "slurmd.log", "slurmctld.log"):
            p = os.path.join(d, "log", log)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    tail = f.read().splitlines()[-15:]
                print(f"== {p}\n" + "\n".join(tail), file=sys.stderr)
        try:
            c.restore()
        except Exception as e2:  # the next case restores again
            print(f"restore after the failure: {e2}", file=sys.stderr)
        return 1
    print(f"ok {a.case} ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

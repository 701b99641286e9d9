#!/usr/bin/env python3
"""nodegate epilog, prolog and health through the real binary and the
synthetic NVML library: what SLURM_JOB_GPUS can hold when an attacker or a
broken configuration wrote it, the deadline against a hung NVML, the kernel
log, the store, the text report and the exit statuses of each mode.

Every run gets a fresh temporary directory, an empty policy, an empty kernel
log unless a test gives one, and no SLURM_* variable it did not set, so
nothing of the machine running the tests reaches a result.
Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import atexit
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

NODEGATE = SYNTH = FIXTURES = SCENARIOS = None
SCHEMA = "nodegate/synthetic-gpus/1"


def node(overrides=None, n=8, **top):
    gpus = [{} for _ in range(n)]
    for i, o in (overrides or {}).items():
        gpus[i] = o
    d = {"schema": SCHEMA}
    d.update(top)
    d["gpus"] = gpus
    return d


class Run:
    def __init__(self, p, seconds, tmp):
        self.exit = p.returncode
        self.out = p.stdout.decode(errors="replace")
        self.err = p.stderr.decode(errors="replace")
        self.seconds = seconds
        self.tmp = tmp
        try:
            self.json = json.loads(self.out)
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"exit {self.exit} in {self.seconds:.2f} s\nstdout:\n{self.out}\nstderr:\n{self.err}"


def run(args, gpus=None, env=None, kmsg="", library=None, policy="{}", timeout=60, files=None):
    tmp = tempfile.mkdtemp(prefix="ng-epilog-test-")
    atexit.register(shutil.rmtree, tmp, True)
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SLURM_") and not k.startswith("NODEGATE_")}
    sfile = os.path.join(tmp, "gpus.json")
    with open(sfile, "w") as f:
        json.dump(gpus if gpus is not None else node(), f)
    kfile = os.path.join(tmp, "kmsg.log")
    with open(kfile, "w") as f:
        f.write(kmsg)
    pfile = os.path.join(tmp, "policy.json")
    if policy is not None:
        with open(pfile, "w") as f:
            f.write(policy)
    for name, text in (files or {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    e["NODEGATE_NVML_LIBRARY"] = library or SYNTH
    e["NODEGATE_SYNTH_GPUS"] = sfile
    e["NODEGATE_KMSG"] = kfile
    e["NODEGATE_STATE_DIR"] = tmp  # health's run lock: each run its own
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v.replace("@tmp", tmp)
    argv = ([NODEGATE] + (["--policy", pfile] if policy is not None else [])
            + [a.replace("@tmp", tmp) for a in args])
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, env=e, timeout=timeout, cwd=tmp)
    return Run(p, time.monotonic() - t0, tmp)


def check(cond, what, r=None):
    if not cond:
        raise AssertionError(what + ("\n" + repr(r) if r is not None else ""))


def expect(r, severity, drain, exit_status):
    check(r.json is not None, "stdout is not one JSON document", r)
    check(r.exit == exit_status, f"exit {r.exit}, expected {exit_status}", r)
    check(r.json["severity"] == severity, f"severity {r.json['severity']}, expected {severity}", r)
    check(r.json["drain"] is drain, f"drain {r.json['drain']}, expected {drain}", r)
    check(r.json["exit"] == r.exit, "the JSON's exit differs from the process's", r)


def notes(r):
    return "\n".join(r.json["notes"])


def printable(s):
    return all(0x20 <= ord(c) < 0x7f for c in s)


# ---- SLURM_JOB_GPUS that an attacker or a broken configuration could write ---------

HOSTILE = [
    "../../x", "/dev/nvidia0", "../../../../etc/shadow", "$(touch @tmp/pwned)",
    "`touch @tmp/pwned`", "0;touch @tmp/pwned", "0|touch @tmp/pwned", "0&&touch @tmp/pwned",
    "0 1", "'0'", "%s%s%s%s%n", "\x1b]0;owned\x07", "\u00e9", "-1", "0x1", "+1", "1e3",
    "99999999999999999999", "18446744073709551617", "4294967296", "1024", "0-99999999",
    "3-1", "GPU-../../../etc", "MIG-$(id)", "GPU-" + "a" * 5000,
]


def test_hostile_values_check_nothing():
    for v in HOSTILE:
        r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": v})
        expect(r, "n/a", False, 0)
        check(r.json["checked"] == 0, f"{v!r}: checked {r.json['checked']}", r)
        check(not os.path.exists(os.path.join(r.tmp, "pwned")), f"{v!r} ran a command", r)
        check(all(printable(n) for n in r.json["notes"]), f"{v!r}: a note holds raw bytes", r)
        check(len(r.out) < 20000, f"{v!r}: {len(r.out)} bytes of output", r)


def test_hostile_beside_a_real_gpu():
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "../../x,$(touch @tmp/pwned),0,99999999999"},
            gpus=node({0: {"ecc": {"volatile": {"uncorrected": 1}}}}))
    expect(r, "fatal", True, 1)
    check([g["index"] for g in r.json["gpus"]] == [0], "only GPU 0 is checked", r)
    check('"../../x" refused' in notes(r), "the path is refused by name", r)
    check(not os.path.exists(os.path.join(r.tmp, "pwned")), "a command ran", r)


def test_hostile_in_text_output():
    r = run(["epilog"], env={"SLURM_JOB_GPUS": "\x1b[2J\x1b[31mX,0"})
    check(r.exit == 0, "exit 0", r)
    check("\x1b" not in r.out and "\x1b" not in r.err, "an escape sequence reached the terminal", r)
    check("\\x1b[2J" in r.out, "the item is shown escaped", r)


def test_ten_thousand_entries():
    v = ",".join(str(i) for i in range(10000))
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": v})
    expect(r, "ok", False, 0)
    check(r.json["checked"] == 8, "the node's eight GPUs are checked once each", r)
    check(len(r.json["notes"]) < 20, f"{len(r.json['notes'])} notes", r)
    check(r.seconds < 10, f"took {r.seconds:.1f} s", r)
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": ",".join(["../x"] * 10000)})
    expect(r, "n/a", False, 0)
    check(len(r.json["notes"]) < 20, f"{len(r.json['notes'])} notes", r)
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": ",".join(["1"] * 10000)})
    expect(r, "ok", False, 0)
    check(r.json["checked"] == 1, "one GPU", r)


def test_huge_value():
    # About 1 MB in one variable (Linux allows 128 KiB per string; argv has more room).
    v = "0," + "9" * 100000
    r = run(["epilog", "--json", "--gpus", v])
    expect(r, "ok", False, 0)
    check(r.json["checked"] == 1, "GPU 0 only", r)


def test_empty_and_unset():
    for env, why in (({"SLURM_JOB_GPUS": ""}, "SLURM_JOB_GPUS is empty"),
                     ({"SLURM_JOB_GPUS": " , ,"}, "SLURM_JOB_GPUS is empty"),
                     ({"SLURM_JOB_GPUS": None}, "SLURM_JOB_GPUS is not set")):
        r = run(["epilog", "--json"], env=env, gpus=node({0: {"lost": True}}))
        expect(r, "n/a", False, 0)
        check(why in r.json["reason"], f"the reason says {why!r}", r)
        r = run(["prolog"], env=env)
        check(r.exit == 0 and "no GPUs to check" in r.out, "prolog: exit 0, says why", r)


def test_ordinal_beyond_the_node():
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "1,7"}, gpus=node(n=2))
    expect(r, "ok", False, 0)
    check([g["index"] for g in r.json["gpus"]] == [1], "GPU 1 only", r)
    check("GPU 7 not on this node (NVML lists 2 GPUs)" in notes(r), "a note names GPU 7", r)
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "70"}, gpus=node(n=2))
    expect(r, "n/a", False, 0)


def test_uuid_resolution_is_exact():
    u2 = "GPU-00000000-0000-4000-8000-000000000002"
    g = node({2: {"ecc": {"volatile": {"uncorrected": 1}}}})
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": u2}, gpus=g)
    expect(r, "fatal", True, 1)
    check(r.json["gpus"][0]["uuid"] == u2, "GPU 2 by UUID", r)
    # One digit off: not the GPU, not a guess.
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": u2[:-1] + "9"}, gpus=g)
    expect(r, "n/a", False, 0)
    check("not among this node's GPUs" in notes(r), "the unknown UUID is noted", r)


# ---- the deadline --------------------------------------------------------------------

def test_hang_ends_within_deadline():
    hung = {"schema": SCHEMA, "fail": {"hang": "nvmlDeviceGetTotalEccErrors"}}
    for mode in ("epilog", "prolog", "health"):
        env = {"SLURM_JOB_GPUS": "0,1"} if mode != "health" else {}
        r = run([mode, "--json", "--deadline", "2"], env=env, gpus=hung)
        expect(r, "unknown", False, 0)
        check(r.json["timed_out"] is True, "timed_out", r)
        check("did not answer within 2 s" in r.json["reason"], "the reason", r)
        check(r.seconds <= 3.0, f"{mode}: {r.seconds:.2f} s for a 2 s deadline", r)


def test_hang_deadline_from_policy():
    hung = {"schema": SCHEMA, "gpus": [{}, {"hang": "nvmlDeviceGetRemappedRows"}]}
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1"}, gpus=hung,
            policy='{"health": {"deadline_seconds": 1}}')
    # One GPU's hang is that GPU's: its sibling is judged, it is unresponsive.
    expect(r, "unresponsive", False, 0)
    check(r.seconds <= 2.0, f"{r.seconds:.2f} s for a 1 s deadline", r)
    check([g["severity"] for g in r.json["gpus"]] == ["ok", "unresponsive"], "per-GPU severities", r)
    check("did not answer for this GPU" in r.json["gpus"][1]["reasons"][0]["text"], "the reason", r)
    check(r.json["timed_out"] is False, "not the node's hang", r)
    # Every GPU hung: the node's hang, unknown.
    both = {"schema": SCHEMA, "gpus": [{"hang": "nvmlDeviceGetRemappedRows"}] * 2}
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1"}, gpus=both,
            policy='{"health": {"deadline_seconds": 1}}')
    expect(r, "unknown", False, 0)
    check(r.json["timed_out"] is True and r.json["reason"] == "NVML did not answer within 1 s",
          "the node's hang", r)
    # The hung GPU is not the job's: no wait at all.
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0"}, gpus=hung,
            policy='{"health": {"deadline_seconds": 1}}')
    expect(r, "ok", False, 0)


def test_hang_in_init_text():
    r = run(["epilog", "--deadline", "1"], env={"SLURM_JOB_GPUS": "0"},
            gpus={"schema": SCHEMA, "fail": {"hang": "nvmlInit"}})
    check(r.exit == 0, "exit 0", r)
    check(r.out.strip().endswith("epilog: unknown: NVML did not answer within 1 s: no drain"),
          "the last line", r)
    check(r.seconds <= 2.0, f"{r.seconds:.2f} s", r)


# ---- the kernel log --------------------------------------------------------------------

XID79 = "4,900,7200000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"


def test_unreadable_kmsg_is_a_note():
    r = run(["epilog", "--json", "--kmsg", "@tmp/no-such-log"], env={"SLURM_JOB_GPUS": "0"})
    expect(r, "ok", False, 0)
    check("kernel log not read" in notes(r) and "Xids not checked" in notes(r), "noted", r)
    os.chmod(r.tmp, 0o755)
    if os.geteuid() != 0:  # root reads anything
        locked = os.path.join(r.tmp, "locked.log")
        with open(locked, "w") as f:
            f.write(XID79)
        os.chmod(locked, 0)
        r = run(["epilog", "--json", "--kmsg", locked], env={"SLURM_JOB_GPUS": "0"})
        expect(r, "ok", False, 0)


def test_xid_window():
    old = "4,800,1000000000,-;NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n"
    new = "4,801,7200000000,-;NVRM: Xid (PCI:0000:2a:00): 13, pid=5, name=x, Graphics SM Warp Exception\n"
    # The 79 is 6200 s before the newest line: outside the epilog's hour.
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1"}, kmsg=old + new)
    expect(r, "transient", False, 0)
    # health reads the whole buffer by default.
    r = run(["health", "--json"], kmsg=old + new)
    expect(r, "fatal", True, 1)
    # --since widens the epilog's window.
    r = run(["epilog", "--json", "--since", "7000"], env={"SLURM_JOB_GPUS": "0,1"}, kmsg=old + new)
    expect(r, "fatal", True, 1)
    # The job's own run time, when Slurm gives its start: two hours covers the 79.
    r = run(["epilog", "--json"],
            env={"SLURM_JOB_GPUS": "0,1", "SLURM_JOB_START_TIME": str(int(time.time()) - 2 * 3600)},
            kmsg=old + new)
    expect(r, "fatal", True, 1)
    # ... half an hour does not; a start time in the future or not a number is ignored.
    for start in (str(int(time.time()) - 1800), str(int(time.time()) + 86400), "soon", ""):
        r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1", "SLURM_JOB_START_TIME": start},
                kmsg=old + new)
        expect(r, "transient", False, 0)
    # --no-kmsg: no Xids at all.
    r = run(["epilog", "--json", "--no-kmsg", "--since", "99999"], env={"SLURM_JOB_GPUS": "0,1"},
            kmsg=old + new)
    expect(r, "ok", False, 0)


def test_xid_on_another_gpu_is_ignored():
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "1"}, kmsg=XID79)
    expect(r, "ok", False, 0)
    check("1 Xid line for GPUs this check does not cover" in notes(r), "noted", r)


# ---- modes, text, exit statuses ---------------------------------------------------------

def test_text_one_line_per_gpu():
    g = node({3: {"pcie": {"width": 8}}})
    r = run(["epilog"], env={"SLURM_JOB_GPUS": "0-7"}, gpus=g)
    check(r.exit == 1, "exit 1", r)
    lines = r.out.splitlines()
    gpu_lines = [l for l in lines if l.startswith("GPU ")]
    check(len(gpu_lines) == 8, "eight GPU lines", r)
    check("degraded" in gpu_lines[3] and "0000:5d:00" in gpu_lines[3], "GPU 3's line", r)
    check(lines[-1].startswith("epilog: degraded: drain: ng:degraded pcie GPU3 0000:5d:00: "),
          "the last line names the drain", r)


def test_prolog_drains():
    r = run(["prolog", "--json"], env={"SLURM_JOB_GPUS": "0"}, gpus=node({0: {"lost": True}}))
    expect(r, "fatal", True, 1)
    check(r.json["mode"] == "prolog", "mode", r)


def test_health_whole_node_and_reason():
    g = node({6: {"remapped_rows": {"uncorrected": 8, "failed": True}}})
    r = run(["health"], env={"SLURM_JOB_GPUS": "0"}, gpus=g)
    check(r.exit == 1, "exit 1", r)
    check(sum(1 for l in r.out.splitlines() if l.startswith("GPU ")) == 8, "every GPU", r)
    check("drain: ng:fatal remap GPU6 0000:ba:00: " in r.out, "the drain reason", r)
    r = run(["health", "--json"], gpus=g)
    expect(r, "fatal", True, 1)
    check(r.json["reason"].startswith("ng:fatal remap GPU6 0000:ba:00: ")
          and r.json["reason"].endswith(" [nodegate]"), "reason", r)


def test_one_health_check_at_a_time():
    """A second health run while one is alive (it holds the lock) exits 0 at
    once, says so and checks nothing, even on a fatal GPU; the lock is
    never followed through a planted link."""
    import fcntl
    g = node({6: {"remapped_rows": {"uncorrected": 8, "failed": True}}})
    lockdir = tempfile.mkdtemp(prefix="ng-health-lock-")
    atexit.register(shutil.rmtree, lockdir, True)
    with open(os.path.join(lockdir, "health.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        r = run(["health"], gpus=g, env={"NODEGATE_STATE_DIR": lockdir})
        check(r.exit == 0 and "another nodegate health is still running" in r.out, "skipped", r)
        check(r.seconds < 2 and "GPU 6" not in r.out, "checked nothing", r)
        r = run(["health", "--json"], gpus=g, env={"NODEGATE_STATE_DIR": lockdir})
        expect(r, "n/a", False, 0)
        # the prolog and epilog are not health: they run as before
        r = run(["epilog", "--json"], gpus=g, env={"NODEGATE_STATE_DIR": lockdir,
                                                    "SLURM_JOB_GPUS": "6"})
        expect(r, "fatal", True, 1)
    # released with the process that held it
    r = run(["health", "--json"], gpus=g, env={"NODEGATE_STATE_DIR": lockdir})
    expect(r, "fatal", True, 1)
    # a link where the lock should be: not followed, the check still runs
    os.unlink(os.path.join(lockdir, "health.lock"))
    victim = os.path.join(lockdir, "victim")
    open(victim, "w").close()
    os.symlink(victim, os.path.join(lockdir, "health.lock"))
    r = run(["health", "--json"], gpus=g, env={"NODEGATE_STATE_DIR": lockdir})
    expect(r, "fatal", True, 1)
    check("not locked against a second run" in r.err, "says it is unlocked", r)


def test_nvml_missing_everywhere():
    for mode in ("epilog", "prolog", "health"):
        r = run([mode, "--json"], env={"SLURM_JOB_GPUS": "0"}, library="/nonexistent/libnvidia-ml.so.1")
        expect(r, "n/a", False, 0)
        check("cannot load the NVML library" in r.json["reason"], "why", r)


def config_error(r, verb, what):
    """A configuration error: exit 0, nothing on stdout, one loud line."""
    check(r.exit == 0, f"{what}: exit 0, never a drain", r)
    lines = [l for l in r.err.splitlines() if l]
    check(len(lines) == 1, f"{what}: one line on stderr, got {len(lines)}", r)
    check(lines[0].startswith(f"nodegate {verb}: CONFIGURATION ERROR, nothing checked"),
          f"{what}: the loud line", r)
    check(r.out == "", f"{what}: no report (nothing was checked)", r)


def test_usage_errors():
    # A broken command line never drains, by hand or under Slurm.
    for env in ({"SLURM_JOB_GPUS": "0"}, {"SLURM_JOB_GPUS": "0", "SLURM_JOB_ID": "42"}):
        r = run(["epilog", "--bogus"], env=env)
        config_error(r, "epilog", "epilog --bogus")
        check("unknown option --bogus" in r.err, "names the option", r)
    cases = [
        (["prolog", "--deadline", "0"], "prolog", "--deadline"),
        (["health", "--gpus", "0"], "health", "--gpus is for epilog"),
        (["epilog", "--from-nvidia-smi", "x"], "epilog", "--from-nvidia-smi is for health"),
        (["epilog", "--since", "-5"], "epilog", "--since"),
        (["epilog", "--kmsg", "x", "--no-kmsg"], "epilog", "--kmsg and --no-kmsg"),
        (["epilog", "--deadline"], "epilog", "--deadline needs a value"),
        (["health", "extra"], "health", "unexpected argument"),
    ]
    for args, verb, said in cases:
        r = run(args)
        config_error(r, verb, " ".join(args))
        check(said in r.err, f"{args}: says {said!r}", r)
    for verb in ("epilog", "prolog", "health", "scenarios"):
        r = run([verb, "--help"])
        check(r.exit == 0 and r.out.startswith("usage: nodegate " + verb), f"{verb} --help", r)


# ---- a broken configuration never drains -----------------------------------------------

BROKEN_POLICIES = {
    "trailing comma": '{"gate": {"warn": 0.05,}}',
    "out of range": '{"gate": {"block": 1.5}}',
    "a key of a newer nodegate": '{"health": {"deadline_seconds": 10, "xid_grace": 3}}',
    "a newer schema": '{"schema": "nodegate/policy/2"}',
    "a section given twice": '{"gate": {"warn": 0.05}, "gate": {"block": 0.9}}',
    "a key given twice": '{"gate": {"warn": 0.05, "warn": 0.06}}',
    "not an object": '[]',
    "empty file": '',
}

# A fatal GPU: the check, had it run, would drain. A configuration error
# must not turn into that drain, nor into a pass that says it checked.
FATAL = node({2: {"ecc": {"volatile": {"uncorrected": 1}}}})


def npd_config_error(r, what):
    check(r.exit == 2, f"{what}: npd answers 2 (unknown), never 1", r)
    check(r.out.strip() == "GPU health unknown: nodegate configuration error"
          or r.out.startswith("GPU health unknown: nodegate configuration error"),
          f"{what}: npd's one line", r)
    check(len(r.out.splitlines()) == 1 and len(r.out.rstrip("\n")) < 80, f"{what}: one short line", r)
    lines = [l for l in r.err.splitlines() if l]
    check(len(lines) == 1 and "CONFIGURATION ERROR" in lines[0], f"{what}: one loud line", r)


def test_broken_policy_never_drains():
    for what, text in BROKEN_POLICIES.items():
        for verb in ("epilog", "prolog", "health"):
            for env in ({"SLURM_JOB_GPUS": "0,1,2"},
                        {"SLURM_JOB_GPUS": "0,1,2", "SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1",
                         "SLURM_SCRIPT_CONTEXT": verb + "_slurmd"}):
                r = run([verb], gpus=FATAL, policy=text, env=env)
                config_error(r, verb, f"{verb} with a policy with {what}")
                check("policy" in r.err, f"{what}: says it is the policy", r)
        r = run(["npd"], gpus=FATAL, policy=text)
        npd_config_error(r, f"npd with a policy with {what}")


def test_policy_error_names_the_problem():
    r = run(["epilog"], policy=BROKEN_POLICIES["a key of a newer nodegate"],
            env={"SLURM_JOB_GPUS": "0"})
    check('"health.xid_grace"' in r.err and "not known to this nodegate" in r.err
          and "nodegate 0." in r.err, "names the key and the version that does not know it", r)
    r = run(["epilog"], policy=BROKEN_POLICIES["a section given twice"], env={"SLURM_JOB_GPUS": "0"})
    check('policy section "gate" is given twice' in r.err, "a repeated section", r)


def test_missing_policy_file_never_drains():
    for verb in ("epilog", "prolog", "health"):
        r = run([verb], gpus=FATAL, policy=None,
                env={"SLURM_JOB_GPUS": "2", "NODEGATE_POLICY": "@tmp/no-such-policy.json"})
        config_error(r, verb, f"{verb} with NODEGATE_POLICY naming no file")
        check("no-such-policy.json" in r.err, "names the file", r)
    r = run(["npd"], gpus=FATAL, policy=None, env={"NODEGATE_POLICY": "@tmp/nope.json"})
    npd_config_error(r, "npd with NODEGATE_POLICY naming no file")


def test_the_check_still_drains_with_a_good_policy():
    # The guard must not swallow real faults: the same fatal GPU drains.
    r = run(["epilog", "--json"], gpus=FATAL, env={"SLURM_JOB_GPUS": "2"})
    expect(r, "fatal", True, 1)
    r = run(["npd"], gpus=FATAL)
    check(r.exit == 1, "npd: a problem", r)


def test_misspelt_global_option_never_drains():
    for args in (["--polcy", "x.json", "epilog"], ["--stor", "x.db", "prolog"],
                 ["-x", "health"], ["epilog", "--polcy", "x.json"]):
        verb = [a for a in args if a in ("epilog", "prolog", "health")][0]
        r = run(args, gpus=FATAL, env={"SLURM_JOB_GPUS": "2"})
        config_error(r, verb, " ".join(args))
    r = run(["--store"], env={"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_ID": "7"})
    config_error(r, "epilog", "a global option without its value in the Epilog")
    r = run(["--stor", "x.db", "npd"], gpus=FATAL)
    npd_config_error(r, "npd after a misspelt global option")
    # Not a GPU check, not under Slurm: a usage error as before.
    r = run(["--polcy", "x.json", "verdicts"])
    check(r.exit == 2 and "unknown global option --polcy" in r.err, "other verbs: exit 2", r)


def test_misspelt_verb_under_slurm_never_drains():
    hooks = [
        {"SLURM_SCRIPT_CONTEXT": "epilog_slurmd", "SLURM_JOB_ID": "7"},
        {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_ID": "7"},
        {"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1"},  # a Slurm without SLURM_SCRIPT_CONTEXT
    ]
    for env in hooks:
        r = run(["epilgo"], gpus=FATAL, env=env)
        check(r.exit == 0 and "CONFIGURATION ERROR" in r.err and 'unknown command "epilgo"' in r.err,
              f"{env}: exit 0 with the loud line", r)
        check(len([l for l in r.err.splitlines() if l]) == 1, "one line", r)
        r = run([], env=env)
        check(r.exit == 0 and "CONFIGURATION ERROR" in r.err, f"{env}: no command at all", r)
    # By hand a typo is a usage error, and says so.
    r = run(["epilgo"])
    check(r.exit == 2 and 'unknown command "epilgo"' in r.err, "by hand: exit 2", r)
    # A known verb that is not a check, in a job (not the hook), runs as asked.
    r = run(["--polcy", "x", "verdicts"], env={"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1"})
    check(r.exit == 2, "a job's own nodegate command keeps its usage errors", r)


def test_npd_option_errors_are_unknown():
    for args in (["npd", "--bogus"], ["npd", "--json"], ["npd", "--store", "x"], ["npd", "--deadline"]):
        r = run(args, gpus=FATAL)
        npd_config_error(r, " ".join(args))


def test_config_error_kept_and_counted():
    env = {"SLURM_JOB_GPUS": "2", "SLURMD_NODENAME": "gpu-17", "NODEGATE_STORE": "@tmp/s.db"}
    r = run(["epilog"], gpus=FATAL, policy='{"gate": {"block": 2}}', env=env)
    config_error(r, "epilog", "a broken policy with a store")
    check("recorded in the store" in r.err, "says it was kept", r)
    db = os.path.join(r.tmp, "s.db")
    rows = sqlite3.connect(db).execute("SELECT node, verb, kind, message FROM config_errors").fetchall()
    check(len(rows) == 1 and rows[0][:3] == ("gpu-17", "epilog", "policy") and "gate.block" in rows[0][3],
          f"one row naming node, verb, kind and the value: {rows}", r)
    # Two more nodes: a fleet-wide failure shows in the metrics.
    for name, verb, args in (("gpu-18", "prolog", ["prolog"]), ("gpu-19", "health", ["health", "--bogus"])):
        e = dict(env, SLURMD_NODENAME=name, NODEGATE_STORE=db)
        run(args, gpus=FATAL, policy='{"gate": {"block": 2}}' if verb == "prolog" else "{}", env=e)
    m = subprocess.run([NODEGATE, "--store", db, "metrics"], capture_output=True, timeout=60)
    text = m.stdout.decode()
    check(m.returncode == 0, f"metrics: exit {m.returncode}: {m.stderr.decode()}")
    for line in ('nodegate_config_errors{node="gpu-17",verb="epilog",kind="policy"} 1',
                 'nodegate_config_errors{node="gpu-18",verb="prolog",kind="policy"} 1',
                 'nodegate_config_errors{node="gpu-19",verb="health",kind="option"} 1',
                 "nodegate_config_error_nodes 3"):
        check(line in text.splitlines(), f"metrics lack {line!r}:\n{text}")
    # And the report shows the fleet-wide failure first.
    rep = subprocess.run([NODEGATE, "--store", db, "report", "--json", "--no-sacct"],
                         capture_output=True, timeout=60)
    check(rep.returncode == 0, f"report: exit {rep.returncode}: {rep.stderr.decode()}")
    ce = json.loads(rep.stdout)["config_errors"]
    check(ce["nodes"] == 3 and sorted(e["node"] for e in ce["by_node"]) == ["gpu-17", "gpu-18", "gpu-19"],
          f"report config_errors: {ce}")
    html = os.path.join(os.path.dirname(db), "r.html")
    rep = subprocess.run([NODEGATE, "--store", db, "report", "--html", html, "--no-sacct"],
                         capture_output=True, timeout=60)
    page = open(html).read()
    check('id="config-errors"' in page and "<b>3 nodes</b>" in page and "gate.block" in page,
          "the HTML report's configuration errors")


def test_config_error_with_a_broken_store_is_still_exit_0():
    r = run(["epilog"], gpus=FATAL, policy='{"gate": {"block": 2}}',
            env={"SLURM_JOB_GPUS": "2", "NODEGATE_STORE": "@tmp/junk.db"},
            files={"junk.db": "not a database " * 20})
    config_error(r, "epilog", "a broken policy and a broken store")
    check("not recorded" in r.err, "says it was not kept", r)


def test_output_pipe_without_reader():
    # An Epilog whose standard output nobody reads must not die of SIGPIPE
    # (signal 13 is a failed Epilog to Slurm: a drain).
    tmp = tempfile.mkdtemp(prefix="ng-epilog-test-")
    atexit.register(shutil.rmtree, tmp, True)
    sfile = os.path.join(tmp, "gpus.json")
    with open(sfile, "w") as f:
        json.dump(node(), f)
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("SLURM_") and not k.startswith("NODEGATE_")}
    e.update(NODEGATE_NVML_LIBRARY=SYNTH, NODEGATE_SYNTH_GPUS=sfile, NODEGATE_KMSG="/dev/null",
             SLURM_JOB_GPUS="0-7", SLURM_JOB_ID="7")
    for args in (["epilog"], ["epilog", "--json"], ["health"], ["--polcy", "x", "epilog"]):
        rfd, wfd = os.pipe()
        os.close(rfd)
        p = subprocess.run([NODEGATE] + args, stdout=wfd, stderr=subprocess.PIPE, env=e, timeout=60)
        os.close(wfd)
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 0, f"{args}: exit {p.returncode} (-13 is SIGPIPE)\n{err}")
    check("could not be written" in err or "CONFIGURATION ERROR" in err, f"a note: {err}")


def test_control_characters_escaped():
    # A newline in a name from outside must not forge a line of the report.
    forged = "health: ok: 8 GPUs checked: no drain"
    r = run(["--polcy\n" + forged, "epilog"])
    check(forged not in r.err.splitlines(), "the loud line escapes what it echoes", r)
    check("\\n" in r.err, "as \\n", r)
    r = run(["epilog", "--bogus\x1b]0;owned\x07"])
    check("\x1b" not in r.err and "\\x1b" in r.err, "escape sequences are escaped", r)


# ---- the store ----------------------------------------------------------------------------

def test_store_records():
    g = node({1: {"ecc": {"volatile": {"uncorrected": 3}}}})
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1", "SLURM_JOB_ID": "77",
                                      "NODEGATE_STORE": "@tmp/nodegate.db"}, gpus=g)
    expect(r, "fatal", True, 1)
    con = sqlite3.connect(os.path.join(r.tmp, "nodegate.db"))
    rows = con.execute("SELECT domain, metric, body FROM records ORDER BY id").fetchall()
    con.close()
    check(len(rows) == 2, f"{len(rows)} records", r)
    bodies = [json.loads(b) for _, _, b in rows]
    check(all(d == "health" and m == "gpu.health" for d, m, _ in rows), "domain and metric", r)
    check([b["severity"] for b in bodies] == ["ok", "fatal"], "severities", r)
    check(bodies[1]["job"] == "77" and bodies[1]["mode"] == "epilog", "job and mode", r)
    # --no-store keeps nothing.
    r = run(["epilog", "--json", "--no-store"],
            env={"SLURM_JOB_GPUS": "0", "NODEGATE_STORE": "@tmp/other.db"})
    check(not os.path.exists(os.path.join(r.tmp, "other.db")), "no store made", r)


def test_rates_from_store_history():
    # The store keeps each check's wear counters; the next check takes its
    # rates against them (never over less than health.rate_min_hours).
    shared = tempfile.mkdtemp(prefix="ng-epilog-history-")
    atexit.register(shutil.rmtree, shared, True)
    env = {"SLURM_JOB_GPUS": "0", "NODEGATE_STORE": os.path.join(shared, "nodegate.db")}
    before = node({0: {"pcie": {"replays": 100}}})
    after = node({0: {"pcie": {"replays": 60100}}})
    r = run(["epilog", "--json"], env=dict(env, NODEGATE_NOW="1790000000"), gpus=before)
    expect(r, "ok", False, 0)
    # Two hours later, 60,000 more replays: 2,500 an hour over 24 h, above 1,000.
    r = run(["epilog", "--json"], env=dict(env, NODEGATE_NOW="1790007200"), gpus=after)
    expect(r, "degraded", True, 1)
    check("rate.pcie_replays" in r.out and "60000" in r.out, "the rate is the reason", r)
    # A day later the counter has not moved since: no rate, no drain.
    r = run(["epilog", "--json"], env=dict(env, NODEGATE_NOW="1790100000"), gpus=after)
    expect(r, "ok", False, 0)
    # A counter that could not be read last time gives no rate now.
    env2 = dict(env, NODEGATE_STORE=os.path.join(shared, "second.db"))
    unread = node({0: {"errors": {"nvmlDeviceGetPcieReplayCounter": "UNKNOWN"}}})
    r = run(["epilog", "--json"], env=dict(env2, NODEGATE_NOW="1790000000"), gpus=unread)
    check(r.exit == 0 and not r.json["drain"], "an unread counter drains nothing", r)
    r = run(["epilog", "--json"], env=dict(env2, NODEGATE_NOW="1790007200"), gpus=after)
    expect(r, "ok", False, 0)


def test_bad_store_is_a_note():
    r = run(["epilog", "--json", "--store", "@tmp/not-a-db"], env={"SLURM_JOB_GPUS": "0"},
            files={"not-a-db": "this is not a database\n" * 100})
    expect(r, "ok", False, 0)
    check("records not kept" in notes(r), "noted", r)
    r = run(["epilog", "--json", "--store", "@tmp/not-a-db"], env={"SLURM_JOB_GPUS": "0"},
            gpus=node({0: {"lost": True}}), files={"not-a-db": "garbage" * 100})
    expect(r, "fatal", True, 1)


def test_hostile_store_rows_are_not_evidence():
    # A store whose GPU rows were written by someone else: nonsense buses,
    # minors and counts are passed over, never a missing GPU or a drain.
    import sqlite3
    r = run(["health", "--json", "--store", "@tmp/s.db", "--no-kmsg"])
    expect(r, "ok", False, 0)
    db = sqlite3.connect(os.path.join(r.tmp, "s.db"))
    db.execute("UPDATE gpu_inventory SET bus = '../../etc', minor = 99999999999, unresponsive = -5")
    db.execute("INSERT INTO kmsg_marks VALUES ('x', 'zz', 'boot with spaces', 'NaN', 0)")
    db.commit()
    db.close()
    store = os.path.join(r.tmp, "s.db")
    r2 = run(["health", "--json", "--store", store, "--no-kmsg"])
    expect(r2, "ok", False, 0)
    r3 = run(["epilog", "--json", "--store", store, "--no-kmsg"], env={"SLURM_JOB_GPUS": "0,1"})
    expect(r3, "ok", False, 0)


def test_locked_store_keeps_the_deadline():
    # A store another process holds locked must not hold the node past the
    # deadline (Slurm would kill the Epilog, and a killed Epilog drains).
    first = run(["epilog", "--json", "--store", "@tmp/nodegate.db"], env={"SLURM_JOB_GPUS": "0"})
    expect(first, "ok", False, 0)
    db = os.path.join(first.tmp, "nodegate.db")
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    try:
        r = run(["epilog", "--json", "--deadline", "1", "--store", db],
                env={"SLURM_JOB_GPUS": "0"}, gpus=node({0: {"lost": True}}))
    finally:
        con.execute("ROLLBACK")
        con.close()
    expect(r, "fatal", True, 1)
    check(r.seconds <= 2.0, f"{r.seconds:.2f} s for a 1 s deadline", r)
    check("records not kept" in notes(r), "noted", r)


# ---- a saved nvidia-smi -q ------------------------------------------------------------------

def test_from_nvidia_smi():
    if not FIXTURES or not os.path.isdir(os.path.join(FIXTURES, "nvidia-smi")):
        return "skipped: no fixtures"
    d = os.path.join(FIXTURES, "nvidia-smi")
    idle = os.path.join(d, "smi590_h100-80gb-hbm3_q_idle.txt")
    r = run(["health", "--json", "--from-nvidia-smi", idle])
    check(r.exit == 0 and r.json["severity"] in ("ok", "transient", "unknown"), "idle H100", r)
    check(r.json["checked"] >= 1 and r.json["gpus_from"] == "nvidia-smi -q file", "read", r)
    brake = os.path.join(d, "nvidia-smi-q_535.161.08_h100x8_hw_power_brake_active.txt")
    r = run(["health", "--json", "--from-nvidia-smi", brake])
    check(r.json is not None and r.json["drain"] is True and r.exit == 1,
          "an active hardware power brake drains", r)
    r = run(["health", "--from-nvidia-smi", "@tmp/missing.txt"])
    config_error(r, "health", "an unreadable dump")
    r = run(["health", "--from-nvidia-smi", "@tmp/junk.txt"], files={"junk.txt": "hello\n"})
    config_error(r, "health", "not a dump")


# ---- nodegate scenarios itself ----------------------------------------------------------

def scenarios(args, files):
    d = tempfile.mkdtemp(prefix="ng-scenarios-test-")
    atexit.register(shutil.rmtree, d, True)
    for name, doc in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
    e = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
    p = subprocess.run([NODEGATE, "scenarios", "--dir", d, "--library", SYNTH] + args,
                       capture_output=True, env=e, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def test_scenarios_report_a_wrong_row():
    with open(os.path.join(SCENARIOS, "06-ecc.json")) as f:
        ecc = json.load(f)
    wrong = dict(ecc, name="wrong", expect={"severity": "ok", "drain": False, "exit": 0})
    rc, out, err = scenarios([], {"01-ecc.json": ecc, "02-wrong.json": wrong})
    check(rc == 1, f"exit {rc}\n{out}{err}")
    lines = out.splitlines()
    check(lines[0] == "SCENARIO        SEVERITY  DRAIN  EXIT", "the seed's header: " + lines[0])
    check(lines[1] == "ecc             fatal     yes    1", "the ecc row: " + lines[1])
    check(lines[2].startswith("wrong           fatal     yes    1    <- expected ok no 0"), lines[2])
    rc, out, err = scenarios(["--only", "ecc"], {"01-ecc.json": ecc, "02-wrong.json": wrong})
    check(rc == 0 and "wrong" not in out, f"--only ecc: exit {rc}\n{out}{err}")


def test_scenarios_refuse_bad_files():
    with open(os.path.join(SCENARIOS, "01-healthy.json")) as f:
        ok = json.load(f)
    bad = [
        ("01-healthy.json", "{not json"),
        ("01-healthy.json", dict(ok, name="other")),
        ("01-healthy.json", dict(ok, env={"PATH": "/tmp"})),
        ("01-healthy.json", dict(ok, env={"LD_PRELOAD": "/tmp/x.so"})),
        ("01-healthy.json", dict(ok, extra=1)),
        ("01-healthy.json", dict(ok, expect={"severity": "ok"})),
        ("01-healthy.json", dict(ok, library="/tmp/evil.so")),
        ("01-healthy.json", {k: v for k, v in ok.items() if k != "synthetic"}),
    ]
    for name, doc in bad:
        rc, out, err = scenarios([], {name: doc})
        check(rc == 2 and "nodegate scenarios:" in err, f"{doc!r:.80}: exit {rc}\n{out}{err}")
    rc, out, err = scenarios(["--only", "nope"], {"01-healthy.json": ok})
    check(rc == 2, "--only an unknown name")
    rc, out, err = scenarios([], {})
    check(rc == 2 and "no scenarios" in err, "an empty directory")


def test_scenarios_synthetic_file_error_is_not_a_drain():
    # A typo in the GPUs (a key the library does not know) makes nvmlInit
    # fail: the epilog says n/a, never a fault.
    with open(os.path.join(SCENARIOS, "01-healthy.json")) as f:
        ok = json.load(f)
    typo = dict(ok, synthetic={"schema": "nodegate/synthetic-gpus/1", "gpus": [{"eccc": {}}]},
                expect={"severity": "n/a", "drain": False, "exit": 0})
    rc, out, err = scenarios([], {"01-healthy.json": typo})
    check(rc == 0, f"exit {rc}\n{out}{err}")


def main():
    global NODEGATE, SYNTH, FIXTURES, SCENARIOS
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--fixtures")
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("--only")
    a = ap.parse_args()
    NODEGATE, SYNTH, FIXTURES = os.path.abspath(a.nodegate), os.path.abspath(a.synth), a.fixtures
    SCENARIOS = a.scenarios
    return run_tests(globals(), a.only)


def run_tests(names, only):
    """Runs every test_* function of names (a module's globals) whose name holds only."""
    passed = failed = 0
    for name, fn in sorted(names.items()):
        if not (name.startswith("test_") and callable(fn)) or (only and only not in name):
            continue
        try:
            note = fn()
            print(f"ok    {name}" + (f" ({note})" if note else ""))
            passed += 1
        except Exception as e:  # noqa: BLE001 - report every failure, go on
            print(f"FAIL  {name}: {e}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

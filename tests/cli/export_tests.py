#!/usr/bin/env python3
"""Verdicts told to the world beyond the store and Slurm: `nodegate metrics`
(Prometheus text, checked with promtool when it is installed), --on-verdict
programs, `nodegate kube` against a stand-in kubectl (there is no Kubernetes
API server on a test machine), and `nodegate npd` on synthetic GPUs.

  export_tests.py --nodegate BUILD/nodegate --synth BUILD/libnodegate-nvml-synth.so
                  --scenarios DIR [TEST...]
"""
import argparse
import json
import os
import re
import socket
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "store"))
import admission_flow as af  # noqa: E402  (records and runs written the same way)

A = None


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def clean_env(**extra):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("NODEGATE_") and not k.startswith("SLURM_")}
    e.update(extra)
    return e


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


# A stand-in for an --on-verdict program: keeps its argv and standard input,
# then exits with the status its first argument names.
RECORDER = """#!%s
import json, sys
with open(sys.argv[2], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": sys.stdin.read()}) + "\\n")
if int(sys.argv[1]):
    sys.stderr.write("recorder: told to fail\\n")
sys.exit(int(sys.argv[1]))
"""

# A stand-in kubectl: records its argv, one JSON list a line, in
# $FAKE_KUBECTL_LOG; fails the subcommand $FAKE_KUBECTL_FAIL names, as an
# unreachable server would, or ($FAKE_KUBECTL_GONE) as kubectl does when the
# taint or label to remove is absent.
FAKE_KUBECTL = """#!%s
import json, os, sys
with open(os.environ["FAKE_KUBECTL_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
# The node, in $FAKE_KUBECTL_STATE: cordoned or not, and its annotations.
path = os.environ.get("FAKE_KUBECTL_STATE", "")
st = json.load(open(path)) if path and os.path.exists(path) else {"unsched": False, "ann": {}}
if sys.argv[1] == "get":
    jp = sys.argv[-1]
    print("true" if "unschedulable" in jp and st["unsched"] else
          st["ann"].get("nodegate.io/cordoned", "") if "annotations" in jp else "", end="")
    sys.exit(0)
fail = os.environ.get("FAKE_KUBECTL_FAIL", "")
if fail and fail == sys.argv[1]:
    sys.stderr.write('error: taint "nodegate.io/quarantine:NoSchedule" not found\\n'
                     if os.environ.get("FAKE_KUBECTL_GONE") else "error: the server is gone\\n")
    sys.exit(1)
if sys.argv[1] in ("cordon", "uncordon"):
    st["unsched"] = sys.argv[1] == "cordon"
if sys.argv[1] == "annotate":
    for kv in sys.argv[4:]:
        if kv.endswith("-"):
            st["ann"].pop(kv[:-1], None)
        elif "=" in kv:
            st["ann"][kv.split("=", 1)[0]] = kv.split("=", 1)[1]
if path:
    json.dump(st, open(path, "w"))
print("node/x " + sys.argv[1])
"""


BREAKER_AT, BREAKER_STEP = af.NOW + 2400, 1900
METRICS_AT = BREAKER_AT + 4 * BREAKER_STEP


def build_store(tmp):
    """A store holding every outcome and a tripped circuit breaker."""
    env = af.Env(A.nodegate, tmp, os.path.join(tmp, "store", "nodegate.db"))
    rng = random.Random("export")
    env.ingest_history(af.class_history(rng))
    out = {}
    at = af.NOW
    # node41's records give its scheduler name: the metrics carry both names.
    out["node41"] = env.admit(af.named(af.node_run(rng, "node41", [m[3] for m in af.METRICS]),
                                       "gpu-041"), at=at)["outcome"]
    held = af.node_run(rng, "node40", [m[3] for m in af.METRICS])
    held[2]["samples"] = []
    out["node40"] = env.admit(held, at=at)["outcome"]
    out["node28"] = env.admit(af.node_run(rng, "node28", [m[4] for m in af.METRICS]), at=at)["outcome"]
    # Two quarantined, then the breaker trips: each screened more than
    # admission.cohort_local_minutes after the one before (and node28, whose
    # all-reduce is down too), or the next would share its drop and be
    # rechecked instead of confirmed.
    for i in range(4):
        node = f"node8{i}"
        d = env.admit(af.node_run(rng, node, [980, 1500, 6.0, 250.0]),
                      af.node_run(rng, node, [0, 0, 0, 250.0], only={"fabric"}),
                      at=BREAKER_AT + i * BREAKER_STEP)
        out[node] = d["outcome"]
    check([out[f"node8{i}"] for i in range(4)] ==
          ["quarantined", "quarantined", "admitted-warn", "admitted-warn"], f"breaker: {out}")
    check(out["node41"] == "admitted" and out["node40"] == "held" and out["node28"] == "suspect",
          f"outcomes {out}")
    return env


def promtool_check(path):
    tool = shutil.which("promtool")
    if not tool:
        print("SKIP promtool check: promtool is not installed (Debian package prometheus)")
        return
    with open(path) as f:
        p = subprocess.run([tool, "check", "metrics"], stdin=f, capture_output=True, text=True)
    check(p.returncode == 0, f"promtool check metrics: exit {p.returncode}\n{p.stdout}{p.stderr}")
    print(f"     promtool check metrics {os.path.basename(path)}: exit 0")


def test_metrics_textfile(tmp):
    env = build_store(tmp)
    prom = os.path.join(tmp, "textfile")
    os.mkdir(prom)
    env.run("metrics", "--textfile", prom, expect=0, at=METRICS_AT)
    path = os.path.join(prom, "nodegate.prom")
    text = open(path).read()
    check(os.listdir(prom) == ["nodegate.prom"], f"left behind: {os.listdir(prom)}")
    cls = af.CLASS
    for want in (
        f'nodegate_node_outcome{{node="node41",node_name="gpu-041",class="{cls}",outcome="admitted"}} 1',
        f'nodegate_node_outcome{{node="node41",node_name="gpu-041",class="{cls}",outcome="held"}} 0',
        f'nodegate_node_outcome{{node="node40",class="{cls}",outcome="held"}} 1',
        f'nodegate_node_outcome{{node="node28",class="{cls}",outcome="suspect"}} 1',
        f'nodegate_node_outcome{{node="node80",class="{cls}",outcome="quarantined"}} 1',
        f'nodegate_node_outcome{{node="node82",class="{cls}",outcome="admitted-warn"}} 1',
        'nodegate_nodes{outcome="quarantined"} 2',
        f'nodegate_last_run_timestamp_seconds{{node="node41",node_name="gpu-041"}} {af.NOW}',
        'nodegate_last_run_duration_seconds{node="node41",node_name="gpu-041"} ',
        f'nodegate_recheck_timestamp_seconds{{node="node82"}} {BREAKER_AT + 2 * BREAKER_STEP + 24 * 3600}',
        f'nodegate_quarantine_cases_open{{class="{cls}"}} 2',
        f'nodegate_quarantine_case_opened_timestamp_seconds{{node="node80",class="{cls}",'
        f'domain="fabric",metric="nccl.all_reduce.busbw"',
        f'nodegate_fleet_regression_open{{class="{cls}",software="{af.SOFTWARE}"',
        "nodegate_fleet_regression_events_open 1",
        'nodegate_metric_value{node="node41",node_name="gpu-041",domain="fabric",metric="nccl.all_reduce.busbw",'
        'unit="GB/s"} 300',
        'nodegate_metric_ratio_to_median{node="node28",domain="fabric",'
        'metric="nccl.all_reduce.busbw"} 0.86',
        'nodegate_verdicts{verdict="pass"}',
        'nodegate_verdicts{verdict="no-measurement"} 1',
        "nodegate_audit_chain_ok 1",
        f"nodegate_metrics_generated_timestamp_seconds {METRICS_AT}",
        "# TYPE nodegate_node_outcome gauge",
        "# HELP nodegate_baseline_median ",
    ):
        check(want in text, f"nodegate.prom lacks {want!r}:\n{text}")
    check("_total" not in text, "a gauge named _total")
    # Every family's samples are together, after its HELP and TYPE.
    seen, last = set(), None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        name = line.split("{")[0].split(" ")[0]
        if name != last:
            check(name not in seen, f"family {name} split in two")
            seen.add(name)
            last = name
    promtool_check(path)

    # Built baselines show up; tampering shows as a broken chain.
    env.run("baseline", "build", "--class", cls, expect=0, at=METRICS_AT + 60)
    af.tamper(env, "UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
    env.run("metrics", "--textfile", prom, expect=0, at=METRICS_AT + 90)
    text = open(path).read()
    check("nodegate_audit_chain_ok 0" in text, "tampering not shown")
    check(f'nodegate_baseline_nodes{{class="{cls}",software="{af.SOFTWARE}",'
          f'metric="nccl.all_reduce.busbw",unit="GB/s"}}' in text, f"no baseline:\n{text}")
    promtool_check(path)
    p = env.run("metrics", "--textfile", os.path.join(tmp, "nowhere"), expect=2)
    check("not a directory" in p.stderr, p.stderr)


def test_metrics_label_escaping(tmp):
    env = af.Env(A.nodegate, tmp, os.path.join(tmp, "store", "nodegate.db"))
    rng = random.Random("escape")
    cls = 'odd "class"\\with\nnewline'
    env.ingest_history(af.class_history(rng, cls=cls))
    env.admit(af.node_run(rng, "node41", [m[3] for m in af.METRICS], cls=cls), expect=0)
    text = env.run("metrics", expect=0).stdout
    want = 'class="odd \\"class\\"\\\\with\\nnewline"'
    check(want in text, f"label not escaped ({want}):\n{text}")
    promtool_check(write(os.path.join(tmp, "escaped.prom"), text))


def test_hook_admit(tmp):
    env = af.Env(A.nodegate, tmp, os.path.join(tmp, "store", "nodegate.db"))
    rng = random.Random("hook")
    env.ingest_history(af.class_history(rng))
    rec = write(os.path.join(tmp, "recorder"), RECORDER % sys.executable, 0o755)
    log = os.path.join(tmp, "hook.log")
    run = af.node_run(rng, "node41", [m[3] for m in af.METRICS])
    d = json.loads(env.run("--on-verdict", f"{rec}  0 {log}", "admit", "--from", env.write(run),
                           "--json", expect=0).stdout)
    got = [json.loads(line) for line in open(log)]
    check(len(got) == 1 and got[0]["argv"] == ["0", log], f"hook argv: {got}")
    v = json.loads(got[0]["stdin"])
    check(v["node"] == "node41" and v["outcome"] == "admitted", f"hook stdin: {v}")
    check(not any("on-verdict" in n for n in d["notes"]), f"notes: {d['notes']}")
    # A failing or missing program is a note; the verdict and exit stand.
    for cmd in (f"{rec} 3 {log}", os.path.join(tmp, "no-such-program")):
        d = json.loads(env.run("--on-verdict", cmd, "admit", "--from", env.write(run), "--json",
                               expect=0).stdout)
        check(d["outcome"] == "admitted", f"outcome changed: {d['outcome']}")
        check(any("--on-verdict" in n and "verdict stands" in n for n in d["notes"]),
              f"no note: {d['notes']}")
    # No shell: metacharacters are plain words.
    env.run("--on-verdict", f"{rec} 0 {log} ;touch {tmp}/pwned", "admit", "--from",
            env.write(run), expect=0)
    check(not os.path.exists(os.path.join(tmp, "pwned")), "a shell ran the hook")


def scenario(name):
    with open(os.path.join(A.scenarios, name)) as f:
        return json.load(f)["synthetic"]


def run_gpu(tmp, args, scen, **env):
    sfile = write(os.path.join(tmp, "gpus.json"), json.dumps(scenario(scen)))
    e = clean_env(**{"NODEGATE_NVML_LIBRARY": A.synth, "NODEGATE_SYNTH_GPUS": sfile, **env})
    return subprocess.run([A.nodegate, *args], capture_output=True, text=True, env=e, timeout=60,
                          cwd=tmp)


def test_hook_health(tmp):
    rec = write(os.path.join(tmp, "recorder"), RECORDER % sys.executable, 0o755)
    log = os.path.join(tmp, "hook.log")
    p = run_gpu(tmp, ["--on-verdict", f"{rec} 0 {log}", "health", "--no-kmsg", "--no-store"],
                "06-ecc.json")
    check(p.returncode == 1, f"health exit {p.returncode}: {p.stdout}{p.stderr}")
    v = json.loads(json.loads(open(log).readline())["stdin"])
    check(v["schema"] == "nodegate/gpu-check/1" and v["severity"] == "fatal", f"hook got {v}")
    p = run_gpu(tmp, ["--on-verdict", f"{rec} 5 {log}", "health", "--no-kmsg", "--no-store"],
                "01-healthy.json")
    check(p.returncode == 0, f"a failing hook changed the exit: {p.returncode}")
    check("note: --on-verdict" in p.stderr and "status 5" in p.stderr, p.stderr)


# A hook that will not end: it ignores SIGTERM, starts a child of its own
# that ignores it too (its pid kept in the file its first argument names),
# and sleeps.
STUBBORN = """#!%s
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.read()
pid = os.fork()
if pid == 0:
    time.sleep(600)
    os._exit(0)
with open(sys.argv[1], "w") as f:
    f.write(str(pid))
time.sleep(600)
"""


def test_hook_within_the_deadline(tmp):
    # epilog --deadline 2 with a hook that ignores SIGTERM: done by the
    # deadline (before, the hook had its own 10 s and 2 s more), the hook
    # and its child killed, the verdict unchanged and the failure a note.
    hook = write(os.path.join(tmp, "stubborn"), STUBBORN % sys.executable, 0o755)
    pidfile = os.path.join(tmp, "child.pid")
    t0 = time.monotonic()
    p = run_gpu(tmp, ["--on-verdict", f"{hook} {pidfile}", "epilog", "--deadline", "2",
                      "--no-kmsg", "--no-store"], "01-healthy.json", SLURM_JOB_GPUS="0")
    took = time.monotonic() - t0
    check(p.returncode == 0, f"a hook past the deadline changed the exit: {p.returncode}")
    check(took < 2 + 1.5, f"epilog --deadline 2 with a stubborn hook took {took:.1f} s")
    check("note: --on-verdict" in p.stderr and "killed" in p.stderr, p.stderr)
    with open(pidfile) as f:
        child = int(f.read())
    gone = False
    for _ in range(50):  # init reaps it a moment after the kill
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            gone = True
            break
        with open(f"/proc/{child}/stat") as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                gone = True
                break
        time.sleep(0.05)
    check(gone, f"the hook's child {child} was killed with its process group")
    # A deadline already spent by the check: the hook is not started at all.
    p = run_gpu(tmp, ["--on-verdict", f"{hook} {pidfile}", "health", "--deadline", "0.01",
                      "--no-kmsg", "--no-store"], "01-healthy.json")
    check("--on-verdict" in p.stderr and ("not run" in p.stderr or "killed" in p.stderr),
          f"a spent deadline: {p.stderr}")


def test_kube(tmp):
    fake = write(os.path.join(tmp, "kubectl"), FAKE_KUBECTL % sys.executable, 0o755)
    log = os.path.join(tmp, "kubectl.log")

    def kube(*args, expect, **env):
        if os.path.exists(log):
            os.unlink(log)
        e = clean_env(NODEGATE_KUBECTL=fake, FAKE_KUBECTL_LOG=log, **env)
        p = subprocess.run([A.nodegate, "kube", *args], capture_output=True, text=True, env=e,
                           timeout=60)
        check(p.returncode == expect, f"kube {args}: exit {p.returncode}\n{p.stdout}{p.stderr}")
        calls = [json.loads(x) for x in open(log)] if os.path.exists(log) else []
        return p, calls

    state = os.path.join(tmp, "kube-node.json")
    GET_UNSCHED = ["get", "node", "gpu-node-7", "-o", "jsonpath={.spec.unschedulable}"]
    GET_OURS = ["get", "node", "gpu-node-7", "-o",
                "jsonpath={.metadata.annotations.nodegate\\.io/cordoned}"]
    p, calls = kube("cordon", "gpu-node-7", "--reason", "nccl busbw 86% of median", expect=0,
                    FAKE_KUBECTL_STATE=state)
    check(calls == [
        GET_UNSCHED,
        ["cordon", "gpu-node-7"],
        ["annotate", "node", "gpu-node-7", "nodegate.io/cordoned=true", "--overwrite"],
        ["taint", "nodes", "gpu-node-7", "nodegate.io/quarantine=nccl-busbw-86-of-median:NoSchedule",
         "--overwrite"],
        ["label", "nodes", "gpu-node-7", "nodegate.io/outcome=quarantined", "--overwrite"],
    ], f"cordon ran {calls}")
    check("reason as a taint value: nccl-busbw-86-of-median" in p.stdout, p.stdout)
    _, calls = kube("release", "gpu-node-7", expect=0, FAKE_KUBECTL_STATE=state)
    check(calls == [["taint", "nodes", "gpu-node-7", "nodegate.io/quarantine:NoSchedule-"],
                    ["taint", "nodes", "gpu-node-7", "nodegate.io/probation:NoSchedule-"],
                    ["label", "nodes", "gpu-node-7", "nodegate.io/outcome-"],
                    GET_OURS,
                    ["uncordon", "gpu-node-7"],
                    ["annotate", "node", "gpu-node-7", "nodegate.io/cordoned-"]],
          f"release ran {calls}")
    check(json.load(open(state)) == {"unsched": False, "ann": {}}, "released")
    # Someone else cordoned it: nodegate's cordon leaves it, its release too.
    json.dump({"unsched": True, "ann": {}}, open(state, "w"))
    p, calls = kube("cordon", "gpu-node-7", "--reason", "x", expect=0, FAKE_KUBECTL_STATE=state)
    check(["cordon", "gpu-node-7"] not in calls and not any(c[0] == "annotate" for c in calls)
          and "someone else" in p.stdout, f"cordon over another's ran {calls}: {p.stdout}")
    p, calls = kube("release", "gpu-node-7", expect=0, FAKE_KUBECTL_STATE=state)
    check(["uncordon", "gpu-node-7"] not in calls and "left alone" in p.stdout,
          f"release of another's cordon ran {calls}: {p.stdout}")
    check(json.load(open(state))["unsched"] is True, "another party's cordon undone")
    p, calls = kube("release", "gpu-node-7", expect=0, FAKE_KUBECTL_FAIL="taint",
                    FAKE_KUBECTL_GONE="1")
    check("already absent" in p.stdout and len(calls) == 4, p.stdout)
    # Probation: the canary taint goes on before the quarantine's comes off.
    json.dump({"unsched": False, "ann": {}}, open(state, "w"))
    kube("cordon", "gpu-node-7", "--reason", "x", expect=0, FAKE_KUBECTL_STATE=state)
    p, calls = kube("probation", "gpu-node-7", "--case", "12", expect=0, FAKE_KUBECTL_STATE=state)
    check(calls == [
        ["taint", "nodes", "gpu-node-7", "nodegate.io/probation=case-12:NoSchedule", "--overwrite"],
        ["taint", "nodes", "gpu-node-7", "nodegate.io/quarantine:NoSchedule-"],
        ["label", "nodes", "gpu-node-7", "nodegate.io/outcome=probation", "--overwrite"],
        GET_OURS,
        ["uncordon", "gpu-node-7"],
        ["annotate", "node", "gpu-node-7", "nodegate.io/cordoned-"],
    ], f"probation ran {calls}")
    for bad in (["probation", "gpu-node-7"], ["probation", "gpu-node-7", "--case", "x"],
                ["cordon", "gpu-node-7", "--reason", "r", "--case", "3"]):
        _, calls = kube(*bad, expect=2)
        check(calls == [], f"{bad} ran {calls}")
    p, calls = kube("cordon", "gpu-node-7", "--reason", "x", expect=1, FAKE_KUBECTL_FAIL="cordon")
    check(len(calls) == 4 and "server is gone" in p.stdout, f"{calls} {p.stdout}")
    p, calls = kube("cordon", "gpu-node-7", "--reason", "x" * 100, "--dry-run", expect=0)
    check(calls == [] and p.stdout.count("would run:") == 4, f"dry run ran {calls}")
    check(f"nodegate.io/quarantine={'x' * 63}:NoSchedule" in p.stdout, p.stdout)
    for bad in (["cordon", "--all", "--reason", "r"], ["cordon", "Node_A", "--reason", "r"],
                ["cordon", "n1", "--reason", "%%%"], ["cordon", "n1"], ["evict", "n1"],
                ["release", "n1", "--reason", "r"], ["cordon", "-n1", "--reason", "r"]):
        _, calls = kube(*bad, expect=2)
        check(calls == [], f"{bad} ran {calls}")
    e = clean_env(NODEGATE_KUBECTL=os.path.join(tmp, "absent"))
    p = subprocess.run([A.nodegate, "kube", "cordon", "n1", "--reason", "r"], capture_output=True,
                       text=True, env=e, timeout=60)
    check(p.returncode == 1 and "could not be started" in p.stdout, p.stdout)


def test_npd(tmp):
    cases = [("01-healthy.json", 0, "GPUs healthy: 8 checked"),
             ("03-thermal.json", 0, "GPUs healthy"),
             ("04-pcie-degraded.json", 1, "degraded"),
             ("06-ecc.json", 1, "fatal"),
             ("21-no-driver.json", 2, "unknown"),
             ("14-zero-gpus.json", 2, "unknown")]
    for scen, status, words in cases:
        p = run_gpu(tmp, ["npd", "--no-kmsg"], scen)
        lines = p.stdout.splitlines()
        check(p.returncode == status, f"npd {scen}: exit {p.returncode}, wanted {status}: {p.stdout}")
        check(len(lines) == 1 and len(lines[0]) < 80 and words in lines[0],
              f"npd {scen}: {p.stdout!r}")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--deadline", "2"], "13-nvml-hang.json")
    check(p.returncode == 2 and len(p.stdout.splitlines()) == 1, f"hang: {p.returncode} {p.stdout}")
    p = run_gpu(tmp, ["npd", "--no-kmsg"], "01-healthy.json", NODEGATE_NVML_LIBRARY="/nonexistent.so")
    check(p.returncode == 2, f"no NVML: {p.returncode} {p.stdout}")
    # npd keeps nothing and lands nothing, whatever the global options say.
    store = os.path.join(tmp, "npd-store.db")
    log = os.path.join(tmp, "npd-hook.log")
    rec = write(os.path.join(tmp, "recorder"), RECORDER % sys.executable, 0o755)
    p = run_gpu(tmp, ["--on-verdict", f"{rec} 0 {log}", "npd", "--no-kmsg"], "06-ecc.json",
                NODEGATE_STORE=store)
    check(p.returncode == 1 and not os.path.exists(log) and not os.path.exists(store),
          f"npd landed something: {p.stdout}{p.stderr}")
    p = run_gpu(tmp, ["npd", "--store", store], "01-healthy.json")
    check(p.returncode == 2 and len(p.stdout.splitlines()) == 1, p.stdout)


def test_npd_evidence_and_memory(tmp):
    xid79 = write(os.path.join(tmp, "kmsg"),
                  "4,9,7200000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
    # A fatal Xid is a problem with NVML hung: exit 1, not unknown.
    p = run_gpu(tmp, ["npd", "--kmsg", xid79, "--deadline", "2", "--no-state"], "13-nvml-hang.json")
    check(p.returncode == 1 and "79" in p.stdout, f"hang + Xid 79: {p.returncode} {p.stdout}")
    # A problem found stays a problem through a monitoring failure, and only
    # a measured check clears it.
    state = os.path.join(tmp, "npd-state", "problem")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--state", state], "06-ecc.json")
    check(p.returncode == 1 and os.path.exists(state), f"fatal: {p.returncode} {p.stdout}")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--deadline", "2", "--state", state], "13-nvml-hang.json")
    lines = p.stdout.splitlines()
    check(p.returncode == 1 and lines[0].startswith("last known: ") and len(lines[0]) < 80,
          f"hang after a problem: {p.returncode} {p.stdout}")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--state", state], "21-no-driver.json")
    check(p.returncode == 1, f"no driver after a problem: {p.returncode} {p.stdout}")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--state", state], "01-healthy.json")
    check(p.returncode == 0 and not os.path.exists(state), f"healthy clears it: {p.returncode} {p.stdout}")
    p = run_gpu(tmp, ["npd", "--no-kmsg", "--deadline", "2", "--state", state], "13-nvml-hang.json")
    check(p.returncode == 2, f"hang with nothing known: {p.returncode} {p.stdout}")


def test_gpu_metrics(tmp):
    store = os.path.join(tmp, "gpu-metrics.db")
    kmsg = write(os.path.join(tmp, "kmsg-gpu"),
                 "4,9,7200000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n")
    p = run_gpu(tmp, ["health", "--store", store, "--kmsg", kmsg], "01-healthy.json")
    check(p.returncode == 1, f"health: {p.returncode} {p.stdout}{p.stderr}")
    # an epilog that measured nothing is kept too: a monitoring failure, never healthy
    p = run_gpu(tmp, ["epilog", "--store", store, "--no-kmsg"], "01-healthy.json",
                NODEGATE_NVML_LIBRARY="/nonexistent.so", SLURM_JOB_GPUS="0")
    check(p.returncode == 0, f"epilog n/a: {p.returncode} {p.stdout}{p.stderr}")
    # Hostname is the scheduler name (the short host name outside Slurm) and
    # node the stable id the store keys it by (docs/naming.md); --node takes
    # either.
    host = socket.gethostname().split(".")[0]
    p = subprocess.run([A.nodegate, "metrics", "--store", store, "--scope", "node", "--node", host],
                       capture_output=True, text=True, timeout=60)
    text = p.stdout
    check(p.returncode == 0, f"metrics: {p.returncode} {p.stderr}")
    h = re.escape(host)
    for want in [r'nodegate_build_info\{version="',
                 rf'nodegate_gpu_check_severity\{{Hostname="{h}",node="[^"]+",gpu="0",'
                 r'UUID="GPU-00000000-0000-4000-8000-000000000000",pci_bus_id="00000000:18:00.0",'
                 r'mode="health",severity="fatal"\} 1',
                 rf'nodegate_gpu_check_signal\{{Hostname="{h}",node="[^"]+",gpu="0",'
                 r'UUID="GPU-00000000-0000-4000-8000-000000000000",pci_bus_id="00000000:18:00.0",'
                 r'signal="xid.79",severity="fatal"\} 1',
                 rf'nodegate_gpu_check_outcome\{{Hostname="{h}",node="[^"]+",mode="epilog",outcome="n/a"\}} 1',
                 rf'nodegate_gpu_check_outcome\{{Hostname="{h}",node="[^"]+",mode="health",outcome="fatal"\}} 1']:
        check(re.search(want, text), f"missing {want!r} in:\n{text}")
    ids = set(re.findall(r'nodegate_gpu_check_outcome\{[^}]*node="([^"]+)"', text))
    check(len(ids) == 1 and host not in ids, f"node is the stable id, not the host name: {ids}")
    check("nodegate_node_outcome" not in text and "nodegate_gpu_check_nodes" not in text,
          "node scope carries no fleet series")
    p = subprocess.run([A.nodegate, "metrics", "--store", store, "--scope", "fleet"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and 'nodegate_gpu_check_nodes{mode="epilog",outcome="n/a"} 1' in p.stdout
          and "nodegate_gpu_check_severity" not in p.stdout, f"fleet scope: {p.stdout}")
    p = subprocess.run([A.nodegate, "metrics", "--store", store, "--scope", "everything"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2, "a bad scope is a usage error")
    # The report keeps every run too: the n/a epilog is there, not a healthy node.
    p = subprocess.run([A.nodegate, "--store", store, "report", "--json", "--no-sacct"],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"report: {p.returncode} {p.stderr}")
    gc = json.loads(p.stdout)["gpu_checks"]
    got = {(x["mode"], x["outcome"]) for x in gc["last"]}
    check(gc["nodes"] == 1 and ("epilog", "n/a") in got and ("health", "fatal") in got, f"gpu_checks {gc}")


TESTS = [test_metrics_textfile, test_metrics_label_escaping, test_hook_admit, test_hook_health,
         test_hook_within_the_deadline,
         test_kube, test_npd, test_npd_evidence_and_memory, test_gpu_metrics]


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--scenarios", required=True)
    ap.add_argument("only", nargs="*")
    A = ap.parse_args()
    A.nodegate, A.synth = os.path.abspath(A.nodegate), os.path.abspath(A.synth)
    failed = 0
    for t in TESTS:
        if A.only and t.__name__ not in A.only:
            continue
        with tempfile.TemporaryDirectory(prefix="nodegate-export-") as tmp:
            try:
                t(tmp)
                print(f"ok   {t.__name__}")
            except (Failure, af.Failure, subprocess.SubprocessError, OSError, ValueError) as e:
                failed += 1
                print(f"FAIL {t.__name__}: {e}")
    print(f"{'FAILED' if failed else 'passed'}: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

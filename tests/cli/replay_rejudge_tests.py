#!/usr/bin/env python3
"""What nodegate policy replay judges again (docs/policy-changes.md).

GPU checks: epilog and
health runs against the synthetic NVML library keep the readings their rules
judged (store schema 14); a replay judges them again under the policy that
judged them and under a proposed one, on the store backend
$NODEGATE_TEST_BACKEND names (sqlite, or postgres through the test server).

A tighter correctable-ECC or PCIe-replay threshold must turn exactly the runs
over it from ok to degraded, and name them; a looser one must turn a drained
run back to ok; the policy in force against itself must change nothing; runs
stored before readings were kept (a store migrated from schema 12) must be
reported as having no readings, never as unchanged.

The gate: admission runs of real records against a class baseline. A
proposed policy that differs in what the gate reads (its diagnostics, its
warn and block lines, the cohort's size) has each verdict line judged again
from the record, the baseline and the cohort as they stood, the control
giving the recorded verdict; a line whose record is gone keeps its recorded
verdict and says why.
Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

T0 = 1790000000  # the first check; each next one an hour later
AFTER = T0 + 86400  # when the replays run: every check is in the last 30 days
TIGHT_ECC = '{"health": {"ecc_corrected_volatile": 400}}'
LOOSE_ECC = '{"health": {"ecc_corrected_volatile": 5000}}'
TIGHT_REPLAYS = '{"health": {"replays_absolute": 1000}}'


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(cmd, env=None, ok=(0,), timeout=120):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode not in ok:
        raise Failed(f"{' '.join(cmd[:6])}... exited {p.returncode}\nstdout: {p.stdout[-2000:]}\n"
                     f"stderr: {p.stderr[-2000:]}")
    return p


def pg_uri():
    uri_file = os.environ.get("NODEGATE_TEST_PG_URI_FILE")
    if not uri_file or not os.path.exists(uri_file):
        print(f"SKIP: no PostgreSQL test server ({uri_file} missing)")
        sys.exit(77)
    return open(uri_file).read().strip()


def fresh_store(tmp, name):
    if os.environ.get("NODEGATE_TEST_BACKEND", "sqlite") != "postgres":
        return os.path.join(tmp, name + ".db")
    uri = pg_uri()
    db = ("ng_rg_" + name)[:60].lower()
    for statement in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"):
        run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", uri, "-c", statement])
    base, _, query = uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + db + ("?" + query if query else "")


def sql(store, statements):
    """Statements against the store itself, as an older nodegate left it."""
    if store.startswith("postgres"):
        for s in statements:
            run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", store, "-c", s])
    else:
        import sqlite3
        db = sqlite3.connect(store)
        for s in statements:
            db.execute(s)
        db.commit()
        db.close()


def query(store, statement):
    if store.startswith("postgres"):
        out = run(["psql", "-q", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", store, "-c",
                   statement]).stdout
        return [tuple(line.split("|")) for line in out.splitlines() if line]
    import sqlite3
    db = sqlite3.connect(store)
    rows = [tuple(str(v) for v in r) for r in db.execute(statement)]
    db.close()
    return rows


def copy_store(tmp, src, name):
    dst = fresh_store(tmp, name)
    if dst.startswith("postgres"):
        dump = os.path.join(tmp, name + ".sql")
        run(["pg_dump", src, "-f", dump])
        run(["psql", "-q", "-X", dst, "-f", dump])
    else:
        shutil.copy(src, dst)
    return dst


def gpus(**first):
    """Eight synthetic GPUs; the keyword arguments are GPU 0's (ecc=..., pcie=...)."""
    return {"schema": "nodegate/synthetic-gpus/1",
            "gpus": [dict(first) if i == 0 else {} for i in range(8)]}


class T:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        kmsg = self.file("kmsg.log", "")
        open(kmsg, "w").close()
        self.env = dict(os.environ, NODEGATE_NVML_LIBRARY=a.synth, NODEGATE_KMSG=kmsg,
                        NODEGATE_STATE_DIR=tmp, SLURMD_NODENAME="gpu-node-7")
        for k in ("NODEGATE_STORE", "NODEGATE_POLICY", "SLURM_JOB_GPUS"):
            self.env.pop(k, None)
        self.store = fresh_store(tmp, "checks")
        self.at = T0
        # epilog: GPU 0 at 500, 100, 2000 correctable errors (enforcing bar
        # 1000: ok, ok, degraded); health: GPU 0 at 5000 PCIe replays (bar
        # 1,000,000: ok).
        self.epilogs = [self.check("epilog", gpus(ecc={"volatile": {"corrected": n}}), "0,1")
                        for n in (500, 100, 2000)]
        self.health = self.check("health", gpus(pcie={"replays": 5000}))

    def file(self, name, text):
        p = os.path.join(self.tmp, name)
        if text:
            with open(p, "w") as f:
                f.write(text)
        return p

    def check(self, verb, snapshot, job_gpus=None):
        f = self.file(f"gpus-{self.at}.json", json.dumps(snapshot))
        env = dict(self.env, NODEGATE_NOW=str(self.at), NODEGATE_SYNTH_GPUS=f)
        if job_gpus:
            env["SLURM_JOB_GPUS"] = job_gpus
        p = run([self.a.nodegate, "--store", self.store, verb, "--json"], env=env, ok=(0, 1))
        self.at += 3600
        return json.loads(p.stdout)

    def replay(self, policy_text, *extra, store=None, json_out=True):
        pol = self.file(f"proposed-{abs(hash(policy_text))}.json", policy_text)
        env = dict(self.env, NODEGATE_NOW=str(AFTER))
        p = run([self.a.nodegate, "--store", store or self.store, "policy", "replay", "--policy",
                 pol, *(["--json"] if json_out else []), *extra], env=env)
        return json.loads(p.stdout) if json_out else p.stdout


def test_checks_keep_their_readings(t):
    sev = [e["severity"] for e in t.epilogs] + [t.health["severity"]]
    check(sev == ["ok", "ok", "degraded", "ok"], f"the checks as the enforcing policy judged: {sev}")
    rows = query(t.store, "SELECT r.mode, r.outcome, g.policy, g.body FROM gpu_check_runs r"
                          " JOIN gpu_check_readings g ON g.check_id = r.id ORDER BY r.id")
    check(len(rows) == 4, f"each run keeps its readings: {len(rows)}")
    for mode, outcome, policy, body in rows:
        doc = json.loads(body)
        check(doc["schema"] == "nodegate/gpu-readings/1" and policy.startswith("pol-"),
              f"readings with the policy that judged them: {policy}")
        check(len(body) < 16384, f"{mode}: compact: {len(body)} bytes")
        g0 = doc["snapshot"]["gpus"][0]
        check("name" not in g0 and "temperature_c" not in g0 and "ecc_volatile_corrected" in g0,
              f"the fields the rules read, no others: {sorted(g0)}")
    kept = query(t.store, "SELECT count(*) FROM policies WHERE digest = "
                          "(SELECT min(policy) FROM gpu_check_readings)")
    check(kept == [("1",)], f"the judging policy's text is kept: {kept}")


def test_tighter_ecc_threshold_changes_the_runs_over_it(t):
    r = t.replay(TIGHT_ECC)
    g = r["gpu_checks"]
    check(g["runs"] == 4 and g["rejudged"] == 4 and g["replayed"], f"all judged again: {g['runs']}")
    check(g["current_differs_from_recorded"] == 0, "the control gives what was recorded")
    ep = g["by_mode"]["epilog"]
    check(ep["transitions"] == {"ok->degraded": 1} and ep["changed"] == 1,
          f"the run at 500 errors, over 400, degrades: {ep['transitions']}")
    check(ep["current"] == {"ok": 2, "degraded": 1} and ep["proposed"] == {"degraded": 2, "ok": 1},
          f"per outcome: {ep['current']} -> {ep['proposed']}")
    check(ep["nodes_changed"] == ["gpu-node-7"], f"the node is named: {ep['nodes_changed']}")
    check(g["by_mode"]["health"]["changed"] == 0, "the health run has no ECC errors")
    c = g["changed"]
    check(len(c) == 1 and c[0]["at"] == T0 and c[0]["recorded"] == "ok" and c[0]["current"] == "ok"
          and c[0]["proposed"] == "degraded" and c[0]["drain_proposed"], f"the change: {c}")
    gpu = c[0]["gpus"]
    check(len(gpu) == 1 and gpu[0]["index"] == 0 and gpu[0]["signal"] == "ecc.volatile_corrected"
          and "above 400" in gpu[0]["reason"], f"the GPU and why: {gpu}")
    d = r["summary"]["drained"]
    check(d == {"current": 1, "proposed": 2, "recorded": 1, "not_rejudged": 0},
          f"drains under each: {d}")
    check(g["health_values_differ"] == ["health.ecc_corrected_volatile"], g["health_values_differ"])
    text = t.replay(TIGHT_ECC, json_out=False)
    check("ok->degraded 1" in text and "gpu-node-7" in text and "ecc.volatile_corrected" in text,
          f"the table names it: {text[-600:]}")
    path, html = t.file("replay.json", json.dumps(r)), os.path.join(t.tmp, "report.html")
    run([t.a.nodegate, "--store", t.store, "report", "--no-sacct", "--replay", path, "--html", html],
        env=dict(t.env, NODEGATE_NOW=str(AFTER)))
    table = open(html).read().split('id="replay-gpu-changed"')[1].split("</table>")[0]
    check(table.count("<tr>") == 2 and "ecc.volatile_corrected" in table,
          f"the report's section lists it: {table}")


def test_tighter_replay_threshold_changes_the_health_run(t):
    g = t.replay(TIGHT_REPLAYS)["gpu_checks"]
    h = g["by_mode"]["health"]
    check(h["transitions"] == {"ok->degraded": 1} and g["changed_count"] == 1,
          f"5000 replays over 1000: {h['transitions']}, {g['changed_count']}")
    check(g["changed"][0]["gpus"][0]["signal"] == "pcie.replays", g["changed"][0])


def test_looser_threshold_undrains(t):
    g = t.replay(LOOSE_ECC)["gpu_checks"]
    ep = g["by_mode"]["epilog"]
    check(ep["transitions"] == {"degraded->ok": 1}, f"2000 under 5000: {ep['transitions']}")
    check(not g["changed"][0]["drain_proposed"] and g["changed"][0]["drain_current"], g["changed"])


def test_policy_in_force_changes_nothing(t):
    r = t.replay("{}")
    g = r["gpu_checks"]
    check(g["rejudged"] == 4 and g["changed_count"] == 0 and g["changed"] == [],
          f"the enforcing policy against itself: {g['changed_count']}")
    for mode, m in g["by_mode"].items():
        check(m["current"] == m["proposed"] == m["recorded"] and m["transitions"] == {},
              f"{mode}: {m}")
    d = r["summary"]["drained"]
    check(d["current"] == d["proposed"] == 1, f"{d}")
    again = t.replay(TIGHT_ECC)
    check(again == t.replay(TIGHT_ECC), "the replay is deterministic")


def test_runs_without_readings_say_so(t):
    # A store from before schema 14: its runs kept their findings only.
    old = copy_store(t.tmp, t.store, "old")
    sql(old, ["DROP TABLE gpu_check_readings",
              "DROP INDEX baselines_by_family", "ALTER TABLE baselines DROP COLUMN family",
              "UPDATE meta SET value = '13' WHERE key = 'schema_version'"])
    r = t.replay(TIGHT_ECC, store=old)
    g = r["gpu_checks"]
    check(query(old, "SELECT value FROM meta WHERE key = 'schema_version'") == [("16",)],
          "the store is migrated")
    check(g["runs"] == 4 and g["rejudged"] == 0 and g["no_readings"]["runs"] == 4
          and not g["replayed"], f"no run judged again: {g['no_readings']}")
    check("no readings kept" in g["no_readings"]["why"], g["no_readings"]["why"])
    check(g["changed_count"] == 0 and g["by_mode"]["epilog"]["no_readings"] == 3,
          "and none counted as changed")
    d = r["summary"]["drained"]
    check(d["not_rejudged"] == 4 and d["current"] == 0 and d["proposed"] == 0 and d["recorded"] == 1,
          f"not counted unchanged: {d}")
    text = t.replay(TIGHT_ECC, store=old, json_out=False)
    check("no readings kept" in text, text[-500:])
    # A new check on the migrated store keeps readings again; the old ones stay without.
    t.store, keep = old, t.store
    try:
        t.check("epilog", gpus(ecc={"volatile": {"corrected": 500}}), "0")
        g = t.replay(TIGHT_ECC, store=old)["gpu_checks"]
        check(g["runs"] == 5 and g["rejudged"] == 1 and g["no_readings"]["runs"] == 4
              and g["changed_count"] == 1, f"old and new side by side: {g['rejudged']}")
    finally:
        t.store = keep


def test_readings_whose_policy_is_gone_are_not_replayed(t):
    gone = copy_store(t.tmp, t.store, "gone")
    sql(gone, ["DELETE FROM policies"])
    g = t.replay(TIGHT_ECC, store=gone)["gpu_checks"]
    un = g["not_replayed"]
    check(un["runs"] == 4 and g["rejudged"] == 0 and un["by_policy"][0]["runs"] == 4
          and "not its text" in un["by_policy"][0]["why"], f"named, with why: {un}")


# ---- the gate ----------------------------------------------------------------------

CLASS = "8xH100/1rail"


def busbw(node, median, rng, n=9):
    """One fabric run: n samples whose median is `median`, spread about 1%."""
    half = [median * (1 + 0.01 * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    low = [median * (1 - 0.01 * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    return [{"schema": "nodegate/record/1", "node": node, "class": CLASS, "software": "sw-1",
             "domain": "fabric", "metric": "nccl.all_reduce.busbw", "unit": "GB/s",
             "samples": sorted(low) + [median] + sorted(half), "wrong": 0,
             "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}]


class Admissions:
    """Twenty peers' history a day back; then node27 at the median, node28 at
    0.93 of it (the gate warns), node29 at 0.80 (it blocks). Then the peers
    run at 0.85 for a while (a fleet event), node30 at 0.85 in it (the
    cohort explains it), and the peers recover: the cohort node30 was judged
    against is no longer the class's newest runs."""

    def __init__(self, t):
        import random
        rng = random.Random(21)
        self.t = t
        self.store = fresh_store(t.tmp, "admit")
        self.at = T0
        hist = []
        for i in range(20):
            hist += busbw(f"peer{i:02d}", 300.0 * (1 + 0.0005 * (i - 10)), rng)
        self.ingest(hist, T0 - 86400, accepted=True)
        self.outcomes = {}
        for node, median in (("node27", 300.0), ("node28", 279.0), ("node29", 240.0)):
            self.admit(node, busbw(node, median, rng))
        self.ingest(sum((busbw(f"peer{i:02d}", 255.0, rng) for i in range(20)), []), self.at)
        self.at += 60
        self.admit("node30", busbw("node30", 255.0, rng))
        self.ingest(sum((busbw(f"peer{i:02d}", 300.0, rng) for i in range(20)), []), self.at)

    def ingest(self, records, at, accepted=False):
        f = self.t.file(f"ingest-{at}.json", json.dumps(records))
        run([self.t.a.nodegate, "--store", self.store, "ingest", *(["--accepted"] if accepted
                                                                    else []), f],
            env=dict(self.t.env, NODEGATE_NOW=str(at)))

    def admit(self, node, records):
        f = self.t.file(f"{node}.json", json.dumps(records))
        p = run([self.t.a.nodegate, "--store", self.store, "admit", "--json", "--from", f],
                env=dict(self.t.env, NODEGATE_NOW=str(self.at)), ok=(0, 1))
        self.outcomes[node] = json.loads(p.stdout)["outcome"]
        self.at += 600

    def replay(self, policy_text, store=None):
        return self.t.replay(policy_text, store=store or self.store)


def admissions(t):
    if not hasattr(t, "adm"):
        t.adm = Admissions(t)
    return t.adm


def verdicts(store):
    return dict(query(store, "SELECT node, gate_verdict FROM verdicts"))


def test_gate_outcomes_as_recorded(t):
    a = admissions(t)
    check(a.outcomes == {"node27": "admitted", "node28": "admitted-warn", "node29": "suspect",
                         "node30": "admitted-warn"}, f"as the enforcing policy decided: {a.outcomes}")
    check(verdicts(a.store) == {"node27": "pass", "node28": "warn", "node29": "block",
                                "node30": "fleet-regression"},
          f"the gate's verdicts: {verdicts(a.store)}")


def test_gate_not_judged_again_when_nothing_it_reads_differs(t):
    a = admissions(t)
    r = a.replay("{}")
    g = r["gate"]
    check(not g["re_evaluated"] and g["lines"] == 0 and r["changed_count"] == 0, f"{g}")
    r = a.replay('{"admission": {"flag_fraction": 0.85}}')
    check(not r["gate"]["re_evaluated"], "the flag fraction is not the gate's")


def test_required_diagnostic_judged_again(t):
    a = admissions(t)
    r = a.replay('{"gate": {"required_diag": ["pcie", "memory", "nccl_tests", "targeted_power"]}}')
    g = r["gate"]
    check(g["re_evaluated"] and g["values_differ"] == ["gate.required_diag"]
          and g["lines"] == 4 and g["rerun"] == 4 and g["not_rerun"]["lines"] == 0,
          f"every line judged again, the control as recorded: {g}")
    check(g["verdicts_changed"] == 4, f"none of the runs has targeted_power: {g}")
    moved = {c["node"]: (c["current"], c["proposed"], c["decisive"]["gate"],
                         c["decisive"]["gate_proposed"]) for c in r["changed"]}
    check(moved == {"node27": ("admitted", "held", "pass", "diag-incomplete"),
                    "node28": ("admitted-warn", "held", "warn", "diag-incomplete"),
                    "node29": ("suspect", "held", "block", "diag-incomplete"),
                    "node30": ("admitted-warn", "held", "fleet-regression", "diag-incomplete")},
          f"each run held for the missing diagnostic: {moved}")
    check("gate.required_diag" not in r["not_re_evaluated"], r["not_re_evaluated"])


def test_warn_and_block_lines_judged_again(t):
    a = admissions(t)
    r = a.replay('{"gate": {"warn": 0.10, "block": 0.25}}')
    g = r["gate"]
    check(g["rerun"] == 4 and g["verdicts_changed"] == 2, f"node28 passes, node29 warns: {g}")
    moved = {c["node"]: (c["current"], c["proposed"]) for c in r["changed"]}
    check(moved == {"node28": ("admitted-warn", "admitted")}, f"{moved}")
    same = a.replay('{"gate": {"fast": 2.5}}')
    check(same["gate"]["rerun"] == 4 and same["gate"]["verdicts_changed"] == 0
          and same["changed_count"] == 0, "a gate value no run comes near changes nothing")


def test_cohort_as_it_stood(t):
    # node30's drop was the fleet's: its cohort was the peers' slow runs,
    # which have been replaced by their recovered runs since. The control
    # reproduces the fleet regression only from the cohort as it stood; a
    # proposed cohort larger than the class leaves the drop to node30.
    a = admissions(t)
    r = a.replay('{"gate": {"cohort_min": 50}}')
    g = r["gate"]
    check(g["rerun"] == 4 and g["not_rerun"]["lines"] == 0 and g["cohorts_read"] > 0,
          f"the control gives the recorded fleet regression: {g}")
    moved = {c["node"]: (c["decisive"]["gate"], c["decisive"]["gate_proposed"])
             for c in r["changed"]}
    check(moved == {"node30": ("fleet-regression", "block")}, f"{moved}")


def test_gate_lines_whose_record_is_gone_keep_their_verdict(t):
    a = admissions(t)
    gone = copy_store(t.tmp, a.store, "admit_gone")
    sql(gone, ["DELETE FROM records WHERE node = 'node27' OR node = 'node28'"])
    r = a.replay('{"gate": {"required_diag": ["pcie", "memory", "nccl_tests", "targeted_power"]}}',
                 store=gone)
    g = r["gate"]
    why = {e["reason"]: e["lines"] for e in g["not_rerun"]["by_reason"]}
    check(g["rerun"] == 2 and why == {"record_gone": 2} and g["not_rerun"]["lines"] == 2,
          f"two lines named, with why: {g['not_rerun']}")
    check({c["node"] for c in r["changed"]} == {"node29", "node30"},
          "the lines without their record keep their recorded verdict under both policies")
    text = t.replay('{"gate": {"required_diag": ["pcie", "memory", "nccl_tests", '
                    '"targeted_power"]}}', store=gone, json_out=False)
    check("keep their recorded verdict" in text and "no longer in the store" in text, text[-800:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ng-replay-gpu-")
    passed = failed = 0
    try:
        t = T(a, tmp)
        for name, fn in list(globals().items()):
            if not name.startswith("test_"):
                continue
            try:
                fn(t)
                print(f"ok   {name}")
                passed += 1
            except (Failed, AssertionError, KeyError, ValueError, IndexError) as ex:
                print(f"FAIL {name}: {ex}")
                failed += 1
    finally:
        shutil.rmtree(tmp, True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""nodegate policy replay, shadow, promote and history (docs/policy-changes.md)
on a month of fleet from bench/fleetgen, on the store backend
$NODEGATE_TEST_BACKEND names (sqlite, or postgres through the test server).

fleetgen decides its month under two policies (admission.flag_fraction 0.90,
then 0.88 from day 20), keeping each one's text: a replay of the second over
its own days must change nothing, a stricter fraction must add quarantines
and name them, a looser one remove them. A store that kept only a policy's
digest must say which runs it could not replay. A health rule in shadow is
tried on real epilog runs against the synthetic NVML library.
Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

NOW = 1795996800  # 2026-11-30T00:00:00Z, the fleet's last day
NODES, DAYS = 300, 30
STRICT = '{"admission": {"flag_fraction": 0.95, "breaker_count": 5}}'
LOOSE = '{"admission": {"flag_fraction": 0.80, "breaker_count": 5}}'


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(cmd, env=None, ok=(0,), timeout=240):
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
    db = ("ng_pc_" + name)[:60].lower()
    for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"):
        run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", uri, "-c", sql])
    base, _, query = uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + db + ("?" + query if query else "")


def sql(store, statement):
    """A statement against the store itself, as an older nodegate left it."""
    if store.startswith("postgres"):
        run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", store, "-c", statement])
    else:
        import sqlite3
        db = sqlite3.connect(store)
        db.execute(statement)
        db.commit()
        db.close()


class T:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.env = dict(os.environ, NODEGATE_NOW=str(NOW))
        for k in ("NODEGATE_STORE", "NODEGATE_POLICY"):
            self.env.pop(k, None)
        self.store = fresh_store(tmp, "fleet")
        self.policy = self.file("policy.json", "")
        run([a.fleetgen, "--store", self.store, "--nodes", str(NODES), "--classes", "3", "--days",
             str(DAYS), "--seed", "5", "--now", str(NOW), "--policy-out", self.policy], timeout=280)
        self.strict = self.file("strict.json", STRICT)
        self.loose = self.file("loose.json", LOOSE)

    def file(self, name, text):
        p = os.path.join(self.tmp, name)
        if text:
            with open(p, "w") as f:
                f.write(text)
        return p

    def ng(self, *args, store=None, ok=(0,), env=None):
        return run([self.a.nodegate, "--store", store or self.store, "--policy", self.policy,
                    *args], env=env or self.env, ok=ok)

    def replay(self, policy, *extra, store=None):
        p = self.ng("policy", "replay", "--policy", policy, "--json", *extra, store=store)
        return json.loads(p.stdout)

    def audit_entries(self, store=None):
        p = self.ng("audit", "verify", "--json", store=store, ok=(0, 1))
        return json.loads(p.stdout)["entries"]


# ---- replay -----------------------------------------------------------------------

def test_same_policy_changes_nothing(t):
    # The last 9 days were all decided by the policy in force: replaying it
    # against itself is the control, and it differs in nothing.
    before = t.audit_entries()
    r = t.replay(t.policy, "--days", "9")
    check(r["decisions"] > 2000, f"the window holds the fleet's decisions: {r['decisions']}")
    check(r["replayed"] == r["decisions"] and r["not_replayed"]["runs"] == 0,
          "every run of the window is replayed under its own policy")
    check(r["changed_count"] == 0 and r["changed"] == [] and r["unchanged"] == r["replayed"],
          f"a policy replayed against itself changes nothing: {r['changed_count']}")
    for name, o in r["summary"].items():
        check(o["current"] == o["proposed"], f"{name}: {o}")
    check(r["quarantines"]["added"] == 0 and r["quarantines"]["removed"] == 0, "no quarantine moves")
    check(t.audit_entries() == before, "a replay writes nothing to the store")


def test_stricter_fraction_adds_quarantines_and_names_them(t):
    r = t.replay(t.strict)
    again = t.replay(t.strict)
    check(r == again, "the replay is deterministic")
    added = [c for c in r["changed"] if c["proposed"] == "quarantined"]
    check(len(added) > 0 and r["quarantines"]["added"] == len(added),
          f"a stricter fraction adds quarantines: {len(added)}")
    check(r["quarantines"]["removed"] == 0, "and removes none")
    s = r["summary"]["quarantined"]
    check(s["proposed"] - s["current"] == len(added), f"the summary counts them: {s}")
    for c in added:
        x = c["decisive"]
        check(c["node"] and c["run_id"] and c["current"] != "quarantined", f"named: {c}")
        check(x["value"] < x["bar_proposed"] and abs(x["bar_proposed"] / x["baseline_median"] - 0.95) < 1e-9,
              f"under the proposed bar, 0.95 of the median: {x}")
        check(x["status_proposed"] == "flagged" and x["status_current"] != "flagged",
              f"flagged under the proposed policy only: {x}")
    q = r["quarantines"]
    check(q["added_later_passed"] + q["added_later_failed"] <= q["added"], f"later: {q}")
    print(f"  stricter: {len(added)} quarantines added, {r['changed_count']} decisions changed, "
          f"{r['newly_unconfirmed']} flagged without a recorded confirmation")


def test_looser_fraction_removes_quarantines(t):
    r = t.replay(t.loose)
    removed = [c for c in r["changed"] if c["current"] == "quarantined"]
    check(len(removed) > 0 and r["quarantines"]["removed"] == len(removed),
          f"a looser fraction removes quarantines: {len(removed)}")
    check(r["quarantines"]["added"] == 0, "and adds none")
    for c in removed:
        x = c["decisive"]
        check(x["value"] >= x["bar_proposed"], f"at or over the proposed bar: {x}")
    text = t.ng("policy", "replay", "--policy", t.loose).stdout
    check(removed[0]["decisive"]["metric"][:16] in text and "quarantined -> " in text,
          "the table names the changed nodes and their metric")
    print(f"  looser: {len(removed)} quarantines removed, "
          f"{r['quarantines']['removed_later_failed']} of them later failed")


def test_runs_without_their_policy_text_are_not_replayed(t):
    # A store from before policy texts were kept: the older policy's digest
    # only. Those runs are named as not replayed, never counted unchanged.
    hist = json.loads(t.ng("policy", "history", "--json").stdout)["policies"]
    old = min((p for p in hist if p["first_used"]), key=lambda p: p["first_used"])
    store = fresh_store(t.tmp, "old")
    if store.startswith("postgres"):
        run(["pg_dump", t.store, "-f", os.path.join(t.tmp, "dump.sql")])
        run(["psql", "-q", "-X", store, "-f", os.path.join(t.tmp, "dump.sql")])
    else:
        shutil.copy(t.store, store)
    sql(store, f"DELETE FROM policies WHERE digest = '{old['version']}'")
    r = t.replay(t.policy, store=store)
    un = r["not_replayed"]
    check(un["runs"] == old["total"], f"every run of {old['version']} is named: {un}")
    check(un["by_policy"][0]["policy"] == old["version"] and "digest" in un["by_policy"][0]["why"],
          f"and why: {un}")
    check(r["replayed"] + un["runs"] == r["decisions"] and r["unchanged"] <= r["replayed"],
          "not replayed is never unchanged")
    check(sum(o["current"] for k, o in r["summary"].items() if k != "drained") == r["replayed"],
          "the summary counts only what was replayed")


def test_gate_lines_without_a_record_say_why(t):
    # fleetgen writes verdict lines that name no record: the gate's input
    # was never kept, so a gate value that differs cannot be judged again.
    # Each line keeps its recorded verdict, and the replay says why.
    pol = json.load(open(t.policy))
    pol.setdefault("gate", {})["warn"] = 0.04
    path = t.file("gate-warn.json", json.dumps(pol))
    r = t.replay(path, "--days", "9")
    g = r["gate"]
    why = {e["reason"]: e["lines"] for e in g["not_rerun"]["by_reason"]}
    check(g["re_evaluated"] and g["values_differ"] == ["gate.warn"] and g["rerun"] == 0
          and why == {"no_record": g["lines"]} and g["lines"] > 2000,
          f"every line named as not judged again: {g['lines']} lines, {why}")
    check(r["changed_count"] == 0 and "gate.warn" not in r["not_re_evaluated"],
          f"the recorded verdicts stand: {r['changed_count']}")


def test_bad_proposed_policy_is_refused_as_policy_refuses_it(t):
    bad = t.file("bad.json", '{"admission": {"flag_fraktion": 0.9}}')
    p = t.ng("policy", "replay", "--policy", bad, ok=(2,))
    check("flag_fraktion" in p.stderr and "unknown policy value" in p.stderr, p.stderr)
    far = t.file("far.json", '{"admission": {"flag_fraction": 1.5}}')
    p = t.ng("policy", "replay", "--policy", far, ok=(2,))
    check("flag_fraction" in p.stderr and "out of range" in p.stderr, p.stderr)
    p = t.ng("policy", "replay", ok=(2,))
    check("--policy FILE" in p.stderr, p.stderr)
    p = t.ng("policy", "replay", "--policy", t.strict, "--days", "0", ok=(2,))
    check("--days" in p.stderr, p.stderr)


# ---- the report --------------------------------------------------------------------

def test_report_replay_section(t):
    r = t.replay(t.loose)
    path = t.file("replay.json", json.dumps(r))
    html = os.path.join(t.tmp, "report.html")
    t.ng("report", "--no-sacct", "--replay", path, "--html", html)
    page = open(html).read()
    check('id="policy-replay"' in page and 'id="replay-changed"' in page, "the section is drawn")
    rows = page.split('id="replay-changed"')[1].split("</table>")[0].count("<tr>") - 1
    check(rows == min(200, len(r["changed"])), f"one row per changed decision: {rows}")
    doc = json.loads(t.ng("report", "--no-sacct", "--replay", path, "--json").stdout)
    check(doc["replay"]["summary"] == r["summary"], "the JSON carries the replay")
    notreplay = t.file("not-replay.json", '{"schema": "nodegate/report/1"}')
    p = t.ng("report", "--no-sacct", "--replay", notreplay, "--json", ok=(2,))
    check("nodegate/replay/1" in p.stderr, p.stderr)


# ---- promotion ---------------------------------------------------------------------

def test_promotion_over_the_guard_needs_force_and_a_reason(t):
    installed = os.path.join(t.tmp, "enforcing.json")
    args = ["policy", "promote", t.strict, "--install", installed, "--reason", "tighter storage"]
    p = t.ng(*args, ok=(1,))
    check("REFUSED" in p.stdout and "guard" in p.stdout, p.stdout)
    check(not os.path.exists(installed), "nothing installed when refused")
    p = t.ng("policy", "promote", t.strict, "--install", installed, ok=(2,))
    check("--reason" in p.stderr, "a promotion says why")
    p = t.ng(*args, "--force", "--json")
    doc = json.loads(p.stdout)
    check(doc["forced"] and not doc["refused"] and doc["guard"]["over"], f"forced: {doc['guard']}")
    check(open(installed).read() == STRICT, "the proposed file is installed as it was written")
    log = json.loads(t.ng("audit", "show", "--json", "--limit", "0").stdout)["entries"]
    acts = {e["action"]: e for e in log}
    check("policy.promote-refused" in acts and "policy.promote" in acts, "both are in the audit log")
    d = acts["policy.promote"]["detail"]
    d = json.loads(d) if isinstance(d, str) else d
    check(d["reason"] == "tighter storage" and d["forced"] and d["replay"]["quarantines"]["added"] > 0,
          f"who, why and the figures: {list(d)}")
    hist = json.loads(t.ng("policy", "history", "--json").stdout)["policies"]
    mine = [h for h in hist if h["version"] == doc["policy"]]
    check(mine and mine[0]["promoted_by"] and mine[0]["promote_reason"] == "tighter storage",
          f"history names who promoted it: {mine}")
    # A looser policy adds no quarantine: under the guard, promoted as asked.
    p = t.ng("policy", "promote", t.loose, "--no-install", "--reason", "fewer false rejects", "--json")
    check(not json.loads(p.stdout)["guard"]["over"], "the looser one is under the guard")


# ---- shadow ------------------------------------------------------------------------

def gpus(replays):
    return {"schema": "nodegate/synthetic-gpus/1",
            "gpus": [{"pcie": {"replays": replays}} if i == 0 else {} for i in range(8)]}


def test_health_rule_in_shadow_drains_nothing_and_counts(t):
    store = fresh_store(t.tmp, "gpu")
    shadow = t.file("shadow.json", '{"health": {"pcie_replays_per_hour": 10}}')
    kmsg = t.file("kmsg.log", "")
    open(kmsg, "w").close()
    env = dict(t.env, NODEGATE_NVML_LIBRARY=t.a.synth, NODEGATE_KMSG=kmsg,
               NODEGATE_STATE_DIR=t.tmp, SLURM_JOB_GPUS="0", NODEGATE_NOW="1790000000")
    t.ng("policy", "shadow", "set", shadow, "--reason", "a tighter replay rate", store=store, env=env)
    results = []
    for at, replays in ((1790000000, 100), (1790007200, 2100)):
        f = t.file(f"gpus-{at}.json", json.dumps(gpus(replays)))
        e = dict(env, NODEGATE_NOW=str(at), NODEGATE_SYNTH_GPUS=f)
        p = t.ng("epilog", "--json", store=store, env=e, ok=(0, 1))
        results.append((p.returncode, json.loads(p.stdout)))
    # 2,000 replays over 24 h: 83 an hour, under the enforcing 1,000, over
    # the shadow's 10. The enforcing policy decides: no drain.
    check(all(rc == 0 and not j["drain"] for rc, j in results), f"nothing drained: {results}")
    e = dict(env, NODEGATE_NOW="1790007300")
    s = json.loads(t.ng("policy", "shadow", "show", "--json", store=store, env=e).stdout)
    check(s["evaluated"].get("epilog") == 2, f"both checks judged in shadow: {s['evaluated']}")
    would = [w for w in s["would"] if w["outcome"] == "drain"]
    check(len(would) == 1 and would[0]["rule"] == "rate.pcie_replays" and would[0]["count"] == 1
          and would[0]["enforcing_did"] == 0, f"the shadow would have drained once: {s['would']}")
    m = t.ng("metrics", store=store, env=e).stdout
    line = [l for l in m.splitlines() if l.startswith("nodegate_shadow_would_drain{")]
    check(len(line) == 1 and 'rule="rate.pcie_replays"' in line[0] and line[0].endswith(" 1"),
          f"metrics count it: {line}")
    doc = json.loads(t.ng("report", "--no-sacct", "--json", "--days", "30", store=store, env=e).stdout)
    check(doc["shadow"]["would"][0]["rule"] == "rate.pcie_replays", "the report counts it")
    r = json.loads(t.ng("policy", "replay", "--policy", shadow, "--json", "--days", "30",
                        store=store, env=e).stdout)
    g, d = r["gpu_checks"], r["summary"]["drained"]
    check(g["runs"] == 2 and g["rejudged"] == 2 and d["current"] == 0 and d["proposed"] == 1,
          f"a replay judges the checks again from their readings, as the shadow did: {g}")
    check(g["by_mode"]["epilog"]["transitions"] == {"ok->degraded": 1}, f"{g['by_mode']}")
    t.ng("policy", "shadow", "clear", "--reason", "seen enough", store=store, env=e)
    s = json.loads(t.ng("policy", "shadow", "--json", store=store, env=e).stdout)
    check(s["policy"] is None, "cleared")


def busbw_records(node, median, rng, n=9):
    """One fabric run: n samples whose median is `median`, spread about 1%."""
    half = [median * (1 + 0.01 * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    low = [median * (1 - 0.01 * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    return [{"schema": "nodegate/record/1", "node": node, "class": "8xH100/1rail",
             "software": "sw-1", "domain": "fabric", "metric": "nccl.all_reduce.busbw",
             "unit": "GB/s", "samples": sorted(low) + [median] + sorted(half), "wrong": 0,
             "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}]


def test_admission_in_shadow_quarantines_nothing_and_counts(t):
    import random
    rng = random.Random(21)
    store = fresh_store(t.tmp, "admit")
    at = 1790000000
    env = dict(t.env, NODEGATE_NOW=str(at))
    history = []
    for i in range(20):
        history += busbw_records(f"peer{i:02d}", 300.0 * (1 + 0.0005 * (i - 10)), rng)
    t.ng("ingest", "--accepted", t.file("history.json", json.dumps(history)), store=store,
         env=dict(env, NODEGATE_NOW=str(at - 86400)))
    shadow = t.file("shadow-admit.json", '{"admission": {"flag_fraction": 0.95}}')
    t.ng("policy", "shadow", "set", shadow, "--reason", "a stricter bar", store=store, env=env)
    # Flagged at 0.85 of the median, recovered to 0.92 in its confirmation:
    # admitted with a warning under the enforcing 0.88; flagged twice under 0.95.
    first = t.file("first.json", json.dumps(busbw_records("node27", 255.0, rng)))
    confirm = t.file("confirm.json", json.dumps(busbw_records("node27", 276.0, rng)))
    p = t.ng("admit", "--json", "--from", first, "--confirm-from", confirm, store=store, env=env)
    d = json.loads(p.stdout)
    check(d["outcome"] == "admitted-warn" and d["case"] is None, f"enforcing decides: {d['outcome']}")
    s = json.loads(t.ng("policy", "shadow", "--json", store=store, env=env).stdout)
    check(s["evaluated"].get("admit") == 1, f"judged in shadow: {s['evaluated']}")
    would = s["would"]
    check(len(would) == 1 and would[0]["outcome"] == "quarantined" and would[0]["count"] == 1
          and would[0]["rule"] == "nccl.all_reduce.busbw" and would[0]["class"] == "8xH100/1rail",
          f"the shadow would have quarantined it, for its fabric: {would}")
    m = t.ng("metrics", store=store, env=env).stdout
    check('nodegate_shadow_would_quarantine{rule="nccl.all_reduce.busbw",class="8xH100/1rail"} 1'
          in m, "metrics count it")
    cases = t.ng("quarantine", "list", "--json", store=store, env=env, ok=(0,)).stdout
    check("node27" not in cases, "no case is opened for a shadow's quarantine")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fleetgen", required=True)
    ap.add_argument("--synth", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ng-policy-changes-")
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

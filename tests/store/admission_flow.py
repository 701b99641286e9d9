#!/usr/bin/env python3
"""Admission through the store, as an operator runs it, on either backend.

Every scenario starts from an empty store of its own: SQLite in a fresh
directory, or a fresh database on the throwaway PostgreSQL server
(NODEGATE_TEST_BACKEND=postgres, URI in NODEGATE_TEST_PG_URI_FILE). Records
are written here, never copied from anywhere. Exit 77 skips (no server).

  admission_flow.py --nodegate BUILD/nodegate [SCENARIO...]
"""
import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile

NOW = 1_790_000_000  # 2026-09-21T14:13:20Z: every run is at a fixed time
HOUR = 3600
DAY = 24 * HOUR

# The seed's worked example: a 20-node class and node 27.
CLASS = "8xH100-SXM/2node/1rail"
SOFTWARE = "sw-0123456789abcdef"
METRICS = [  # metric, domain, unit, class median, node 27
    ("cpu.fp64.gflops", "compute", "units/s", 980.0, 968.0),
    ("gpumem.copy.gbps", "memory", "GB/s", 1500.0, 1472.0),
    ("storage.seqread.gbps", "storage", "GB/s", 6.0, 5.9),
    ("nccl.all_reduce.busbw", "fabric", "GB/s", 300.0, 258.0),
]
DIAG = {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}


class Failure(Exception):
    pass


def samples(rng, median, n=9, cv=0.01):
    """n samples whose median is exactly `median`, spread by about cv."""
    half = [median * (1 + cv * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    low = [median * (1 - cv * abs(rng.gauss(0, 1))) for _ in range(n // 2)]
    return sorted(low) + [median] + sorted(half)


def record(node, metric, domain, unit, values, cls=CLASS, software=SOFTWARE, wrong=0):
    r = {"schema": "nodegate/record/1", "node": node, "class": cls, "software": software,
         "domain": domain, "metric": metric, "unit": unit, "samples": values, "wrong": wrong}
    if domain == "fabric":
        r["diag"] = dict(DIAG)
    return r


def class_history(rng, nodes=20, cls=CLASS, software=SOFTWARE, prefix="node"):
    """Accepted idle runs of a healthy class: node medians within 0.5%."""
    out = []
    # Node medians in pairs either side of the class median, so the median
    # of node medians is the class median itself.
    offsets = [s * 0.0005 * (k // 2 + 1) for k, s in zip(range(nodes), [1, -1] * nodes)]
    for i in range(nodes):
        for metric, domain, unit, median, _ in METRICS:
            m = median * (1 + offsets[i])
            out.append(record(f"{prefix}{i:02d}", metric, domain, unit, samples(rng, m), cls, software))
    return out


def node_run(rng, node, values, only=None, cls=CLASS, software=SOFTWARE):
    out = []
    for (metric, domain, unit, _, _), v in zip(METRICS, values):
        if only and domain not in only:
            continue
        out.append(record(node, metric, domain, unit, samples(rng, v), cls, software))
    return out


class Env:
    def __init__(self, nodegate, tmp, store, fake_tool=None, fake_scontrol=None):
        self.nodegate, self.tmp, self.store = nodegate, tmp, store
        self.fake_tool = fake_tool
        self.fake_scontrol = fake_scontrol
        self.files = 0

    def write(self, obj):
        self.files += 1
        path = os.path.join(self.tmp, f"in{self.files}.json")
        with open(path, "w") as f:
            json.dump(obj, f)
        return path

    def run(self, *args, expect=None, at=NOW, env=None):
        e = dict(os.environ, NODEGATE_NOW=str(at), NODEGATE_STORE=self.store)
        e.pop("NODEGATE_POLICY", None)
        e.update(env or {})
        p = subprocess.run([self.nodegate, *args], capture_output=True, text=True, env=e, timeout=120)
        if expect is not None and p.returncode != expect:
            raise Failure(f"nodegate {' '.join(args)}: exit {p.returncode}, wanted {expect}\n"
                          f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    def json(self, *args, expect=None, at=NOW):
        p = self.run(*args, "--json", expect=expect, at=at)
        try:
            return json.loads(p.stdout)
        except ValueError:
            raise Failure(f"nodegate {' '.join(args)} --json printed no JSON:\n{p.stdout}\n{p.stderr}")

    def admit(self, first, confirm=None, expect=None, at=NOW, policy=None):
        args = (["--policy", self.write(policy)] if policy else []) + ["admit", "--from",
                                                                     self.write(first)]
        if confirm is not None:
            args += ["--confirm-from", self.write(confirm)]
        return self.json(*args, expect=expect, at=at)

    def ingest_history(self, recs, at=NOW - 24 * HOUR):
        self.run("ingest", "--accepted", self.write(recs), expect=0, at=at)


def check(cond, what):
    if not cond:
        raise Failure(what)


def result(decision, stage, metric):
    for r in decision["results"]:
        if r["stage"] == stage and r["metric"] == metric:
            return r
    raise Failure(f"no {stage} result for {metric} in {json.dumps(decision, indent=1)}")


# ---- scenarios ---------------------------------------------------------------------------

def node27_flagged_on_fabric_only(env, rng):
    env.ingest_history(class_history(rng))
    d = env.admit(node_run(rng, "node27", [m[4] for m in METRICS]), expect=1)
    check(d["outcome"] == "suspect", f"outcome {d['outcome']}")
    check(d["confirm"] == ["fabric"], f"confirm {d['confirm']}")
    fab = result(d, "first", "nccl.all_reduce.busbw")
    check(fab["status"] == "flagged" and abs(fab["bar"] - 270.0) < 1e-6, f"fabric {fab}")
    check(abs(fab["percent_of_median"] - 86.0) < 0.5, f"fabric percent {fab}")
    for metric, domain, *_ in METRICS[:3]:
        r = result(d, "first", metric)
        check(r["status"] == "ok" and not r["flagged"], f"{metric} {r}")
        check(r["baseline"]["nodes"] == 20, f"{metric} baseline {r['baseline']}")


def node27_confirmed_low_is_quarantined(env, rng):
    env.ingest_history(class_history(rng))
    first = node_run(rng, "node27", [m[4] for m in METRICS])
    confirm = node_run(rng, "node27", [0, 0, 0, 262.0], only={"fabric"})
    d = env.admit(first, confirm, expect=1)
    check(d["outcome"] == "quarantined", f"outcome {d['outcome']}")
    check(d["case"], "no case opened")
    check([b["metric"] for b in d["because"]] == ["nccl.all_reduce.busbw"] * 2,
          f"because {d['because']}")
    q = env.json("quarantine", "show", "node27", expect=0)
    text = json.dumps(q)
    for want in ("nccl.all_reduce.busbw", "fabric", "release", "262", "258"):
        check(want in text, f"case lacks {want}: {text}")
    lst = env.run("quarantine", "list", expect=0).stdout
    check("node27" in lst, f"quarantine list: {lst}")


def node27_recovered_is_admitted_with_warning(env, rng):
    env.ingest_history(class_history(rng))
    first = node_run(rng, "node27", [m[4] for m in METRICS])
    confirm = node_run(rng, "node27", [0, 0, 0, 297.0], only={"fabric"})
    d = env.admit(first, confirm, expect=0)
    check(d["outcome"] == "admitted-warn", f"outcome {d['outcome']}")
    check(d["recheck_at"] == NOW + 24 * HOUR, f"recheck {d['recheck_at']}")
    check(d["case"] is None, "a case was opened")
    table = env.run("admit", "--from", env.write(first), "--confirm-from", env.write(confirm),
                    expect=0, at=NOW + 60).stdout
    for want in ("outcome: admitted-warn", "recheck by", "nccl.all_reduce.busbw", "flagged"):
        check(want in table, f"table lacks {want!r}:\n{table}")


def integrity_failure_quarantines_at_once(env, rng):
    env.ingest_history(class_history(rng))
    run = node_run(rng, "node05x", [m[3] for m in METRICS])
    run[1]["wrong"] = 3  # the memory test read back wrong words
    d = env.admit(run, expect=1)
    check(d["outcome"] == "quarantined", f"outcome {d['outcome']}")
    check(result(d, "first", "gpumem.copy.gbps")["status"] == "integrity", "status")


def unmeasured_is_held(env, rng):
    env.ingest_history(class_history(rng))
    run = node_run(rng, "node40", [m[3] for m in METRICS])
    run[2]["samples"] = []
    d = env.admit(run, expect=1)
    check(d["outcome"] == "held", f"outcome {d['outcome']}")


def healthy_node_is_admitted_and_feeds_baseline(env, rng):
    env.ingest_history(class_history(rng))
    d = env.admit(node_run(rng, "node41", [m[3] for m in METRICS]), expect=0)
    check(d["outcome"] == "admitted", f"outcome {d['outcome']}")
    check(d["recheck_at"] is None, "recheck set")
    d = env.json("baseline", "build", "--class", CLASS, at=NOW + 60)
    nodes = {b["metric"]: b["n_nodes"] for b in d["baselines"]}
    check(nodes == {m[0]: 21 for m in METRICS}, f"the admitted node did not join: {nodes}")


def new_class_establishes(env, rng):
    env.ingest_history(class_history(rng, nodes=2, cls="newclass"))
    d = env.admit(node_run(rng, "fresh1", [m[3] for m in METRICS], cls="newclass"), expect=0)
    check(d["outcome"] == "admitted-warn", f"outcome {d['outcome']}")
    r = result(d, "first", "nccl.all_reduce.busbw")
    check(r["status"] == "establishing" and r["baseline"]["status"] == "too-few-nodes", f"{r}")
    # A floor still fails a node of a class with no baseline.
    pol = env.write({"floors": {"nccl.all_reduce.busbw": 270}})
    p = env.run("--policy", pol, "admit", "--json", "--from",
                env.write(node_run(rng, "fresh2", [980, 1500, 6, 250], cls="newclass")), expect=1)
    d = json.loads(p.stdout)
    check(d["outcome"] == "suspect", f"below the floor: {d['outcome']}")
    check(result(d, "first", "nccl.all_reduce.busbw")["status"] == "flagged", "floor")


def small_class_is_judged(env, rng):
    """Three nodes are a small class: judged against a bar that carries
    their uncertainty, below the 90% line."""
    env.ingest_history(class_history(rng, nodes=3, cls="smallclass"))
    d = env.admit(node_run(rng, "small1", [980, 1500, 6.0, 250.0], cls="smallclass"), expect=1)
    check(d["outcome"] == "suspect", f"outcome {d['outcome']}")
    r = result(d, "first", "nccl.all_reduce.busbw")
    check(r["status"] == "flagged" and r["baseline"]["status"] == "ok", f"{r}")
    check(r["baseline"]["nodes"] == 3 and r["bar"] <= 0.9 * r["baseline_median"] + 1e-9,
          f"small-class bar: {r}")
    d = env.admit(node_run(rng, "small2", [980, 1500, 6.0, 280.0], cls="smallclass"), expect=0)
    r = result(d, "first", "nccl.all_reduce.busbw")
    check(r["status"] in ("ok", "marginal"), f"88% of a 3-node median: {r}")
    check(any("peers only" in n for n in d["notes"]), f"no floors, not said: {d['notes']}")


def noisy_storage_history(rng, cls, nodes, prefix):
    """Accepted idle runs of a class whose storage is noisy: samples 8%
    apart, node medians 3% apart (the other metrics as class_history)."""
    out = []
    for i in range(nodes):
        off = (0.03 if i % 2 else -0.03) * (i // 2 % 3 + 1) / 2 if i else 0.0
        for metric, domain, unit, median, _ in METRICS:
            if domain == "storage":
                vals = samples(rng, median * (1 + off), n=16, cv=0.08)
            else:
                vals = samples(rng, median)
            out.append(record(f"{prefix}{i:02d}", metric, domain, unit, vals, cls))
    return out


def small_class_pools_its_family(env, rng):
    """A small class beside its parent (the same first four parts of the
    key: the same hardware, another kernel) takes its spread from the
    parent: a bar near the parent's, not the one three nodes allow."""
    family = "8xH100-SXM/Xeonx2/2048GiB/8ib"
    parent, small = family + "/6.1.0-26", family + "/6.1.0-27"
    env.ingest_history(noisy_storage_history(rng, parent, 24, "parent"))
    env.ingest_history(noisy_storage_history(rng, small, 3, "small"))
    env.run("baseline", "build", expect=0)  # the parent's, as its own nodes' screens build it
    low = [980, 1500, 6.0 * 0.78, 300.0]  # storage 22% under the median
    # Its own three nodes: t with two degrees of freedom puts the bar far
    # under 78%.
    alone = {"admission": {"family_parts": 0}}
    d = env.admit(node_run(rng, "small-a", low, cls=small), policy=alone)
    r = result(d, "first", "storage.seqread.gbps")
    check(r["baseline"]["nodes"] == 3 and "family" not in r["baseline"], f"{r}")
    check(r["status"] != "flagged" and r["bar"] < 0.75 * r["baseline_median"], f"own bar: {r}")
    # With its family: the parent's 24 nodes give the spread, the bar rises
    # near the parent class's own, and 78% is flagged.
    d = env.admit(node_run(rng, "small-b", low, cls=small), expect=1)
    r = result(d, "first", "storage.seqread.gbps")
    fam = r["baseline"].get("family")
    check(fam and fam["key"] == family and fam["classes"] == 1 and fam["degrees_of_freedom"] == 23,
          f"pooled from the parent: {r}")
    check(r["status"] == "flagged" and 0.8 * r["baseline_median"] < r["bar"] <= 0.9 * r["baseline_median"],
          f"pooled bar: {r}")
    # A healthy node of the small class still passes under the pooled bar.
    d = env.admit(node_run(rng, "small-c", [980, 1500, 6.0 * 0.97, 300.0], cls=small), expect=0)
    r = result(d, "first", "storage.seqread.gbps")
    check(r["status"] in ("ok", "marginal") and "family" in r["baseline"], f"healthy: {r}")


def software_change_starts_a_new_baseline(env, rng):
    env.ingest_history(class_history(rng))
    d = env.admit(node_run(rng, "node50", [m[3] for m in METRICS], software="sw-ffffffffffffffff"),
                  expect=0)
    r = result(d, "first", "nccl.all_reduce.busbw")
    check(r["status"] == "establishing", f"new software judged against old samples: {r}")
    # An explicit expiry retires the class's old samples.
    env.run("baseline", "expire", CLASS, "--reason", "driver upgrade", expect=0, at=NOW + 10)
    d = env.admit(node_run(rng, "node51", [m[3] for m in METRICS]), expect=0, at=NOW + 20)
    check(result(d, "first", "cpu.fp64.gflops")["status"] == "establishing",
          "expired samples still used")


def release_needs_two_passes(env, rng):
    env.ingest_history(class_history(rng))
    first = node_run(rng, "node60", [980, 1500, 6.0, 250.0])
    env.admit(first, node_run(rng, "node60", [0, 0, 0, 251.0], only={"fabric"}), expect=1)
    p = env.run("release", "node60", expect=1, at=NOW + HOUR)
    check("0 " in p.stdout + p.stderr or "needs" in p.stdout + p.stderr, f"release: {p.stdout}{p.stderr}")
    healthy = [m[3] for m in METRICS]
    d = env.admit(node_run(rng, "node60", healthy), expect=1, at=NOW + 2 * HOUR)
    check(d["outcome"] == "quarantined", f"one pass released it: {d['outcome']}")
    env.run("release", "node60", expect=1, at=NOW + 2 * HOUR + 1)
    env.admit(node_run(rng, "node60", healthy), expect=1, at=NOW + 3 * HOUR)
    env.run("release", "node60", expect=0, at=NOW + 3 * HOUR + 1)
    d = env.admit(node_run(rng, "node60", healthy), expect=0, at=NOW + 4 * HOUR)
    check(d["outcome"] in ("admitted", "admitted-warn"), f"after release: {d['outcome']}")
    v = env.run("audit", "verify", expect=0).stdout
    check("verified" in v, f"audit verify: {v}")


def override_admits_by_name_until_expiry(env, rng):
    env.ingest_history(class_history(rng))
    env.run("override", "node70", "--reason", "cable swapped, watch it", "--expires", "+2h",
            "--by", "alice", expect=0)
    bad = node_run(rng, "node70", [980, 1500, 6.0, 240.0])
    d = env.admit(bad, node_run(rng, "node70", [0, 0, 0, 241.0], only={"fabric"}), expect=0, at=NOW + 60)
    check(d["outcome"] == "admitted-warn" and d["case"] is None, f"override: {d}")
    check(any("alice" in n for n in d["notes"]), f"override not named: {d['notes']}")
    d = env.admit(bad, node_run(rng, "node70", [0, 0, 0, 241.0], only={"fabric"}), expect=1,
                  at=NOW + 3 * HOUR)
    check(d["outcome"] == "quarantined", f"expired override still admits: {d['outcome']}")


def circuit_breaker_stops_fleet_wide_quarantine(env, rng):
    env.ingest_history(class_history(rng))
    outcomes = []
    for i in range(4):
        node = f"node8{i}"
        d = env.admit(node_run(rng, node, [980, 1500, 6.0, 250.0]),
                      node_run(rng, node, [0, 0, 0, 250.0], only={"fabric"}), at=NOW + i * 60)
        outcomes.append(d["outcome"])
    # The first is quarantined; the second, a minute later with node80's
    # drop, is rechecked rather than confirmed; the third makes 3 of 24
    # nodes sharing the drop (over 10%) and trips the breaker.
    check(outcomes[:2] == ["quarantined", "held"], f"outcomes {outcomes}")
    check(outcomes[2] == "admitted-warn" and outcomes[3] == "admitted-warn", f"outcomes {outcomes}")
    ev = env.json("fleet", "list", expect=0)
    text = json.dumps(ev)
    check(CLASS in text and "node80" in text and "node82" in text and SOFTWARE in text,
          f"fleet event: {text}")
    d = env.admit(node_run(rng, "node90", [m[3] for m in METRICS]), expect=0, at=NOW + 600)
    check(any("fleet-regression" in n for n in d["notes"]), f"later run silent: {d['notes']}")
    # Clearing the event names who and why, once; a second clear and an
    # unknown id are refused.
    eid = ev["events"][0]["id"]
    c = env.json("fleet", "clear", str(eid), "--by", "ops", "--reason", "switch fixed",
                 expect=0, at=NOW + 700)
    check(c["id"] == eid and c["class"] == CLASS and c["cleared_at"] == NOW + 700
          and c["cleared_by"] == "ops", f"fleet clear: {c}")
    again = env.run("fleet", "clear", str(eid), "--by", "ops", "--reason", "again", expect=1)
    check("already cleared" in again.stderr and "switch fixed" in again.stderr,
          f"second clear: {again.stderr}")
    env.run("fleet", "clear", "99999", "--by", "ops", "--reason", "x", expect=1)


def breaker_event_is_about_one_metric(env, rng):
    """An event declines its own metric's quarantines only, never a floor
    failure or wrong answers, and clears itself once the metric is back
    within noise."""
    env.ingest_history(class_history(rng))
    pol = env.write({"floors": {"nccl.all_reduce.busbw": 200.0}})

    def admit(node, first, confirm, at, expect=None):
        args = ["--policy", pol, "admit", "--from", env.write(first)]
        if confirm is not None:
            args += ["--confirm-from", env.write(confirm)]
        return env.json(*args, expect=expect, at=at)

    for i in range(3):
        node = f"node8{i}"
        d = admit(node, node_run(rng, node, [980, 1500, 6.0, 250.0]),
                  node_run(rng, node, [0, 0, 0, 250.0], only={"fabric"}), NOW + i * 60)
    check(d["outcome"] == "admitted-warn", f"breaker did not trip: {d}")
    ev = env.json("fleet", "list", expect=0)
    check("nccl.all_reduce.busbw" in json.dumps(ev), f"event names no metric: {ev}")
    # another metric of the class is a node's own fault
    d = admit("node90", node_run(rng, "node90", [700, 1500, 6.0, 300.0]),
              node_run(rng, "node90", [700, 0, 0, 0], only={"compute"}), NOW + 300, expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"other metric declined: {d}")
    # the event's own metric is declined...
    d = admit("node91", node_run(rng, "node91", [980, 1500, 6.0, 250.0]),
              node_run(rng, "node91", [0, 0, 0, 250.0], only={"fabric"}), NOW + 360, expect=0)
    check(d["outcome"] == "admitted-warn", f"event's metric quarantined: {d}")
    # ...but not under the floor: that node cannot do the work
    d = admit("node92", node_run(rng, "node92", [980, 1500, 6.0, 150.0]),
              node_run(rng, "node92", [0, 0, 0, 150.0], only={"fabric"}), NOW + 420, expect=1)
    check(d["outcome"] == "quarantined", f"floor failure declined: {d}")
    check(any("floor" in n for n in d["notes"]), f"floor not said: {d['notes']}")
    # ...nor wrong answers: an event is about speed, and a node that computes
    # wrong results is the node's, whatever the fleet's speed did
    wrong = node_run(rng, "node93", [980, 1500, 6.0, 250.0])
    for rec in wrong:
        if rec["metric"] == "nccl.all_reduce.busbw":
            rec["wrong"] = 3
    d = admit("node93", wrong, None, NOW + 440, expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"wrong answers declined: {d}")
    # its peers passing does not clear it: the nodes that moved have not
    for i in range(12):
        node = f"node{i:02d}"
        d = admit(node, node_run(rng, node, [m[3] for m in METRICS]), None, NOW + 500 + i * 5,
                  expect=0)
    check(not any("cleared" in n for n in d["notes"]), f"cleared by its peers: {d['notes']}")
    # ten runs of its own nodes back within noise clear it
    for i in range(10):
        node = ["node82", "node91"][i % 2]
        d = admit(node, node_run(rng, node, [m[3] for m in METRICS]), None, NOW + 600 + i * 60,
                  expect=0)
    check(any("cleared" in n for n in d["notes"]), f"not cleared by itself: {d['notes']}")
    ev = env.json("fleet", "list", expect=0)
    check("nccl.all_reduce.busbw" not in json.dumps(ev), f"still open: {ev}")


ALL_REDUCE_SLOW = [980, 1500, 6.0, 250.0]  # all-reduce 17% down


def fabric_admit(env, rng, node, at, values=ALL_REDUCE_SLOW, confirm=(0, 0, 0, 250.0),
                 expect=None, policy=None):
    """A node's screen, its fabric confirmed with confirm."""
    return env.admit(node_run(rng, node, values), node_run(rng, node, list(confirm), only={"fabric"}),
                     expect=expect, at=at, policy=policy)


def incident_is_rechecked_not_confirmed(env, rng):
    """A drop that nodes screened minutes before share is rechecked, not
    confirmed; a node that drops alone, or under its floor, is quarantined
    as ever; an open event stops explaining a drop nobody shares."""
    env.ingest_history(class_history(rng))

    def admit(node, at, *args, **kw):
        return fabric_admit(env, rng, node, at, *args, **kw)

    # node70 reads all-reduce 20% low on every run: screened minutes before
    # node80, it shares nothing new (against its own level)
    low = [980, 1500, 6.0, 240.0]
    env.ingest_history(node_run(rng, "node70", low) + node_run(rng, "node70", low))
    env.admit(node_run(rng, "node70", low), at=NOW - 600)
    d = admit("node80", NOW, expect=1)
    check(d["outcome"] == "quarantined", f"alone, first: {d['outcome']} {d['notes']}")
    d = admit("node81", NOW + 300, expect=1)
    check(d["outcome"] == "held" and not d.get("case"), f"shared drop confirmed: {d}")
    note = [n for n in d["notes"] if n.startswith("recheck:")]
    check(note and "1 of the class's" in note[0] and "nccl.all_reduce.busbw" in note[0]
          and "30 minutes" in note[0], f"recheck not said: {d['notes']}")
    # an hour later nobody screened within 30 minutes shares it: the node's own
    d = admit("node82", NOW + 4000, expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"a lone drop rechecked: {d}")
    # under its floor the node cannot do the work, whoever shares the drop
    d = admit("node83", NOW + 4100, [980, 1500, 6.0, 150.0], [0, 0, 0, 150.0], expect=1,
              policy={"floors": {"nccl.all_reduce.busbw": 200.0}})
    check(d["outcome"] == "quarantined" and d["case"], f"a floor failure rechecked: {d}")


def first_node_of_incident_is_withdrawn(env, rng):
    """The first node a shared drop reaches is quarantined before any peer can
    share it; when a peer whose drop is new shares it minutes later, that
    case is withdrawn (closed by nodegate, audited) and the peer rechecked.
    A peer already low at its last screen withdraws nothing, and a floor
    failure is never withdrawn."""
    env.ingest_history(class_history(rng))

    def admit(node, at, *args, **kw):
        return fabric_admit(env, rng, node, at, *args, **kw)

    first = admit("node60", NOW, expect=1)
    check(first["outcome"] == "quarantined" and first["case"], f"first node: {first}")
    d = admit("node61", NOW + 300, expect=1)
    check(d["outcome"] == "held" and not d["case"], f"sharing peer: {d['outcome']} {d['notes']}")
    w = d["withdrawn"]
    check(len(w) == 1 and w[0]["case"] == first["case"] and w[0]["node"] == "node60",
          f"withdrawn {w}")
    note = [n for n in d["notes"] if n.startswith(f"case {first['case']} of node60 withdrawn")]
    check(note and "nccl.all_reduce.busbw" in note[0], f"withdrawal not said: {d['notes']}")
    lst = env.run("quarantine", "list", expect=0, at=NOW + 400).stdout
    check("node60" not in lst, f"withdrawn case still open: {lst}")
    audit = env.json("audit", "show", "--subject", "node:node60", expect=0)["entries"]
    closes = [a for a in audit if a["action"] == "quarantine.release"]
    check(closes and closes[0]["actor"] == "nodegate" and "withdrawn" in json.dumps(closes[0]),
          f"withdrawal not audited: {audit}")

    # (a day apart each: the breaker's window holds one incident)
    # node63 was already low at its last screen (flagged, recovered on the
    # confirmation): its drop is not new, and says nothing of node62's
    admit("node63", NOW + 28 * HOUR, confirm=[0, 0, 0, 300.0], expect=0)
    second = admit("node62", NOW + 2 * DAY, expect=1)
    check(second["outcome"] == "quarantined", f"second incident's first: {second['outcome']}")
    d = admit("node63", NOW + 2 * DAY + 300, expect=1)
    check(d["outcome"] == "held" and d["withdrawn"] == [], f"old drop withdrew: {d}")
    lst = env.run("quarantine", "list", expect=0, at=NOW + 2 * DAY + 400).stdout
    check("node62" in lst, f"node62's case withdrawn by an old drop: {lst}")

    # under its floor a node cannot do the work, whoever shares the drop
    floors = {"floors": {"nccl.all_reduce.busbw": 200.0}}
    low = admit("node64", NOW + 4 * DAY, [980, 1500, 6.0, 150.0], [0, 0, 0, 150.0], expect=1,
                policy=floors)
    check(low["outcome"] == "quarantined", f"below the floor: {low['outcome']}")
    d = admit("node65", NOW + 4 * DAY + 300, expect=1, policy=floors)
    check(d["outcome"] == "held" and d["withdrawn"] == [], f"floor failure withdrawn: {d}")


def own_level_drop_is_flagged(env, rng):
    """A node that has read 2% over its class for weeks and drops 5% is
    still inside its class's bar (90%), but not inside its own: flagged,
    confirmed and quarantined on its own level. A drop of 1% is not; a node
    with too few runs of its own is judged by its class alone; and a
    software change that moved the whole class leaves the node's place in
    it, and so its level, where it was."""
    env.ingest_history(class_history(rng))
    high = [1000.0, 1530.0, 6.12, 306.0]
    day = 24 * HOUR
    for node in ("node90", "node91", "node93"):
        for k in range(8):
            env.ingest_history(node_run(rng, node, high), at=NOW - (k + 2) * day)
    env.ingest_history(node_run(rng, "node92", high), at=NOW - 2 * day)

    slow = [950.0, 1530.0, 6.12, 306.0]
    d = env.admit(node_run(rng, "node90", slow), node_run(rng, "node90", slow, only={"compute"}),
                  expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"own-level drop not quarantined: {d}")
    r = result(d, "first", "cpu.fp64.gflops")
    own = r.get("own_level") or {}
    check(r["status"] == "flagged" and not r["flagged"] and own.get("decides")
          and own.get("runs") == 8 and abs(own["level"] - 1000) < 1 and 950 < own["bar"] < 1000,
          f"first: {r}")
    note = [n for n in d["notes"] if "own level" in n and "cpu.fp64.gflops" in n]
    check(note and "5.0% under" in note[0] and "8 accepted runs" in note[0],
          f"own level not said: {d['notes']}")
    check(not any("own level" in n and "gpumem" in n for n in d["notes"]),
          f"a steady metric flagged: {d['notes']}")
    # repaired with a part 4% slower than the old one, still inside its class:
    # its passes and its runs after release are judged by its class, not by
    # what it read before the case
    repaired = [960.0, 1530.0, 6.12, 306.0]
    for k in (1, 2):
        d = env.admit(node_run(rng, "node90", repaired), expect=1, at=NOW + k * HOUR)
        check(d["outcome"] == "quarantined" and d["judged"] == "admitted",
              f"a repaired run judged against the old level: {d}")
    env.run("release", "node90", expect=0, at=NOW + 3 * HOUR)
    d = env.admit(node_run(rng, "node90", repaired), expect=0, at=NOW + 4 * HOUR)
    check(d["outcome"] == "admitted", f"after release: {d['outcome']} {d['notes']}")
    # 1% under its level: within what a node moves by
    d = env.admit(node_run(rng, "node91", [990.0, 1530.0, 6.12, 306.0]), expect=0)
    check(d["outcome"] == "admitted", f"a 1% drop flagged: {d['outcome']} {d['notes']}")
    # one run of its own is no level: its class judges it, and 950 passes
    d = env.admit(node_run(rng, "node92", slow), expect=0)
    check(d["outcome"] == "admitted", f"judged on one run: {d['outcome']} {d['notes']}")
    # a new software identity whose class reads 10% lower in cpu.fp64:
    # node93 reads 2% over the new class median, as it did over the old
    new_sw = "sw-fedcba9876543210"
    hist = [r for r in class_history(rng, software=new_sw) if r["metric"] == "cpu.fp64.gflops"]
    for r in hist:
        r["samples"] = [v * 0.9 for v in r["samples"]]
    env.ingest_history(hist)
    d = env.admit([r for r in node_run(rng, "node93", [900.0, 1530.0, 6.12, 306.0], software=new_sw)
                   if r["metric"] == "cpu.fp64.gflops"], expect=0, at=NOW + 60)
    r = result(d, "first", "cpu.fp64.gflops")
    check(d["outcome"] == "admitted" and r["status"] == "ok",
          f"a class-wide software change taken for the node's drop: {d['outcome']} {d['notes']}")
    # ... and the same node 5% under its place in the new class is flagged
    d = env.admit([r for r in node_run(rng, "node93", [855.0, 1530.0, 6.12, 306.0], software=new_sw)
                   if r["metric"] == "cpu.fp64.gflops"], expect=1, at=NOW + 120)
    check(d["outcome"] == "suspect", f"own level lost across the software change: {d}")


def sustained_own_drop_is_flagged(env, rng):
    """A drop under one run's noise that stays is the node's. Two nodes
    have the same twelve storage runs, scattered by about 2%, two of them
    8% under the rest; one read those two last. Its third such run passes
    its own bar (about 10% under its level) and its class's (90%), but the
    mean of its newest three (admission.own_level_recent) is under that
    mean's bar (about 6% under): flagged, confirmed and quarantined. The
    other node, whose low runs were long ago, is admitted with the same
    run; and with each run judged alone the sustained drop is admitted."""
    env.ingest_history(class_history(rng))
    day = 24 * HOUR
    level, low = 6.12, 5.6
    scatter = [level * (1 + d) for d in (-0.02, -0.01, 0.0, 0.01, 0.02, 0.0, -0.01, 0.01, 0.0, -0.02)]
    newest_last = {"node94": scatter + [low, low], "node95": [low, low] + scatter,
                   "node96": scatter + [low, low]}
    for node, values in newest_last.items():
        for k, v in enumerate(values):
            env.ingest_history(node_run(rng, node, [980.0, 1500.0, v, 300.0]),
                               at=NOW - (len(values) - k) * day)
    run = [980.0, 1500.0, low, 300.0]

    d = env.admit(node_run(rng, "node94", run), node_run(rng, "node94", run, only={"storage"}),
                  expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"a sustained drop not quarantined: {d}")
    r = result(d, "first", "storage.seqread.gbps")
    own = r.get("own_level") or {}
    recent = own.get("recent") or {}
    check(r["status"] == "flagged" and not r["flagged"] and own.get("decides")
          and own["bar"] < r["value"] and recent.get("decides") and recent.get("runs") == 3
          and abs(recent["mean"] - low) < 0.01 and recent["mean"] < recent["bar"] < own["level"],
          f"first: {r}")
    note = [n for n in d["notes"] if "newest 3 runs" in n and "storage.seqread.gbps" in n]
    check(note and "this run alone" in note[0], f"the newest runs not said: {d['notes']}")
    # the same runs, the low ones long ago: one low run is within its noise
    d = env.admit(node_run(rng, "node95", run), expect=0)
    r = result(d, "first", "storage.seqread.gbps")
    check(d["outcome"] != "quarantined" and r["status"] != "flagged"
          and not r["own_level"]["recent"]["decides"] and r["own_level"]["recent"]["mean"] > 5.8,
          f"one low run flagged: {d['outcome']} {r}")
    # with each run judged alone, the sustained drop passes
    d = env.admit(node_run(rng, "node96", run), expect=0,
                  policy={"admission": {"own_level_recent": 1}})
    r = result(d, "first", "storage.seqread.gbps")
    check(d["outcome"] != "quarantined" and "recent" not in r["own_level"],
          f"rule off: {d['outcome']} {r}")


def small_class_has_no_newest_runs_mean(env, rng):
    """A 5-node class's baseline median moves by a few percent when it is
    rebuilt or a software identity begins, and a node's newest runs share
    that move: its own level is judged run by run, with no mean of its
    newest runs (admission.own_level_recent)."""
    cls = "8xA40-PCIe/small"
    env.ingest_history(class_history(rng, nodes=5, cls=cls, prefix="sm"))
    for k in range(8):
        env.ingest_history(node_run(rng, "sm00", [980.0, 1500.0, 6.0, 300.0], cls=cls),
                           at=NOW - (k + 2) * 24 * HOUR)
    d = env.admit(node_run(rng, "sm00", [980.0, 1500.0, 6.0, 300.0], cls=cls), expect=0)
    r = result(d, "first", "storage.seqread.gbps")
    own = r.get("own_level") or {}
    check(own.get("runs", 0) >= 6 and "recent" not in own,
          f"a small class's newest runs averaged: {r}")


def first_storage_drop_is_rechecked(env, rng):
    """With storage a shared path (admission.shared_paths): a node's first
    confirmed drop there, shared by no peer yet, is held for a recheck (an
    hour of slow shared storage reaches one node first); its second within
    the baseline window is quarantined. Other domains are quarantined at
    once, and so is storage under the shipped policy, which names none."""
    shared = {"admission": {"shared_paths": ["storage"]}}
    env.ingest_history(class_history(rng))
    slow = [980, 1500, 4.5, 300.0]  # storage 25% down
    again = [0, 0, 4.5, 0]

    def admit(node, at, values=slow, confirm=again, only={"storage"}, expect=None, policy=shared):
        return env.admit(node_run(rng, node, values), node_run(rng, node, confirm, only=only),
                         expect=expect, at=at, policy=policy)

    d = admit("node90", NOW, expect=1)
    check(d["outcome"] == "held" and not d.get("case"), f"first storage drop: {d['outcome']} {d['notes']}")
    note = [n for n in d["notes"] if n.startswith("recheck: the first drop")]
    check(note and "storage.seqread.gbps" in note[0] and "shared path" in note[0]
          and "30 days" in note[0], f"first drop not said: {d['notes']}")
    # compute is the node's own: quarantined at once
    d = admit("node91", NOW + 100, [700, 1500, 6.0, 300.0], [700, 0, 0, 0], only={"compute"},
              expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"compute drop: {d['outcome']}")
    # the shipped policy names no shared path: storage too
    d = admit("node92", NOW + 2 * HOUR, expect=1, policy=None)
    check(d["outcome"] == "quarantined" and d["case"], f"no shared paths: {d['outcome']}")
    d = admit("node90", NOW + 24 * HOUR, expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"second drop: {d['outcome']} {d['notes']}")


def open_event_explains_only_a_shared_drop(env, rng):
    """While an event is open, a drop of its metric is declined only when
    another node screened within the breaker's window shares it, and only
    as deep as theirs: a node still under the bar once moved back up by the
    event's drop is the node's own."""
    env.ingest_history(class_history(rng))
    slow, again = [980, 1500, 6.0, 250.0], [0, 0, 0, 250.0]
    for i in range(3):
        node = f"node8{i}"
        d = env.admit(node_run(rng, node, slow), node_run(rng, node, again, only={"fabric"}),
                      at=NOW + i * 60)
    check(d["outcome"] == "admitted-warn", f"breaker did not trip: {d}")
    d = env.admit(node_run(rng, "node85", slow), node_run(rng, "node85", again, only={"fabric"}),
                  at=NOW + 600, expect=0)
    check(d["outcome"] == "admitted-warn", f"the event's drop quarantined: {d}")
    # node84 drops 30%, the event's nodes 17%: 210 / 0.83 is still under the bar
    deep = [980, 1500, 6.0, 210.0]
    d = env.admit(node_run(rng, "node84", deep),
                  node_run(rng, "node84", [0, 0, 0, 210.0], only={"fabric"}), at=NOW + 700,
                  expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"a deeper drop declined: {d}")
    check(any("moved back up by that much" in n for n in d["notes"]), f"not said why: {d['notes']}")
    # node87's samples scatter (the gate calls them unstable) where the
    # event's nodes' did not: an event moves a level, not a shape
    def scattered(node):
        run = node_run(rng, node, slow, only={"fabric"})
        run[0]["samples"] = [236.0, 238.0, 240.0, 242.0, 250.0, 258.0, 260.0, 262.0, 264.0]
        return run
    healthy = [m[3] for m in METRICS]
    for k in range(6):  # node87's own level: a drop the gate leaves unmeasured is judged there
        env.ingest_history(node_run(rng, "node87", healthy), at=NOW - (30 - k) * HOUR)
    for at in (NOW + 720, NOW + 760, NOW + 800):  # unstable counts once it repeats
        d = env.admit(node_run(rng, "node87", slow, only={"compute", "memory", "storage"}) +
                      scattered("node87"), scattered("node87"), at=at)
    check(d["outcome"] == "quarantined" and d["case"], f"a scattered run declined: {d}")
    check(any("not the shape of the samples" in n for n in d["notes"]), f"not said why: {d['notes']}")
    # two days on, the event is still open, and node86 drops alone
    later = NOW + 2 * 24 * HOUR
    d = env.admit(node_run(rng, "node86", slow), node_run(rng, "node86", again, only={"fabric"}),
                  at=later, expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"a lone drop declined: {d}")
    check(any("does not explain it" in n for n in d["notes"]), f"not said why: {d['notes']}")


# ---- partial regressions attributed, and drift under the pinned baseline -------------
OLD_FW, NEW_FW = "22.36.1010", "22.39.1002"


def profiled(recs, fw, rack):
    """Records carrying a node profile: its NICs' firmware, its rack."""
    prof = {"schema": "nodegate/profile/1", "gpu": {"model": "NVIDIA H100 80GB HBM3", "count": 8},
            "ib": {"devices": [{"name": f"mlx5_{k}", "fw_ver": fw} for k in range(2)]},
            "site": {"rack": rack}}
    for r in recs:
        r["profile"] = prof
    return recs


def partial_fleet(env, rng, shifted_fw):
    """30 nodes of one class with a healthy history; nodes 00-11 have since
    taken NIC firmware shifted_fw (the others keep OLD_FW), all racks mixed."""
    hist = class_history(rng, nodes=30)
    for r in hist:
        profiled([r], OLD_FW, f"r{int(r['node'][-2:]) % 5}")
    env.ingest_history(hist)
    fw = {f"node{i:02d}": (shifted_fw if i < 12 else OLD_FW) for i in range(30)}
    rack = {f"node{i:02d}": f"r{i % 5}" for i in range(30)}
    medians = [m[3] for m in METRICS]
    down = medians[:3] + [medians[3] * 0.88]  # 12% down on all-reduce

    def admit(node, values, confirm, at, expect=None):
        first = profiled(node_run(rng, node, values), fw[node], rack[node])
        again = (profiled(node_run(rng, node, confirm, only={"fabric"}), fw[node], rack[node])
                 if confirm else None)
        return env.admit(first, again, expect=expect, at=at)
    return admit, medians, down


def partial_regression_is_attributed(env, rng):
    """12 of 30 nodes on a new NIC firmware drop 12% on all-reduce: the
    breaker's event names the firmware they share, declines their
    quarantines, and a slow node on the old firmware is still quarantined."""
    admit, medians, down = partial_fleet(env, rng, NEW_FW)
    t = NOW
    outcomes = {}
    # the rollout's nodes interleaved with the rest of the class
    order = []
    for i in range(12):
        order.append(f"node{i:02d}")
        if i < 9:
            order += [f"node{12 + 2 * i:02d}", f"node{13 + 2 * i:02d}"]
    for node in order:
        t += 60
        shifted = int(node[-2:]) < 12
        d = admit(node, down if shifted else medians, down if shifted else None, t)
        outcomes[node] = d["outcome"]
        if node == "node03":
            tripped = d
    # the first alone is quarantined; the next two share its drop and are
    # rechecked; the fourth trips the breaker
    check([outcomes[f"node{i:02d}"] for i in range(3)] == ["quarantined", "held", "held"],
          f"before the trip: {outcomes}")
    check(all(outcomes[f"node{i:02d}"] == "admitted-warn" for i in range(3, 12)),
          f"the event's nodes were quarantined: {outcomes}")
    check(all(outcomes[f"node{i:02d}"] == "admitted" for i in range(12, 30)),
          f"the others: {outcomes}")
    check(any("they share ib.devices[].fw_ver=" + NEW_FW in n for n in tripped["notes"]),
          f"the trip names no field: {tripped['notes']}")
    # a slow node on the old firmware is the node's own fault: judged as before
    t += 60
    d = admit("node29", medians[:3] + [medians[3] * 0.80], medians[:3] + [medians[3] * 0.80], t,
              expect=1)
    check(d["outcome"] == "quarantined" and d["case"], f"unshifted slow node declined: {d}")
    check(any("does not share it" in n for n in d["notes"]), f"not said why: {d['notes']}")
    ev = env.json("fleet", "list", expect=0)["events"]
    check(len(ev) == 1, f"events: {ev}")
    e = ev[0]
    check(e["kind"] == "partial" and e["metric"] == "nccl.all_reduce.busbw", f"event: {e}")
    fields = [(f["field"], f["value"], f["others_value"]) for f in e["attribution"]["fields"]]
    check(fields == [("ib.devices[].fw_ver", NEW_FW, OLD_FW)], f"fields named: {fields}")
    # the count grew with the rollout: all twelve moved, the others did not
    check(e["attribution"]["shifted"] == 12 and e["attribution"]["others"] >= 3, f"counts: {e}")
    check(e["summary"].startswith("12 of 30 nodes of class " + CLASS + " down 12% on "
                                  "nccl.all_reduce.busbw since run node00-"), f"summary: {e}")
    check("since run " in e["summary"] and "they share ib.devices[].fw_ver=" + NEW_FW in e["summary"]
          and "the others do not" in e["summary"], f"summary: {e['summary']}")
    check("node29" not in e["nodes"] and "node03" in e["nodes"] and "node11" in e["nodes"],
          f"event's nodes: {e['nodes']}")
    text = env.run("fleet", "list", expect=0).stdout
    check(f"shared: ib.devices[].fw_ver={NEW_FW}" in text and "partial" in text,
          f"fleet list:\n{text}")
    check(f"the others: {OLD_FW}" in text, f"fleet list:\n{text}")


def partial_regression_without_shared_field(env, rng):
    """The same drop with every node on one firmware: the event says no
    shared field was found, and stands for the class's metric."""
    admit, medians, down = partial_fleet(env, rng, OLD_FW)
    t = NOW
    for i in range(4):
        t += 60
        admit(f"node{12 + i:02d}", medians, None, t, expect=0)
        t += 60
        d = admit(f"node{i:02d}", down, down, t)
    check(d["outcome"] == "admitted-warn", f"breaker did not trip: {d}")
    e = env.json("fleet", "list", expect=0)["events"][0]
    check(e["kind"] == "breaker" and e["attribution"]["status"] == "no-shared-field",
          f"event: {e}")
    check("no shared field found" in e["summary"] and e["attribution"]["fields"] == [],
          f"summary: {e}")
    text = env.run("fleet", "list", expect=0).stdout
    check("no shared field found" in text, f"fleet list:\n{text}")


def drift_below_pinned_baseline_is_told(env, rng):
    """Without floors, a rebuilt baseline 7% under the pinned one of its
    key opens a drift event (fleet list, audit, metrics); it declines
    nothing, and a rebuild back within clears it."""
    day = 24 * HOUR
    then = NOW - 40 * day
    env.ingest_history(class_history(rng), at=then)
    b = env.json("baseline", "build", "--class", CLASS, at=then + 60)
    rows = b["baselines"] if isinstance(b, dict) and "baselines" in b else b
    bid = [x for x in rows if x["metric"] == "nccl.all_reduce.busbw"][0]["id"]
    env.run("baseline", "pin", str(bid), "--name", "qualified", expect=0, at=then + 120)
    # a month on, the whole class measures 7% lower on all-reduce
    recs = class_history(rng)
    for r in recs:
        if r["metric"] == "nccl.all_reduce.busbw":
            r["samples"] = [v * 0.93 for v in r["samples"]]
    env.ingest_history(recs, at=NOW - day)
    env.run("baseline", "build", "--class", CLASS, at=NOW, expect=0)
    ev = env.json("fleet", "list", expect=0)["events"]
    drift = [e for e in ev if e["kind"] == "drift"]
    check(len(drift) == 1 and drift[0]["metric"] == "nccl.all_reduce.busbw", f"events: {ev}")
    d = drift[0]["detail"]
    check(abs(d["drop_percent"] - 7.0) < 0.5 and d["pinned"]["name"] == "qualified", f"drift: {d}")
    check("under its pinned baseline" in drift[0]["summary"], f"summary: {drift[0]}")
    # the other metrics did not drift
    check(not [e for e in ev if e["metric"] != "nccl.all_reduce.busbw"], f"events: {ev}")
    audit = env.json("audit", "show", "--limit", "50", expect=0)
    check("fleet-regression.open" in json.dumps(audit) and "drift" in json.dumps(audit),
          f"no audit entry: {json.dumps(audit)[:2000]}")
    m = env.run("metrics", "--scope", "fleet", expect=0, at=NOW).stdout
    check(any(l.startswith("nodegate_fleet_regression_open{") and 'kind="drift"' in l
              for l in m.splitlines()), f"metrics:\n{m}")
    # an admission says so, and declines nothing: a slow node is still quarantined
    d = env.admit(node_run(rng, "node90", [980, 1500, 6.0, 200.0]),
                  node_run(rng, "node90", [0, 0, 0, 200.0], only={"fabric"}), at=NOW + 60,
                  expect=1)
    check(d["outcome"] == "quarantined", f"drift declined a quarantine: {d}")
    check(any("baseline drift event" in n for n in d["notes"]), f"not said: {d['notes']}")
    # back within the drift fraction: a rebuild clears it
    recs = class_history(rng)
    env.ingest_history(recs, at=NOW + 2 * HOUR)
    env.run("baseline", "build", "--class", CLASS, at=NOW + 3 * HOUR, expect=0)
    ev = env.json("fleet", "list", expect=0)["events"]
    check(not [e for e in ev if e["kind"] == "drift"], f"drift not cleared: {ev}")


def tamper(env, sql):
    """Edits the store behind nodegate's back, as an intruder with access would."""
    if env.store.startswith("postgresql://"):
        subprocess.run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", env.store, "-c", sql],
                       check=True, capture_output=True)
    else:
        db = sqlite3.connect(env.store)
        db.execute(sql)
        db.commit()
        db.close()


def audit_finds_tampering(env, rng):
    env.ingest_history(class_history(rng))
    env.admit(node_run(rng, "node27", [m[4] for m in METRICS]),
              node_run(rng, "node27", [0, 0, 0, 255.0], only={"fabric"}))
    v = env.run("audit", "verify", expect=0).stdout
    check("verified" in v, f"verify: {v}")
    tamper(env, "UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
    p = env.run("audit", "verify", expect=1)
    check("entry 2 " in p.stdout + p.stderr, f"verify did not name entry 2: {p.stdout}{p.stderr}")


def audit_covers_state_and_its_tail(env, rng):
    env.ingest_history(class_history(rng))
    env.run("override", "node70", "--reason", "cable swapped, watch it", "--expires", "+2h",
            "--by", "alice", expect=0)
    bad = node_run(rng, "node70", [980, 1500, 6.0, 240.0])
    confirm = node_run(rng, "node70", [0, 0, 0, 241.0], only={"fabric"})
    env.admit(bad, confirm, expect=0, at=NOW + 60)
    v = env.json("audit", "verify", expect=0)
    check(v["verified"] and v["rows"] >= 2 and v["rows_changed"] == 0, f"verify: {v}")
    # The expiry pushed past the 90-day cap: the override would admit the
    # node with wrong results for most of a year.
    tamper(env, f"UPDATE overrides SET expires_at = {NOW + 200 * 24 * HOUR}")
    p = env.run("audit", "verify", expect=1)
    check("overrides row 1 was changed outside nodegate" in p.stdout, f"verify: {p.stdout}")
    v = env.json("audit", "verify", expect=1)
    check(not v["verified"] and v["rows_changed"] == 1 and v["first_bad"] is None, f"{v}")
    tamper(env, f"UPDATE overrides SET expires_at = {NOW + 2 * HOUR}")
    env.run("audit", "verify", expect=0)
    # A node state set to admitted by hand.
    tamper(env, "UPDATE node_states SET outcome = 'admitted' WHERE node = 'node70'")
    p = env.run("audit", "verify", expect=1)
    check("node_states row node70 was changed" in p.stdout, f"verify: {p.stdout}")


def audit_finds_a_cut_tail_with_meta_edited(env, rng):
    env.ingest_history(class_history(rng))
    env.admit(node_run(rng, "node27", [m[4] for m in METRICS]),
              node_run(rng, "node27", [0, 0, 0, 255.0], only={"fabric"}))
    env.run("audit", "verify", expect=0)
    # The last entry cut, and the head kept in meta moved back to match.
    tamper(env, "DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)")
    tamper(env, "UPDATE meta SET value = (SELECT CAST(max(seq) AS TEXT) FROM audit_log)"
                " WHERE key = 'audit_head_seq'")
    tamper(env, "UPDATE meta SET value = (SELECT hash FROM audit_log WHERE seq ="
                " (SELECT max(seq) FROM audit_log)) WHERE key = 'audit_head_hash'")
    p = env.run("audit", "verify", expect=1)
    check("BROKEN" in p.stdout and "anchored at entry" in p.stdout, f"verify: {p.stdout}")


def fabric_through_the_harness(env, rng):
    """This node's own admission with fabric measured by a tool through the
    harness (a stand-in all_reduce_perf): judged, confirmed by re-running
    the tool, and quarantined with the raw output's digest as evidence."""
    if not env.fake_tool:
        return
    diag = env.write([{"schema": "nodegate/record/1", "metric": "dcgm.diag", "samples": [],
                       "wrong": None, "diag": dict(DIAG)}])
    pol = env.write({"admission": {"exclusive_max_runnable": 100000}})

    def admit(value, mode="nccl", expect=None, at=NOW):
        p = env.run("--policy", pol, "admit", "--json", "--skip", "compute", "--skip", "memory",
                    "--skip", "storage", "--fabric", "nccl-tests", "--fabric-diag", diag,
                    "--raw-dir", os.path.join(env.tmp, "raw"), "--", env.fake_tool,
                    "-b", "1M", "-e", "1G", expect=expect, at=at,
                    env={"FAKE_MODE": mode, "FAKE_VALUE": str(value)})
        return json.loads(p.stdout)

    d = admit(240, expect=0)
    check(d["outcome"] == "admitted-warn", f"new class: {d['outcome']}")
    check(result(d, "first", "nccl.all_reduce.busbw")["status"] == "establishing", "establishing")
    history = [r for r in class_history(rng, cls=d["class"], software=d["software"])
               if r["domain"] == "fabric"]
    for r in history:
        r["samples"] = [v * 0.8 for v in r["samples"]]  # 300 GB/s in METRICS; 240 here
    env.ingest_history(history)

    d = admit(240, expect=0, at=NOW + 60)
    check(d["outcome"] == "admitted", f"healthy fabric: {d['outcome']} {d['results']}")

    d = admit(240, mode="crash", expect=1, at=NOW + 120)
    check(d["outcome"] == "held", f"a crashed tool: {d['outcome']}")
    # A crashed tool names no collective: the record says nothing was measured.
    check([r["gate"] for r in d["results"]] == ["no-measurement"], f"crash: {d['results']}")

    d = admit(200, expect=1, at=NOW + 180)
    check(d["outcome"] == "quarantined", f"slow fabric: {d['outcome']} {d['notes']}")
    check([r["stage"] for r in d["results"]] == ["first", "confirm"], f"stages {d['results']}")
    case = env.json("quarantine", "show", d["node"], expect=0)
    text = json.dumps(case)
    check("raw_sha256" in text and "stdout_file" in text, f"no raw evidence: {text[:2000]}")
    check(len(os.listdir(os.path.join(env.tmp, "raw"))) >= 8, "raw outputs not kept")


def bad_stores_are_clear_errors(env, rng):
    # A file that is not a database, and another program's database.
    junk = os.path.join(env.tmp, "junk.db")
    with open(junk, "wb") as f:
        f.write(bytes(rng.getrandbits(8) for _ in range(8192)))
    p = env.run("--store", junk, "admit", "--from", env.write([]), expect=3)
    check("not a" in p.stderr and junk in p.stderr, f"junk store: {p.stderr}")
    foreign = os.path.join(env.tmp, "foreign.db")
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE accounts (id INTEGER)")
    db.commit()
    db.close()
    p = env.run("--store", foreign, "quarantine", "list", expect=3)
    check("another program" in p.stderr and "accounts" in p.stderr, f"foreign: {p.stderr}")
    p = env.run("--store", "postgresql:///nodegate?host=/nonexistent-dir&connect_timeout=2",
                "quarantine", "list", expect=3)
    check("PostgreSQL" in p.stderr, f"unreachable: {p.stderr}")
    # libpq is loaded only for a postgresql:// store; without it, that store
    # says so (exit 3) and a SQLite store does not notice.
    nolib = {"NODEGATE_LIBPQ": os.path.join(env.tmp, "no-libpq.so.5")}
    p = env.run("--store", "postgresql:///nodegate?host=/nonexistent-dir", "quarantine", "list",
                expect=3, env=nolib)
    check("PostgreSQL client library cannot be loaded" in p.stderr and "libpq5" in p.stderr,
          f"no libpq: {p.stderr}")
    fresh = os.path.join(env.tmp, "fresh.db")
    env.run("--store", fresh, "override", "n1", "--reason", "r", "--expires", "1d", "--by", "a",
            expect=0, env=nolib)
    env.run("--store", fresh, "quarantine", "list", expect=0, env=nolib)
    # SQLite likewise: loaded when a SQLite store is opened, so a run that
    # opens none starts without it, and a missing one is a store error.
    nosqlite = {"NODEGATE_LIBSQLITE": os.path.join(env.tmp, "no-libsqlite3.so.0")}
    p = env.run("--store", fresh, "quarantine", "list", expect=3, env=nosqlite)
    check("SQLite library cannot be loaded" in p.stderr and "libsqlite3-0" in p.stderr,
          f"no SQLite: {p.stderr}")
    p = env.run("--version", expect=0, env=nosqlite)
    check(p.stdout.startswith("nodegate "), f"--version without SQLite: {p.stdout}")


def quarantine_lands_on_slurm(env, rng):
    """admit --land slurm drains a quarantined node through the stand-in
    scontrol with the case's reason, audited; release --land slurm resumes
    only that drain; an operator's drain is never touched."""
    if not env.fake_scontrol:
        return
    state = os.path.join(env.tmp, "slurm-node")

    def set_node(st, reason):
        with open(state, "w") as f:
            f.write(f"name=node05x\nstate={st}\nreason={reason}\nstar=0\n")

    def node():
        with open(state) as f:
            return dict(l.rstrip("\n").split("=", 1) for l in f)

    senv = {"NODEGATE_SCONTROL": env.fake_scontrol, "FAKE_SCONTROL_STATE": state}
    env.ingest_history(class_history(rng))
    # The records key the node by its stable id; Slurm knows it by name.
    node_id = "5a1d0c0ffee05x0000000000000005"
    run = named(node_run(rng, node_id, [m[3] for m in METRICS]), "node05x")
    run[1]["wrong"] = 3
    set_node("IDLE", "")
    p = env.run("admit", "--from", env.write(run), "--land", "slurm", "--json", expect=1, env=senv)
    d = json.loads(p.stdout)
    check(d["outcome"] == "quarantined", f"outcome {d['outcome']}")
    n = node()
    check(n["state"] == "IDLE+DRAIN", f"not drained by its scheduler name: {n}")
    # Either name finds the case; the id is in the JSON.
    for name in ("node05x", node_id):
        q = json.loads(env.run("quarantine", "show", name, "--json", expect=0).stdout)
        check(q["node"] == node_id and q["node_name"] == "node05x", f"show {name}: {q}")
    want = f"ng:quarantine memory gpumem.copy.gbps case {d['case']}: "
    check(n["reason"].startswith(want), f"reason {n['reason']!r}, wanted {want!r}...")
    audit = json.loads(env.run("audit", "show", "--subject", "node:node05x", "--json",
                               expect=0).stdout)["entries"]
    check(all(a["subject"] == "node:" + node_id for a in audit), f"subjects {audit}")
    lands = [a for a in audit if a["action"] == "land.drain"]
    check(lands, f"no land.drain audit entry: {audit}")
    detail = lands[0]["detail"]
    detail = json.loads(detail) if isinstance(detail, str) else detail
    check(detail["changed"] is True and detail["before"]["state"] == "IDLE"
          and detail["after"]["state"] == "IDLE+DRAIN", f"audit detail {detail}")
    # An operator drains it by hand meanwhile: release closes the case, never resumes.
    set_node("IDLE+DRAIN", "operator: reseat GPU 2")
    p = env.run("release", "node05x", "--manual", "--by", "alice", "--reason", "reseated",
                "--land", "slurm", expect=0, env=senv)
    check(node()["reason"] == "operator: reseat GPU 2", f"operator's drain touched: {node()}")
    check("left" in p.stderr, f"says it left the node drained: {p.stderr}")
    # A fresh quarantine, then release resumes nodegate's own drain.
    set_node("IDLE", "")
    run = named(node_run(rng, node_id, [m[3] for m in METRICS]), "node05x")
    run[1]["wrong"] = 2
    p = env.run("admit", "--from", env.write(run), "--land", "slurm", "--json", expect=1,
                env=senv, at=NOW + HOUR)
    d = json.loads(p.stdout)
    check(node()["state"] == "IDLE+DRAIN", f"second quarantine not drained: {node()}")
    p = env.run("release", "node05x", "--manual", "--by", "alice", "--reason", "replaced",
                "--land", "slurm", "--json", expect=0, env=senv, at=NOW + 2 * HOUR)
    r = json.loads(p.stdout)
    check(r["landing"]["result"] == "done" and r["landing"]["changed"] is True,
          f"landing {r.get('landing')}")
    check(node()["state"] == "IDLE" and node()["reason"] == "", f"not resumed: {node()}")
    audit = json.loads(env.run("audit", "show", "--subject", "node:node05x", "--json",
                               expect=0).stdout)["entries"]
    check(any(a["action"] == "land.resume" for a in audit), "no land.resume audit entry")
    # Records that give no scheduler name, of a node the store knows by none:
    # no drain on the stable id (it names no Slurm node), and it says why.
    set_node("IDLE", "")
    run = node_run(rng, "0badc0de0000000000000000000000aa", [m[3] for m in METRICS])
    run[1]["wrong"] = 2
    p = env.run("admit", "--from", env.write(run), "--land", "slurm", "--json", expect=1,
                env=senv, at=NOW + 3 * HOUR)
    check(node()["state"] == "IDLE", f"drained without a scheduler name: {node()}")
    check(any("no scheduler name" in n for n in json.loads(p.stdout)["notes"]),
          f"says why: {p.stdout}")


def withdrawn_case_resumes_on_slurm(env, rng):
    """A withdrawn case's drain is resumed through the stand-in scontrol by
    the admission that withdrew it, audited as land.resume."""
    if not env.fake_scontrol:
        return
    state = os.path.join(env.tmp, "slurm-node")
    with open(state, "w") as f:
        f.write("name=node07x\nstate=IDLE\nreason=\nstar=0\n")
    senv = {"NODEGATE_SCONTROL": env.fake_scontrol, "FAKE_SCONTROL_STATE": state}
    env.ingest_history(class_history(rng))
    slow = [980, 1500, 6.0, 250.0]  # all-reduce 17% down

    def admit(node, name, at):
        first = named(node_run(rng, node, slow), name)
        confirm = named(node_run(rng, node, [0, 0, 0, 250.0], only={"fabric"}), name)
        p = env.run("admit", "--from", env.write(first), "--confirm-from", env.write(confirm),
                    "--land", "slurm", "--json", expect=1, env=senv, at=at)
        return json.loads(p.stdout)

    d = admit("node07", "node07x", NOW)
    with open(state) as f:
        check("state=IDLE+DRAIN" in f.read(), "the first node was not drained")
    d = admit("node08", "node08x", NOW + 300)
    check(d["outcome"] == "held" and len(d["withdrawn"]) == 1, f"not withdrawn: {d}")
    with open(state) as f:
        text = f.read()
    check("state=IDLE\n" in text and "reason=\n" in text, f"not resumed: {text}")
    check(any("resumed from withdrawn case" in n for n in d["notes"]), f"not said: {d['notes']}")
    audit = env.json("audit", "show", "--subject", "node:node07", expect=0)["entries"]
    check(any(a["action"] == "land.resume" for a in audit), f"no land.resume: {audit}")


def named(run, name):
    for r in run:
        r["node_name"] = name
    return run


def ambiguous_name_is_refused(env, rng):
    """A scheduler name two nodes have had (a reinstall gave it a new id) is
    refused by every verb taking NODE, listing both ids; each id works."""
    env.ingest_history(class_history(rng))
    ids = ["aaaa0000000000000000000000000001", "bbbb0000000000000000000000000002"]
    for k, node_id in enumerate(ids):
        run = named(node_run(rng, node_id, [m[3] for m in METRICS]), "gpu-00053")
        run[1]["wrong"] = 1
        env.run("admit", "--from", env.write(run), expect=1, at=NOW + k)
    for verb in (["release", "gpu-00053", "--manual", "--by", "a", "--reason", "r"],
                 ["quarantine", "show", "gpu-00053"]):
        p = env.run(*verb, expect=2)
        check(all(i in p.stderr for i in ids) and "more than one node" in p.stderr,
              f"{verb[0]}: {p.stderr}")
    p = env.run("release", ids[0], "--manual", "--by", "a", "--reason", "r", expect=0)
    check("gpu-00053" in p.stdout, f"release prints the host name: {p.stdout}")


# ---- diagnostics without a baseline, the floor, overridden warnings --------------------------

def fresh_class_run(rng, node, cls):
    """A healthy run of a class with three nodes' history: no baseline yet."""
    return node_run(rng, node, [m[3] for m in METRICS], cls=cls)


def diagnostics_decide_without_baseline(env, rng):
    cls = "8xH100-SXM/2node/1rail/new"
    env.ingest_history(class_history(rng, nodes=3, cls=cls))
    # Three nodes would be a small class with a bar of its own: with none,
    # the class has no baseline at all, the case this is about.
    est = {"admission": {"small_class_min_nodes": 0}}
    # The control: the same run with its diagnostics passed establishes.
    d = env.admit(fresh_class_run(rng, "est0", cls), expect=0, policy=est)
    check(d["outcome"] == "admitted-warn", f"healthy run of a new class: {d['outcome']}")
    check(result(d, "first", "nccl.all_reduce.busbw")["status"] == "establishing", "control")

    run = fresh_class_run(rng, "est1", cls)
    run[3]["diag"]["memory"] = "fail"
    d = env.admit(run, expect=1, at=NOW + 60, policy=est)
    fab = result(d, "first", "nccl.all_reduce.busbw")
    check(d["outcome"] == "suspect" and d["confirm"] == ["fabric"],
          f"a failed diagnostic in a class with no baseline: {d['outcome']} {d['confirm']}")
    check(fab["status"] == "flagged" and fab["gate"] == "diag-failed", f"failed diag: {fab}")
    check(any("memory" in n and "no baseline" in n for n in d["notes"]), f"notes {d['notes']}")
    # Confirmed with the diagnostic failing again: the same domain failed twice.
    again = [r for r in fresh_class_run(rng, "est1", cls) if r["domain"] == "fabric"]
    again[0]["diag"]["memory"] = "fail"
    d = env.admit(run, again, expect=1, at=NOW + 120, policy=est)
    check(d["outcome"] == "quarantined", f"failed twice without a baseline: {d['outcome']}")

    for i, (what, edit) in enumerate((("skipped", lambda r: r["diag"].update(nccl_tests="skip")),
                                      ("absent", lambda r: r.pop("diag")),
                                      ("one missing", lambda r: r["diag"].pop("pcie")),
                                      ("malformed", lambda r: r["diag"].update(pcie="maybe")))):
        run = fresh_class_run(rng, f"est{2 + i}", cls)
        edit(run[3])
        d = env.admit(run, expect=1, at=NOW + 300 + i, policy=est)
        fab = result(d, "first", "nccl.all_reduce.busbw")
        check(d["outcome"] == "held" and fab["status"] == "unmeasured",
              f"diagnostics {what} in a class with no baseline: {d['outcome']} {fab}")
    # Nothing judged on failed or missing diagnostics joined the class.
    b = env.json("baseline", "build", "--class", cls, at=NOW + 900)
    nodes = {x["metric"]: x["n_nodes"] for x in b["baselines"]}
    check(nodes.get("nccl.all_reduce.busbw") == 4, f"fabric baseline nodes {nodes}")


def diagnostics_decide_after_baseline_expire(env, rng):
    env.ingest_history(class_history(rng))
    env.run("baseline", "expire", CLASS, "--reason", "driver upgrade", expect=0, at=NOW + 10)
    run = node_run(rng, "exp1", [m[3] for m in METRICS])
    run[3]["diag"]["pcie"] = "fail"
    d = env.admit(run, expect=1, at=NOW + 20)
    check(d["outcome"] == "suspect", f"a failed diagnostic after baseline expire: {d['outcome']}")


def floor_decides_over_the_peers(env, rng):
    env.ingest_history(class_history(rng))
    # 282 GB/s is 94% of the class median, over the peers' 90% bar (270),
    # and under a floor of 285: the floor decides.
    values = [980.0, 1500.0, 6.0, 282.0]
    d = env.admit(node_run(rng, "floor0", values), expect=0)
    check(d["outcome"] == "admitted-warn", f"without the floor: {d['outcome']}")
    pol = env.write({"floors": {"nccl.all_reduce.busbw": 285}})
    p = env.run("--policy", pol, "admit", "--json", "--from",
                env.write(node_run(rng, "floor1", values)), expect=1, at=NOW + 60)
    d = json.loads(p.stdout)
    fab = result(d, "first", "nccl.all_reduce.busbw")
    check(d["outcome"] == "suspect" and d["confirm"] == ["fabric"], f"under the floor: {d}")
    check(fab["status"] == "flagged" and abs(fab["bar"] - 285.0) < 1e-9 and fab["floor"] == 285,
          f"the floor is the bar: {fab}")


def overridden_warning_does_not_feed_baseline(env, rng):
    env.ingest_history(class_history(rng))
    warn = [980.0, 1500.0, 6.0, 282.0]  # 94%: the gate warns, the flag rule passes it
    env.run("override", "ovr1", "--reason", "known slow link, replacement ordered",
            "--expires", "+4h", "--by", "alice", expect=0)
    d = env.admit(node_run(rng, "ovr1", warn), expect=0, at=NOW + 60)
    check(d["outcome"] == "admitted-warn", f"overridden warning: {d['outcome']}")
    b = env.json("baseline", "build", "--class", CLASS, at=NOW + 120)
    nodes = {x["metric"]: x["n_nodes"] for x in b["baselines"]}
    check(nodes == {m[0]: 20 for m in METRICS}, f"an overridden run fed the baseline: {nodes}")
    # The control: the same warning without an override joins the class.
    d = env.admit(node_run(rng, "ovr2", warn), expect=0, at=NOW + 180)
    check(d["outcome"] == "admitted-warn", f"warning: {d['outcome']}")
    b = env.json("baseline", "build", "--class", CLASS, at=NOW + 240)
    nodes = {x["metric"]: x["n_nodes"] for x in b["baselines"]}
    check(nodes == {m[0]: 21 for m in METRICS}, f"a plain warning did not feed: {nodes}")


def baseline_of_another_unit_is_incomparable(env, rng):
    env.ingest_history(class_history(rng))
    # A run in the class's unit builds the baseline (GB/s) ...
    env.admit(node_run(rng, "unit0", [m[3] for m in METRICS]), expect=0)
    # ... and a run that says MB/s is not compared with it, its class the same.
    run = node_run(rng, "unit1", [m[3] for m in METRICS])
    run[3]["unit"] = "MB/s"
    run[3]["samples"] = [v * 1000 for v in run[3]["samples"]]
    d = env.admit(run, expect=1)
    fab = result(d, "first", "nccl.all_reduce.busbw")
    check(d["outcome"] == "held" and fab["gate"] == "incomparable" and fab["status"] == "unmeasured",
          f"a MB/s record against a GB/s baseline: {d['outcome']} {fab}")
    check(any("MB/s" in n and "GB/s" in n for n in d["notes"]), f"no reason given: {d['notes']}")


SCENARIOS = [
    quarantine_lands_on_slurm,
    withdrawn_case_resumes_on_slurm,
    ambiguous_name_is_refused,
    node27_flagged_on_fabric_only,
    node27_confirmed_low_is_quarantined,
    node27_recovered_is_admitted_with_warning,
    integrity_failure_quarantines_at_once,
    unmeasured_is_held,
    healthy_node_is_admitted_and_feeds_baseline,
    new_class_establishes,
    small_class_is_judged,
    small_class_pools_its_family,
    software_change_starts_a_new_baseline,
    release_needs_two_passes,
    override_admits_by_name_until_expiry,
    circuit_breaker_stops_fleet_wide_quarantine,
    breaker_event_is_about_one_metric,
    incident_is_rechecked_not_confirmed,
    first_node_of_incident_is_withdrawn,
    own_level_drop_is_flagged,
    sustained_own_drop_is_flagged,
    small_class_has_no_newest_runs_mean,
    first_storage_drop_is_rechecked,
    open_event_explains_only_a_shared_drop,
    partial_regression_is_attributed,
    partial_regression_without_shared_field,
    drift_below_pinned_baseline_is_told,
    audit_finds_tampering,
    audit_covers_state_and_its_tail,
    audit_finds_a_cut_tail_with_meta_edited,
    fabric_through_the_harness,
    bad_stores_are_clear_errors,
    diagnostics_decide_without_baseline,
    diagnostics_decide_after_baseline_expire,
    floor_decides_over_the_peers,
    overridden_warning_does_not_feed_baseline,
    baseline_of_another_unit_is_incomparable,
]


# ---- stores --------------------------------------------------------------------------------

def pg_fresh(uri_file, name):
    if not uri_file or not os.path.exists(uri_file):
        print(f"SKIP: no PostgreSQL test server ({uri_file} missing)")
        sys.exit(77)
    uri = open(uri_file).read().strip()
    db = ("ng_" + name)[:60].lower()
    for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"):
        subprocess.run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", uri, "-c", sql], check=True,
                       capture_output=True)
    base, _, query = uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + db + ("?" + query if query else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fake-tool", help="the stand-in tool of tests/standins")
    ap.add_argument("--fake-scontrol", help="the stand-in scontrol of tests/standins")
    ap.add_argument("only", nargs="*")
    a = ap.parse_args()
    backend = os.environ.get("NODEGATE_TEST_BACKEND", "sqlite")
    failed = 0
    for sc in SCENARIOS:
        if a.only and sc.__name__ not in a.only:
            continue
        with tempfile.TemporaryDirectory(prefix="nodegate-flow-") as tmp:
            if backend == "postgres":
                store = pg_fresh(os.environ.get("NODEGATE_TEST_PG_URI_FILE"), sc.__name__)
            else:
                store = os.path.join(tmp, "store", "nodegate.db")
            try:
                sc(Env(a.nodegate, tmp, store, a.fake_tool, a.fake_scontrol),
                   random.Random(sc.__name__))
                print(f"ok   {sc.__name__} ({backend})")
            except (Failure, subprocess.SubprocessError) as e:
                failed += 1
                print(f"FAIL {sc.__name__} ({backend}): {e}")
    print(f"{'FAILED' if failed else 'passed'}: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

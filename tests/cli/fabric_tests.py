#!/usr/bin/env python3
"""`nodegate fabric` on the stand-in fleet (src/synth/fabric_synth.c, run as
srun, all_reduce_perf and ib_write_bw through symlinks first on PATH): a slow
node found by bisection in gangs of 16 and 64, a healthy gang of 8 and
nodegate's own overhead, a socket fallback, a counter that rises during a
test, a node that does not answer, a slow rail (per-HCA perftest in a pair,
and --per-rail in a gang), a bad peer not blamed on the candidate, a slow
candidate, the help-text trap, a launcher template, records in the store,
peers from the store, and a paired test confirming admit's fabric domain.

Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

NODEGATE = SYNTH = None
HCAS8 = ["mlx5_%d" % i for i in range(8)]
COUNTERS = ["symbol_error", "link_downed", "port_rcv_errors", "port_xmit_discards"]


class Fleet:
    def __init__(self, tmp, cfg, nodes=(), hcas=("mlx5_0",)):
        self.tmp = tmp
        self.bin = os.path.join(tmp, "bin")
        os.makedirs(self.bin, exist_ok=True)
        for t in ("srun", "all_reduce_perf", "ib_write_bw"):
            p = os.path.join(self.bin, t)
            if not os.path.exists(p):
                os.symlink(SYNTH, p)
        self.root = os.path.join(tmp, "nodes")
        cfg = dict(cfg)
        cfg.setdefault("seconds", 0.01)
        cfg.setdefault("hcas", list(hcas))
        cfg["root"] = self.root
        for n in nodes:
            for h in cfg["hcas"]:
                port = os.path.join(self.root, n, "sys/class/infiniband", h, "ports/1")
                os.makedirs(os.path.join(port, "counters"), exist_ok=True)
                for f, v in (("state", "4: ACTIVE"), ("phys_state", "5: LinkUp"),
                             ("rate", "400 Gb/sec (4X NDR)"), ("link_layer", "InfiniBand")):
                    with open(os.path.join(port, f), "w") as fh:
                        fh.write(v + "\n")
                for c in COUNTERS:
                    with open(os.path.join(port, "counters", c), "w") as fh:
                        fh.write("0\n")
        self.fleet = os.path.join(tmp, "fleet.json")
        with open(self.fleet, "w") as f:
            json.dump(cfg, f)

    def run(self, *args, env=None, timeout=120):
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("NODEGATE_") or k.startswith("SLURM"):
                del e[k]
        e["PATH"] = self.bin + ":" + os.environ.get("PATH", "/usr/bin:/bin")
        e["NODEGATE_FABRIC_SYNTH"] = self.fleet
        e["TMPDIR"] = self.tmp
        e.update(env or {})
        t0 = time.monotonic()
        p = subprocess.run([NODEGATE] + list(args), env=e, capture_output=True, timeout=timeout)
        r = type("R", (), {})()
        r.exit, r.seconds = p.returncode, time.monotonic() - t0
        r.out, r.err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        try:
            r.json = json.loads(r.out, object_pairs_hook=unique_keys)
        except ValueError:
            r.json = None
        return r


def unique_keys(pairs):
    """Every document nodegate writes has each key once: nodegate refuses a
    repeated key in what it reads, so it must never write one."""
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise AssertionError(f"key {k!r} written twice in one object")
        seen.add(k)
    return dict(pairs)


def verdicts(doc):
    return {v["node"]: v for v in doc["verdicts"]}


def check(cond, what, r=None):
    if not cond:
        extra = ""
        if r is not None:
            extra = "\n--- exit %s\n--- stdout\n%s\n--- stderr\n%s" % (r.exit, r.out[-3000:], r.err[-2000:])
        raise AssertionError(what + extra)


def nodes(prefix, n):
    return ["%s%02d" % (prefix, i) for i in range(1, n + 1)]


def t_gang16_slow(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"g07": {"slow": 0.7}}}, nodes("g", 16))
    r = f.run("fabric", "gang", "g[01-16]", "--expect-busbw", "180", "--json")
    check(r.exit == 1 and r.json, "exit 1 with JSON", r)
    v = verdicts(r.json)
    check(v["g07"]["verdict"] == "slow", "g07 is slow", r)
    check(all(v[n]["verdict"] == "pass" for n in v if n != "g07"), "the other 15 pass", r)
    check(r.json["rounds"] <= 5, "16 nodes in at most 5 rounds, got %s" % r.json["rounds"], r)
    # Every test records the variable it changed; the last names its known-good peer.
    check(all(t.get("changed") for t in r.json["tests"]), "each test says what changed", r)
    check(any("known-good" in t["changed"] and "g07" in t["nodes"] for t in r.json["tests"]),
          "g07 was measured alone beside a known-good node", r)
    text = f.run("fabric", "gang", "g[01-16]", "--expect-busbw", "180")
    check("g07" in text.out and "slow" in text.out, "the text names the slow node", text)


def t_gang64_seven_rounds(tmp):
    for bad in ("n01", "n33", "n64"):
        f = Fleet(tmp, {"busbw": 180, "nodes": {bad: {"slow": 0.5}}}, [])
        r = f.run("fabric", "gang", "n[01-64]", "--expect-busbw", "180", "--json", "--no-counters")
        check(r.json and r.json["rounds"] <= 7, "%s: at most 7 rounds" % bad, r)
        v = verdicts(r.json)
        check([n for n in v if v[n]["verdict"] != "pass"] == [bad], "%s alone found" % bad, r)


def t_gang8_healthy_overhead(tmp):
    f = Fleet(tmp, {"busbw": 180, "seconds": 0.5}, nodes("h", 8), HCAS8)
    r = f.run("fabric", "gang", "h[01-08]", "--expect-busbw", "180", "--hcas", ",".join(HCAS8), "--json")
    check(r.exit == 0, "a healthy gang of 8 exits 0", r)
    check(r.json["rounds"] == 1 and len(r.json["tests"]) == 1, "one test, one round", r)
    check(all(v["verdict"] == "pass" for v in r.json["verdicts"]), "every node passes", r)
    t = r.json["tests"][0]
    check(t["transport"]["kind"] == "ib" and t["transport"]["gdr"] is True, "the IB path with GDR", r)
    check(r.json["overhead_s"] < 60, "overhead under 60 s: %s" % r.json["overhead_s"], r)
    print("    gang of 8: %.2f s in all, %.2f s tests, %.2f s nodegate's own (counters read on "
          "every node before and after)" % (r.json["wall_s"], r.json["tests_s"], r.json["overhead_s"]))


def t_socket_fallback(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"s03": {"socket": True}}}, [])
    r = f.run("fabric", "gang", "s[01-04]", "--expect-busbw", "180", "--json", "--no-counters")
    first = r.json["tests"][0]
    check(first["verdict"] == "incomparable", "the gang's run is incomparable", r)
    check("sockets" in first["reason"] and "eth0" in first["reason"], "the reason names the fallback", r)
    # The bandwidth printed was fine: the transport, not the number, caught it.
    check(first["busbw"] >= 162, "the fallback printed a healthy-looking figure", r)
    v = verdicts(r.json)
    check(v["s03"]["verdict"] == "held-unmeasured" and "sockets" in v["s03"]["reason"],
          "the node that fell back is held, and why", r)
    check(r.exit == 1, "exit 1", r)
    # Pair through the socket node: also incomparable, and the candidate is held, not passed.
    p = f.run("fabric", "pair", "s03", "--peers", "s01,s02", "--expect-busbw", "180", "--json",
              "--no-counters")
    check(p.json["verdict"] == "held" and p.exit == 1, "a pair over sockets holds", p)


def t_foreign_hca(tmp):
    f = Fleet(tmp, {"busbw": 180}, [], ("mlx5_0", "mlx5_9"))
    r = f.run("fabric", "gang", "x1,x2", "--expect-busbw", "180", "--hcas", "mlx5_0", "--json",
              "--no-counters")
    check(r.json["tests"][0]["verdict"] == "incomparable", "an HCA the class lacks: incomparable", r)
    check("mlx5_9" in r.json["tests"][0]["reason"], "the reason names it", r)


def t_counter_rises(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"c03": {"rise": "mlx5_0/symbol_error"}}}, nodes("c", 4))
    r = f.run("fabric", "gang", "c[01-04]", "--expect-busbw", "180", "--json")
    v = verdicts(r.json)
    check(v["c03"]["verdict"] == "pass-counters-rose", "c03 passed with risen counters", r)
    rose = v["c03"]["ports_changed"]
    check(rose and rose[0]["counter"] == "symbol_error" and rose[0]["after"] > rose[0]["before"],
          "the counter is named with before and after", r)
    check(all(v[n]["verdict"] == "pass" for n in ("c01", "c02", "c04")), "the others pass", r)
    check(r.exit == 1, "risen counters are not a clean pass", r)


def t_no_answer(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"d05": {"dead": True}}}, [])
    r = f.run("fabric", "gang", "d[01-08]", "--expect-busbw", "180", "--timeout", "2", "--json",
              "--no-counters", timeout=200)
    v = verdicts(r.json)
    check(v["d05"]["verdict"] == "held-unmeasured", "the node that does not answer is held", r)
    check("timed out" in v["d05"]["reason"], "because its test timed out: " + v["d05"]["reason"], r)
    check(all(v[n]["verdict"] == "pass" for n in v if n != "d05"), "the others pass", r)
    check(r.json["tests"][0]["verdict"] == "no-measurement", "the gang's test measured nothing", r)


def t_slow_between_halves(tmp):
    # A bad pair split across the halves: the gang is slow, both halves pass.
    f = Fleet(tmp, {"busbw": 180, "bad_pairs": [["b01", "b04"]]}, [])
    r = f.run("fabric", "gang", "b[01-04]", "--expect-busbw", "180", "--json", "--no-counters")
    check(r.exit == 1 and r.json["verdict"] == "fail" and r.json["unattributed"] == [0],
          "the gang fails, no node is blamed", r)
    check(all(v["verdict"] == "pass" for v in r.json["verdicts"]), "each node passed its half", r)


def t_help_trap(tmp):
    f = Fleet(tmp, {"busbw": 180}, [])
    r = f.run("fabric", "gang", "t1,t2", "--expect-busbw", "180", "--nccl", "all_reduce_perf -b 1G -I 1",
              "--json", "--no-counters")
    check(r.exit == 1 and "-I" in r.json.get("not_run", ""), "an option the tool does not list: not run", r)
    check(all(v["verdict"] == "held-untested" for v in r.json["verdicts"]), "every node held", r)


def t_launcher_template(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"l2": {"slow": 0.5}}}, [])
    other = os.path.join(tmp, "other")
    os.makedirs(other, exist_ok=True)
    launcher = os.path.join(other, "srun")
    os.symlink(SYNTH, launcher)
    r = f.run("fabric", "gang", "l1,l2,l3,l4", "--expect-busbw", "180", "--launcher",
              launcher + " -w {nodes} --ntasks={n}", "--json", "--no-counters")
    check(verdicts(r.json)["l2"]["verdict"] == "slow", "found through the template launcher", r)
    check(r.json["tests"][0]["record"]["tool"]["argv"][:3] == [launcher, "-w", "l1,l2,l3,l4"],
          "the record keeps the launched command line", r)


def t_slow_rail_pair(tmp):
    f = Fleet(tmp, {"busbw": 180, "rail_gbps": 390, "nodes": {"cand": {"rails": {"mlx5_3": 0.5}}}},
              ["cand", "pa", "pb"], HCAS8)
    r = f.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--hcas",
              ",".join(HCAS8), "--perftest-seconds", "0.1", "--json")
    check(r.json and r.json["verdict"] == "slow-rail" and r.exit == 1, "a slow rail on the candidate", r)
    allr = [t for t in r.json["tests"] if t["test"] == "all_reduce"]
    check(allr and all(t["verdict"] == "pass" for t in allr), "while the all-reduce looks fine", r)
    check(r.json["slow_rails"] == [{"hca": "mlx5_3", "blame": "candidate"}], "mlx5_3, the candidate's", r)
    pt = [t for t in r.json["tests"] if t["test"] == "ib_write_bw"]
    check(len(pt) == 2 * 2 * 8, "per HCA, both directions, both peers", r)
    changed = {t["changed"].split(":")[0] for t in pt}
    check({"hca", "direction", "peer"} <= changed, "each names the one variable changed", r)


def t_slow_rail_gang(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"r06": {"rails": {"mlx5_2": 0.5}}}}, [], HCAS8)
    r = f.run("fabric", "gang", "r[01-08]", "--expect-busbw", "180", "--hcas", ",".join(HCAS8),
              "--per-rail", "--json", "--no-counters")
    v = verdicts(r.json)
    check(r.json["tests"][0]["verdict"] == "pass", "the all-rail all-reduce passes", r)
    check(v["r06"]["verdict"] == "slow-rail" and v["r06"]["slow_rails"] == ["mlx5_2: slow"],
          "r06's mlx5_2 stands out per rail", r)
    check(all(v[n]["verdict"] == "pass" for n in v if n != "r06"), "the others pass", r)


def t_bad_peer(tmp):
    f = Fleet(tmp, {"busbw": 180, "bad_pairs": [["cand", "pa"]]}, ["cand", "pa", "pb"])
    r = f.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--json")
    check(r.exit == 0 and r.json["verdict"] == "pass", "the candidate is not blamed", r)
    check(r.json["blame"] == "peer-or-path" and r.json["blamed_peer"] == "pa", "peer pa or its path", r)
    check(len(r.json["tests"]) == 2, "no A-B test needed", r)


def t_slow_candidate(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"cand": {"slow": 0.6}}}, ["cand", "pa", "pb"])
    r = f.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--json")
    check(r.exit == 1 and r.json["verdict"] == "slow" and r.json["blame"] == "candidate", "candidate", r)
    check([t["changed"].split(":")[0] for t in r.json["tests"]] == ["none", "peer", "candidate"],
          "first pair, peer changed, candidate changed", r)
    # Peers slow together too: not a known-good pair, the candidate is held, not accused.
    f = Fleet(tmp, {"busbw": 180, "nodes": {"cand": {"slow": 0.6}, "pa": {"slow": 0.6}}}, [])
    r = f.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--json",
              "--no-counters")
    check(r.json["verdict"] == "held" and r.json["blame"] == "unknown" and r.exit == 1,
          "peers that are slow together prove nothing: held, the candidate not accused", r)
    check("not a known-good pair" in r.json["because"], "and says why", r)


def t_store(tmp):
    f = Fleet(tmp, {"busbw": 180, "nodes": {"q03": {"slow": 0.5}}}, nodes("q", 4))
    db = os.path.join(tmp, "store.db")
    r = f.run("--store", db, "fabric", "gang", "q[01-04]", "--expect-busbw", "180", "--json")
    check(r.exit == 1 and r.json.get("run_id"), "stored with a run id", r)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT node, metric, body FROM records WHERE run_id = ?", (r.json["run_id"],)).fetchall()
    ids = [json.loads(b)["id"] for _, _, b in rows]
    check(len(set(ids)) == len(ids), "every record has its own id: %s" % ids, r)
    check(len(rows) == len(r.json["tests"]), "one record per test (%d, %d)" % (len(rows), len(r.json["tests"])), r)
    body = json.loads(rows[0][2])
    check(body["metric"] == "nccl.all_reduce.busbw" and body["fabric"]["changed"] == "the whole gang"
          and body["conditions"]["transport"]["kind"] == "ib", "the record keeps its fabric evidence", r)
    # Peers from the store: admitted nodes of the candidate's class, never a quarantined one.
    now = int(time.time())
    for n, outcome in (("q01", "admitted"), ("q02", "admitted"), ("q04", "quarantined"), ("q09", "admitted")):
        con.execute("INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at, run_id)"
                    " VALUES (?, 'k', 'sw', ?, ?, 0, 'x')", (n, outcome, now - (1 if n == "q09" else 5 if n == "q01" else 9)))
    con.execute("INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at, run_id)"
                " VALUES ('q03', 'k', 'sw', 'suspect', ?, 0, 'x')", (now,))
    con.commit()
    con.close()
    p = f.run("--store", db, "fabric", "pair", "q03", "--expect-busbw", "180", "--json")
    check(p.json and p.json["peers"] == ["q09", "q01"], "the two newest admitted peers", p)
    check(p.json["verdict"] == "slow" and p.json["blame"] == "candidate", "q03 blamed with store peers", p)
    none = f.run("--store", os.path.join(tmp, "absent.db"), "fabric", "pair", "q03", "--expect-busbw", "180")
    check(none.exit == 3, "a store that is not there is refused (exit 3)", none)


def t_store_baselines(tmp):
    """Without --expect-busbw, each group size is judged against the store's
    baseline of its topology (CLASS/Nnode/Rrail); a size without one is held."""
    f = Fleet(tmp, {"busbw": 180, "nodes": {"b3": {"slow": 0.6}}}, [])
    db = os.path.join(tmp, "b.db")
    recs = os.path.join(tmp, "base.jsonl")
    with open(recs, "w") as fh:
        for key in ("lab/4node/1rail", "lab/2node/1rail"):
            for i in range(12):
                fh.write(json.dumps({"schema": "nodegate/record/1", "node": "ref-%02d" % i, "class": key,
                                     "domain": "fabric", "metric": "nccl.all_reduce.busbw", "unit": "GB/s",
                                     "samples": [180 * (1 + 0.003 * (k - 1 + (i % 4) * 0.25)) for k in range(3)],
                                     "wrong": 0}) + "\n")
    ing = f.run("--store", db, "ingest", "--accepted", recs)
    check(ing.exit == 0, "reference runs ingested", ing)
    for key in ("lab/4node/1rail", "lab/2node/1rail"):
        b = f.run("--store", db, "baseline", "build", "--class", key, "--metric", "nccl.all_reduce.busbw")
        check(b.exit == 0, "baseline of %s built" % key, b)
    r = f.run("--store", db, "fabric", "gang", "b1,b2,b3,b4", "--class", "lab", "--hcas", "mlx5_0",
              "--json", "--no-counters")
    v = verdicts(r.json)
    check(v["b3"]["verdict"] == "slow" and all(v[n]["verdict"] == "pass" for n in ("b1", "b2", "b4")),
          "b3 found against the store's baselines", r)
    t0 = r.json["tests"][0]
    check(t0["topology"] == "lab/4node/1rail" and abs(t0["expected"] - 180) < 2, "the 4-node baseline", r)
    f = Fleet(tmp, {"busbw": 180}, [])  # the same store, a healthy fleet
    none = f.run("--store", db, "fabric", "gang", "b[1-8]", "--class", "lab", "--hcas", "mlx5_0",
                 "--json", "--no-counters")
    # No baseline for 8 nodes: the whole gang is unjudged. Its halves are judged
    # against the 4-node baseline and pass, but the gang does not.
    check(none.exit == 1 and none.json["verdict"] == "fail" and none.json["unattributed"] == [0],
          "no baseline for 8 nodes: the gang is not passed", none)
    check("no baseline" in none.json["tests"][0]["reason"], "and the reason says so", none)
    lone = f.run("--store", db, "fabric", "gang", "b1,b2,b3,b4", "--class", "other", "--json", "--no-counters")
    check(all(v["verdict"] == "held-untested" for v in lone.json["verdicts"]),
          "no baseline at any size: every node held", lone)


def t_admit_confirm(tmp):
    """admit's fabric domain, flagged in its first run, confirmed by a paired test."""
    diag = os.path.join(tmp, "diag.json")
    with open(diag, "w") as fh:
        json.dump([{"diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}], fh)
    slow = Fleet(tmp, {"busbw": 180, "nodes": {"cand": {"slow": 0.8}}}, [])
    env = {"SLURMD_NODENAME": "cand"}
    first = os.path.join(tmp, "first.json")
    r = slow.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--no-counters",
                 "--diag", diag, "--out", first, env=env)
    check(os.path.exists(first), "--out wrote the record", r)
    rec = json.load(open(first))[0]
    check(rec["node"] and rec["class"] and rec["fabric"]["blame"] == "candidate", "stamped, with its evidence", r)
    db = os.path.join(tmp, "admit.db")
    peers = os.path.join(tmp, "peers.jsonl")
    with open(peers, "w") as fh:
        for i in range(12):
            p = {k: rec[k] for k in ("schema", "class", "software", "domain", "metric", "unit", "diag")}
            p["node"] = "peer-%02d" % i
            p["samples"] = [180 * (1 + 0.002 * (k - 4 + (i % 3) * 0.5)) for k in range(9)]
            p["wrong"] = 0
            fh.write(json.dumps(p) + "\n")
    ing = slow.run("--store", db, "ingest", "--accepted", peers, env={"NODEGATE_NOW": str(int(time.time()) - 86400)})
    check(ing.exit == 0, "peers ingested", ing)
    again = os.path.join(tmp, "again.json")
    slow.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--no-counters",
             "--diag", diag, "--out", again, env=env)
    a = slow.run("--store", db, "admit", "--json", "--from", first, "--confirm-from", again)
    check(a.json and a.json.get("outcome") == "quarantined", "slow in both paired tests: quarantined", a)
    q = slow.run("--store", db, "quarantine", "show", rec["node"], "--json")
    text = q.out
    check(q.exit == 0 and '"blame"' in text and '"changed"' in text and '"pa"' in text and '"pb"' in text
          and '"transport"' in text, "the case carries the peers, the path and the variable changed", q)
    ok = Fleet(tmp, {"busbw": 180}, [])
    fixed = os.path.join(tmp, "fixed.json")
    ok.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180", "--no-counters",
           "--diag", diag, "--out", fixed, env=env)
    db2 = os.path.join(tmp, "admit2.db")
    slow.run("--store", db2, "ingest", "--accepted", peers, env={"NODEGATE_NOW": str(int(time.time()) - 86400)})
    b = slow.run("--store", db2, "admit", "--json", "--from", first, "--confirm-from", fixed)
    check(b.json and b.json.get("outcome") == "admitted-warn", "recovered in the paired test: admitted-warn", b)
    wrong_host = slow.run("fabric", "pair", "cand", "--peers", "pa,pb", "--expect-busbw", "180",
                          "--out", os.path.join(tmp, "x.json"))
    check(wrong_host.exit == 2, "--out is refused off the candidate", wrong_host)


def t_usage(tmp):
    f = Fleet(tmp, {"busbw": 180}, [])
    for args in (["fabric", "gang", "a,b"], ["fabric", "gang", "--expect-busbw", "x", "a,b"],
                 ["fabric", "pair", "--expect-busbw", "180"], ["fabric", "gang", "n[3-1]", "--expect-busbw", "1"],
                 ["fabric", "nope"], ["fabric", "gang", "a,b", "--expect-busbw", "1", "--per-rail"]):
        r = f.run(*args)
        check(r.exit == 2 and r.err.strip(), "usage error for %s" % args, r)
    h = f.run("fabric", "--help")
    check(h.exit == 0 and "gang NODELIST" in h.out and "incomparable" in h.out, "help", h)


def t_ports(tmp):
    f = Fleet(tmp, {"busbw": 180}, ["p1"], ("mlx5_0", "mlx5_1"))
    root = os.path.join(f.root, "p1")
    with open(os.path.join(root, "sys/class/infiniband/mlx5_1/ports/1/counters/link_downed"), "w") as fh:
        fh.write("garbage\n")
    r = f.run("fabric", "ports", "--root", root, "--json")
    ports = r.json["ports"]
    check([p["hca"] for p in ports] == ["mlx5_0", "mlx5_1"] and ports[0]["rate_gbps"] == 400, "read", r)
    check("counters/link_downed" in ports[1]["unreadable"] and "link_downed" not in ports[1]["counters"],
          "an unreadable counter is named, never read as 0", r)
    empty = f.run("fabric", "ports", "--root", tmp, "--json")
    check(empty.exit == 0 and empty.json["ports"] == [] and "no HCA" in empty.json["note"], "no HCA", empty)


TOPOLOGY = """# Slurm's topology.conf: two leaves under one spine
SwitchName=leafA Nodes=t[01-08],u[1-2],p[01-04]
SwitchName=leafB Nodes=t[09-16],u[3-4],p[05-08]
SwitchName=spine Switches=leafA,leafB
"""


def topology(tmp):
    path = os.path.join(tmp, "topology.conf")
    with open(path, "w") as fh:
        fh.write(TOPOLOGY)
    return path


def t_topology_gang_slow_node(tmp):
    """A slow node is tested beside a known-good peer of its own leaf, and
    the fault is localised to that leaf."""
    f = Fleet(tmp, {"busbw": 180, "nodes": {"t11": {"slow": 0.6}}}, [])
    topo = topology(tmp)
    r = f.run("fabric", "gang", "t[01-16]", "--expect-busbw", "180", "--topology", topo,
              "--json", "--no-counters")
    v = verdicts(r.json)
    check(r.exit == 1 and v["t11"]["verdict"] == "slow" and v["t11"]["switch"] == "leafB",
          "t11 slow, under leafB", r)
    check([n for n in v if v[n]["verdict"] != "pass"] == ["t11"], "only t11", r)
    lone = [t for t in r.json["tests"] if "known-good" in t["changed"]]
    check(lone and all(t["nodes"][1] in nodes("t", 16)[8:] for t in lone),
          "every lone node beside a known-good node of leafB: %s" % [t["nodes"] for t in lone], r)
    fd = r.json["fault_domain"]
    check(fd["switch"] == "leafB" and fd["whole_leaf"] is False, "localised to leafB, not the whole leaf", r)
    check(r.json["switch_domains"]["leafB"]["faulty"] == ["t11"], "leafB's faulty node", r)
    # Without the topology, the lone node is measured beside the first known-good node (leafA).
    plain = f.run("fabric", "gang", "t[01-16]", "--expect-busbw", "180", "--json", "--no-counters")
    lone = [t for t in plain.json["tests"] if "known-good" in t["changed"]]
    check(lone and any(t["nodes"][1] in nodes("t", 8) for t in lone) and "fault_domain" not in plain.json,
          "without --topology: peers from anywhere, no domains", plain)
    text = f.run("fabric", "gang", "t[01-16]", "--expect-busbw", "180", "--topology", topo, "--no-counters")
    check("switch domain leafB:" in text.out, "the text names the switch domain", text)


def t_topology_whole_leaf(tmp):
    slow = {n: {"slow": 0.6} for n in nodes("t", 16)[8:]}
    f = Fleet(tmp, {"busbw": 180, "nodes": slow}, [])
    r = f.run("fabric", "gang", "t[01-16]", "--expect-busbw", "180", "--topology", topology(tmp),
              "--json", "--no-counters")
    v = verdicts(r.json)
    check(all(v[n]["verdict"] == "slow" for n in slow) and all(v[n]["verdict"] == "pass" for n in nodes("t", 8)),
          "leafB's eight slow, leafA's pass", r)
    fd = r.json["fault_domain"]
    check(fd["switch"] == "leafB" and fd["whole_leaf"] is True and "suspect leafB" in fd["why"],
          "the whole leaf: the switch before the nodes", r)


def t_topology_between_leaves(tmp):
    """A gang slow while each half (one leaf each) passes: the path between
    the leaves, through the spine, named."""
    f = Fleet(tmp, {"busbw": 180, "bad_pairs": [["u1", "u3"]]}, [])
    # Given out of leaf order: the bisection groups the gang by leaf.
    r = f.run("fabric", "gang", "u1,u3,u2,u4", "--expect-busbw", "180", "--topology", topology(tmp),
              "--json", "--no-counters")
    check(r.json["unattributed"] == [0], "the whole gang failed, its halves passed", r)
    p = r.json["unattributed_paths"][0]
    check(p["between"] == ["leafA", "leafB"] and p["through"] == "spine", "between leafA and leafB, through the spine", r)
    check(all(v["verdict"] == "pass" for v in r.json["verdicts"]) and r.exit == 1, "no node blamed; the gang fails", r)


def t_topology_pair_peers(tmp):
    """Peers from the store: the candidate's own leaf first, newest first within it."""
    f = Fleet(tmp, {"busbw": 180}, [])
    db = os.path.join(tmp, "store.db")
    r = f.run("--store", db, "fabric", "gang", "p01,p02", "--expect-busbw", "180", "--json", "--no-counters")
    check(r.exit == 0, "store made", r)
    con = sqlite3.connect(db)
    now = int(time.time())
    for n, age in (("p01", 1), ("p02", 2), ("p05", 5), ("p06", 6), ("p08", 3)):
        con.execute("INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at, run_id)"
                    " VALUES (?, 'k', 'sw', ?, ?, 0, 'x')", (n, "quarantined" if n == "p08" else "admitted", now - age))
    con.execute("INSERT INTO node_states (node, class, software, outcome, updated_at, recheck_at, run_id)"
                " VALUES ('p07', 'k', 'sw', 'suspect', ?, 0, 'x')", (now,))
    con.commit()
    con.close()
    plain = f.run("--store", db, "fabric", "pair", "p07", "--expect-busbw", "180", "--json", "--no-counters")
    check(plain.json["peers"] == ["p01", "p02"], "without the topology: the newest admitted", plain)
    p = f.run("--store", db, "fabric", "pair", "p07", "--expect-busbw", "180", "--topology", topology(tmp),
              "--json", "--no-counters")
    check(p.json["peers"] == ["p05", "p06"], "with it: p07's leaf (leafB) first, never the quarantined p08", p)
    check(p.json["switches"] == {"p07": "leafB", "p05": "leafB", "p06": "leafB"}, "the switches named", p)


def t_topology_refused(tmp):
    f = Fleet(tmp, {"busbw": 180}, [])
    bad = os.path.join(tmp, "bad.conf")
    with open(bad, "w") as fh:
        fh.write("SwitchName=a Nodes=n[1-4]\nSwitchName=b Nodes=n4\n")
    r = f.run("fabric", "gang", "n[1-4]", "--expect-busbw", "180", "--topology", bad)
    check(r.exit == 2 and "node n4 is under two switches" in r.err, "a node under two switches refused", r)
    r = f.run("fabric", "gang", "n[1-4]", "--expect-busbw", "180", "--topology", os.path.join(tmp, "none"))
    check(r.exit == 2 and "--topology" in r.err, "a missing file refused", r)


def t_baselines_from_passing_runs(tmp):
    """Passing all-reduces are accepted and build their topology's baseline,
    one unit per node set, with admission's builder; a slow one is not; the
    next run without --expect-busbw is judged against it."""
    f = Fleet(tmp, {"busbw": 180, "nodes": {"r9": {"slow": 0.5}}}, [])
    db = os.path.join(tmp, "auto.db")
    first = f.run("--store", db, "fabric", "pair", "r1", "--peers", "r2,r3", "--class", "auto",
                  "--expect-busbw", "180", "--json", "--no-counters")
    check(first.exit == 0 and "baselines" in first.json, "stored", first)
    b = first.json["baselines"][0]
    check(b["topology"] == "auto/2node" and b["status"] == "too-few-nodes" and b["groups"] == 2,
          "two node sets are not a baseline yet: %s" % b, first)
    slow = f.run("--store", db, "fabric", "pair", "r9", "--peers", "r1,r2", "--class", "auto",
                 "--expect-busbw", "180", "--json", "--no-counters")
    check(slow.json["verdict"] == "slow", "r9 slow", slow)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT json_extract(body, '$.fabric.verdict'), accepted FROM records WHERE class = 'auto/2node'").fetchall()
    con.close()
    check(all(a == (1 if v == "pass" else 0) for v, a in rows) and any(v == "slow" for v, _ in rows),
          "only passing runs accepted: %s" % rows, slow)
    again = f.run("--store", db, "fabric", "pair", "r4", "--peers", "r5,r6", "--class", "auto",
                  "--expect-busbw", "180", "--json", "--no-counters")
    b = again.json["baselines"][0]
    check(b["status"] == "ok" and abs(b["median"] - 180) < 1 and b["groups"] >= 3,
          "r1+r2, r1+r3, r9's passing peers r1+r2 again, r4+r5, r4+r6: a small-class baseline: %s" % b, again)
    judged = f.run("--store", db, "fabric", "pair", "r9", "--peers", "r5,r6", "--class", "auto",
                   "--json", "--no-counters")
    t0 = judged.json["tests"][0]
    check(judged.exit == 1 and judged.json["verdict"] == "slow" and abs(t0["expected"] - 180) < 1,
          "without --expect-busbw, r9 judged against the built baseline", judged)
    show = f.run("--store", db, "baseline", "show", "--class", "auto/2node", "--json")
    check(show.exit == 0 and "auto/2node" in show.out, "baseline show lists it", show)


def t_baselines_establishing(tmp):
    """With no baseline and no --expect-busbw nothing is passed, but the runs
    that measured the intended path start the baselines (as a new class's
    admissions do); the next gang is judged."""
    f = Fleet(tmp, {"busbw": 180}, [])
    db = os.path.join(tmp, "est.db")
    f.run("--store", db, "fabric", "gang", "e1,e2", "--expect-busbw", "180", "--json", "--no-counters")  # makes the store
    r = f.run("--store", db, "fabric", "gang", "e[1-8]", "--class", "est", "--json", "--no-counters")
    check(r.exit == 1 and all(v["verdict"] == "held-untested" for v in r.json["verdicts"]),
          "nothing to judge against: every node held", r)
    check(all(t.get("establishing") and t.get("accepted") for t in r.json["tests"]), "each test kept as establishing", r)
    built = {b["topology"]: b for b in r.json["baselines"]}
    check(built["est/2node"]["status"] == "ok", "four pairs: a small-class baseline of 2 nodes: %s" % built, r)
    check(built["est/8node"]["status"] == "too-few-nodes", "one gang of 8 is one node set", r)
    again = f.run("--store", db, "fabric", "gang", "e[1-4]", "--class", "est", "--json", "--no-counters")
    v = verdicts(again.json)
    check(all(v[n]["verdict"] == "pass" for n in v), "the pairs now judged and passed: %s" % v, again)


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("t_")]


def main():
    global NODEGATE, SYNTH
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--only")
    a = ap.parse_args()
    NODEGATE, SYNTH = os.path.abspath(a.nodegate), os.path.abspath(a.synth)
    passed = failed = 0
    for t in TESTS:
        if a.only and a.only not in t.__name__:
            continue
        tmp = tempfile.mkdtemp(prefix="ng-fabric-")
        try:
            t(tmp)
            print("pass  %s" % t.__name__[2:])
            passed += 1
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next test runs
            print("FAIL  %s: %s" % (t.__name__[2:], e))
            failed += 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

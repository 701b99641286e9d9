#!/usr/bin/env python3
"""nodegate policy replay on a month of a 10,000-node fleet (SQLite), beside
the report's own read of the same rows (docs/policy-changes.md).

bench/fleetgen writes the fleet once. Then, best of --runs each:
  replay     `nodegate policy replay --policy STRICTER --json` over the month:
             every decision with its verdict lines, decided again twice
  report     `nodegate report --json --no-sacct` over the same month: the
             report's own read of the decisions (and the rest it reads)
  rows       the rows the replay reads, with a bare SELECT through sqlite3
The ratios replay / report and replay / rows say what deciding every run again
costs over reading it. Writes replay_bench.json in --dir.

Target: the replay under 30 s. Exit 1 when it is missed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

NOW = 1795996800  # 2026-11-30T00:00:00Z: the fleet's last day ends here
STRICTER = '{"admission": {"flag_fraction": 0.95}}'


def timed(cmd, env=None, stdin=None):
    t = time.monotonic()
    p = subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - t
    if p.returncode != 0:
        sys.exit(f"replay_bench: {' '.join(cmd[:4])}... exited {p.returncode}: {p.stderr[-800:]}")
    return took, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fleetgen", required=True)
    ap.add_argument("--dir", required=True, help="where the fleet goes")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true",
                    help="time the fleet already in --dir (from an earlier run) instead of a new one")
    a = ap.parse_args()
    if not shutil.which("sqlite3"):
        sys.exit("replay_bench: sqlite3 is needed for the reference")
    os.makedirs(a.dir, exist_ok=True)
    db = os.path.join(a.dir, "fleet.db")
    policy = os.path.join(a.dir, "policy.json")
    gen = 0.0
    if not (a.reuse and os.path.exists(db) and os.path.exists(policy)):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        t = time.monotonic()
        out = subprocess.run([a.fleetgen, "--store", db, "--nodes", str(a.nodes), "--classes",
                              str(a.classes), "--days", str(a.days), "--seed", str(a.seed),
                              "--now", str(NOW), "--policy-out", policy],
                             capture_output=True, text=True)
        gen = time.monotonic() - t
        if out.returncode != 0:
            sys.exit(f"replay_bench: fleetgen failed: {out.stderr[-800:]}")
        print(out.stdout.strip())
    stricter = os.path.join(a.dir, "stricter.json")
    with open(stricter, "w") as f:
        f.write(STRICTER)
    env = dict(os.environ, NODEGATE_NOW=str(NOW))
    env.pop("NODEGATE_STORE", None)
    base = [a.nodegate, "--policy", policy]
    replay_cmd = base + ["policy", "replay", "--store", db, "--policy", stricter, "--days",
                         str(a.days), "--json"]
    runs = [timed(replay_cmd, env) for _ in range(a.runs)]
    t_replay = min(r[0] for r in runs)
    doc = json.loads(runs[0][1])
    t_report = min(timed(base + ["report", "--store", db, "--days", str(a.days), "--json",
                                 "--no-sacct"], env)[0] for _ in range(a.runs))
    since = NOW - a.days * 86400
    sql = ("SELECT d.id, d.run_id, d.node, d.node_name, d.class, d.software, d.outcome, d.at,"
           " d.policy, v.stage, v.domain, v.metric, v.unit, v.value, v.baseline_median, v.floor,"
           " v.gate_verdict, v.status FROM decisions d LEFT JOIN verdicts v ON v.node = d.node"
           f" AND v.at = d.at AND v.run_id = d.run_id WHERE d.at >= {since}"
           " ORDER BY d.at, d.id, v.id;\n")
    t_rows = min(timed(["sqlite3", "-readonly", db], stdin=sql)[0] for _ in range(a.runs))
    print(f"generation   {gen:8.1f} s" + ("  (reused)" if not gen else ""))
    print(f"replay       {t_replay:8.2f} s  ({doc['decisions']:,} decisions, "
          f"{doc['changed_count']:,} changed, {doc['quarantines']['added']:,} quarantines added)")
    print(f"report json  {t_report:8.2f} s  (the report's own read of the month)")
    print(f"bare SELECT  {t_rows:8.2f} s  (sqlite3: the rows the replay reads)")
    print(f"ratio        {t_replay / t_report:8.2f} x  (replay / report)")
    print(f"ratio        {t_replay / t_rows:8.2f} x  (replay / bare SELECT)")
    result = {"nodes": a.nodes, "days": a.days, "generation_s": round(gen, 2),
              "replay_s": round(t_replay, 3), "report_json_s": round(t_report, 3),
              "rows_s": round(t_rows, 3), "ratio_report": round(t_replay / t_report, 2),
              "ratio_rows": round(t_replay / t_rows, 2), "decisions": doc["decisions"],
              "changed": doc["changed_count"]}
    with open(os.path.join(a.dir, "replay_bench.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"\ntarget: replay under 30 s: {t_replay:.2f} s, {'met' if t_replay < 30 else 'MISSED'}")
    return 0 if t_replay < 30 else 1


if __name__ == "__main__":
    sys.exit(main())

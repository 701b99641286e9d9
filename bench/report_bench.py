#!/usr/bin/env python3
"""nodegate report on a month of a 10,000-node fleet, beside the same rows
read by a bare query, on SQLite and (given --pg URI) on PostgreSQL.

For each backend: bench/fleetgen writes the fleet once (timed), then
`nodegate report --html` and `--json` run --runs times each (best kept), and
the reference reads the rows the report reads with plain SQL through the
engine's own shell (sqlite3, psql) to /dev/null (best of --runs). The ratio
report / reference is what the report adds over reading its input.

Target: the SQLite report (HTML) under 5 s. Exit 1 when it is missed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

NOW = 1795996800  # 2026-11-30T00:00:00Z: the fleet's last day ends here


def reference_sql(days, recent_days):
    """The rows `nodegate report` reads (src/store/report_queries.c), as
    the statements it runs."""
    since = NOW - days * 86400
    recent = NOW - min(days, recent_days) * 86400
    return [
        "SELECT digest, body FROM profiles",
        "SELECT node, class, software, outcome, updated_at, recheck_at, run_id, duration_ms"
        " FROM node_states",
        "SELECT * FROM cases",
        "SELECT * FROM fleet_events",
        "SELECT class, software, min(taken_at), max(taken_at) FROM records WHERE class <> ''"
        " GROUP BY class, software ORDER BY class, 3",
        "SELECT node, class, software, metric, unit, taken_at, samples FROM records"
        f" WHERE taken_at >= {recent} AND n_samples > 0",
        f"SELECT run_id, node, class, software, outcome, at, policy FROM decisions WHERE at >= {since}"
        " ORDER BY at, id",
        f"SELECT node, taken_at, body FROM records WHERE metric = 'gpu.health' AND taken_at >= {since}"
        " AND (body LIKE '%\"degraded\"%' OR body LIKE '%\"fatal\"%')",
        "SELECT case_id, policy FROM case_policies",
        "SELECT * FROM baselines WHERE expired_at = 0",
    ]


def timed(cmd, env=None, stdin=None):
    t = time.monotonic()
    p = subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - t
    if p.returncode != 0:
        sys.exit(f"report_bench: {' '.join(cmd[:3])}... exited {p.returncode}: {p.stderr[-800:]}")
    return took


def bench_backend(a, name, store, sacct, policy):
    print(f"\n== {name}: {store}")
    truth = os.path.join(a.dir, f"truth-{name}.json")
    t = time.monotonic()
    out = subprocess.run([a.fleetgen, "--store", store, "--nodes", str(a.nodes), "--classes",
                          str(a.classes), "--days", str(a.days), "--seed", str(a.seed), "--now",
                          str(NOW), "--sacct-out", sacct, "--truth-out", truth, "--policy-out",
                          policy], capture_output=True, text=True)
    gen = time.monotonic() - t
    if out.returncode != 0:
        sys.exit(f"report_bench: fleetgen failed: {out.stderr[-800:]}")
    print(out.stdout.strip())
    counts = json.load(open(truth))["counts"]
    env = dict(os.environ, NODEGATE_NOW=str(NOW))
    env.pop("NODEGATE_STORE", None)
    html = os.path.join(a.dir, f"report-{name}.html")
    base = [a.nodegate, "--policy", policy, "report", "--store", store, "--sacct", sacct,
            "--days", str(a.days)]
    t_html = min(timed(base + ["--html", html], env) for _ in range(a.runs))
    t_json = min(timed(base + ["--json"], env) for _ in range(a.runs))
    sql = ";\n".join(reference_sql(a.days, 7)) + ";\n"
    if name == "sqlite":
        ref_cmd = ["sqlite3", "-readonly", store]
    else:
        ref_cmd = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", store]
    t_ref = min(timed(ref_cmd, stdin=sql) for _ in range(a.runs))
    size = os.path.getsize(html)
    print(f"generation   {gen:8.1f} s  ({counts['records']:,} records, {counts['decisions']:,} "
          f"decisions, {counts['jobs']:,} jobs)")
    print(f"report html  {t_html:8.2f} s  ({size / 1e6:.1f} MB page)")
    print(f"report json  {t_json:8.2f} s")
    print(f"bare SELECTs {t_ref:8.2f} s  ({ref_cmd[0]})")
    print(f"ratio        {t_html / t_ref:8.2f} x  (report html / bare SELECTs)")
    return {"backend": name, "generation_s": round(gen, 2), "report_html_s": round(t_html, 3),
            "report_json_s": round(t_json, 3), "reference_s": round(t_ref, 3),
            "ratio": round(t_html / t_ref, 2), "page_bytes": size, "counts": counts}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fleetgen", required=True)
    ap.add_argument("--dir", required=True, help="where the fleet and the pages go")
    ap.add_argument("--pg", help="a PostgreSQL URI to bench too (a database the bench may fill)")
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    for tool in ("sqlite3",) + (("psql",) if a.pg else ()):
        if not shutil.which(tool):
            sys.exit(f"report_bench: {tool} is needed for the reference")
    db = os.path.join(a.dir, "fleet.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    results = [bench_backend(a, "sqlite", db, os.path.join(a.dir, "sacct-sqlite.txt"),
                             os.path.join(a.dir, "policy-sqlite.json"))]
    if a.pg:
        subprocess.run(["psql", "-X", "-q", a.pg, "-c",
                        "DROP SCHEMA public CASCADE; CREATE SCHEMA public"],
                       check=True, capture_output=True)
        results.append(bench_backend(a, "postgres", a.pg, os.path.join(a.dir, "sacct-pg.txt"),
                                     os.path.join(a.dir, "policy-pg.json")))
    with open(os.path.join(a.dir, "report_bench.json"), "w") as f:
        json.dump({"nodes": a.nodes, "days": a.days, "results": results}, f, indent=1)
    sq = results[0]["report_html_s"]
    print(f"\ntarget: report under 5 s with SQLite: {sq:.2f} s, {'met' if sq < 5 else 'MISSED'}")
    for r in results[1:]:
        print(f"PostgreSQL beside it: {r['report_html_s']:.2f} s")
    return 0 if sq < 5 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Many `nodegate ingest` commands writing one SQLite store at once, as a
fleet's cron jobs and hooks do on one host: WRITERS threads, each running
COMMANDS ingests one after another (RECORDS records each, one transaction),
all started together. Prints the figures and fails when any acknowledged
write is missing (lost), when any command failed (a busy store must wait,
not refuse), or when the slowest command took more than --max-share of the
busy timeout nodegate waits (the headroom the timeout was sized with).

  stress_writers.py --nodegate BUILD/nodegate [--writers 64] [--commands 8]
                    [--records 20] [--busy-timeout-s 30] [--max-share 0.5]

Part of `make stress`, not of `make check`: at 64 writers it takes minutes
on a small machine.
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time


def record(w, c, r):
    return {
        "schema": "nodegate/record/1",
        "id": f"stress-w{w:03d}-c{c:03d}-r{r:03d}",
        "node": f"stress-node-{w:03d}",
        "class": "stress/1",
        "domain": "fabric",
        "metric": "nccl.all_reduce.busbw",
        "unit": "GB/s",
        "samples": [240.0 + (r % 5)] * 9,
        "wrong": 0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--writers", type=int, default=64)
    ap.add_argument("--commands", type=int, default=8, help="ingests per writer")
    ap.add_argument("--records", type=int, default=20, help="records per ingest")
    ap.add_argument("--busy-timeout-s", type=float, default=30.0,
                    help="the busy timeout nodegate waits (src/store/sql_sqlite.c)")
    ap.add_argument("--max-share", type=float, default=0.5,
                    help="the slowest command may take at most this share of it")
    ap.add_argument("--keep", action="store_true", help="keep the store for a look")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ng-stress-writers-")
    store = os.path.join(tmp, "store.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
    # The store exists before the writers, as in a fleet (its first creation
    # racing is test_store_crash's first_open_race).
    subprocess.run([a.nodegate, "--store", store, "ingest", "-"], input="[]", text=True,
                   env=env, capture_output=True, check=False)
    files = {}
    for w in range(a.writers):
        for c in range(a.commands):
            p = os.path.join(tmp, f"w{w:03d}-c{c:03d}.json")
            with open(p, "w") as f:
                json.dump([record(w, c, r) for r in range(a.records)], f)
            files[(w, c)] = p

    results = []  # (writer, command, run_id, exit, seconds, stderr)
    lock = threading.Lock()
    start = threading.Barrier(a.writers)

    def writer(w):
        start.wait()
        for c in range(a.commands):
            run_id = f"stress-w{w:03d}-c{c:03d}"
            t0 = time.monotonic()
            p = subprocess.run([a.nodegate, "--store", store, "ingest", "--run-id", run_id,
                                files[(w, c)]], env=env, capture_output=True, text=True)
            took = time.monotonic() - t0
            with lock:
                results.append((w, c, run_id, p.returncode, took, p.stderr.strip()))

    t0 = time.monotonic()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(a.writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0

    con = sqlite3.connect(store)
    kept = dict(con.execute("SELECT run_id, count(*) FROM records GROUP BY run_id"))
    con.close()
    acked = [r for r in results if r[3] == 0]
    failed = [r for r in results if r[3] != 0]
    lost = [r for r in acked if kept.get(r[2], 0) != a.records]
    partial = [k for k, n in kept.items() if n != a.records]
    times = sorted(r[4] for r in results)
    slowest = times[-1] if times else 0.0
    p99 = times[int(0.99 * (len(times) - 1))] if times else 0.0
    median = times[len(times) // 2] if times else 0.0
    print(f"stress: {a.writers} writers x {a.commands} ingests of {a.records} records on SQLite, "
          f"{wall:.1f} s in all")
    print(f"stress: commands {len(results)}, acknowledged writes {len(acked)} "
          f"({len(acked) * a.records} records), failed {len(failed)}, lost {len(lost)}, "
          f"partial batches {len(partial)}")
    print(f"stress: per command: median {median:.2f} s, p99 {p99:.2f} s, slowest {slowest:.2f} s "
          f"(the busy timeout is {a.busy_timeout_s:.0f} s; the slowest may take "
          f"{a.max_share:.0%} of it)")
    for r in failed[:3]:
        print(f"stress: failed: writer {r[0]} command {r[1]}: exit {r[3]}: {r[5][:300]}")
    if a.keep:
        print(f"stress: the store is kept at {store}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    bad = bool(failed or lost or partial)
    if slowest > a.max_share * a.busy_timeout_s:
        print(f"stress: FAIL: the slowest command took {slowest:.2f} s, more than "
              f"{a.max_share:.0%} of the {a.busy_timeout_s:.0f} s busy timeout")
        bad = True
    print("stress: FAIL" if bad else "stress: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

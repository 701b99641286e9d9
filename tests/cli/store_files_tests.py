#!/usr/bin/env python3
"""The SQLite store's files on disk, through the binary: a new store is 0600
(and so are the -wal and -shm SQLite makes beside it), the directories
nodegate makes for it are 0700, and a path that holds something other than
a database (an empty file, a text file, a FIFO, a directory) is refused as
a store error (exit 3), never turned into a database. Eight nodegates
making the same new store at once all succeed, with every record kept.
As root, a store in a directory another user owns, or behind a link they
made, is refused (those parts skip without root or setpriv/runuser).

  store_files_tests.py --nodegate BUILD/nodegate --records DIR
"""
import argparse
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile

A = None
FAILURES = []
STORE_ERROR = 3
OTHER_UID = 65534


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def record():
    return os.path.join(A.records, sorted(os.listdir(A.records))[0])


def nodegate(*argv, timeout=30):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NODEGATE_") and not k.startswith("SLURM_")}
    try:
        return subprocess.run([A.nodegate, *argv], capture_output=True, text=True,
                              errors="replace", env=env, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        check(False, f"nodegate {' '.join(argv)}: still running after {timeout} s")
        return None


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_new_store_modes(tmp):
    # An existing directory of the usual 0755: the store in it is 0600 all the same.
    d = os.path.join(tmp, "existing")
    os.mkdir(d, 0o755)
    store = os.path.join(d, "store.db")
    p = nodegate("--store", store, "ingest", record())
    check(p and p.returncode == 0, f"ingest into a new store: {p and p.stderr}")
    check(mode(store) == 0o600, f"the new store is 0600: {oct(mode(store))}")
    check(sorted(os.listdir(d)) == ["store.db", "store.db-queue", "store.db.audit-head"],
          f"only the writers' queue and the audit anchor left beside it: {os.listdir(d)}")
    for beside in ("store.db-queue", "store.db.audit-head"):
        check(mode(os.path.join(d, beside)) == 0o600,
              f"{beside} is 0600: {oct(mode(os.path.join(d, beside)))}")
    check(mode(store + "-queue") == 0o600, f"the queue is 0600: {oct(mode(store + '-queue'))}")
    # With a reader holding it open the -wal and -shm stay; a second write
    # goes through them.
    con = sqlite3.connect(store)
    con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    p = nodegate("--store", store, "ingest", record())
    check(p and p.returncode == 0, f"a second ingest: {p and p.stderr}")
    for suffix in ("-wal", "-shm"):
        f = store + suffix
        check(os.path.exists(f) and mode(f) == 0o600,
              f"{os.path.basename(f)} is 0600: {oct(mode(f)) if os.path.exists(f) else 'absent'}")
    con.close()
    # Directories it makes for a store are 0700, every level.
    nested = os.path.join(tmp, "made", "by", "nodegate", "store.db")
    p = nodegate("--store", nested, "ingest", record())
    check(p and p.returncode == 0, f"ingest into a store in new directories: {p and p.stderr}")
    for sub in ("made", "made/by", "made/by/nodegate"):
        m = mode(os.path.join(tmp, sub))
        check(m == 0o700, f"{sub} is 0700: {oct(m)}")
    check(mode(nested) == 0o600, f"the store in them is 0600: {oct(mode(nested))}")


def refused(path, what, words, verbs=(["ingest"], ["baseline", "show"])):
    before = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            before = f.read()
    for argv in verbs:
        if argv == ["ingest"]:
            argv = ["ingest", record()]
        p = nodegate("--store", path, *argv, timeout=15)
        if p is None:
            continue
        check(p.returncode == STORE_ERROR, f"{what}, {argv[0]}: exit {p.returncode}, wanted "
              f"{STORE_ERROR}; stderr {p.stderr.strip()[:200]}")
        check(any(w in p.stderr for w in words) and path in p.stderr,
              f"{what}, {argv[0]}: says why, naming the path ({words}): {p.stderr.strip()[:300]}")
    if before is not None:
        with open(path, "rb") as f:
            check(f.read() == before, f"{what}: the file is left as it was")
    check(not any(os.path.exists(path + x) for x in ("-wal", "-shm", "-queue")),
          f"{what}: no -wal, -shm or -queue made beside it")


def test_not_a_store(tmp):
    empty = os.path.join(tmp, "empty.db")
    open(empty, "w").close()
    refused(empty, "an empty file", ["empty file (0 bytes)"])
    text = os.path.join(tmp, "notes.db")
    with open(text, "w") as f:
        f.write("this is a text file, not a database\n" * 40)
    refused(text, "a text file", ["not a database"])
    fifo = os.path.join(tmp, "fifo.db")
    os.mkfifo(fifo, 0o600)
    refused(fifo, "a FIFO", ["FIFO"])
    d = os.path.join(tmp, "dir.db")
    os.mkdir(d)
    refused(d, "a directory", ["directory"])


def test_racing_creators(tmp):
    store = os.path.join(tmp, "raced", "store.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
    procs = [subprocess.Popen([A.nodegate, "--store", store, "ingest", record()],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(8)]
    outs = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    bad = [o for o in outs if o[0] != 0]
    check(not bad, f"eight nodegates making one new store at once all succeed: {bad[:2]}")
    con = sqlite3.connect(store)
    n = con.execute("SELECT count(*) FROM records").fetchone()[0]
    con.close()
    check(n == 8, f"every record of the eight is kept: {n}")
    check(mode(store) == 0o600, f"the store they made is 0600: {oct(mode(store))}")
    left = [f for f in os.listdir(os.path.dirname(store)) if f.startswith(".")]
    check(not left, f"no temporary left behind: {left}")


def as_other():
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "--"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


def test_their_directory(tmp):
    if os.geteuid() != 0 or not as_other():
        print("skip: a store among another user's names needs root and setpriv or runuser")
        return
    os.chmod(tmp, 0o755)
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    theirs = os.path.join(shared, "theirs")
    real = os.path.join(tmp, "real.db")
    p = nodegate("--store", real, "ingest", record())
    check(p and p.returncode == 0, "a store of root's")
    script = ("import os, sys; os.mkdir(sys.argv[1]); os.chmod(sys.argv[1], 0o777); "
              "os.symlink(sys.argv[2], sys.argv[3])")
    subprocess.run(as_other() + [sys.executable, "-c", script, theirs, real,
                                 os.path.join(shared, "link.db")], check=True)
    refused(os.path.join(theirs, "store.db"), "a store in another user's directory",
            ["can write it"], verbs=(["ingest"],))
    check(not os.listdir(theirs), f"nothing made in their directory: {os.listdir(theirs)}")
    refused(os.path.join(shared, "link.db"), "a store behind another user's link",
            ["symbolic link made by uid"])


TESTS = [test_new_store_modes, test_not_a_store, test_racing_creators, test_their_directory]


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--records", required=True)
    A = ap.parse_args()
    A.nodegate = os.path.abspath(A.nodegate)
    old = os.umask(0o022)
    try:
        for t in TESTS:
            tmp = tempfile.mkdtemp(prefix="ng-store-files-")
            try:
                t(tmp)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        os.umask(old)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print(f"ok: {len(TESTS)} groups")
    return 0


if __name__ == "__main__":
    sys.exit(main())

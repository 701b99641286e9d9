#!/usr/bin/env python3
"""nodegate's output paths against another user who can write where it writes.

nodegate runs as root; an unprivileged user (nobody, through setpriv or
runuser) plants a symbolic link to a root-owned 0600 file, or a FIFO, at
every name nodegate could use for `metrics --textfile`, `report --html`,
`run --out` and `run --raw-dir`: the target itself, the temporary names an
earlier nodegate used (PATH.tmp.PID for the pids that come next), and the
raw output names of the next seconds. The directories are a sticky shared
one (as /tmp), one the other user owns (0755), one everybody can write, and
a link the other user made to a directory of root's. For every run:

  - the root-owned file is untouched (content, mode, owner, mtime);
  - nothing new appears in root's directory;
  - the command ends within a few seconds (a FIFO opened for writing with
    no reader would block it forever);
  - a planted target is refused by name (link, FIFO) and a directory others
    can change names in is refused; planted temporary names do not stop a
    write in the sticky directory, and the file written is a new regular
    file of root's.

Needs root (to be a second user); skips (exit 77) without it, or without
setpriv and runuser.

  hostile_paths_tests.py --nodegate BUILD/nodegate --fake-tool BUILD/tests/fake_tool
                         --records DIR
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

SKIP = 77
OTHER_UID = 65534  # nobody
RUN_LIMIT_S = 20   # a run still going after this is blocked
PID_SPAN = 96      # how many pids ahead the old temporary names are planted for
STAMP_SPAN = 6     # how many seconds ahead raw output names are planted for

A = None
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def as_other():
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups", "--"]
    if shutil.which("runuser"):
        return ["runuser", "-u", "nobody", "--"]
    return None


PLANTER = r"""
import os, sys
kind, target = sys.argv[1], sys.argv[2]
made = 0
for p in sys.argv[3:]:
    try:
        if kind == "link":
            os.symlink(target, p)
        elif kind == "fifo":
            os.mkfifo(p, 0o666)
        elif kind == "dirlink":
            os.symlink(target, p)
        elif kind == "dir":
            os.mkdir(p)
            os.chmod(p, 0o777)
        elif kind == "owndir":
            os.mkdir(p)
            os.chmod(p, 0o755)
        made += 1
    except FileExistsError:
        pass
print(made)
"""


def plant(kind, names, target="-"):
    """Makes each name as the other user; returns how many it made."""
    out = subprocess.run(as_other() + [sys.executable, "-c", PLANTER, kind, target, *names],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise SystemExit(f"cannot plant as uid {OTHER_UID}: {out.stderr.strip()}")
    return int(out.stdout.strip() or 0)


def next_pids():
    try:
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
    except OSError:
        last = os.getpid()
    return range(last + 1, last + 1 + PID_SPAN)


def old_tmp_names(path):
    return [f"{path}.tmp.{p}" for p in next_pids()]


def raw_names(raw_dir):
    """The names an earlier nodegate gave raw output: TOOL-STAMP-PID-RUN.stdout
    (and .stderr), and their temporaries."""
    names = []
    now = time.time()
    pids = list(next_pids())
    for s in range(STAMP_SPAN):
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now + s))
        for pid in pids:
            for run in (0,):
                for stream in ("stdout", "stderr"):
                    base = os.path.join(raw_dir, f"dcgmi-{stamp}-{pid}-{run}.{stream}")
                    names.append(base)
                    names.append(f"{base}.tmp.{pid}")
    return names


class Victims:
    """A root-owned 0600 file and an empty root directory, outside every
    directory the other user can write."""

    def __init__(self, base):
        self.dir = os.path.join(base, "root-only")
        os.mkdir(self.dir, 0o755)
        self.file = os.path.join(self.dir, "precious")
        with open(self.file, "w") as f:
            f.write("root's own content\n")
        os.chmod(self.file, 0o600)
        self.empty = os.path.join(base, "root-empty")
        os.mkdir(self.empty, 0o755)
        st = os.stat(self.file)
        self.seen = (st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ino)

    def untouched(self, what):
        st = os.stat(self.file)
        with open(self.file) as f:
            text = f.read()
        check(text == "root's own content\n", f"{what}: the root-owned file keeps its content "
              f"(now {text[:60]!r})")
        check((st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ino) == self.seen,
              f"{what}: the root-owned file keeps its mode, owner, size and mtime")
        left = os.listdir(self.empty)
        check(not left, f"{what}: nothing written in root's directory: {left}")
        for name in left:
            os.unlink(os.path.join(self.empty, name))


class World:
    def __init__(self, base):
        self.base = base
        self.victims = Victims(base)
        self.private = os.path.join(base, "private")
        os.mkdir(self.private, 0o700)
        self.store = os.path.join(self.private, "store.db")
        records = sorted(os.listdir(A.records))
        self.nodegate(["--store", self.store, "ingest", os.path.join(A.records, records[0])],
                      "the store", want=(0,))
        self.n = 0

    def nodegate(self, argv, what, want=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("NODEGATE_") and not k.startswith("SLURM_")}
        env["FAKE_MODE"] = "dcgmi"
        t0 = time.monotonic()
        try:
            p = subprocess.run([A.nodegate] + argv, capture_output=True, text=True, errors="replace", env=env,
                               timeout=RUN_LIMIT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            check(False, f"{what}: blocked: still running after {RUN_LIMIT_S} s")
            return None
        took = time.monotonic() - t0
        check(took < RUN_LIMIT_S / 2, f"{what}: took {took:.1f} s")
        if want is not None:
            check(p.returncode in want, f"{what}: exit {p.returncode}, wanted {want}; "
                  f"stderr: {p.stderr.strip()[:300]}")
        return p

    def fresh(self, kind):
        """A new target directory: 'sticky' (root's, 1777), 'theirs' (made
        by the other user, 0777), 'owned' (made by the other user, 0755:
        theirs alone to change), or 'dirlink' (their link to root's
        directory, in a sticky one)."""
        self.n += 1
        shared = os.path.join(self.base, f"shared{self.n}")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        if kind == "sticky":
            return shared
        d = os.path.join(shared, "out")
        if kind == "theirs":
            plant("dir", [d])
        elif kind == "owned":
            plant("owndir", [d])
        else:
            plant("dirlink", [d], self.victims.empty)
        return d


# ---- the four outputs: how to run each, and the names it could use -------------------------

def out_targets(d):
    return {
        "metrics --textfile": (["--store", "@store", "metrics", "--textfile", d],
                               os.path.join(d, "nodegate.prom")),
        "report --html": (["--store", "@store", "report", "--html", os.path.join(d, "r.html"),
                           "--no-sacct"], os.path.join(d, "r.html")),
        "run --out": (["run", "dcgmi", "--out", os.path.join(d, "diag.json"), "--", "@fake",
                       "diag", "-r", "2", "-j"], os.path.join(d, "diag.json")),
    }


def argv_for(w, argv):
    return [w.store if a == "@store" else A.fake_tool if a == "@fake" else a for a in argv]


def refused(p, words, what):
    if p is None:
        return
    check(p.returncode != 0, f"{what}: refused (exit {p.returncode})")
    check(any(x in p.stderr for x in words), f"{what}: says why ({words}): {p.stderr.strip()[:300]}")


def written_by_root(path, what):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        check(False, f"{what}: {path} was written")
        return
    check(stat.S_ISREG(st.st_mode) and st.st_uid == 0 and st.st_nlink == 1,
          f"{what}: {path} is a new regular file of root's")


def test_planted_targets(w):
    """A link or a FIFO at the target itself: refused by name, nothing else touched."""
    for kind, words in (("link", ["symbolic link"]), ("fifo", ["FIFO"])):
        d = w.fresh("sticky")
        for what, (argv, target) in out_targets(d).items():
            label = f"{what}, a {kind} planted at the target in a sticky directory"
            plant(kind, [target] + old_tmp_names(target), w.victims.file)
            refused(w.nodegate(argv_for(w, argv), label), words, label)
            w.victims.untouched(label)
            check(os.path.islink(target) if kind == "link" else stat.S_ISFIFO(os.lstat(target).st_mode),
                  f"{label}: the planted {kind} is left as it was")


def test_planted_temporaries(w):
    """Only the temporary names planted: the write goes ahead, beside them."""
    for kind in ("link", "fifo"):
        d = w.fresh("sticky")
        for what, (argv, target) in out_targets(d).items():
            label = f"{what}, {kind}s planted at the old temporary names"
            plant(kind, old_tmp_names(target), w.victims.file)
            w.nodegate(argv_for(w, argv), label, want=(0,))
            w.victims.untouched(label)
            written_by_root(target, label)


def test_their_own_directory(w):
    """A directory the other user owns (0755, as a node exporter's textfile
    directory may be): allowed, and nothing they plant in it is followed."""
    for kind, words in (("link", ["symbolic link"]), ("fifo", ["FIFO"])):
        d = w.fresh("owned")
        for what, (argv, target) in out_targets(d).items():
            label = f"{what}, a {kind} planted at the target in their own directory"
            plant(kind, [target] + old_tmp_names(target), w.victims.file)
            refused(w.nodegate(argv_for(w, argv), label), words, label)
            w.victims.untouched(label)
        d = w.fresh("owned")
        for what, (argv, target) in out_targets(d).items():
            label = f"{what}, {kind}s planted at the old temporary names in their own directory"
            plant(kind, old_tmp_names(target), w.victims.file)
            w.nodegate(argv_for(w, argv), label, want=(0,))
            w.victims.untouched(label)
            written_by_root(target, label)


def test_their_directory(w):
    """A directory every user can write, or their link to root's: refused."""
    for kind, words in (("theirs", ["can write it"]), ("dirlink", ["symbolic link made by"])):
        d = w.fresh(kind)
        for what, (argv, target) in out_targets(d).items():
            where = "their directory" if kind == "theirs" else "their link to a root directory"
            label = f"{what}, into {where}"
            if kind == "theirs":
                plant("link", [target] + old_tmp_names(target), w.victims.file)
            refused(w.nodegate(argv_for(w, argv), label), words, label)
            w.victims.untouched(label)


def test_raw_dir(w):
    """run --raw-dir: in a sticky directory the raw directory is root's own
    (0700) unless someone made it first; theirs, or their link, is refused;
    every old raw output name planted changes nothing."""
    for kind in ("theirs-links", "theirs-fifos", "dirlink"):
        base = w.fresh("sticky")
        raw = os.path.join(base, "raw")
        if kind == "dirlink":
            plant("dirlink", [raw], w.victims.empty)
        else:
            plant("dir", [raw])
            plant("link" if kind == "theirs-links" else "fifo", raw_names(raw), w.victims.file)
        label = f"run --raw-dir, {kind}"
        p = w.nodegate(argv_for(w, ["run", "dcgmi", "--raw-dir", raw, "--", "@fake", "diag", "-r",
                                    "2", "-j"]), label)
        refused(p, ["can write it", "symbolic link made by"], label)
        w.victims.untouched(label)
    # Nobody made it first: nodegate makes it, 0700, and keeps the output there
    # under names nobody could have guessed.
    base = w.fresh("sticky")
    raw = os.path.join(base, "raw")
    label = "run --raw-dir, a new directory"
    w.nodegate(argv_for(w, ["run", "dcgmi", "--raw-dir", raw, "--", "@fake", "diag", "-r", "2",
                            "-j"]), label, want=(0,))
    st = os.lstat(raw)
    check(stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700,
          f"{label}: the raw directory is root's, 0700 ({oct(st.st_mode)})")
    files = sorted(os.listdir(raw))
    check(len(files) == 2 and all(f.endswith((".stdout", ".stderr")) for f in files),
          f"{label}: one stdout and one stderr file: {files}")
    for f in files:
        st = os.lstat(os.path.join(raw, f))
        check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
              f"{label}: {f} is a regular file, 0600")
        # TOOL-STAMP-PID-RUN-RANDOM.stream: 16 hex digits nobody can predict.
        tag = f.rsplit(".", 1)[0].rsplit("-", 1)[-1]
        check(len(tag) == 16 and all(c in "0123456789abcdef" for c in tag),
              f"{label}: {f} carries a random part")
    w.victims.untouched(label)


TESTS = [test_planted_targets, test_planted_temporaries, test_their_own_directory,
         test_their_directory, test_raw_dir]


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fake-tool", required=True)
    ap.add_argument("--records", required=True, help="a directory of example records")
    A = ap.parse_args()
    A.nodegate = os.path.abspath(A.nodegate)
    if os.geteuid() != 0:
        print("SKIP: needs root, to be nodegate's user while another user plants names")
        return SKIP
    if not as_other():
        print("SKIP: neither setpriv nor runuser is installed: no way to act as another user")
        return SKIP
    base = tempfile.mkdtemp(prefix="ng-hostile-")
    os.chmod(base, 0o755)  # the other user must reach the shared directories inside
    try:
        w = World(base)
        for t in TESTS:
            t(w)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print(f"ok: {len(TESTS)} groups, every output path against uid {OTHER_UID}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

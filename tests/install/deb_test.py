#!/usr/bin/env python3
"""make deb: scripts/make-deb builds the package (lintian errors fail it);
its control names what the binary links and recommends libpq5; the
package's files, unpacked anywhere, run selftest."""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL " + what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    if not shutil.which("dpkg-deb") or not shutil.which("fakeroot"):
        print("SKIP: dpkg-deb or fakeroot is not installed")
        return 0
    p = subprocess.run([os.path.join(a.source, "scripts", "make-deb"), a.build],
                       capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-3000:])
    check(p.returncode == 0, f"make-deb: exit {p.returncode}")
    if shutil.which("lintian"):
        check("lintian: no errors" in p.stdout, "lintian was not run clean")
    debs = glob.glob(os.path.join(a.build, "deb", "nodegate_*.deb"))
    check(len(debs) == 1, f"packages: {debs}")
    info = subprocess.run(["dpkg-deb", "-f", debs[0], "Depends", "Recommends"],
                          capture_output=True, text=True).stdout
    for lib in ("libc6", "libsqlite3-0", "libcjson1", "liburing2", "libnettle8"):
        check(lib in info, f"Depends lacks {lib}: {info}")
    check("libpq5" in info.split("Recommends:")[-1] and "libpq5" not in
          info.split("Recommends:")[0], f"libpq5 must be recommended, not required: {info}")
    tmp = tempfile.mkdtemp(prefix="ng-deb-test-")
    try:
        subprocess.run(["dpkg-deb", "-x", debs[0], tmp], check=True)
        ng = os.path.join(tmp, "usr", "bin", "nodegate")
        env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
        env["TMPDIR"] = tmp
        p = subprocess.run([ng, "selftest"], capture_output=True, text=True, env=env, timeout=300)
        check(p.returncode == 0, f"selftest from the package: {p.stdout}{p.stderr}")
        epilog = open(os.path.join(tmp, "usr/share/nodegate/examples/slurm/nodegate-epilog")).read()
        check("/usr/bin/nodegate epilog" in epilog, "the packaged snippets name /usr/bin/nodegate")
        print("deb: passed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

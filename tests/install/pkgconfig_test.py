#!/usr/bin/env python3
"""libnodegate as a program outside the tree gets it: install the build into a
temporary prefix, move the tree elsewhere, and build examples/admit.c with
nothing but `pkg-config nodegate` from the moved tree, against the shared
library and against the static one; each program must run its admission and
its gate decision, and the shared library must export only the public API."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL " + what)


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    check(p.returncode == 0, f"{' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--flags", default="", help="what the build compiled with (the sanitizers)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ng-pkgconfig-test-")
    try:
        first = os.path.join(tmp, "first")
        run(["cmake", "--install", a.build, "--prefix", first, "--component", "Development"])
        moved = os.path.join(tmp, "elsewhere", "nodegate")
        os.makedirs(os.path.dirname(moved))
        shutil.move(first, moved)
        pcs = [os.path.join(d, "pkgconfig") for d, _, files in os.walk(moved)
               if os.path.exists(os.path.join(d, "pkgconfig", "nodegate.pc"))]
        check(len(pcs) == 1, f"one nodegate.pc in the install, found {pcs}")
        check(os.path.exists(os.path.join(moved, "include", "nodegate", "nodegate.h")),
              "the install lacks include/nodegate/nodegate.h")
        env = dict(os.environ, PKG_CONFIG_PATH=pcs[0])
        env.pop("PKG_CONFIG_LIBDIR", None)
        cflags = run(["pkg-config", "--cflags", "nodegate"], env=env).split()
        libs = run(["pkg-config", "--libs", "nodegate"], env=env).split()
        check(any(f.startswith("-I" + moved) for f in cflags), f"cflags outside the tree: {cflags}")
        libdir = os.path.dirname(pcs[0])
        example = os.path.join(a.source, "examples", "admit.c")
        cflags += a.flags.split()
        shared = os.path.join(tmp, "admit-shared")
        run([a.cc, "-std=c17", "-Wall", "-Wextra", "-Werror", example, *cflags, *libs,
             "-Wl,-rpath," + libdir, "-o", shared])
        static_libs = run(["pkg-config", "--static", "--libs", "nodegate"], env=env).split()
        static = os.path.join(tmp, "admit-static")
        archive = os.path.join(libdir, "libnodegate.a")
        check(os.path.exists(archive), "the install lacks libnodegate.a")
        run([a.cc, "-std=c17", "-Wall", "-Wextra", "-Werror", example, *cflags, archive,
             *[f for f in static_libs if f != "-lnodegate"], "-o", static])
        out = run(["ldd", static])
        check("libnodegate" not in out, f"the static example loads libnodegate:\n{out}")
        for prog in (shared, static):
            store = os.path.join(tmp, os.path.basename(prog) + ".db")
            out = run([prog, store], cwd=tmp)
            check(out.rstrip().endswith("ok") and "node-slow quarantined" in out,
                  f"{prog}:\n{out}")
            print(f"ok   {os.path.basename(prog)}: {out.splitlines()[-2]}")
        syms = run(["nm", "-D", "--defined-only", os.path.join(libdir, "libnodegate.so")])
        names = [l.split()[-1].split("@")[0] for l in syms.splitlines() if l.strip()]
        other = [n for n in names if not n.startswith("nodegate_") and n != "NODEGATE_0"]
        check(not other, f"libnodegate.so exports more than the API: {other[:10]}")
        print(f"ok   libnodegate.so exports {len(names) - 1} names, all nodegate_*")
        print("pkgconfig: passed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

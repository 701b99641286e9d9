#!/usr/bin/env python3
"""libnodegate as a program outside the tree gets it: install the build into a
temporary prefix, move the tree elsewhere, and build examples/admit.c and
examples/epilog.c with nothing but `pkg-config nodegate` from the moved tree,
against the shared library and against the static one; each admit program
must run its admission and its gate decision, each epilog program its check
on a node whose NVML is missing (no drain, exit 0), and the shared library
must export only the public API."""
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
        cflags += a.flags.split()
        static_libs = run(["pkg-config", "--static", "--libs", "nodegate"], env=env).split()
        archive = os.path.join(libdir, "libnodegate.a")
        check(os.path.exists(archive), "the install lacks libnodegate.a")
        progs = {}
        for name in ("admit", "epilog"):
            example = os.path.join(a.source, "examples", name + ".c")
            shared = os.path.join(tmp, name + "-shared")
            run([a.cc, "-std=c17", "-Wall", "-Wextra", "-Werror", example, *cflags, *libs,
                 "-Wl,-rpath," + libdir, "-o", shared])
            static = os.path.join(tmp, name + "-static")
            run([a.cc, "-std=c17", "-Wall", "-Wextra", "-Werror", example, *cflags, archive,
                 *[f for f in static_libs if f != "-lnodegate"], "-o", static])
            out = run(["ldd", static])
            check("libnodegate" not in out, f"the static {name} example loads libnodegate:\n{out}")
            progs[name] = (shared, static)
        for prog in progs["admit"]:
            store = os.path.join(tmp, os.path.basename(prog) + ".db")
            out = run([prog, store], cwd=tmp)
            check(out.rstrip().endswith("ok") and "node-slow quarantined" in out,
                  f"{prog}:\n{out}")
            print(f"ok   {os.path.basename(prog)}: {out.splitlines()[-2]}")
        # No NVML on this node: the check says so and never drains.
        no_nvml = dict(os.environ, NODEGATE_NVML_LIBRARY=os.path.join(tmp, "no-libnvidia-ml.so"),
                       NODEGATE_ROOT=tmp)
        for prog in progs["epilog"]:
            out = run([prog, "0", "2"], cwd=tmp, env=no_nvml)
            last = out.rstrip().splitlines()[-1]
            check(last.startswith("epilog: ") and "no drain" in last and '"schema"' in out,
                  f"{prog}:\n{out}")
            print(f"ok   {os.path.basename(prog)}: {last}")
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

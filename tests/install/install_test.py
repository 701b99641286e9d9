#!/usr/bin/env python3
"""make install, as an operator gets it: install the build into a temporary
prefix, move the tree somewhere else, and run `selftest` and `scenarios`
from there, with the source and build trees out of reach of what they find
(no --library, no --dir). The installed Slurm snippets must be
docs/slurm.md's lines, and the tree must hold what the docs say it does."""
import argparse
import os
import re
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
    tmp = tempfile.mkdtemp(prefix="ng-install-test-")
    try:
        first = os.path.join(tmp, "first")
        p = subprocess.run(["cmake", "--install", a.build, "--prefix", first],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"cmake --install: {p.stdout}{p.stderr}")
        moved = os.path.join(tmp, "elsewhere", "nodegate")
        os.makedirs(os.path.dirname(moved))
        shutil.move(first, moved)
        for rel in ("bin/nodegate", "lib/nodegate/libnodegate-nvml-synth.so",
                    "lib/nodegate/nodegate-fabric-synth",
                    "lib/nodegate/nodegate-scontrol-synth",
                    "share/nodegate/scenarios/01-healthy.json",
                    "share/nodegate/examples/policy.json",
                    "share/nodegate/examples/npd/nodegate-gpu.json",
                    "share/nodegate/examples/slurm/nodegate-epilog",
                    "share/nodegate/examples/systemd/nodegate-metrics.timer",
                    "share/doc/nodegate/slurm.md"):
            check(os.path.exists(os.path.join(moved, rel)), f"the install lacks {rel}")
        ng = os.path.join(moved, "bin", "nodegate")
        env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
        env["TMPDIR"] = tmp
        # Fewer scenarios in the installed tree than in the source: a run
        # that counts them proves it read the installed ones.
        scen = os.path.join(moved, "share", "nodegate", "scenarios")
        installed = sorted(f for f in os.listdir(scen) if f.endswith(".json"))
        os.unlink(os.path.join(scen, installed[-1]))
        for args in (["selftest"], ["scenarios", "--json"]):
            p = subprocess.run([ng, *args], capture_output=True, text=True, env=env, cwd=tmp,
                               timeout=300)
            check(p.returncode == 0, f"{' '.join(args)} from the moved tree: exit {p.returncode}\n"
                  f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
            print(f"ok   nodegate {' '.join(args)} from {moved}")
        rows = p.stdout.count('"scenario"') or p.stdout.count('"name"')
        check(rows == len(installed) - 1,
              f"scenarios ran {rows} rows, the installed tree has {len(installed) - 1}")
        # The snippets are the documented lines.
        doc = open(os.path.join(a.source, "docs", "slurm.md")).read()
        for name, file in (("slurm.conf", "slurm.conf.nodegate"), ("nodegate-epilog", None),
                           ("nodegate-prolog", None), ("nodegate-health", None),
                           ("admission.conf", "slurm.conf.admission"), ("job_submit.lua", None),
                           ("nodegate-admit", None), ("nodegate-unscreen", None),
                           ("nodegate-reboot", None)):
            m = re.search(r"<!-- slurm-test: %s -->\n```[a-z]*\n(.*?)```" % re.escape(name), doc,
                          re.S)
            check(m, f"docs/slurm.md has no {name} block")
            got = open(os.path.join(moved, "share", "nodegate", "examples", "slurm",
                                    file or name)).read()
            check(got.endswith(m.group(1)), f"examples/etc/slurm/{file or name} is not "
                  f"docs/slurm.md's {name} block")
        print("ok   the Slurm snippets are docs/slurm.md's lines")
        print("install: passed")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

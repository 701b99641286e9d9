#!/usr/bin/env python3
"""scripts/ci-skips against JUnit files written here, shaped as ctest writes them:
a test ctest did not run, a cmocka binary that passed with one test skipped, a
runner that printed a SKIP line and passed, and a clean run.

    ci_skips_tests.py --ci-skips scripts/ci-skips
"""
import argparse
import os
import subprocess
import sys
import tempfile

CLEAN = """\
	<testcase name="unit_gate" classname="unit_gate" time="0.01" status="run">
		<system-out>[==========] Running 2 test(s).
[ RUN      ] a
[       OK ] a
[==========] 2 test(s) run.
[  PASSED  ] 2 test(s).
</system-out>
	</testcase>
"""
NOT_RUN = """\
	<testcase name="store_postgres" classname="store_postgres" time="0.1" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>store test: no PostgreSQL test server: skipping
</system-out>
	</testcase>
"""
CMOCKA_SKIP = """\
	<testcase name="unit_parse_dcgmi" classname="unit_parse_dcgmi" time="0.01" status="run">
		<system-out>[ RUN      ] published_fixtures
[  SKIPPED ] published_fixtures
[==========] 2 test(s) run.
[  PASSED  ] 1 test(s).
[  SKIPPED ] 1 test(s), listed below:
[  SKIPPED ] published_fixtures
</system-out>
	</testcase>
"""
RUNNER_SKIP = """\
	<testcase name="export_cli" classname="export_cli" time="0.5" status="run">
		<system-out>ok   metrics
SKIP promtool check: promtool is not installed
</system-out>
	</testcase>
"""


def junit(tmp, name, cases):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="t" tests="1">\n')
        f.write("".join(cases))
        f.write("</testsuite>\n")
    return path


def run(tool, *args):
    p = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ci-skips", required=True)
    a = ap.parse_args()
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        clean = junit(tmp, "clean.xml", [CLEAN])
        rc, out = run(a.ci_skips, "--fail", clean)
        check(rc == 0 and "no test skipped" in out, f"a clean run passes in CI: {rc} {out!r}")
        for name, case, says in (("notrun", NOT_RUN, "store_postgres: did not run: store test"),
                                 ("cmocka", CMOCKA_SKIP,
                                  "unit_parse_dcgmi: passed, but skipped published_fixtures"),
                                 ("runner", RUNNER_SKIP,
                                  "export_cli: passed, but skipped promtool check")):
            f = junit(tmp, name + ".xml", [CLEAN, case])
            rc, out = run(a.ci_skips, f)
            check(rc == 0 and says in out and "1 skipped" in out,
                  f"{name}: listed outside CI, which passes: {rc} {out!r}")
            rc, out = run(a.ci_skips, "--fail", f)
            check(rc == 1 and says in out, f"{name}: fails the run in CI: {rc} {out!r}")
        rc, out = run(a.ci_skips, "--fail", os.path.join(tmp, "missing.xml"))
        check(rc == 1 and "cannot read" in out, f"no results is not a clean run: {rc} {out!r}")
    print(f"{'FAILED' if failures else 'passed'}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

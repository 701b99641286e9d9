#!/usr/bin/env python3
"""Runs nodegate's command-line tests: one JSON file per case under cases/.

A case says how to run the binary and what must come back:
  {"args": ["gate", "--baseline", "@examples/baseline.json", "@tmp/r.json"],
   "files": {"r.json": {...} or "text"},   written into a fresh temp dir (@tmp)
   "stdin": "text" | {"lines": [...]},      optional standard input
   "env": {"NAME": "value"},                 optional extra environment
   "exit": 1,
   "stdout": "exact text",                   optional
   "stdout_has": ["..."], "stdout_not": ["..."], "stderr_has": ["..."],
   "stdout_json_lines": [{...}, ...],        every output line parsed and compared
   "out_file_json": {"name": "out.json", "has": ["..."]}}   a file the command wrote
"@fake_tool" is the stand-in program of tests/standins (FAKE_MODE picks its act).
Generated inputs too large to keep in a file are built by GENERATORS below.
Prints one line per case and ends with "N passed, N failed".
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def long_samples_case(n):
    rec = {"class": "c", "samples": [240.0] * n, "wrong": 0,
           "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}
    return json.dumps({"record": rec, "baseline": {"class": "c", "median": 240.0, "cv": 0.04}}) + "\n"


GENERATORS = {
    # A single line of about 6 MB: a million samples.
    "million_samples": lambda: long_samples_case(1_000_000),
    # Nesting far past what any parser should recurse into.
    "deep_nesting": lambda: '{"record": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
}


FAKE_TOOL = ""


def expand(value, tmp, examples):
    if isinstance(value, str):
        return value.replace("@tmp", tmp).replace("@examples", examples).replace("@fake_tool", FAKE_TOOL)
    if isinstance(value, list):
        return [expand(v, tmp, examples) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, tmp, examples) for k, v in value.items()}
    return value


def run_case(path, nodegate, examples):
    case = json.load(open(path))
    failures = []
    with tempfile.TemporaryDirectory(prefix="nodegate-cli-") as tmp:
        for name, content in case.get("files", {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content))
        stdin = case.get("stdin")
        if isinstance(stdin, dict) and "lines" in stdin:
            stdin = "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in stdin["lines"])
        elif isinstance(stdin, dict) and "generate" in stdin:
            stdin = GENERATORS[stdin["generate"]]()
        env = dict(os.environ)
        env.pop("NODEGATE_POLICY", None)
        env.update(expand(case.get("env", {}), tmp, examples))
        args = [nodegate] + expand(case["args"], tmp, examples)
        try:
            p = subprocess.run(args, input=(stdin or "").encode(), capture_output=True,
                               env=env, timeout=120, cwd=tmp)
        except subprocess.TimeoutExpired:
            return ["timed out after 120 s"]
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        want = case.get("exit", 0)
        if p.returncode != want:
            failures.append(f"exit status {p.returncode}, expected {want}")
        if "stdout" in case and out != expand(case["stdout"], tmp, examples):
            failures.append(f"stdout differs:\n--- expected\n{case['stdout']}--- got\n{out}")
        for s in expand(case.get("stdout_has", []), tmp, examples):
            if s not in out:
                failures.append(f"stdout lacks {s!r}")
        for s in case.get("stdout_not", []):
            if s in out:
                failures.append(f"stdout has {s!r}")
        for s in case.get("stderr_has", []):
            if s not in err:
                failures.append(f"stderr lacks {s!r}")
        if "out_file_json" in case:
            f = os.path.join(tmp, case["out_file_json"]["name"])
            try:
                text = open(f).read()
                json.loads(text)
                for s in case["out_file_json"].get("has", []):
                    if s not in text:
                        failures.append(f"{f} lacks {s!r}")
            except (OSError, ValueError) as e:
                failures.append(f"{f}: {e}")
        if "stdout_json_lines" in case:
            lines = out.splitlines()
            exp = case["stdout_json_lines"]
            if len(lines) != len(exp):
                failures.append(f"{len(lines)} output lines, expected {len(exp)}")
            for i, (line, e) in enumerate(zip(lines, exp), 1):
                try:
                    got = json.loads(line)
                except ValueError:
                    failures.append(f"output line {i} is not JSON: {line[:200]!r}")
                    continue
                # {"error": true} matches any error message.
                if e.get("error") is True and "error" in got:
                    got = dict(got, error=True)
                if got != e:
                    failures.append(f"output line {i}: got {got}, expected {e}")
        if failures:
            failures.append(f"command: {' '.join(args)}\nstderr: {err[:2000]}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--fake-tool", default="", help="the stand-in tool, for run cases")
    ap.add_argument("only", nargs="*", help="case names to run")
    a = ap.parse_args()
    global FAKE_TOOL
    FAKE_TOOL = os.path.abspath(a.fake_tool) if a.fake_tool else ""
    nodegate = os.path.abspath(a.nodegate)
    examples = os.path.abspath(a.examples)
    names = sorted(f for f in os.listdir(a.cases) if f.endswith(".json"))
    if not FAKE_TOOL:
        names = [n for n in names if "@fake_tool" not in open(os.path.join(a.cases, n)).read()]
    if a.only:
        names = [n for n in names if n[:-5] in a.only]
    passed = failed = 0
    for name in names:
        problems = run_case(os.path.join(a.cases, name), nodegate, examples)
        if problems:
            failed += 1
            print(f"FAIL {name[:-5]}")
            for pr in problems:
                print("    " + pr.replace("\n", "\n    "))
        else:
            passed += 1
            print(f"ok   {name[:-5]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not names else 0


if __name__ == "__main__":
    sys.exit(main())

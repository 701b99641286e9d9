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
   "out_file_json": {"name": "out.json", "has": ["..."]},   a file the command wrote
   "stdout_json": {...}}                     stdout parsed as one JSON document; every
                                             key given must match (objects by subset,
                                             lists item by item and of equal length)
A case may instead run "steps" in order in the same temp dir, each a command as
above ({"args": [...], "exit": ..., "stdout_has": ...}, with its own "env" added
to the case's) or {"sql": "...", "db": "@tmp/x.db"}: statements run with Python's
sqlite3 module, e.g. to tamper with a store. A failing step ends the case.
"@data" is tests/cli/data. NODEGATE_STORE is @tmp/nodegate.db unless a case sets
it, so no case ever touches a real store; NODEGATE_NOW is unset unless set.
"@fake_tool" is the stand-in program of tests/standins (FAKE_MODE picks its act).
Generated inputs too large to keep in a file are built by GENERATORS below.
Prints one line per case and ends with "N passed, N failed".
"""
import argparse
import json
import os
import sqlite3
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
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def expand(value, tmp, examples):
    if isinstance(value, str):
        return (value.replace("@tmp", tmp).replace("@examples", examples)
                .replace("@fake_tool", FAKE_TOOL).replace("@data", DATA))
    if isinstance(value, list):
        return [expand(v, tmp, examples) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, tmp, examples) for k, v in value.items()}
    return value


def json_subset(want, got, where="stdout"):
    """Differences between what a case expects and a JSON value, as messages."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {got!r}"]
        out = []
        for k, v in want.items():
            if k not in got:
                out.append(f"{where}: no key {k!r}")
            else:
                out += json_subset(v, got[k], f"{where}.{k}")
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{where}: expected {len(want)} items, got {got!r}"]
        out = []
        for i, (w, g) in enumerate(zip(want, got)):
            out += json_subset(w, g, f"{where}[{i}]")
        return out
    if want != got or type(want) is bool and type(got) is not bool:
        return [f"{where}: expected {want!r}, got {got!r}"]
    return []


def run_sql(step, tmp, examples):
    db = expand(step["db"], tmp, examples)
    try:
        con = sqlite3.connect(db)
        con.executescript(step["sql"])
        con.commit()
        con.close()
    except sqlite3.Error as e:
        return [f"sql on {db}: {e}"]
    return []


def run_command(step, base_env, tmp, examples, nodegate):
    failures = []
    stdin = step.get("stdin")
    if isinstance(stdin, dict) and "lines" in stdin:
        stdin = "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in stdin["lines"])
    elif isinstance(stdin, dict) and "generate" in stdin:
        stdin = GENERATORS[stdin["generate"]]()
    env = dict(base_env)
    env.update(expand(step.get("env", {}), tmp, examples))
    args = [nodegate] + expand(step["args"], tmp, examples)
    try:
        p = subprocess.run(args, input=(stdin or "").encode(), capture_output=True,
                           env=env, timeout=120, cwd=tmp)
    except subprocess.TimeoutExpired:
        return ["timed out after 120 s"]
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    want = step.get("exit", 0)
    if p.returncode != want:
        failures.append(f"exit status {p.returncode}, expected {want}")
    if "stdout" in step and out != expand(step["stdout"], tmp, examples):
        failures.append(f"stdout differs:\n--- expected\n{step['stdout']}--- got\n{out}")
    for s in expand(step.get("stdout_has", []), tmp, examples):
        if s not in out:
            failures.append(f"stdout lacks {s!r}")
    for s in step.get("stdout_not", []):
        if s in out:
            failures.append(f"stdout has {s!r}")
    for s in expand(step.get("stderr_has", []), tmp, examples):
        if s not in err:
            failures.append(f"stderr lacks {s!r}")
    if "stdout_json" in step:
        try:
            failures += json_subset(expand(step["stdout_json"], tmp, examples), json.loads(out))
        except ValueError as e:
            failures.append(f"stdout is not one JSON document: {e}")
    if "out_file_json" in step:
        f = os.path.join(tmp, step["out_file_json"]["name"])
        try:
            text = open(f).read()
            json.loads(text)
            for s in step["out_file_json"].get("has", []):
                if s not in text:
                    failures.append(f"{f} lacks {s!r}")
        except (OSError, ValueError) as e:
            failures.append(f"{f}: {e}")
    if "stdout_json_lines" in step:
        lines = out.splitlines()
        exp = step["stdout_json_lines"]
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
        failures.append(f"command: {' '.join(args)}\nstdout: {out[:2000]}\nstderr: {err[:2000]}")
    return failures


def run_case(path, nodegate, examples):
    case = json.load(open(path))
    with tempfile.TemporaryDirectory(prefix="nodegate-cli-") as tmp:
        for name, content in case.get("files", {}).items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content))
        env = dict(os.environ)
        for name in ("NODEGATE_POLICY", "NODEGATE_NOW", "SUDO_USER"):
            env.pop(name, None)
        env["NODEGATE_STORE"] = os.path.join(tmp, "nodegate.db")
        env.update(expand(case.get("env", {}), tmp, examples))
        steps = case.get("steps", [case])
        for i, step in enumerate(steps, 1):
            if "sql" in step:
                failures = run_sql(step, tmp, examples)
            else:
                failures = run_command(step, env, tmp, examples, nodegate)
            if failures:
                if len(steps) > 1:
                    failures.insert(0, f"step {i}:")
                return failures
    return []


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

#!/usr/bin/env python3
"""Every verb's options, through the binary: what its --help lists is what it
parses, and an unknown option is refused with the same message on every verb.

  options_tests.py --nodegate BUILD/nodegate

The verbs come from `nodegate --help`, their subcommands from the message a
verb gives for a wrong one, the probe kinds from `nodegate probe --help`: a
verb added later is checked without a change here.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

A = None
BOGUS = "--no-such-option"
# The GPU checks never exit non-zero on a mistake (cli/config_error.h); npd
# answers "unknown", 2, as node-problem-detector reads it.
CHECK_VERBS = {"epilog": 0, "prolog": 0, "health": 0, "npd": 2}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def run(args, tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NODEGATE_") and not k.startswith("SLURM_")}
    env["NODEGATE_STORE"] = os.path.join(tmp, "store.db")
    env["NODEGATE_NVML_LIBRARY"] = os.path.join(tmp, "no-such-nvml.so")
    env["NODEGATE_KMSG"] = os.path.join(tmp, "no-such-kmsg")
    p = subprocess.run([A.nodegate] + args, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL, timeout=60, cwd=tmp)
    return p.returncode, p.stdout, p.stderr


def section(text, title):
    """The options listed under title ("Options:") up to a blank line, as
    (name, takes a value)."""
    names, inside = [], False
    for line in text.splitlines():
        if line == title:
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            m = re.match(r"^  (?:-\w, |    )?--([\w-]+)( \S)?", line)
            if m:
                names.append((m.group(1), m.group(2) is not None))
    return names


def verbs(tmp):
    _, out, _ = run(["--help"], tmp)
    listed = re.findall(r"^  ([a-z][\w-]*) ", out.split("Commands:\n", 1)[1].split("\n\n")[0], re.M)
    check(len(listed) > 20, f"nodegate --help lists the verbs: {listed}")
    return listed


def invocations(verb, tmp):
    """[verb], or [verb, sub] for each subcommand or probe kind."""
    rc, out, err = run([verb, BOGUS], tmp)
    if verb == "probe":
        _, hout, _ = run(["probe", "--help"], tmp)
        kinds = re.findall(r"^  ([a-z][\w-]*) ", hout.split("Kinds:\n", 1)[1], re.M)
        return [["probe", k] for k in kinds]
    m = re.search(r'unknown (?:subcommand|tool) "%s" \(([^)]*)\)|: say ([\w ,-]*)$' % BOGUS, err, re.M)
    if not m:
        extra = [[verb, "check"]] if verb == "policy" else []
        return [[verb]] + extra
    names = re.split(r", | or ", m.group(1) or m.group(2))
    return [[verb, n] for n in names]


def expected_prefix(inv):
    return "nodegate " + " ".join(inv if inv[0] == "probe" else inv[:1])


def test_unknown_option(inv, tmp):
    rc, out, err = run(inv + [BOGUS], tmp)
    verb = expected_prefix(inv)[len("nodegate "):]
    want = f"unknown option {BOGUS} (see nodegate {verb} --help)"
    check(want in err, f"{' '.join(inv)} {BOGUS}: says {want!r}, got {err!r}")
    first = err.splitlines()[0] if err else ""
    check(first.startswith(f"nodegate {verb}: "), f"{' '.join(inv)}: one line naming the verb: {first!r}")
    check(rc == CHECK_VERBS.get(inv[0], 2), f"{' '.join(inv)} {BOGUS}: exit {rc}")
    check(out.strip() == "" or inv[0] == "npd", f"{' '.join(inv)} {BOGUS}: nothing on stdout: {out!r}")
    # A missing value is worded once too.
    rc, out, err = run(inv + ["-h", "--help"], tmp)
    check(rc == 0 and "Options:\n" in out, f"{' '.join(inv)} --help: an Options section, exit 0")


def test_listed_options_parse(inv, tmp):
    """Each option --help lists is taken: followed by an unknown one, the
    complaint is about that one, or about the listed option's value (or that
    this subcommand takes no such option), never that it is unknown."""
    rc, out, _ = run(inv + ["--help"], tmp)
    names = section(out, "Options:")
    check(names, f"{' '.join(inv)} --help lists options")
    check(len({n for n, _ in names}) == len(names), f"{' '.join(inv)} --help lists an option twice: {names}")
    reached = 0
    for name, takes_value in names:
        if name == "help":
            continue
        rc, _, err = run(inv + [f"--{name}"] + (["1"] if takes_value else []) + [BOGUS], tmp)
        check(f"unknown option --{name}" not in err,
              f"{' '.join(inv)} --help lists --{name}, which is refused as unknown: {err!r}")
        reached += f"unknown option {BOGUS}" in err
    check(reached > 0, f"{' '.join(inv)}: no listed option lets parsing reach the next one")


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    A = ap.parse_args()
    A.nodegate = os.path.abspath(A.nodegate)
    failed = n = 0
    with tempfile.TemporaryDirectory(prefix="nodegate-options-") as tmp:
        for verb in verbs(tmp):
            for inv in invocations(verb, tmp):
                for t in (test_unknown_option, test_listed_options_parse):
                    n += 1
                    try:
                        t(inv, tmp)
                    except (Failure, subprocess.SubprocessError, OSError) as e:
                        failed += 1
                        print(f"FAIL {t.__name__} {' '.join(inv)}: {e}")
    print(f"{n - failed} passed, {failed} failed")
    return 1 if failed or n < 40 else 0


if __name__ == "__main__":
    sys.exit(main())

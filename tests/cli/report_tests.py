#!/usr/bin/env python3
"""nodegate report on a fleet bench/fleetgen generates, on the store backend
NODEGATE_TEST_BACKEND names (sqlite, or postgres with the server URI in
NODEGATE_TEST_PG_URI_FILE).

--mode cli      the report as HTML and JSON against the fleet's planted
                truth: the sick nodes and the fleet regression are marked,
                the breaker, GPU-hours, false rejects, escaping, exit statuses.
--mode browser  the page rendered by headless Chromium: the DOM it builds
                has the marks, and a screenshot is kept in --artifacts.
                Skips (77) when chromium is not installed.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

NOW = 1795996800  # 2026-11-30T00:00:00Z
DAYS = 21
NODES = 400


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(cmd, env=None, timeout=240, ok=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode not in ok:
        raise Failed(f"{' '.join(cmd[:4])}... exited {p.returncode}\nstdout: {p.stdout[-2000:]}\n"
                     f"stderr: {p.stderr[-2000:]}")
    return p


def pg_fresh(name):
    uri_file = os.environ.get("NODEGATE_TEST_PG_URI_FILE")
    if not uri_file or not os.path.exists(uri_file):
        print(f"SKIP: no PostgreSQL test server ({uri_file} missing)")
        sys.exit(77)
    uri = open(uri_file).read().strip()
    db = ("ng_" + name)[:60].lower()
    for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"):
        subprocess.run(["psql", "-q", "-X", "-v", "ON_ERROR_STOP=1", uri, "-c", sql], check=True,
                       capture_output=True)
    base, _, query = uri.partition("?")
    return base.rsplit("/", 1)[0] + "/" + db + ("?" + query if query else "")


class Marks(html.parser.HTMLParser):
    """What a reader of the page (or a test) can find by attribute."""

    def __init__(self):
        super().__init__()
        self.dots = []        # (node, state, flagged) of every strip-plot dot
        self.events = []      # attrs of every fleet-regression mark
        self.breakers = {}    # class -> armed/tripped
        self.cases = []       # data-node of each quarantine row
        self.released = []    # (node, data-release)
        self.tags = set()
        self.ids = []         # every id="..." in page order
        self.named = set()    # node names printed below the strip plots
        self.in_named = 0
        self.yticks = []      # (lane, tick) of the timeline's y axes
        self.gpufault = []    # heights of the timeline's GPU-fault bars
        self.attention = {}   # table id -> [(node, state)] of the first screen
        self.table = None
        self.nowrap_cells = 0
        self.external = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        for k in ("src", "href"):
            v = a.get(k) or ""
            if v and not v.startswith("#"):
                self.external.append(v)
        if a.get("id"):
            self.ids.append(a["id"])
        if tag == "p" and a.get("class") == "named":
            self.in_named += 1
        if tag == "span" and self.in_named and a.get("class") == "nm":
            self.named.add(a.get("data-node"))
        if tag == "text" and "data-tick" in a:
            self.yticks.append((a.get("data-lane"), int(a["data-tick"])))
        if tag == "rect" and a.get("class") == "gpufault":
            self.gpufault.append(float(a["height"]))
        if tag == "table":
            self.table = a.get("id")
        if tag == "tr" and self.table in ("costliest", "admitted-repeat-faults") and "data-node" in a:
            self.attention.setdefault(self.table, []).append((a["data-node"], a.get("data-state")))
        if tag == "td" and a.get("class") == "nm":
            self.nowrap_cells += 1
        if tag == "circle" and "data-node" in a:
            self.dots.append((a["data-node"], a.get("data-state"), a.get("data-flagged") == "true"))
        if a.get("data-event") == "fleet-regression":
            self.events.append(a)
        if "data-breaker" in a:
            self.breakers[a.get("data-class")] = a["data-breaker"]
        if tag == "tr" and (a.get("id") or "").startswith("case-"):
            self.cases.append(a.get("data-node"))
        if tag == "tr" and "data-release" in a:
            self.released.append((a.get("data-node"), a["data-release"]))

    def handle_endtag(self, tag):
        if tag == "p" and self.in_named:
            self.in_named -= 1
        if tag == "table":
            self.table = None

    def handle_data(self, data):
        self.text.append(data)


def marks_of(page):
    m = Marks()
    m.feed(page)
    m.close()
    return m


class Fleet:
    def __init__(self, args, tmp):
        backend = os.environ.get("NODEGATE_TEST_BACKEND", "sqlite")
        self.backend = backend
        self.store = (pg_fresh(f"report_{args.mode}") if backend == "postgres"
                      else os.path.join(tmp, "fleet.db"))
        self.sacct = os.path.join(tmp, "sacct.txt")
        self.truth_path = os.path.join(tmp, "truth.json")
        run([args.fleetgen, "--store", self.store, "--nodes", str(NODES), "--classes", "3",
             "--days", str(DAYS), "--seed", "11", "--now", str(NOW), "--sacct-out", self.sacct,
             "--truth-out", self.truth_path, "--hostile"], timeout=280)
        self.truth = json.load(open(self.truth_path))
        self.env = dict(os.environ, NODEGATE_NOW=str(NOW))
        self.env.pop("NODEGATE_STORE", None)
        self.env.pop("NODEGATE_POLICY", None)
        self.html = os.path.join(tmp, "report.html")
        self.nodegate = args.nodegate

    def report(self, *extra, ok=(0,)):
        return run([self.nodegate, "report", "--store", self.store, *extra], env=self.env, ok=ok)


def sick_expectations(f):
    """The planted nodes the report must mark: those quarantined at the end,
    and the faults that show in every daily screen (slow well beyond the
    flag bar, in most of the plotted week's runs, never repaired)."""
    quarantined = {s["node"] for s in f.truth["sick"] if s["quarantined_now"]}
    slow = {s["node"] for s in f.truth["sick"]
            if s["fault"] == "slow" and s["severity"] >= 0.15 and s["onset_day"] <= DAYS - 4
            and s["metric"] != "storage.seqread.gbps" and not s["repaired"]}
    return quarantined, slow


def cli_checks(f, artifacts):
    page_run = f.report("--html", f.html, "--sacct", f.sacct)
    check(page_run.stdout.startswith("wrote "), f"--html says what it wrote: {page_run.stdout!r}")
    page = open(f.html, encoding="utf-8").read()
    doc = json.loads(f.report("--json", "--sacct", f.sacct).stdout)
    m = marks_of(page)
    quarantined, slow = sick_expectations(f)
    check(quarantined, "the fleet has quarantined nodes to look for")
    check(slow, "the fleet has slow nodes to look for")

    # Self-contained: no script, nothing fetched; the hostile host name escaped.
    check("script" not in m.tags, "the page has no <script> element")
    check(not m.external, f"the page fetches nothing: {m.external[:3]}")
    check("<script>alert(1)" not in page, "a host name's HTML is escaped")
    check(any("<script>alert(1)</script>" in t for t in m.text),
          "the hostile host name is shown as text")

    # Planted sick nodes: quarantined ones drawn as quarantined and listed,
    # slow ones below the bar or quarantined.
    dot_states = {}
    for node, state, flagged in m.dots:
        dot_states.setdefault(node, set()).add((state, flagged))
    for n in quarantined:
        check(any(st == "quarantined" for st, _ in dot_states.get(n, ())),
              f"quarantined planted node {n} is drawn as quarantined")
        check(n in m.cases, f"quarantined planted node {n} is in the quarantine list")
    for n in slow:
        check(any(st == "quarantined" or fl for st, fl in dot_states.get(n, ())),
              f"slow planted node {n} is marked (below the bar or quarantined)")
    q_json = {c["node"] for c in doc["quarantine"]}
    check(quarantined <= q_json, f"--json lists the quarantined nodes: {quarantined - q_json}")
    for c in doc["quarantine"]:
        check(c["release_condition"] and c["evidence"]["failed"], f"case {c['id']} has evidence")
        check(c["age_seconds"] > 0, "a case has an age")

    # The fleet regression: an event per class with the new software,
    # coinciding with the change, shown in the timeline and the event table.
    reg = f.truth["regression"]
    reg_events = [e for e in doc["fleet_events"] if e["software"] == reg["software_after"]
                  and e["software_change"]["coincided"]]
    check(reg_events, f"the regression is a fleet event coinciding with a software change: "
          f"{doc['fleet_events']}")
    for e in reg_events:
        check(e["software_change"]["from"] == reg["software_before"], "... from the old software")
    html_reg = [e for e in m.events if e.get("data-software") == reg["software_after"]]
    check(len(html_reg) >= 2 * len(reg_events), "the page marks each regression event in the "
          "timeline and its table")
    # ... and the fabric distributions sit below the old software's baseline.
    for c in doc["classes"]:
        fab = [x for x in c["metrics"] if x["metric"] == reg["metric"]]
        check(fab and "previous_baseline" in fab[0], f"{c['class']}: the old baseline is drawn")
        ratio = fab[0]["baseline"]["median"] / fab[0]["previous_baseline"]["median"]
        check(abs(ratio - (1 - reg["drop"])) < 0.01, f"the shift is the planted drop: {ratio}")

    # The class that degraded together: breaker tripped, nearly all below the bar.
    deg = f.truth["degraded"]
    check(m.breakers.get(deg["class"]) == "tripped", f"the breaker of {deg['class']} is tripped")
    open_ev = [e for e in doc["fleet_events"] if e["class"] == deg["class"] and not e["cleared_at"]]
    check(open_ev and not open_ev[0]["software_change"]["coincided"],
          "the degraded class's event names no software change")
    deg_series = [x for c in doc["classes"] if c["class"] == deg["class"] for x in c["metrics"]
                  if x["metric"] == deg["metric"]][0]
    check(deg_series["flagged"] >= 0.9 * len(deg_series["nodes"]), "the degraded class is flagged")
    armed = [b for b in doc["breaker"] if b["state"] == "armed"]
    check(len(armed) == 2, f"the other classes' breakers are armed: {doc['breaker']}")

    # GPU-hours: both kinds counted, the worst node is a planted sick one.
    gh = doc["gpu_hours"]
    check(gh["available"], f"GPU-hours from the job accounting: {gh['source']}")
    check(gh["total"]["node_fault_gpu_hours"] > 0 and gh["total"]["job_failure_gpu_hours"] > 0,
          "hours lost to node faults and to job failures")
    planted = {s["node"] for s in f.truth["sick"] if s["fault"] != "harness"}
    check(gh["top_nodes"][0]["node"] in planted,
          f"the node that cost most is a planted sick one: {gh['top_nodes'][0]}")
    by_class = sum(c["node_fault_gpu_hours"] for c in gh["by_class"])
    check(abs(by_class - gh["total"]["node_fault_gpu_hours"]) < 0.5, "classes add up to the total")
    check(any("not read" in n for n in doc["notes"]),
          "the sacct lines with the hostile host name are refused, and the report says so")

    # False rejects: both policy versions, the regression's quarantines
    # released with the same hardware, a repair seen as changed hardware.
    pols = {r["policy"] for r in doc["false_rejects"]["by_class_and_policy"]}
    check(set(f.truth["policies"]) <= pols, f"both policy versions are counted: {pols}")
    rel = {r["release"] for r in doc["released"]}
    check("released-same-hardware" in rel, f"a release with the same hardware: {rel}")
    same = sum(r["released_same_hardware"] for r in doc["false_rejects"]["by_class_and_policy"])
    check(same == f.truth["counts"]["released_same_hardware"],
          f"released with the same hardware: {same} of {f.truth['counts']}")
    changed = sum(r["released_hardware_changed"] for r in doc["false_rejects"]["by_class_and_policy"])
    check(changed == f.truth["counts"]["released_hardware_changed"], "released after a repair")
    check(doc["false_rejects"]["later_stragglers"] > 0, "later stragglers are found")
    check(m.released and all(r in ("released-same-hardware", "released-hardware-changed",
                                    "released-hardware-unknown") for _, r in m.released),
          "released cases are listed with their hardware verdict")

    truth_checks(f, doc, m, page)

    # One class only.
    one = json.loads(f.report("--json", "--no-sacct", "--class", deg["class"]).stdout)
    check([c["class"] for c in one["classes"]] == [deg["class"]], "--class keeps one class")
    check(not one["gpu_hours"]["available"] and "--no-sacct" in one["gpu_hours"]["source"],
          "--no-sacct: no hours, and it says why")

    # Exit statuses and help.
    check("GPU-hours" in f.report("--help").stdout, "--help describes the report")
    f.report("--days", "0", ok=(2,))
    f.report("--bogus", ok=(2,))
    f.report("--sacct", "/nonexistent/sacct.txt", ok=(2,))
    f.report("--html", "/nonexistent-dir/report.html", "--no-sacct", ok=(1,))
    run([f.nodegate, "report", "--store", "/nonexistent/nodegate.db"], env=f.env, ok=(3,))
    summary = f.report("--no-sacct").stdout
    check("quarantined" in summary and "--html" in summary, f"the summary: {summary!r}")
    os.makedirs(artifacts, exist_ok=True)
    shutil.copy(f.html, os.path.join(artifacts, f"report-{f.backend}.html"))


def truth_checks(f, doc, m, page):
    """Issue 23's report: what costs most on the first screen, accounting
    that does not blame the class's regression on a node, no "possible
    false reject" for a node that came back sick, real timeline ticks,
    node names printed."""
    planted = {s["node"] for s in f.truth["sick"] if s["fault"] != "harness"}
    corrupt = {s["node"] for s in f.truth["sick"] if s["fault"] == "corrupt"}
    repeat = {s["node"] for s in f.truth["sick"] if s["quarantines"] >= 2}
    full = json.loads(f.report("--json", "--sacct", f.sacct, "--top", str(NODES * 2)).stdout)
    tops = full["gpu_hours"]["top_nodes"]
    hours = {n["node"]: n["node_fault_gpu_hours"] for n in tops}

    # The first screen: right after the summary cards, before every other section.
    check("attention" in m.ids and m.ids.index("attention") < m.ids.index("breaker") <
          m.ids.index("timeline-section") < m.ids.index("distributions"),
          "the nodes costing the fleet most come before the breaker, timeline and plots")
    att = doc["attention"]
    cost = att["costliest"]
    check(cost and cost[0]["node"] in planted, f"the costliest node is a planted sick one: {cost[:1]}")
    ranked = [n["node"] for n in tops if n["node_fault_gpu_hours"] > 0]
    check([n["node"] for n in cost] == ranked[:len(cost)] and len(cost) == min(10, len(ranked)),
          f"the first screen is the GPU-hours ranking's head: {[n['node'] for n in cost]} {ranked[:10]}")
    vals = [n["node_fault_gpu_hours"] for n in cost]
    check(vals == sorted(vals, reverse=True), f"worst first: {vals}")
    check([n for n, _ in m.attention.get("costliest", [])] == [n["node"] for n in cost],
          "the page's first table is the JSON's list, in order")
    rep_nodes = att["admitted_with_repeated_epilog_faults"]
    want = sorted((n for n in tops if n["state"] in ("admitted", "admitted-warn")
                   and n["epilog_faults"] >= att["repeated_epilog_faults"]),
                  key=lambda n: (-n["epilog_faults"], -n["node_fault_gpu_hours"], n["node"]))
    check(rep_nodes and [n["node"] for n in rep_nodes] == [n["node"] for n in want][:10],
          f"admitted nodes with repeated epilog faults, most first: {rep_nodes} vs {want[:3]}")
    check(all(n["node"] in planted for n in rep_nodes), "... all of them planted sick nodes")
    top_admitted = max(want, key=lambda n: n["node_fault_gpu_hours"])
    check(any(n["node"] == top_admitted["node"] for n in cost),
          "the admitted node losing most is on the first screen, not only in a later section")

    # Accounting: totals add up; a quarantine a fleet event explains charges nothing.
    total = full["gpu_hours"]["total"]["node_fault_gpu_hours"]
    check(abs(sum(hours.values()) - total) < 0.5, f"the nodes add up to the total: {total}")
    in_event = [c for c in full["quarantine"] + full["released"] if c["in_fleet_event"]]
    check(in_event, "the fleet events caught some quarantines")
    healthy_in_event = {c["node"] for c in in_event} - planted
    check(healthy_in_event, "healthy nodes were quarantined within the fleet events")
    for n in healthy_in_event:
        check(hours.get(n, 0) == 0, f"healthy {n}, quarantined in a fleet event, is charged "
              f"{hours.get(n)} node-fault GPU-hours")

    # False rejects: only nodes that stayed well afterwards.
    rel = full["released"]
    possible = [c for c in rel if c["possible_false_reject"]]
    check(possible, "some releases are still possible false rejects")
    for c in possible:
        check(c["node"] not in planted, f"{c['node']} (planted sick) is no possible false reject")
        check(c["node"] not in corrupt | repeat, f"{c['node']} came back: not a false reject")
    cases = full["quarantine"] + rel
    for c in rel:
        others = [o for o in cases if o["node"] == c["node"] and o["id"] != c["id"]
                  and not o["in_fleet_event"]]
        if others:
            check(not c["possible_false_reject"] and "repeat offender" in (c["after_release"] or ""),
                  f"case {c['id']} of repeat offender {c['node']} says so: {c['after_release']}")
    check(any(c["after_release"] for c in rel), "a release followed by another finding says what")
    pfr = sum(r["possible_false_rejects"] for r in full["false_rejects"]["by_class_and_policy"])
    check(pfr == sum(1 for c in possible if c["opened_at"] >= full["from"]),
          f"the table counts the possible false rejects listed: {pfr}")
    html_pfr = page.count('data-possible-false-reject="true"')
    check(html_pfr == len(possible), f"the page marks {html_pfr} possible false rejects, the JSON "
          f"{len(possible)}")

    # The timeline: ticks on both lanes, GPU-fault bars that show.
    lanes = {}
    for lane, t in m.yticks:
        lanes.setdefault(lane, []).append(t)
    check(len(lanes.get("admission", [])) >= 3 and len(lanes.get("gpu-faults", [])) >= 3,
          f"each timeline lane has real y ticks: {lanes}")
    fault_days = sum(1 for d in doc["timeline"] if d.get("gpu_faults"))
    check(fault_days and len(m.gpufault) == fault_days and min(m.gpufault) >= 5,
          f"every day with GPU faults has a bar that shows: {m.gpufault} for {fault_days} days")

    # Names: printed, not only in tooltips; node cells do not wrap.
    quarantined, slow = sick_expectations(f)
    check(quarantined | slow <= m.named, f"the marked nodes are printed below the plots: "
          f"{(quarantined | slow) - m.named}")
    check(".nm{white-space:nowrap}" in page and m.nowrap_cells >= len(cost) + len(doc["quarantine"]),
          "node names sit in cells that do not wrap")


def browser_checks(f, artifacts):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (scripts/setup-deps --test installs it)")
        sys.exit(77)
    f.report("--html", f.html, "--sacct", f.sacct)
    os.makedirs(artifacts, exist_ok=True)
    shot = os.path.join(artifacts, f"report-{f.backend}.png")
    if os.path.exists(shot):
        os.unlink(shot)
    url = "file://" + os.path.abspath(f.html)
    profile = tempfile.mkdtemp(prefix="ng-chromium-")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
            "--no-first-run", f"--user-data-dir={profile}", "--hide-scrollbars"]
    try:
        dom = run(base + ["--dump-dom", url], timeout=120).stdout
        run(base + ["--window-size=1200,7000", f"--screenshot={shot}", url], timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    check(os.path.getsize(shot) > 10000, "the screenshot has something in it")
    m = marks_of(dom)
    quarantined, slow = sick_expectations(f)
    drawn = {(n, st) for n, st, _ in m.dots}
    for n in quarantined:
        check((n, "quarantined") in drawn, f"Chromium's DOM has {n} drawn as quarantined")
    flagged = {n for n, st, fl in m.dots if fl or st == "quarantined"}
    check(slow <= flagged, f"Chromium's DOM marks the slow nodes: {slow - flagged}")
    reg = f.truth["regression"]
    check(any(e.get("data-software") == reg["software_after"] and e.get("data-state")
              for e in m.events), "Chromium's DOM has the regression's fleet events")
    check(m.breakers.get(f.truth["degraded"]["class"]) == "tripped", "... and the tripped breaker")
    check("script" not in m.tags, "no script element after rendering either")
    check(len(m.dots) >= NODES * 3, f"every node is drawn per metric: {len(m.dots)} dots")
    print(f"screenshot: {shot}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("cli", "browser"), required=True)
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--fleetgen", required=True)
    ap.add_argument("--artifacts", required=True)
    args = ap.parse_args()
    if args.mode == "browser" and not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("SKIP: chromium is not installed (scripts/setup-deps --test installs it)")
        return 77
    with tempfile.TemporaryDirectory(prefix="ng-report-") as tmp:
        try:
            f = Fleet(args, tmp)
            (cli_checks if args.mode == "cli" else browser_checks)(f, args.artifacts)
        except Failed as e:
            print(f"FAIL: {e}")
            return 1
    print(f"ok: report {args.mode} on {os.environ.get('NODEGATE_TEST_BACKEND', 'sqlite')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

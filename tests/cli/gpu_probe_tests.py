#!/usr/bin/env python3
"""nodegate probe gpu-compute, gpu-memory and gpu-copy, and nodegate admit
with GPUs, through the real binary, the synthetic GPU backend
(libnodegate-gpu-synth.so) and the synthetic NVML: a healthy node, one
GPU in an x8-like slot, one slow peer link, a corrupted word, a throttled
GPU, a hung NVML, no backend, a driver that will not start, no GPU.

The synthetic backend sleeps for the time each operation would take at the
scenario's rates and reports exactly that as device time, so rates are
known to the digit while intervals, threads and grace periods run on real
time. Every run gets a fresh directory and no NODEGATE_* variable it did
not set. Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import atexit
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

NODEGATE = BACKEND = SYNTH = None


def node(overrides=None, n=8, **top):
    gpus = [{} for _ in range(n)]
    for i, o in (overrides or {}).items():
        gpus[i] = o
    d = {"schema": "nodegate/synthetic-gpus/1"}
    d.update(top)
    d["gpus"] = gpus
    return d


class Run:
    def __init__(self, p, seconds, tmp):
        self.exit = p.returncode
        self.out = p.stdout.decode(errors="replace")
        self.err = p.stderr.decode(errors="replace")
        self.seconds = seconds
        self.tmp = tmp
        try:
            self.json = json.loads(self.out)
        except ValueError:
            self.json = None

    @property
    def records(self):
        return self.json["records"] if self.json else []

    def __repr__(self):
        return f"exit {self.exit} in {self.seconds:.2f} s\nstdout:\n{self.out[-3000:]}\nstderr:\n{self.err[-3000:]}"


def run(args, gpus=None, backend=True, files=None, timeout=120, policy=None, root=None):
    tmp = tempfile.mkdtemp(prefix="ng-gpu-test-")
    atexit.register(shutil.rmtree, tmp, True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
    sfile = os.path.join(tmp, "gpus.json")
    with open(sfile, "w") as f:
        json.dump(gpus if gpus is not None else node(), f)
    env["NODEGATE_SYNTH_GPUS"] = sfile
    env["NODEGATE_NVML_LIBRARY"] = SYNTH
    if root:
        env["NODEGATE_ROOT"] = root
    if backend is True:
        env["NODEGATE_GPU_BACKEND"] = BACKEND
    elif backend:
        env["NODEGATE_GPU_BACKEND"] = backend
    with open(os.path.join(tmp, "policy.json"), "w") as f:
        json.dump(policy or {}, f)
    for name, content in (files or {}).items():
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(content, f)
    argv = [NODEGATE, "--policy", os.path.join(tmp, "policy.json")]
    argv += [a.replace("@tmp", tmp) for a in args]
    t0 = time.monotonic()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, cwd=tmp)
    return Run(p, time.monotonic() - t0, tmp)


def check(cond, what, r=None):
    if not cond:
        raise AssertionError(what + ("\n" + repr(r) if r is not None else ""))


def baseline(metric, median, gpus=None):
    """A baseline for this node's class (as `nodegate identity` gives it on these GPUs)."""
    ident = run(["identity", "--json"], gpus=gpus)
    check(ident.exit == 0 and ident.json and ident.json.get("class"), "the node's class", ident)
    return {"schema": "nodegate/baseline/1", "class": ident.json["class"], "metric": metric,
            "median": median, "cv": 0.02}


def who(rec):
    d = rec["detail"]
    if "gpu" in d:
        return d["gpu"]["index"]
    return (d["src"]["index"], d["dst"]["index"])


def outliers(r, metric):
    return sorted((who(x) for x in r.records
                   if x["metric"] == metric and x["detail"]["siblings"]["outlier"]), key=str)


QUICK_COMPUTE = ["probe", "gpu-compute", "--quick", "--size", "4096", "--json"]
QUICK_MEMORY = ["probe", "gpu-memory", "--quick", "--json"]
QUICK_COPY = ["probe", "gpu-copy", "--quick", "--json"]

# ---- healthy -------------------------------------------------------------------------


def test_healthy_compute():
    r = run(QUICK_COMPUTE)
    check(r.exit == 0, "a healthy node exits 0", r)
    recs = r.records
    check(len(recs) == 8, "one record per GPU", r)
    for i, rec in enumerate(recs):
        check(rec["metric"] == "gpu.gemm.tflops" and rec["unit"] == "TFLOP/s", "metric", r)
        check(rec["detail"]["gpu"]["index"] == i, "GPU order", r)
        check(rec["detail"]["gpu"]["uuid"] == "GPU-00000000-0000-4000-8000-%012x" % i, "uuid", r)
        check(rec["detail"]["gpu"]["pci_bus_id"], "bus id", r)
        check(len(rec["samples"]) >= 8, "samples per interval over 3 s", r)
        check(all(abs(s - 700) < 1e-6 for s in rec["samples"]), "the scenario's 700 TFLOP/s", r)
        check(rec["wrong"] == 0, "verified", r)
        check(not rec["detail"]["siblings"]["outlier"], "no outlier", r)
        check(rec["detail"]["series"]["falling"] is False, "steady", r)
        check(rec["detail"]["nvml"]["status"] == "ok", "NVML read, the probe key accepted", r)
        check(len(rec["detail"]["nvml"]["series"]) >= 8, "an NVML reading per interval", r)
        check(rec["class"] and rec["node"], "stamped with the node's identity", r)
        check(rec["tool"]["probe"] == "gpu-compute", "tool", r)


def test_healthy_memory_and_copy():
    r = run(QUICK_MEMORY)
    check(r.exit == 0 and len(r.records) == 8, "memory: 8 records", r)
    for rec in r.records:
        check(rec["metric"] == "gpumem.copy.gbps" and rec["wrong"] == 0, "memory clean", r)
        check(all(abs(s - 3000) < 1e-6 for s in rec["samples"]), "3000 GB/s", r)
        check(rec["detail"]["integrity"] == {"address": 0, "walking": 0, "random": 0}, "patterns", r)
        # 0.8 of the default 79 GiB free, in whole 16-byte units
        check(rec["conditions"]["bytes"] == int(0.8 * (80 - 1) * 2**30) // 16 * 16, "share", r)
    r = run(QUICK_COPY)
    check(r.exit == 0, "copy exits 0", r)
    by = {}
    for rec in r.records:
        by.setdefault(rec["metric"], []).append(rec)
    check(len(by["gpucopy.h2d.gbps"]) == 8 and len(by["gpucopy.d2h.gbps"]) == 8, "host paths", r)
    check(len(by["gpucopy.p2p.gbps"]) == 56, "every ordered pair", r)
    check(all(rec["wrong"] == 0 for rec in r.records), "verified", r)
    check(not any(rec["detail"]["siblings"]["outlier"] for rec in r.records), "no outlier", r)
    check(r.records[0]["conditions"]["no_peer_access"] == [], "peer access everywhere", r)


def test_copy_paths_need_no_dcgm_results():
    """The copy probe's records are fabric, whose runs the gate asks for DCGM
    results; nodegate verifies these copies itself (gate.diag_exempt_metrics),
    so against a baseline they pass instead of being held as diag-incomplete."""
    r = run(QUICK_COPY + ["--baseline", "@tmp/b.json"], files={"b.json": baseline("gpucopy.h2d.gbps", 55)})
    check(r.exit == 0, "admissible", r)
    verdicts = [v["verdict"] for v in r.json["verdicts"]]
    check(len(verdicts) == 8 and set(verdicts) == {"pass"}, "the eight H2D paths pass", r)


# ---- one slow path ---------------------------------------------------------------------


def test_x8_slot_stands_out():
    r = run(QUICK_COPY, gpus=node({3: {"pcie": {"width": 8}, "probe": {"h2d_gbps": 27, "d2h_gbps": 26}}}))
    check(r.exit == 0, "measured", r)
    check(outliers(r, "gpucopy.h2d.gbps") == [3], "GPU 3's host-to-device stands out alone", r)
    check(outliers(r, "gpucopy.d2h.gbps") == [3], "and its device-to-host", r)
    check(outliers(r, "gpucopy.p2p.gbps") == [], "its peer links are fine", r)
    h = [x for x in r.records if x["metric"] == "gpucopy.h2d.gbps" and who(x) == 3][0]
    check(abs(h["detail"]["siblings"]["percent"] - 27 / 55 * 100) < 1e-6, "percent of siblings", r)
    check(h["detail"]["siblings"]["median"] == 55, "the siblings' median", r)


def test_one_slow_link():
    r = run(QUICK_COPY, gpus=node({2: {"probe": {"p2p": {"5": 120}}}}))
    check(r.exit == 0, "measured", r)
    check(outliers(r, "gpucopy.p2p.gbps") == [(2, 5)], "only the link 2 -> 5", r)
    check(outliers(r, "gpucopy.h2d.gbps") == [], "host paths fine", r)


def test_no_peer_access_pair():
    r = run(QUICK_COPY, gpus=node({0: {"probe": {"p2p": {"1": False}}}}, n=3))
    check(r.exit == 0, "not applicable is not a failure", r)
    pairs = [who(x) for x in r.records if x["metric"] == "gpucopy.p2p.gbps"]
    check(sorted(pairs) == [(0, 2), (1, 2), (2, 0), (2, 1)], "no record for 0 -> 1 or 1 -> 0", r)
    check(r.records[0]["conditions"]["no_peer_access"] == [[0, 1], [1, 0]], "listed", r)


# ---- integrity -------------------------------------------------------------------------


def test_planted_corrupt_word_is_corrupt():
    r = run(QUICK_MEMORY + ["--plant-corrupt-word", "4242", "--baseline", "@tmp/b.json"],
            files={"b.json": baseline("gpumem.copy.gbps", 3000)})
    check(r.exit == 1, "corrupt is not admissible", r)
    first = r.records[0]
    check(first["wrong"] == 1, "one word", r)
    check(first["detail"]["integrity"]["random"] == 1, "in the random pattern", r)
    check(first["detail"]["first_mismatches"] == [{"pattern": "random", "offset": hex(4242 * 8)}],
          "its byte offset", r)
    check(all(x["wrong"] == 0 for x in r.records[1:]), "only the first GPU", r)
    verdicts = [v["verdict"] for v in r.json["verdicts"]]
    check(verdicts[0] == "corrupt", "the gate says corrupt", r)
    check(verdicts[1:] == ["pass"] * 7, "the others pass", r)


def test_scenario_corrupt_words_and_gemm_wrong():
    r = run(QUICK_MEMORY, gpus=node({6: {"probe": {"corrupt_words": [0, 99]}}}))
    rec = r.records[6]
    check(rec["wrong"] == 6, "two words in each of three patterns", r)
    check(rec["detail"]["first_mismatches"][:2] == [{"pattern": "address", "offset": "0x0"},
                                                   {"pattern": "address", "offset": hex(99 * 8)}], "offsets", r)
    r = run(QUICK_COMPUTE + ["--duration", "1"], gpus=node({1: {"probe": {"gemm_wrong": 17}}}))
    check(r.records[1]["wrong"] == 17 and r.records[0]["wrong"] == 0, "GEMM mismatches", r)
    check(r.records[1]["detail"]["verify"]["checked"] == 4096 * 4096, "every element checked", r)


# ---- throttling ------------------------------------------------------------------------


def test_thermal_throttle_falls_with_its_cause():
    # Busy at 1980 MHz and 70 C with no reason; after a second, HW thermal
    # slowdown at 1150 MHz and 91 C (what NVML says) and 60 % of the rate.
    gpus = node({4: {"clock_reasons": [], "sm_clock_mhz": 1980, "temperature_c": 70, "power_mw": 690000,
                     "probe": {"throttle": {"after_s": 1.0, "share": 0.6, "clock_reasons": ["hw_thermal"],
                                            "sm_clock_mhz": 1150, "temperature_c": 91}}}})
    r = run(QUICK_COMPUTE, gpus=gpus)
    check(r.exit == 0, "measured", r)
    s = r.records[4]["detail"]["series"]
    check(s["falling"] is True, "a falling series", r)
    check(abs(s["drop_percent"] - 40) < 1e-6, "by 40 %", r)
    check(s["cause"].startswith("HW thermal slowdown while the rate fell"), "named cause", r)
    check(s["sm_clock_before_mhz"] == 1980 and s["sm_clock_during_mhz"] == 1150, "clocks first -> last", r)
    check(s["clocks_held"] is False, "the clock fell", r)
    check(s["temperature_max_c"] == 91 and s["power_max_w"] == 690, "temperature and power", r)
    nv = r.records[4]["detail"]["nvml"]["series"]
    check(nv[0]["clock_reasons"] == "" and nv[-1]["clock_reasons"] == "HW thermal slowdown",
          "NVML's series shows the reason arrive", r)
    check(r.records[4]["detail"]["siblings"]["outlier"], "and below its siblings", r)
    check(all(not x["detail"]["series"]["falling"] for i, x in enumerate(r.records) if i != 4),
          "only GPU 4 falls", r)


def test_planted_throttle_is_not_the_clocks():
    r = run(QUICK_COMPUTE + ["--plant-throttle", "0.5", "--gpus", "5,6"])
    check(r.exit == 0 and len(r.records) == 2, "two GPUs", r)
    first, second = r.records
    check(first["detail"]["gpu"]["index"] == 5, "order of --gpus", r)
    check(first["conditions"]["planted_throttle_share"] == 0.5, "recorded", r)
    s = first["detail"]["series"]
    check(s["falling"] and abs(s["drop_percent"] - 50) < 1e-6, "falls by half", r)
    check("not the GPU's clocks" in s["cause"], "no reason reported: not the clocks", r)
    check(not second["detail"]["series"]["falling"], "the second GPU holds", r)
    # the fall begins about a third of the way in
    check(0.8 <= s["fall_t_s"] <= 1.3, "fall at a third of 3 s", r)


def test_hung_nvml_does_not_hold_the_probe():
    gpus = node(fail={"hang": "nvmlDeviceGetTemperature"})
    r = run(QUICK_COMPUTE + ["--duration", "1", "--interval", "0.25"], gpus=gpus, timeout=60)
    check(r.exit == 0, "the GEMMs were measured", r)
    check(r.seconds < 1 + 2 + 3, "done within the duration and the grace period", r)
    st = r.records[0]["detail"]["nvml"]["status"]
    check("did not return" in st, "says NVML hung", r)
    check(all(len(x["samples"]) >= 3 for x in r.records), "samples kept", r)


# ---- nothing to measure with ------------------------------------------------------------


def test_no_backend():
    for args in (QUICK_COMPUTE, QUICK_MEMORY, QUICK_COPY):
        r = run(args, backend="/nonexistent/libnodegate-gpu-cuda.so")
        check(r.exit == 1, "no measurement is exit 1", r)
        check(r.records and all(x["samples"] == [] for x in r.records), "no samples", r)
        check(all("/nonexistent/libnodegate-gpu-cuda.so" in x["reason"] for x in r.records), "why", r)
        check("no measurement" in r.err, "said on stderr", r)
    r = run(QUICK_COPY, backend="/nonexistent/x.so")
    check(len(r.records) == 3, "one record per copy metric", r)
    # The default search: the CUDA backend beside this build's nodegate (built
    # where nvcc is) finds no driver here; without it, nothing is found.
    r = run(QUICK_COMPUTE + ["--baseline", "@tmp/b.json"], backend=None,
            files={"b.json": baseline("gpu.gemm.tflops", 700)})
    beside = os.path.join(os.path.dirname(os.path.abspath(NODEGATE)), "libnodegate-gpu-cuda.so")
    if os.path.exists(beside) and r.records and r.records[0]["samples"]:
        return  # a real GPU answered through the CUDA backend: nothing is absent here
    check(r.exit == 1, "exit 1", r)
    check(r.json["verdicts"][0]["verdict"] == "no-measurement", "the gate: no-measurement", r)
    want = "(cuda) could not start" if os.path.exists(beside) else "libnodegate-gpu-cuda.so is neither beside nodegate"
    check(want in r.records[0]["reason"], "says why: " + want, r)


def test_driver_does_not_start_and_no_gpu():
    r = run(QUICK_MEMORY, gpus=node(fail={"init": "DRIVER_NOT_LOADED"}))
    check(r.exit == 1 and r.records[0]["samples"] == [], "no measurement", r)
    check("fail.init" in r.records[0]["reason"] and "could not start" in r.records[0]["reason"], "why", r)
    r = run(QUICK_COMPUTE, gpus=node(n=0))
    check(r.exit == 1 and "sees no GPU" in r.records[0]["reason"], "no GPU", r)
    r = run(QUICK_COPY, gpus=node(fail={"zero_devices": True}))
    check(r.exit == 1 and all("sees no GPU" in x["reason"] for x in r.records), "zero devices", r)


def test_one_gpu_fails():
    r = run(QUICK_COMPUTE + ["--duration", "1"], gpus=node({2: {"probe": {"fail": "gemm_run"}}}))
    check(r.exit == 1, "a GPU without a measurement is exit 1", r)
    check(r.records[2]["samples"] == [] and "gemm_run" in r.records[2]["reason"], "that GPU says why", r)
    check(all(x["samples"] for i, x in enumerate(r.records) if i != 2), "the others measured", r)
    r = run(QUICK_COPY, gpus=node({1: {"lost": True}}, n=3))
    bad = [x for x in r.records if not x["samples"]]
    check(bad and all("lost" in x["reason"] for x in bad), "a lost GPU's paths say so", r)
    check(len(bad) == 2 + 4, "its two host paths and four peer paths", r)


def test_usage():
    for args in (["probe", "gpu-compute", "--plant-throttle", "1.5"],
                 ["probe", "gpu-compute", "--gpus", "a"],
                 ["probe", "gpu-compute", "--size", "8"],
                 ["probe", "gpu-memory", "--share", "0.99"],
                 ["probe", "gpu-copy", "--size", "12345"],
                 ["probe", "gpu-copy", "--interval", "2", "--duration", "1"]):
        r = run(args)
        check(r.exit == 2, "usage error: " + " ".join(args), r)
    r = run(["probe", "gpu-compute", "--gpus", "8"])
    check(r.exit == 2 and "no GPU 8" in r.err, "a GPU the backend lacks", r)
    for kind in ("gpu-compute", "gpu-memory", "gpu-copy"):
        r = run(["probe", kind, "--help"])
        check(r.exit == 0 and "Exit status" in r.out and "NODEGATE_GPU_BACKEND" in r.out, "help", r)
    r = run(["probe", "--help"])
    check("gpu-compute" in r.out and "gpu-copy" in r.out, "listed among the kinds", r)


def test_synthetic_nvml_refuses_bad_probe_key_type():
    # the synthetic backend checks the probe object; a typo is refused, not ignored
    r = run(QUICK_MEMORY, gpus=node({0: {"probe": {"tflop": 1}}}))
    check(r.exit == 1 and "unknown key \"tflop\"" in r.records[0]["reason"], "typo refused", r)


# ---- admission -------------------------------------------------------------------------


# The tests run beside others (ctest -j): a confirmation must not be refused
# because this machine is busy, as it would be on a node that is not drained.
EXCLUSIVE_ANYWAY = {"admission": {"exclusive_max_runnable": 1000}}


def admit(gpus, extra=(), backend=True, root=None):
    return run(["admit", "--store", "@tmp/s.db", "--quick", "--skip", "storage", "--storage-path", "@tmp",
                "--json"] + list(extra), gpus=gpus, backend=backend, timeout=300, policy=EXCLUSIVE_ANYWAY,
               root=root)


def pci_root(n):
    """A kernel's view with N NVIDIA 3D controllers on the PCI bus."""
    root = tempfile.mkdtemp(prefix="ng-gpu-root-")
    atexit.register(shutil.rmtree, root, True)
    for i in range(n):
        d = os.path.join(root, "sys", "bus", "pci", "devices", f"0000:{0x18 + i:02x}:00.0")
        os.makedirs(d)
        for name, value in (("vendor", "0x10de"), ("class", "0x030200"), ("device", "0x2335")):
            with open(os.path.join(d, name), "w") as f:
                f.write(value + "\n")
    return root


def test_admit_holds_gpus_no_backend_measures():
    """NVIDIA GPUs on the PCI bus and no GPU probe backend (a build without
    nvcc): held, never admitted on CPU and host memory alone, and the
    reason is in the JSON as well as on stderr."""
    r = admit(node(), ["--skip", "compute"], backend="/nonexistent/x.so", root=pci_root(2))
    check(r.json is not None and r.json["outcome"] == "held" and r.exit == 1, "held", r)
    gpu = [x for x in r.json["results"] if x["metric"].startswith("gpu")]
    check(gpu and all(x["status"] == "unmeasured" for x in gpu), "the GPU records, unmeasured", r)
    check("2 NVIDIA GPUs on the PCI bus" in r.err, "the reason on stderr", r)
    check("2 NVIDIA GPUs on the PCI bus" in json.dumps(r.json), "the reason in the JSON", r)


def test_admit_holds_gpus_the_backend_does_not_see():
    """The backend sees 8 GPUs, the bus shows 9: the ninth is unmeasured,
    and the node is held."""
    r = admit(node(), ["--skip", "memory"], root=pci_root(9))
    check(r.json is not None and r.json["outcome"] == "held" and r.exit == 1, "held", r)
    check("9 NVIDIA GPUs on the PCI bus, but the GPU backend sees 8" in json.dumps(r.json),
          "the reason in the JSON", r)


def test_admit_runs_gpu_probes():
    r = admit(node(), ["--skip", "compute"])
    check(r.json is not None, "a decision", r)
    metrics = {x["metric"] for x in r.json["results"]}
    check({"gpumem.copy.gbps", "gpucopy.h2d.gbps", "gpucopy.d2h.gbps", "gpucopy.p2p.gbps"} <= metrics,
          "the GPU memory and copy probes ran", r)
    check("gpu.gemm.tflops" not in metrics, "--skip compute skips the GPU GEMM too", r)
    check(sum(x["metric"] == "gpumem.copy.gbps" for x in r.json["results"]) == 8, "one per GPU", r)
    check(r.exit == 0 and r.json["outcome"] == "admitted-warn",
          "a class without a baseline: admitted-warn", r)


def test_admit_sibling_outlier_before_a_baseline():
    """Before the class has a baseline, the node's own siblings are the only
    comparison: an x8-like slot (27 of 55 GB/s) fails, is confirmed by
    re-running the copy probe, and quarantines the node."""
    r = admit(node({3: {"probe": {"h2d_gbps": 27}}}), ["--skip", "compute"])
    check(r.json is not None, "a decision", r)
    check(any("GPU-00000000-0000-4000-8000-000000000003" in n and "gpucopy.h2d.gbps" in n
              for n in r.json["notes"]), "the slow slot is told", r)
    check(r.exit == 1 and r.json["outcome"] == "quarantined", "the outlier, twice, quarantines", r)
    check(any(b["metric"] == "gpucopy.h2d.gbps" for b in r.json["because"]), "because its H2D", r)
    check({b.get("stage") for b in r.json["because"]} >= {"first", "confirm"} or
          len(r.json["because"]) >= 2, "both runs named", r)


def test_admit_quarantines_corrupt_gpu_memory():
    r = admit(node({5: {"probe": {"corrupt_words": [7]}}}), ["--skip", "compute"])
    check(r.exit == 1 and r.json["outcome"] == "quarantined", "wrong results quarantine", r)
    check(any(b["metric"] == "gpumem.copy.gbps" for b in r.json["because"]), "because GPU memory", r)


def test_admit_slowest_gpu_fails_the_node():
    """Eight gpumem records of one node against a class baseline of ten
    peers: the one slow GPU flags the node, and failing again quarantines
    it; the hysteresis keeps one history per GPU."""
    healthy = run(QUICK_MEMORY)
    check(healthy.exit == 0, "a healthy run to make peers of", healthy)
    tmp = healthy.tmp
    for n in range(10):
        peer = []
        for rec in healthy.records:
            rec = dict(rec, node="peer-%02d" % n)
            rec["samples"] = [3000 * (1 + 0.002 * ((n + i) % 5 - 2)) for i in range(len(rec["samples"]))]
            peer.append(rec)
        with open(os.path.join(tmp, "peer%02d.json" % n), "w") as f:
            json.dump(peer, f)
    store = os.path.join(tmp, "s.db")
    r = run(["ingest", "--store", store, "--accepted"] + [os.path.join(tmp, "peer%02d.json" % n) for n in range(10)])
    check(r.exit == 0, "ingested", r)
    r = run(["baseline", "build", "--store", store])
    check(r.exit == 0 and "ok (baseline" in r.out, "a class baseline", r)
    slow = node({6: {"probe": {"mem_gbps": 2000}}})
    runs = []
    for k in range(2):
        m = run(["probe", "gpu-memory", "--quick", "--out", os.path.join(tmp, "own%d.json" % k)], gpus=slow)
        check(m.exit == 0, "measured", m)
        runs.append(os.path.join(tmp, "own%d.json" % k))
    r = run(["admit", "--store", store, "--from", runs[0], "--json"])
    check(r.exit == 1 and r.json["outcome"] == "suspect" and r.json["confirm"] == ["memory"],
          "one slow GPU of eight flags the node's memory", r)
    status = [(x["value"], x["status"]) for x in r.json["results"]]
    check(status.count((2000, "flagged")) == 1 and status.count((3000, "ok")) == 7, "only GPU 6", r)
    r = run(["admit", "--store", store, "--from", runs[0], "--confirm-from", runs[1], "--json"])
    check(r.json["outcome"] == "quarantined", "failing twice in the same domain quarantines", r)
    keys = [k for (k,) in sqlite3.connect(store).execute("SELECT metric FROM hysteresis")]
    check(len(keys) == 8 and all(k.startswith("gpumem.copy.gbps@GPU-") for k in keys),
          "one hysteresis history per GPU: %s" % keys)


def nvidia_on_pci():
    """Whether this machine's PCI bus shows an NVIDIA display or 3D controller."""
    root = "/sys/bus/pci/devices"
    try:
        devs = os.listdir(root)
    except OSError:
        return False
    for d in devs:
        try:
            with open(os.path.join(root, d, "vendor")) as f, open(os.path.join(root, d, "class")) as c:
                if f.read().strip() == "0x10de" and c.read().strip().startswith("0x03"):
                    return True
        except OSError:
            pass
    return False


def test_admit_with_a_broken_backend():
    """A backend that will not load: a node without GPUs is screened as
    before; one whose PCI bus shows NVIDIA GPUs is held, the GPU records
    saying why."""
    r = admit(node(), ["--skip", "compute"], backend="/nonexistent/x.so")
    gpu = [x for x in r.json["results"] if x["metric"].startswith("gpu")]
    if not nvidia_on_pci():
        check(not gpu, "no GPU records on a node without GPUs", r)
        return
    check({x["metric"] for x in gpu} == {"gpumem.copy.gbps", "gpucopy.h2d.gbps", "gpucopy.d2h.gbps",
                                         "gpucopy.p2p.gbps"}, "the GPU records, unmeasured", r)
    check(all(x["status"] == "unmeasured" for x in gpu), "unmeasured", r)
    check(r.json["outcome"] == "held", "held: fix the harness", r)


def main():
    global NODEGATE, BACKEND, SYNTH
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--only")
    a = ap.parse_args()
    NODEGATE, BACKEND, SYNTH = a.nodegate, a.backend, a.synth
    tests = [(k, v) for k, v in globals().items() if k.startswith("test_") and callable(v)]
    passed = failed = 0
    for name, fn in tests:
        if a.only and a.only not in name:
            continue
        t0 = time.monotonic()
        try:
            fn()
            passed += 1
            print(f"ok   {name} ({time.monotonic() - t0:.1f} s)")
        except Exception as e:  # noqa: BLE001 - every failure is reported, then the next test runs
            failed += 1
            print(f"FAIL {name}: {e}")
        sys.stdout.flush()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

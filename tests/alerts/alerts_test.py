#!/usr/bin/env python3
"""The shipped Prometheus alerting rules, on the real parts.

1. `promtool check rules` on examples/etc/prometheus/nodegate-alerts.yml, and
   `promtool test rules` with tests/alerts/nodegate-alerts.test.yml.
2. End to end: a GPU fault planted on the synthetic NVML library, `nodegate
   epilog` keeping its records in a store, `nodegate metrics --textfile`,
   the packaged node_exporter (prometheus-node-exporter) reading that
   directory with its textfile collector, and a Prometheus server on loopback
   scraping it with the rules loaded: NodegateGPUFatal must come back firing
   through the server's HTTP API, naming the GPU and the node's host name,
   and a healthy GPU must not.

Exits 77 (skipped) only when promtool, prometheus or prometheus-node-exporter
is not installed (scripts/setup-deps --test installs them)."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL " + what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    tools = {t: shutil.which(t) for t in ("promtool", "prometheus", "prometheus-node-exporter")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        print(f"SKIP: not installed: {', '.join(missing)} (scripts/setup-deps --test)")
        return 77
    rules = os.path.join(a.source, "examples", "etc", "prometheus", "nodegate-alerts.yml")
    units = os.path.join(a.source, "tests", "alerts", "nodegate-alerts.test.yml")
    tmp = tempfile.mkdtemp(prefix="ng-alerts-test-")
    procs = []
    try:
        shutil.copy(rules, tmp)
        shutil.copy(units, tmp)
        for args in (["check", "rules", "nodegate-alerts.yml"],
                     ["test", "rules", "nodegate-alerts.test.yml"]):
            p = subprocess.run([tools["promtool"], *args], cwd=tmp, capture_output=True,
                               text=True, timeout=120)
            check(p.returncode == 0, f"promtool {' '.join(args)}: {p.stdout}{p.stderr}")
            print(f"ok   promtool {' '.join(args)}")

        # A fatal GPU 0 (volatile uncorrectable ECC) and a healthy GPU 1.
        gpus = os.path.join(tmp, "gpus.json")
        with open(gpus, "w") as f:
            json.dump({"schema": "nodegate/synthetic-gpus/1",
                       "gpus": [{"ecc": {"volatile": {"uncorrected": 2}}}, {}]}, f)
        kmsg = os.path.join(tmp, "kmsg")
        open(kmsg, "w").close()
        store = os.path.join(tmp, "store.db")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("NODEGATE_") and not k.startswith("SLURM")}
        env.update(NODEGATE_NVML_LIBRARY=a.synth, NODEGATE_SYNTH_GPUS=gpus, NODEGATE_KMSG=kmsg,
                   NODEGATE_STATE_DIR=tmp, SLURM_JOB_GPUS="0,1", SLURMD_NODENAME="gpu-alert-7")
        p = subprocess.run([a.nodegate, "--store", store, "epilog"], env=env, capture_output=True,
                           text=True, timeout=60)
        check(p.returncode == 1 and "ng:fatal ecc GPU0" in p.stdout, f"epilog: {p.stdout}{p.stderr}")
        textdir = os.path.join(tmp, "textfile")
        os.mkdir(textdir)
        p = subprocess.run([a.nodegate, "--store", store, "metrics", "--textfile", textdir],
                           env=env, capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"metrics: {p.stdout}{p.stderr}")

        ne_port, prom_port = free_port(), free_port()
        procs.append(subprocess.Popen(
            [tools["prometheus-node-exporter"], f"--web.listen-address=127.0.0.1:{ne_port}",
             "--collector.disable-defaults", "--collector.textfile",
             f"--collector.textfile.directory={textdir}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node_exporter.log"), "w")))
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.join(tmp, "nodegate-alerts.yml")}
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["127.0.0.1:{ne_port}"]
""")
        procs.append(subprocess.Popen(
            [tools["prometheus"], f"--config.file={cfg}",
             f"--storage.tsdb.path={os.path.join(tmp, 'data')}",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w")))
        deadline = time.monotonic() + 90
        firing = []
        while time.monotonic() < deadline:
            try:
                alerts = get(f"http://127.0.0.1:{prom_port}/api/v1/alerts")["data"]["alerts"]
            except (OSError, ValueError, KeyError):
                alerts = []
            firing = [x for x in alerts if x["labels"].get("alertname") == "NodegateGPUFatal"
                      and x["state"] == "firing"]
            if firing:
                break
            for p in procs:
                check(p.poll() is None, f"{p.args[0]} exited {p.returncode}: "
                      + open(os.path.join(tmp, os.path.basename(p.args[0]).replace(
                          "prometheus-node-exporter", "node_exporter") + ".log")).read()[-2000:])
            time.sleep(0.5)
        check(len(firing) == 1, f"NodegateGPUFatal not firing once within 90 s: {firing}")
        labels = firing[0]["labels"]
        check(labels.get("gpu") == "0" and labels.get("Hostname") == "gpu-alert-7"
              and labels.get("severity") == "critical", f"labels {labels}")
        check("GPU 0 of gpu-alert-7 is fatal" in firing[0]["annotations"]["summary"],
              f"annotations {firing[0]['annotations']}")
        q = get(f"http://127.0.0.1:{prom_port}/api/v1/query?query="
                "nodegate_gpu_check_severity%7Bgpu%3D%221%22%2Cseverity%3D%22ok%22%7D")
        check([r["value"][1] for r in q["data"]["result"]] == ["1"], f"GPU 1 reads {q}")
        print(f"ok   a fatal GPU reached a firing alert through node_exporter and Prometheus: "
              f"{labels['alertname']} {labels['Hostname']} GPU {labels['gpu']}")
        print("alerts: passed")
        return 0
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

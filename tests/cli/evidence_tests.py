#!/usr/bin/env python3
"""The failing domain's evidence as `nodegate quarantine show` prints it, on
this machine's own node id, with /proc, /sys and /dev/kmsg planted under
NODEGATE_ROOT and the synthetic NVML library:

  fabric   a first admission flags the fabric (confirmed healthy: no case)
           and captures the ports; three more symbol errors later a second
           one is quarantined, and its case says "+3 since the read of ...";
           GPU 0 and GPU 2 planted without peer access are named
  storage  an NFS mount retransmitting READs, from mountstats
  compute  Xid 48 on GPU 1 in the kernel log since boot

Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILED.append(what)


def plant(root, rel, text):
    path = root + rel
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def record(node, domain, metric, unit, median, path=None):
    r = {"schema": "nodegate/record/1", "node": node, "class": "ev-" + domain,
         "software": "sw-ev", "domain": domain, "metric": metric, "unit": unit,
         "samples": [median * (1 + 0.001 * (k - 4)) for k in range(9)], "wrong": 0,
         "diag": {"pcie": "pass", "memory": "pass", "nccl_tests": "pass"}}
    if path:
        r["conditions"] = {"where": {"path": path}}
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ng-evidence-")
    root = os.path.join(tmp, "root")
    ib = "/sys/class/infiniband/mlx5_0/ports/1"
    plant(root, ib + "/state", "4: ACTIVE\n")
    plant(root, ib + "/counters/symbol_error", "5\n")
    plant(root, ib + "/counters/link_downed", "2\n")
    plant(root, "/proc/self/mountstats",
          "device fs01:/scratch mounted on /scratch with fstype nfs4 statvers=1.1\n"
          "\tage:\t600\n\tper-op statistics\n"
          "\t        READ: 1000 1012 2 120000 102400000 500 72000 75000 0\n")
    plant(root, "/proc/self/mounts", "fs01:/scratch /scratch nfs4 rw,hard 0 0\n")
    plant(root, "/dev/kmsg", "4,101,2000000,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=77, "
          "name=train, An uncorrectable double bit error (DBE) has been detected on GPU\n")
    gpus = os.path.join(tmp, "gpus.json")
    with open(gpus, "w") as f:
        json.dump({"schema": "nodegate/synthetic-gpus/1",
                   "gpus": [{"p2p": {"2": "disabled_by_regkey"}}, {}, {"nvlink": []}, {}]}, f)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODEGATE_")}
    env.update(NODEGATE_ROOT=root, NODEGATE_NVML_LIBRARY=a.synth, NODEGATE_SYNTH_GPUS=gpus,
               NODEGATE_SCONTROL=os.path.join(tmp, "no-scontrol"), TMPDIR=tmp)
    # one store per domain: a node has one open case at a time
    store = ["--store", os.path.join(tmp, "fabric.db")]

    def run(args, t):
        return subprocess.run([a.nodegate] + store + args, capture_output=True, text=True,
                              env=dict(env, NODEGATE_NOW=str(t)), timeout=120)

    node = json.loads(run(["identity", "--json"], 0).stdout)["profile"]["node_id"]
    now = int(time.time())
    files = {}
    for name, recs in {
        "peers": [r for i in range(12) for r in (
            record(f"p{i:02d}", "fabric", "nccl.all_reduce.busbw", "GB/s",
                   300 * (1 + (-1 if i % 2 else 1) * 0.0005 * (i // 2 + 1))),
            record(f"p{i:02d}", "storage", "storage.seqread.gbps", "GB/s",
                   5 * (1 + (-1 if i % 2 else 1) * 0.0005 * (i // 2 + 1)), "/scratch/ng"),
            record(f"p{i:02d}", "compute", "gpu.gemm.tflops", "TFLOP/s",
                   700 * (1 + (-1 if i % 2 else 1) * 0.0005 * (i // 2 + 1))))],
        "fabric_slow": [record(node, "fabric", "nccl.all_reduce.busbw", "GB/s", 200)],
        "fabric_ok": [record(node, "fabric", "nccl.all_reduce.busbw", "GB/s", 300)],
        "storage_slow": [record(node, "storage", "storage.seqread.gbps", "GB/s", 2,
                                "/scratch/ng")],
        "compute_slow": [record(node, "compute", "gpu.gemm.tflops", "TFLOP/s", 300)],
    }.items():
        files[name] = os.path.join(tmp, name + ".json")
        with open(files[name], "w") as f:
            json.dump(recs, f)
    def fresh(name):
        store[1] = os.path.join(tmp, name + ".db")
        p = run(["ingest", "--accepted", files["peers"]], now - 86400)
        check(p.returncode == 0, f"ingest into {name}: {p.stderr[-300:]}")

    def admit(first, confirm, t, want):
        p = run(["admit", "--land", "none", "--from", files[first], "--confirm-from",
                 files[confirm]], t)
        check(p.returncode == want, f"admit {first}/{confirm} exits {want}: {p.returncode} "
              f"{p.stderr[-300:]}")

    def said(case, t):
        p = run(["quarantine", "show", str(case)], t)
        i = p.stdout.find("what the evidence says:")
        return p.stdout[i:] if i >= 0 else ""

    # fabric: flagged and confirmed healthy (no case), then quarantined
    fresh("fabric")
    admit("fabric_slow", "fabric_ok", now, 0)
    plant(root, ib + "/counters/symbol_error", "8\n")
    admit("fabric_slow", "fabric_slow", now + 3600, 1)
    says = said(1, now + 3700)
    first = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now))
    check(f"mlx5_0 port 1: symbol_error +3 since the read of {first} (run " in says and
          "(now 8)" in says, f"the case counts the symbol errors since the earlier read:\n{says}")
    check("mlx5_0 port 1: link_downed counter 2, unchanged since the read of" in says,
          "an unmoved counter says so")
    check("GPU 0 and GPU 2: peer access read disabled_by_regkey" in says,
          "the pair without peer access is named")
    check("GPU 1 and GPU 2" not in says, "a PCIe-only pair is no fault")
    # storage
    fresh("storage")
    admit("storage_slow", "storage_slow", now + 7200, 1)
    says = said(1, now + 7300)
    check("NFS /scratch: 12 of 1000 READ calls retransmitted" in says and
          "NFS /scratch: READ takes 75 ms on average (round trip 72 ms) over 1000 calls" in says,
          f"the NFS mount's RPC statistics:\n{says}")
    # compute
    fresh("compute")
    admit("compute_slow", "compute_slow", now + 10800, 1)
    says = said(1, now + 10900)
    check("GPU 1 (0000:2a:00): Xid 48 since boot: An uncorrectable double bit error (DBE) "
          "has been detected on GPU" in says, f"the Xid since boot:\n{says}")
    if not FAILED:
        subprocess.run(["rm", "-rf", tmp])
    else:
        print("kept", tmp)
    print(f"{'FAILED' if FAILED else 'passed'}: {len(FAILED)} of the checks failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

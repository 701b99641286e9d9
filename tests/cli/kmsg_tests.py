#!/usr/bin/env python3
"""The kernel log read through the real binary as it is scanned, a buffer at
a time (flow/gpu_check_xid.c): a fallen GPU's report across two reads, a
line longer than the buffer, and more Xids in the window than are held
before the window is known, which reads the file a second time. The answers
are those of the log read whole. Uses epilog_tests.py's harness.
Prints one line per test and ends with "N passed, N failed".
"""
import argparse
import os
import sys

import epilog_tests as t
from epilog_tests import check, expect, notes, run

CHUNK = 32 << 10  # the reader's buffer
GPU0, GPU1 = "0000:18:00", "0000:2a:00"  # the synthetic node's first two GPUs
OTHER = "0001:ee:00"  # on no GPU of the node


def filler(n, t0=7000.0):
    """About n bytes of ordinary dmesg lines of 64 bytes each, and the time after them."""
    lines, k = [], 0
    while 64 * (k + 1) <= n:
        lines.append(f"[{t0 + k / 1e3:12.6f}] EXT4-fs (nvme0n1p2): re-mounted. Opts: x{k % 10}\n")
        k += 1
    text = "".join(lines)
    return text + "x" * (n - len(text) - 1) + "\n" if n - len(text) > 1 else text, t0 + k / 1e3


def fallen(bus, at):
    return (f"[{at:12.6f}] NVRM: The NVIDIA GPU {bus}.0\n"
            f"[{at:12.6f}] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
            f"[{at:12.6f}] NVRM: fallen off the bus and is not responding to commands.\n")


def test_report_across_reads():
    # The three lines of a fallen GPU's report, with the end of the first
    # read (and of later ones) falling before, inside and between them.
    report = fallen(GPU0, 8000.0)
    for before in (1, 30, 65, 70, 100, 140, 150, 185, 200, 230):
        head, _ = filler(CHUNK - before)
        r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1"},
                kmsg=head + report + filler(3 * CHUNK)[0] + report.replace(GPU0, GPU1))
        expect(r, "fatal", True, 1)
        check(r.json["xids_read"] == 2, f"{before} bytes before the end of a read: both reports", r)
        bad = [g["bus"] for g in r.json["gpus"] if g["severity"] == "fatal"]
        check(bad == [GPU0, GPU1], "each GPU its own report", r)


def test_line_longer_than_the_buffer():
    long_line = "[ 7000.000000] " + "y" * (3 * CHUNK) + f" NVRM: Xid (PCI:{GPU0}): 79, GPU has fallen off the bus.\n"
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0"}, kmsg=filler(1000)[0] + long_line + filler(500)[0])
    expect(r, "fatal", True, 1)
    # the same line, the log's last and without its line end
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0"}, kmsg=filler(1000)[0] + long_line[:-1])
    expect(r, "fatal", True, 1)


def test_xid_storm_reads_the_file_again():
    # 9,000 Xids in the window, more than are held before the newest line
    # is known; a 79 before the window (not judged) and one in it.
    lines = [f"4,1,1000000000,-;NVRM: Xid (PCI:{GPU0}): 79, GPU has fallen off the bus.\n"]
    lines += [f"4,{i},{7200000000 + i},-;NVRM: Xid (PCI:{OTHER}): 31, pid=1, name=x, Ch {i:08x}\n"
              for i in range(2, 9002)]
    lines.append(f"4,9002,7300000000,-;NVRM: Xid (PCI:{GPU1}): 79, GPU has fallen off the bus.\n")
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0,1"}, kmsg="".join(lines))
    expect(r, "fatal", True, 1)
    bad = [g["bus"] for g in r.json["gpus"] if g["severity"] == "fatal"]
    check(bad == [GPU1], "only the 79 in the window", r)
    # 9,001 in the window; the newest kept as the log read whole keeps them
    check(r.json["xids_read"] == 2857, f"{r.json['xids_read']} Xids kept", r)
    check("6144 older Xid lines left out (only the newest 2857 are attached)" in notes(r), "noted", r)
    # The same storm with the window's start moving past most of it as it
    # is read: the Xids before it are let go as they fall out, and the file
    # is read once.
    lines = [f"4,{i},{1000000000 + i * 1000000},-;NVRM: Xid (PCI:{OTHER}): 31, Ch {i:08x}\n"
             for i in range(1, 12001)]
    lines.append(f"4,12001,{1000000000 + 12000 * 1000000},-;NVRM: Xid (PCI:{GPU0}): 79, fallen.\n")
    r = run(["epilog", "--json"], env={"SLURM_JOB_GPUS": "0"}, kmsg="".join(lines))
    expect(r, "fatal", True, 1)
    check(r.json["xids_read"] == 3602, f"{r.json['xids_read']} Xids in the hour", r)
    # health: no window, every one of them
    r = run(["health", "--json"], kmsg="".join(lines))
    check(r.json["xids_read"] == 3809, f"{r.json['xids_read']} kept", r)
    check("8192 older Xid lines left out (only the newest 3809 are attached)" in notes(r), "noted", r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodegate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--only")
    a = ap.parse_args()
    t.NODEGATE, t.SYNTH = os.path.abspath(a.nodegate), os.path.abspath(a.synth)
    return t.run_tests(globals(), a.only)


if __name__ == "__main__":
    sys.exit(main())

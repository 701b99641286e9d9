#include "core/metric.h"

#include <string.h>

static const struct ng_metric metrics[] = {
	{"nccl.*", "fabric", "GB/s", true,
	 "nccl-tests busbw (decimal GB/s) at the largest message size, e.g. nccl.all_reduce.busbw"},
	{"rdma.*", "fabric", "Gb/s", true,
	 "perftest bandwidth converted to decimal Gb/s (MiB/s / 119.2), e.g. rdma.ib_write_bw.bw_avg"},
	{"rdma.ib_write_lat.t_typical", "fabric", "us", false,
	 "perftest ib_write_lat typical latency (usec); kept in detail, recorded without samples"},
	{"rdma.ib_read_lat.t_typical", "fabric", "us", false,
	 "perftest ib_read_lat typical latency (usec); kept in detail, recorded without samples"},
	{"rdma.ib_send_lat.t_typical", "fabric", "us", false,
	 "perftest ib_send_lat typical latency (usec); kept in detail, recorded without samples"},
	{"rdma.ib_atomic_lat.t_typical", "fabric", "us", false,
	 "perftest ib_atomic_lat typical latency (usec); kept in detail, recorded without samples"},
	{"nvbandwidth.*", "fabric", "GB/s", true,
	 "nvbandwidth testcase bandwidth (decimal GB/s), e.g. nvbandwidth.device_to_device_memcpy_read_ce"},
	{"nvbandwidth.host_device_latency_sm", "fabric", "ns", false,
	 "nvbandwidth latency testcase: SUM of its CPU-GPU pointer-chase latencies (ns); "
	 "kept in detail, recorded without samples"},
	{"nvbandwidth.device_to_device_latency_sm", "fabric", "ns", false,
	 "nvbandwidth latency testcase: SUM of its GPU-GPU pointer-chase latencies (ns); "
	 "kept in detail, recorded without samples"},
	{"nvbandwidth.device_to_device_latency_tma", "fabric", "ns", false,
	 "nvbandwidth latency testcase: SUM of its GPU-GPU TMA latencies (ns); "
	 "kept in detail, recorded without samples"},
	{"dcgm.diag", "health", "", true,
	 "dcgmi diag per-test statuses; no samples, only diag"},
	{"cpu.fp64.gflops", "compute", "GFLOP/s", true,
	 "nodegate probe cpu: FP64 dgemm micro-kernel on every core, aggregate GFLOP/s per interval"},
	{"hostmem.copy.gbps", "memory", "GB/s", true,
	 "nodegate probe hostmem: memcpy on every core, decimal GB/s read + written per interval"},
	{"hostmem.triad.gbps", "memory", "GB/s", true,
	 "nodegate probe hostmem: STREAM triad on every core, decimal GB/s read + written per interval"},
	{"hostmem.copy1t.gbps", "memory", "GB/s", true,
	 "nodegate probe hostmem: memcpy on one core, decimal GB/s read + written per interval"},
	{"gpu.gemm.tflops", "compute", "TFLOP/s", true,
	 "nodegate probe gpu-compute: n x n x n bf16 GEMM (fp32 accumulate) sustained on every GPU at "
	 "once, 2n^3 operations per GEMM over device time, TFLOP/s per interval; one record per GPU"},
	{"gpumem.copy.gbps", "memory", "GB/s", true,
	 "nodegate probe gpu-memory: device copy kernel within a policy share of free GPU memory, "
	 "decimal GB/s read + written per interval; one record per GPU"},
	{"gpucopy.h2d.gbps", "fabric", "GB/s", true,
	 "nodegate probe gpu-copy: pinned host memory to the GPU, decimal GB/s per interval; "
	 "one record per GPU"},
	{"gpucopy.d2h.gbps", "fabric", "GB/s", true,
	 "nodegate probe gpu-copy: the GPU to pinned host memory, decimal GB/s per interval; "
	 "one record per GPU"},
	{"gpucopy.p2p.gbps", "fabric", "GB/s", true,
	 "nodegate probe gpu-copy: GPU to GPU peer to peer, decimal GB/s per interval; "
	 "one record per ordered GPU pair with peer access"},
	{"storage.seqread.gbps", "storage", "GB/s", true,
	 "nodegate probe storage: sequential reads through io_uring, decimal GB/s per interval"},
	{"storage.seqwrite.gbps", "storage", "GB/s", true,
	 "nodegate probe storage: sequential writes through io_uring, decimal GB/s per interval"},
	{"storage.randread.iops", "storage", "IOPS", true,
	 "nodegate probe storage: random reads through io_uring, completed I/Os per second per interval"},
	{"storage.randwrite.iops", "storage", "IOPS", true,
	 "nodegate probe storage: random writes through io_uring, completed I/Os per second per interval"},
};

const struct ng_metric *ng_metric_table(size_t *n)
{
	*n = sizeof metrics / sizeof metrics[0];
	return metrics;
}

const struct ng_metric *ng_metric_lookup(const char *name)
{
	const struct ng_metric *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++) {
		const char *m = metrics[i].name;
		size_t len = strlen(m);
		if (strcmp(m, name) == 0)
			return &metrics[i];
		if (len >= 2 && strcmp(m + len - 2, ".*") == 0 && strncmp(m, name, len - 1) == 0 &&
		    name[len - 1] != '\0' && len - 1 > best_len) {
			best = &metrics[i];
			best_len = len - 1;
		}
	}
	return best;
}

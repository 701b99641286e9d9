/* The host-memory probe: allocation, integrity and bandwidth.
 *
 * The buffer is split across the NUMA nodes in proportion to the threads
 * each node runs (one thread per physical core, pinned), and every part is
 * first touched by a thread of its own node, so each node's memory is
 * measured by its own cores without libnuma. Three integrity patterns are
 * written over all of it and read back (address-in-address, walking ones,
 * seeded random); then copy and triad run on every thread, and copy on one
 * thread, each for a fixed time, one sample per interval.
 *
 * Bandwidth is decimal GB/s of bytes read plus bytes written, as STREAM
 * counts them: copy moves 16 bytes per 8-byte word, triad 24. Write-allocate
 * traffic is not counted. */
#ifndef NODEGATE_COLLECT_PROBE_HOSTMEM_H
#define NODEGATE_COLLECT_PROBE_HOSTMEM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

struct ng_hostmem_opts {
	size_t size;       /* bytes in all; 0: the default (ng_hostmem_default_size) */
	double phase_s;    /* seconds for each bandwidth phase: copy, triad, copy1t */
	double interval_s; /* one sample per interval (at least one pass each) */
	unsigned threads;  /* 0: one per physical core */
	uint64_t seed;     /* of the random pattern */
	bool lock;         /* mlock the buffer; a failure is a record with no samples */
	/* Test-only: when >= 0, one bit of this word (an index into the first
	 * node's buffer) is flipped between writing and verifying the random
	 * pattern, as a bad DIMM would. */
	long long test_corrupt_word;
};

/* Defaults: default size, 2 s phases, 0.4 s intervals, every core, locked. */
void ng_hostmem_opts_default(struct ng_hostmem_opts *o);

/* A quarter of MemAvailable, at most 1 GiB, but at least four times the
 * last-level cache when memory allows, so bandwidth is never the cache's. */
size_t ng_hostmem_default_size(void);

/* Runs the probe. Returns an array of three records, "hostmem.copy.gbps",
 * "hostmem.triad.gbps" and "hostmem.copy1t.gbps"; each carries "wrong", the
 * number of words that read back differently from what was written (the
 * first few addresses are in "detail"). When the memory cannot be allocated
 * or locked, each record has no samples and a reason. NULL only for a usage
 * error (err says which) or out of memory in nodegate itself. */
cJSON *ng_probe_hostmem_run(const struct ng_hostmem_opts *o, ng_err *err);

#endif

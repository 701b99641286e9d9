/* The storage probe: a fixed test file with known content in the directory
 * the job will use, read or written through io_uring at a held queue depth,
 * with O_DIRECT where the filesystem takes it. Every block read is checked
 * against the content it must hold, so a misplaced or corrupted block is
 * counted (`wrong`) rather than timed.
 *
 * The record says where the path lives (filesystem type, mount source, block
 * device) and what was done to the cache, so local scratch is never compared
 * with a shared dataset service, nor a cold run with a warm one. A run that
 * could not measure (disk full, read-only path, vanished file, an I/O error)
 * is a record with no samples and a reason. The test file is removed on every
 * path out, SIGINT and SIGTERM included, unless the caller asks to keep it. */
#ifndef NODEGATE_COLLECT_PROBE_STORAGE_H
#define NODEGATE_COLLECT_PROBE_STORAGE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"

/* Content is laid out and checked in units of this many bytes: each unit
 * carries a magic, its own file offset and the seed, then seeded words. */
#define NG_STORAGE_UNIT 4096u

typedef enum {
	NG_STORAGE_READ,
	NG_STORAGE_RANDREAD,
	NG_STORAGE_WRITE,
	NG_STORAGE_RANDWRITE,
} ng_storage_pattern;

typedef enum { NG_STORAGE_COLD, NG_STORAGE_WARM } ng_storage_cache;

/* Test-only seams: production callers leave them NULL. */
typedef struct {
	/* Called once the test file holds its content and its cache state is
	 * set, before anything is measured: a test corrupts a block or removes
	 * the file here. */
	void (*after_prepare)(const char *file, uint64_t size, uint32_t block, void *arg);
	/* Returns an errno to pretend the named stage ("create", "allocate",
	 * "write", "read") failed with, or 0; lets tests reach ENOSPC and EIO
	 * without a full or failing disk. */
	int (*fault)(const char *stage, void *arg);
	void *arg;
} ng_storage_hooks;

typedef struct {
	const char *dir;        /* where the test file is made */
	uint64_t size;          /* file bytes; rounded down to a whole number of blocks */
	uint32_t block;         /* bytes per I/O, a multiple of NG_STORAGE_UNIT */
	ng_storage_pattern pattern;
	unsigned depth;         /* I/Os kept in flight */
	double duration_s;      /* measured time */
	double interval_s;      /* one sample per interval */
	ng_storage_cache cache;
	bool keep;              /* leave the test file behind (its path is in detail.file) */
	/* Reuse a test file a run with keep left (same seed) instead of writing
	 * one: no time spent writing, and two tools can read the same file. It
	 * is never removed. dir is then ignored (the file's own is examined). */
	const char *file;
	uint64_t seed;          /* content and random offsets */
	const ng_storage_hooks *hooks;
} ng_storage_opts;

/* The admission defaults: 4 GiB, 1 MiB sequential reads at depth 16 for
 * 10 s in 1 s intervals, cold cache. */
void ng_storage_opts_default(ng_storage_opts *o);

const char *ng_storage_pattern_name(ng_storage_pattern p);
int ng_storage_pattern_parse(const char *s, ng_storage_pattern *p);
/* "storage.seqread.gbps", "storage.randread.iops", ... */
const char *ng_storage_metric(ng_storage_pattern p);
bool ng_storage_pattern_random(ng_storage_pattern p);
bool ng_storage_pattern_writes(ng_storage_pattern p);

/* Checks the options; -1 with err saying which one is wrong and why. */
int ng_storage_opts_check(const ng_storage_opts *o, ng_err *err);

/* Runs the probe and returns one record: samples and `wrong` when it
 * measured, no samples and a "reason" when it could not. NULL only when out
 * of memory or the options are invalid (err set). */
cJSON *ng_storage_probe(const ng_storage_opts *o, ng_err *err);

/* The content of len bytes (a multiple of NG_STORAGE_UNIT) at offset. */
void ng_storage_fill(void *buf, uint64_t offset, uint32_t len, uint64_t seed);
/* How many units of buf differ from the content at offset. *found gets the
 * offset written in the first differing unit's header (UINT64_MAX when the
 * header itself is not ours), so a misplaced block can be told from noise. */
uint32_t ng_storage_check(const void *buf, uint64_t offset, uint32_t len, uint64_t seed,
                          uint64_t *found);

/* Where dir lives: {"fs_type", "fs_magic", "mount_point", "mount_source",
 * "mount_options", "device": {"name", "major_minor", "rotational", "model"} or
 * null}. Fields that cannot be read are absent. NULL only when dir cannot be
 * examined (err set). */
cJSON *ng_storage_where(const char *dir, ng_err *err);
/* statfs f_type -> "ext4", "xfs", "nfs", "lustre", ...; NULL when unknown. */
const char *ng_storage_fs_name(unsigned long magic);
/* Splits one /proc/self/mountinfo line. Fields point into line, which is
 * modified (octal escapes such as \040 decoded in place). 0 on success. */
struct ng_mountinfo {
	unsigned major, minor;
	char *root, *mount_point, *options, *fs_type, *source, *super_options;
};
int ng_storage_parse_mountinfo(char *line, struct ng_mountinfo *m);

#endif

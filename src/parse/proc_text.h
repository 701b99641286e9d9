/* The /proc files the failing domain's evidence reads (collect/evidence_*.c):
 * /proc/diskstats, /proc/self/mounts and /proc/self/mountstats. Pure: text in, rows out. A line
 * that does not read cleanly is skipped and counted, never guessed at. */
#ifndef NODEGATE_PARSE_PROC_TEXT_H
#define NODEGATE_PARSE_PROC_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* One block device's line of /proc/diskstats (the first 11 counters after
 * the name; the kernel adds more at the end, which are not read). */
typedef struct {
	char name[64];
	uint64_t reads, reads_merged, sectors_read, ms_reading;
	uint64_t writes, writes_merged, sectors_written, ms_writing;
	uint64_t in_flight, ms_io, ms_weighted;
} ng_diskstat;

/* Reads up to cap devices into out; *bad counts lines skipped. Returns the
 * number read. */
size_t ng_diskstats_parse(const char *text, size_t len, ng_diskstat *out, size_t cap,
                          size_t *bad);

/* One line of /proc/mounts: device, mount point, file system type and
 * options, with the kernel's octal escapes (\040 a space) undone. */
typedef struct {
	char device[256], mountpoint[512], fstype[32], options[512];
} ng_mount;

size_t ng_mounts_parse(const char *text, size_t len, ng_mount *out, size_t cap, size_t *bad);

/* The mount whose mount point is the longest prefix of path (a whole path
 * component), or NULL. */
const ng_mount *ng_mount_of(const ng_mount *m, size_t n, const char *path);

/* One RPC operation's line of an NFS mount's "per-op statistics" in
 * /proc/self/mountstats ("READ: 100 102 1 12000 1024000 50 3000 3200 0"):
 * calls, transmissions (a retransmission is one more than the calls),
 * major timeouts, bytes sent and received, and the cumulative queue,
 * round-trip and execution times in ms; errors only from statvers 1.1. */
typedef struct {
	char name[32];
	uint64_t ops, transmissions, major_timeouts, bytes_sent, bytes_received;
	uint64_t queue_ms, rtt_ms, execute_ms, errors;
	int has_errors;
} ng_nfs_op;

#define NG_NFS_OPS_MAX 72 /* NFSv4.2 has 70 operations */

/* An NFS mount's block: its "device ... mounted on ... with fstype nfs*"
 * line, its age (s), and each operation with at least one call. */
typedef struct {
	char device[256], mountpoint[512], fstype[16];
	uint64_t age_s;
	int has_age;
	ng_nfs_op op[NG_NFS_OPS_MAX];
	size_t n_ops;
	size_t ops_unread; /* per-op lines that did not read cleanly, or past NG_NFS_OPS_MAX */
} ng_nfs_mount;

/* Reads up to cap NFS mounts (nfs, nfs4) from mountstats text; the other
 * file systems' blocks are passed over. *bad counts "device" lines that
 * did not read. Returns the number read. */
size_t ng_mountstats_parse(const char *text, size_t len, ng_nfs_mount *out, size_t cap,
                           size_t *bad);

#endif

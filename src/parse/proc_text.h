/* The /proc files the failing domain's evidence reads (collect/evidence_*.c):
 * /proc/diskstats and /proc/self/mounts. Pure: text in, rows out. A line
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

#endif

/* Kernel Xid lines: "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the
 * bus." in every format the driver has printed (with and without "PCI:",
 * pid/name or not, MIG "GPU-I:05 GPU-CI:01" inside the parentheses), read
 * from /dev/kmsg records ("6,1234,5678901,-;NVRM: ...") or from dmesg,
 * journalctl and syslog text. Pure: text in, events out. */
#ifndef NODEGATE_PARSE_XID_H
#define NODEGATE_PARSE_XID_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/gpu.h"

typedef struct {
	char bus[16];   /* normalized, as ng_gpu_bus_normalize */
	int code;
	int gpu_instance, compute_instance; /* MIG ids, -1 when absent */
	long pid;       /* -1 when absent or unknown */
	char name[64];  /* process name, "" when absent */
	int64_t at_usec; /* /dev/kmsg monotonic time, -1 when the line has none */
	char message[160]; /* the free text after the code */
	int cause;      /* "... caused by previous Xid 149": 149; 0 when none is named */
} ng_xid_event;

/* Parses one line. 1 and *out filled when it is an Xid line; 0 otherwise. */
int ng_xid_parse_line(const char *line, size_t len, ng_xid_event *out);

/* Every Xid in text (lines separated by \n), at or after since_usec (-1: all;
 * lines without a time are kept). Calls fn for each; returns the count. */
size_t ng_xid_scan(const char *text, size_t len, int64_t since_usec,
                   void (*fn)(const ng_xid_event *e, void *arg), void *arg);

/* ng_xid_scan over one part of a log read in pieces: the lines of
 * text[0..len) that start before stop, where text[stop..len) holds the
 * lines after them on which a report may go on (a fallen GPU's, printed
 * over three lines: the two after its first). Returns the offset of the
 * first line not used, where the next part begins (at or after stop: a
 * report may have used lines past it); *count, when given, adds the Xids
 * found. ng_xid_scan is this with stop = len. parse/xid_stream.h feeds it. */
size_t ng_xid_scan_part(const char *text, size_t len, size_t stop, int64_t since_usec,
                        void (*fn)(const ng_xid_event *e, void *arg), void *arg, size_t *count);

/* Attaches each event to the snapshot's GPU with the same bus address
 * (the newest NG_GPU_XID_MAX per GPU). Returns events that matched no GPU. */
size_t ng_xid_attach(ng_gpu_snapshot *s, const ng_xid_event *events, size_t n);

/* Every Xid line of kernel log text, in order, as a JSON array of
 * {"bus", "code", "gpu_instance", "compute_instance", "pid", "name",
 * "at_usec", "message"} (the optional ones when the line has them); no Xid
 * is an empty array. 0, or -1 with err when out of memory. */
int ng_xid_json(const char *text, size_t len, cJSON **out, ng_err *err);

#endif

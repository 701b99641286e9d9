/* A kernel log scanned for Xids as it is read, in a buffer the caller owns
 * and reuses, instead of read whole into memory first: the epilog read a
 * 256 KiB log into a fresh buffer (64 pages to fault in, copy and unmap)
 * only to search it once. The caller reads into buf + used (at most
 * cap - used bytes), then feeds what it read; the stream scans every line
 * it can and keeps at the front of the buffer only what it cannot scan
 * yet: a line not complete, and the two complete lines after the last
 * one scanned, on which a report may go on (parse/xid.h). When a feed
 * leaves less room than the caller's next read needs (a line longer than
 * the buffer), the caller grows the buffer, its contents kept, and sets
 * buf and cap. The events, their order and count are ng_xid_scan's on the
 * whole text, however it was cut. Pure: no I/O, no allocation. */
#ifndef NODEGATE_PARSE_XID_STREAM_H
#define NODEGATE_PARSE_XID_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/xid.h"

typedef struct {
	char *buf; /* the caller's: cap bytes, the first used of them held */
	size_t cap, used;
	int64_t since_usec; /* as ng_xid_scan's */
	void (*fn)(const ng_xid_event *e, void *arg);
	void *arg;
	bool want_newest;    /* keep newest_usec (a line-by-line read of every line) */
	int64_t newest_usec; /* the newest kernel time a line starts with; -1 when none */
	size_t count;        /* Xids found */
	size_t fed;          /* bytes fed, with the line ends added to records */
} ng_xid_stream;

void ng_xid_stream_init(ng_xid_stream *s, char *buf, size_t cap, int64_t since_usec,
                        void (*fn)(const ng_xid_event *e, void *arg), void *arg, bool want_newest);

/* n bytes were put at buf + used. */
void ng_xid_stream_feed(ng_xid_stream *s, size_t n);

/* n bytes put at buf + used are one /dev/kmsg record (a read of the
 * device returns one): it ends a line, with a "\n" added when it has none,
 * so the caller leaves a byte of room past what it reads. */
void ng_xid_stream_feed_record(ng_xid_stream *s, size_t n);

/* The end of the log: the rest, a last line without its "\n" too. */
void ng_xid_stream_end(ng_xid_stream *s);

/* The newest kernel time at the start of a line of text: /dev/kmsg
 * records ("6,1234,5678901,-;...") and dmesg's "[ 5678.901234]". -1 when
 * none has one. The stream's newest_usec is this over the whole log. */
int64_t ng_xid_log_newest_usec(const char *text, size_t len);

#endif

/* The kernel log scanned as it is read (parse/xid_stream.h): however the
 * log is cut into reads, and however small the buffer, the same Xids in the
 * same order, and the same newest time, as ng_xid_scan and
 * ng_xid_log_newest_usec find in the whole text. The cuts that matter: a
 * line split across two reads (its "\r\n" too), a fallen GPU's three-line
 * report across them, a first or last line cut, a line longer than the
 * buffer, /dev/kmsg's one record per read, and a log cut short. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/xid.h"
#include "parse/xid_stream.h"

#define EVENTS_MAX 4096

struct events {
	ng_xid_event ev[EVENTS_MAX];
	size_t n;
};

static struct events want, got;

static void collect(const ng_xid_event *e, void *arg)
{
	struct events *x = arg;
	assert_true(x->n < EVENTS_MAX);
	x->ev[x->n++] = *e;
}

static void same_events(const struct events *a, const struct events *b, const char *what)
{
	if (a->n != b->n)
		fail_msg("%s: %zu Xids, not %zu", what, b->n, a->n);
	for (size_t i = 0; i < a->n; i++) {
		const ng_xid_event *x = &a->ev[i], *y = &b->ev[i];
		if (strcmp(x->bus, y->bus) != 0 || x->code != y->code || x->gpu_instance != y->gpu_instance ||
		    x->compute_instance != y->compute_instance || x->pid != y->pid || strcmp(x->name, y->name) != 0 ||
		    x->at_usec != y->at_usec || strcmp(x->message, y->message) != 0 || x->cause != y->cause)
			fail_msg("%s: Xid %zu differs: %s %d \"%s\" against %s %d \"%s\"", what, i, y->bus, y->code,
			         y->message, x->bus, x->code, x->message);
	}
}

/* The log through a stream: reads of `chunk` bytes (cycling through
 * chunks[] when given) into a buffer of `cap` that grows as the reader in
 * flow/gpu_check_xid.c grows it, below `room` free bytes. */
static int64_t stream_through(const char *text, size_t len, size_t cap, const size_t *chunks, size_t n_chunks,
                              size_t room, int64_t since)
{
	char *buf = malloc(cap);
	assert_non_null(buf);
	ng_xid_stream s;
	got.n = 0;
	ng_xid_stream_init(&s, buf, cap, since, collect, &got, true);
	size_t at = 0, k = 0;
	while (at < len) {
		while (s.cap - s.used < room) {
			s.buf = realloc(s.buf, s.cap * 2);
			assert_non_null(s.buf);
			s.cap *= 2;
		}
		size_t n = chunks[k++ % n_chunks];
		if (n > len - at)
			n = len - at;
		if (n > s.cap - s.used)
			n = s.cap - s.used;
		memcpy(s.buf + s.used, text + at, n);
		at += n;
		ng_xid_stream_feed(&s, n);
		assert_true(s.used <= s.cap);
	}
	ng_xid_stream_end(&s);
	assert_int_equal(s.used, 0);
	assert_int_equal(s.count, got.n);
	assert_int_equal(s.fed, len);
	free(s.buf);
	return s.newest_usec;
}

/* Every way of cutting text that the sizes below make (light: some of
 * them), against the whole. */
static void check_cuts(const char *text, size_t len, int64_t since, bool light)
{
	want.n = 0;
	size_t n = ng_xid_scan(text, len, since, collect, &want);
	assert_int_equal(n, want.n);
	int64_t newest = ng_xid_log_newest_usec(text, len);
	static const size_t caps[] = {16, 4096, 64, 100};
	static const size_t odd[] = {1, 7, 2, 31, 3, 64, 5};
	for (size_t c = 0; c < (light ? 2 : sizeof caps / sizeof *caps); c++) {
		for (size_t chunk = 1; chunk <= 80; chunk += light ? 9 : 1) {
			char what[96];
			snprintf(what, sizeof what, "cap %zu, reads of %zu, since %lld", caps[c], chunk, (long long)since);
			size_t one[] = {chunk};
			assert_true(stream_through(text, len, caps[c], one, 1, 8, since) == newest);
			same_events(&want, &got, what);
		}
		assert_true(stream_through(text, len, caps[c], odd, sizeof odd / sizeof *odd, 8, since) == newest);
		same_events(&want, &got, "uneven reads");
		size_t whole[] = {len ? len : 1};
		assert_true(stream_through(text, len, caps[c], whole, 1, 1, since) == newest);
		same_events(&want, &got, "one read");
	}
}

static const char LOG[] =
	"6,100,1000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.124.04\n"
	"4,101,2000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a, x\r\n"
	"[ 2.500000] NVRM: Xid (PCI:0000:3b:00 GPU-I:05 GPU-CI:01): 31, pid='<unknown>', name=<unknown>, y\n"
	"\n"
	"[   10.000001] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	"[   10.000002] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
	"[   10.000003] NVRM: fallen off the bus and is not responding to commands.\n"
	"NVRM: Xid (PCI:0000:5c:00): 48, no time\n"
	"mlx5_core 0000:4b:00.0: mlx5_cmd_out_err:838: QUERY_VPORT_COUNTER(0x770) op_mod(0x0) failed\n"
	"[   11.000001] NVRM: The NVIDIA GPU 0000:c3:00.0\n"
	"[   11.000002] NVRM: Xid (PCI:0000:c3:00): 79, GPU has fallen off the bus.\n"
	"[   11.000003] NVRM: fallen off the bus and is not responding to commands.\n"
	"4,102,12000000,-;NVRM: The NVIDIA GPU 0000:d3:00.0 (PCI ID: 10de:2330) has fallen off the bus\n"
	" SUBSYSTEM=pci\n"
	"4,103,3000000,-;NVRM: Xid (PCI:0000:5c:00): 45, caused by previous Xid 149\n"
	"NNNN NVRM NVRM; NVRM: Xid (0000:5c:00): 94, no PCI:\n"
	"[   13.000000] NVRM: The NVIDIA GPU 0000:e3:00.0\n"
	"[   13.000001] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
	"4,104,14000000,-;NVRM: Xid (PCI:0000:5c:00): 63, z"; /* no final newline */

static void test_cuts(void **state)
{
	(void)state;
	size_t len = sizeof LOG - 1;
	static const int64_t since[] = {-1, 0, 2500000, 3000001, 11000002, 14000001};
	for (size_t i = 0; i < sizeof since / sizeof *since; i++)
		check_cuts(LOG, len, since[i], false);
	/* the scan finds what the whole text has: reports across the cuts */
	want.n = 0;
	ng_xid_scan(LOG, len, -1, collect, &want);
	assert_int_equal(want.n, 9);
	assert_true(ng_xid_log_newest_usec(LOG, len) == 14000000);
	/* every prefix of the log: a first or last line cut anywhere, and the
	 * fallen GPU's report cut after any of its lines */
	for (size_t n = 0; n <= len; n++)
		check_cuts(LOG, n, 2000000, true);
	/* every suffix: the log starting inside a line */
	for (size_t n = 0; n <= len; n += 3)
		check_cuts(LOG + n, len - n, -1, true);
}

/* A line many times the buffer, with its Xid at the end, and NUL bytes. */
static void test_long_lines(void **state)
{
	(void)state;
	static const char tail[] = " NVRM: Xid (PCI:0000:3b:00): 79, long\n"
	                           "[ 5.000000] \0NVRM: Xid (PCI:0000:3b:00): 13, nul\n";
	size_t n = 50000, len = n + sizeof tail - 1;
	char *big = malloc(len);
	assert_non_null(big);
	memset(big, 'x', n);
	memcpy(big + n, tail, sizeof tail - 1);
	want.n = 0;
	ng_xid_scan(big, len, -1, collect, &want);
	assert_int_equal(want.n, 2);
	size_t chunks[] = {4096, 1, 333};
	for (size_t k = 0; k < 3; k++) {
		assert_true(stream_through(big, len, 64, &chunks[k], 1, 8, -1) == ng_xid_log_newest_usec(big, len));
		same_events(&want, &got, "a long line");
	}
	free(big);
}

/* /dev/kmsg: one record a read, each a line end added when it has none;
 * the stream scans them as the text with those line ends. */
static void test_records(void **state)
{
	(void)state;
	static const char *const records[] = {
		"6,1,1000000,-;NVRM: The NVIDIA GPU 0000:b3:00.0 (PCI ID: 10de:2330)\n",
		"6,2,1000001,-;NVRM: fallen off the bus and is not responding to commands.", /* no "\n" */
		"4,3,2000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a, x\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n",
		"4,4,3000000,-;NVRM: Xid (PCI:0000:3b:00): 31, no line end",
		"4,5,4000000,-;NVRM: Xid (PCI:0000:3b:00): 43, last",
	};
	char text[1024];
	size_t len = 0;
	char buf[1024];
	ng_xid_stream s;
	got.n = 0;
	ng_xid_stream_init(&s, buf, sizeof buf, -1, collect, &got, true);
	for (size_t i = 0; i < sizeof records / sizeof *records; i++) {
		size_t n = strlen(records[i]);
		memcpy(text + len, records[i], n);
		len += n;
		if (text[len - 1] != '\n')
			text[len++] = '\n';
		assert_true(s.cap - s.used > n);
		memcpy(s.buf + s.used, records[i], n);
		ng_xid_stream_feed_record(&s, n);
	}
	ng_xid_stream_feed_record(&s, 0); /* a read of nothing adds nothing */
	ng_xid_stream_end(&s);
	assert_int_equal(s.fed, len);
	want.n = 0;
	ng_xid_scan(text, len, -1, collect, &want);
	same_events(&want, &got, "records");
	assert_int_equal(got.n, 4);
	assert_int_equal(got.ev[0].code, 79); /* the report over two records */
	assert_true(s.newest_usec == 4000000);
}

/* Logs put together at random from the lines that matter, cut at random. */
static void test_random_logs(void **state)
{
	(void)state;
	static const char *const parts[] = {
		"[   10.000001] NVRM: The NVIDIA GPU 0000:b3:00.0\n",
		"[   10.000002] NVRM: (PCI ID: 10de:2330) installed in this system has\n",
		"[   10.000003] NVRM: fallen off the bus and is not responding to commands.\n",
		"4,101,2000000,-;NVRM: Xid (PCI:0000:3b:00): 13, pid=9, name=a, x\r\n",
		"6,102,2500000,-;NVRM: GPU at PCI:0000:18:00: GPU-00000000-0000-4000-8000-000000000000\n",
		"audit: type=1400 audit(1711111111.123:456): apparmor=\"STATUS\"\n",
		"NVRM: Xid (PCI:0000:5c:00): 48, no time\n",
		"\n",
		"\r\n",
		"[ 7.123456] NVRM: Xid (PCI:0000:5c:00): 45, caused by previous Xid 149\n",
		"NVRM: Xid (PCI:0000:5c:00): 62",
		"NVR",
		"M: Xid (PCI:0000:5c:00): 64, glued\n",
		"NNNNNNNNNNNNNNNN",
		"3,900,9000000,-;nothing\n",
	};
	uint64_t seed = 0x9e3779b97f4a7c15u;
	char text[4096];
	for (int round = 0; round < 400; round++) {
		size_t len = 0;
		for (int k = 0; k < 30; k++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			const char *p = parts[(seed >> 33) % (sizeof parts / sizeof *parts)];
			size_t n = strlen(p);
			if (len + n > sizeof text)
				break;
			memcpy(text + len, p, n);
			len += n;
		}
		want.n = 0;
		int64_t since = round % 3 == 0 ? -1 : round % 3 == 1 ? 2000000 : 9000000;
		ng_xid_scan(text, len, since, collect, &want);
		int64_t newest = ng_xid_log_newest_usec(text, len);
		size_t chunks[5];
		for (size_t k = 0; k < 5; k++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			chunks[k] = 1 + (seed >> 40) % 150;
		}
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		size_t cap = 8 + (seed >> 50) % 300;
		assert_true(stream_through(text, len, cap, chunks, 5, 4, since) == newest);
		same_events(&want, &got, "a random log");
	}
}

static void test_newest(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int64_t usec;
	} cases[] = {
		{"", -1},
		{"no time\n", -1},
		{"6,1,5,-;a\n6,2,3,-;b", 5},
		{"[ 5678.901234] x\n[ 1.000000] y\n", 5678901234},
		{"[5678.90123] five digits\n", -1},
		{"[ 12.5] x\n", -1},
		{"6,1,777,c;continued\n", 777},
		{"6,1,777;no flags\n", -1},
		{"x [ 9.000000] not at the start\n", -1},
		{"6,1,2,-;a\r\n[ 3.000000] b\r\n", 3000000},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		if (ng_xid_log_newest_usec(cases[i].text, strlen(cases[i].text)) != cases[i].usec)
			fail_msg("\"%s\": not %lld", cases[i].text, (long long)cases[i].usec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuts),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_random_logs),
		cmocka_unit_test(test_newest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

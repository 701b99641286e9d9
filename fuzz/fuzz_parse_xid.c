/* libFuzzer target for the kernel Xid parser. For any bytes: every event it
 * reads has a normalized bus and printable text; scanning with a time filter
 * never finds more than without; the log read as a stream (parse/xid_stream.h),
 * cut into reads and held in a buffer both sized from the input, finds the
 * same events in the same order and the same newest time as the whole text;
 * attaching accounts for every event; and the health rules judge what was
 * attached without a drain the Xids do not explain. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/policy.h"
#include "judge/gpu_health.h"
#include "parse/xid.h"
#include "parse/xid_stream.h"

#define EVENTS_MAX 512

static void require(int ok)
{
	if (!ok)
		abort();
}

/* NUL-terminated within cap, printable ASCII before it. */
static void printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	require(n < cap);
	for (size_t i = 0; i < n; i++)
		require((unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f);
}

static void check_event(const ng_xid_event *e)
{
	printable(e->bus, sizeof e->bus);
	require(strlen(e->bus) == 10);
	char again[16];
	require(ng_gpu_bus_normalize(e->bus, again) == 0 && strcmp(again, e->bus) == 0);
	require(e->code >= 0 && e->code <= 999999);
	require(e->gpu_instance >= -1 && e->compute_instance >= -1);
	require(e->pid >= -1);
	require(e->at_usec >= -1);
	printable(e->name, sizeof e->name);
	printable(e->message, sizeof e->message);
}

struct seen {
	ng_xid_event ev[EVENTS_MAX];
	size_t n, total;
};

static void collect(const ng_xid_event *e, void *arg)
{
	struct seen *s = arg;
	check_event(e);
	if (s->n < EVENTS_MAX)
		s->ev[s->n++] = *e;
	s->total++;
}

static struct seen all, late, streamed;

static bool same_event(const ng_xid_event *a, const ng_xid_event *b)
{
	return strcmp(a->bus, b->bus) == 0 && a->code == b->code && a->gpu_instance == b->gpu_instance &&
	       a->compute_instance == b->compute_instance && a->pid == b->pid && strcmp(a->name, b->name) == 0 &&
	       a->at_usec == b->at_usec && strcmp(a->message, b->message) == 0 && a->cause == b->cause;
}

/* The text through a stream: a buffer of 8 to 263 bytes, grown as the
 * epilog's reader grows it, and reads of 1 to 64 bytes, both from the
 * input's last bytes, so the fuzzer moves the cuts. */
static void stream_check(const char *text, size_t size)
{
	unsigned seed = size ? (unsigned char)text[size - 1] * 31u + (unsigned char)text[size / 2] : 7;
	size_t cap = 8 + seed % 256;
	char *buf = malloc(cap);
	require(buf != NULL);
	ng_xid_stream st;
	streamed.n = streamed.total = 0;
	ng_xid_stream_init(&st, buf, cap, -1, collect, &streamed, true);
	size_t at = 0;
	while (at < size) {
		if (st.cap - st.used < 4) {
			char *more = realloc(st.buf, st.cap * 2);
			require(more != NULL);
			st.buf = more;
			st.cap *= 2;
		}
		seed = seed * 1103515245u + 12345u;
		size_t n = 1 + (seed >> 16) % 64;
		if (n > size - at)
			n = size - at;
		if (n > st.cap - st.used)
			n = st.cap - st.used;
		memcpy(st.buf + st.used, text + at, n);
		at += n;
		ng_xid_stream_feed(&st, n);
	}
	ng_xid_stream_end(&st);
	free(st.buf);
	require(st.used == 0 && st.fed == size && st.count == streamed.total);
	require(streamed.total == all.total && streamed.n == all.n);
	for (size_t i = 0; i < all.n; i++)
		require(same_event(&all.ev[i], &streamed.ev[i]));
	require(st.newest_usec == ng_xid_log_newest_usec(text, size));
}
static ng_gpu_snapshot snap;
static ng_node_health health;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	ng_xid_event one;
	if (ng_xid_parse_line(text, size, &one) == 1)
		check_event(&one);

	all.n = all.total = 0;
	size_t n = ng_xid_scan(text, size, -1, collect, &all);
	require(n == all.total);
	require(ng_xid_scan(text, size, -1, NULL, NULL) == n);
	stream_check(text, size);
	late.n = late.total = 0;
	int64_t since = all.n ? all.ev[all.n / 2].at_usec : 1000000;
	require(ng_xid_scan(text, size, since, collect, &late) <= n);
	for (size_t i = 0; i < late.n; i++)
		require(late.ev[i].at_usec < 0 || since < 0 || late.ev[i].at_usec >= since);

	/* Two GPUs, on the buses of the first events read. */
	memset(&snap, 0, sizeof snap);
	snap.nvml = NG_FIELD_OK;
	snap.n_gpus = 2;
	for (size_t g = 0; g < 2; g++) {
		snap.gpu[g].index = (int)g;
		memcpy(snap.gpu[g].bus, g < all.n ? all.ev[g].bus : "0000:3b:00", 11);
	}
	size_t unmatched = ng_xid_attach(&snap, all.ev, all.n);
	require(unmatched <= all.n);
	size_t attached = 0;
	for (size_t g = 0; g < 2; g++) {
		require(snap.gpu[g].n_xid <= NG_GPU_XID_MAX);
		attached += snap.gpu[g].n_xid;
		for (size_t k = 0; k < snap.gpu[g].n_xid; k++)
			printable(snap.gpu[g].xid[k].message, sizeof snap.gpu[g].xid[k].message);
	}
	require(attached <= all.n - unmatched);
	if (all.n - unmatched <= NG_GPU_XID_MAX)
		require(attached == all.n - unmatched);

	/* Every other field unread: only an Xid can make a GPU worse than
	 * unknown, and then one of its reasons says so. */
	ng_policy pol;
	ng_policy_default(&pol);
	ng_health_judge(&snap, NULL, 0, &pol, &health);
	require(health.n_gpus == 2);
	for (size_t g = 0; g < 2; g++) {
		const ng_gpu_verdict *v = &health.gpu[g];
		require(v->severity < NG_HEALTH_COUNT && v->n_reasons <= NG_HEALTH_REASONS_MAX);
		if (v->severity == NG_HEALTH_FATAL || v->severity == NG_HEALTH_DEGRADED) {
			int found = 0;
			for (size_t k = 0; k < v->n_reasons; k++)
				found |= v->reason[k].severity == v->severity && strncmp(v->reason[k].signal, "xid.", 4) == 0;
			require(found);
		}
		for (size_t k = 0; k < v->n_reasons; k++)
			printable(v->reason[k].text, sizeof v->reason[k].text);
	}
	require(health.drain == (health.severity == NG_HEALTH_DEGRADED || health.severity == NG_HEALTH_FATAL));
	return 0;
}

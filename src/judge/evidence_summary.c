/* What a failing domain's evidence says explicitly (judge/evidence_summary.h). */
#include "judge/evidence_summary.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct out {
	char (*lines)[NG_SUMMARY_LINE];
	size_t n, cap;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
	if (o->n >= o->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->lines[o->n], NG_SUMMARY_LINE, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->lines[i], o->lines[o->n]) == 0)
			return; /* said already (two captures of one domain) */
	o->n++;
}

/* obj[key] as a finite number, else NaN. */
static double num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool listed(const cJSON *arr, const char *s)
{
	const cJSON *x;
	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsString(x) && strcmp(x->valuestring, s) == 0)
			return true;
	return false;
}

/* The index of the GPU at bus among ev's "gpus", or -1. */
static int gpu_at(const cJSON *ev, const char *bus)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(ev, "gpus"))
	{
		const char *b = str(g, "bus");
		if (b && bus && strcmp(b, bus) == 0 && !isnan(num(g, "index")))
			return (int)num(g, "index");
	}
	return -1;
}

/* Each Xid code of each GPU since boot, once, with how many times the
 * newest records hold it and the driver's words for the newest. */
static void xids(struct out *o, const cJSON *ev)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(ev, "xids_since_boot");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(x, "newest");
	int n = cJSON_GetArraySize(list);
	for (int i = 0; i < n; i++) {
		const cJSON *e = cJSON_GetArrayItem(list, i);
		const char *bus = str(e, "bus");
		double code = num(e, "code");
		if (!bus || isnan(code))
			continue;
		int times = 0, later = 0;
		const char *msg = NULL;
		for (int k = 0; k < n; k++) {
			const cJSON *f = cJSON_GetArrayItem(list, k);
			if (str(f, "bus") && strcmp(str(f, "bus"), bus) == 0 && num(f, "code") == code) {
				times++;
				later += k > i;
				msg = str(f, "message") ? str(f, "message") : msg;
			}
		}
		if (later)
			continue; /* said at its newest */
		int gpu = gpu_at(ev, bus);
		char who[48];
		if (gpu >= 0)
			snprintf(who, sizeof who, "GPU %d (%.16s)", gpu, bus);
		else
			snprintf(who, sizeof who, "%.16s", bus);
		say(o, "%s: Xid %.0f since boot%s%.0d%s%s%.120s", who, code, times > 1 ? ", " : "",
		    times > 1 ? times : 0, times > 1 ? " times" : "", msg ? ": " : "", msg ? msg : "");
	}
	double total = num(x, "count");
	if (!isnan(total) && total > n)
		say(o, "%.0f Xids since boot in all (the newest %d are kept)", total, n);
}

static void compute(struct out *o, const cJSON *ev)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(ev, "gpus"))
	{
		int i = (int)num(g, "index");
		double lim = num(g, "power_limit_mw"), def = num(g, "power_default_limit_mw");
		if (lim > 0 && def > 0 && lim < def * 0.99)
			say(o, "GPU %d: power limit %.0f W of %.0f W", i, lim / 1000, def / 1000);
		double app = num(g, "app_sm_clock_mhz"), max = num(g, "sm_clock_max_mhz");
		if (app > 0 && max > 0 && app < max * 0.95)
			say(o, "GPU %d: application clock %.0f MHz of %.0f MHz", i, app, max);
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(g, "clock_event_reasons");
		static const char *const limits[] = {"sw_power_cap", "hw_slowdown", "sw_thermal",
		                                     "hw_thermal", "hw_power_brake"};
		for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++)
			if (listed(r, limits[k]))
				say(o, "GPU %d: clocks held back by %s", i, limits[k]);
		double t = num(g, "temperature_c");
		if (t >= 85)
			say(o, "GPU %d at %.0f C", i, t);
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(g, "other_processes");
		int np = cJSON_GetArraySize(p);
		double util = num(g, "utilization_gpu");
		if (np == 1 && cJSON_IsNumber(p->child))
			say(o, "another process (pid %.0f) was on GPU %d%s%.0f%s", p->child->valuedouble, i,
			    isnan(util) ? "" : ", at ", isnan(util) ? 0 : util,
			    isnan(util) ? "" : "% utilization");
		else if (np > 1)
			say(o, "%d other processes were on GPU %d%s%.0f%s", np, i,
			    isnan(util) ? "" : ", at ", isnan(util) ? 0 : util,
			    isnan(util) ? "" : "% utilization");
	}
	const cJSON *gov = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(ev, "cpu"), "governors");
	const cJSON *x;
	cJSON_ArrayForEach(x, gov)
		if (x->string && strcmp(x->string, "performance") != 0 && cJSON_IsNumber(x))
			say(o, "CPU frequency governor %s on %.0f CPU%s", x->string, x->valuedouble,
			    x->valuedouble == 1 ? "" : "s");
	xids(o, ev);
}

/* Each pair of GPUs whose peer access is not ok, with the caps that are
 * not (NVLink's not_supported is a PCIe-only pair and is not said). */
static void peer_access(struct out *o, const cJSON *ev)
{
	static const char *const caps[] = {"read", "write", "nvlink", "atomics", "pci"};
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(ev, "peer_access"), "pairs"))
	{
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(p, "gpus");
		const cJSON *a = cJSON_GetArrayItem(g, 0), *b = cJSON_GetArrayItem(g, 1);
		if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b))
			continue;
		char what[NG_SUMMARY_LINE] = "";
		size_t len = 0;
		for (size_t c = 0; c < sizeof caps / sizeof *caps; c++) {
			const char *s = str(p, caps[c]);
			if (!s || strcmp(s, "ok") == 0 ||
			    (strcmp(caps[c], "nvlink") == 0 && strcmp(s, "not_supported") == 0))
				continue;
			int w = snprintf(what + len, sizeof what - len, "%s%s %.60s", len ? ", " : "",
			                 caps[c], s);
			if (w < 0 || (size_t)w >= sizeof what - len)
				break;
			len += (size_t)w;
		}
		if (len)
			say(o, "GPU %.0f and GPU %.0f: peer access %.200s", a->valuedouble, b->valuedouble,
			    what);
	}
}

static void memory(struct out *o, const cJSON *ev)
{
	const cJSON *g;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(ev, "gpus"))
	{
		int i = (int)num(g, "index");
		double v = num(g, "ecc_volatile_uncorrected");
		if (v > 0)
			say(o, "GPU %d: %.0f uncorrectable ECC error%s since the last reset", i, v,
			    v == 1 ? "" : "s");
		if (num(g, "remap_failed") > 0)
			say(o, "GPU %d: a row remap failed", i);
		if (num(g, "remap_pending") > 0)
			say(o, "GPU %d: a row remap is pending (reset the GPU)", i);
		if (num(g, "retired_pending") > 0)
			say(o, "GPU %d: a page retirement is pending (reset the GPU)", i);
		double dbe = num(g, "retired_pages_dbe");
		if (dbe > 0)
			say(o, "GPU %d: %.0f page%s retired for double-bit errors", i, dbe,
			    dbe == 1 ? "" : "s");
	}
	const cJSON *mc;
	cJSON_ArrayForEach(mc, cJSON_GetObjectItemCaseSensitive(ev, "edac"))
	{
		double ce = num(mc, "corrected"), ue = num(mc, "uncorrected");
		const char *name = str(mc, "mc");
		if (ue > 0)
			say(o, "host memory controller %s: %.0f uncorrected error%s", name ? name : "?",
			    ue, ue == 1 ? "" : "s");
		if (ce > 0)
			say(o, "host memory controller %s: %.0f corrected error%s", name ? name : "?", ce,
			    ce == 1 ? "" : "s");
	}
	const char *hc = str(ev, "hardware_corrupted");
	if (hc && strcmp(hc, "0 kB") != 0 && strcmp(hc, "0") != 0)
		say(o, "the kernel took %s of host memory out of use (HardwareCorrupted)", hc);
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(ev, "diagnostics"))
	{
		const char *reason = str(d, "reason"), *metric = str(d, "metric");
		if (reason)
			say(o, "%s: the diagnostic said \"%.160s\"", metric ? metric : "memory", reason);
	}
}

/* An NFS operation that was retransmitted, timed out, failed or took
 * long on average (reads and writes only: a LOOKUP's or GETATTR's time
 * says little of the service's health alone). */
#define NFS_SLOW_MS 50

static void nfs(struct out *o, const cJSON *ev)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(ev, "nfs_mountstats"))
	{
		const char *mp = str(m, "mountpoint");
		mp = mp ? mp : "?";
		const cJSON *op;
		cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(m, "ops"))
		{
			const char *name = str(op, "op");
			double calls = num(op, "calls"), re = num(op, "retransmissions");
			double to = num(op, "major_timeouts"), errs = num(op, "errors");
			double exe = num(op, "avg_execute_ms"), rtt = num(op, "avg_rtt_ms");
			if (!name || isnan(calls) || calls <= 0)
				continue;
			if (re > 0)
				say(o, "NFS %s: %.0f of %.0f %s calls retransmitted", mp, re, calls, name);
			if (to > 0)
				say(o, "NFS %s: %.0f major timeout%s of %s", mp, to, to == 1 ? "" : "s", name);
			if (errs > 0)
				say(o, "NFS %s: %.0f %s call%s failed", mp, errs, name, errs == 1 ? "" : "s");
			if ((strcmp(name, "READ") == 0 || strcmp(name, "WRITE") == 0) && exe >= NFS_SLOW_MS)
				say(o, "NFS %s: %s takes %.0f ms on average (round trip %.0f ms) over %.0f "
				       "calls",
				    mp, name, exe, isnan(rtt) ? 0 : rtt, calls);
		}
	}
}

static void storage(struct out *o, const cJSON *ev)
{
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(ev, "devices"))
	{
		const char *name = str(d, "device");
		double rate = num(d, "ios_per_s"), ms = num(d, "ms_per_io");
		/* Nothing of nodegate's runs while the evidence is taken. */
		if (rate >= 10)
			say(o, "another process drove %.0f I/Os per second on %s while nodegate ran nothing",
			    rate, name ? name : "?");
		if (ms >= 50)
			say(o, "%s: %.0f ms per I/O", name ? name : "?", ms);
	}
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "target_mount");
	const char *fs = str(t, "fstype"), *opts = str(t, "options"), *target = str(ev, "target");
	if (t && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "shared_service")))
		say(o, "the target %s is on %s from %s: a shared service", target ? target : "?",
		    fs ? fs : "?", str(t, "device") ? str(t, "device") : "?");
	if (opts && (strncmp(opts, "ro", 2) == 0 && (opts[2] == ',' || !opts[2])))
		say(o, "the target's file system is mounted read-only");
	if (opts && strstr(opts, "sync") && !strstr(opts, "async"))
		say(o, "the target's file system is mounted sync");
	nfs(o, ev);
}

/* "the read of 2026-12-01 03:00 UTC (run R)": when the earlier read was. */
static void earlier_read(const cJSON *ev, char *buf, size_t cap)
{
	const cJSON *pr = cJSON_GetObjectItemCaseSensitive(ev, "previous_read");
	double at = num(pr, "captured_at");
	const char *run = str(pr, "run_id");
	time_t t = isnan(at) ? 0 : (time_t)at;
	struct tm tm;
	char when[32] = "?";
	if (!isnan(at) && gmtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
	snprintf(buf, cap, "the read of %s (run %.60s)", when, run ? run : "?");
}

static void fabric(struct out *o, const cJSON *ev)
{
	peer_access(o, ev);
	char since[128];
	earlier_read(ev, since, sizeof since);
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(ev, "ib"), "ports"))
	{
		const char *hca = str(p, "hca"), *state = str(p, "state");
		hca = hca ? hca : "?";
		int port = (int)num(p, "port");
		if (state && strcmp(state, "ACTIVE") != 0)
			say(o, "%s port %d: %s", hca, port, state);
		const cJSON *delta = cJSON_GetObjectItemCaseSensitive(p, "counters_since_previous");
		const cJSON *reset = cJSON_GetObjectItemCaseSensitive(p, "counters_reset");
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "counters"))
		{
			if (!cJSON_IsNumber(c) || !c->string)
				continue;
			double d = num(delta, c->string);
			if (!isnan(d) && d > 0)
				say(o, "%s port %d: %s +%.0f since %s (now %.0f)", hca, port, c->string, d,
				    since, c->valuedouble);
			else if (c->valuedouble <= 0)
				continue;
			else if (!isnan(d))
				say(o, "%s port %d: %s counter %.0f, unchanged since %s", hca, port,
				    c->string, c->valuedouble, since);
			else if (listed(reset, c->string))
				say(o, "%s port %d: %s counter %.0f, reset since %s", hca, port, c->string,
				    c->valuedouble, since);
			else
				say(o, "%s port %d: %s counter %.0f%s", hca, port, c->string, c->valuedouble,
				    delta ? "" : " (no earlier read to compare)");
		}
	}
}

size_t ng_evidence_summary(const cJSON *captures, char (*lines)[NG_SUMMARY_LINE], size_t cap)
{
	struct out o = {lines, 0, cap};
	const cJSON *c;
	cJSON_ArrayForEach(c, captures)
	{
		const char *domain = str(c, "domain");
		const cJSON *ev = cJSON_GetObjectItemCaseSensitive(c, "evidence");
		if (!domain || !cJSON_IsObject(ev))
			continue;
		/* A collector that did not finish (flow/evidence.c) read nothing to
		 * summarise, and says so rather than nothing at all. */
		const char *incomplete = str(ev, "incomplete");
		if (incomplete)
			say(&o, "%s: no evidence: %s", domain, incomplete);
		else if (strcmp(domain, "compute") == 0)
			compute(&o, ev);
		else if (strcmp(domain, "memory") == 0)
			memory(&o, ev);
		else if (strcmp(domain, "storage") == 0)
			storage(&o, ev);
		else if (strcmp(domain, "fabric") == 0)
			fabric(&o, ev);
	}
	return o.n;
}

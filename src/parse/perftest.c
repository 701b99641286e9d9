/* perftest (linux-rdma/perftest: ib_write_bw, ib_read_bw, ib_send_bw, their
 * _lat siblings) text output into records.
 *
 * The output is read as a stream of events, because real logs mix several
 * processes and several runs:
 *   - a title line ("RDMA_Write BW Test") starts a block: the header fields of
 *     one process (" Key : Value", two pairs on some lines), its address and
 *     GID lines, then its result table;
 *   - a table starts at the " #bytes ..." header and ends at perftest's rule
 *     line (a row of dashes). A table without that closing rule was cut short
 *     and its figures are not used;
 *   - a shell command line naming a perftest program starts a new segment of
 *     the log (a session pasted with its prompts);
 *   - anything else is noise, or an error line when it reads like one.
 * Blocks then become runs: a server block and a client block of one test whose
 * address lines mirror each other are one run, and so are two blocks whose
 * lines interleave (both processes writing to one stream).
 *
 * Units: the bandwidth unit is read from the table header, never assumed.
 * "MiB/sec" (current releases) and "MB/sec" (24.04 and before, the same
 * mebibyte value under an older label) are divided by perftest's documented
 * factor 10^9 / (2^20 * 8) = 119.209...; "Gb/sec" (--report_gbits) is already
 * decimal gigabits. Anything else is not read.
 *
 * This file holds the text helpers, the recognising of lines and the entry;
 * lines become blocks and tables in perftest_text.c, and runs and records
 * are made in perftest_records.c (perftest_int.h). */
#include "parse/perftest_int.h"

/* ---- small text helpers ---- */

/* Copies s into buf as printable ASCII: TABs become spaces, other control
 * bytes and every byte above 0x7E become '?'. perftest prints ASCII; keeping
 * to it means any later cut of the text (a "%.120s") stays valid UTF-8, so
 * the evidence always prints as JSON. */
void pt_span_copy(char *buf, size_t cap, ng_span s)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len && o + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		buf[o++] = ch == '\t' ? ' ' : ch < 0x20 || ch > 0x7E ? '?' : (char)ch;
	}
	buf[o] = '\0';
}

cJSON *pt_span_json(ng_span s)
{
	char buf[PT_LINE];
	pt_span_copy(buf, sizeof buf, s);
	return cJSON_CreateString(buf);
}

void pt_lower_copy(char *low, ng_span s)
{
	size_t n = s.len < PT_LOW - 1 ? s.len : PT_LOW - 1;
	for (size_t i = 0; i < n; i++) {
		char ch = s.s[i];
		low[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch ? ch : ' ';
	}
	low[n] = '\0';
}

bool pt_span_has_char(ng_span s, char ch) { return s.len && memchr(s.s, ch, s.len) != NULL; }

void pt_reason_add(pt_reason *r, const char *fmt, ...)
{
	if (r->n + 3 >= sizeof r->s)
		return;
	if (r->n) {
		memcpy(r->s + r->n, "; ", 2);
		r->n += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(r->s + r->n, sizeof r->s - r->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		r->n += (size_t)k < sizeof r->s - r->n ? (size_t)k : sizeof r->s - r->n - 1;
}

/* ---- recognising lines ---- */

static const char *const programs[] = {
	"ib_write_bw",     "ib_write_lat",     "ib_read_bw",      "ib_read_lat",
	"ib_send_bw",      "ib_send_lat",      "ib_atomic_bw",    "ib_atomic_lat",
	"raw_ethernet_bw", "raw_ethernet_lat", "raw_ethernet_burst_lat", "raw_ethernet_fs_rate",
};

/* The perftest program a token names ("./ib_write_bw", "/usr/bin/ib_read_bw"). */
const char *pt_program_of(ng_span tok)
{
	size_t start = 0;
	for (size_t i = 0; i < tok.len; i++)
		if (tok.s[i] == '/')
			start = i + 1;
	ng_span base = ng_span_skip(tok, start);
	for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
		if (ng_span_eq(base, programs[i]))
			return programs[i];
	return NULL;
}

/* A shell command running a perftest program: after a prompt ("$ ", "# ",
 * "> "), after sudo/time/exec or set -x's "+", or first on the line with an
 * option or nothing after it. Usage lines ("  ib_write_bw <host>  connect
 * to server at <host>") are not commands. */
const char *pt_command_program(ng_span line)
{
	ng_span tok[32];
	size_t n = ng_split_ws(line, tok, 32);
	if (n > 32)
		n = 32;
	for (size_t i = 0; i < n; i++) {
		const char *prog = pt_program_of(tok[i]);
		if (!prog)
			continue;
		if (i == 0)
			return n == 1 || tok[1].s[0] == '-' ? prog : NULL;
		ng_span prev = tok[i - 1];
		char last = prev.s[prev.len - 1];
		if (last == '$' || last == '#' || last == '>' || ng_span_eq(prev, "sudo") ||
		    ng_span_eq(prev, "time") || ng_span_eq(prev, "exec") || ng_span_eq(prev, "+"))
			return prog;
		return NULL;
	}
	return NULL;
}

bool pt_is_rule(ng_span line)
{
	if (line.len < 10)
		return false;
	for (size_t i = 0; i < line.len; i++)
		if (line.s[i] != '-')
			return false;
	return true;
}

/* "RDMA_Write BW Test", "Send Bidirectional BW Test", "RDMA_Read Latency
 * Test", "Atomic FETCH_AND_ADD BW Test": the verb, then words, then "Test". */
bool pt_parse_title(ng_span line, char *test, size_t cap, bool *bidir)
{
	ng_span tok[10];
	size_t n = ng_split_ws(line, tok, 10);
	if (n < 3 || n > 10 || !ng_span_eq(tok[n - 1], "Test"))
		return false;
	const char *verb = ng_span_eq(tok[0], "Send")         ? "ib_send"
	                   : ng_span_eq(tok[0], "RDMA_Write") ? "ib_write"
	                   : ng_span_eq(tok[0], "RDMA_Read")  ? "ib_read"
	                   : ng_span_eq(tok[0], "Atomic")     ? "ib_atomic"
	                                                      : NULL;
	const char *kind = NULL;
	*bidir = false;
	for (size_t i = 1; verb && i + 1 < n; i++) {
		if (ng_span_eq(tok[i], "BW"))
			kind = "bw";
		else if (ng_span_eq(tok[i], "Latency"))
			kind = "lat";
		else if (ng_span_eq(tok[i], "Bidirectional"))
			*bidir = true;
	}
	if (!kind)
		return false;
	snprintf(test, cap, "%s_%s", verb, kind);
	return true;
}

/* Lines that say the run went wrong. perftest's own wording: "Couldn't
 * connect to ...", "Unable to init the socket connection", "Failed to modify
 * QP to RTR", "Completion with error at client", "Failed status ...
 * syndrom ...", " Parser function exited with Error"; getopt's "invalid
 * option" and "unrecognized option"; and timeouts. */
bool pt_is_error_line(const char *low)
{
	/* rdma-core names every provider it could not load on hosts that lack
	 * them ("couldn't load driver ... cannot open shared object file"): not
	 * this run's failure. */
	if (strncmp(low, "libibverbs: warning: couldn't load driver", 41) == 0)
		return false;
	static const char *const words[] = {
		"error",    "fail",      "couldn't",       "could not",        "couldnt",
		"unable",   "can't",     "cannot",         "timed out",        "timeout",
		"not found", "invalid",  "syndrom",        "exceeded",         "abort",
		"segmentation fault", "core dumped", "unrecognized", "unknown option",
		"illegal option", "requires an argument", "no such", "permission denied",
		"should be between", "terminated", "killed",
	};
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* Inside usage text the option descriptions say "timeout" and "error"; only
 * getopt's complaints and perftest's parser failure count there. */
bool pt_is_usage_error_line(const char *low)
{
	static const char *const words[] = {
		"invalid option", "unrecognized option", "unknown option", "requires an argument",
		"invalid command line", "exited with error",
	};
	if (low[0] == '-')
		return false;
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strstr(low, words[i]))
			return true;
	return false;
}

/* ---- growing arrays ---- */

bool pt_grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 8;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

pt_segment *pt_segment_new(pt_ctx *c)
{
	if (c->ns >= PT_MAX_SEGMENTS)
		return &c->s[c->ns - 1];
	if (!pt_grow((void **)&c->s, &c->caps, c->ns + 1, sizeof *c->s)) {
		c->oom = true;
		return c->ns ? &c->s[c->ns - 1] : NULL;
	}
	pt_segment *g = &c->s[c->ns++];
	memset(g, 0, sizeof *g);
	g->errors = cJSON_CreateArray();
	if (!g->errors)
		c->oom = true;
	return g;
}

pt_block *pt_block_new(pt_ctx *c)
{
	if (!pt_grow((void **)&c->b, &c->capb, c->nb + 1, sizeof *c->b)) {
		c->oom = true;
		return NULL;
	}
	pt_block *b = &c->b[c->nb];
	memset(b, 0, sizeof *b);
	b->config = cJSON_CreateObject();
	b->local = cJSON_CreateArray();
	b->remote = cJSON_CreateArray();
	b->local_gid = cJSON_CreateArray();
	b->remote_gid = cJSON_CreateArray();
	b->errors = cJSON_CreateArray();
	b->group = -1;
	b->segment = (int)c->ns - 1;
	c->nb++;
	if (!b->config || !b->local || !b->remote || !b->local_gid || !b->remote_gid || !b->errors)
		c->oom = true;
	c->s[b->segment].nblocks++;
	return b;
}

static void ctx_free(pt_ctx *c)
{
	for (size_t i = 0; i < c->nb; i++) {
		pt_block *b = &c->b[i];
		cJSON_Delete(b->config);
		cJSON_Delete(b->local);
		cJSON_Delete(b->remote);
		cJSON_Delete(b->local_gid);
		cJSON_Delete(b->remote_gid);
		cJSON_Delete(b->errors);
	}
	for (size_t i = 0; i < c->nt; i++)
		free(c->t[i].rows);
	for (size_t i = 0; i < c->ns; i++)
		cJSON_Delete(c->s[i].errors);
	free(c->b);
	free(c->t);
	free(c->s);
}

static cJSON *parse_bare(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	pt_ctx c = {.cur = -1};
	cJSON *out = NULL;
	pt_run *runs = NULL;
	if (!pt_segment_new(&c))
		goto oom;
	ng_lines it, peek;
	ng_span line, next;
	ng_lines_init(&it, text, len);
	while (!c.oom && ng_lines_next(&it, &line)) {
		peek = it;
		if (!ng_lines_next(&peek, &next))
			next = (ng_span){NULL, 0};
		pt_on_line(&c, line, next);
	}
	if (c.oom)
		goto oom;
	runs = calloc(c.nb + c.ns + 1, sizeof *runs);
	out = cJSON_CreateArray();
	if (!runs || !out)
		goto oom;
	size_t n = pt_make_runs(&c, runs);
	if (n == (size_t)-1)
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (!pt_run_records(&c, &runs[i], st, out))
			goto oom;
	free(runs);
	ctx_free(&c);
	return out;
oom:
	ng_fail_as(err, NG_ERR_INPUT, "out of memory reading perftest output");
	cJSON_Delete(out);
	free(runs);
	ctx_free(&c);
	return NULL;
}

/* Launcher prefixes and noise are gone before the perftest reader sees a line. */
cJSON *ng_parse_perftest(const char *text, size_t len, ng_run_status st, ng_err *err)
{
	return ng_launch_parse(text, len, st, err, parse_bare);
}

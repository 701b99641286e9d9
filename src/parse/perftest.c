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
 * decimal gigabits. Anything else is not read. */
#include "parse/parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

/* MiB/s in one decimal Gb/s: perftest's own "Factor=10^9/(2^20*8)=119.2". */
#define PT_MIB_PER_GBIT (1e9 / (1048576.0 * 8.0))

#define PT_MAX_COLS 12
#define PT_MAX_TABLES 64 /* beyond this a log is not perftest's; headers are ignored */
#define PT_MAX_BLOCKS 128
#define PT_MAX_SEGMENTS 128
#define PT_MAX_KEPT 16 /* error lines kept as evidence per block or segment */
#define PT_LINE 200    /* longest text kept from one line */

enum pt_side { SIDE_UNKNOWN, SIDE_CLIENT, SIDE_SERVER };
enum pt_phase { PH_CONFIG, PH_ADDR, PH_TABLE };
enum pt_colkind { COL_PLAIN, COL_BYTES, COL_ITERS, COL_PEAK, COL_AVG, COL_MSGRATE, COL_BW };
enum pt_tabkind { TAB_OTHER, TAB_BW, TAB_LAT };

typedef struct {
	enum pt_colkind kind;
	char key[48];
	double div; /* bandwidth columns: printed value / div = Gb/s; 0 when unknown */
} pt_col;

typedef struct {
	enum pt_tabkind kind;
	int block;   /* the block it belongs to */
	bool open;   /* still taking rows */
	bool closed; /* ended by the rule line: complete */
	char bad[PT_LINE + 80];  /* why its rows cannot be read at all */
	char unit_bad[120];      /* why its figures cannot be converted */
	char unit[24];           /* the bandwidth unit as printed */
	double div;
	size_t ncols;
	pt_col col[PT_MAX_COLS];
	int c_bytes, c_iters, c_peak, c_avg, c_rate;
	double (*rows)[PT_MAX_COLS];
	size_t nrows, caprows;
} pt_table;

typedef struct {
	char title[PT_LINE];
	char test[40]; /* ib_write_bw, ...; "" when no title was seen */
	bool bidir;
	cJSON *config, *local, *remote, *local_gid, *remote_gid, *errors;
	int nerrors;
	char first_error[PT_LINE];
	enum pt_phase phase;
	bool banner;        /* the server's "Waiting for client to connect" came first */
	bool cm_wait;       /* the rdma_cm server's "Waiting for client rdma_cm QP" */
	bool config_closed; /* the rule after the header fields was seen */
	bool mixed;         /* its header lines interleave with another process's */
	bool two_tables;    /* a second table header came while the first was empty */
	int group;          /* the other block of an interleaved pair, -1 */
	int segment;
	int last_addr; /* 1 local, 2 remote: where a GID line belongs */
	int ntables;
} pt_block;

typedef struct {
	char program[40]; /* from the command line that starts it */
	char command[PT_LINE];
	cJSON *errors;
	int nerrors;
	char first_error[PT_LINE];
	bool usage;
	char usage_program[40];
	int nblocks;
} pt_segment;

typedef struct {
	pt_block *b;
	size_t nb, capb;
	pt_table *t;
	size_t nt, capt;
	pt_segment *s;
	size_t ns, caps;
	int cur;           /* the block lines belong to, -1 */
	bool banner;       /* a server banner not yet claimed by a block */
	bool usage;        /* inside usage text */
	bool usage_first;  /* the next usage line names the program */
	char version[32];
	bool oom;
} pt_ctx;

typedef struct {
	int blocks[2];
	size_t n;
	int segment; /* for a run with no block: the segment it stands for */
} pt_run;

typedef struct {
	char s[1024];
	size_t n;
} pt_reason;

/* ---- small text helpers ---- */

/* Copies s into buf as printable ASCII: TABs become spaces, other control
 * bytes and every byte above 0x7E become '?'. perftest prints ASCII; keeping
 * to it means any later cut of the text (a "%.120s") stays valid UTF-8, so
 * the evidence always prints as JSON. */
static void span_copy(char *buf, size_t cap, ng_span s)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len && o + 1 < cap; i++) {
		unsigned char ch = (unsigned char)s.s[i];
		buf[o++] = ch == '\t' ? ' ' : ch < 0x20 || ch > 0x7E ? '?' : (char)ch;
	}
	buf[o] = '\0';
}

static cJSON *span_json(ng_span s)
{
	char buf[PT_LINE];
	span_copy(buf, sizeof buf, s);
	return cJSON_CreateString(buf);
}

/* The line in lower case, for matching words; NUL bytes become spaces and
 * only the first PT_LOW - 1 bytes are looked at (perftest's lines are short). */
#define PT_LOW 1024
static void lower_copy(char *low, ng_span s)
{
	size_t n = s.len < PT_LOW - 1 ? s.len : PT_LOW - 1;
	for (size_t i = 0; i < n; i++) {
		char ch = s.s[i];
		low[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch ? ch : ' ';
	}
	low[n] = '\0';
}

static bool span_has_char(ng_span s, char ch) { return s.len && memchr(s.s, ch, s.len) != NULL; }

static void reason_add(pt_reason *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason_add(pt_reason *r, const char *fmt, ...)
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
static const char *program_of(ng_span tok)
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
static const char *command_program(ng_span line)
{
	ng_span tok[32];
	size_t n = ng_split_ws(line, tok, 32);
	if (n > 32)
		n = 32;
	for (size_t i = 0; i < n; i++) {
		const char *prog = program_of(tok[i]);
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

static bool is_rule(ng_span line)
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
static bool parse_title(ng_span line, char *test, size_t cap, bool *bidir)
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
static bool is_error_line(const char *low)
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
static bool is_usage_error_line(const char *low)
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

static bool grow(void **p, size_t *cap, size_t need, size_t size)
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

static pt_segment *segment_new(pt_ctx *c)
{
	if (c->ns >= PT_MAX_SEGMENTS)
		return &c->s[c->ns - 1];
	if (!grow((void **)&c->s, &c->caps, c->ns + 1, sizeof *c->s)) {
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

static pt_block *block_new(pt_ctx *c)
{
	if (!grow((void **)&c->b, &c->capb, c->nb + 1, sizeof *c->b)) {
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

/* ---- events ---- */

static void add_error(pt_ctx *c, ng_span line)
{
	cJSON *arr;
	int *count;
	char *first;
	if (c->cur >= 0) {
		pt_block *b = &c->b[c->cur];
		arr = b->errors, count = &b->nerrors, first = b->first_error;
	} else {
		pt_segment *g = &c->s[c->ns - 1];
		arr = g->errors, count = &g->nerrors, first = g->first_error;
	}
	if (*count == 0)
		span_copy(first, PT_LINE, line);
	if (*count < PT_MAX_KEPT)
		cJSON_AddItemToArray(arr, span_json(line));
	(*count)++;
}

/* A new process or command: tables still open were cut short. */
static void close_tables(pt_ctx *c)
{
	for (size_t i = 0; i < c->nt; i++)
		c->t[i].open = false;
}

static void on_command(pt_ctx *c, ng_span line, const char *prog)
{
	close_tables(c);
	pt_segment *g = segment_new(c);
	if (!g)
		return;
	snprintf(g->program, sizeof g->program, "%s", prog);
	span_copy(g->command, sizeof g->command, line);
	c->cur = -1;
	c->banner = false;
	c->usage = false;
}

static void on_title(pt_ctx *c, ng_span line, const char *test, bool bidir)
{
	if (c->nb >= PT_MAX_BLOCKS)
		return;
	int prev = c->cur;
	/* A second process's title before the first one's table: both write to
	 * this stream at once. Real interleaving has two processes, no more. */
	bool together = prev >= 0 && c->b[prev].ntables == 0 && c->b[prev].nerrors == 0 &&
	                c->b[prev].group < 0 && strcmp(c->b[prev].test, test) == 0;
	if (!together)
		close_tables(c);
	pt_block *b = block_new(c);
	if (!b)
		return;
	span_copy(b->title, sizeof b->title, line);
	snprintf(b->test, sizeof b->test, "%s", test);
	b->bidir = bidir;
	b->banner = c->banner;
	c->banner = false;
	c->cur = (int)(c->nb - 1);
	if (together) {
		pt_block *a = &c->b[prev];
		a->group = c->cur;
		b->group = prev;
		/* Still inside the first header: the two headers' lines mix. */
		a->mixed = b->mixed = a->phase == PH_CONFIG;
	}
}

static void classify_col(pt_col *col, const char *name)
{
	static const struct {
		const char *prefix;
		enum pt_colkind kind;
		const char *key;
	} known[] = {
		{"#bytes", COL_BYTES, "bytes"},
		{"#iterations", COL_ITERS, "iterations"},
		{"#sl", COL_PLAIN, "sl"},
		{"BW peak[", COL_PEAK, "bw_peak"},
		{"BW average[", COL_AVG, "bw_avg"},
		{"MsgRate[Mpps]", COL_MSGRATE, "msg_rate_mpps"},
		{"BW Port1[", COL_BW, "bw_port1"},
		{"BW Port2[", COL_BW, "bw_port2"},
		{"MsgRate Port1[Mpps]", COL_PLAIN, "msg_rate_port1_mpps"},
		{"MsgRate Port2[Mpps]", COL_PLAIN, "msg_rate_port2_mpps"},
		{"CPU_Util[%]", COL_PLAIN, "cpu_util_pct"},
	};
	col->kind = COL_PLAIN;
	snprintf(col->key, sizeof col->key, "%.47s", name);
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		size_t n = strlen(known[i].prefix);
		bool prefix = known[i].prefix[n - 1] == '[';
		if (prefix ? strncmp(name, known[i].prefix, n) == 0 : strcmp(name, known[i].prefix) == 0) {
			col->kind = known[i].kind;
			snprintf(col->key, sizeof col->key, "%s", known[i].key);
			return;
		}
	}
}

/* The unit between the brackets of "BW average[MiB/sec]", as a divisor to
 * Gb/s; 0 when it is not one perftest prints. */
static double unit_divisor(const char *name, char *unit, size_t cap)
{
	const char *open = strchr(name, '[');
	const char *close = open ? strchr(open, ']') : NULL;
	if (!close) {
		snprintf(unit, cap, "%.23s", name);
		return 0;
	}
	snprintf(unit, cap, "%.*s", (int)(close - open - 1), open + 1);
	if (strcmp(unit, "MiB/sec") == 0 || strcmp(unit, "MB/sec") == 0)
		return PT_MIB_PER_GBIT; /* MB/sec was always mebibytes: only the label changed */
	if (strcmp(unit, "Gb/sec") == 0)
		return 1.0;
	return 0;
}

/* Header words become column names: "BW" joins "peak[MiB/sec]", "99%" joins
 * "percentile[usec]", "tps" joins "average"; "#bytes" stands alone. */
static size_t header_names(ng_span line, char names[][48], size_t max)
{
	ng_span tok[32];
	size_t n = ng_split_ws(line, tok, 32), k = 0;
	if (n > 32)
		return max + 1;
	for (size_t i = 0; i < n; i++) {
		bool join = i + 1 < n && tok[i].s[0] != '#' && !span_has_char(tok[i], '[') &&
		            (span_has_char(tok[i + 1], '[') || ng_span_eq(tok[i], "tps"));
		if (k == max)
			return max + 1;
		char a[48], b[48] = "";
		span_copy(a, sizeof a, tok[i]);
		if (join)
			span_copy(b, sizeof b, tok[++i]);
		snprintf(names[k], 48, "%.23s%s%.23s", a, join ? " " : "", b);
		k++;
	}
	return k;
}

static void table_columns(pt_table *t, ng_span line)
{
	char names[PT_MAX_COLS][48];
	size_t n = header_names(line, names, PT_MAX_COLS);
	t->c_bytes = t->c_iters = t->c_peak = t->c_avg = t->c_rate = -1;
	if (n > PT_MAX_COLS) {
		snprintf(t->bad, sizeof t->bad, "the table header has more columns than perftest prints");
		return;
	}
	t->ncols = n;
	bool lat = false;
	for (size_t i = 0; i < n; i++) {
		pt_col *col = &t->col[i];
		classify_col(col, names[i]);
		int *slot = col->kind == COL_BYTES ? &t->c_bytes : col->kind == COL_ITERS ? &t->c_iters
		            : col->kind == COL_PEAK ? &t->c_peak : col->kind == COL_AVG ? &t->c_avg
		            : col->kind == COL_MSGRATE ? &t->c_rate : NULL;
		if (slot && *slot < 0)
			*slot = (int)i;
		if (col->kind == COL_PEAK || col->kind == COL_AVG || col->kind == COL_BW) {
			char unit[24];
			col->div = unit_divisor(names[i], unit, sizeof unit);
			if (col->kind == COL_AVG) {
				snprintf(t->unit, sizeof t->unit, "%s", unit);
				t->div = col->div;
			}
			if (col->div == 0 && !t->unit_bad[0])
				snprintf(t->unit_bad, sizeof t->unit_bad,
				         "unknown bandwidth unit \"%.24s\" in the table header: not converted", unit);
		}
		if (strncmp(names[i], "t_", 2) == 0)
			lat = true;
	}
	t->kind = t->c_avg >= 0 ? TAB_BW : lat ? TAB_LAT : TAB_OTHER;
	if (t->kind == TAB_BW && (t->c_bytes < 0 || t->c_peak < 0) && !t->bad[0])
		snprintf(t->bad, sizeof t->bad, "the table header lacks #bytes or BW peak");
}

static void on_header(pt_ctx *c, ng_span line)
{
	if (c->nt >= PT_MAX_TABLES)
		return;
	if (c->cur < 0) {
		/* A table without its title (an excerpt): it still belongs somewhere. */
		if (c->nb >= PT_MAX_BLOCKS || !block_new(c))
			return;
		c->cur = (int)(c->nb - 1);
		c->b[c->cur].phase = PH_TABLE;
	}
	if (!grow((void **)&c->t, &c->capt, c->nt + 1, sizeof *c->t)) {
		c->oom = true;
		return;
	}
	pt_block *b = &c->b[c->cur];
	for (size_t i = 0; i < c->nt; i++) {
		pt_table *o = &c->t[i];
		if (o->open && o->nrows == 0 && !o->bad[0]) {
			/* Two headers before any row: two processes print at once. */
			b->two_tables = true;
			c->b[o->block].two_tables = true;
		}
	}
	pt_table *t = &c->t[c->nt++];
	memset(t, 0, sizeof *t);
	t->block = c->cur;
	t->open = true;
	table_columns(t, line);
	b->ntables++;
	b->phase = PH_TABLE;
}

static void table_row(pt_ctx *c, pt_table *t, ng_span line, const ng_span *f, size_t n)
{
	if (t->bad[0])
		return;
	char shown[PT_LINE];
	span_copy(shown, sizeof shown, line);
	if (n != t->ncols) {
		snprintf(t->bad, sizeof t->bad, "a row has %zu fields where the header has %zu columns: \"%.120s\"",
		         n, t->ncols, shown);
		return;
	}
	double v[PT_MAX_COLS];
	for (size_t i = 0; i < n; i++) {
		long long k;
		bool whole = t->col[i].kind == COL_BYTES || t->col[i].kind == COL_ITERS;
		bool ok = whole ? ng_span_integer(f[i], &k) : ng_span_number(f[i], &v[i]);
		if (ok && whole)
			v[i] = (double)k;
		if (!ok || v[i] < 0) {
			snprintf(t->bad, sizeof t->bad, "a row does not read as numbers: \"%.120s\"", shown);
			return;
		}
	}
	if (!grow((void **)&t->rows, &t->caprows, t->nrows + 1, sizeof *t->rows)) {
		c->oom = true;
		return;
	}
	memcpy(t->rows[t->nrows++], v, sizeof v);
}

/* A row goes to the first open table it can follow: one without rows, or one
 * whose last size is smaller (a sweep only grows). When both sides print every
 * size at once, the second "2" belongs to the second table. */
static void on_row(pt_ctx *c, ng_span line, const ng_span *f, size_t n, double bytes)
{
	pt_table *last = NULL;
	for (size_t i = 0; i < c->nt; i++) {
		pt_table *t = &c->t[i];
		if (!t->open)
			continue;
		last = t;
		if (t->bad[0] || t->c_bytes < 0)
			continue;
		if (t->nrows == 0 || t->rows[t->nrows - 1][t->c_bytes] < bytes) {
			table_row(c, t, line, f, n);
			return;
		}
	}
	if (last)
		table_row(c, last, line, f, n); /* --run_infinitely repeats one size */
}

static bool any_open(const pt_ctx *c)
{
	for (size_t i = 0; i < c->nt; i++)
		if (c->t[i].open)
			return true;
	return false;
}

/* perftest's rule line: it closes a table that has rows; after the header
 * fields it ends them; just before a title it is that title's own. */
static void on_rule(pt_ctx *c, bool title_next)
{
	for (size_t i = 0; i < c->nt; i++) {
		pt_table *t = &c->t[i];
		if (t->open && (t->nrows > 0 || t->bad[0])) {
			t->open = false;
			t->closed = true;
			return;
		}
	}
	if (title_next || c->cur < 0)
		return;
	pt_block *b = &c->b[c->cur];
	if (b->phase == PH_CONFIG && cJSON_GetArraySize(b->config) > 0) {
		b->phase = PH_ADDR;
		b->config_closed = true;
	}
}

/* "Dual-port       : OFF\t\tDevice         : mlx5_0": pairs split at the gap
 * (TABs, or two spaces where an editor expanded them) between a value and
 * the next key. The first value of a key wins. */
static void add_config(cJSON *obj, ng_span line)
{
	ng_span s = ng_span_trim(line);
	while (s.len) {
		const char *colon = memchr(s.s, ':', s.len);
		if (!colon)
			return;
		ng_span key = ng_span_trim((ng_span){s.s, (size_t)(colon - s.s)});
		ng_span rest = {colon + 1, s.len - (size_t)(colon + 1 - s.s)};
		const char *next = memchr(rest.s, ':', rest.len);
		ng_span value = ng_span_trim(rest), more = {NULL, 0};
		if (next) {
			ng_span mid = ng_span_trim((ng_span){rest.s, (size_t)(next - rest.s)});
			size_t cut = mid.len;
			for (size_t i = 0; i < mid.len && cut == mid.len; i++)
				if (mid.s[i] == '\t' || (mid.s[i] == ' ' && i + 1 < mid.len && mid.s[i + 1] == ' '))
					cut = i;
			for (size_t i = 0; i < mid.len && cut == mid.len; i++)
				if (mid.s[i] == ' ')
					cut = i;
			if (cut < mid.len) {
				value = ng_span_trim((ng_span){mid.s, cut});
				more = (ng_span){mid.s + cut, (size_t)(rest.s + rest.len - (mid.s + cut))};
			}
		}
		if (key.len && key.len <= 32) {
			char k[48];
			span_copy(k, sizeof k, key);
			if (!cJSON_GetObjectItemCaseSensitive(obj, k))
				cJSON_AddItemToObject(obj, k, span_json(value));
		}
		s = ng_span_trim(more);
	}
}

static bool on_address(pt_ctx *c, ng_span line)
{
	static const struct {
		const char *prefix;
		int kind;
	} forms[] = {{"local address:", 1}, {"remote address:", 2}, {"GID:", 3}};
	for (size_t i = 0; i < 3; i++) {
		if (!ng_span_starts_with(line, forms[i].prefix))
			continue;
		if (c->cur < 0)
			return true;
		pt_block *b = &c->b[c->cur];
		ng_span v = ng_span_trim(ng_span_skip(line, strlen(forms[i].prefix)));
		int kind = forms[i].kind == 3 ? b->last_addr : forms[i].kind;
		cJSON *arr = forms[i].kind == 3 ? (kind == 2 ? b->remote_gid : b->local_gid)
		                                : (kind == 2 ? b->remote : b->local);
		if (forms[i].kind != 3)
			b->last_addr = kind;
		cJSON_AddItemToArray(arr, span_json(v));
		if (b->phase == PH_CONFIG)
			b->phase = PH_ADDR;
		return true;
	}
	return false;
}

static bool on_usage(pt_ctx *c, ng_span line, const char *low)
{
	pt_segment *g = &c->s[c->ns - 1];
	if (ng_span_starts_with(line, "Usage:")) {
		c->usage = true;
		c->usage_first = true;
		g->usage = true;
		return true;
	}
	if (!c->usage)
		return false;
	if (c->usage_first) {
		ng_span tok[1];
		const char *prog = ng_split_ws(line, tok, 1) ? program_of(tok[0]) : NULL;
		if (prog)
			snprintf(g->usage_program, sizeof g->usage_program, "%s", prog);
		c->usage_first = false;
	}
	if (is_usage_error_line(low))
		add_error(c, line);
	return true;
}

/* Lines that mark a side, a stop or a version. */
static bool on_marker(pt_ctx *c, ng_span line, const char *low)
{
	if (strstr(low, "waiting for client to connect")) {
		c->banner = true;
		return true;
	}
	if (strstr(low, "waiting for client rdma_cm qp to connect")) {
		if (c->cur >= 0)
			c->b[c->cur].cm_wait = true;
		return true;
	}
	if (ng_span_starts_with(line, "User stopped traffic")) {
		/* --run_infinitely ends on SIGINT without a closing rule. */
		on_rule(c, false);
		return true;
	}
	if (ng_span_starts_with(line, "Version:")) {
		ng_span v = ng_span_trim(ng_span_skip(line, 8));
		if (!c->version[0] && v.len && v.s[0] >= '0' && v.s[0] <= '9')
			span_copy(c->version, sizeof c->version, v);
		return true;
	}
	return false;
}

/* Rule lines, table headers and rows. */
static bool on_table_line(pt_ctx *c, ng_span line, ng_span next)
{
	if (is_rule(line)) {
		char test[40];
		bool bidir;
		on_rule(c, parse_title(ng_span_trim(next), test, sizeof test, &bidir));
		return true;
	}
	if (ng_span_starts_with(line, "#bytes")) {
		on_header(c, line);
		return true;
	}
	ng_span f[PT_MAX_COLS + 1];
	size_t n = ng_split_ws(line, f, PT_MAX_COLS + 1);
	long long bytes;
	if (ng_span_integer(f[0], &bytes) && any_open(c)) {
		on_row(c, line, f, n, (double)bytes);
		return true;
	}
	return false;
}

static void on_line(pt_ctx *c, ng_span raw, ng_span next)
{
	ng_span line = ng_span_trim(raw);
	if (!line.len)
		return;
	char test[40], low[PT_LOW];
	bool bidir;
	if (parse_title(line, test, sizeof test, &bidir)) {
		c->usage = false;
		on_title(c, line, test, bidir);
		return;
	}
	const char *prog = command_program(line);
	if (prog) {
		on_command(c, line, prog);
		return;
	}
	lower_copy(low, line);
	if (on_usage(c, line, low) || on_table_line(c, line, next) || on_marker(c, line, low) ||
	    on_address(c, line))
		return;
	if (is_error_line(low))
		add_error(c, line);
	else if (c->cur >= 0 && c->b[c->cur].phase != PH_TABLE && span_has_char(line, ':'))
		add_config(c->b[c->cur].config, line);
}

/* ---- from blocks to runs ---- */

static bool has_key(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

static const char *config_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Which process printed a block. Non-bidirectional runs print "TX depth"
 * only on the client, and ib_send_bw prints "RX depth" only on the server;
 * the server alone prints the "Waiting for client" banners. Absence counts
 * only when the whole header was read (its closing rule was seen). */
static enum pt_side block_side(const pt_block *b)
{
	bool tx = has_key(b->config, "TX depth"), rx = has_key(b->config, "RX depth");
	enum pt_side by_depth = SIDE_UNKNOWN;
	if (!b->bidir && b->config_closed && !b->mixed) {
		if (tx && !rx)
			by_depth = SIDE_CLIENT;
		else if (!tx)
			by_depth = SIDE_SERVER;
	}
	if (b->banner || b->cm_wait)
		return by_depth == SIDE_CLIENT ? SIDE_UNKNOWN : SIDE_SERVER;
	return by_depth;
}

/* The side a table's figures come from: unknown when two processes' lines
 * interleave, since nothing then ties a table to a header. */
static enum pt_side table_side(const pt_ctx *c, const pt_table *t)
{
	const pt_block *b = &c->b[t->block];
	if (b->group >= 0 || b->two_tables)
		return SIDE_UNKNOWN;
	return block_side(b);
}

/* Why a table's figures cannot be used; NULL when they can. */
static const char *table_problem(const pt_table *t)
{
	return t->bad[0] ? t->bad : t->unit_bad[0] ? t->unit_bad : NULL;
}

static const char *side_name(enum pt_side s)
{
	return s == SIDE_CLIENT ? "client" : s == SIDE_SERVER ? "server" : "unknown";
}

static bool same_words(const char *a, const char *b)
{
	ng_span x[16], y[16];
	size_t nx = ng_split_ws((ng_span){a, strlen(a)}, x, 16);
	size_t ny = ng_split_ws((ng_span){b, strlen(b)}, y, 16);
	if (nx != ny || nx == 0 || nx > 16)
		return false;
	for (size_t i = 0; i < nx; i++)
		if (x[i].len != y[i].len || memcmp(x[i].s, y[i].s, x[i].len) != 0)
			return false;
	return true;
}

static const char *first_str(const cJSON *arr)
{
	const cJSON *v = cJSON_GetArrayItem(arr, 0);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A server and its client print each other's address lines, swapped. */
static bool mirrored(const pt_block *a, const pt_block *b)
{
	const char *al = first_str(a->local), *ar = first_str(a->remote);
	const char *bl = first_str(b->local), *br = first_str(b->remote);
	return al && ar && bl && br && same_words(al, br) && same_words(ar, bl);
}

static bool pairs(const pt_block *a, const pt_block *b)
{
	if (!a->test[0] || strcmp(a->test, b->test) != 0 || a->bidir != b->bidir)
		return false;
	if (mirrored(a, b))
		return true;
	bool addresses = cJSON_GetArraySize(a->local) > 0 && cJSON_GetArraySize(b->local) > 0;
	enum pt_side sa = block_side(a), sb = block_side(b);
	if (!addresses && a->bidir && (sa == SIDE_SERVER) != (sb == SIDE_SERVER))
		return true; /* -b: the banner tells the server; the other is its client */
	return !addresses && sa != SIDE_UNKNOWN && sb != SIDE_UNKNOWN && sa != sb;
}

static size_t make_runs(const pt_ctx *c, pt_run *runs)
{
	size_t n = 0;
	bool *done = calloc(c->nb + 1, 1);
	if (!done)
		return (size_t)-1;
	for (size_t i = 0; i < c->nb; i++) {
		if (done[i])
			continue;
		pt_run *r = &runs[n++];
		r->segment = -1;
		r->blocks[0] = (int)i;
		r->n = 1;
		done[i] = true;
		int other = c->b[i].group;
		if (other < 0 && i + 1 < c->nb && !done[i + 1] && c->b[i + 1].group < 0 &&
		    pairs(&c->b[i], &c->b[i + 1]))
			other = (int)i + 1;
		if (other >= 0 && !done[other]) {
			r->blocks[r->n++] = other;
			done[other] = true;
		}
	}
	free(done);
	/* A command, an error or usage text with no block after it is a run
	 * that measured nothing. */
	for (size_t s = 0; s < c->ns; s++) {
		const pt_segment *g = &c->s[s];
		if (g->nblocks == 0 && (g->command[0] || g->nerrors || g->usage)) {
			runs[n] = (pt_run){{0, 0}, 0, (int)s};
			n++;
		}
	}
	if (n == 0)
		runs[n++] = (pt_run){{0, 0}, 0, 0};
	return n;
}

/* ---- records ---- */

typedef struct {
	char test[48];   /* the metric's test part: ib_write_bw, ib_write_bw_bidir */
	char program[40];
	bool lat, bidir, interleaved, usage;
	int nerrors;
	char first_error[PT_LINE];
	const pt_table *chosen;
	enum pt_side chosen_side;
	const char *rule;
	const pt_block *head; /* the block whose header describes the figures */
} pt_view;

static bool run_has_segment(const pt_ctx *c, const pt_run *r, int s)
{
	if (r->segment == s)
		return true;
	for (size_t i = 0; i < r->n; i++)
		if (c->b[r->blocks[i]].segment == s)
			return true;
	return false;
}

static bool table_in_run(const pt_run *r, const pt_table *t)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->blocks[i] == t->block)
			return true;
	return false;
}

static void note_errors(pt_view *v, int count, const char *first)
{
	if (count && !v->nerrors)
		snprintf(v->first_error, sizeof v->first_error, "%s", first);
	v->nerrors += count;
}

/* The program: from a title, else the command line, else the usage text. */
static void view_program(const pt_ctx *c, const pt_run *r, pt_view *v)
{
	const char *prog = NULL;
	for (size_t i = 0; i < r->n && !prog; i++) {
		const pt_block *b = &c->b[r->blocks[i]];
		if (b->test[0])
			prog = b->test, v->bidir = b->bidir;
	}
	for (size_t s = 0; s < c->ns && !prog; s++)
		if (run_has_segment(c, r, (int)s))
			prog = c->s[s].program[0] ? c->s[s].program
			       : c->s[s].usage_program[0] ? c->s[s].usage_program : NULL;
	snprintf(v->program, sizeof v->program, "%s", prog ? prog : "unknown");
	size_t len = strlen(v->program);
	v->lat = len > 4 && strcmp(v->program + len - 4, "_lat") == 0;
}

/* A header field of the run: the described side's first, then the other's
 * (when two processes interleave, either may hold a line). */
static const char *run_config(const pt_ctx *c, const pt_run *r, const pt_view *v, const char *key)
{
	const char *s = v->head ? config_str(v->head->config, key) : NULL;
	for (size_t i = 0; i < r->n && !s; i++)
		s = config_str(c->b[r->blocks[i]].config, key);
	return s;
}

/* A table's side within its run: as its block says, or, for a block that
 * cannot say (under -b both sides print both depths), the client when the
 * run's other block is the server's (its banner said so). */
static enum pt_side run_table_side(const pt_ctx *c, const pt_run *r, const pt_table *t)
{
	enum pt_side side = table_side(c, t);
	if (side != SIDE_UNKNOWN || r->n != 2 || c->b[t->block].group >= 0 || c->b[t->block].two_tables)
		return side;
	int other = r->blocks[0] == t->block ? r->blocks[1] : r->blocks[0];
	const pt_block *o = &c->b[other];
	bool other_server = o->group < 0 && !o->two_tables && block_side(o) == SIDE_SERVER;
	return other_server && !c->b[t->block].banner && !c->b[t->block].cm_wait ? SIDE_CLIENT : SIDE_UNKNOWN;
}

/* The table the samples come from: the client's when the sides can be told
 * apart, else the first complete one. */
static void view_choose(const pt_ctx *c, const pt_run *r, pt_view *v)
{
	bool known = strcmp(v->program, "unknown") != 0;
	const pt_table *first = NULL, *client = NULL, *first_bad = NULL;
	for (size_t i = 0; i < c->nt; i++) {
		const pt_table *t = &c->t[i];
		if (!table_in_run(r, t) || !t->closed || t->kind == TAB_OTHER ||
		    (t->nrows == 0 && !table_problem(t)))
			continue;
		if (!known)
			v->lat = t->kind == TAB_LAT, known = true;
		if ((t->kind == TAB_LAT) != v->lat)
			continue;
		if (table_problem(t)) {
			if (!first_bad)
				first_bad = t;
			continue;
		}
		if (!first)
			first = t;
		if (!client && run_table_side(c, r, t) == SIDE_CLIENT)
			client = t;
	}
	v->chosen = client ? client : first ? first : first_bad;
	if (!v->chosen)
		return;
	v->chosen_side = run_table_side(c, r, v->chosen);
	v->head = &c->b[v->chosen->block];
	v->rule = client ? "the client's table"
	          : !first ? "the first complete table, which cannot be read"
	          : v->interleaved ? "the first complete table: the two sides' lines interleave"
	          : v->chosen_side == SIDE_UNKNOWN ? "the first complete table: the side is not printed"
	                                            : "the first complete table: no complete client table";
}

static void view_build(const pt_ctx *c, const pt_run *r, pt_view *v)
{
	memset(v, 0, sizeof *v);
	for (size_t i = 0; i < r->n; i++) {
		const pt_block *b = &c->b[r->blocks[i]];
		v->interleaved |= b->group >= 0 || b->two_tables;
		note_errors(v, b->nerrors, b->first_error);
	}
	for (size_t s = 0; s < c->ns; s++) {
		if (!run_has_segment(c, r, (int)s))
			continue;
		const pt_segment *g = &c->s[s];
		note_errors(v, g->nerrors, g->first_error);
		v->usage |= g->usage;
	}
	v->head = r->n ? &c->b[r->blocks[0]] : NULL;
	view_program(c, r, v);
	view_choose(c, r, v);
	/* raw_ethernet_bw prints "Send BW Test" with a RawEth connection. */
	const char *conn = run_config(c, r, v, "Connection type");
	if (conn && strcmp(conn, "RawEth") == 0 && strncmp(v->program, "ib_send_", 8) == 0) {
		char raw[40];
		snprintf(raw, sizeof raw, "raw_ethernet_%s", v->program + 8);
		snprintf(v->program, sizeof v->program, "%s", raw);
	}
	snprintf(v->test, sizeof v->test, "%s%s", v->program, v->bidir ? "_bidir" : "");
}

static cJSON *row_json(const pt_table *t, const double *row)
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; o && i < t->ncols; i++) {
		const pt_col *col = &t->col[i];
		bool bw = col->kind == COL_PEAK || col->kind == COL_AVG || col->kind == COL_BW;
		if (bw && (col->div == 0 || (col->kind == COL_PEAK && row[i] == 0)))
			cJSON_AddNullToObject(o, col->key); /* unknown unit; a peak of 0.00 was not measured */
		else
			cJSON_AddNumberToObject(o, col->key, bw ? row[i] / col->div : row[i]);
	}
	return o;
}

static cJSON *table_json(const pt_ctx *c, const pt_table *t)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "side", side_name(table_side(c, t)));
	cJSON_AddStringToObject(o, "kind", t->kind == TAB_BW ? "bw" : t->kind == TAB_LAT ? "latency" : "other");
	cJSON_AddBoolToObject(o, "complete", t->closed);
	if (t->unit[0])
		cJSON_AddStringToObject(o, "unit_printed", t->unit);
	if (t->kind == TAB_BW)
		cJSON_AddStringToObject(o, "bandwidth_unit", "Gb/s");
	if (table_problem(t))
		cJSON_AddStringToObject(o, "problem", table_problem(t));
	cJSON *rows = cJSON_AddArrayToObject(o, "rows");
	for (size_t i = 0; rows && i < t->nrows; i++)
		cJSON_AddItemToArray(rows, row_json(t, t->rows[i]));
	return o;
}

static void add_dup(cJSON *o, const char *key, const cJSON *v)
{
	if (cJSON_GetArraySize(v) > 0)
		cJSON_AddItemToObject(o, key, cJSON_Duplicate(v, 1));
}

static cJSON *block_json(const pt_block *b)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "side", side_name(b->group >= 0 ? SIDE_UNKNOWN : block_side(b)));
	if (b->title[0])
		cJSON_AddStringToObject(o, "title", b->title);
	cJSON_AddItemToObject(o, "header", cJSON_Duplicate(b->config, 1));
	add_dup(o, "local_address", b->local);
	add_dup(o, "remote_address", b->remote);
	add_dup(o, "local_gid", b->local_gid);
	add_dup(o, "remote_gid", b->remote_gid);
	add_dup(o, "errors", b->errors);
	return o;
}

/* The row(s) at the largest message size of the chosen table. */
static double largest_size(const pt_table *t)
{
	double m = -1;
	for (size_t i = 0; i < t->nrows; i++)
		if (t->rows[i][t->c_bytes] > m)
			m = t->rows[i][t->c_bytes];
	return m;
}

/* perftest prints no duration; a command line in the log may hold "-D 10",
 * "-D10" or "--duration=10". */
static bool command_duration(const char *cmd, long long *out)
{
	ng_span tok[64];
	size_t n = ng_split_ws((ng_span){cmd, strlen(cmd)}, tok, 64);
	for (size_t i = 0; i < n && i < 64; i++) {
		ng_span v = {NULL, 0};
		if ((ng_span_eq(tok[i], "-D") || ng_span_eq(tok[i], "--duration")) && i + 1 < n && i + 1 < 64)
			v = tok[i + 1];
		else if (ng_span_starts_with(tok[i], "--duration="))
			v = ng_span_skip(tok[i], 11);
		else if (ng_span_starts_with(tok[i], "-D") && tok[i].len > 2)
			v = ng_span_skip(tok[i], 2);
		if (v.len && ng_span_integer(v, out))
			return true;
	}
	return false;
}

/* Adds arr to d under key when it holds anything, else frees it. */
static void add_list(cJSON *d, const char *key, cJSON *arr)
{
	if (cJSON_GetArraySize(arr) > 0)
		cJSON_AddItemToObject(d, key, arr);
	else
		cJSON_Delete(arr);
}

static void detail_commands(cJSON *d, const pt_ctx *c, const pt_run *r)
{
	cJSON *cmds = cJSON_CreateArray();
	for (size_t s = 0; cmds && s < c->ns; s++)
		if (run_has_segment(c, r, (int)s) && c->s[s].command[0])
			cJSON_AddItemToArray(cmds, cJSON_CreateString(c->s[s].command));
	long long secs;
	for (const cJSON *cmd = cmds ? cmds->child : NULL; cmd; cmd = cmd->next)
		if (command_duration(cmd->valuestring, &secs)) {
			cJSON_AddNumberToObject(d, "duration_s", (double)secs);
			break;
		}
	add_list(d, "commands", cmds);
}

/* The header and addresses of the side the figures come from. */
static void detail_header(cJSON *d, const pt_ctx *c, const pt_run *r, const pt_view *v)
{
	if (!v->head)
		return;
	cJSON *h = cJSON_Duplicate(v->head->config, 1);
	/* Interleaved headers: either process may hold any line. */
	for (size_t i = 0; h && v->interleaved && i < r->n; i++)
		for (const cJSON *kv = c->b[r->blocks[i]].config->child; kv; kv = kv->next)
			if (!cJSON_GetObjectItemCaseSensitive(h, kv->string))
				cJSON_AddItemToObject(h, kv->string, cJSON_Duplicate(kv, 0));
	cJSON_AddItemToObject(d, "header", h);
	add_dup(d, "local_address", v->head->local);
	add_dup(d, "remote_address", v->head->remote);
	add_dup(d, "local_gid", v->head->local_gid);
	add_dup(d, "remote_gid", v->head->remote_gid);
}

/* The figures of the sampled row beside the samples. */
static void detail_figures(cJSON *d, const pt_table *t)
{
	if (t->kind == TAB_BW) {
		double size = largest_size(t);
		for (size_t i = 0; i < t->nrows; i++) {
			if (t->rows[i][t->c_bytes] != size)
				continue;
			cJSON_AddNumberToObject(d, "msg_size", size);
			if (t->c_iters >= 0)
				cJSON_AddNumberToObject(d, "iterations", t->rows[i][t->c_iters]);
			if (t->c_rate >= 0)
				cJSON_AddNumberToObject(d, "msg_rate_mpps", t->rows[i][t->c_rate]);
			break;
		}
		cJSON_AddStringToObject(d, "unit_printed", t->unit);
		cJSON_AddNumberToObject(d, "gbps_divisor", t->div);
		return;
	}
	/* Latency: the last row's figures, in microseconds as printed. */
	for (size_t i = 0; i < t->ncols; i++) {
		if (strcmp(t->col[i].key, "t_typical[usec]") == 0)
			cJSON_AddNumberToObject(d, "t_typical_us", t->rows[t->nrows - 1][i]);
		else if (strcmp(t->col[i].key, "t_avg[usec]") == 0)
			cJSON_AddNumberToObject(d, "t_avg_us", t->rows[t->nrows - 1][i]);
	}
}

/* Both sides, every table and the error lines outside any block. */
static void detail_evidence(cJSON *d, const pt_ctx *c, const pt_run *r)
{
	cJSON *sides = cJSON_AddArrayToObject(d, "sides");
	for (size_t i = 0; sides && i < r->n; i++)
		cJSON_AddItemToArray(sides, block_json(&c->b[r->blocks[i]]));
	cJSON *tables = cJSON_AddArrayToObject(d, "tables");
	for (size_t i = 0; tables && i < c->nt; i++)
		if (table_in_run(r, &c->t[i]))
			cJSON_AddItemToArray(tables, table_json(c, &c->t[i]));
	cJSON *errs = cJSON_CreateArray();
	for (size_t s = 0; errs && s < c->ns; s++)
		if (run_has_segment(c, r, (int)s))
			for (const cJSON *e = c->s[s].errors->child; e; e = e->next)
				cJSON_AddItemToArray(errs, cJSON_Duplicate(e, 0));
	add_list(d, "errors", errs);
}

static cJSON *run_detail(const pt_ctx *c, const pt_run *r, const pt_view *v)
{
	cJSON *d = cJSON_CreateObject();
	if (!d)
		return NULL;
	cJSON_AddStringToObject(d, "test", v->program);
	if (v->head && v->head->title[0])
		cJSON_AddStringToObject(d, "title", v->head->title);
	cJSON_AddBoolToObject(d, "bidirectional", v->bidir);
	if (c->version[0])
		cJSON_AddStringToObject(d, "version", c->version);
	detail_commands(d, c, r);
	cJSON_AddBoolToObject(d, "interleaved", v->interleaved);
	detail_header(d, c, r, v);
	if (v->chosen && !table_problem(v->chosen))
		detail_figures(d, v->chosen);
	if (v->chosen) {
		cJSON_AddStringToObject(d, "sample_side", side_name(v->chosen_side));
		cJSON_AddStringToObject(d, "sample_rule", v->rule);
	}
	detail_evidence(d, c, r);
	return d;
}

static void status_reason(pt_reason *why, ng_run_status st, bool measured)
{
	if (st.signal > 0)
		reason_add(why, "killed by signal %d", st.signal);
	else if (st.exit_status > 0 || (st.exit_status == 0 && !measured))
		reason_add(why, "exit status %d", st.exit_status);
}

/* Why there is no table to read the figures from. */
static void missing_reason(const pt_ctx *c, const pt_run *r, const pt_view *v, pt_reason *why)
{
	const pt_table *cut = NULL;
	for (size_t i = 0; i < c->nt && !cut; i++)
		if (table_in_run(r, &c->t[i]) && c->t[i].kind == (v->lat ? TAB_LAT : TAB_BW))
			cut = &c->t[i];
	if (cut && cut->nrows > 0)
		reason_add(why, "the result table was cut short after %zu row(s) (last size %.0f bytes): %s%s%s",
		           cut->nrows, cut->c_bytes >= 0 ? cut->rows[cut->nrows - 1][cut->c_bytes] : 0.0,
		           v->nerrors ? "\"" : "the output ends before perftest's closing rule line",
		           v->nerrors ? v->first_error : "", v->nerrors ? "\"" : "");
	else if (cut)
		reason_add(why, "the result table has no rows%s%s%s", v->nerrors ? ": \"" : "",
		           v->nerrors ? v->first_error : "", v->nerrors ? "\"" : "");
	else if (v->usage)
		reason_add(why, "no result table: %s printed its usage text%s%s%s", v->program,
		           v->nerrors ? " (\"" : "", v->nerrors ? v->first_error : "", v->nerrors ? "\")" : "");
	else if (v->nerrors)
		reason_add(why, "no result table: \"%s\"", v->first_error);
	else
		reason_add(why, "no result table in the output");
}

/* wrong is 0 only when the transport checked every packet end to end: the
 * InfiniBand/RoCE ICRC. perftest itself compares no payloads. */
static bool icrc_checked(const pt_ctx *c, const pt_run *r, const pt_view *v, pt_reason *why)
{
	const char *transport = run_config(c, r, v, "Transport type");
	const char *link = run_config(c, r, v, "Link type");
	const char *conn = run_config(c, r, v, "Connection type");
	if (conn && strcmp(conn, "RawEth") == 0) {
		reason_add(why, "raw Ethernet has no end-to-end ICRC, and perftest compares no payloads");
		return false;
	}
	if (transport ? strcmp(transport, "IB") == 0 : link && strcmp(link, "IB") == 0)
		return true;
	if (transport)
		reason_add(why, "transport \"%s\" has no end-to-end ICRC, and perftest compares no payloads",
		           transport);
	else
		reason_add(why, "the transport type is not printed, so no end-to-end ICRC can be claimed");
	return false;
}

static void set_wrong(cJSON *rec, const pt_ctx *c, const pt_run *r, const pt_view *v,
                      ng_run_status st, pt_reason *why)
{
	pt_reason w = {0};
	if (v->nerrors)
		reason_add(&w, "the run reported errors (\"%s\")", v->first_error);
	status_reason(&w, st, true);
	bool icrc = icrc_checked(c, r, v, &w);
	if (!w.n && icrc) {
		ng_record_set_wrong(rec, 0);
		ng_json_set(ng_record_conditions(rec), "payload_check", cJSON_CreateString("transport-icrc"));
		return;
	}
	ng_record_set_wrong_null(rec);
	reason_add(why, "wrong not checked: %s", w.s);
}

static cJSON *new_record(const char *metric, const char *unit, const pt_ctx *c, const pt_view *v,
                         ng_run_status st)
{
	cJSON *rec = ng_record_new(metric, unit ? "fabric" : NULL, unit);
	if (!rec)
		return NULL;
	cJSON *tool = ng_record_tool(rec);
	ng_json_set(tool, "name", cJSON_CreateString("perftest"));
	ng_json_set(tool, "program", cJSON_CreateString(v->program));
	if (c->version[0])
		ng_json_set(tool, "version", cJSON_CreateString(c->version));
	if (st.signal > 0)
		ng_json_set(tool, "signal", cJSON_CreateNumber(st.signal));
	else if (st.exit_status >= 0)
		ng_json_set(tool, "exit_status", cJSON_CreateNumber(st.exit_status));
	return rec;
}

/* One bandwidth record: the average or the peak at the largest size. */
static cJSON *bw_record(const pt_ctx *c, const pt_run *r, const pt_view *v, ng_run_status st, bool peak)
{
	char metric[96];
	snprintf(metric, sizeof metric, "rdma.%s.%s", v->test, peak ? "bw_peak" : "bw_avg");
	cJSON *rec = new_record(metric, NULL, c, v, st);
	if (!rec)
		return NULL;
	pt_reason why = {0};
	const pt_table *t = v->chosen;
	if (!t) {
		missing_reason(c, r, v, &why);
		status_reason(&why, st, false);
	} else if (table_problem(t)) {
		reason_add(&why, "%s", table_problem(t));
		status_reason(&why, st, false);
	} else {
		double size = largest_size(t);
		int col = peak ? t->c_peak : t->c_avg;
		bool zero = false;
		for (size_t i = 0; i < t->nrows; i++) {
			if (t->rows[i][t->c_bytes] != size)
				continue;
			double x = t->rows[i][col] / t->col[col].div;
			if (x > 0 && isfinite(x))
				ng_record_add_sample(rec, x);
			else
				zero = true;
		}
		if (zero && peak)
			reason_add(&why, "BW peak printed as 0.00 at %.0f bytes: not measured (perftest does not "
			                 "compute the peak in duration mode -D or with --noPeak)", size);
		else if (zero)
			reason_add(&why, "BW average printed as 0.00 at %.0f bytes: below the printed resolution",
			           size);
		set_wrong(rec, c, r, v, st, &why);
	}
	if (why.n)
		ng_record_set_reason(rec, "%s", why.s);
	ng_json_set(rec, "detail", run_detail(c, r, v));
	return rec;
}

/* Latency is read into detail only: the gate judges higher-is-better
 * figures, so a latency sample would fail the fast nodes. */
static cJSON *lat_record(const pt_ctx *c, const pt_run *r, const pt_view *v, ng_run_status st)
{
	char metric[96];
	snprintf(metric, sizeof metric, "rdma.%s.t_typical", v->test);
	cJSON *rec = new_record(metric, "us", c, v, st);
	if (!rec)
		return NULL;
	pt_reason why = {0};
	if (v->chosen && !table_problem(v->chosen))
		reason_add(&why, "latency is kept in detail only: the gate has no lower-is-better rule");
	else if (v->chosen)
		reason_add(&why, "%s", table_problem(v->chosen));
	else
		missing_reason(c, r, v, &why);
	status_reason(&why, st, v->chosen && !table_problem(v->chosen));
	ng_record_set_reason(rec, "%s", why.s);
	ng_json_set(rec, "detail", run_detail(c, r, v));
	return rec;
}

static bool run_records(const pt_ctx *c, const pt_run *r, ng_run_status st, cJSON *out)
{
	pt_view v;
	view_build(c, r, &v);
	if (v.lat) {
		cJSON *rec = lat_record(c, r, &v, st);
		if (!rec)
			return false;
		cJSON_AddItemToArray(out, rec);
		return true;
	}
	for (int peak = 0; peak < 2; peak++) {
		cJSON *rec = bw_record(c, r, &v, st, peak);
		if (!rec)
			return false;
		cJSON_AddItemToArray(out, rec);
	}
	return true;
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
	if (!segment_new(&c))
		goto oom;
	ng_lines it, peek;
	ng_span line, next;
	ng_lines_init(&it, text, len);
	while (!c.oom && ng_lines_next(&it, &line)) {
		peek = it;
		if (!ng_lines_next(&peek, &next))
			next = (ng_span){NULL, 0};
		on_line(&c, line, next);
	}
	if (c.oom)
		goto oom;
	runs = calloc(c.nb + c.ns + 1, sizeof *runs);
	out = cJSON_CreateArray();
	if (!runs || !out)
		goto oom;
	size_t n = make_runs(&c, runs);
	if (n == (size_t)-1)
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (!run_records(&c, &runs[i], st, out))
			goto oom;
	free(runs);
	ctx_free(&c);
	return out;
oom:
	ng_fail(err, "out of memory reading perftest output");
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

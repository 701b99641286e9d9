/* perftest: each line of the output as an event on the header blocks,
 * tables and segments of the parse (titles, header fields, addresses, table
 * headers and rows, rules, banners, usage text, errors). */
#include "parse/perftest_int.h"

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
		pt_span_copy(first, PT_LINE, line);
	if (*count < PT_MAX_KEPT)
		cJSON_AddItemToArray(arr, pt_span_json(line));
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
	pt_segment *g = pt_segment_new(c);
	if (!g)
		return;
	snprintf(g->program, sizeof g->program, "%s", prog);
	pt_span_copy(g->command, sizeof g->command, line);
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
	pt_block *b = pt_block_new(c);
	if (!b)
		return;
	pt_span_copy(b->title, sizeof b->title, line);
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
		bool join = i + 1 < n && tok[i].s[0] != '#' && !pt_span_has_char(tok[i], '[') &&
		            (pt_span_has_char(tok[i + 1], '[') || ng_span_eq(tok[i], "tps"));
		if (k == max)
			return max + 1;
		char a[48], b[48] = "";
		pt_span_copy(a, sizeof a, tok[i]);
		if (join)
			pt_span_copy(b, sizeof b, tok[++i]);
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
		if (c->nb >= PT_MAX_BLOCKS || !pt_block_new(c))
			return;
		c->cur = (int)(c->nb - 1);
		c->b[c->cur].phase = PH_TABLE;
	}
	if (!pt_grow((void **)&c->t, &c->capt, c->nt + 1, sizeof *c->t)) {
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
	pt_span_copy(shown, sizeof shown, line);
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
	if (!pt_grow((void **)&t->rows, &t->caprows, t->nrows + 1, sizeof *t->rows)) {
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
			pt_span_copy(k, sizeof k, key);
			if (!cJSON_GetObjectItemCaseSensitive(obj, k))
				cJSON_AddItemToObject(obj, k, pt_span_json(value));
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
		cJSON_AddItemToArray(arr, pt_span_json(v));
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
		const char *prog = ng_split_ws(line, tok, 1) ? pt_program_of(tok[0]) : NULL;
		if (prog)
			snprintf(g->usage_program, sizeof g->usage_program, "%s", prog);
		c->usage_first = false;
	}
	if (pt_is_usage_error_line(low))
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
			pt_span_copy(c->version, sizeof c->version, v);
		return true;
	}
	return false;
}

/* Rule lines, table headers and rows. */
static bool on_table_line(pt_ctx *c, ng_span line, ng_span next)
{
	if (pt_is_rule(line)) {
		char test[40];
		bool bidir;
		on_rule(c, pt_parse_title(ng_span_trim(next), test, sizeof test, &bidir));
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

void pt_on_line(pt_ctx *c, ng_span raw, ng_span next)
{
	ng_span line = ng_span_trim(raw);
	if (!line.len)
		return;
	char test[40], low[PT_LOW];
	bool bidir;
	if (pt_parse_title(line, test, sizeof test, &bidir)) {
		c->usage = false;
		on_title(c, line, test, bidir);
		return;
	}
	const char *prog = pt_command_program(line);
	if (prog) {
		on_command(c, line, prog);
		return;
	}
	pt_lower_copy(low, line);
	if (on_usage(c, line, low) || on_table_line(c, line, next) || on_marker(c, line, low) ||
	    on_address(c, line))
		return;
	if (pt_is_error_line(low))
		add_error(c, line);
	else if (c->cur >= 0 && c->b[c->cur].phase != PH_TABLE && pt_span_has_char(line, ':'))
		add_config(c->b[c->cur].config, line);
}

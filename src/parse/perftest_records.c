/* perftest: from header blocks to runs (a server and its client), the table
 * the samples come from, and the records with their reasons. */
#include "parse/perftest_int.h"

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

bool pt_pairs(const pt_block *a, const pt_block *b)
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

size_t pt_make_runs(const pt_ctx *c, pt_run *runs)
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
		    pt_pairs(&c->b[i], &c->b[i + 1]))
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
		pt_reason_add(why, "killed by signal %d", st.signal);
	else if (st.exit_status > 0 || (st.exit_status == 0 && !measured))
		pt_reason_add(why, "exit status %d", st.exit_status);
}

/* Why there is no table to read the figures from. */
static void missing_reason(const pt_ctx *c, const pt_run *r, const pt_view *v, pt_reason *why)
{
	const pt_table *cut = NULL;
	for (size_t i = 0; i < c->nt && !cut; i++)
		if (table_in_run(r, &c->t[i]) && c->t[i].kind == (v->lat ? TAB_LAT : TAB_BW))
			cut = &c->t[i];
	if (cut && cut->nrows > 0)
		pt_reason_add(why, "the result table was cut short after %zu row(s) (last size %.0f bytes): %s%s%s",
		           cut->nrows, cut->c_bytes >= 0 ? cut->rows[cut->nrows - 1][cut->c_bytes] : 0.0,
		           v->nerrors ? "\"" : "the output ends before perftest's closing rule line",
		           v->nerrors ? v->first_error : "", v->nerrors ? "\"" : "");
	else if (cut)
		pt_reason_add(why, "the result table has no rows%s%s%s", v->nerrors ? ": \"" : "",
		           v->nerrors ? v->first_error : "", v->nerrors ? "\"" : "");
	else if (v->usage)
		pt_reason_add(why, "no result table: %s printed its usage text%s%s%s", v->program,
		           v->nerrors ? " (\"" : "", v->nerrors ? v->first_error : "", v->nerrors ? "\")" : "");
	else if (v->nerrors)
		pt_reason_add(why, "no result table: \"%s\"", v->first_error);
	else
		pt_reason_add(why, "no result table in the output");
}

/* wrong is 0 only when the transport checked every packet end to end: the
 * InfiniBand/RoCE ICRC. perftest itself compares no payloads. */
static bool icrc_checked(const pt_ctx *c, const pt_run *r, const pt_view *v, pt_reason *why)
{
	const char *transport = run_config(c, r, v, "Transport type");
	const char *link = run_config(c, r, v, "Link type");
	const char *conn = run_config(c, r, v, "Connection type");
	if (conn && strcmp(conn, "RawEth") == 0) {
		pt_reason_add(why, "raw Ethernet has no end-to-end ICRC, and perftest compares no payloads");
		return false;
	}
	if (transport ? strcmp(transport, "IB") == 0 : link && strcmp(link, "IB") == 0)
		return true;
	if (transport)
		pt_reason_add(why, "transport \"%s\" has no end-to-end ICRC, and perftest compares no payloads",
		           transport);
	else
		pt_reason_add(why, "the transport type is not printed, so no end-to-end ICRC can be claimed");
	return false;
}

static void set_wrong(cJSON *rec, const pt_ctx *c, const pt_run *r, const pt_view *v,
                      ng_run_status st, pt_reason *why)
{
	pt_reason w = {0};
	if (v->nerrors)
		pt_reason_add(&w, "the run reported errors (\"%s\")", v->first_error);
	status_reason(&w, st, true);
	bool icrc = icrc_checked(c, r, v, &w);
	if (!w.n && icrc) {
		ng_record_set_wrong(rec, 0);
		ng_json_set(ng_record_conditions(rec), "payload_check", cJSON_CreateString("transport-icrc"));
		return;
	}
	ng_record_set_wrong_null(rec);
	pt_reason_add(why, "wrong not checked: %s", w.s);
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
		pt_reason_add(&why, "%s", table_problem(t));
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
			pt_reason_add(&why, "BW peak printed as 0.00 at %.0f bytes: not measured (perftest does not "
			                 "compute the peak in duration mode -D or with --noPeak)", size);
		else if (zero)
			pt_reason_add(&why, "BW average printed as 0.00 at %.0f bytes: below the printed resolution",
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
		pt_reason_add(&why, "latency is kept in detail only: the gate has no lower-is-better rule");
	else if (v->chosen)
		pt_reason_add(&why, "%s", table_problem(v->chosen));
	else
		missing_reason(c, r, v, &why);
	status_reason(&why, st, v->chosen && !table_problem(v->chosen));
	ng_record_set_reason(rec, "%s", why.s);
	ng_json_set(rec, "detail", run_detail(c, r, v));
	return rec;
}

bool pt_run_records(const pt_ctx *c, const pt_run *r, ng_run_status st, cJSON *out)
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

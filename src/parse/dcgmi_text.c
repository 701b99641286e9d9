/* dcgmi diag: the boxed text table of DCGM 3.x and 4.x, its wrapped warnings
 * and its sections, read into the tests of the record. */
#include "parse/dcgmi_int.h"

/* ---------------------------------------------------------------- text */

struct table {
	int tables;       /* tables begun */
	int closed;       /* tables that reached their closing border */
	bool in, content; /* inside a table; saw its header or a section */
	char section[32];
	bool meta; /* in the Metadata section */
	cJSON *test;
	/* the warning or info being put back together from 45-character rows */
	bool msg_open, msg_warning;
	cJSON *msg_target;
	ng_strbuf msg;
	size_t msg_chunk; /* where the last row's text starts in msg */
};

static void msg_flush(struct dcgm *c, struct table *tb)
{
	if (!tb->msg_open)
		return;
	tb->msg_open = false;
	ng_span text = {tb->msg.s ? tb->msg.s : "", tb->msg.len};
	text = ng_span_trim(text);
	if (!tb->msg_target)
		dg_add_message(c, text);
	else if (tb->msg_warning)
		dg_add_warning_text(tb->msg_target, text);
	else
		dg_add_info_text(tb->msg_target, text);
	ng_strbuf_reset(&tb->msg);
}

static void msg_start(struct table *tb, cJSON *target, bool warning, ng_span first)
{
	tb->msg_open = true;
	tb->msg_warning = warning;
	tb->msg_target = target;
	ng_strbuf_reset(&tb->msg);
	tb->msg_chunk = 0;
	first = ng_span_trim(first);
	ng_strbuf_add(&tb->msg, first.s, first.len);
}

/* A row that continues the message: the previous row held exactly CHUNK
 * characters, so whatever spaces it ended with were part of the message
 * and were lost only to the table's padding. */
static void msg_continue(struct table *tb, ng_span cell)
{
	while (tb->msg.len - tb->msg_chunk < CHUNK && !tb->msg.oom)
		ng_strbuf_addc(&tb->msg, ' ');
	tb->msg_chunk = tb->msg.len;
	if (cell.len && cell.s[0] == ' ')
		cell = ng_span_skip(cell, 1); /* the cell's own left margin */
	while (cell.len && (cell.s[cell.len - 1] == ' ' || cell.s[cell.len - 1] == '\t'))
		cell.len--;
	ng_strbuf_add(&tb->msg, cell.s, cell.len);
}

/* "+-----+-----+" and "+=====+=====+". */
static bool is_border(ng_span t)
{
	if (t.len < 3 || t.s[0] != '+' || t.s[t.len - 1] != '+')
		return false;
	for (size_t i = 0; i < t.len; i++)
		if (!strchr("+-=", t.s[i]))
			return false;
	return true;
}

/* "|-----  Metadata  ----------+----...|" (or with '+' ends). */
static bool section_row(ng_span t, ng_span *name)
{
	if (t.len < 8 || (t.s[0] != '|' && t.s[0] != '+'))
		return false;
	ng_span r = ng_span_skip(t, 1);
	if (!ng_span_starts_with(r, "-----"))
		return false;
	while (r.len && r.s[0] == '-')
		r = ng_span_skip(r, 1);
	r = ng_span_trim(r);
	if (!r.len || !isalpha((unsigned char)r.s[0]))
		return false; /* the closing border "+-----+-----+" */
	size_t n = 0;
	while (n < r.len && r.s[n] != '-' && !(r.s[n] == ' ' && n + 1 < r.len && r.s[n + 1] == ' '))
		n++;
	if (n == 0 || n == r.len)
		return false;
	*name = ng_span_trim((ng_span){r.s, n});
	return name->len > 0;
}

/* "| name | cell |": name between the first two bars, the cell (untrimmed)
 * between the second and the last. */
static bool data_row(ng_span t, ng_span *name, ng_span *cell)
{
	if (t.len < 3 || t.s[0] != '|' || t.s[t.len - 1] != '|')
		return false;
	const char *bar = memchr(t.s + 1, '|', t.len - 1);
	if (!bar || bar == t.s + t.len - 1)
		return false;
	*name = ng_span_trim((ng_span){t.s + 1, (size_t)(bar - t.s - 1)});
	*cell = (ng_span){bar + 1, (size_t)(t.s + t.len - 1 - (bar + 1))};
	if (cell->len && cell->s[cell->len - 1] == ' ')
		cell->len--;
	return true;
}

/* "GPU0: Pass" (4.x): an entity's result under its test's row. */
static bool entity_cell(ng_span cell, ng_span *group, long long *id, ng_span *status)
{
	size_t i = 0, j;
	while (i < cell.len && isalpha((unsigned char)cell.s[i]))
		i++;
	if (i == 0 || i > 16)
		return false;
	for (j = i; j < cell.len && isdigit((unsigned char)cell.s[j]); j++)
		;
	if (j == i || j >= cell.len || cell.s[j] != ':' || !ng_span_integer((ng_span){cell.s + i, j - i}, id))
		return false;
	*group = (ng_span){cell.s, i};
	*status = ng_span_trim(ng_span_skip(cell, j + 1));
	return true;
}

/* "Pass - All", "Fail - GPU: 4", "Pass - GPUs: 0, 1, 2" (3.x). */
static bool list_cell(ng_span cell, ng_span *word, ng_span *ids, bool *all)
{
	const char *dash = cell.len >= 3 ? memmem(cell.s, cell.len, " - ", 3) : NULL;
	if (!dash)
		return false;
	*word = ng_span_trim((ng_span){cell.s, (size_t)(dash - cell.s)});
	ng_span rest = ng_span_trim(ng_span_skip(cell, (size_t)(dash - cell.s) + 3));
	*all = dg_span_ieq(rest, "All");
	if (*all)
		return true;
	if (ng_span_starts_with(rest, "GPUs:"))
		*ids = ng_span_trim(ng_span_skip(rest, 5));
	else if (ng_span_starts_with(rest, "GPU:"))
		*ids = ng_span_trim(ng_span_skip(rest, 4));
	else
		return false;
	return true;
}

static void list_statuses(struct dcgm *c, cJSON *test, ng_span word, ng_span ids)
{
	while (ids.len) {
		const char *comma = memchr(ids.s, ',', ids.len);
		size_t n = comma ? (size_t)(comma - ids.s) : ids.len;
		ng_span one = ng_span_trim((ng_span){ids.s, n});
		long long id;
		if (ng_span_integer(one, &id))
			dg_set_status(c, test, dg_test_entity(c, test, ng_span_cstr("GPU"), id, (ng_span){0}), word);
		else if (one.len)
			dg_problem(c, "test %s: \"%.*s\" is not a GPU id", dg_label_of(test, "display_name"),
			        (int)(one.len > 32 ? 32 : one.len), one.s);
		ids = comma ? ng_span_skip(ids, n + 1) : (ng_span){ids.s + ids.len, 0};
	}
}

static bool known_word(ng_span w)
{
	bool known;
	dg_map_status(w, &known);
	return known;
}

static const char *const meta_names[] = {
	"DCGM Version",     "Driver Version Detected", "GPU Device IDs Detected", "CPU Device IDs Detected",
	"Number of CPUs Detected", "EUD Test Version", "CPU EUD Test Version"};

static bool is_meta_name(ng_span name)
{
	for (size_t i = 0; i < sizeof meta_names / sizeof meta_names[0]; i++)
		if (ng_span_eq(name, meta_names[i]))
			return true;
	return false;
}

static void text_metadata(struct dcgm *c, ng_span name, ng_span value)
{
	if (!name.len)
		return;
	char *key = dg_clean_copy(name.s, name.len);
	if (!key)
		return;
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(c->detail, "metadata");
	if (!cJSON_IsObject(meta)) {
		meta = cJSON_CreateObject();
		ng_json_set(c->detail, "metadata", meta);
	}
	if (!cJSON_GetObjectItemCaseSensitive(meta, key))
		ng_json_set(meta, key, dg_json_span(value));
	free(key);
	if (ng_span_eq(name, "DCGM Version") && value.len)
		dg_set_detail_once(c, "dcgm_version", dg_json_span(value));
	else if (ng_span_eq(name, "Driver Version Detected") && value.len)
		dg_set_detail_once(c, "driver_version", dg_json_span(value));
	else if (ng_span_eq(name, "GPU Device IDs Detected")) {
		/* "20b2,20b2" in 3.x, "26b9, 26b9" in 4.x */
		cJSON *ids = cJSON_CreateArray();
		while (value.len) {
			const char *comma = memchr(value.s, ',', value.len);
			size_t n = comma ? (size_t)(comma - value.s) : value.len;
			ng_span one = ng_span_trim((ng_span){value.s, n});
			if (one.len)
				dg_append(ids, dg_json_span(one));
			value = comma ? ng_span_skip(value, n + 1) : (ng_span){value.s + value.len, 0};
		}
		dg_set_detail_once(c, "device_ids", ids);
	}
}

/* "Warning", "Info", "Error" (3.x software checks), or "Warning: GPU0". */
static bool message_name(ng_span name, bool *warning, ng_span *entity)
{
	static const struct {
		const char *word;
		bool warning;
	} kinds[] = {{"Warning", true}, {"Error", true}, {"Info", false}};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(kinds[i].word);
		if (!ng_span_starts_with(name, kinds[i].word))
			continue;
		*warning = kinds[i].warning;
		if (name.len == n) {
			*entity = (ng_span){0};
			return true;
		}
		if (name.s[n] == ':') {
			*entity = ng_span_trim(ng_span_skip(name, n + 1));
			return true;
		}
	}
	return false;
}

static void text_test_row(struct dcgm *c, struct table *tb, ng_span name, ng_span cell)
{
	tb->test = dg_test_new(c, name, tb->section[0] ? tb->section : NULL);
	if (!tb->test)
		return;
	ng_span word, ids = {0};
	bool all;
	if (list_cell(cell, &word, &ids, &all)) {
		if (all)
			dg_set_status(c, tb->test, tb->test, word);
		else
			list_statuses(c, tb->test, word, ids);
		ng_json_set(tb->test, "dcgm_status", dg_json_span(cell));
	} else {
		dg_set_status(c, tb->test, tb->test, cell);
	}
}

static void text_message_row(struct dcgm *c, struct table *tb, bool warning, ng_span entity, ng_span cell)
{
	cJSON *target = tb->test;
	if (tb->test && entity.len) {
		/* "Warning: GPU1": letters, then the entity's number */
		size_t i = 0;
		long long id;
		while (i < entity.len && isalpha((unsigned char)entity.s[i]))
			i++;
		if (i > 0 && i <= 16 && ng_span_integer(ng_span_skip(entity, i), &id))
			target = dg_test_entity(c, tb->test, (ng_span){entity.s, i}, id, (ng_span){0});
		else
			target = dg_test_entity(c, tb->test, (ng_span){0}, -1, entity);
	}
	msg_start(tb, target, warning, cell);
}

/* A row with an empty name under a test: an entity's result, more GPUs of a
 * 3.x result, or the next 45 characters of a wrapped message. */
static void text_continuation(struct dcgm *c, struct table *tb, ng_span cell)
{
	ng_span t = ng_span_trim(cell), group, status, word, ids = {0};
	long long id;
	bool all;
	if (!t.len)
		return;
	if (entity_cell(t, &group, &id, &status) && (known_word(status) || !tb->msg_open)) {
		msg_flush(c, tb);
		dg_set_status(c, tb->test, dg_test_entity(c, tb->test, group, id, (ng_span){0}), status);
	} else if (list_cell(t, &word, &ids, &all) && known_word(word)) {
		msg_flush(c, tb);
		if (all)
			dg_set_status(c, tb->test, tb->test, word);
		else
			list_statuses(c, tb->test, word, ids);
	} else if (tb->msg_open && !ng_span_starts_with(t, "Code: (")) {
		msg_continue(tb, cell);
	} else {
		/* "  Code: (000000000012)" under a 3.x Diagnostic warning, or a
		 * line the table does not explain: kept with the test. */
		msg_flush(c, tb);
		if (tb->test)
			dg_add_info_text(tb->test, t);
		else
			dg_add_message(c, t);
	}
}

static void text_row(struct dcgm *c, struct table *tb, ng_span name, ng_span cell)
{
	bool warning;
	ng_span entity;
	if (ng_span_eq(name, "Diagnostic") && ng_span_eq(ng_span_trim(cell), "Result"))
		return;
	if (tb->meta || (!tb->test && is_meta_name(name))) {
		msg_flush(c, tb);
		text_metadata(c, name, ng_span_trim(cell));
	} else if (!name.len) {
		text_continuation(c, tb, cell);
	} else if (message_name(name, &warning, &entity)) {
		msg_flush(c, tb);
		text_message_row(c, tb, warning, entity, cell);
	} else {
		msg_flush(c, tb);
		text_test_row(c, tb, name, ng_span_trim(cell));
	}
}

static void text_section(struct dcgm *c, struct table *tb, ng_span name)
{
	msg_flush(c, tb);
	tb->content = true;
	tb->test = NULL;
	tb->meta = ng_span_eq(name, "Metadata");
	snprintf(tb->section, sizeof tb->section, "%.*s", (int)(name.len > 31 ? 31 : name.len), name.s);
	for (char *p = tb->section; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x80)
			*p = '?';
}

static void text_line(struct dcgm *c, struct table *tb, ng_span line)
{
	ng_span t = ng_span_trim(line), name, cell;
	bool sec = section_row(t, &name);
	bool row = !sec && data_row(t, &name, &cell);
	bool header = row && ng_span_eq(name, "Diagnostic") && ng_span_eq(ng_span_trim(cell), "Result");
	if (!tb->in) {
		if (!header && !sec) {
			if (!is_border(t))
				dg_add_message(c, t);
			return;
		}
		*tb = (struct table){.tables = tb->tables + 1, .closed = tb->closed, .in = true, .msg = tb->msg};
	}
	if (header) {
		tb->content = true;
	} else if (sec) {
		text_section(c, tb, name);
	} else if (is_border(t)) {
		/* The "+====+" under the header, or the closing border. */
		if (tb->content && !memchr(t.s, '=', t.len)) {
			msg_flush(c, tb);
			tb->in = false;
			tb->closed++;
		}
	} else if (row) {
		text_row(c, tb, name, cell);
	} else {
		msg_flush(c, tb);
		dg_add_message(c, t);
	}
}

/* Returns how many tables began; *closed how many of them ended. */
int dg_read_text(struct dcgm *c, const char *text, size_t len, int *closed)
{
	struct table tb = {0};
	ng_lines it;
	ng_span line;
	ng_lines_init(&it, text, len);
	while (ng_lines_next(&it, &line))
		text_line(c, &tb, line);
	msg_flush(c, &tb);
	ng_strbuf_free(&tb.msg);
	*closed = tb.closed;
	if (tb.tables > 1)
		ng_json_set(c->detail, "tables", cJSON_CreateNumber(tb.tables));
	return tb.tables;
}

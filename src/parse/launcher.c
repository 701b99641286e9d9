#include "parse/launcher.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/record_build.h"

/* Open MPI frames its help messages between rules of exactly this many dashes. */
#define OMPI_RULE 74
/* A dashed box longer than this is not one of Open MPI's notices. */
#define OMPI_BOX_MAX 40

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static size_t digits(ng_span s, size_t at)
{
	size_t n = 0;
	while (at + n < s.len && is_digit(s.s[at + n]))
		n++;
	return n;
}

/* Whether s at `at` holds exactly n digits then `sep` (0: no separator). */
static bool digits_then(ng_span s, size_t at, size_t n, char sep)
{
	if (digits(s, at) < n || (digits(s, at) > n && sep))
		return false;
	return !sep || (at + n < s.len && s.s[at + n] == sep);
}

/* "HH:MM:SS" at `at`, then an optional ".fraction"; returns the length. */
static size_t clock_time(ng_span s, size_t at)
{
	if (!digits_then(s, at, 2, ':') || !digits_then(s, at + 3, 2, ':') || digits(s, at + 6) != 2)
		return 0;
	size_t n = 8;
	if (at + n < s.len && (s.s[at + n] == '.' || s.s[at + n] == ',') && digits(s, at + n + 1))
		n += 1 + digits(s, at + n + 1);
	return n;
}

/* "Dec 01 21:13:04" or syslog's "Dec  1 21:13:04"; returns the length. */
static size_t syslog_time(ng_span s, size_t at)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	if (at + 7 > s.len)
		return 0;
	bool month = false;
	for (size_t m = 0; m < 12 && !month; m++)
		month = memcmp(s.s + at, months + 3 * m, 3) == 0;
	if (!month || s.s[at + 3] != ' ')
		return 0;
	size_t d = at + 4;
	if (s.s[d] == ' ' && is_digit(s.s[d + 1]) && s.s[d + 2] == ' ')
		d += 3;
	else if (digits_then(s, d, 2, ' '))
		d += 3;
	else
		return 0;
	size_t t = clock_time(s, d);
	return t ? d + t - at : 0;
}

/* "2026-12-01T21:13:04.5+00:00" (T or a space); returns the length. */
static size_t iso_time(ng_span s, size_t at)
{
	if (!digits_then(s, at, 4, '-') || !digits_then(s, at + 5, 2, '-') || digits(s, at + 8) != 2)
		return 0;
	if (at + 10 >= s.len || (s.s[at + 10] != 'T' && s.s[at + 10] != ' '))
		return 0;
	size_t t = clock_time(s, at + 11);
	if (!t)
		return 0;
	size_t n = 11 + t;
	if (at + n < s.len && s.s[at + n] == 'Z') {
		n++;
	} else if (at + n < s.len && (s.s[at + n] == '+' || s.s[at + n] == '-') && digits(s, at + n + 1) >= 2) {
		size_t z = at + n + 1;
		if (digits(s, z) == 4)
			n += 5;
		else if (digits(s, z) == 2 && z + 2 < s.len && s.s[z + 2] == ':' && digits(s, z + 3) == 2)
			n += 6;
		else if (digits(s, z) == 2)
			n += 3;
	}
	return n;
}

static bool host_char(char c) { return isalnum((unsigned char)c) || c == '.' || c == '-' || c == '_'; }

/* journald's " host ident[pid]: " after its timestamp (or "host kernel: ").
 * An ident without a pid is too much like a tool's own "Key: value" line. */
static size_t journald_source(ng_span s, size_t at)
{
	size_t i = at;
	if (i >= s.len || s.s[i] != ' ')
		return 0;
	i++;
	size_t h = i;
	while (i < s.len && host_char(s.s[i]))
		i++;
	if (i == h || i >= s.len || s.s[i] != ' ')
		return 0;
	size_t id = ++i;
	while (i < s.len && i - id < 64 && s.s[i] != ' ' && s.s[i] != '[' && s.s[i] != ':')
		i++;
	if (i == id || i >= s.len)
		return 0;
	if (s.s[i] == '[') {
		size_t p = digits(s, i + 1);
		if (!p || i + 1 + p + 1 >= s.len || s.s[i + 1 + p] != ']' || s.s[i + 2 + p] != ':')
			return 0;
		i += p + 3;
	} else if (s.s[i] == ':' && i - id == 6 && memcmp(s.s + id, "kernel", 6) == 0) {
		i++;
	} else {
		return 0;
	}
	if (i < s.len && s.s[i] == ' ')
		i++;
	return i - at;
}

/* A timestamp and the space after it; 0 when none. */
static size_t timestamp(ng_span s, unsigned *styles)
{
	bool bracket = s.len && s.s[0] == '[';
	size_t at = bracket ? 1 : 0;
	size_t n = syslog_time(s, at);
	if (!n)
		n = iso_time(s, at);
	/* A bare clock ("00:00:05", ts -s) only unbracketed: "[12:00:01]" is
	 * too often a tool's own. */
	if (!n && !bracket)
		n = clock_time(s, at);
	if (!n)
		return 0;
	n += at;
	if (bracket) {
		if (n >= s.len || s.s[n] != ']')
			return 0;
		n++;
	}
	size_t src = !bracket ? journald_source(s, n) : 0;
	if (src) {
		*styles |= NG_LAUNCH_JOURNALD;
		return n + src;
	}
	/* A timestamp is followed by a space (or is the whole of a blank line). */
	if (n < s.len && s.s[n] != ' ' && s.s[n] != '\t')
		return 0;
	*styles |= NG_LAUNCH_TIMESTAMP;
	return n < s.len ? n + 1 : n;
}

static void tag_add(char *tag, size_t cap, size_t *used, const char *s, size_t n, const char *suffix)
{
	if (*used >= cap - 1)
		return;
	int w = snprintf(tag + *used, cap - *used, "%.*s%s", (int)n, s, suffix);
	*used += w > 0 ? (size_t)w : 0;
	if (*used >= cap)
		*used = cap - 1;
}

/* After a label: a space or the end of the line. */
static bool label_end(ng_span s, size_t at) { return at == s.len || s.s[at] == ' ' || s.s[at] == '\t'; }

/* One label at the start of s; its length (with the space after it) or 0. */
static size_t label(ng_span s, char *tag, size_t cap, size_t *used, unsigned *styles)
{
	size_t i = 0;
	while (i < s.len && i < 8 && s.s[i] == ' ')
		i++;
	size_t d = digits(s, i);
	if (d && d <= 6 && i + d < s.len && s.s[i + d] == ':' && label_end(s, i + d + 1)) {
		tag_add(tag, cap, used, s.s + i, d, ":");
		*styles |= NG_LAUNCH_SRUN;
		return i + d + 1 < s.len ? i + d + 2 : i + d + 1;
	}
	if (!s.len || s.s[0] != '[')
		return 0;
	const char *rb = memchr(s.s, ']', s.len < 96 ? s.len : 96);
	if (!rb)
		return 0;
	ng_span id = {s.s + 1, (size_t)(rb - s.s - 1)};
	size_t after = (size_t)(rb + 1 - s.s);
	if (!id.len)
		return 0;
	/* [1,0]<stdout>: (Open MPI --tag-output; 5.x adds a space) */
	size_t k = 0;
	while (k < id.len && (is_digit(id.s[k]) || id.s[k] == ','))
		k++;
	ng_span rest = ng_span_skip(s, after);
	if (k == id.len && memchr(id.s, ',', id.len) &&
	    (ng_span_starts_with(rest, "<stdout>:") || ng_span_starts_with(rest, "<stderr>:"))) {
		tag_add(tag, cap, used, s.s, after, "");
		*styles |= NG_LAUNCH_MPIRUN_TAG;
		size_t n = after + 9;
		return n < s.len && s.s[n] == ' ' ? n + 1 : n;
	}
	if (!label_end(s, after))
		return 0;
	size_t n = after < s.len ? after + 1 : after;
	/* [0] (mpiexec -prepend-rank) */
	if (k == id.len && !memchr(id.s, ',', id.len) && id.len <= 6) {
		tag_add(tag, cap, used, s.s, after, "");
		*styles |= NG_LAUNCH_RANK;
		return n;
	}
	/* [pod/NAME/CONTAINER] (kubectl logs --prefix) */
	if (ng_span_starts_with(id, "pod/")) {
		for (size_t j = 0; j < id.len; j++)
			if (id.s[j] == ' ')
				return 0;
		tag_add(tag, cap, used, s.s, after, "");
		*styles |= NG_LAUNCH_POD;
		return n;
	}
	/* [host:rank] (and Open MPI's own [host:pid] notices) */
	const char *colon = memchr(id.s, ':', id.len);
	if (colon && colon > id.s) {
		size_t hl = (size_t)(colon - id.s);
		for (size_t j = 0; j < hl; j++)
			if (!host_char(id.s[j]))
				return 0;
		ng_span num = {colon + 1, id.len - hl - 1};
		if (num.len && num.len <= 10 && digits(num, 0) == num.len) {
			tag_add(tag, cap, used, s.s, after, "");
			*styles |= NG_LAUNCH_HOST_RANK;
			return n;
		}
	}
	return 0;
}

ng_span ng_launch_strip(ng_span s, char *tag, size_t cap, unsigned *styles)
{
	size_t used = 0;
	tag[0] = '\0';
	/* Each launcher adds its prefix in front of the last: ts in front of
	 * srun in front of mpirun, in any order, a few deep at most. */
	for (int pass = 0; pass < 6; pass++) {
		size_t n = timestamp(s, styles);
		if (!n)
			n = label(s, tag, cap, &used, styles);
		if (!n)
			break;
		s = ng_span_skip(s, n);
	}
	return s;
}

/* "==> out/1/rank.0/stdout <==": the file whose lines follow. */
static bool file_head(ng_span t, ng_span *name)
{
	t = ng_span_trim(t);
	if (t.len < 9 || !ng_span_starts_with(t, "==> ") || memcmp(t.s + t.len - 4, " <==", 4) != 0)
		return false;
	*name = ng_span_trim((ng_span){t.s + 4, t.len - 8});
	return name->len > 0;
}

static bool is_rule(ng_span t)
{
	t = ng_span_trim(t);
	if (t.len != OMPI_RULE)
		return false;
	for (size_t i = 0; i < t.len; i++)
		if (t.s[i] != '-')
			return false;
	return true;
}

bool ng_launch_noise(ng_span t)
{
	t = ng_span_trim(t);
	if (ng_span_starts_with(t, "Warning: Permanently added ") && ng_span_contains(t, "to the list of known hosts"))
		return true;
	if ((ng_span_starts_with(t, "MCW rank ") || ng_span_starts_with(t, "Rank ")) &&
	    (ng_span_contains(t, " bound to ") || ng_span_contains(t, " is not bound")))
		return true;
	if (ng_span_contains(t, "more process has sent help message") ||
	    ng_span_contains(t, "more processes have sent help message"))
		return true;
	if (ng_span_starts_with(t, "Set MCA parameter \"") && ng_span_contains(t, "_base_help_aggregate\""))
		return true;
	return false;
}

/* The first words inside a dashed box that make it one of Open MPI's notices
 * rather than an error report (which stays, for the parser to quote). */
static bool notice_words(ng_span t)
{
	t = ng_span_trim(t);
	return ng_span_starts_with(t, "WARNING:") || ng_span_starts_with(t, "NOTE:") ||
	       ng_span_starts_with(t, "By default, for Open MPI 4.0 and later");
}

struct line {
	ng_span content;
	size_t term; /* bytes of the line ending: 0, 1 or 2 */
	size_t stream;
	bool noise;
};

/* The stream of a label, opened on first sight; SIZE_MAX when a labelled
 * stream would be one too many (the last slot is kept for unlabelled lines). */
static size_t find_stream(ng_launch *l, const char *tag, size_t *nstreams)
{
	for (size_t k = 0; k < *nstreams; k++)
		if (strcmp(l->streams[k].tag, tag) == 0)
			return k;
	if (*nstreams >= NG_LAUNCH_MAX_STREAMS + (tag[0] ? 0 : 1))
		return SIZE_MAX;
	snprintf(l->streams[*nstreams].tag, NG_LAUNCH_TAG, "%s", tag);
	return (*nstreams)++;
}

/* Marks the dashed Open MPI notice boxes of one label as noise. */
static void drop_notice_boxes(struct line *ls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ls[i].noise || !is_rule(ls[i].content))
			continue;
		size_t st = ls[i].stream, seen = 0, first = SIZE_MAX, end = SIZE_MAX;
		for (size_t j = i + 1; j < n && j - i < 4 * OMPI_BOX_MAX && seen <= OMPI_BOX_MAX; j++) {
			if (ls[j].stream != st)
				continue;
			seen++;
			if (is_rule(ls[j].content)) {
				end = j;
				break;
			}
			if (first == SIZE_MAX && ng_span_trim(ls[j].content).len)
				first = j;
		}
		if (end == SIZE_MAX || first == SIZE_MAX || !notice_words(ls[first].content))
			continue;
		for (size_t j = i; j <= end; j++)
			if (ls[j].stream == st)
				ls[j].noise = true;
		i = end;
	}
}

static bool build_streams(ng_launch *l, const struct line *ls, size_t n)
{
	size_t *sizes = calloc(l->nstreams, sizeof *sizes);
	if (!sizes)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!ls[i].noise)
			sizes[ls[i].stream] += ls[i].content.len + ls[i].term, l->streams[ls[i].stream].lines++;
	bool ok = true;
	size_t total = 0;
	for (size_t k = 0; k < l->nstreams && ok; k++) {
		ok = (l->streams[k].text = malloc(sizes[k] + 1)) != NULL;
		total += sizes[k] + 1;
	}
	if (ok)
		ok = (l->joined = malloc(total + 1)) != NULL;
	if (ok) {
		for (size_t i = 0; i < n; i++) {
			if (ls[i].noise)
				continue;
			ng_launch_stream *st = &l->streams[ls[i].stream];
			memcpy(st->text + st->len, ls[i].content.s, ls[i].content.len);
			st->len += ls[i].content.len;
			/* The line's own ending, as it was printed. */
			const char *nl = ls[i].term == 2 ? "\r\n" : "\n";
			memcpy(st->text + st->len, nl, ls[i].term);
			st->len += ls[i].term;
		}
		for (size_t k = 0; k < l->nstreams; k++) {
			ng_launch_stream *st = &l->streams[k];
			st->text[st->len] = '\0';
			/* Streams are whole texts of their own: never two on one line. */
			if (st->len && l->joined_len && l->joined[l->joined_len - 1] != '\n')
				l->joined[l->joined_len++] = '\n';
			memcpy(l->joined + l->joined_len, st->text, st->len);
			l->joined_len += st->len;
		}
		l->joined[l->joined_len] = '\0';
	}
	free(sizes);
	return ok;
}

bool ng_launch_read(const char *text, size_t len, ng_launch *out)
{
	memset(out, 0, sizeof *out);
	size_t n = 0;
	for (const char *p = text, *end = text + len; p < end; n++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	struct line *ls = calloc(n ? n : 1, sizeof *ls);
	out->streams = calloc(NG_LAUNCH_MAX_STREAMS + 1, sizeof *out->streams);
	if (!ls || !out->streams)
		goto fail;
	char file[NG_LAUNCH_TAG] = "";
	const char *p = text, *end = text + len;
	for (size_t i = 0; i < n; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		ng_span line = {p, (size_t)((nl ? nl : end) - p)};
		size_t term = nl ? 1 : 0;
		if (nl && line.len && line.s[line.len - 1] == '\r')
			line.len--, term = 2;
		p = nl ? nl + 1 : end;
		char label_tag[NG_LAUNCH_TAG], tag[NG_LAUNCH_TAG];
		unsigned styles = 0;
		ng_span content = ng_launch_strip(line, label_tag, sizeof label_tag, &styles);
		ng_span fname;
		if (file_head(content, &fname)) {
			/* Keep the end of a long path: rank.N/stdout tells the ranks apart. */
			size_t keep = fname.len < sizeof file - 1 ? fname.len : sizeof file - 1;
			memcpy(file, fname.s + fname.len - keep, keep);
			file[keep] = '\0';
			out->styles |= NG_LAUNCH_FILE | styles;
			ls[i].noise = true;
			ls[i].stream = find_stream(out, "", &out->nstreams);
			continue;
		}
		size_t used = 0;
		tag[0] = '\0';
		tag_add(tag, sizeof tag, &used, file, strlen(file), file[0] && label_tag[0] ? " " : "");
		tag_add(tag, sizeof tag, &used, label_tag, strlen(label_tag), "");
		size_t k = find_stream(out, tag, &out->nstreams);
		if (k == SIZE_MAX) {
			/* Too many labels to be launcher output: read the line whole. */
			k = find_stream(out, "", &out->nstreams);
			content = line;
			styles = 0;
		}
		out->styles |= styles;
		if (content.len != line.len)
			out->prefixed++;
		ls[i].content = content;
		ls[i].term = term;
		ls[i].stream = k;
		ls[i].noise = ng_launch_noise(content);
	}
	drop_notice_boxes(ls, n);
	if (!out->nstreams)
		find_stream(out, "", &out->nstreams);
	for (size_t i = 0; i < n; i++)
		out->noise += ls[i].noise;
	if (!build_streams(out, ls, n))
		goto fail;
	free(ls);
	return true;
fail:
	free(ls);
	ng_launch_free(out);
	return false;
}

void ng_launch_free(ng_launch *l)
{
	if (l->streams)
		for (size_t k = 0; k < l->nstreams; k++)
			free(l->streams[k].text);
	free(l->streams);
	free(l->joined);
	memset(l, 0, sizeof *l);
}

bool ng_launch_changed(const ng_launch *l) { return l->styles || l->noise || l->nstreams > 1; }

cJSON *ng_launch_json(const ng_launch *l)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
	    {NG_LAUNCH_SRUN, "srun-label"},       {NG_LAUNCH_MPIRUN_TAG, "mpirun-tag-output"},
	    {NG_LAUNCH_HOST_RANK, "host-rank"},   {NG_LAUNCH_RANK, "rank"},
	    {NG_LAUNCH_POD, "pod-prefix"},        {NG_LAUNCH_FILE, "output-files"},
	    {NG_LAUNCH_TIMESTAMP, "timestamp"},   {NG_LAUNCH_JOURNALD, "journald"},
	};
	if (!ng_launch_changed(l))
		return NULL;
	cJSON *o = cJSON_CreateObject(), *styles = cJSON_CreateArray();
	if (!o || !styles || !cJSON_AddItemToObject(o, "styles", styles)) {
		cJSON_Delete(o);
		cJSON_Delete(styles);
		return NULL;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (l->styles & names[i].bit)
			cJSON_AddItemToArray(styles, cJSON_CreateString(names[i].name));
	cJSON_AddNumberToObject(o, "streams", (double)l->nstreams);
	cJSON_AddNumberToObject(o, "noise_dropped", (double)l->noise);
	return o;
}

bool ng_launch_annotate(cJSON *records, const ng_launch *l)
{
	if (!records || !ng_launch_changed(l))
		return true;
	cJSON *rec;
	cJSON_ArrayForEach(rec, records)
	{
		cJSON *j = ng_launch_json(l);
		cJSON *d = j ? ng_record_detail(rec) : NULL;
		if (!d) {
			cJSON_Delete(j);
			return false;
		}
		ng_json_set(d, "launcher", j);
	}
	return true;
}

cJSON *ng_launch_parse(const char *text, size_t len, ng_run_status st, ng_err *err, ng_bare_parser bare)
{
	ng_launch l;
	if (!ng_launch_read(text, len, &l)) {
		ng_fail_as(err, NG_ERR_INPUT, "out of memory taking launcher prefixes off %zu bytes of output", len);
		return NULL;
	}
	bool changed = ng_launch_changed(&l);
	cJSON *out = changed ? bare(l.joined, l.joined_len, st, err) : bare(text, len, st, err);
	if (out && !ng_launch_annotate(out, &l)) {
		cJSON_Delete(out);
		out = NULL;
		ng_fail_as(err, NG_ERR_INPUT, "out of memory describing the launcher of %zu bytes of output", len);
	}
	ng_launch_free(&l);
	return out;
}

/* The GPUs a job was given: SLURM_JOB_GPUS or --gpus, item by item. */
#include "parse/job_gpus.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void ng_job_gpus_note(ng_job_gpus *j, const char *fmt, ...)
{
	if (j->n_notes >= NG_JOB_GPUS_NOTES_MAX) {
		j->notes_dropped++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->note[j->n_notes++], sizeof j->note[0], fmt, ap);
	va_end(ap);
}

void ng_job_gpus_escape(const char *s, size_t len, size_t max_chars, char *out, size_t cap)
{
	size_t o = 0;
	if (cap == 0)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char piece[8];
		if (i >= max_chars) {
			snprintf(piece, sizeof piece, "...");
		} else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			piece[0] = (char)c;
			piece[1] = '\0';
		} else {
			snprintf(piece, sizeof piece, "\\x%02x", c);
		}
		size_t pl = strlen(piece);
		if (o + pl + 1 > cap)
			break;
		memcpy(out + o, piece, pl);
		o += pl;
		if (i >= max_chars)
			break;
	}
	out[o] = '\0';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 8-4-4-4-12 hex digits separated by '-': the 36 characters after "GPU-". */
static bool is_uuid_body(const char *s, size_t len)
{
	static const size_t groups[] = {8, 4, 4, 4, 12};
	if (len != 36)
		return false;
	size_t p = 0;
	for (size_t g = 0; g < 5; g++) {
		if (g > 0 && s[p++] != '-')
			return false;
		for (size_t k = 0; k < groups[g]; k++)
			if (!is_hex(s[p++]))
				return false;
	}
	return true;
}

/* A decimal ordinal of at most four digits, no sign, no spaces. -1 if not. */
static int parse_ordinal(const char *s, size_t len)
{
	if (len == 0 || len > 4)
		return -1;
	int v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static bool all_digits(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* "/1/0": one or more "/digits" groups, nothing else. */
static bool is_mig_suffix(const char *s, size_t len)
{
	if (len == 0)
		return false;
	size_t i = 0;
	while (i < len) {
		if (s[i++] != '/')
			return false;
		size_t d = i;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d || i - d > 4)
			return false;
	}
	return true;
}

/* MIG-<uuid>, MIG-GPU-<uuid>/gi/ci, GPU-<uuid>/gi/ci. */
static bool is_mig(const char *s, size_t len)
{
	if (len > 4 && strncmp(s, "MIG-", 4) == 0) {
		s += 4;
		len -= 4;
		if (is_uuid_body(s, len))
			return true;
		if (len > 4 && strncmp(s, "GPU-", 4) == 0 && len > 40 && is_uuid_body(s + 4, 36) &&
		    is_mig_suffix(s + 40, len - 40))
			return true;
		return false;
	}
	return len > 40 && strncmp(s, "GPU-", 4) == 0 && is_uuid_body(s + 4, 36) &&
	       is_mig_suffix(s + 40, len - 40);
}

static void note_item(ng_job_gpus *j, const char *what, const char *s, size_t len)
{
	if (j->n_notes >= NG_JOB_GPUS_ITEM_NOTES) {
		j->notes_dropped++;
		return;
	}
	char shown[120];
	ng_job_gpus_escape(s, len, 60, shown, sizeof shown);
	ng_job_gpus_note(j, "\"%s\" %s", shown, what);
}

static void add_ordinal(ng_job_gpus *j, int ordinal)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->gpu[i].ordinal == ordinal) {
			j->n_duplicate++;
			return;
		}
	if (j->n >= NG_JOB_GPUS_MAX) {
		j->n_over_cap++;
		return;
	}
	j->gpu[j->n].ordinal = ordinal;
	j->gpu[j->n].uuid[0] = '\0';
	j->n++;
}

static void add_uuid(ng_job_gpus *j, const char *s)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->gpu[i].ordinal < 0 && strncasecmp(j->gpu[i].uuid, s, NG_JOB_GPU_UUID_LEN) == 0) {
			j->n_duplicate++;
			return;
		}
	if (j->n >= NG_JOB_GPUS_MAX) {
		j->n_over_cap++;
		return;
	}
	j->gpu[j->n].ordinal = -1;
	memcpy(j->gpu[j->n].uuid, s, NG_JOB_GPU_UUID_LEN);
	j->gpu[j->n].uuid[NG_JOB_GPU_UUID_LEN] = '\0';
	j->n++;
}

static void parse_item(ng_job_gpus *j, const char *s, size_t len)
{
	j->n_items++;
	if (len > NG_JOB_GPU_ITEM_MAX) {
		j->n_refused++;
		note_item(j, "refused: longer than any GPU identifier", s, len);
		return;
	}
	int ord = parse_ordinal(s, len);
	if (ord >= 0) {
		if (ord > NG_JOB_GPU_ORDINAL_MAX) {
			j->n_refused++;
			note_item(j, "refused: not a plausible GPU ordinal", s, len);
			return;
		}
		add_ordinal(j, ord);
		return;
	}
	if (all_digits(s, len)) {
		j->n_refused++;
		note_item(j, "refused: not a plausible GPU ordinal", s, len);
		return;
	}
	const char *dash = memchr(s, '-', len);
	if (dash && all_digits(s, (size_t)(dash - s)) && all_digits(dash + 1, len - (size_t)(dash - s) - 1)) {
		int lo = parse_ordinal(s, (size_t)(dash - s));
		int hi = parse_ordinal(dash + 1, len - (size_t)(dash - s) - 1);
		if (lo < 0 || hi < 0 || lo > NG_JOB_GPU_ORDINAL_MAX || hi > NG_JOB_GPU_ORDINAL_MAX ||
		    hi < lo) {
			j->n_refused++;
			note_item(j, "refused: not a range of GPU ordinals", s, len);
			return;
		}
		for (int k = lo; k <= hi; k++)
			add_ordinal(j, k);
		return;
	}
	if (len == NG_JOB_GPU_UUID_LEN && strncmp(s, "GPU-", 4) == 0 && is_uuid_body(s + 4, 36)) {
		add_uuid(j, s);
		return;
	}
	if (is_mig(s, len)) {
		j->n_mig++;
		note_item(j, "skipped: a MIG instance (its parent GPU is not guessed)", s, len);
		return;
	}
	j->n_refused++;
	note_item(j, "refused: not a GPU ordinal, range or UUID", s, len);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void ng_job_gpus_parse(const char *text, ng_job_gpus *out)
{
	memset(out, 0, sizeof *out);
	if (!text)
		return;
	const char *p = text;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *s = p;
		while (len && is_space(*s)) {
			s++;
			len--;
		}
		while (len && is_space(s[len - 1]))
			len--;
		if (len)
			parse_item(out, s, len);
		if (!end)
			break;
		p = end + 1;
	}
	if (out->n_duplicate)
		ng_job_gpus_note(out, "%zu duplicate item%s folded", out->n_duplicate,
		                 out->n_duplicate == 1 ? "" : "s");
	if (out->n_over_cap)
		ng_job_gpus_note(out, "%zu GPU%s beyond the first %d not checked", out->n_over_cap,
		                 out->n_over_cap == 1 ? "" : "s", NG_JOB_GPUS_MAX);
}

bool ng_job_gpus_ordinals_only(const ng_job_gpus *j)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->gpu[i].ordinal < 0)
			return false;
	return true;
}

size_t ng_job_gpus_resolve(ng_job_gpus *j, const ng_gpu_snapshot *node, bool keep[NG_GPU_MAX])
{
	size_t marked = 0, n_node = node->n_gpus < NG_GPU_MAX ? node->n_gpus : NG_GPU_MAX;
	for (size_t i = 0; i < NG_GPU_MAX; i++)
		keep[i] = false;
	size_t missing_ord = 0, missing_uuid = 0;
	char first_ord[16] = "", first_uuid[NG_JOB_GPU_UUID_LEN + 1] = "";
	for (size_t k = 0; k < j->n; k++) {
		const ng_job_gpu *g = &j->gpu[k];
		bool found = false;
		for (size_t i = 0; i < n_node && !found; i++) {
			if (g->ordinal >= 0 ? node->gpu[i].index == g->ordinal
			                    : strcasecmp(node->gpu[i].uuid, g->uuid) == 0) {
				found = true;
				if (!keep[i])
					marked++;
				keep[i] = true;
			}
		}
		if (found)
			continue;
		if (g->ordinal >= 0) {
			if (missing_ord++ == 0)
				snprintf(first_ord, sizeof first_ord, "%d", g->ordinal);
		} else if (missing_uuid++ == 0) {
			memcpy(first_uuid, g->uuid, sizeof first_uuid);
		}
	}
	char more[48] = "";
	if (missing_ord) {
		if (missing_ord > 1)
			snprintf(more, sizeof more, " (and %zu more)", missing_ord - 1);
		ng_job_gpus_note(j, "GPU %s%s not on this node (NVML lists %zu GPU%s): not checked",
		                 first_ord, more, n_node, n_node == 1 ? "" : "s");
	}
	if (missing_uuid) {
		more[0] = '\0';
		if (missing_uuid > 1)
			snprintf(more, sizeof more, " (and %zu more)", missing_uuid - 1);
		ng_job_gpus_note(j, "%s%s not among this node's GPUs: not checked", first_uuid, more);
	}
	return marked;
}

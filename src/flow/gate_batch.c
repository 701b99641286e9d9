/* The gate over a stream (`nodegate gate --batch`): JSON Lines in, one JSON
 * line out per line in, in order.
 *
 * Input is read in large blocks and output is flushed before every read that
 * could block, so the command is fast on a file and still answers line by line
 * when a program talks to it through a pipe. A line it cannot judge gets an
 * {"error": ...} line and the run goes on. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flow/gate_batch.h"
#include "core/json.h"
#include "judge/record.h"
#include "core/strbuf.h"
#include "judge/hysteresis.h"

#define READ_CHUNK (1u << 20)
/* A case is a few hundred bytes; a line this long is refused, not buffered. */
#define MAX_LINE ((size_t)256 << 20)

struct batch {
	const ng_ctx *ctx;
	ng_gate_input in;
	ng_hist_kind *hist;
	size_t hist_cap;
	ng_strbuf out;
	unsigned long long line_no;
	bool any_error;
};

static const char *const case_keys[] = {
	"record", "baseline", "cohort_drops", "history", "blocked", "clear_after", "escalate_after",
};

static int line_error(struct batch *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int line_error(struct batch *b, const char *fmt, ...)
{
	char msg[600];
	int n = snprintf(msg, sizeof msg, "line %llu: ", b->line_no);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	ng_strbuf_adds(&b->out, "{\"error\": ");
	ng_strbuf_add_json_string(&b->out, msg);
	ng_strbuf_adds(&b->out, "}\n");
	b->any_error = true;
	return -1;
}

/* A hysteresis count as the reference demands it: an int (so not a float, even
 * 2.0, and not a boolean) of at least 1. */
static int read_count(struct batch *b, const ng_json_source *src, const cJSON *v,
                      const char *name, unsigned long long def, unsigned long long *out)
{
	if (!v) {
		*out = def;
		return 0;
	}
	if (!cJSON_IsNumber(v) || !ng_json_is_integer_literal(src->text, src->len, src->root, v) ||
	    !(v->valuedouble >= 1))
		return line_error(b, "%s must be a whole number of runs, at least 1", name);
	*out = v->valuedouble >= 1.8e19 ? ULLONG_MAX : (unsigned long long)v->valuedouble;
	return 0;
}

static int read_history(struct batch *b, const cJSON *v, size_t *n)
{
	*n = 0;
	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return line_error(b, "history must be an array of raw verdicts");
	size_t count = (size_t)cJSON_GetArraySize(v);
	if (count > b->hist_cap) {
		ng_hist_kind *h = realloc(b->hist, count * sizeof *h);
		if (!h)
			return line_error(b, "out of memory for a history of %zu verdicts", count);
		b->hist = h;
		b->hist_cap = count;
	}
	for (const cJSON *c = v->child; c; c = c->next)
		b->hist[(*n)++] = cJSON_IsString(c) ? ng_hist_kind_of(c->valuestring) : NG_HIST_OTHER;
	return 0;
}

static void judge_line(struct batch *b, const char *text, size_t len)
{
	ng_err err;
	cJSON *doc = ng_json_parse(text, len, &err);
	if (!doc) {
		line_error(b, "%s", err.msg);
		return;
	}
	ng_json_source src = {text, len, doc};
	if (!cJSON_IsObject(doc)) {
		line_error(b, "a case must be a JSON object with at least \"record\"");
		goto out;
	}
	for (const cJSON *c = doc->child; c; c = c->next) {
		size_t k = 0;
		while (k < sizeof case_keys / sizeof *case_keys &&
		       (c->string[0] != case_keys[k][0] || strcmp(c->string, case_keys[k]) != 0))
			k++;
		if (k == sizeof case_keys / sizeof *case_keys) {
			line_error(b, "unknown key \"%s\" (a misspelt \"blocked\" would unblock a node)",
			           c->string);
			goto out;
		}
	}
	const cJSON *record = ng_json_get(doc, "record");
	if (!record) {
		line_error(b, "the case has no \"record\"");
		goto out;
	}
	if (ng_gate_input_record(&b->in, record, &src, &err) < 0 ||
	    ng_gate_input_baseline(&b->in, ng_json_get(doc, "baseline"), &err) < 0 ||
	    ng_gate_input_cohort_json(&b->in, ng_json_get(doc, "cohort_drops"), &err) < 0) {
		line_error(b, "%s", err.msg);
		goto out;
	}
	const cJSON *history = ng_json_get(doc, "history"), *blocked = ng_json_get(doc, "blocked");
	size_t n_hist;
	unsigned long long clear_after = 0, escalate_after = 0;
	if (read_history(b, history, &n_hist) < 0 ||
	    read_count(b, &src, ng_json_get(doc, "clear_after"), "clear_after",
	               (unsigned long long)b->ctx->policy.clear_after, &clear_after) < 0 ||
	    read_count(b, &src, ng_json_get(doc, "escalate_after"), "escalate_after",
	               (unsigned long long)b->ctx->policy.escalate_after, &escalate_after) < 0)
		goto out;

	ng_verdict v = ng_gate_input_judge(&b->in, &b->ctx->policy, NULL);
	ng_strbuf_adds(&b->out, "{\"verdict\": \"");
	ng_strbuf_adds(&b->out, ng_verdict_name(v));
	ng_strbuf_addc(&b->out, '"');
	if (history || blocked) {
		ng_hysteresis h;
		/* The counts were validated above, so this cannot refuse them. */
		ng_with_hysteresis(v, b->hist, n_hist, ng_json_truthy(blocked), clear_after,
		                   escalate_after, &h);
		ng_strbuf_adds(&b->out, ", \"effective\": \"");
		ng_strbuf_adds(&b->out, ng_verdict_name(h.effective));
		ng_strbuf_adds(&b->out, h.blocked ? "\", \"blocked\": true" : "\", \"blocked\": false");
	}
	ng_strbuf_adds(&b->out, "}\n");
out:
	cJSON_Delete(doc);
}

static bool flush_out(struct batch *b, FILE *out)
{
	if (b->out.oom) {
		ng_ctx_note(b->ctx, "gate --batch", "out of memory buffering output");
		return false;
	}
	if (b->out.len && fwrite(b->out.s, 1, b->out.len, out) != b->out.len)
		return false;
	ng_strbuf_reset(&b->out);
	return fflush(out) == 0;
}

int ng_flow_gate_batch(const ng_ctx *ctx, FILE *in, FILE *out)
{
	struct batch b = {.ctx = ctx};
	int fd = fileno(in);
	size_t cap = READ_CHUNK + 1, len = 0;
	char *buf = malloc(cap);
	bool skipping = false; /* inside an over-long line, discarding to its end */
	bool eof = false, ok = buf != NULL;
	if (!buf)
		ng_ctx_note(ctx, "gate --batch", "out of memory");

	while (ok && !eof) {
		if (!flush_out(&b, out)) {
			ok = false;
			break;
		}
		if (cap - len - 1 < READ_CHUNK / 2) {
			size_t cap2 = cap * 2;
			char *b2 = realloc(buf, cap2);
			if (!b2) {
				ng_ctx_note(ctx, "gate --batch", "out of memory for a %zu-byte line", len);
				ok = false;
				break;
			}
			buf = b2;
			cap = cap2;
		}
		ssize_t got = read(fd, buf + len, cap - len - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			ng_ctx_note(ctx, "gate --batch", "reading standard input: %s", strerror(errno));
			ok = false;
			break;
		}
		if (got == 0) {
			eof = true;
			/* A last line without a newline is still a line. */
			if (len > 0 && !skipping)
				buf[len++] = '\n';
		}
		len += (size_t)got;

		size_t start = 0;
		for (;;) {
			char *nl = memchr(buf + start, '\n', len - start);
			if (!nl)
				break;
			size_t end = (size_t)(nl - buf);
			if (skipping) {
				skipping = false;
			} else {
				b.line_no++;
				buf[end] = '\0';
				judge_line(&b, buf + start, end - start);
			}
			start = end + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > MAX_LINE && !skipping) {
			b.line_no++;
			line_error(&b, "longer than %zu MiB; not judged", MAX_LINE >> 20);
			skipping = true;
		}
		if (skipping)
			len = 0;
	}
	if (ok)
		ok = flush_out(&b, out);
	free(buf);
	free(b.hist);
	ng_strbuf_free(&b.out);
	ng_gate_input_free(&b.in);
	if (!ok)
		return -1;
	return b.any_error ? 1 : 0;
}

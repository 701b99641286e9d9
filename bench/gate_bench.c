/* gate_bench: how many cases per second the gate rule judges on one core.
 *
 * Reads a JSON Lines file of batch cases ({"record", "baseline",
 * "cohort_drops", ...} one per line, the input of `nodegate gate --batch`),
 * converts every case once, untimed, into its own stored views (samples, diag
 * entries, class text and cohort copied into an arena), and then times
 * ng_gate() over all of them on one thread with one preallocated scratch
 * buffer. Passes repeat until --min-seconds have been spent; the best pass is
 * reported. The first pass is checked case by case against
 * ng_gate_input_judge(), which is what the batch command calls.
 *
 * Lines the batch command would answer with an error (not JSON, not an
 * object, an unknown key, no record, a record or baseline that is not an
 * object) are counted and left out: the rule never sees them.
 *
 * Usage: gate_bench CASES.jsonl [--min-seconds S]
 * Human text on standard output, then one JSON object on the last line. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/policy.h"
#include "judge/record.h"
#include "core/verdict.h"
#include "judge/gate.h"

/* ---- a bump allocator: every case's storage, freed all at once ---- */

#define ARENA_CHUNK ((size_t)64 << 20)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct arena_chunk *head;
	size_t total;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof *c + cap);
		if (!c) {
			fprintf(stderr, "gate_bench: out of memory (%zu bytes in the arena so far)\n",
			        a->total);
			exit(2);
		}
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += n;
	a->total += n;
	return p;
}

static void *arena_copy(struct arena *a, const void *src, size_t n)
{
	void *p = arena_alloc(a, n ? n : 1);
	if (n)
		memcpy(p, src, n);
	return p;
}

static const char *arena_str(struct arena *a, const char *s)
{
	return arena_copy(a, s, strlen(s) + 1);
}

static void arena_free(struct arena *a)
{
	for (struct arena_chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	*a = (struct arena){0};
}

/* ---- cases ---- */

struct bench_case {
	ng_gate_record rec;
	ng_gate_baseline base;
	const double *cohort;
	size_t n_cohort;
};

static const char *const case_keys[] = {
	"record", "baseline", "cohort_drops", "history", "blocked", "clear_after", "escalate_after",
};

/* A hysteresis count the batch command accepts: absent, or an integer literal
 * of at least 1. */
static bool count_ok(const ng_json_source *src, const cJSON *v)
{
	return !v || (cJSON_IsNumber(v) && ng_json_is_integer_literal(src->text, src->len, src->root, v) &&
	              v->valuedouble >= 1);
}

/* Returns 0 and fills *c when the batch command would judge this line, and 1
 * when it would answer with an error instead (err says why). */
static int convert_line(char *text, size_t len, ng_gate_input *in, const ng_policy *pol,
                        struct arena *a, struct bench_case *c, unsigned char *expect,
                        ng_err *err)
{
	cJSON *doc = ng_json_parse(text, len, err);
	if (!doc)
		return 1;
	int rc = 1;
	if (!cJSON_IsObject(doc))
		goto out;
	for (const cJSON *m = doc->child; m; m = m->next) {
		size_t k = 0;
		while (k < sizeof case_keys / sizeof *case_keys && strcmp(m->string, case_keys[k]) != 0)
			k++;
		if (k == sizeof case_keys / sizeof *case_keys) {
			ng_fail(err, "unknown key \"%s\"", m->string);
			goto out;
		}
	}
	const cJSON *record = ng_json_get(doc, "record");
	if (!record) {
		ng_fail(err, "the case has no \"record\"");
		goto out;
	}
	ng_json_source src = {text, len, doc};
	if (!cJSON_IsObject(record)) {
		ng_fail(err, "a record must be a JSON object");
		goto out;
	}
	const cJSON *baseline = ng_json_get(doc, "baseline");
	if (baseline && !cJSON_IsNull(baseline) && !cJSON_IsObject(baseline)) {
		ng_fail(err, "a baseline must be a JSON object");
		goto out;
	}
	if (ng_gate_input_record(in, record, &src, err) < 0 ||
	    ng_gate_input_baseline(in, baseline, err) < 0 ||
	    ng_gate_input_cohort_json(in, ng_json_get(doc, "cohort_drops"), err) < 0)
		goto out;
	const cJSON *history = ng_json_get(doc, "history");
	if ((history && !cJSON_IsArray(history)) ||
	    !count_ok(&src, ng_json_get(doc, "clear_after")) ||
	    !count_ok(&src, ng_json_get(doc, "escalate_after"))) {
		ng_fail(err, "the hysteresis fields are malformed");
		goto out;
	}

	/* What the batch command answers for this case, judged from the same
	 * reused buffers it uses while the document they point into is alive. */
	*expect = (unsigned char)ng_gate_input_judge(in, pol, NULL);

	/* Copy everything the views point at out of the reused buffers and out of
	 * the parsed document, which is freed below. */
	c->rec = in->rec;
	c->rec.samples = arena_copy(a, in->rec.samples, in->rec.n_samples * sizeof(double));
	ng_diag_entry *diag = arena_alloc(a, (in->rec.n_diag ? in->rec.n_diag : 1) * sizeof *diag);
	for (size_t i = 0; i < in->rec.n_diag; i++)
		diag[i] = (ng_diag_entry){arena_str(a, in->rec.diag[i].test), in->rec.diag[i].status};
	c->rec.diag = diag;
	c->rec.cls.text = arena_str(a, in->rec.cls.text ? in->rec.cls.text : "");
	c->rec.domain = in->rec.domain ? arena_str(a, in->rec.domain) : NULL;
	c->base = in->base;
	c->base.cls.text = arena_str(a, in->base.cls.text ? in->base.cls.text : "");
	c->cohort = arena_copy(a, in->cohort, in->n_cohort * sizeof(double));
	c->n_cohort = in->n_cohort;
	rc = 0;
out:
	cJSON_Delete(doc);
	return rc;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "gate_bench: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = (size_t)1 << 24, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		if (n == cap) {
			char *b2 = realloc(buf, cap * 2 + 1);
			if (!b2) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b2;
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (!buf)
		fprintf(stderr, "gate_bench: out of memory reading %s\n", path);
	else if (ferror(f)) {
		fprintf(stderr, "gate_bench: reading %s: %s\n", path, strerror(errno));
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed pass over every case. The verdicts are counted and folded into a
 * checksum, and written out, so no call can be elided. */
static uint64_t run_pass(const struct bench_case *cases, size_t n, const ng_policy *pol,
                         ng_work work, unsigned char *out, uint64_t counts[NG_V_COUNT])
{
	uint64_t sum = 0xcbf29ce484222325u; /* FNV-1a over the verdict bytes */
	for (size_t i = 0; i < n; i++) {
		const struct bench_case *c = &cases[i];
		ng_verdict v = ng_gate(&c->rec, &c->base, c->cohort, c->n_cohort, pol, work, NULL);
		out[i] = (unsigned char)v;
		counts[(unsigned)v < NG_V_COUNT ? v : 0]++;
		sum = (sum ^ (uint64_t)v) * 0x100000001b3u;
	}
	return sum;
}

static void usage(void)
{
	fprintf(stderr, "usage: gate_bench CASES.jsonl [--min-seconds S]\n");
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	double min_seconds = 2.0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--min-seconds") == 0 && i + 1 < argc) {
			char *end;
			min_seconds = strtod(argv[++i], &end);
			if (*end || !(min_seconds >= 0)) {
				usage();
				return 2;
			}
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage();
			return 0;
		} else if (!path && argv[i][0] != '-') {
			path = argv[i];
		} else {
			usage();
			return 2;
		}
	}
	if (!path) {
		usage();
		return 2;
	}

	ng_policy pol;
	ng_policy_default(&pol);

	size_t len;
	char *text = read_all(path, &len);
	if (!text)
		return 2;

	/* ---- untimed: convert every line once ---- */
	double t0 = now_s();
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (len && text[len - 1] != '\n')
		lines++;
	struct bench_case *cases = malloc((lines ? lines : 1) * sizeof *cases);
	unsigned char *expect = malloc(lines ? lines : 1);
	unsigned char *got = malloc(lines ? lines : 1);
	if (!cases || !expect || !got) {
		fprintf(stderr, "gate_bench: out of memory for %zu cases\n", lines);
		return 2;
	}
	struct arena arena = {0};
	ng_gate_input in = {0};
	size_t n = 0, skipped = 0, work_cap = 1, line_no = 0;
	for (char *p = text, *end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *stop = nl ? nl : end;
		*stop = '\0';
		line_no++;
		ng_err err = {0};
		int rc = convert_line(p, (size_t)(stop - p), &in, &pol, &arena, &cases[n], &expect[n],
		                      &err);
		if (rc > 0) {
			skipped++;
		} else {
			struct bench_case *c = &cases[n];
			if (c->rec.n_samples > work_cap)
				work_cap = c->rec.n_samples;
			if (c->n_cohort > work_cap)
				work_cap = c->n_cohort;
			n++;
		}
		p = stop + 1;
	}
	ng_gate_input_free(&in);
	free(text);
	double t_convert = now_s() - t0;
	if (n == 0) {
		fprintf(stderr, "gate_bench: %s holds no case the gate can judge (%zu lines)\n", path,
		        line_no);
		return 2;
	}

	ng_work work = {malloc(work_cap * sizeof(double)), work_cap};
	if (!work.buf) {
		fprintf(stderr, "gate_bench: out of memory for the scratch buffer\n");
		return 2;
	}

	printf("gate_bench: %zu lines, %zu cases judged, %zu left out (the batch command answers "
	       "them with an error)\n", line_no, n, skipped);
	printf("converted once in %.2f s (untimed); %.1f MiB of stored views; scratch %zu doubles\n",
	       t_convert, (double)arena.total / (1 << 20), work_cap);

	/* ---- timed: ng_gate over every case, pass after pass ---- */
	uint64_t counts[NG_V_COUNT] = {0}, pass_counts[NG_V_COUNT];
	uint64_t checksum = 0;
	double best = 0, total = 0;
	unsigned passes = 0;
	size_t mismatches = 0, first_bad = 0;
	do {
		memset(pass_counts, 0, sizeof pass_counts);
		double s = now_s();
		uint64_t sum = run_pass(cases, n, &pol, work, got, pass_counts);
		double dt = now_s() - s;
		if (passes == 0) {
			checksum = sum;
			memcpy(counts, pass_counts, sizeof counts);
			for (size_t i = 0; i < n; i++) {
				if (got[i] != expect[i]) {
					if (!mismatches++)
						first_bad = i;
				}
			}
			best = dt;
		} else if (sum != checksum || memcmp(counts, pass_counts, sizeof counts) != 0) {
			fprintf(stderr, "gate_bench: pass %u gave different verdicts from pass 1\n",
			        passes + 1);
			return 2;
		}
		if (dt < best)
			best = dt;
		total += dt;
		passes++;
	} while (total < min_seconds);

	double rate = (double)n / best, mean_rate = (double)n * passes / total;
	printf("crosscheck against ng_gate_input_judge: %s", mismatches ? "MISMATCH" : "ok");
	if (mismatches)
		printf(" (%zu cases differ; first is case %zu: %s here, %s there)", mismatches,
		       first_bad + 1, ng_verdict_name((ng_verdict)got[first_bad]),
		       ng_verdict_name((ng_verdict)expect[first_bad]));
	printf("\nverdicts:");
	for (int v = 0; v < NG_V_COUNT; v++)
		if (counts[v])
			printf(" %s=%" PRIu64, ng_verdict_name((ng_verdict)v), counts[v]);
	printf("\nchecksum %016" PRIx64 "\n", checksum);
	printf("%u passes in %.2f s; best pass %.4f s\n", passes, total, best);
	printf("library: %.0f cases/s (best pass), %.0f cases/s (mean), %.1f ns per case\n", rate,
	       mean_rate, best / (double)n * 1e9);

	printf("{\"cases\": %zu, \"lines\": %zu, \"left_out\": %zu, \"passes\": %u, "
	       "\"seconds_total\": %.6f, \"best_pass_seconds\": %.6f, \"cases_per_second\": %.1f, "
	       "\"mean_cases_per_second\": %.1f, \"ns_per_case\": %.3f, \"checksum\": \"%016" PRIx64
	       "\", \"crosscheck\": \"%s\", \"mismatches\": %zu, \"verdicts\": {",
	       n, line_no, skipped, passes, total, best, rate, mean_rate, best / (double)n * 1e9,
	       checksum, mismatches ? "mismatch" : "ok", mismatches);
	const char *sep = "";
	for (int v = 0; v < NG_V_COUNT; v++) {
		if (counts[v]) {
			printf("%s\"%s\": %" PRIu64, sep, ng_verdict_name((ng_verdict)v), counts[v]);
			sep = ", ";
		}
	}
	printf("}}\n");

	free(work.buf);
	free(cases);
	free(expect);
	free(got);
	arena_free(&arena);
	return mismatches ? 1 : 0;
}

/* The launcher property, for every parser test: an input wrapped in each
 * launcher style (srun -l, mpirun --tag-output, kubectl prefixes, ts and
 * journald timestamps, per-rank files, launcher noise) parses to the same
 * records as the input bare. Every test input of a parser's unit test and
 * every published fixture goes through it. */
#ifndef NODEGATE_TESTS_LAUNCHER_PROPERTY_H
#define NODEGATE_TESTS_LAUNCHER_PROPERTY_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse/launcher.h"

/* One way a launcher wraps each line; head, when set, is a line before all. */
struct launcher_style {
	const char *name;
	const char *prefix;
	const char *head;
	bool noise; /* launcher noise lines are mixed in as well */
};

static const struct launcher_style launcher_styles[] = {
    {"srun -l", "0: ", NULL, false},
    {"srun -l, task 12", "12: ", NULL, false},
    {"mpirun --tag-output (4.x)", "[1,0]<stdout>:", NULL, false},
    {"mpirun --tag-output (5.x)", "[1,3]<stdout>: ", NULL, false},
    {"[host:rank]", "[gpu-node-07:3] ", NULL, false},
    {"mpiexec -prepend-rank", "[0] ", NULL, false},
    {"kubectl logs --prefix", "[pod/nccl-launcher-x7k2p/launcher] ", NULL, false},
    {"ts", "Dec 01 21:13:04 ", NULL, false},
    {"ts -s", "00:00:05 ", NULL, false},
    {"kubectl --timestamps", "2026-12-01T21:13:04.123456789Z ", NULL, false},
    {"bracketed timestamp", "[2026-12-01 21:13:04] ", NULL, false},
    {"journald", "Dec 01 21:13:04 gpu-node-07 launcher[4242]: ", NULL, false},
    {"journald short-iso", "2026-12-01T21:13:04+0000 gpu-node-07 tool[77]: ", NULL, false},
    {"ts then srun -l", "Dec  1 21:13:04 3: ", NULL, false},
    {"srun -l then mpirun", "0: [1,0]<stdout>: ", NULL, false},
    {"--output-filename, pasted with tail", "", "==> nccl-out/1/rank.0/stdout <==", false},
    {"launcher noise", "", NULL, true},
    {"srun -l with noise", "1: ", NULL, true},
};

static const char *const launcher_noise_lines[] = {
    "Warning: Permanently added '[gpu-node-08]:2222' (ED25519) to the list of known hosts.",
    "[gpu-node-07:41234] MCW rank 0 bound to socket 0[core 0[hwt 0-1]]: [BB/../..][../../..]",
    "--------------------------------------------------------------------------",
    "WARNING: There was an error initializing an OpenFabrics device.",
    "",
    "  Local host:   gpu-node-07",
    "--------------------------------------------------------------------------",
    "[gpu-node-07:41234] 7 more processes have sent help message help-mpi-btl-openib.txt / no device params found",
    "[gpu-node-07:41234] Set MCA parameter \"orte_base_help_aggregate\" to 0 to see all help / error messages",
};

struct lp_buf {
	char *s;
	size_t len, cap;
};

static void lp_put(struct lp_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void lp_noise(struct lp_buf *b, const char *prefix)
{
	for (size_t i = 0; i < sizeof launcher_noise_lines / sizeof launcher_noise_lines[0]; i++) {
		/* Open MPI's own lines carry no rank label. */
		const char *p = launcher_noise_lines[i][0] == '[' ? "" : prefix;
		lp_put(b, p, strlen(p));
		lp_put(b, launcher_noise_lines[i], strlen(launcher_noise_lines[i]));
		lp_put(b, "\n", 1);
	}
}

/* text with every line wrapped in style st. */
static char *lp_wrap(const struct launcher_style *st, const char *text, size_t len, size_t *out_len)
{
	struct lp_buf b = {0};
	lp_put(&b, "", 0);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (st->head) {
		lp_put(&b, st->head, strlen(st->head));
		lp_put(&b, "\n", 1);
	}
	if (st->noise)
		lp_noise(&b, st->prefix);
	size_t at = 0, line = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
		lp_put(&b, st->prefix, strlen(st->prefix));
		lp_put(&b, text + at, n);
		at += n;
		if (st->noise && ++line == lines / 2 && nl)
			lp_noise(&b, st->prefix);
	}
	*out_len = b.len;
	return b.s;
}

/* The records without what only the launcher layer adds. */
static void lp_strip_launcher(cJSON *records)
{
	cJSON *rec;
	cJSON_ArrayForEach(rec, records)
	{
		cJSON *d = cJSON_GetObjectItemCaseSensitive(rec, "detail");
		if (!d)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(d, "launcher");
		cJSON_DeleteItemFromObjectCaseSensitive(d, "launcher_label");
		cJSON_DeleteItemFromObjectCaseSensitive(d, "launcher_labels");
		if (!d->child)
			cJSON_DeleteItemFromObjectCaseSensitive(rec, "detail");
	}
}

/* Asserts the property for one input; what names it in a failure. */
static void assert_launcher_transparent(ng_bare_parser parse, const char *text, size_t len, ng_run_status st,
                                        const char *what)
{
	ng_err err;
	cJSON *bare = parse(text, len, st, &err);
	assert_non_null(bare);
	lp_strip_launcher(bare);
	for (size_t i = 0; i < sizeof launcher_styles / sizeof launcher_styles[0]; i++) {
		size_t wlen;
		char *w = lp_wrap(&launcher_styles[i], text, len, &wlen);
		cJSON *wrapped = parse(w, wlen, st, &err);
		assert_non_null(wrapped);
		lp_strip_launcher(wrapped);
		if (!cJSON_Compare(bare, wrapped, true)) {
			char *a = cJSON_Print(bare), *b = cJSON_Print(wrapped);
			print_error("%s wrapped in %s parses differently.\nbare:\n%.3000s\nwrapped:\n%.3000s\n", what,
			            launcher_styles[i].name, a, b);
			free(a);
			free(b);
			fail();
		}
		cJSON_Delete(wrapped);
		free(w);
	}
	cJSON_Delete(bare);
}

#endif

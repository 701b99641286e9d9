/* The sacct parser and Slurm host lists (src/parse/sacct.h), on inputs
 * written here in the shape `sacct --parsable2 --noheader` prints. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parse/sacct.h"
#include "parse/sacct_steps.h"

static ng_sacct parse_ok(const char *text)
{
	ng_sacct s;
	ng_err err;
	assert_int_equal(ng_sacct_parse(text, strlen(text), &s, &err), 0);
	return s;
}

struct names {
	char buf[4096];
	size_t len;
	int stop_after;
};

static int collect(const char *name, size_t len, void *arg)
{
	struct names *n = arg;
	assert_int_equal(strlen(name), len);
	if (n->len + len + 2 < sizeof n->buf) /* a refused list may call it many times first */
		n->len += (size_t)snprintf(n->buf + n->len, sizeof n->buf - n->len, "%s ", name);
	return n->stop_after && --n->stop_after == 0;
}

static long expand(const char *list, struct names *n)
{
	memset(n, 0, sizeof *n);
	return ng_hostlist_expand(list, strlen(list), 1000, collect, n);
}

static void hostlists_expand(void **state)
{
	(void)state;
	struct names n;
	assert_int_equal(expand("gpu-001", &n), 1);
	assert_string_equal(n.buf, "gpu-001 ");
	assert_int_equal(expand("gpu-[001-003,010]", &n), 4);
	assert_string_equal(n.buf, "gpu-001 gpu-002 gpu-003 gpu-010 ");
	assert_int_equal(expand("a[8-11],b", &n), 5);
	assert_string_equal(n.buf, "a8 a9 a10 a11 b ");
	assert_int_equal(expand("r[1-2]-n[01-02]", &n), 4);
	assert_string_equal(n.buf, "r1-n01 r1-n02 r2-n01 r2-n02 ");
	assert_int_equal(expand("x[7]", &n), 1);
	assert_string_equal(n.buf, "x7 ");
}

static void hostlists_refused(void **state)
{
	(void)state;
	struct names n;
	const char *bad[] = {"", "gpu-[3-1]", "gpu-[1,]", "gpu-[a-b]", "gpu-[1-2", "a,,b", "a,",
	                     "gpu-<x>", "gpu-[1-100000]", "n[0-99][0-99]", "has space"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(expand(bad[i], &n), -1);
	/* The callback stops it: -2, never a count that could be mistaken for one. */
	memset(&n, 0, sizeof n);
	n.stop_after = 2;
	assert_int_equal(ng_hostlist_expand("a[1-5]", 6, 100, collect, &n), -2);
	assert_string_equal(n.buf, "a1 a2 ");
}

static void jobs_read(void **state)
{
	(void)state;
	ng_sacct s = parse_ok(
		"4242|gpu-[01-04]|billing=256,cpu=256,gres/gpu=32,mem=2000G,node=4|2026-11-28T10:00:00|"
		"2026-11-28T12:30:00|FAILED|1:0\n"
		"4242.batch|gpu-01|cpu=64|2026-11-28T10:00:00|2026-11-28T12:30:00|FAILED|1:0\n"
		"4242.0|gpu-[01-04]|cpu=256|2026-11-28T10:00:01|2026-11-28T12:30:00|FAILED|1:0\n"
		"4243|gpu-09|billing=8,cpu=8,gres/gpu:h100=6,gres/gpu:a100=2,node=1|2026-11-29T00:00:00|"
		"Unknown|RUNNING|0:0\n"
		"4244_3|gpu-10|cpu=8,node=1|2026-11-29T01:00:00|2026-11-29T02:00:00|CANCELLED by 1000|0:15\n"
		"4245|None assigned|cpu=8|Unknown|Unknown|PENDING|0:0\n");
	assert_int_equal(s.n, 4);
	assert_int_equal(s.steps, 2);
	assert_int_equal(s.bad, 0);
	const ng_sacct_job *j = &s.jobs[0];
	assert_string_equal(j->id, "4242");
	assert_int_equal(j->n_nodes, 4);
	assert_string_equal(ng_sacct_node(&s, j, 0), "gpu-01");
	assert_string_equal(ng_sacct_node(&s, j, 3), "gpu-04");
	assert_int_equal(j->gpus, 32);
	assert_int_equal(j->start, 1795860000); /* 2026-11-28T10:00:00Z */
	assert_int_equal(j->end - j->start, 9000);
	assert_string_equal(j->state, "FAILED");
	assert_int_equal(j->exit_code, 1);
	assert_int_equal(j->exit_signal, 0);
	/* Typed GPU counts add up when no plain one is given; a running job has no end. */
	assert_int_equal(s.jobs[1].gpus, 8);
	assert_int_equal(s.jobs[1].end, 0);
	assert_string_equal(s.jobs[1].state, "RUNNING");
	/* "CANCELLED by 1000" is CANCELLED; no gres means no GPUs. */
	assert_string_equal(s.jobs[2].id, "4244_3");
	assert_string_equal(s.jobs[2].state, "CANCELLED");
	assert_int_equal(s.jobs[2].gpus, 0);
	assert_int_equal(s.jobs[2].exit_signal, 15);
	assert_int_equal(s.jobs[3].n_nodes, 0);
	assert_string_equal(ng_sacct_node(&s, &s.jobs[0], 1), "gpu-02");
	ng_sacct_free(&s);
}

static void bad_lines_are_counted_not_guessed(void **state)
{
	(void)state;
	ng_sacct s = parse_ok(
		"JobID|NodeList|AllocTRES|Start|End|State|ExitCode\n"
		"1|gpu-01|gres/gpu=8|2026-11-28 10:00:00|2026-11-28T12:00:00|FAILED|1:0\n"
		"2|gpu-01|gres/gpu=many|2026-11-28T10:00:00|2026-11-28T12:00:00|FAILED|1:0\n"
		"3|gpu-<b>|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|FAILED|1:0\n"
		"4|gpu-01|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|FAILED\n"
		"5|gpu-01|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|FAILED|1:0|extra\n"
		"x7|gpu-01|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|FAILED|1:0\n"
		"8|gpu-01|gres/gpu=8|2026-13-28T10:00:00|2026-11-28T12:00:00|FAILED|1:0\n"
		"9|gpu-01|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|failed|1:0\n"
		"\n"
		"10|gpu-01|gres/gpu=8|2026-11-28T10:00:00|2026-11-28T12:00:00|COMPLETED|x\n");
	assert_int_equal(s.n, 1); /* only job 10: an unreadable exit code is -1, not a refusal */
	assert_string_equal(s.jobs[0].id, "10");
	assert_int_equal(s.jobs[0].exit_code, -1);
	assert_int_equal(s.bad, 8);
	assert_int_equal(s.first_bad, 2);
	assert_non_null(strstr(s.bad_why, "unreadable time"));
	assert_int_equal(s.lines, 10);
	ng_sacct_free(&s);
}

static void nothing_is_nothing(void **state)
{
	(void)state;
	ng_sacct s = parse_ok("");
	assert_int_equal(s.n, 0);
	assert_int_equal(s.bad, 0);
	ng_sacct_free(&s);
	s = parse_ok("\n\r\n");
	assert_int_equal(s.lines, 0);
	ng_sacct_free(&s);
}

/* Host lists at the limit, several to a line's worth of text, and a list
 * refused halfway (its names must not stay behind): every name of every
 * job is where the index says, in order. The index (name_at) is what makes
 * ng_sacct_node constant-time; a walk over all names is then linear in
 * their number, which the fuzz target and the report both do. */
static void every_name_is_indexed(void **state)
{
	(void)state;
	char text[512];
	snprintf(text, sizeof text,
	         "1|n[00000-%05d]|gres/gpu=8|Unknown|Unknown|RUNNING|0:0\n"
	         "2|a[1-3],b[7-8]|gres/gpu=8|Unknown|Unknown|RUNNING|0:0\n"
	         "3|x[0-99999]|gres/gpu=8|Unknown|Unknown|RUNNING|0:0\n"
	         "4|m[0-9]-r[0-9]|gres/gpu=8|Unknown|Unknown|RUNNING|0:0\n",
	         NG_SACCT_MAX_NODES - 1);
	ng_sacct s = parse_ok(text);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.bad, 1); /* job 3: more than the limit, and no names of it kept */
	assert_int_equal(s.jobs[0].n_nodes, NG_SACCT_MAX_NODES);
	assert_int_equal(s.jobs[1].n_nodes, 5);
	assert_int_equal(s.jobs[2].n_nodes, 100);
	assert_int_equal(s.n_names, NG_SACCT_MAX_NODES + 5 + 100);
	char want[64];
	for (size_t k = 0; k < s.jobs[0].n_nodes; k++) {
		snprintf(want, sizeof want, "n%05zu", k);
		assert_string_equal(ng_sacct_node(&s, &s.jobs[0], k), want);
	}
	static const char *const second[] = {"a1", "a2", "a3", "b7", "b8"};
	for (size_t k = 0; k < 5; k++)
		assert_string_equal(ng_sacct_node(&s, &s.jobs[1], k), second[k]);
	for (size_t k = 0; k < 100; k++) {
		snprintf(want, sizeof want, "m%zu-r%zu", k / 10, k % 10);
		assert_string_equal(ng_sacct_node(&s, &s.jobs[2], k), want);
	}
	/* The names lie end to end: the last one ends the buffer. */
	const char *last = ng_sacct_node(&s, &s.jobs[2], 99);
	assert_ptr_equal(last + strlen(last) + 1, s.names + s.names_len);
	ng_sacct_free(&s);
}

/* A job's steps: numbered steps only, one node each or not, and what
 * does not read counted. */
static void steps_read(void **state)
{
	(void)state;
	const char text[] = "81|train|gpu-[01-04]|620|COMPLETED\n"
	                    "81.batch|batch|gpu-01|620|COMPLETED\n"
	                    "81.extern|extern|gpu-[01-04]|620|COMPLETED\n"
	                    "81.0|prep|gpu-[01-04]|20|COMPLETED\n"
	                    "81.1|shard|gpu-01|300|COMPLETED\n"
	                    "81.2|shard|gpu-02|310|COMPLETED\n"
	                    "81.3|shard|gpu-03|290|COMPLETED\n"
	                    "81.4|shard|gpu-04|600|COMPLETED\n"
	                    "81.5|shard|gpu-05|50|CANCELLED by 0\n"
	                    "81.6|shard|gpu-06|x|COMPLETED\n"       /* not a number */
	                    "81.7|shard|gpu-07|1\n"                 /* four fields */
	                    "\n";
	ng_sacct_step st[16];
	size_t bad;
	size_t n = ng_sacct_steps_parse(text, sizeof text - 1, st, 16, &bad);
	assert_int_equal(n, 6);
	assert_int_equal(bad, 2);
	assert_string_equal(st[0].id, "81.0");
	assert_string_equal(st[0].node, ""); /* several nodes */
	assert_string_equal(st[4].node, "gpu-04");
	assert_int_equal(st[4].elapsed_s, 600);
	assert_string_equal(st[5].state, "CANCELLED");
	size_t peers;
	double own, median;
	char step[64];
	/* gpu-04 took 600 s where its three peers took a median of 300 s */
	double r = ng_sacct_gang_ratio(st, n, "gpu-04", 3, &peers, &own, &median, step, sizeof step);
	assert_true(r > 1.99 && r < 2.01);
	assert_int_equal(peers, 3);
	assert_true(own == 600 && median == 300);
	assert_string_equal(step, "shard");
	/* gpu-01 against gpu-02, -03, -04: 300 of 310 */
	r = ng_sacct_gang_ratio(st, n, "gpu-01", 3, &peers, &own, &median, step, sizeof step);
	assert_true(r > 0.96 && r < 0.97);
	/* a cancelled step is no measure; too few peers is no gang */
	assert_true(ng_sacct_gang_ratio(st, n, "gpu-05", 3, NULL, NULL, NULL, NULL, 0) < 0);
	assert_true(ng_sacct_gang_ratio(st, n, "gpu-04", 4, NULL, NULL, NULL, NULL, 0) < 0);
	assert_true(ng_sacct_gang_ratio(st, n, "gpu-09", 1, NULL, NULL, NULL, NULL, 0) < 0);
	assert_int_equal(ng_sacct_steps_parse(text, sizeof text - 1, st, 2, &bad), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostlists_expand),
		cmocka_unit_test(hostlists_refused),
		cmocka_unit_test(jobs_read),
		cmocka_unit_test(bad_lines_are_counted_not_guessed),
		cmocka_unit_test(nothing_is_nothing),
		cmocka_unit_test(every_name_is_indexed),
		cmocka_unit_test(steps_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

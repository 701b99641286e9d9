/* SLURM_JOB_GPUS and --gpus: what Slurm writes, and what an attacker or a
 * broken configuration could put there instead. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/job_gpus.h"

#define UUID0 "GPU-8f6e2c1a-0b1d-4c2e-9f3a-5d6e7f8a9b0c"
#define UUID1 "GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"

static ng_job_gpus J; /* about 32 KiB: kept off the stack */

static bool has_note(const ng_job_gpus *j, const char *needle)
{
	for (size_t i = 0; i < j->n_notes; i++)
		if (strstr(j->note[i], needle))
			return true;
	return false;
}

/* Every note is printable ASCII: nothing an item held reaches a terminal or
 * a log raw. */
static void assert_notes_clean(const ng_job_gpus *j)
{
	for (size_t i = 0; i < j->n_notes; i++)
		for (const char *p = j->note[i]; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				fail_msg("note %zu holds byte 0x%02x: %s", i, (unsigned char)*p, j->note[i]);
}

static void test_ordinals(void **state)
{
	(void)state;
	ng_job_gpus_parse("0,1,3", &J);
	assert_int_equal(J.n, 3);
	assert_int_equal(J.gpu[0].ordinal, 0);
	assert_int_equal(J.gpu[1].ordinal, 1);
	assert_int_equal(J.gpu[2].ordinal, 3);
	assert_int_equal(J.n_notes, 0);
	assert_true(ng_job_gpus_ordinals_only(&J));
}

static void test_ranges_and_spaces(void **state)
{
	(void)state;
	ng_job_gpus_parse(" 0-3 , 6 ,7-7", &J);
	assert_int_equal(J.n, 6);
	int want[] = {0, 1, 2, 3, 6, 7};
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(J.gpu[i].ordinal, want[i]);
	assert_int_equal(J.n_refused, 0);

	ng_job_gpus_parse("3-1", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);
	assert_true(has_note(&J, "not a range"));

	ng_job_gpus_parse("0-99999", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);

	ng_job_gpus_parse("-1", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);
	ng_job_gpus_parse("1-", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);
	ng_job_gpus_parse("0-1-2", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);
}

static void test_uuids(void **state)
{
	(void)state;
	ng_job_gpus_parse(UUID0 "," UUID1 ",gpu-8F6E2C1A-0B1D-4C2E-9F3A-5D6E7F8A9B0C", &J);
	/* "gpu-" is not NVML's prefix: refused. */
	assert_int_equal(J.n, 2);
	assert_string_equal(J.gpu[0].uuid, UUID0);
	assert_int_equal(J.gpu[0].ordinal, -1);
	assert_int_equal(J.n_refused, 1);
	assert_false(ng_job_gpus_ordinals_only(&J));

	/* Upper-case hex is the same GPU: folded. */
	ng_job_gpus_parse(UUID0 ",GPU-8F6E2C1A-0B1D-4C2E-9F3A-5D6E7F8A9B0C", &J);
	assert_int_equal(J.n, 1);
	assert_int_equal(J.n_duplicate, 1);
	assert_true(has_note(&J, "1 duplicate item folded"));

	/* Almost UUIDs. */
	ng_job_gpus_parse("GPU-8f6e2c1a-0b1d-4c2e-9f3a-5d6e7f8a9b0," /* one short */
	                  "GPU-8f6e2c1a-0b1d-4c2e-9f3a-5d6e7f8a9b0cc," /* one long */
	                  "GPU-8f6e2c1a+0b1d-4c2e-9f3a-5d6e7f8a9b0c," /* wrong separator */
	                  "GPU-8f6e2c1a-0b1d-4c2e-9f3a-5d6e7f8a9bzc," /* not hex */
	                  "GPU-00000000-...",
	                  &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 5);
}

static void test_mig(void **state)
{
	(void)state;
	ng_job_gpus_parse("MIG-8f6e2c1a-0b1d-4c2e-9f3a-5d6e7f8a9b0c,"
	                  "MIG-" UUID1 "/1/0," UUID0 "/7/0,2",
	                  &J);
	assert_int_equal(J.n, 1);
	assert_int_equal(J.gpu[0].ordinal, 2);
	assert_int_equal(J.n_mig, 3);
	assert_int_equal(J.n_refused, 0);
	assert_true(has_note(&J, "MIG instance"));

	/* Not MIG, only MIG-shaped. */
	ng_job_gpus_parse("MIG-x,MIG-" UUID1 "/1/x," UUID0 "/,MIG-,MIG-" UUID1 "/../../etc", &J);
	assert_int_equal(J.n_mig, 0);
	assert_int_equal(J.n_refused, 5);
}

static void test_empty(void **state)
{
	(void)state;
	const char *empties[] = {NULL, "", ",", ",,,", " ", " , \t,\n"};
	for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
		ng_job_gpus_parse(empties[i], &J);
		assert_int_equal(J.n, 0);
		assert_int_equal(J.n_items, 0);
		assert_int_equal(J.n_notes, 0);
	}
	ng_job_gpus_parse(",1,,2,", &J);
	assert_int_equal(J.n, 2);
}

static void test_paths_and_shell(void **state)
{
	(void)state;
	const char *bad[] = {
		"../../x", "/dev/nvidia0", "../../../../etc/passwd", "$(reboot)", "`id`",
		"0;rm -rf /", "0|1", "0 1", "0&&1", "'0'", "\"0\"", "0>x", "~root", "*",
		"0\n1", "+1", "0x1", "1e3", "1.0", " -", "--gpus=1", "%s%s%s%n", "\\x00",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ng_job_gpus_parse(bad[i], &J);
		if (J.n != 0)
			fail_msg("\"%s\" gave %zu GPUs", bad[i], J.n);
		assert_true(J.n_refused >= 1);
		assert_true(J.n_notes >= 1);
		assert_notes_clean(&J);
	}
	/* A refused item beside good ones refuses only itself. */
	ng_job_gpus_parse("0,$(reboot),1", &J);
	assert_int_equal(J.n, 2);
	assert_int_equal(J.n_refused, 1);
	assert_true(has_note(&J, "\"$(reboot)\" refused"));
}

static void test_control_bytes_escaped(void **state)
{
	(void)state;
	ng_job_gpus_parse("\x1b[31mred\x1b[0m,\xff\xfe,q\"uote\\", &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 3);
	assert_notes_clean(&J);
	assert_true(has_note(&J, "\\x1b[31mred"));
	assert_true(has_note(&J, "\\xff\\xfe"));
	assert_true(has_note(&J, "q\\x22uote\\x5c"));
}

static void test_huge_numbers(void **state)
{
	(void)state;
	const char *big[] = {"1024", "99999", "99999999999999999999", "18446744073709551616",
	                     "2147483648", "0000000000000000000000001"};
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
		ng_job_gpus_parse(big[i], &J);
		assert_int_equal(J.n, 0);
		assert_int_equal(J.n_refused, 1);
		assert_true(has_note(&J, "not a plausible GPU ordinal"));
	}
	ng_job_gpus_parse("1023,0007", &J);
	assert_int_equal(J.n, 2);
	assert_int_equal(J.gpu[0].ordinal, 1023);
	assert_int_equal(J.gpu[1].ordinal, 7);
}

static void test_long_items(void **state)
{
	(void)state;
	char *s = malloc(1 << 20);
	assert_non_null(s);
	memset(s, '7', (1 << 20) - 1);
	s[(1 << 20) - 1] = '\0';
	ng_job_gpus_parse(s, &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 1);
	assert_true(has_note(&J, "longer than any GPU identifier"));
	for (size_t i = 0; i < J.n_notes; i++)
		assert_true(strlen(J.note[i]) < 120);
	free(s);
}

static void test_ten_thousand_entries(void **state)
{
	(void)state;
	char *s = malloc(10000 * 6 + 1);
	assert_non_null(s);
	size_t o = 0;
	for (int i = 0; i < 10000; i++)
		o += (size_t)sprintf(s + o, "%s%d", i ? "," : "", i);
	ng_job_gpus_parse(s, &J);
	assert_int_equal(J.n_items, 10000);
	assert_int_equal(J.n, NG_JOB_GPUS_MAX);
	assert_int_equal(J.n_over_cap, 1024 - NG_JOB_GPUS_MAX);
	assert_int_equal(J.n_refused, 10000 - 1024);
	assert_int_equal(J.n_notes, NG_JOB_GPUS_ITEM_NOTES + 1);
	assert_int_equal(J.notes_dropped, 10000 - 1024 - NG_JOB_GPUS_ITEM_NOTES);
	/* The summary is never crowded out by the items. */
	assert_true(has_note(&J, "768 GPUs beyond the first 256 not checked"));

	/* The same GPU ten thousand times is one GPU. */
	o = 0;
	for (int i = 0; i < 10000; i++)
		o += (size_t)sprintf(s + o, "%s3", i ? "," : "");
	ng_job_gpus_parse(s, &J);
	assert_int_equal(J.n, 1);
	assert_int_equal(J.n_duplicate, 9999);

	/* Ten thousand refused items: notes stay bounded. */
	o = 0;
	for (int i = 0; i < 10000; i++)
		o += (size_t)sprintf(s + o, "%s../x", i ? "," : "");
	ng_job_gpus_parse(s, &J);
	assert_int_equal(J.n, 0);
	assert_int_equal(J.n_refused, 10000);
	assert_int_equal(J.n_notes, NG_JOB_GPUS_ITEM_NOTES);
	assert_int_equal(J.notes_dropped, 10000 - NG_JOB_GPUS_ITEM_NOTES);
	free(s);
}

static void test_range_cap(void **state)
{
	(void)state;
	ng_job_gpus_parse("0-1023", &J);
	assert_int_equal(J.n, NG_JOB_GPUS_MAX);
	assert_int_equal(J.n_over_cap, 1024 - NG_JOB_GPUS_MAX);
	assert_true(has_note(&J, "768 GPUs beyond the first 256 not checked"));
}

static void fill_node(ng_gpu_snapshot *s, size_t n)
{
	memset(s, 0, sizeof *s);
	s->nvml = NG_FIELD_OK;
	s->n_gpus = n;
	for (size_t i = 0; i < n; i++) {
		s->gpu[i].index = (int)i;
		snprintf(s->gpu[i].uuid, sizeof s->gpu[i].uuid, "GPU-%08zx-0000-4000-8000-00000000000%zx",
		         i, i);
	}
}

static void test_resolve(void **state)
{
	(void)state;
	static ng_gpu_snapshot node;
	fill_node(&node, 4);
	bool keep[NG_GPU_MAX];

	ng_job_gpus_parse("1,3", &J);
	assert_int_equal(ng_job_gpus_resolve(&J, &node, keep), 2);
	assert_false(keep[0]);
	assert_true(keep[1]);
	assert_false(keep[2]);
	assert_true(keep[3]);
	assert_int_equal(J.n_notes, 0);

	/* A UUID names the GPU NVML gives it, wherever it is; an ordinal the node
	 * does not have is a note. */
	ng_job_gpus_parse("GPU-00000002-0000-4000-8000-000000000002,7,9", &J);
	assert_int_equal(ng_job_gpus_resolve(&J, &node, keep), 1);
	assert_true(keep[2]);
	assert_false(keep[0]);
	assert_true(has_note(&J, "GPU 7 (and 1 more) not on this node (NVML lists 4 GPUs)"));

	/* Both spellings of one GPU mark it once. */
	ng_job_gpus_parse("2,GPU-00000002-0000-4000-8000-000000000002", &J);
	assert_int_equal(ng_job_gpus_resolve(&J, &node, keep), 1);

	/* An unknown UUID is a note, never a guess. */
	ng_job_gpus_parse(UUID0, &J);
	assert_int_equal(ng_job_gpus_resolve(&J, &node, keep), 0);
	assert_true(has_note(&J, UUID0 " not among this node's GPUs"));

	/* A node with no GPUs. */
	fill_node(&node, 0);
	ng_job_gpus_parse("0,1", &J);
	assert_int_equal(ng_job_gpus_resolve(&J, &node, keep), 0);
	assert_true(has_note(&J, "NVML lists 0 GPUs"));
}

static void test_escape(void **state)
{
	(void)state;
	char out[64];
	ng_job_gpus_escape("abcdef", 6, 3, out, sizeof out);
	assert_string_equal(out, "abc...");
	ng_job_gpus_escape("a\0b", 3, 10, out, sizeof out);
	assert_string_equal(out, "a\\x00b");
	ng_job_gpus_escape("abcdef", 6, 10, out, 4);
	assert_string_equal(out, "abc");
	char big[8];
	ng_job_gpus_escape("\x01\x02\x03", 3, 10, big, sizeof big);
	assert_string_equal(big, "\\x01");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordinals),
		cmocka_unit_test(test_ranges_and_spaces),
		cmocka_unit_test(test_uuids),
		cmocka_unit_test(test_mig),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_paths_and_shell),
		cmocka_unit_test(test_control_bytes_escaped),
		cmocka_unit_test(test_huge_numbers),
		cmocka_unit_test(test_long_items),
		cmocka_unit_test(test_ten_thousand_entries),
		cmocka_unit_test(test_range_cap),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

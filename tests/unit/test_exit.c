/* The exit status of each error class (cli/exit.c): the statuses every
 * verb's --help promises, and a class-less error taking the caller's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/cmd.h"
#include "cli/exit.h"

static void each_class_has_its_status(void **state)
{
	(void)state;
	assert_int_equal(ng_exit_for_class(NG_ERR_USAGE, NG_ERR_UNCLASSIFIED), NG_EXIT_USAGE);
	assert_int_equal(ng_exit_for_class(NG_ERR_INPUT, NG_ERR_STORE), NG_EXIT_USAGE);
	assert_int_equal(ng_exit_for_class(NG_ERR_STORE, NG_ERR_INPUT), NG_EXIT_STORE);
	assert_int_equal(ng_exit_for_class(NG_ERR_LANDING, NG_ERR_STORE), NG_EXIT_NOT_ADMISSIBLE);
	assert_int_equal(ng_exit_for_class(NG_ERR_INTERNAL, NG_ERR_STORE), NG_EXIT_USAGE);
}

static void an_error_keeps_the_class_it_was_failed_with(void **state)
{
	(void)state;
	ng_err err = {0};
	ng_fail_as(&err, NG_ERR_STORE, "disk I/O error");
	/* A layer above adds words: the class stays. */
	ng_fail(&err, "records: %s", "disk I/O error");
	assert_int_equal(ng_exit_for(&err, NG_ERR_INPUT), NG_EXIT_STORE);
	ng_err plain = {0};
	ng_fail(&plain, "no class");
	assert_int_equal(ng_exit_for(&plain, NG_ERR_STORE), NG_EXIT_STORE);
	assert_int_equal(ng_exit_for(&plain, NG_ERR_INPUT), NG_EXIT_USAGE);
	assert_int_equal(ng_exit_for(&plain, NG_ERR_UNCLASSIFIED), NG_EXIT_USAGE);
	assert_int_equal(ng_exit_for(NULL, NG_ERR_LANDING), NG_EXIT_NOT_ADMISSIBLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_class_has_its_status),
		cmocka_unit_test(an_error_keeps_the_class_it_was_failed_with),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

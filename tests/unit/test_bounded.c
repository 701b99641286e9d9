/* collect/bounded.h: work in children under one deadline. A child that
 * hangs is killed at the deadline and holds none of its siblings; what a
 * child wrote comes back; a child that writes too much is cut off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/bounded.h"

/* arg: "hang", "big", "fail" or the text to answer with. */
static void child(int wfd, const void *arg)
{
	const char *what = arg;
	if (strcmp(what, "hang") == 0)
		for (;;)
			pause();
	if (strcmp(what, "fail") == 0)
		_exit(7);
	if (strcmp(what, "big") == 0) {
		char block[4096];
		memset(block, 'x', sizeof block);
		for (int i = 0; i < 64; i++)
			if (ng_write_all(wfd, block, sizeof block) < 0)
				_exit(1);
		return;
	}
	ng_write_all(wfd, what, strlen(what));
}

static void test_one_hang_holds_no_sibling(void **state)
{
	(void)state;
	const void *args[] = {"gpu0", "hang", "gpu2", "fail", "big"};
	ng_bounded b[5];
	double t0 = ng_monotonic_now();
	size_t started = ng_run_bounded_each(t0 + 1.0, 5, child, args, 1024, b);
	double took = ng_monotonic_now() - t0;
	assert_int_equal(started, 5);
	/* One deadline for all: about 1 s, never 1 s per child. */
	assert_true(took >= 0.95 && took < 1.6);
	assert_true(b[0].finished && b[0].reaped && WIFEXITED(b[0].status));
	assert_int_equal(WEXITSTATUS(b[0].status), 0);
	assert_int_equal(b[0].out.len, 4);
	assert_memory_equal(b[0].out.s, "gpu0", 4);
	assert_false(b[1].finished); /* killed at the deadline */
	assert_true(b[1].reaped && WIFSIGNALED(b[1].status) && WTERMSIG(b[1].status) == SIGKILL);
	assert_int_equal(b[1].stuck_pid, 0);
	assert_true(b[2].finished);
	assert_memory_equal(b[2].out.s, "gpu2", 4);
	assert_true(b[3].finished && b[3].reaped && WEXITSTATUS(b[3].status) == 7);
	assert_true(b[4].too_big && !b[4].finished);
	assert_true(b[4].out.len <= 1024);
	for (int i = 0; i < 5; i++)
		ng_strbuf_free(&b[i].out);
}

static void test_answers_end_before_the_deadline(void **state)
{
	(void)state;
	ng_bounded b;
	double t0 = ng_monotonic_now();
	assert_int_equal(ng_run_bounded(t0 + 5.0, child, "done", 1024, &b), 0);
	assert_true(ng_monotonic_now() - t0 < 1.0); /* not the deadline: the child's end */
	assert_true(b.finished && b.reaped);
	assert_memory_equal(b.out.s, "done", 4);
	ng_strbuf_free(&b.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_hang_holds_no_sibling),
		cmocka_unit_test(test_answers_end_before_the_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Landing on Slurm against a stand-in scontrol (tests/standins/fake_scontrol.c)
 * that keeps one node's state in a file: drain and resume, an operator's
 * drain left alone, an unreachable or hung controller, reasons that carry
 * control characters or shell syntax, and an scontrol that says yes and
 * does nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "land/slurm.h"

static char dir[256], state_path[300];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_state(const char *state, const char *reason)
{
	FILE *f = fopen(state_path, "w");
	assert_non_null(f);
	fprintf(f, "name=node1\nstate=%s\nreason=%s\nstar=0\n", state, reason);
	fclose(f);
}

static char *slurp(const char *suffix)
{
	char p[400];
	snprintf(p, sizeof p, "%s%s", state_path, suffix);
	FILE *f = fopen(p, "r");
	if (!f)
		return strdup("");
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strdup(buf);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/ng-test-slurm-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(state_path, sizeof state_path, "%s/node", dir);
	setenv("FAKE_SCONTROL_STATE", state_path, 1);
	unsetenv("FAKE_SCONTROL_UNREACHABLE");
	unsetenv("FAKE_SCONTROL_HANG");
	unsetenv("FAKE_SCONTROL_REFUSE");
	unsetenv("FAKE_SCONTROL_LIE");
	unsetenv("FAKE_SCONTROL_STAR");
	unsetenv("NODEGATE_SCONTROL");
	write_state("IDLE", "");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *sfx[] = {"", ".log", ".calls", ".conf", ".tmp"};
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		char p[400];
		snprintf(p, sizeof p, "%s%s", state_path, sfx[i]);
		unlink(p);
	}
	char marker[300];
	snprintf(marker, sizeof marker, "%s/pwned", dir);
	unlink(marker);
	rmdir(dir);
	return 0;
}

static ng_slurm_opts opts(void)
{
	return (ng_slurm_opts){.scontrol = FAKE_SCONTROL, .node = "node1", .call_timeout_s = 2,
	                       .budget_s = 5, .readback_s = 1};
}

static void drain_sets_reason_and_changes(void **state)
{
	(void)state;
	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, "GPU 1 0000:2a:00 degraded: pcie.width x8 of x16", &r,
	                                &err),
	                 0);
	assert_true(r.changed);
	assert_true(r.acted);
	assert_false(r.left_alone);
	assert_string_equal(r.state_before, "IDLE");
	assert_string_equal(r.state_after, "IDLE+DRAIN");
	assert_string_equal(r.reason_after,
	                    "ng:GPU 1 0000:2a:00 degraded: pcie.width x8 of x16 [nodegate]");
	char *log = slurp(".log");
	assert_non_null(strstr(log, "update\tNodeName=node1\tState=DRAIN\tReason=ng:GPU 1"));
	assert_null(strstr(log, "DOWN"));
	free(log);
	/* Again with the same reason: nothing to do, nothing changed. */
	assert_int_equal(ng_slurm_drain(&o, "ng:GPU 1 0000:2a:00 degraded: pcie.width x8 of "
	                                    "x16 [nodegate]",
	                                &r, &err),
	                 0);
	assert_false(r.changed);
	assert_false(r.acted);
	char *json = ng_slurm_result_json(&r, "land.drain");
	assert_non_null(strstr(json, "\"changed\":false"));
	free(json);
}

static void operator_drain_left_alone(void **state)
{
	(void)state;
	write_state("IDLE+DRAIN", "bad DIMM, ticket 4711");
	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, "GPU 0 fatal", &r, &err), 1);
	assert_true(r.left_alone);
	assert_false(r.acted);
	assert_false(r.changed);
	assert_string_equal(r.reason_before, "bad DIMM, ticket 4711");
	assert_non_null(strstr(r.message, NG_SLURM_OPERATOR_DRAIN));
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 1);
	assert_true(r.left_alone);
	assert_false(r.acted);
	assert_non_null(strstr(r.message, NG_SLURM_OPERATOR_DRAIN));
	char *log = slurp(".log");
	assert_null(strstr(log, "update"));
	free(log);
	char *st = slurp("");
	assert_non_null(strstr(st, "reason=bad DIMM, ticket 4711"));
	free(st);
	/* Down by someone else: the same. */
	write_state("DOWN", "power supply");
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), 1);
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 1);
}

static void resume_of_own_drain(void **state)
{
	(void)state;
	write_state("IDLE+DRAIN", "nodegate: GPU 3 fatal: xid 79");
	setenv("FAKE_SCONTROL_STAR", "2", 1); /* idle* for two reads after RESUME */
	ng_slurm_opts o = opts();
	o.readback_s = 3;
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 0);
	assert_true(r.changed);
	assert_string_equal(r.state_after, "IDLE");
	assert_string_equal(r.reason_after, "");
	/* Another nodegate drain than the one asked about: left alone. */
	write_state("IDLE+DRAIN", "ng:fatal xid79 GPU3 0000:3b:00: xid.79: fell off [nodegate]");
	o.resume_case = 7;
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 1);
	assert_true(r.left_alone);
	/* case 17 is not case 7 */
	write_state("IDLE+DRAIN", "ng:quarantine memory hbm.bw case 17: 1.2 TB/s [nodegate]");
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 1);
	write_state("IDLE+DRAIN", "ng:quarantine memory hbm.bw case 7: 1.2 TB/s [nodegate]");
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 0);
	assert_true(r.changed);
	/* a drain of case 7 set before the short form */
	write_state("IDLE+DRAIN", "nodegate: quarantined case 7: memory hbm.bw");
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 0);
	assert_true(r.changed);
	/* Not drained: nothing to do. */
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 0);
	assert_false(r.changed);
	assert_false(r.acted);
}

static void unreachable_then_succeeds(void **state)
{
	(void)state;
	setenv("FAKE_SCONTROL_UNREACHABLE", "3", 1);
	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, "memory hbm.bw 61% of median", &r, &err), 0);
	assert_true(r.changed);
	assert_true(r.calls >= 6); /* 3 refused + show + update + read-back */
}

static void unreachable_past_budget(void **state)
{
	(void)state;
	setenv("FAKE_SCONTROL_UNREACHABLE", "1000", 1);
	ng_slurm_opts o = opts();
	o.budget_s = 1.5;
	ng_slurm_result r;
	ng_err err;
	double t0 = now_s();
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	double took = now_s() - t0;
	assert_true(took < 4);
	assert_non_null(strstr(err.msg, "Unable to contact slurm controller"));
	assert_non_null(strstr(err.msg, "gave up"));
	assert_false(r.changed);
	assert_true(r.calls >= 2);
}

static void hang_bounded(void **state)
{
	(void)state;
	setenv("FAKE_SCONTROL_HANG", "update", 1);
	ng_slurm_opts o = opts();
	o.call_timeout_s = 0.5;
	o.budget_s = 1.5;
	ng_slurm_result r;
	ng_err err;
	double t0 = now_s();
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	double took = now_s() - t0;
	assert_true(took < 6); /* budget + one timeout + the kill grace, not forever */
	assert_non_null(strstr(err.msg, "did not answer"));
	char *st = slurp("");
	assert_non_null(strstr(st, "state=IDLE\n"));
	free(st);
}

static void refused_fails_clearly(void **state)
{
	(void)state;
	setenv("FAKE_SCONTROL_REFUSE", "1", 1);
	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	double t0 = now_s();
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	assert_true(now_s() - t0 < 2); /* not retried: the controller answered */
	assert_non_null(strstr(err.msg, "permission denied"));
}

static void reasons_sanitized(void **state)
{
	(void)state;
	char out[NG_SLURM_REASON_MAX + 1];
	ng_slurm_sanitize_reason("GPU 0\n\tfatal\x1b[31m red\x7f", out);
	assert_string_equal(out, "ng:GPU 0 fatal [31m red [nodegate]");
	ng_slurm_sanitize_reason("nodegate:   already prefixed", out);
	assert_string_equal(out, "ng:already prefixed [nodegate]");
	ng_slurm_sanitize_reason("ng:fatal ecc GPU0 0000:ba:00: x [nodegate]", out);
	assert_string_equal(out, "ng:fatal ecc GPU0 0000:ba:00: x [nodegate]");
	ng_slurm_sanitize_reason("", out);
	assert_string_equal(out, "ng:no reason given [nodegate]");
	ng_slurm_sanitize_reason("caf\xc3\xa9", out);
	assert_string_equal(out, "ng:caf?? [nodegate]");
	/* what sinfo -R shows: severity, what failed, the GPU */
	ng_slurm_sanitize_reason("fatal ecc GPU0 0000:ba:00: ecc.volatile_uncorrected: 3 errors", out);
	assert_int_equal(strncmp(out, "ng:fatal ecc GPU0 00", 20), 0);
	/* ours: both marks, or the older prefix; never an operator's look-alike */
	assert_true(ng_slurm_reason_ours(out));
	assert_true(ng_slurm_reason_ours("nodegate: GPU 3 fatal: xid 79"));
	assert_false(ng_slurm_reason_ours("ng: bad fan, call Bob"));
	assert_false(ng_slurm_reason_ours("[nodegate] said so"));
	assert_false(ng_slurm_reason_ours("Epilog error"));
	assert_false(ng_slurm_reason_ours(""));
	char big[1000];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ng_slurm_sanitize_reason(big, out);
	assert_int_equal(strlen(out), NG_SLURM_REASON_MAX);
	/* cut before the mark, so a cut reason is still nodegate's */
	assert_string_equal(out + NG_SLURM_REASON_MAX - 14, "... [nodegate]");
	assert_true(ng_slurm_reason_ours(out));

	/* Shell syntax travels as one argv element and is never run. */
	char evil[700];
	snprintf(evil, sizeof evil, "$(touch %s/pwned); `touch %s/pwned` | rm -rf / ; \"q\" 'q'", dir,
	         dir);
	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, evil, &r, &err), 0);
	char marker[300];
	snprintf(marker, sizeof marker, "%s/pwned", dir);
	assert_int_not_equal(access(marker, F_OK), 0);
	char want[800];
	snprintf(want, sizeof want, "Reason=ng:%s [nodegate]\n", evil);
	char *log = slurp(".log");
	assert_non_null(strstr(log, want));
	free(log);
	assert_true(strncmp(r.reason_after, "ng:$(touch", 10) == 0);

	/* A node name that is a list or carries spaces is refused. */
	const char *bad[] = {"node[1-4]", "a,b", "node1 State=RESUME", "-x", ""};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		o.node = bad[i];
		if (!*bad[i])
			continue;
		assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	}
}

static void scontrol_lies(void **state)
{
	(void)state;
	setenv("FAKE_SCONTROL_LIE", "1", 1);
	ng_slurm_opts o = opts();
	o.readback_s = 0.5;
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	assert_true(r.acted);
	assert_false(r.changed);
	assert_string_equal(r.state_after, "IDLE");
	assert_non_null(strstr(err.msg, "not drained"));
	write_state("IDLE+DRAIN", "nodegate: x");
	assert_int_equal(ng_slurm_resume(&o, &r, &err), -1);
	assert_false(r.changed);
	assert_non_null(strstr(err.msg, "not resumed"));
}

static void node_name_and_conf(void **state)
{
	(void)state;
	ng_slurm_opts o = opts();
	o.node = NULL;
	o.slurm_conf = "/etc/slurm-test/slurm.conf";
	setenv("SLURMD_NODENAME", "node1", 1);
	unsetenv("SLURM_CONF");
	ng_slurm_result r;
	ng_err err;
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), 0);
	assert_string_equal(r.node, "node1");
	char *conf = slurp(".conf");
	assert_string_equal(conf, "/etc/slurm-test/slurm.conf\n");
	free(conf);
	assert_null(getenv("SLURM_CONF")); /* only for the call */
	unsetenv("SLURMD_NODENAME");
	/* Unknown node: a clear failure. */
	o.node = "node2";
	o.budget_s = 0.3;
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	assert_non_null(strstr(err.msg, "node2"));
	/* No scontrol at all. */
	o.node = "node1";
	o.scontrol = "/nonexistent/scontrol";
	assert_int_equal(ng_slurm_drain(&o, "x", &r, &err), -1);
	assert_non_null(strstr(err.msg, "cannot run"));
}

static void parse_forms(void **state)
{
	(void)state;
	char st[64], rs[256];
	assert_int_equal(ng_slurm_parse_node("NodeName=n1 State=MIXED+DRAIN Weight=1 Reason=Epilog "
	                                     "error [root@2026-01-01T00:00:00]\n",
	                                     st, sizeof st, rs, sizeof rs),
	                 0);
	assert_string_equal(st, "MIXED+DRAIN");
	assert_string_equal(rs, "Epilog error");
	assert_true(ng_slurm_state_drain(st));
	assert_int_equal(ng_slurm_parse_node("NodeName=n1\n   State=IDLE ThreadsPerCore=1\n   "
	                                     "Reason=a [b] c=d [slurm@2026-01-01T00:00:00] "
	                                     "Comment=x\n",
	                                     st, sizeof st, rs, sizeof rs),
	                 0);
	assert_string_equal(rs, "a [b] c=d");
	assert_int_equal(ng_slurm_parse_node("NodeName=n1 State=IDLE*", st, sizeof st, rs, sizeof rs),
	                 0);
	assert_true(ng_slurm_state_not_responding(st));
	assert_false(ng_slurm_state_drain(st));
	assert_string_equal(rs, "");
	assert_true(ng_slurm_state_drain("drained"));
	assert_true(ng_slurm_state_drain("draining"));
	assert_true(ng_slurm_state_down("DOWN+NOT_RESPONDING"));
	assert_true(ng_slurm_state_not_responding("DOWN+NOT_RESPONDING"));
	assert_false(ng_slurm_state_drain("IDLE"));
	assert_int_equal(ng_slurm_parse_node("Node n1 not found", st, sizeof st, rs, sizeof rs), -1);
	assert_int_equal(ng_slurm_parse_node("NodeName=n1 MyState=IDLE", st, sizeof st, rs, sizeof rs),
	                 -1);
}

/* What the store says of the node's newest GPU check, for the callback. */
struct last_check {
	const char *mode;
	bool drained;
	long long at;
	int asked;
};

static bool last_check_says(const char *reason, long long stamp, void *arg)
{
	struct last_check *l = arg;
	l->asked++;
	return ng_slurm_hook_drain_is_ours(reason, stamp, l->mode, l->drained, l->at);
}

/* Slurm's own "Epilog error" drain right after nodegate's epilog exited 1
 * there is nodegate's: its reason replaces Slurm's. Any other: left alone. */
static void hook_drain_after_our_epilog(void **state)
{
	(void)state;
	long long stamp = 0;
	assert_int_equal(ng_slurm_parse_stamp("NodeName=n1 State=IDLE+DRAIN Reason=Epilog error "
	                                      "[slurm@2026-01-01T00:00:00]",
	                                      &stamp),
	                 0);
	assert_true(stamp > 0);
	assert_int_equal(ng_slurm_parse_stamp("State=IDLE Reason=x", &stamp), -1);
	assert_int_equal(ng_slurm_parse_stamp("State=IDLE Reason=a [root@soon]", &stamp), -1);
	assert_int_equal(ng_slurm_parse_stamp("NodeName=n1 State=IDLE+DRAIN Reason=Epilog error "
	                                      "[slurm@2026-01-01T00:00:00]",
	                                      &stamp),
	                 0);
	/* the rule alone */
	assert_true(ng_slurm_hook_drain_is_ours("Epilog error", stamp, "epilog", true, stamp - 5));
	assert_false(ng_slurm_hook_drain_is_ours("Epilog error", stamp, "epilog", false, stamp - 5));
	assert_false(ng_slurm_hook_drain_is_ours("Epilog error", stamp, "prolog", true, stamp - 5));
	assert_true(ng_slurm_hook_drain_is_ours("Prolog error", stamp, "prolog", true, stamp - 5));
	assert_false(ng_slurm_hook_drain_is_ours("Epilog error", stamp, "epilog", true,
	                                         stamp - NG_SLURM_HOOK_DRAIN_WINDOW_S - 1));
	assert_false(ng_slurm_hook_drain_is_ours("Epilog error", stamp, "epilog", true, stamp + 60));
	assert_false(ng_slurm_hook_drain_is_ours("Kill task failed", stamp, "epilog", true, stamp));
	assert_false(ng_slurm_hook_drain_is_ours("Epilog error", 0, "epilog", true, stamp));

	ng_slurm_opts o = opts();
	ng_slurm_result r;
	ng_err err;
	struct last_check l = {"epilog", true, stamp - 5, 0};
	o.hook_drain_ours = last_check_says;
	o.hook_arg = &l;
	write_state("IDLE+DRAIN", "Epilog error");
	assert_int_equal(ng_slurm_drain(&o, "fatal ecc GPU0 0000:18:00: x", &r, &err), 0);
	assert_true(r.hook_drain);
	assert_false(r.left_alone);
	assert_int_equal(l.asked, 1);
	assert_string_equal(r.reason_after, "ng:fatal ecc GPU0 0000:18:00: x [nodegate]");
	/* the last check passed: an Epilog error then is not nodegate's */
	struct last_check passed = {"epilog", false, stamp - 5, 0};
	o.hook_arg = &passed;
	write_state("IDLE+DRAIN", "Epilog error");
	assert_int_equal(ng_slurm_drain(&o, "fatal ecc GPU0", &r, &err), 1);
	assert_true(r.left_alone);
	assert_false(r.hook_drain);
	assert_int_equal(ng_slurm_resume(&o, &r, &err), 1);
	/* an operator's reason is never even asked about */
	passed.asked = 0;
	write_state("IDLE+DRAIN", "reseat GPU 2");
	assert_int_equal(ng_slurm_drain(&o, "fatal ecc GPU0", &r, &err), 1);
	assert_int_equal(passed.asked, 0);
	/* no callback: Slurm's own drain is an operator's */
	o.hook_drain_ours = NULL;
	write_state("IDLE+DRAIN", "Epilog error");
	assert_int_equal(ng_slurm_drain(&o, "fatal ecc GPU0", &r, &err), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(drain_sets_reason_and_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(operator_drain_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(resume_of_own_drain, setup, teardown),
		cmocka_unit_test_setup_teardown(unreachable_then_succeeds, setup, teardown),
		cmocka_unit_test_setup_teardown(unreachable_past_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(hang_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_fails_clearly, setup, teardown),
		cmocka_unit_test_setup_teardown(reasons_sanitized, setup, teardown),
		cmocka_unit_test_setup_teardown(scontrol_lies, setup, teardown),
		cmocka_unit_test_setup_teardown(node_name_and_conf, setup, teardown),
		cmocka_unit_test(parse_forms),
		cmocka_unit_test_setup_teardown(hook_drain_after_our_epilog, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

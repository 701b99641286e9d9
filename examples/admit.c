/* An admission and a gate decision through libnodegate's public header alone.
 *
 *   cc admit.c $(pkg-config --cflags --libs nodegate) -o admit
 *   ./admit STORE.db
 *
 * Twelve healthy nodes of one class are admitted from their records: the
 * first ten while the class establishes its baseline (admitted with a
 * warning, each run joining the baseline), the last two against the
 * baseline the ten made (admitted); then a node whose storage reads 20% slow, on
 * its first run and again on its confirmation, is quarantined with a case.
 * Its release is refused until the failed test has passed again, and then
 * made by hand, naming who and why; the node is on probation.
 * Last, one record is judged against a class baseline by the gate alone.
 * Prints one line per decision; exits 0 when every decision is the one
 * expected, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nodegate/nodegate.h>

#define NOW 1790000000 /* every decision at one fixed time */

static int64_t fixed_clock(void *arg)
{
	(void)arg;
	return NOW;
}

/* One node's records: storage and CPU runs, nine samples each around the
 * given medians. */
static void records(char *out, size_t cap, const char *node, double storage, double cpu)
{
	static const double spread[9] = {0.99, 1.0, 1.01, 0.995, 1.0, 1.005, 0.998, 1.0, 1.002};
	size_t n = (size_t)snprintf(out, cap, "[");
	const char *metric[2] = {"storage.seqread.gbps", "cpu.fp64.gflops"};
	const char *domain[2] = {"storage", "compute"}, *unit[2] = {"GB/s", "units/s"};
	double median[2] = {storage, cpu};
	for (int m = 0; m < 2 && n < cap; m++) {
		n += (size_t)snprintf(out + n, cap - n,
		                      "%s{\"schema\": \"nodegate/record/1\", \"node\": \"%s\", "
		                      "\"class\": \"example-class\", \"software\": \"sw-example\", "
		                      "\"domain\": \"%s\", \"metric\": \"%s\", \"unit\": \"%s\", "
		                      "\"wrong\": 0, \"samples\": [",
		                      m ? ", " : "", node, domain[m], metric[m], unit[m]);
		for (int i = 0; i < 9 && n < cap; i++)
			n += (size_t)snprintf(out + n, cap - n, "%s%.4f", i ? ", " : "", median[m] * spread[i]);
		n += (size_t)snprintf(out + n, cap - n, "]}");
	}
	if (n < cap)
		snprintf(out + n, cap - n, "]");
}

static void note(void *arg, const char *verb, const char *message)
{
	(void)arg;
	fprintf(stderr, "%s: note: %s\n", verb, message);
}

/* Admits one node; prints "NODE OUTCOME"; 0 when the outcome is want. */
static int admit(nodegate_ctx *ctx, const char *node, double storage, const char *confirm_of,
                 const char *want)
{
	char first[8192], confirm[8192];
	records(first, sizeof first, node, storage, 980.0);
	if (confirm_of)
		records(confirm, sizeof confirm, node, storage, 980.0);
	nodegate_admission *a;
	nodegate_error err;
	if (nodegate_admit_records(ctx, first, confirm_of ? confirm : NULL, &a, &err) < 0) {
		fprintf(stderr, "admit %s: %s error: %s\n", node, nodegate_error_class_name(err.code),
		        err.message);
		return 1;
	}
	const char *outcome = nodegate_admission_outcome(a);
	printf("%s %s", node, outcome);
	if (nodegate_admission_case(a))
		printf(" (case %lld)", (long long)nodegate_admission_case(a));
	printf(" exit %d\n", nodegate_admission_exit_status(a));
	int rc = strcmp(outcome, want) != 0;
	char *json;
	if (!rc && nodegate_admission_json(a, &json, &err) == 0) {
		rc = strstr(json, "\"schema\":\"nodegate/admission/1\"") == NULL;
		nodegate_free(json);
	}
	nodegate_admission_release(a);
	return rc;
}

/* Releases node; prints "release NODE STATE"; 0 when the state is want. */
static int release(nodegate_ctx *ctx, const char *node, int manual, nodegate_release_state want)
{
	static const char *const names[] = {"released", "no-case", "not-yet", "lemon"};
	nodegate_release_request req = {.node = node};
	if (manual) {
		req.manual = 1;
		req.by = "example-admin";
		req.reason = "storage controller replaced";
	}
	nodegate_release_result r;
	nodegate_error err;
	if (nodegate_release(ctx, &req, &r, &err) < 0) {
		fprintf(stderr, "release %s: %s error: %s\n", node, nodegate_error_class_name(err.code),
		        err.message);
		return 1;
	}
	printf("release %s %s", node, names[r.state]);
	if (r.case_id)
		printf(" (case %lld, %lld of %ld passes)", (long long)r.case_id, (long long)r.passes,
		       r.passes_needed);
	if (r.state == NODEGATE_RELEASED)
		printf(": %s", r.reason);
	printf("\n");
	return r.state != want;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s STORE\n", argv[0]);
		return 2;
	}
	printf("libnodegate %s (header %s)\n", nodegate_version(), NODEGATE_VERSION_STRING);
	nodegate_ctx *ctx = nodegate_ctx_new();
	nodegate_error err;
	if (!ctx)
		return 1;
	nodegate_ctx_set_clock(ctx, fixed_clock, NULL);
	nodegate_ctx_set_note(ctx, note, NULL);
	nodegate_ctx_set_actor(ctx, "example");
	/* A class of ten nodes has a baseline; none smaller does. */
	const char *policy = "{\"admission\": {\"min_baseline_nodes\": 10, "
	                     "\"small_class_min_nodes\": 0}}";
	if (nodegate_ctx_policy_json(ctx, policy, &err) < 0 ||
	    nodegate_ctx_open_store(ctx, argv[1], &err) < 0) {
		fprintf(stderr, "%s error: %s\n", nodegate_error_class_name(err.code), err.message);
		nodegate_ctx_free(ctx);
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < 12; i++) {
		char node[32];
		snprintf(node, sizeof node, "node%02d", i);
		bad += admit(ctx, node, 6.0, NULL, i < 10 ? "admitted-warn" : "admitted");
	}
	bad += admit(ctx, "node-slow", 4.8, "confirm", "quarantined");
	/* A reboot alone never releases a node: the failed test must pass again,
	 * or an administrator decides, by name and with a reason. */
	bad += release(ctx, "node-slow", 0, NODEGATE_RELEASE_NOT_YET);
	bad += release(ctx, "node-slow", 1, NODEGATE_RELEASED);
	bad += release(ctx, "node-slow", 0, NODEGATE_RELEASE_NO_CASE);
	/* A manual release must say who decided it: refused as a usage error. */
	nodegate_release_request anon = {.node = "node-slow", .manual = 1};
	nodegate_release_result rr;
	if (nodegate_release(ctx, &anon, &rr, &err) == 0 || err.code != NODEGATE_ERR_USAGE)
		bad++;

	/* Records to verdicts: the gate on one record, 12% under its baseline. */
	const char *rec = "{\"schema\": \"nodegate/record/1\", \"class\": \"example-class\", "
	                  "\"metric\": \"storage.seqread.gbps\", \"domain\": \"storage\", \"wrong\": 0, "
	                  "\"samples\": [5.28, 5.27, 5.29, 5.28, 5.28]}";
	const char *base = "{\"schema\": \"nodegate/baseline/1\", \"class\": \"example-class\", "
	                   "\"metric\": \"storage.seqread.gbps\", \"median\": 6.0, \"cv\": 0.01}";
	nodegate_verdict v;
	if (nodegate_gate(ctx, rec, base, NULL, 0, &v, &err) < 0) {
		fprintf(stderr, "gate: %s error: %s\n", nodegate_error_class_name(err.code), err.message);
		bad++;
	} else {
		printf("gate %s (%s)\n", v.verdict, v.admissible ? "admissible" : "not admissible");
		bad += v.admissible != 0;
	}
	/* A record that is not JSON is an input error, never a verdict. */
	if (nodegate_gate(ctx, "{\"samples\": [1,", base, NULL, 0, &v, &err) == 0 ||
	    err.code != NODEGATE_ERR_INPUT)
		bad++;
	else
		printf("gate refused: %s error\n", nodegate_error_class_name(err.code));
	nodegate_ctx_free(ctx);
	printf("%s\n", bad ? "UNEXPECTED" : "ok");
	return bad != 0;
}

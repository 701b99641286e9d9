/* nodegate-fleetsim: score nodegate's admission policy against the rules
 * other tools use, on one seeded synthetic fleet (docs/fleet-simulator.md).
 *
 *   nodegate-fleetsim [--nodes N] [--runs N] [--seed S] [--policy FILE] [--clear-after RUNS]
 *                     [--scenario NAME|list] [--only NAME]
 *                     [--floors F] [--regression-drop F] [--degraded-drop F]
 *                     [--trace FILE] [--json FILE] [--check]
 *
 * --floors gives every contestant the workload's floor at F x the SKU
 * reference (default 0: none, as nodegate's policy ships); --regression-drop
 * and --degraded-drop set the fleet-wide regression's and the degraded
 * class's drop; --scenario applies one of the standard scenarios first
 * (`--scenario list` names them); --only runs one contestant.
 * Prints the table; --policy applies a nodegate policy document over the
 * defaults for the nodegate contestant (its floors stay 0.75 x reference);
 * --clear-after has an operator run `nodegate fleet clear` on a breaker's
 * event that many runs after it opened (default 0: nobody does); --trace
 * writes why nodegate quarantined each node it did (and every unmeasured run a
 * contestant admitted, and each node fault a contestant let through, with its
 * kind, size, metric and onset); --json writes it with the fleet's spec and seed;
 * --check also prints the targets for nodegate and exits 1 when one
 * is missed. Exit 2: a usage error; 3: the simulation failed. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#include "core/atomic_file.h"

static int fraction(const char *opt, const char *arg, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v < 1)) {
		fprintf(stderr, "nodegate-fleetsim: %s wants a fraction from 0 to under 1, not \"%s\"\n",
		        opt, arg);
		return -1;
	}
	*out = v;
	return 0;
}

static int number(const char *opt, const char *arg, unsigned long long lo, unsigned long long hi,
                  unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "nodegate-fleetsim: %s wants a whole number from %llu to %llu, not \"%s\"\n",
		        opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long nodes = 2000, runs = 30, seed = 20261130, clear_after = 0;
	const char *json = NULL, *policy = NULL, *trace = NULL, *scenario = "today", *only = NULL;
	bool check = false;
	double floors = 0, regression_drop = -1, degraded_drop = -1;
	static const struct option longopts[] = {
		{"nodes", required_argument, NULL, 'n'}, {"runs", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},  {"json", required_argument, NULL, 'j'},
		{"check", no_argument, NULL, 'c'},       {"help", no_argument, NULL, 'h'},
		{"policy", required_argument, NULL, 'p'},
		{"clear-after", required_argument, NULL, 'a'},
		{"trace", required_argument, NULL, 't'},
		{"floors", required_argument, NULL, 'f'},
		{"scenario", required_argument, NULL, 'S'},
		{"only", required_argument, NULL, 'o'},
		{"regression-drop", required_argument, NULL, 'g'},
		{"degraded-drop", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int rc = 0;
		switch (c) {
		case 'n': rc = number("--nodes", optarg, 20, 1000000, &nodes); break;
		case 'r': rc = number("--runs", optarg, 10, 3650, &runs); break;
		case 's': rc = number("--seed", optarg, 0, UINT64_MAX, &seed); break;
		case 'j': json = optarg; break;
		case 'c': check = true; break;
		case 'p': policy = optarg; break;
		case 't': trace = optarg; break;
		case 'a': rc = number("--clear-after", optarg, 0, 3650, &clear_after); break;
		case 'f': rc = fraction("--floors", optarg, &floors); break;
		case 'S': scenario = optarg; break;
		case 'o': only = optarg; break;
		case 'g': rc = fraction("--regression-drop", optarg, &regression_drop); break;
		case 'd': rc = fraction("--degraded-drop", optarg, &degraded_drop); break;
		case 'h':
			printf("usage: nodegate-fleetsim [--nodes N] [--runs N] [--seed S] [--json FILE] "
			       "[--policy FILE] [--clear-after RUNS] [--floors F] [--regression-drop F]\n"
			       "                         [--degraded-drop F] [--scenario NAME|list] [--only NAME]\n"
			       "                         [--trace FILE] [--check]\n");
			return 0;
		default: return 2;
		}
		if (rc < 0)
			return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "nodegate-fleetsim: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (strcmp(scenario, "list") == 0) {
		ng_sim_scenarios_print(stdout);
		return 0;
	}
	static ng_fleet_spec spec; /* large (its classes); one per process */
	ng_fleet_spec_default(&spec, (size_t)nodes, (size_t)runs, (uint64_t)seed);
	if (ng_sim_scenario(scenario, &spec, &floors) < 0) {
		fprintf(stderr, "nodegate-fleetsim: no scenario \"%s\" (--scenario list names them)\n",
		        scenario);
		return 2;
	}
	if (regression_drop >= 0)
		spec.regression_drop = regression_drop;
	if (degraded_drop >= 0)
		spec.degraded_drop = degraded_drop;
	char why[160];
	if (ng_fleet_init(&spec, why, sizeof why) < 0) {
		fprintf(stderr, "nodegate-fleetsim: %s\n", why);
		return 2;
	}
	static const ng_sim_contestant *all[] = {
		&ng_sim_dcgm, &ng_sim_aznhc, &ng_sim_superbench, &ng_sim_sigma, &ng_sim_nodegate,
	};
	size_t n_all = sizeof all / sizeof all[0];
	if (only) {
		size_t k = 0;
		while (k < n_all && strcmp(all[k]->name, only) != 0)
			k++;
		if (k == n_all) {
			fprintf(stderr, "nodegate-fleetsim: --only %s: no such contestant\n", only);
			return 2;
		}
		all[0] = all[k];
		n_all = 1;
	}
	cJSON *pol = NULL;
	if (policy) {
		FILE *fp = fopen(policy, "r");
		char buf[65536];
		size_t len = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
		if (fp)
			fclose(fp);
		buf[len] = '\0';
		if (!fp || !(pol = cJSON_Parse(buf)) || !cJSON_IsObject(pol)) {
			fprintf(stderr, "nodegate-fleetsim: --policy %s: %s\n", policy,
			        fp ? "not a JSON object (a nodegate policy document)" : "cannot read it");
			cJSON_Delete(pol);
			return 2;
		}
	}
	FILE *tr = NULL;
	ng_atomic_file tr_file;
	ng_err err;
	if (trace && !(tr = ng_atomic_fopen(&tr_file, trace, 0644, &err))) {
		fprintf(stderr, "nodegate-fleetsim: --trace: %s\n", err.msg);
		cJSON_Delete(pol);
		return 2;
	}
	ng_sim_result res;
	int rc = ng_sim_run(&spec, all, n_all, pol, (size_t)clear_after, floors,
	                    tr, &res);
	cJSON_Delete(pol);
	if (tr && ng_atomic_fclose(&tr_file, tr, rc == 0, &err) < 0 && rc == 0) {
		fprintf(stderr, "nodegate-fleetsim: --trace: %s\n", err.msg);
		rc = -1;
	}
	snprintf(res.policy, sizeof res.policy, "%s", policy ? policy : "");
	snprintf(res.scenario, sizeof res.scenario, "%s", scenario);
	if (rc < 0)
		return 3;
	ng_sim_print_table(stdout, &spec, &res);
	if (json && ng_sim_write_json(json, &spec, &res) < 0)
		return 3;
	int misses = 0;
	if (check) {
		printf("\n");
		misses = ng_sim_check_targets(stdout, &res);
	}
	return misses ? 1 : 0;
}

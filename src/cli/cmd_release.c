/* nodegate release: closes a node's quarantine case once its release
 * condition holds, or by an administrator's named decision. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "flow/lemon.h"
#include "land/kube.h"
#include "land/slurm.h"
#include "store/probation.h"

static int exec_release(struct ng_cli *cli, int argc, char **argv);

enum { OPT_MANUAL = 256, OPT_LAND, OPT_NODE, OPT_FORCE };

static const struct ng_opt release_opts[] = {
	{"manual", OPT_MANUAL, NULL, "release without the passing runs (needs --by and --reason)"},
	{"force", OPT_FORCE, NULL, "release a lemon (needs --by and --reason)"},
	{"by", 'b', "NAME", "who releases (default: the invoking user, $SUDO_USER first)"},
	{"reason", 'r', "TEXT", "why, kept with the case"},
	{"land", OPT_LAND, "slurm|kube|none", "kube: taint the node nodegate.io/probation=case-N\n"
	 "(canary workloads tolerate it), lift the quarantine's taint\n"
	 "and uncordon nodegate's own cordon (`nodegate kube probation`).\n"
	 "slurm: once the case is closed, resume the node through\n"
	 "scontrol, only if nodegate drained it for this case (its\n"
	 "reason \"ng:quarantine ... case N: ... [nodegate]\"); an\n"
	 "operator's drain or another check's is left alone. Audited\n"
	 "as land.resume. Default none"},
	{"node", OPT_NODE, "NAME", "the Slurm node name, when not the case's scheduler name"},
	NG_OPT_STORE,
	NG_OPT_JSON("the closed case as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_release_entry = {
	.name = "release",
	.usage = "NODE [--by NAME] [--reason TEXT] [--land slurm|kube|none] [--store S] [--json]\n"
	         "       nodegate release NODE --manual --by NAME --reason TEXT [--store S] [--json]\n"
	         "       nodegate release NODE --force --by NAME --reason TEXT [--manual] ...",
	.summary = "Release a quarantined node to probation once the failed test has passed again.",
	.help =
	"A quarantined node is released when the test that failed has passed again\n"
	"admission.release_passes times (default 2) since its case opened: each later\n"
	"`nodegate admit` run of the node counts a run, and a pass when the failed\n"
	"metric passed. Until then release refuses and says what is missing. A reboot\n"
	"alone never releases a node.\n"
	"\n"
	"A released node is on probation, not in service: the next job that runs on it\n"
	"(or the canary job, policy quarantine.canary_job) is watched by the epilog.\n"
	"A clean epilog, no new Xid and a runtime that is not a straggler, neither\n"
	"against its gang peers in the same job (a step it ran alone, from sacct) nor\n"
	"against the job's earlier runs elsewhere, return it to admitted; a failure\n"
	"opens the case again, as a retry (docs/admission.md, \"Probation\").\n"
	"\n"
	"A lemon (quarantined quarantine.lemon_count times within lemon_days, default 3\n"
	"in 30, as a node or as one GPU by its UUID) is never released this way:\n"
	"release refuses and says what the evidence supports replacing. After the\n"
	"repair, --force with --by and --reason releases it, audited as such.\n"
	"\n"
	"NODE is the node's stable id or its scheduler name (SLURMD_NODENAME, the short\n"
	"host name); a name that two nodes have had is refused, listing both ids.\n"
	"\n"
	"--manual is the administrator-led release, e.g. after a longer diagnostic or a\n"
	"repair (a replaced GPU, a reseated cable): it needs --by and --reason, and the\n"
	"case and the audit log keep both. Prefer re-running the failed test: a manual\n"
	"release admits a node nothing has measured since it failed.\n",
	.opts = release_opts,
	.help_tail =
	"Exit status: 0 released to probation; 1 not released (no open case, the condition\n"
	"does not hold yet, or a lemon without --force); 2 usage error; 3 the store could\n"
	"not be opened, read or written.\n",
	.exec = exec_release,
};

/* --land slurm: resumes the node, only from this case's drain (land/slurm.h
 * never resumes an operator's). The case stays closed whatever happens;
 * what happened is audited (land.resume) and returned as JSON. A failed
 * resume is said on standard error; *rc becomes NG_EXIT_STORE only when the
 * audit entry cannot be written. */
static cJSON *resume_node(ng_store *st, const ng_store_case *c, const char *node, const char *by,
                          int64_t now, int *rc)
{
	ng_slurm_opts o = {.node = node, .resume_case = c->id};
	ng_slurm_result res;
	ng_err lerr = {0}, err;
	int lrc = ng_slurm_resume(&o, &res, &lerr);
	char *text = ng_slurm_result_json(&res, "resume");
	cJSON *d = text ? cJSON_Parse(text) : NULL;
	free(text);
	if (!d)
		d = cJSON_CreateObject();
	cJSON_AddNumberToObject(d, "case", (double)c->id);
	cJSON_AddStringToObject(d, "result", lrc == 0 ? "done" : lrc == 1 ? "left-alone" : "failed");
	if (lrc < 0) {
		cJSON_ReplaceItemInObject(d, "message", cJSON_CreateString(lerr.msg));
		fprintf(stderr, "nodegate release: the case is closed, but the node was not resumed: "
		                "%s\n",
		        lerr.msg);
	} else if (lrc == 1) {
		fprintf(stderr, "nodegate release: the case is closed; the node is left drained: %s\n",
		        res.message);
	}
	char *detail = cJSON_PrintUnformatted(d);
	char subject[160];
	snprintf(subject, sizeof subject, "node:%s", c->node);
	if (!detail || ng_store_audit(st, false, now, by, "land.resume", subject, detail, &err) < 0) {
		fprintf(stderr, "nodegate release: audit entry for the resume not written: %s\n",
		        detail ? err.msg : "out of memory");
		*rc = NG_EXIT_STORE;
	}
	cJSON_free(detail);
	return d;
}

static int exec_release(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_release_entry;
	const char *spec = NULL, *by = NULL, *reason = NULL;
	bool manual = false, json = false, land_slurm = false, force = false, land_kube = false;
	const char *land_node = NULL;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_release_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case OPT_MANUAL: manual = true; break;
		case OPT_FORCE: force = true; break;
		case OPT_LAND:
			if (strcmp(op.arg, "slurm") != 0 && strcmp(op.arg, "kube") != 0 &&
			    strcmp(op.arg, "none") != 0)
				return ng_cmd_usage_error(e, "--land takes slurm, kube or none");
			land_slurm = strcmp(op.arg, "slurm") == 0;
			land_kube = strcmp(op.arg, "kube") == 0;
			break;
		case OPT_NODE: land_node = op.arg; break;
		case 'b': by = op.arg; break;
		case 'r': reason = op.arg; break;
		case 's': spec = op.arg; break;
		case 'j': json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (argc - optind != 1)
		return ng_cmd_usage_error(e, "name one NODE to release");
	const char *node = argv[optind];
	ng_store_case c0;
	if (manual && (!by || !*by || !reason || !*reason))
		return ng_cmd_usage_error(e, "--manual needs --by NAME and --reason TEXT: a release "
		                             "without passing runs must say who decided it and why");
	if (force && (!by || !*by || !reason || !*reason))
		return ng_cmd_usage_error(e, "--force needs --by NAME and --reason TEXT: releasing a "
		                             "lemon must say who decided it and why");
	if (by && (!*by || strlen(by) >= sizeof c0.closed_by))
		return ng_cmd_usage_error(e, "--by must be 1 to %zu characters", sizeof c0.closed_by - 1);
	/* The reason is kept with a prefix saying how the case was released. */
	if (reason && (!*reason || strlen(reason) > 200))
		return ng_cmd_usage_error(e, "--reason must be 1 to 200 characters");
	if (!by)
		by = ng_actor();

	ng_store *st = ng_cli_open_existing_store(cli, e, spec);
	if (!st)
		return NG_EXIT_STORE;
	ng_err err;
	int rc = NG_EXIT_OK;
	/* NODE is the stable id or the scheduler name; the case is the id's. */
	ng_store_node_ref ref;
	int bad = ng_cli_resolve_node(st, e, argv[optind], &ref);
	if (bad) {
		ng_store_close(st);
		return bad;
	}
	node = ref.id;
	int r = ng_store_open_case_of(st, node, &c0, &err);
	if (r < 0) {
		ng_store_close(st);
		return ng_cli_store_error(e, &err);
	}
	if (r == 0) {
		ng_store_close(st);
		fprintf(stderr, "nodegate release: node %s is not quarantined (it has no open case): "
		                "nothing to release\n",
		        argv[optind]);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	long needed = cli->policy.release_passes;
	char opened[32];
	ng_format_time(c0.opened_at, opened);
	char why[256];
	if (manual) {
		snprintf(why, sizeof why, "manual release: %s", reason);
	} else if (c0.passes >= needed) {
		snprintf(why, sizeof why, "%" PRId64 " passing run%s of %s since %s%s%s", c0.passes,
		         c0.passes == 1 ? "" : "s", c0.metric, opened, reason ? "; " : "",
		         reason ? reason : "");
	} else {
		char word[NG_SHELL_WORD_MAX];
		fprintf(stderr,
		        "nodegate release: case %" PRId64 " needs %ld passing run%s of %s %s since %s; "
		        "it has %" PRId64 " (%" PRId64 " run%s). A reboot alone never releases a node.\n"
		        "Run the failed test again with `nodegate admit`, or, after a repair or a longer "
		        "diagnostic,\nrelease it by hand: nodegate release %s --manual --by NAME "
		        "--reason TEXT\n",
		        c0.id, needed, needed == 1 ? "" : "s", c0.domain, c0.metric, opened, c0.passes,
		        c0.retries, c0.retries == 1 ? "" : "s", ng_cli_shell_word(node, word));
		ng_store_case_free(&c0);
		ng_store_close(st);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	int64_t now = ng_now();
	ng_lemon_verdict lemon;
	if (ng_lemon_of(st, &cli->policy, node, now, &lemon, &err) < 0) {
		ng_store_case_free(&c0);
		ng_store_close(st);
		return ng_cli_store_error(e, &err);
	}
	if (lemon.lemon && !force) {
		char word[NG_SHELL_WORD_MAX];
		fprintf(stderr,
		        "nodegate release: node %s is a lemon: %s. It is never released automatically.\n"
		        "Evidence: %s.\nAfter the repair: nodegate release %s --force --by NAME "
		        "--reason TEXT\n",
		        argv[optind], lemon.why, lemon.replace, ng_cli_shell_word(node, word));
		ng_store_case_free(&c0);
		ng_store_close(st);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	char detail[640] = "";
	if (lemon.lemon) {
		cJSON *d = cJSON_CreateObject();
		cJSON_AddBoolToObject(d, "forced", true);
		cJSON_AddStringToObject(d, "lemon", lemon.why);
		char *t = cJSON_PrintUnformatted(d);
		cJSON_Delete(d);
		if (t && strlen(t) < sizeof detail)
			memcpy(detail, t, strlen(t) + 1);
		cJSON_free(t);
	}
	if (ng_store_release_to_probation(st, c0.id, now, by, why, detail, &err) < 0) {
		rc = ng_cli_store_error(e, &err);
	} else {
		ng_store_case c1;
		cJSON *landing = NULL;
		if (land_slurm && !cli->no_land)
			landing = resume_node(st, &c0,
			                      land_node ? land_node
			                      : c0.node_name[0] ? c0.node_name
			                      : argv[optind],
			                      by, now, &rc);
		const char *kube_node = land_node ? land_node : c0.node_name[0] ? c0.node_name : argv[optind];
		if (land_kube && !cli->no_land && !ng_kube_node_ok(kube_node))
			fprintf(stderr, "nodegate release: \"%s\" is not a Kubernetes node name: nothing "
			                "landed (--node names it)\n",
			        kube_node);
		else if (land_kube && !cli->no_land &&
		         ng_kube_probation(kube_node, (long long)c0.id,
		                           &(ng_kube_opts){.out = json ? stderr : stdout}) != 0)
			fprintf(stderr, "nodegate release: the node is on probation in the store, but a "
			                "kubectl step failed (above): `nodegate kube probation %s --case "
			                "%lld` again\n",
			        kube_node, (long long)c0.id);
		r = rc == NG_EXIT_OK ? ng_store_get_case(st, c0.id, &c1, &err) : -2;
		if (r == -2) {
			cJSON_Delete(landing);
		} else if (r <= 0) {
			cJSON_Delete(landing);
			rc = r < 0 ? ng_cli_store_error(e, &err) : NG_EXIT_STORE;
		} else {
			if (json) {
				cJSON *o = cJSON_CreateObject();
				cJSON_AddStringToObject(o, "node", c1.node);
				cJSON_AddStringToObject(o, "node_name", c1.node_name);
				cJSON_AddNumberToObject(o, "case", (double)c1.id);
				cJSON_AddBoolToObject(o, "manual", manual);
				cJSON_AddNumberToObject(o, "passes", (double)c1.passes);
				cJSON_AddNumberToObject(o, "passes_needed", (double)needed);
				cJSON_AddNumberToObject(o, "retries", (double)c1.retries);
				cJSON_AddNumberToObject(o, "closed_at", (double)c1.closed_at);
				cJSON_AddStringToObject(o, "closed_by", c1.closed_by);
				cJSON_AddStringToObject(o, "close_reason", c1.close_reason);
				cJSON_AddStringToObject(o, "state", "probation");
				cJSON_AddStringToObject(o, "canary_job", cli->policy.canary_job);
				cJSON_AddBoolToObject(o, "forced_lemon", lemon.lemon);
				if (landing)
					cJSON_AddItemToObject(o, "landing", landing);
				ng_print_json(o);
				cJSON_Delete(o);
			} else {
				printf("released node %s to probation: case %" PRId64 " closed by %s (%s)\n",
				       c1.node_name[0] ? c1.node_name : c1.node, c1.id,
				       c1.closed_by, c1.close_reason);
				if (cli->policy.canary_job[0])
					printf("The canary job \"%s\" decides: a clean run returns the node to "
					       "admitted, a failing one quarantines it again.\n",
					       cli->policy.canary_job);
				else
					printf("Its next job decides: a clean run returns the node to admitted, a "
					       "failing one quarantines it again.\n");
				if (lemon.lemon)
					printf("A lemon released by force: %s.\n", lemon.why);
				const cJSON *m = landing ? cJSON_GetObjectItem(landing, "message") : NULL;
				if (cJSON_IsString(m))
					printf("slurm: %s\n", m->valuestring);
				cJSON_Delete(landing);
				if (manual)
					printf("Nothing has measured %s since it failed %s: the job that ends "
					       "its probation is its first evidence.\n",
					       node, c1.metric);
			}
			ng_store_case_free(&c1);
		}
	}
	ng_store_case_free(&c0);
	ng_store_close(st);
	return rc;
}

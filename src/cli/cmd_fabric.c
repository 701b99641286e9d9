/* nodegate fabric: the node-to-node path (docs/fabric.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/fabric.h"
#include "cli/store_cli.h"
#include "collect/ib_ports.h"
#include "parse/sacct.h"

static int fabric_main(struct ng_cli *cli, int argc, char **argv);

const struct ng_cmd_entry ng_cmd_fabric_entry = {
	.name = "fabric",
	.usage = "pair NODE [--peers A,B] | gang NODELIST | ports [--root DIR] [OPTIONS]",
	.summary = "Test the fabric across nodes: a candidate with known-good peers, or a gang by bisection.",
	.help =
	"  fabric pair NODE [--peers A,B]   the candidate with two known-good peers (else\n"
	"                                   admitted nodes of its class from the store):\n"
	"                                   all-reduce with A, with B (peer changed), A with B\n"
	"                                   when both were slow (candidate changed); with --hcas,\n"
	"                                   perftest per HCA and direction with each peer\n"
	"  fabric gang NODELIST             one all-reduce across the gang (n[01-16] or a,b,c);\n"
	"                                   a slow or unmeasured group is split in halves down to\n"
	"                                   a lone node beside a known-good one\n"
	"  fabric ports [--root DIR]        this node's HCA ports: state, rate, error counters\n"
	"                                   (what the others read on each node, before and after)\n"
	"\n"
	"Every test runs through the launcher with NCCL_DEBUG=INFO; a run whose channels\n"
	"did not go over NET/IB (socket fallback), or used an HCA not in --hcas, or no GDR\n"
	"under --gdr, is incomparable: it measured another path. Error counters that rose\n"
	"during a test are named. A node no measured test passed is held, never passed.\n",
	.opts = ng_fabric_option_table,
	.help_tail =
	"With a store (--store or NODEGATE_STORE) every test's record lands there with its\n"
	"nodes, the variable it changed, its transport and the counters that rose.\n"
	"Exit status: 0 every node passed; 1 a node slow, held or with risen counters;\n"
	"2 usage; 3 the store.\n",
	.exec = fabric_main,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

static int ports_main(struct ng_cli *cli, int argc, char **argv)
{
	(void)cli;
	const char *root = getenv("NODEGATE_FABRIC_ROOT");
	bool json = false;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_fabric_entry, argc, argv);
	int opt;
	while ((opt = ng_opt_next(&op)) != NG_OPT_END) {
		switch (opt) {
		case NG_OPT_EXIT: return op.status;
		case 'r': root = op.arg; break;
		case 'j': json = true; break;
		default:
			return ng_cmd_usage_error(&ng_cmd_fabric_entry, "--%s is for `fabric pair` and "
			                          "`fabric gang`", ng_opt_find(ng_fabric_option_table, opt)->name);
		}
	}
	ng_err err;
	cJSON *doc = ng_ib_ports_read(root ? root : "/", &err);
	if (!doc) {
		fprintf(stderr, "nodegate fabric ports: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	if (json) {
		ng_print_json(doc);
	} else {
		printf("%-10s %-4s %-8s %-10s %s\n", "HCA", "PORT", "STATE", "RATE", "ERROR COUNTERS");
		for (const cJSON *p = cJSON_GetObjectItem(doc, "ports")->child; p; p = p->next) {
			const cJSON *st = cJSON_GetObjectItem(p, "state"), *r = cJSON_GetObjectItem(p, "rate_gbps");
			printf("%-10s %-4g %-8s %-10g", cJSON_GetObjectItem(p, "hca")->valuestring,
			       cJSON_GetObjectItem(p, "port")->valuedouble, cJSON_IsString(st) ? st->valuestring : "?",
			       cJSON_IsNumber(r) ? r->valuedouble : 0);
			for (const cJSON *c = cJSON_GetObjectItem(p, "counters")->child; c; c = c->next)
				printf(" %s=%.0f", c->string, c->valuedouble);
			printf("\n");
		}
		const cJSON *note = cJSON_GetObjectItem(doc, "note");
		if (cJSON_IsString(note))
			printf("%s\n", note->valuestring);
	}
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

struct names {
	char **v;
	size_t n, cap;
};

static int collect(const char *name, size_t len, void *arg)
{
	struct names *ns = arg;
	(void)len;
	if (ns->n == ns->cap || !(ns->v[ns->n] = strdup(name)))
		return 1;
	ns->n++;
	return 0;
}

/* A NODELIST (Slurm's n[01-16] or a,b,c) into out[*n..cap); false when it
 * cannot be read or is too long. */
static bool expand(const char *list, char **out, size_t cap, size_t *n)
{
	struct names ns = {out, *n, cap};
	long got = ng_hostlist_expand(list, strlen(list), cap - *n, collect, &ns);
	*n = ns.n;
	return got >= 0;
}

/* The store, when one is named (--store or $NODEGATE_STORE): it must exist
 * when it is read (baselines without --expect-busbw, peers without
 * --peers), else it is made. 0 with *st (NULL: none named), else the exit
 * status (printed). */
static int named_store(struct ng_cli *cli, bool must_exist, ng_store **st)
{
	*st = NULL;
	if (!cli->store_spec && !getenv("NODEGATE_STORE"))
		return 0;
	cli->needs = must_exist ? NG_CMD_NEEDS_EXISTING_STORE : NG_CMD_NEEDS_STORE;
	*st = ng_cli_store(cli, NULL);
	return *st ? 0 : NG_EXIT_STORE;
}

static int gang_sub(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_fabric_entry;
	static struct fabric_cli f;
	int next;
	int rc = fabric_parse_opts(e, cli, argc, argv, &f, true, &next);
	if (rc >= 0)
		return rc;
	static char *names[NG_FABRIC_MAX_NODES * 2];
	size_t n = 0, n_refs = 0;
	bool bad = false;
	if (next >= argc) {
		rc = ng_cmd_usage_error(e, "fabric gang needs a NODELIST (n[01-16] or a,b,c)");
		goto out;
	}
	for (int i = next; i < argc && !bad; i++)
		bad = !expand(argv[i], names, NG_FABRIC_MAX_NODES, &n);
	size_t all = n;
	if (f.peers && !bad)
		bad = !expand(f.peers, names, NG_FABRIC_MAX_NODES * 2, &all);
	n_refs = all - n;
	if (bad || n < 1) {
		rc = ng_cmd_usage_error(e, "cannot read the node list");
		goto out;
	}
	if (f.o.per_rail && f.o.n_hcas == 0) {
		rc = ng_cmd_usage_error(e, "--per-rail needs --hcas: the rails to test one by one");
		goto out;
	}
	if (!(f.o.expect_busbw > 0) && !cli->store_spec && !getenv("NODEGATE_STORE")) {
		rc = ng_cmd_usage_error(e, "--expect-busbw GBPS is needed, or a store holding baselines "
		                           "of the topologies (nothing is judged against nothing)");
		goto out;
	}
	ng_store *st;
	if ((rc = named_store(cli, !(f.o.expect_busbw > 0), &st)) != 0)
		goto out;
	ng_ctx ctx;
	ng_cli_ctx(cli, st, &ctx);
	ng_err err = {0};
	cJSON *doc = ng_fabric_gang(&ctx, &f.o, names, n, n_refs, &err);
	if (!doc) {
		rc = err.code == NG_ERR_STORE ? ng_cli_store_error(e, &err) : NG_EXIT_USAGE;
		if (err.code != NG_ERR_STORE)
			fprintf(stderr, "nodegate fabric gang: %s\n", err.msg);
		goto out;
	}
	if (f.json)
		ng_print_json(doc);
	else
		fabric_print_gang(doc);
	const cJSON *why = ng_json_get(doc, "not_run");
	if (cJSON_IsString(why))
		fprintf(stderr, "nodegate fabric gang: %s\n", why->valuestring);
	const cJSON *verdict = ng_json_get(doc, "verdict");
	rc = ng_json_get(doc, "store_problem") ? NG_EXIT_STORE
	     : cJSON_IsString(verdict) && strcmp(verdict->valuestring, "pass") == 0 ? NG_EXIT_OK
	                                                                          : NG_EXIT_NOT_ADMISSIBLE;
	cJSON_Delete(doc);
out:
	for (size_t i = 0; i < n + n_refs; i++)
		free(names[i]);
	fabric_cli_free(&f);
	return rc;
}

static int pair_sub(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_fabric_entry;
	static struct fabric_cli f;
	int next;
	int rc = fabric_parse_opts(e, cli, argc, argv, &f, true, &next);
	if (rc >= 0)
		return rc;
	char *peers[2] = {NULL, NULL};
	size_t np = 0;
	ng_store *st = NULL;
	if (next + 1 != argc) {
		rc = ng_cmd_usage_error(e, "fabric pair needs one NODE (the candidate)");
		goto out;
	}
	if (!(f.o.expect_busbw > 0) && !cli->store_spec && !getenv("NODEGATE_STORE")) {
		rc = ng_cmd_usage_error(e, "--expect-busbw GBPS is needed, or a store holding the "
		                           "baseline of the two-node topology");
		goto out;
	}
	char *cand = argv[next];
	if (f.o.out_path && !ng_fabric_runs_on(cand)) {
		rc = ng_cmd_usage_error(e, "--out writes %s's admission record with this node's identity: "
		                           "run it on %s (host name or SLURMD_NODENAME)", cand, cand);
		goto out;
	}
	bool named = cli->store_spec || getenv("NODEGATE_STORE");
	if ((rc = named_store(cli, !(f.o.expect_busbw > 0) || !f.peers, &st)) != 0)
		goto out;
	ng_ctx ctx;
	ng_cli_ctx(cli, st, &ctx);
	ng_err err = {0};
	size_t two = 2;
	if (ng_fabric_load_baselines(&ctx, &f.o, &two, 1, false, &err) < 0) {
		rc = ng_cli_store_error(e, &err);
		goto out;
	}
	if (f.peers) {
		char buf[512];
		snprintf(buf, sizeof buf, "%s", f.peers);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && np < 2; t = strtok_r(NULL, ",", &save))
			peers[np++] = strdup(t);
	} else {
		/* Peers from the store named, else the default one (which must be
		 * there); the records are kept only in a store named. */
		ng_ctx pick = ctx;
		if (!named) {
			cli->needs = NG_CMD_NEEDS_EXISTING_STORE;
			if (!(pick.store = ng_cli_store(cli, NULL))) {
				rc = NG_EXIT_STORE;
				goto out;
			}
		}
		int got = ng_fabric_pick_peers(&pick, &f.o, cand, peers, 2, &err);
		if (got < 0) {
			rc = ng_cli_store_error(e, &err);
			goto out;
		}
		np = (size_t)got;
		if (np == 0) {
			fprintf(stderr, "nodegate fabric pair: the store knows no admitted node of %s's class to "
			                "pair it with; name reference peers with --peers A,B\n", cand);
			rc = NG_EXIT_USAGE;
			goto out;
		}
	}
	ng_fabric_pair_status status;
	cJSON *doc = ng_fabric_pair(&ctx, &f.o, cand, peers, np, &status, &err);
	if (!doc) {
		fprintf(stderr, "nodegate fabric pair: %s\n", err.msg);
		rc = NG_EXIT_USAGE;
		goto out;
	}
	if (status.out_failed)
		fprintf(stderr, "nodegate fabric pair: --out %s: %s\n", f.o.out_path, status.out_problem);
	if (f.json)
		ng_print_json(doc);
	else
		fabric_print_pair(doc);
	const cJSON *why = ng_json_get(doc, "not_run");
	if (cJSON_IsString(why))
		fprintf(stderr, "nodegate fabric pair: %s\n", why->valuestring);
	rc = status.store_failed ? NG_EXIT_STORE
	     : status.out_failed ? NG_EXIT_USAGE
	     : strcmp(ng_json_get(doc, "verdict")->valuestring, "pass") == 0 ? NG_EXIT_OK
	                                                                     : NG_EXIT_NOT_ADMISSIBLE;
	cJSON_Delete(doc);
out:
	for (size_t i = 0; i < np; i++)
		free(peers[i]);
	fabric_cli_free(&f);
	return rc;
}

static int fabric_main(struct ng_cli *cli, int argc, char **argv)
{
	static const struct ng_subcmd subs[] = {
		{"pair", pair_sub},
		{"gang", gang_sub},
		{"ports", ports_main},
	};
	return ng_cmd_dispatch(&ng_cmd_fabric_entry, subs, sizeof subs / sizeof subs[0], cli, argc, argv);
}

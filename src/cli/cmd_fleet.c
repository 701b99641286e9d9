/* nodegate fleet: fleet-regression events (the circuit breaker), listed and cleared. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/fleet_clear.h"
#include "flow/fleet_events.h"

static int exec_fleet(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt fleet_opts[] = {
	{"all", 'a', NULL, "list cleared events too"},
	{"by", 'b', "NAME", "who clears it, up to 63 characters"},
	{"reason", 'r', "TEXT", "what was found or done, up to 255 characters"},
	NG_OPT_STORE,
	NG_OPT_JSON("JSON instead of a table"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_fleet_entry = {
	.name = "fleet",
	.usage = "list [--all] [--store S] [--json]\n"
	         "       nodegate fleet clear ID --by NAME --reason TEXT [--store S] [--json]",
	.summary = "List and clear fleet-regression events (the quarantine circuit breaker).",
	.help =
	"When quarantining for one metric would take more than admission.breaker_share\n"
	"of a class, or more than admission.breaker_count of its nodes, within\n"
	"admission.breaker_window_hours, and that many are improbable for the class's own\n"
	"rate of them (admission.breaker_tail), a change is a likelier cause than that\n"
	"many sick nodes: admission opens a fleet-regression event for the class, its\n"
	"software identity and that metric, stops quarantining the class's nodes for that\n"
	"metric (never for a fall below a floor, nor for another metric), and the\n"
	"change's owner is told. The event clears itself once the nodes it names measure\n"
	"the metric within noise again for admission.breaker_clear_runs runs in a row;\n"
	"until then someone who has looked can clear it, saying why (rolled back, fixed,\n"
	"or the class's baselines expired after an intended change).\n"
	"\n"
	"Kinds: breaker (the class's metric moved); partial (part of the class moved\n"
	"together: the event names the profile fields those nodes share and the others\n"
	"do not, e.g. ib.devices[].fw_ver=22.39.1002, declines only their quarantines,\n"
	"and the class's other nodes are judged as before; \"no shared field found\"\n"
	"when nothing sets them apart); drift (a rebuilt baseline more than\n"
	"admission.drift_fraction under the pinned one of its key: it declines nothing,\n"
	"and is there to be told about).\n"
	"\n"
	"  list    open events (--all: cleared ones too): class, software, metric, when,\n"
	"          nodes\n"
	"  clear   closes event ID; --by and --reason are required and kept\n",
	.opts = fleet_opts,
	.help_tail =
	"Exit status: 0 done; 1 clear: no such open event; 2 usage error; 3 the store\n"
	"could not be opened, read or written.\n",
	.exec = exec_fleet,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

struct opts {
	const char *spec, *by, *reason;
	bool all, json;
	int next; /* the first operand */
};

static int parse_opts(int argc, char **argv, const char *allowed, struct opts *o)
{
	memset(o, 0, sizeof *o);
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_fleet_entry, argc, argv);
	op.only = allowed;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		switch (c) {
		case 'a': o->all = true; break;
		case 'b': o->by = op.arg; break;
		case 'r': o->reason = op.arg; break;
		case 's': o->spec = op.arg; break;
		case 'j': o->json = true; break;
		}
	}
	o->next = op.next;
	return -1;
}

/* "12: gpu-001, gpu-007, gpu-013, ..." from the event's JSON array of nodes. */
static void nodes_text(const char *nodes, char *out, size_t cap)
{
	cJSON *arr = nodes ? cJSON_Parse(nodes) : NULL;
	int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
	size_t len = (size_t)snprintf(out, cap, "%d", n);
	int shown = 0;
	const cJSON *v;
	cJSON_ArrayForEach(v, arr)
	{
		if (len >= cap)
			break;
		if (shown == 3) {
			snprintf(out + len, cap - len, ", ...");
			break;
		}
		const char *name = cJSON_IsString(v) ? v->valuestring : "?";
		len += (size_t)snprintf(out + len, cap - len, "%s%s", shown ? ", " : ": ", name);
		shown++;
	}
	cJSON_Delete(arr);
}

/* The event's finding: a partial regression's sentence and the fields its
 * nodes share, or a drift's sentence. */
static void print_finding(const char *detail)
{
	cJSON *d = detail ? cJSON_Parse(detail) : NULL;
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(d, "attribution");
	const cJSON *sum = cJSON_GetObjectItemCaseSensitive(at ? at : d, "summary");
	if (cJSON_IsString(sum))
		printf("      %s\n", sum->valuestring);
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(at, "fields"))
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "field");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(f, "value");
		const cJSON *other = cJSON_GetObjectItemCaseSensitive(f, "others_value");
		const cJSON *sw = cJSON_GetObjectItemCaseSensitive(f, "shifted_with");
		const cJSON *ow = cJSON_GetObjectItemCaseSensitive(f, "others_with");
		if (!cJSON_IsString(name) || !cJSON_IsString(value))
			continue;
		printf("      shared: %s=%s (%d of the shifted, %d of the others; the others: %s)\n",
		       name->valuestring, value->valuestring, cJSON_IsNumber(sw) ? sw->valueint : 0,
		       cJSON_IsNumber(ow) ? ow->valueint : 0,
		       cJSON_IsString(other) ? other->valuestring : "none has it");
	}
	cJSON_Delete(d);
}

static int cmd_list(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_fleet_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "asj", &o);
	if (rc >= 0)
		return rc;
	if (o.next < argc)
		return ng_cmd_usage_error(e, "fleet list takes no arguments: \"%s\"", argv[o.next]);
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_fleet_events l;
	rc = ng_fleet_events_read(&ctx, o.all, &l, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	const ng_store_fleet_event *evs = l.events;
	size_t n = l.n;
	if (o.json) {
		cJSON *doc = ng_fleet_events_json(&l);
		ng_print_json(doc);
		cJSON_Delete(doc);
	} else if (n == 0) {
		printf(o.all ? "no fleet-regression events\n" : "no open fleet-regression events\n");
	} else {
		int wc = 5;
		for (size_t i = 0; i < n; i++)
			wc = ng_cli_col_width(wc, evs[i].class_key);
		printf("%4s  %-*s  %-19s  %-20s  ", "ID", wc, "CLASS", "SOFTWARE", "OPENED");
		if (o.all)
			printf("%-20s  ", "CLEARED");
		printf("NODES\n");
		for (size_t i = 0; i < n; i++) {
			const ng_store_fleet_event *ev = &evs[i];
			char opened[32], cleared[32], sw[32], nodes[256];
			ng_format_time(ev->opened_at, opened);
			ng_format_time(ev->cleared_at, cleared);
			/* A software identity is "sw-" and 16 hex digits. */
			if (!ev->software[0])
				snprintf(sw, sizeof sw, "-");
			else if (strlen(ev->software) > 19)
				snprintf(sw, sizeof sw, "%.16s...", ev->software);
			else
				snprintf(sw, sizeof sw, "%.19s", ev->software);
			nodes_text(ev->nodes, nodes, sizeof nodes);
			printf("%4" PRId64 "  %-*s  %-19s  %-20s  ", ev->id, wc, ev->class_key, sw, opened);
			if (o.all)
				printf("%-20s  ", cleared);
			printf("%s\n", nodes);
			bool drift = strcmp(ev->kind, "drift") == 0;
			printf("      %s, metric %s", ev->kind[0] ? ev->kind : "breaker",
			       ev->metric[0] ? ev->metric : "(every metric: opened before events had one)");
			if (drift)
				printf("; declines nothing\n");
			else
				printf("; %" PRId64 " clean runs of its nodes since\n", ev->clean_runs);
			print_finding(ev->detail);
			if (o.all && ev->cleared_at)
				printf("      cleared by %s: %s\n", ev->cleared_by, ev->clear_reason);
		}
	}
	ng_fleet_events_release(&l);
	return NG_EXIT_OK;
}

static int cmd_clear(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_fleet_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "brsj", &o);
	if (rc >= 0)
		return rc;
	rc = NG_EXIT_OK;
	if (argc - o.next != 1)
		return ng_cmd_usage_error(e, "fleet clear takes one event ID (`nodegate fleet list` "
		                             "lists them)");
	const char *arg = argv[o.next];
	int64_t id;
	if (!ng_cli_parse_id(arg, &id))
		return ng_cmd_usage_error(e, "\"%s\" is not an event ID (a positive number)", arg);
	ng_store_fleet_event probe;
	if (!o.by || !*o.by || !o.reason || !*o.reason)
		return ng_cmd_usage_error(e, "fleet clear needs --by NAME and --reason TEXT: who "
		                             "looked, and what they found or did");
	if (strlen(o.by) >= sizeof probe.cleared_by)
		return ng_cmd_usage_error(e, "--by must be at most %zu characters",
		                          sizeof probe.cleared_by - 1);
	if (strlen(o.reason) >= sizeof probe.clear_reason)
		return ng_cmd_usage_error(e, "--reason must be at most %zu characters",
		                          sizeof probe.clear_reason - 1);

	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_fleet_clear_result r;
	ng_err err;
	rc = ng_fleet_clear(&ctx, id, o.by, o.reason, &r, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	if (r.state == NG_FLEET_NO_SUCH) {
		fprintf(stderr, "nodegate fleet: there is no fleet-regression event %" PRId64 ": `nodegate "
		                "fleet list --all` lists them\n",
		        id);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (r.state == NG_FLEET_ALREADY_CLEARED) {
		char t[32];
		ng_format_time(r.cleared_at, t);
		fprintf(stderr, "nodegate fleet: event %" PRId64 " was already cleared at %s by %s: %s\n", id,
		        t, r.cleared_by, r.clear_reason);
		return NG_EXIT_NOT_ADMISSIBLE;
	}
	if (o.json) {
		cJSON *d = ng_fleet_clear_json(id, o.by, o.reason, &r);
		ng_print_json(d);
		cJSON_Delete(d);
	} else {
		printf("cleared fleet-regression event %" PRId64 " of class %s by %s: %s\n"
		       "Admission quarantines nodes of this class again when they fail.\n",
		       id, r.class_key, o.by, o.reason);
	}
	return NG_EXIT_OK;
}

static const struct ng_subcmd subcommands[] = {
	{"list", cmd_list},
	{"clear", cmd_clear},
};

static int exec_fleet(struct ng_cli *cli, int argc, char **argv)
{
	return ng_cmd_dispatch(&ng_cmd_fleet_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}

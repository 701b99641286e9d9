/* nodegate override: a named, expiring exception for one node. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/override.h"

static int exec_override(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt opts[] = {
	{"reason", 'r', "TEXT", "why (a ticket, an incident, a planned test), up to 255 characters"},
	{"expires", 'e', "WHEN", "when it ends: 2026-12-01, 2026-12-01T18:00:00Z, @UNIXSECONDS,\n"
	                         "or a duration from now: 36h, 7d, 2w (UTC)"},
	{"by", 'b', "NAME", "who takes responsibility for it, up to 63 characters"},
	NG_OPT_STORE,
	NG_OPT_JSON("the override as JSON"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_override_entry = {
	.name = "override",
	.usage = "NODE --reason TEXT --expires WHEN --by NAME [--store S] [--json]",
	.summary = "Record a named, expiring exception for a node (reason, owner, expiry).",
	.help =
	"An override is an operator's decision to make an exception for one node: it\n"
	"names who decided, why, and when it ends. Until WHEN, a node `nodegate admit`\n"
	"would quarantine or hold as suspect is admitted with a warning instead (the\n"
	"result is still reported, and its runs do not feed the class's baselines);\n"
	"after WHEN it is as if there had been none. Nothing renews it. All three\n"
	"options are required, and WHEN must be in the future and at most 90 days\n"
	"ahead: a longer exception is a policy change, not an override.\n",
	.opts = opts,
	.help_tail =
	"Example:\n"
	"  nodegate override gpu-node-013 --reason \"INC-4411: vendor on site, run\n"
	"      burn-in\" --expires 36h --by alice\n"
	"\n"
	"Exit status: 0 recorded; 2 usage error (a missing option, an expiry in the\n"
	"past or more than 90 days ahead); 3 the store could not be opened or written.\n",
	.exec = exec_override,
	.needs = NG_CMD_NEEDS_STORE,
};

static int exec_override(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_override_entry;
	const char *spec = NULL, *reason = NULL, *expires = NULL, *by = NULL;
	bool json = false;
	struct ng_opt_parser op;
	ng_opt_begin(&op, e, argc, argv);
	int c;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case NG_OPT_EXIT: return op.status;
		case 'r': reason = op.arg; break;
		case 'e': expires = op.arg; break;
		case 'b': by = op.arg; break;
		case 's': spec = op.arg; break;
		case 'j': json = true; break;
		}
	}
	if (argc - optind != 1)
		return ng_cmd_usage_error(e, "name one NODE");
	ng_store_override fits; /* what the store keeps of each */
	const char *node = argv[optind];
	if (!*node || strlen(node) >= sizeof fits.node)
		return ng_cmd_usage_error(e, "NODE must be 1 to %zu characters", sizeof fits.node - 1);
	if (!reason || !expires || !by) {
		return ng_cmd_usage_error(e, "an override needs all of --reason, --expires and --by "
		                             "(missing: %s%s%s)",
		                          !reason ? "--reason " : "", !expires ? "--expires " : "",
		                          !by ? "--by" : "");
	}
	if (!*reason || strlen(reason) >= sizeof fits.reason)
		return ng_cmd_usage_error(e, "--reason must be 1 to %zu characters",
		                          sizeof fits.reason - 1);
	if (!*by || strlen(by) >= sizeof fits.by)
		return ng_cmd_usage_error(e, "--by must be 1 to %zu characters", sizeof fits.by - 1);
	int64_t now = ng_now(), until;
	if (ng_parse_time(expires, now, &until) < 0)
		return ng_cmd_usage_error(e, "--expires \"%s\" is not a time: 2026-12-01, "
		                             "2026-12-01T18:00:00Z, @UNIXSECONDS, or 36h, 7d, 2w from now",
		                          expires);
	char until_text[32], now_text[32];
	ng_format_time(until, until_text);
	ng_format_time(now, now_text);
	ng_override_expiry x = ng_override_check_expiry(now, until);
	if (x == NG_OVERRIDE_EXPIRY_PAST)
		return ng_cmd_usage_error(e, "--expires %s is not in the future (now is %s)", until_text,
		                          now_text);
	if (x == NG_OVERRIDE_EXPIRY_TOO_FAR)
		return ng_cmd_usage_error(e, "--expires %s is %.1f days ahead; an override lasts at "
		                             "most %d days: record a new one when this one ends",
		                          until_text, (double)(until - now) / 86400.0,
		                          NG_OVERRIDE_MAX_DAYS);

	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, spec, &ctx))
		return NG_EXIT_STORE;
	ng_override_request req = {.node = node, .reason = reason, .by = by, .created_at = now,
	                           .expires_at = until};
	ng_override_result r;
	ng_err err;
	int rc = NG_EXIT_OK;
	const ng_store_override *o = &r.o;
	if (ng_override_record(&ctx, &req, &r, &err) < 0) {
		rc = ng_cli_fail(e, &err, NG_ERR_STORE);
	} else if (json) {
		cJSON *d = ng_override_json(&r);
		ng_print_json(d);
		cJSON_Delete(d);
	} else {
		double hours = (double)(until - now) / 3600.0;
		printf("override %" PRId64 " for node %s by %s until %s (%.3g %s from now): %s\n", o->id,
		       r.ref.name[0] ? r.ref.name : o->node, o->by, until_text,
		       hours < 48 ? hours : hours / 24, hours < 48 ? "hours" : "days", o->reason);
	}
	return rc;
}

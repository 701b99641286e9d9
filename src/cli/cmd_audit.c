/* nodegate audit: the store's hash-chained audit log, verified and shown. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/exit.h"
#include "cli/store_cli.h"
#include "flow/audit.h"

#define DEFAULT_LIMIT 50
#define DETAIL_WIDTH 100

static int exec_audit(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt audit_opts[] = {
	{"limit", 'n', "N", "at most N entries (show)"},
	{"subject", 'S', "S", "only entries about S (show)"},
	NG_OPT_STORE,
	NG_OPT_JSON("JSON instead of text"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_audit_entry = {
	.name = "audit",
	.usage = "verify [--store S] [--json]\n"
	         "       nodegate audit show [--limit N] [--subject S] [--store S] [--json]",
	.summary = "Verify the audit log's hash chain, or show its newest entries.",
	.help =
	"Every change an operator may later ask \"why?\" about (a baseline built, pinned\n"
	"or expired, a quarantine opened or released, an override, a fleet event) is\n"
	"written to the audit log in the same transaction as the change. Each entry's\n"
	"hash covers the entry before it, so an entry edited, removed or reordered\n"
	"breaks the chain from that point. The head is also anchored outside the\n"
	"database, in a file beside a SQLite store (STORE.audit-head) or, for\n"
	"PostgreSQL, under $NODEGATE_STATE_DIR (default /var/lib/nodegate), so a tail\n"
	"cut with the head in the database edited to match still shows. Overrides,\n"
	"baselines, cases and node states carry a digest the chain covers: a row\n"
	"edited, added or removed outside nodegate shows too (docs/store.md says\n"
	"what this detects and what it cannot).\n"
	"\n"
	"  verify   walks the whole chain. Prints the number of entries and the head\n"
	"           hash; keep that hash somewhere else (a ticket, a log shipper): someone\n"
	"           who can rewrite the whole database can rewrite the whole chain, and\n"
	"           only a head kept elsewhere shows it.\n"
	"  show     entries newest first (--limit N, default 50, 0 for all), optionally of\n"
	"           one subject: node:NAME (its id or scheduler name), case:ID, baseline:ID, class:KEY, fleet-event:ID\n"
	"\n"
	"Neither creates a store: a SQLite path with no file is an error, never an\n"
	"empty log reported as verified.\n",
	.opts = audit_opts,
	.help_tail =
	"Exit status: 0 verified (or shown); 1 verify found a break or a changed row;\n"
	"2 usage error;\n"
	"3 the store could not be opened or read.\n",
	.exec = exec_audit,
	.needs = NG_CMD_NEEDS_EXISTING_STORE,
};

struct opts {
	const char *spec, *subject;
	int64_t limit;
	bool json;
};

static int parse_opts(int argc, char **argv, const char *allowed, struct opts *o)
{
	const struct ng_cmd_entry *e = &ng_cmd_audit_entry;
	memset(o, 0, sizeof *o);
	o->limit = DEFAULT_LIMIT;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_audit_entry, argc, argv);
	op.only = allowed;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		if (c == NG_OPT_EXIT)
			return op.status;
		switch (c) {
		case 'n': {
			char *end;
			errno = 0;
			long long v = strtoll(op.arg, &end, 10);
			if (!*op.arg || *end || errno || v < 0)
				return ng_cmd_usage_error(e, "--limit takes a count (0 for every entry)");
			o->limit = v;
			break;
		}
		case 'S': o->subject = op.arg; break;
		case 's': o->spec = op.arg; break;
		case 'j': o->json = true; break;
		}
	}
	if (op.next < argc)
		return ng_cmd_usage_error(e, "audit %s takes no arguments: \"%s\"", argv[0],
		                          argv[op.next]);
	return -1;
}

static int cmd_verify(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_audit_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "sj", &o);
	if (rc >= 0)
		return rc;
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	ng_audit_verification v;
	rc = ng_audit_verify(&ctx, &v, &err);
	if (rc < 0)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	const ng_store_audit_report rep = v.rep;
	if (o.json) {
		cJSON *d = ng_audit_verification_json(&v);
		ng_print_json(d);
		cJSON_Delete(d);
	} else if (v.verified) {
		printf("audit log verified: %" PRId64 " entr%s, head %s\n", rep.entries,
		       rep.entries == 1 ? "y" : "ies", rep.head);
		printf("state verified: %" PRId64 " row%s of overrides, baselines, cases and node states"
		       " as the log last recorded them; head anchored in %s\n",
		       rep.rows, rep.rows == 1 ? "" : "s", v.anchor);
	} else if (!rep.first_bad) {
		printf("audit log verified: %" PRId64 " entr%s, head %s\n", rep.entries,
		       rep.entries == 1 ? "y" : "ies", rep.head);
		printf("state CHANGED outside nodegate: %" PRId64 " of %" PRId64 " rows differ from what"
		       " the audit log recorded; the first: %s\n",
		       rep.rows_bad, rep.rows, rep.state_problem);
		printf("Do not trust those rows (an override, a case, a baseline or a node state may "
		       "admit or hold a node it should not). Keep the store as it is for investigation: "
		       "copy the file (SQLite) or dump the database before anything writes to it again.\n");
	} else {
		printf("audit log BROKEN at entry %" PRId64 ": %s\n", rep.first_bad, rep.problem);
		printf("Entries before %" PRId64 " verified (last good hash %s). Keep the store as it is "
		       "for investigation: copy the file (SQLite) or dump the database before anything "
		       "writes to it again.\n",
		       rep.first_bad, rep.head);
	}
	return v.verified ? NG_EXIT_OK : NG_EXIT_NOT_ADMISSIBLE;
}

static int cmd_show(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_audit_entry;
	struct opts o;
	int rc = parse_opts(argc, argv, "nSsj", &o);
	if (rc >= 0)
		return rc;
	ng_ctx ctx;
	if (!ng_cli_store_ctx(cli, o.spec, &ctx))
		return NG_EXIT_STORE;
	ng_err err;
	char filed_as[NG_AUDIT_SUBJECT_MAX];
	cJSON *doc = ng_audit_entries(&ctx, o.limit, o.subject, filed_as, &err);
	if (!doc)
		return ng_cli_fail(e, &err, NG_ERR_STORE);
	if (o.json) {
		ng_print_json(doc);
		cJSON_Delete(doc);
		return NG_EXIT_OK;
	}
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "entries");
	if (filed_as[0])
		o.subject = filed_as;
	if (!arr->child) {
		printf(o.subject ? "no audit entries about %s\n" : "the audit log is empty\n",
		       o.subject);
		cJSON_Delete(doc);
		return NG_EXIT_OK;
	}
	int wa = 6, ws = 7, wu = 5;
	for (const cJSON *en = arr->child; en; en = en->next) {
		const cJSON *f;
		if ((f = cJSON_GetObjectItemCaseSensitive(en, "action")) && cJSON_IsString(f) &&
		    (int)strlen(f->valuestring) > wa)
			wa = (int)strlen(f->valuestring);
		if ((f = cJSON_GetObjectItemCaseSensitive(en, "subject")) && cJSON_IsString(f) &&
		    (int)strlen(f->valuestring) > ws)
			ws = (int)strlen(f->valuestring);
		if ((f = cJSON_GetObjectItemCaseSensitive(en, "actor")) && cJSON_IsString(f) &&
		    (int)strlen(f->valuestring) > wu)
			wu = (int)strlen(f->valuestring);
	}
	if (ws > 48)
		ws = 48;
	printf("%5s  %-20s  %-*s  %-*s  %-*s  %s\n", "SEQ", "TIME", wu, "ACTOR", wa, "ACTION", ws,
	       "SUBJECT", "DETAIL");
	for (const cJSON *en = arr->child; en; en = en->next) {
		const cJSON *seq = cJSON_GetObjectItemCaseSensitive(en, "seq");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(en, "at");
		const char *actor = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(en, "actor"));
		const char *action = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(en, "action"));
		const char *subject =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(en, "subject"));
		char t[32];
		ng_format_time(cJSON_IsNumber(at) ? (int64_t)at->valuedouble : 0, t);
		char *detail = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(en, "detail"));
		if (detail && strlen(detail) > DETAIL_WIDTH)
			strcpy(detail + DETAIL_WIDTH - 3, "...");
		printf("%5" PRId64 "  %-20s  %-*s  %-*s  %-*s  %s\n",
		       cJSON_IsNumber(seq) ? (int64_t)seq->valuedouble : 0, t, wu, actor ? actor : "", wa,
		       action ? action : "", ws, subject ? subject : "", detail ? detail : "");
		free(detail);
	}
	int shown = cJSON_GetArraySize(arr);
	if (o.limit && shown == o.limit)
		printf("(the newest %d; --limit 0 shows every entry, --json every detail whole)\n",
		       shown);
	cJSON_Delete(doc);
	return NG_EXIT_OK;
}

static const struct ng_subcmd subcommands[] = {
	{"verify", cmd_verify},
	{"show", cmd_show},
};

static int exec_audit(struct ng_cli *cli, int argc, char **argv)
{
	return ng_cmd_dispatch(&ng_cmd_audit_entry, subcommands,
	                       sizeof subcommands / sizeof subcommands[0], cli, argc, argv);
}

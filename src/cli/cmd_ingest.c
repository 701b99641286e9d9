/* nodegate ingest: records from files into the store, one transaction per file. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/store_cli.h"
#include "core/json.h"
#include "core/metric.h"
#include "judge/record.h"

static int exec_ingest(struct ng_cli *cli, int argc, char **argv);

enum { OPT_NOT_IDLE = 256 };

static const struct ng_opt ingest_opts[] = {
	NG_OPT_STORE,
	{"accepted", 'a', NULL, "the runs admitted their nodes: baselines are built from\n"
	 "accepted runs of idle nodes only"},
	{"not-idle", OPT_NOT_IDLE, NULL, "the nodes were running other work when measured: such runs\n"
	 "never make a baseline, accepted or not"},
	{"run-id", 'r', "ID", "the run or import batch the records belong to (default: a\n"
	 "fresh id, one per invocation)"},
	{"at", 't', "TIME", "when the records were taken: 2026-11-30, 2026-11-30T05:00Z,\n"
	 "@UNIXSECONDS (default: now; never in the future)"},
	NG_OPT_JSON("{\"stored\": [{\"file\", \"records\", \"run_id\", \"ids\"}],\n"
	 " \"failed\": [{\"file\", \"error\"}]}"),
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_ingest_entry = {
	.name = "ingest",
	.usage = "[--store S] [--accepted] [--not-idle] [--run-id ID] [--at TIME] [--json] FILE...",
	.summary = "Store measurement records, e.g. a fleet's history to build baselines from.",
	.help = "",
	.opts = ingest_opts,
	.help_tail =
	"A FILE holds a JSON array of records, one record object, or JSON Lines (one\n"
	"record per line); \"-\" reads standard input. Each record needs its node,\n"
	"class, metric and domain (a registered metric implies its domain and unit).\n"
	"Baselines are kept per (class, software identity, metric): records without\n"
	"\"software\" make baselines of their own, apart from those `nodegate admit`\n"
	"uses for nodes whose records carry it (as `run` and `probe` records do).\n"
	"Each file is stored in one transaction: a file with any bad record stores\n"
	"nothing, and the other files are still read. A record is bad when a sample\n"
	"is not a finite number greater than 0 (\"240\", null, 1e400), \"wrong\" is\n"
	"negative or not a whole number, its schema is not nodegate/record/1, or a\n"
	"key is given twice; the message names the record and the field.\n"
	"\n"
	"Importing history to build a first baseline:\n"
	"  nodegate ingest --accepted --at 2026-11-28 fleet-nccl.jsonl\n"
	"  nodegate baseline build\n"
	"\n"
	"Exit status: 0 every file stored; 2 a file could not be read or holds a bad\n"
	"record (nothing from it was stored); 3 the store could not be opened or written.\n",
	.exec = exec_ingest,
};

static const char *str_member(const cJSON *obj, const char *key)
{
	const cJSON *v = ng_json_get(obj, key);
	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* Checks what the store needs of each record, so that a bad record is told
 * apart from a store failure (exit 2, not 3), and names it. */
static int check_records(const cJSON *arr, const char *name, const size_t *lines, ng_err *err)
{
	size_t i = 0;
	for (const cJSON *r = arr->child; r; r = r->next, i++) {
		char at[64];
		if (lines)
			snprintf(at, sizeof at, "line %zu", lines[i]);
		else
			snprintf(at, sizeof at, "record %zu", i);
		if (!cJSON_IsObject(r))
			return ng_fail(err, "%s: %s is not a JSON object", name, at);
		/* Refused, not stored changed: a dropped sample or a clamped count
		 * would be a measurement nobody made. */
		ng_err serr;
		if (ng_record_check_strict(r, false, &serr) < 0)
			return ng_fail(err, "%s: %s: %s", name, at, serr.msg);
		const char *metric = str_member(r, "metric");
		const char *missing = !str_member(r, "node")    ? "node"
		                      : !str_member(r, "class") ? "class"
		                      : !metric                 ? "metric"
		                                                : NULL;
		if (!missing && !str_member(r, "domain") && !ng_metric_lookup(metric))
			missing = "domain (and its metric is not a registered one)";
		if (missing)
			return ng_fail(err, "%s: %s has no %s", name, at, missing);
		const cJSON *sw = ng_json_get(r, "software");
		if (sw && !cJSON_IsString(sw) && !cJSON_IsNull(sw))
			return ng_fail(err, "%s: %s: \"software\" must be a string", name, at);
	}
	if (i == 0)
		return ng_fail(err, "%s holds no records", name);
	return 0;
}

/* Whether a text line is only JSON white space. */
static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

/* Grows the line-number list alongside the records. */
static int note_line(size_t **lines, size_t *cap, size_t i, size_t line)
{
	if (i == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		size_t *p = realloc(*lines, c * sizeof *p);
		if (!p)
			return -1;
		*lines = p;
		*cap = c;
	}
	(*lines)[i] = line;
	return 0;
}

/* The records of a file as one array: a JSON array, one object, or JSON
 * Lines. For JSON Lines, *lines gets each record's line number (else NULL).
 * name is how messages call the file. */
static cJSON *read_records(const char *path, const char *name, size_t **lines, ng_err *err)
{
	*lines = NULL;
	size_t len;
	char *text = ng_read_file(path, &len, err);
	if (!text)
		return NULL;
	ng_err perr;
	cJSON *doc = ng_json_parse(text, len, &perr);
	if (doc && !cJSON_IsArray(doc)) {
		cJSON *arr = cJSON_CreateArray();
		if (arr)
			cJSON_AddItemToArray(arr, doc);
		else
			cJSON_Delete(doc);
		doc = arr;
		if (!doc)
			ng_fail(err, "out of memory reading %s", name);
	} else if (!doc) {
		/* JSON Lines, when the first non-blank line is a whole object;
		 * otherwise the whole document's error says what is wrong. */
		const char *p = text, *end = text + len;
		size_t cap = 0, n = 0;
		doc = cJSON_CreateArray();
		if (!doc)
			ng_fail(err, "out of memory reading %s", name);
		for (size_t line = 1; p < end && doc; line++) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (!blank(p, k)) {
				ng_err lerr;
				cJSON *rec = ng_json_parse(p, k, &lerr);
				bool ok = rec && (n > 0 || cJSON_IsObject(rec));
				if (!ok) {
					if (n == 0)
						ng_fail(err, "%s: %s", name, perr.msg);
					else
						ng_fail(err, "%s line %zu: %s", name, line, lerr.msg);
				} else if (note_line(lines, &cap, n, line) < 0) {
					ok = false;
					ng_fail(err, "out of memory reading %s", name);
				}
				if (!ok) {
					cJSON_Delete(rec);
					cJSON_Delete(doc);
					doc = NULL;
					break;
				}
				cJSON_AddItemToArray(doc, rec);
				n++;
			}
			p += k + 1;
		}
		if (!doc) {
			free(*lines);
			*lines = NULL;
		}
	}
	free(text);
	return doc;
}

static int exec_ingest(struct ng_cli *cli, int argc, char **argv)
{
	const struct ng_cmd_entry *e = &ng_cmd_ingest_entry;
	const char *spec = NULL, *run_arg = NULL, *at_arg = NULL;
	bool accepted = false, idle = true, json = false;
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_ingest_entry, argc, argv);
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 's': spec = op.arg; break;
		case 'a': accepted = true; break;
		case OPT_NOT_IDLE: idle = false; break;
		case 'r': run_arg = op.arg; break;
		case 't': at_arg = op.arg; break;
		case 'j': json = true; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind == argc)
		return ng_cmd_usage_error(e, "name at least one FILE of records (\"-\" for standard "
		                             "input)");
	int stdin_uses = 0;
	for (int i = optind; i < argc; i++)
		stdin_uses += strcmp(argv[i], "-") == 0;
	if (stdin_uses > 1)
		return ng_cmd_usage_error(e, "standard input (\"-\") can be read only once");

	int64_t now = ng_now(), at = now;
	if (at_arg) {
		if (ng_parse_time(at_arg, now, &at) < 0)
			return ng_cmd_usage_error(e, "--at \"%s\" is not a time: 2026-11-30, "
			                             "2026-11-30T05:00:00Z or @UNIXSECONDS (UTC)",
			                          at_arg);
		if (at > now) {
			char t[32];
			ng_format_time(at, t);
			return ng_cmd_usage_error(e, "--at %s is in the future: records are stored with "
			                             "the time they were taken",
			                          t);
		}
	}
	char run_id[80];
	if (run_arg) {
		if (!*run_arg || strlen(run_arg) >= sizeof run_id)
			return ng_cmd_usage_error(e, "--run-id must be 1 to %zu characters",
			                          sizeof run_id - 1);
		snprintf(run_id, sizeof run_id, "%s", run_arg);
	} else {
		ng_run_id(run_id, "ingest", now);
	}

	ng_store *st = ng_cli_open_store(cli, e, spec);
	if (!st)
		return NG_EXIT_STORE;
	cJSON *doc = json ? cJSON_CreateObject() : NULL;
	cJSON *stored = json ? cJSON_AddArrayToObject(doc, "stored") : NULL;
	cJSON *failed = json ? cJSON_AddArrayToObject(doc, "failed") : NULL;
	int rc = NG_EXIT_OK;
	ng_store_ingest how = {.run_id = run_id, .taken_at = at, .idle = idle, .accepted = accepted,
	                       .actor = ng_actor()};
	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
		ng_err err;
		size_t *lines = NULL;
		cJSON *recs = read_records(path, name, &lines, &err);
		int frc = NG_EXIT_OK;
		if (!recs || check_records(recs, name, lines, &err) < 0)
			frc = NG_EXIT_USAGE;
		size_t n = recs ? (size_t)cJSON_GetArraySize(recs) : 0;
		int64_t *ids = frc == NG_EXIT_OK ? calloc(n, sizeof *ids) : NULL;
		if (frc == NG_EXIT_OK && !ids) {
			ng_fail(&err, "out of memory storing %s", name);
			frc = NG_EXIT_STORE;
		}
		if (frc == NG_EXIT_OK && ng_store_put_json_records(st, recs, &how, ids, &err) < 0)
			frc = NG_EXIT_STORE;
		if (frc == NG_EXIT_OK && json) {
			cJSON *f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "file", path);
			cJSON_AddNumberToObject(f, "records", (double)n);
			cJSON_AddStringToObject(f, "run_id", run_id);
			cJSON *a = cJSON_AddArrayToObject(f, "ids");
			for (size_t k = 0; k < n; k++)
				cJSON_AddItemToArray(a, cJSON_CreateNumber((double)ids[k]));
			cJSON_AddItemToArray(stored, f);
		} else if (frc == NG_EXIT_OK) {
			printf("stored %zu record%s from %s (run %s)\n", n, n == 1 ? "" : "s", name,
			       run_id);
		}
		if (frc == NG_EXIT_OK && accepted) {
			size_t bare = 0;
			for (const cJSON *r = recs->child; r; r = r->next)
				bare += !str_member(r, "software");
			if (bare)
				fprintf(stderr,
				        "nodegate ingest: note: %zu of %zu records from %s carry no software "
				        "identity: their baselines are kept apart from those of nodes that "
				        "have one, which is what `nodegate admit` judges against\n",
				        bare, n, name);
		}
		if (frc != NG_EXIT_OK) {
			if (frc == NG_EXIT_STORE)
				fprintf(stderr, "nodegate ingest: store %s: %s: nothing from %s was stored\n",
				        ng_store_where(st), err.msg, name);
			else
				fprintf(stderr, "nodegate ingest: %s: nothing from %s was stored\n", err.msg,
				        name);
			if (json) {
				cJSON *f = cJSON_CreateObject();
				cJSON_AddStringToObject(f, "file", path);
				cJSON_AddStringToObject(f, "error", err.msg);
				cJSON_AddItemToArray(failed, f);
			}
			if (frc > rc)
				rc = frc;
		}
		free(ids);
		free(lines);
		cJSON_Delete(recs);
	}
	if (json) {
		ng_print_json(doc);
		cJSON_Delete(doc);
	}
	ng_store_close(st);
	return rc;
}

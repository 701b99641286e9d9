/* nodegate identity: what this node is, and the class key it gets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "flow/identity_report.h"

static int exec_identity(struct ng_cli *cli, int argc, char **argv);

static const struct ng_opt identity_opts[] = {
	NG_OPT_JSON("{\"profile\": ..., \"class\": ..., \"software\": ...,\n"
	 "\"template\": ...}"),
	{"template", 't', "T", "derive the class with T instead of the policy's\n"
	 "identity.class_template"},
	{"root", 'r', "DIR", "read /proc, /sys and /etc under DIR (a copy of another\n"
	 "node's files) instead of this node's"},
	NG_OPT_HELP,
	{0},
};

const struct ng_cmd_entry ng_cmd_identity_entry = {
	.name = "identity",
	.usage = "[--json] [--template T] [--root DIR]",
	.summary = "Print this node's profile and its class key.",
	.help = "",
	.opts = identity_opts,
	.help_tail =
	"The profile is what every probe record carries: a stable node id and where it\n"
	"came from, CPU, memory, NUMA layout, GPUs, InfiniBand ports, NICs, drives,\n"
	"firmware, kernel, container and tool versions. Anything that could not be read\n"
	"is left out, never guessed. The class key decides which baselines a node is\n"
	"compared with; a template field the profile lacks is an error naming it.\n"
	"Template syntax: {a.b} a value, {a.b?} a value or nothing, {a|b} the first\n"
	"present, [ ... ] kept only when all its fields are present (docs/identity.md).\n"
	"Exit status: 0, or 2 when the template gives no class for this node.\n",
	.exec = exec_identity,
};

static bool scalar(const cJSON *v)
{
	return !cJSON_IsObject(v) && !cJSON_IsArray(v);
}

static void print_scalar(const cJSON *v)
{
	if (cJSON_IsString(v))
		fputs(v->valuestring, stdout);
	else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e18)
		printf("%.0f", v->valuedouble);
	else if (cJSON_IsNumber(v))
		printf("%g", v->valuedouble);
	else if (cJSON_IsBool(v))
		fputs(cJSON_IsTrue(v) ? "yes" : "no", stdout);
	else
		fputs("-", stdout);
}

static bool all_scalar(const cJSON *o)
{
	for (const cJSON *c = o->child; c; c = c->next)
		if (!scalar(c))
			return false;
	return true;
}

static void print_value(const cJSON *v, int indent);

/* Objects of scalars on one line (a drive, a NIC); others as blocks. */
static void print_array(const cJSON *a, int indent)
{
	if (all_scalar(a)) {
		for (const cJSON *c = a->child; c; c = c->next) {
			print_scalar(c);
			fputs(c->next ? ", " : "", stdout);
		}
		putchar('\n');
		return;
	}
	putchar('\n');
	for (const cJSON *c = a->child; c; c = c->next) {
		printf("%*s- ", indent, "");
		if (cJSON_IsObject(c) && all_scalar(c)) {
			for (const cJSON *f = c->child; f; f = f->next) {
				printf("%s=", f->string);
				print_scalar(f);
				fputs(f->next ? " " : "", stdout);
			}
			putchar('\n');
		} else if (cJSON_IsObject(c)) {
			putchar('\n');
			print_value(c, indent + 2);
		} else {
			print_scalar(c);
			putchar('\n');
		}
	}
}

static void print_value(const cJSON *o, int indent)
{
	for (const cJSON *c = o->child; c; c = c->next) {
		printf("%*s%s:", indent, "", c->string);
		if (cJSON_IsObject(c)) {
			putchar('\n');
			print_value(c, indent + 2);
		} else if (cJSON_IsArray(c)) {
			if (all_scalar(c))
				putchar(' ');
			print_array(c, indent + 2);
		} else {
			putchar(' ');
			print_scalar(c);
			putchar('\n');
		}
	}
}

static void print_text(const cJSON *prof, const char *cls, const char *sw, const char *tmpl,
                       const char *why)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(prof, "node_id");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(prof, "node_id_source");
	printf("node      %s", cJSON_IsString(id) ? id->valuestring : "(unknown)");
	if (cJSON_IsString(src))
		printf("  (from %s)", src->valuestring);
	printf("\nclass     %s\nsoftware  %s (of nodegate alone; records add their tools' "
	       "versions)\ntemplate  %s\n\nprofile:\n",
	       cls ? cls : "(none)", sw, tmpl);
	print_value(prof, 2);
	if (why)
		fprintf(stderr, "nodegate identity: no class: %s\n", why);
}

static int exec_identity(struct ng_cli *cli, int argc, char **argv)
{
	bool json = false;
	const char *tmpl = cli->policy.class_template;
	ng_identity_opts o = {.root = NULL};
	int c;
	struct ng_opt_parser op;
	ng_opt_begin(&op, &ng_cmd_identity_entry, argc, argv);
	op.in_order = true;
	while ((c = ng_opt_next(&op)) != NG_OPT_END) {
		switch (c) {
		case 'j': json = true; break;
		case 't': tmpl = op.arg; break;
		case 'r': o.root = op.arg; break;
		case NG_OPT_EXIT: return op.status;
		}
	}
	if (optind < argc)
		return ng_cmd_usage_error(&ng_cmd_identity_entry, "unexpected argument \"%s\"", argv[optind]);

	ng_err err = {0};
	cJSON *doc = ng_identity_report(&o, tmpl, &err);
	if (!doc) {
		fprintf(stderr, "nodegate identity: %s\n", err.msg);
		return NG_EXIT_USAGE;
	}
	const cJSON *cls = ng_json_get(doc, "class"), *why = ng_json_get(doc, "class_error");
	const cJSON *sw = ng_json_get(doc, "software");
	if (json) {
		char *s = cJSON_Print(doc);
		printf("%s\n", s ? s : "null");
		free(s);
		if (why)
			fprintf(stderr, "nodegate identity: no class: %s\n", why->valuestring);
	} else {
		print_text(ng_json_get(doc, "profile"), cJSON_IsString(cls) ? cls->valuestring : NULL,
		           cJSON_IsString(sw) ? sw->valuestring : "", tmpl, why ? why->valuestring : NULL);
	}
	int rc = cJSON_IsString(cls) ? NG_EXIT_OK : NG_EXIT_USAGE;
	cJSON_Delete(doc);
	return rc;
}

/* Kubernetes through kubectl (kube.h). */
#include "land/kube.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "collect/spawn.h"

#define KUBE_OUTPUT_MAX 8192

static bool alnum(char c) { return isascii((unsigned char)c) && isalnum((unsigned char)c); }

bool ng_kube_value_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return true;
	if (n > NG_KUBE_VALUE_MAX || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

void ng_kube_value_of(const char *text, char out[NG_KUBE_VALUE_MAX + 1])
{
	size_t n = 0;
	bool gap = false;
	for (const char *p = text; *p && n < NG_KUBE_VALUE_MAX; p++) {
		if (alnum(*p) || *p == '.' || *p == '_' || *p == '-') {
			if (gap && n)
				out[n++] = '-';
			gap = false;
			if (n < NG_KUBE_VALUE_MAX)
				out[n++] = *p;
		} else {
			gap = true;
		}
	}
	while (n && !alnum(out[n - 1]))
		n--;
	out[n] = '\0';
	size_t lead = 0;
	while (out[lead] && !alnum(out[lead]))
		lead++;
	memmove(out, out + lead, n - lead + 1);
}

bool ng_kube_node_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
		if (!ok)
			return false;
	}
	return isalnum((unsigned char)s[0]) && isalnum((unsigned char)s[n - 1]);
}

static const char *kubectl(void)
{
	const char *k = getenv("NODEGATE_KUBECTL");
	return k && *k ? k : "kubectl";
}

/* Prints what runs ("run: kubectl ..."), or would run on a dry run, and runs
 * it: 1 a dry run (nothing ran), 0 it ran (r filled; free it), -1 it could
 * not be started (said on out). One place for what step and read_field share. */
static int run_kubectl(const ng_kube_opts *o, FILE *out, const char *what, char *const argv[],
                       ng_spawn_result *r)
{
	fprintf(out, "%s%s:", o->dry_run ? "would " : "", what);
	for (size_t i = 0; argv[i]; i++)
		fprintf(out, " %s", argv[i]);
	if (o->dry_run) {
		fputc('\n', out);
		return 1;
	}
	char errbuf[256] = "";
	if (ng_spawn_capture(argv, o->timeout_s > 0 ? o->timeout_s : NG_KUBE_TIMEOUT_S,
	                     KUBE_OUTPUT_MAX, r, errbuf, sizeof errbuf) < 0) {
		fprintf(out, ": failed: %s\n", errbuf);
		return -1;
	}
	return 0;
}

static bool ran_clean(const ng_spawn_result *r)
{
	return r->spawned && !r->timed_out && r->exit_status == 0;
}

/* ": failed: how it ended: the first line of its error output" */
static void say_failed(FILE *out, const ng_spawn_result *r)
{
	char how[256];
	ng_spawn_describe(r, how, sizeof how);
	size_t k = r->err ? strcspn(r->err, "\n") : 0;
	fprintf(out, ": failed: %s%s%.*s\n", how, k ? ": " : "", (int)(k < 200 ? k : 200),
	        r->err ? r->err : "");
}

/* Runs one kubectl command. `gone` is text in its error output that means the
 * thing to remove was already absent (not a failure). Returns 0 or 1 (failed). */
static int step(const ng_kube_opts *o, char *const argv[], const char *gone)
{
	FILE *out = o->out ? o->out : stdout;
	ng_spawn_result r;
	int ran = run_kubectl(o, out, "run", argv, &r);
	if (ran != 0)
		return ran < 0;
	int failed = 0;
	if (ran_clean(&r)) {
		fprintf(out, ": done\n");
	} else if (gone && r.spawned && !r.timed_out && r.err && strstr(r.err, gone)) {
		fprintf(out, ": already absent\n");
	} else {
		say_failed(out, &r);
		failed = 1;
	}
	ng_spawn_result_free(&r);
	return failed;
}

/* One field of the node, read with `kubectl get node NODE -o jsonpath=...`.
 * 0 read (out, trimmed; "" when the field is absent), 1 failed. A dry run
 * reads nothing: out is dry. */
static int read_field(const ng_kube_opts *o, const char *node, const char *path, char *out,
                      size_t cap, const char *dry)
{
	char *k = (char *)kubectl(), *n = (char *)node;
	char jp[160];
	snprintf(jp, sizeof jp, "jsonpath={%s}", path);
	char *argv[] = {k, "get", "node", n, "-o", jp, NULL};
	FILE *f = o->out ? o->out : stdout;
	snprintf(out, cap, "%s", o->dry_run ? dry : "");
	ng_spawn_result r;
	int ran = run_kubectl(o, f, "read", argv, &r);
	if (ran != 0)
		return ran < 0;
	int failed = !ran_clean(&r);
	if (failed) {
		say_failed(f, &r);
	} else {
		const char *v = r.out ? r.out : "";
		size_t len = strcspn(v, "\r\n");
		snprintf(out, cap, "%.*s", (int)len, v);
		fprintf(f, ": \"%s\"\n", out);
	}
	ng_spawn_result_free(&r);
	return failed;
}

#define ANNOTATION_PATH ".metadata.annotations.nodegate\\.io/cordoned"

int ng_kube_cordon(const char *node, const char *reason, const ng_kube_opts *o)
{
	char taint[sizeof NG_KUBE_TAINT_KEY + NG_KUBE_VALUE_MAX + 16];
	snprintf(taint, sizeof taint, "%s=%s:NoSchedule", NG_KUBE_TAINT_KEY, reason);
	char label[] = NG_KUBE_LABEL_KEY "=quarantined";
	char mark[] = NG_KUBE_CORDON_ANNOTATION "=true";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *cordon[] = {k, "cordon", n, NULL};
	char *marking[] = {k, "annotate", "node", n, mark, "--overwrite", NULL};
	char *tainting[] = {k, "taint", "nodes", n, taint, "--overwrite", NULL};
	char *labelling[] = {k, "label", "nodes", n, label, "--overwrite", NULL};
	FILE *f = o->out ? o->out : stdout;
	/* Whose cordon it is decides whether release may undo it: only one
	 * nodegate set is marked ours (the annotation). */
	char unsched[16], ours[16];
	int failed = read_field(o, node, ".spec.unschedulable", unsched, sizeof unsched, "");
	if (failed) {
		fprintf(f, "cordon: not known whether %s is cordoned already: cordoned, not marked as "
		           "nodegate's (release will leave the cordon)\n",
		        node);
		failed += step(o, cordon, NULL);
	} else if (strcmp(unsched, "true") == 0) {
		failed += read_field(o, node, ANNOTATION_PATH, ours, sizeof ours, "");
		fprintf(f, "cordon: %s is already cordoned%s: left as it is\n", node,
		        strcmp(ours, "true") == 0 ? " by nodegate" : " by someone else (release will not "
		                                                      "uncordon it)");
	} else {
		int c = step(o, cordon, NULL);
		failed += c;
		if (!c)
			failed += step(o, marking, NULL);
	}
	return failed + step(o, tainting, NULL) + step(o, labelling, NULL);
}

/* The cordon is undone only when nodegate set it, as a Slurm drain is
 * resumed only when its reason is nodegate's. Returns the steps that failed. */
static int uncordon_ours(const char *node, const ng_kube_opts *o)
{
	char unmark[] = NG_KUBE_CORDON_ANNOTATION "-";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *uncordon[] = {k, "uncordon", n, NULL};
	char *unmarking[] = {k, "annotate", "node", n, unmark, NULL};
	int failed = 0;
	char ours[16];
	int r = read_field(o, node, ANNOTATION_PATH, ours, sizeof ours, "true");
	FILE *f = o->out ? o->out : stdout;
	if (r) {
		fprintf(f, "cordon: not known whether nodegate set it: left alone\n");
		return failed + r;
	}
	if (strcmp(ours, "true") != 0) {
		fprintf(f, "cordon: not nodegate's (no %s=true annotation): left alone\n",
		        NG_KUBE_CORDON_ANNOTATION);
		return failed;
	}
	int u = step(o, uncordon, NULL);
	return failed + u + (u ? 0 : step(o, unmarking, "not found"));
}

int ng_kube_release(const char *node, const ng_kube_opts *o)
{
	char untaint[] = NG_KUBE_TAINT_KEY ":NoSchedule-";
	char unprobation[] = NG_KUBE_PROBATION_KEY ":NoSchedule-";
	char unlabel[] = NG_KUBE_LABEL_KEY "-";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *untainting[] = {k, "taint", "nodes", n, untaint, NULL};
	char *unprobing[] = {k, "taint", "nodes", n, unprobation, NULL};
	char *unlabelling[] = {k, "label", "nodes", n, unlabel, NULL};
	int failed = step(o, untainting, "not found") + step(o, unprobing, "not found") +
	             step(o, unlabelling, "not found");
	return failed + uncordon_ours(node, o);
}

int ng_kube_probation(const char *node, long long case_id, const ng_kube_opts *o)
{
	char untaint[] = NG_KUBE_TAINT_KEY ":NoSchedule-";
	char taint[sizeof NG_KUBE_PROBATION_KEY + 48];
	snprintf(taint, sizeof taint, "%s=case-%lld:NoSchedule", NG_KUBE_PROBATION_KEY, case_id);
	char label[] = NG_KUBE_LABEL_KEY "=probation";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *untainting[] = {k, "taint", "nodes", n, untaint, NULL};
	char *tainting[] = {k, "taint", "nodes", n, taint, "--overwrite", NULL};
	char *labelling[] = {k, "label", "nodes", n, label, "--overwrite", NULL};
	/* The probation taint goes on before the quarantine's comes off, so no
	 * ordinary pod lands in between. */
	int failed = step(o, tainting, NULL);
	failed += step(o, untainting, "not found") + step(o, labelling, NULL);
	return failed + uncordon_ours(node, o);
}

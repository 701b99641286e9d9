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

/* Runs one kubectl command. `gone` is text in its error output that means the
 * thing to remove was already absent (not a failure). Returns 0 or 1 (failed). */
static int step(const ng_kube_opts *o, char *const argv[], const char *gone)
{
	FILE *out = o->out ? o->out : stdout;
	fputs(o->dry_run ? "would run:" : "run:", out);
	for (size_t i = 0; argv[i]; i++)
		fprintf(out, " %s", argv[i]);
	if (o->dry_run) {
		fputc('\n', out);
		return 0;
	}
	ng_spawn_result r;
	char errbuf[256] = "";
	if (ng_spawn_capture(argv, o->timeout_s > 0 ? o->timeout_s : NG_KUBE_TIMEOUT_S,
	                     KUBE_OUTPUT_MAX, &r, errbuf, sizeof errbuf) < 0) {
		fprintf(out, ": failed: %s\n", errbuf);
		return 1;
	}
	int failed = 0;
	if (r.spawned && !r.timed_out && r.exit_status == 0) {
		fprintf(out, ": done\n");
	} else if (gone && r.spawned && !r.timed_out && r.err && strstr(r.err, gone)) {
		fprintf(out, ": already absent\n");
	} else {
		char how[256];
		ng_spawn_describe(&r, how, sizeof how);
		size_t k = r.err ? strcspn(r.err, "\n") : 0;
		fprintf(out, ": failed: %s%s%.*s\n", how, k ? ": " : "", (int)(k < 200 ? k : 200),
		        r.err ? r.err : "");
		failed = 1;
	}
	ng_spawn_result_free(&r);
	return failed;
}

int ng_kube_cordon(const char *node, const char *reason, const ng_kube_opts *o)
{
	char taint[sizeof NG_KUBE_TAINT_KEY + NG_KUBE_VALUE_MAX + 16];
	snprintf(taint, sizeof taint, "%s=%s:NoSchedule", NG_KUBE_TAINT_KEY, reason);
	char label[] = NG_KUBE_LABEL_KEY "=quarantined";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *cordon[] = {k, "cordon", n, NULL};
	char *tainting[] = {k, "taint", "nodes", n, taint, "--overwrite", NULL};
	char *labelling[] = {k, "label", "nodes", n, label, "--overwrite", NULL};
	return step(o, cordon, NULL) + step(o, tainting, NULL) + step(o, labelling, NULL);
}

int ng_kube_release(const char *node, const ng_kube_opts *o)
{
	char untaint[] = NG_KUBE_TAINT_KEY ":NoSchedule-";
	char unlabel[] = NG_KUBE_LABEL_KEY "-";
	char *k = (char *)kubectl(), *n = (char *)node;
	char *untainting[] = {k, "taint", "nodes", n, untaint, NULL};
	char *unlabelling[] = {k, "label", "nodes", n, unlabel, NULL};
	char *uncordon[] = {k, "uncordon", n, NULL};
	return step(o, untainting, "not found") + step(o, unlabelling, "not found") +
	       step(o, uncordon, NULL);
}

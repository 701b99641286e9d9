/* nodegate-scontrol-synth: a stand-in for scontrol holding one node, for
 * `nodegate selftest`'s admission-queue rows (src/cli/selftest_queue.c).
 * The node lives in the file $NODEGATE_SYNTH_SCONTROL, one key=value a
 * line:
 *
 *   name=st-queue
 *   state=IDLE
 *   available=gpu,unscreened     (AvailableFeatures)
 *   active=gpu,unscreened        (ActiveFeatures)
 *   comment=                     (empty: none)
 *
 * It answers what the admission queue asks, as scontrol does:
 *   show node NAME -o        one line: NodeName=... AvailableFeatures=...
 *                            ActiveFeatures=... State=... Comment=...
 *   update NodeName=NAME [AvailableFeatures=L] [ActiveFeatures=L] [Comment=T]
 * and refuses, with scontrol's exit status 1, what scontrol refuses: another
 * node, an unknown keyword, ActiveFeatures that are not all available.
 * Anything else is refused too, so a call the queue did not make cannot
 * pass unseen. Every call is appended to $NODEGATE_SYNTH_SCONTROL.log, one
 * a line, its arguments separated by a tab. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/atomic_file.h"

#define FIELD 2048

struct node {
	char name[256], state[64], available[FIELD], active[FIELD], comment[FIELD];
};

static void set(char *dst, size_t cap, const char *v)
{
	snprintf(dst, cap, "%s", v);
}

static int load(const char *path, struct node *n)
{
	memset(n, 0, sizeof *n);
	set(n->state, sizeof n->state, "IDLE");
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[FIELD + 64];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		const char *v = eq + 1;
		if (strcmp(line, "name") == 0)
			set(n->name, sizeof n->name, v);
		else if (strcmp(line, "state") == 0)
			set(n->state, sizeof n->state, v);
		else if (strcmp(line, "available") == 0)
			set(n->available, sizeof n->available, v);
		else if (strcmp(line, "active") == 0)
			set(n->active, sizeof n->active, v);
		else if (strcmp(line, "comment") == 0)
			set(n->comment, sizeof n->comment, v);
	}
	fclose(f);
	return n->name[0] ? 0 : -1;
}

static int save(const char *path, const struct node *n)
{
	char text[4 * FIELD + 512];
	int len = snprintf(text, sizeof text, "name=%s\nstate=%s\navailable=%s\nactive=%s\ncomment=%s\n",
	                   n->name, n->state, n->available, n->active, n->comment);
	ng_err err;
	if (len < 0 || (size_t)len >= sizeof text ||
	    ng_write_file_atomic(path, text, (size_t)len, &err) < 0) {
		fprintf(stderr, "scontrol-synth: cannot keep the node in %s\n", path);
		return -1;
	}
	return 0;
}

static void log_call(const char *path, int argc, char **argv)
{
	char p[4096];
	snprintf(p, sizeof p, "%s.log", path);
	FILE *f = fopen(p, "a");
	if (!f)
		return;
	for (int i = 1; i < argc; i++)
		fprintf(f, "%s%s", i > 1 ? "\t" : "", argv[i]);
	fputc('\n', f);
	fclose(f);
}

static bool has(const char *list, const char *w, size_t n)
{
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, w, n) == 0)
			return true;
		p += len;
		p += *p == ',';
	}
	return false;
}

/* Every feature of active is one of available (Slurm refuses otherwise). */
static bool subset(const char *active, const char *available)
{
	for (const char *p = active; *p;) {
		size_t len = strcspn(p, ",");
		if (len && !has(available, p, len))
			return false;
		p += len;
		p += *p == ',';
	}
	return true;
}

static const char *or_null(const char *s)
{
	return s[0] ? s : "(null)";
}

static int show(const struct node *n, int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[4], "-o") != 0) {
		fprintf(stderr, "scontrol-synth: only `show node NAME -o` is answered\n");
		return 1;
	}
	if (strcmp(argv[3], n->name) != 0) {
		printf("Node %s not found\n", argv[3]);
		return 1;
	}
	printf("NodeName=%s Arch=x86_64 CoresPerSocket=8 CPUAlloc=0 CPUTot=16 "
	       "AvailableFeatures=%s ActiveFeatures=%s Gres=gpu:8 NodeAddr=%s NodeHostName=%s "
	       "RealMemory=64000 State=%s Partitions=admission Comment=%s Reason=(null)\n",
	       n->name, or_null(n->available), or_null(n->active), n->name, n->name, n->state,
	       or_null(n->comment));
	return 0;
}

static int update(const char *path, struct node *n, int argc, char **argv)
{
	struct node want = *n;
	bool named = false;
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "Invalid input: %s\n", argv[i]);
			return 1;
		}
		size_t k = (size_t)(eq - argv[i]);
		const char *v = eq + 1;
		if (k == 8 && strncasecmp(argv[i], "NodeName", k) == 0) {
			if (strcmp(v, n->name) != 0) {
				fprintf(stderr, "slurm_update error: Invalid node name specified\n");
				return 1;
			}
			named = true;
		} else if ((k == 17 && strncasecmp(argv[i], "AvailableFeatures", k) == 0) ||
		           (k == 8 && strncasecmp(argv[i], "Features", k) == 0)) {
			set(want.available, sizeof want.available, v);
		} else if (k == 14 && strncasecmp(argv[i], "ActiveFeatures", k) == 0) {
			set(want.active, sizeof want.active, v);
		} else if (k == 7 && strncasecmp(argv[i], "Comment", k) == 0) {
			set(want.comment, sizeof want.comment, v);
		} else {
			fprintf(stderr, "Update of this parameter is not supported: %s\n", argv[i]);
			return 1;
		}
	}
	if (!named) {
		fprintf(stderr, "No valid entity in update command\n");
		return 1;
	}
	if (!subset(want.active, want.available)) {
		fprintf(stderr, "slurm_update error: Invalid feature specification\n");
		return 1;
	}
	return save(path, &want) < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *path = getenv("NODEGATE_SYNTH_SCONTROL");
	if (!path || !*path) {
		fprintf(stderr, "scontrol-synth: NODEGATE_SYNTH_SCONTROL names no node file\n");
		return 1;
	}
	log_call(path, argc, argv);
	struct node n;
	if (load(path, &n) < 0) {
		fprintf(stderr, "slurm_load_node error: Unable to contact slurm controller\n");
		return 1;
	}
	if (argc >= 4 && strcmp(argv[1], "show") == 0 && strcmp(argv[2], "node") == 0)
		return show(&n, argc, argv);
	if (argc >= 3 && strcmp(argv[1], "update") == 0)
		return update(path, &n, argc, argv);
	fprintf(stderr, "scontrol-synth: not a call the admission queue makes: %s\n",
	        argc > 1 ? argv[1] : "(none)");
	return 1;
}

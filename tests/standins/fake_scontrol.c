/* A stand-in for scontrol: one node whose state lives in the file
 * $FAKE_SCONTROL_STATE, four lines:
 *
 *   name=node1
 *   state=IDLE
 *   reason=
 *   star=0          (reads left that show the state with '*', as right after RESUME)
 *
 * It answers what nodegate asks, the way scontrol 22.05 does:
 *   show node NAME -o                        one line, ... State=... Reason=TEXT [root@time]
 *   update NodeName=NAME State=DRAIN Reason=TEXT
 *   update NodeName=NAME State=RESUME
 * and misbehaves as the environment says:
 *   FAKE_SCONTROL_UNREACHABLE=K  the first K calls cannot reach the controller
 *   FAKE_SCONTROL_HANG=all|update|show  sleeps (until killed) on those calls
 *   FAKE_SCONTROL_IGNORE_TERM=1  ... and ignores SIGTERM while it does
 *   FAKE_SCONTROL_REFUSE=1       updates fail: permission denied
 *   FAKE_SCONTROL_LIE=1          updates exit 0 and change nothing
 *   FAKE_SCONTROL_STAR=N         after RESUME, N reads show IDLE* (default 1)
 * Every call's argv is appended to $FAKE_SCONTROL_STATE.log (one call per
 * line, arguments separated by a tab) and SLURM_CONF to .conf, and the calls
 * are counted in $FAKE_SCONTROL_STATE.calls. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct node {
	char name[256], state[256], reason[4096];
	int star;
};

static const char *path_of(const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", getenv("FAKE_SCONTROL_STATE"), suffix);
	return buf;
}

static void load(struct node *n)
{
	memset(n, 0, sizeof *n);
	snprintf(n->name, sizeof n->name, "node1");
	snprintf(n->state, sizeof n->state, "IDLE");
	char p[4096];
	FILE *f = fopen(path_of("", p, sizeof p), "r");
	if (!f)
		return;
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "name=", 5) == 0)
			snprintf(n->name, sizeof n->name, "%.255s", line + 5);
		else if (strncmp(line, "state=", 6) == 0)
			snprintf(n->state, sizeof n->state, "%.255s", line + 6);
		else if (strncmp(line, "reason=", 7) == 0)
			snprintf(n->reason, sizeof n->reason, "%.4095s", line + 7);
		else if (strncmp(line, "star=", 5) == 0)
			n->star = atoi(line + 5);
	}
	fclose(f);
}

static void save(const struct node *n)
{
	char p[4096], tmp[4200];
	path_of("", p, sizeof p);
	snprintf(tmp, sizeof tmp, "%s.tmp", p);
	FILE *f = fopen(tmp, "w");
	if (!f)
		exit(70);
	fprintf(f, "name=%s\nstate=%s\nreason=%s\nstar=%d\n", n->name, n->state, n->reason, n->star);
	fclose(f);
	rename(tmp, p);
}

static int bump_calls(void)
{
	char p[4096];
	path_of(".calls", p, sizeof p);
	int k = 0;
	FILE *f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%d", &k) != 1)
			k = 0;
		fclose(f);
	}
	k++;
	f = fopen(p, "w");
	if (f) {
		fprintf(f, "%d\n", k);
		fclose(f);
	}
	return k;
}

static void log_call(int argc, char **argv)
{
	char p[4096];
	FILE *f = fopen(path_of(".log", p, sizeof p), "a");
	if (f) {
		for (int i = 1; i < argc; i++)
			fprintf(f, "%s%s", i > 1 ? "\t" : "", argv[i]);
		fputc('\n', f);
		fclose(f);
	}
	const char *conf = getenv("SLURM_CONF");
	f = fopen(path_of(".conf", p, sizeof p), "w");
	if (f) {
		fprintf(f, "%s\n", conf ? conf : "(unset)");
		fclose(f);
	}
}

static void hang(void)
{
	if (getenv("FAKE_SCONTROL_IGNORE_TERM"))
		signal(SIGTERM, SIG_IGN);
	for (;;)
		pause();
}

/* The base state without flags: IDLE+DRAIN -> IDLE. */
static void base_of(const char *state, char *out, size_t len)
{
	size_t n = strcspn(state, "+*");
	snprintf(out, len, "%.*s", (int)n, state);
}

int main(int argc, char **argv)
{
	if (!getenv("FAKE_SCONTROL_STATE")) {
		fprintf(stderr, "fake_scontrol: FAKE_SCONTROL_STATE is not set\n");
		return 64;
	}
	log_call(argc, argv);
	int call = bump_calls();
	const char *h = getenv("FAKE_SCONTROL_HANG");
	bool is_update = argc > 1 && strcmp(argv[1], "update") == 0;
	if (h && (strcmp(h, "all") == 0 || (strcmp(h, "update") == 0 && is_update) ||
	          (strcmp(h, "show") == 0 && !is_update)))
		hang();
	const char *un = getenv("FAKE_SCONTROL_UNREACHABLE");
	if (un && call <= atoi(un)) {
		fprintf(stderr, "%s: Unable to contact slurm controller (connect failure)\n",
		        is_update ? "slurm_update error" : "slurm_load_node error");
		return 1;
	}
	struct node n;
	load(&n);
	if (argc >= 4 && strcmp(argv[1], "show") == 0 && strcmp(argv[2], "node") == 0) {
		if (strcmp(argv[3], n.name) != 0) {
			printf("Node %s not found\n", argv[3]);
			return 1;
		}
		char state[300];
		snprintf(state, sizeof state, "%s%s", n.state, n.star > 0 ? "*" : "");
		if (n.star > 0) {
			n.star--;
			save(&n);
		}
		printf("NodeName=%s Arch=x86_64 CoresPerSocket=2 CPUAlloc=0 CPUTot=2 CPULoad=0.00 "
		       "AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:4 NodeAddr=127.0.0.1 "
		       "NodeHostName=localhost Version=22.05.8 OS=Linux RealMemory=1000 AllocMem=0 "
		       "Sockets=1 Boards=1 State=%s ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
		       "MCS_label=N/A Partitions=debug CfgTRES=cpu=2,mem=1000M,billing=2,gres/gpu=4 "
		       "AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "
		       "ExtSensorsWatts=0 ExtSensorsTemp=n/s",
		       n.name, state);
		if (n.reason[0])
			printf(" Reason=%s [root@2026-01-01T00:00:00]", n.reason);
		printf("\n");
		return 0;
	}
	if (is_update) {
		const char *name = NULL, *st = NULL, *reason = NULL;
		for (int i = 2; i < argc; i++) {
			if (strncasecmp(argv[i], "NodeName=", 9) == 0)
				name = argv[i] + 9;
			else if (strncasecmp(argv[i], "State=", 6) == 0)
				st = argv[i] + 6;
			else if (strncasecmp(argv[i], "Reason=", 7) == 0)
				reason = argv[i] + 7;
			else {
				fprintf(stderr, "Update of this parameter is not supported: %s\n", argv[i]);
				return 1;
			}
		}
		if (!name || !st) {
			fprintf(stderr, "Invalid update\n");
			return 1;
		}
		if (strcmp(name, n.name) != 0) {
			fprintf(stderr, "slurm_update error: Invalid node name specified\n");
			return 1;
		}
		if (getenv("FAKE_SCONTROL_REFUSE")) {
			fprintf(stderr, "slurm_update error: Access/permission denied\n");
			return 1;
		}
		if (getenv("FAKE_SCONTROL_LIE"))
			return 0;
		char base[200];
		base_of(n.state, base, sizeof base);
		if (strcasecmp(st, "DRAIN") == 0) {
			if (!reason || !*reason) {
				fprintf(stderr, "You must specify a reason when DOWNING or DRAINING a node. "
				                "Request denied\n");
				return 1;
			}
			snprintf(n.state, sizeof n.state, "%s+DRAIN", base);
			snprintf(n.reason, sizeof n.reason, "%s", reason);
			for (char *p = n.reason; *p; p++)
				if (*p == '\n' || *p == '\r')
					*p = ' ';
		} else if (strcasecmp(st, "RESUME") == 0) {
			snprintf(n.state, sizeof n.state, "%s", strcmp(base, "DOWN") == 0 ? "IDLE" : base);
			n.reason[0] = '\0';
			const char *star = getenv("FAKE_SCONTROL_STAR");
			n.star = star ? atoi(star) : 1;
		} else if (strcasecmp(st, "DOWN") == 0) {
			snprintf(n.state, sizeof n.state, "DOWN");
			snprintf(n.reason, sizeof n.reason, "%s", reason ? reason : "");
		} else {
			fprintf(stderr, "Invalid node state specified\n");
			return 1;
		}
		save(&n);
		return 0;
	}
	fprintf(stderr, "fake_scontrol: unsupported command\n");
	return 1;
}

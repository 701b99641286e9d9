/* A stand-in fleet for `nodegate fabric`: one program that answers as srun,
 * all_reduce_perf, ib_write_bw or ib_read_bw, whichever name (a symlink) it
 * is run under. The fleet is the JSON file $NODEGATE_FABRIC_SYNTH names:
 *
 *   {"busbw": 180, "rail_gbps": 390, "hcas": ["mlx5_0", ...], "root": DIR,
 *    "nodes": {"n07": {"slow": 0.6}, "n03": {"socket": true},
 *              "n05": {"dead": true}, "n09": {"rails": {"mlx5_3": 0.5}},
 *              "n02": {"rise": "mlx5_0/symbol_error"}},
 *    "bad_pairs": [["n01", "n02"]]}
 *
 * srun --nodelist=a,b,... CMD runs CMD here with $NODEGATE_FABRIC_SYNTH_NODES
 * set (and, for one node, $NODEGATE_FABRIC_ROOT=ROOT/NODE, the node's sysfs);
 * a dead node makes it hang, as a node that does not answer does. The tools
 * print what the real ones print (NCCL INFO lines, the nccl-tests table,
 * perftest's client table) with the rate the fleet gives that set of nodes:
 * the slowest node's factor, halved by a bad pair, an all-reduce over every
 * rail at their mean factor. A node with "rise" adds 7 to that counter of
 * its sysfs tree whenever it takes part in a test. Launched by a real srun
 * instead (tests/slurm/fabric_slurm.py), the nodes are the step's
 * ($SLURM_STEP_NODELIST) and only rank 0 prints. Test program, not product. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse/sacct.h"

static cJSON *fleet;

static cJSON *load(void)
{
	const char *p = getenv("NODEGATE_FABRIC_SYNTH");
	FILE *f = p ? fopen(p, "rb") : NULL;
	if (!f) {
		fprintf(stderr, "fabric-synth: no fleet file ($NODEGATE_FABRIC_SYNTH)\n");
		exit(2);
	}
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *j = cJSON_Parse(buf);
	if (!j) {
		fprintf(stderr, "fabric-synth: the fleet file is not JSON\n");
		exit(2);
	}
	return j;
}

static const cJSON *node_cfg(const char *node)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(fleet, "nodes"), node);
}

static double num(const cJSON *o, const char *k, double d)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : d;
}

static size_t split_nodes(char *list, char **out, size_t cap)
{
	size_t n = 0;
	for (char *s = NULL, *t = strtok_r(list, ",", &s); t && n < cap; t = strtok_r(NULL, ",", &s))
		out[n++] = t;
	return n;
}

static double rail_factor(const char *node, const char *hca)
{
	const cJSON *r = cJSON_GetObjectItem(cJSON_GetObjectItem(node_cfg(node), "rails"), hca);
	return cJSON_IsNumber(r) ? r->valuedouble : 1.0;
}

/* The set's factor over the rails used (hca NULL: every rail, at their mean). */
static double factor(char **nodes, size_t n, const char *hca)
{
	double f = 1;
	const cJSON *hcas = cJSON_GetObjectItem(fleet, "hcas");
	for (size_t i = 0; i < n; i++) {
		double s = num(node_cfg(nodes[i]), "slow", 1);
		double r = 0;
		int k = 0;
		if (hca) {
			r = rail_factor(nodes[i], hca);
			k = 1;
		} else {
			for (const cJSON *h = hcas ? hcas->child : NULL; h; h = h->next, k++)
				r += rail_factor(nodes[i], h->valuestring);
		}
		s *= k ? r / k : 1;
		if (s < f)
			f = s;
	}
	const cJSON *bad = cJSON_GetObjectItem(fleet, "bad_pairs");
	for (const cJSON *p = bad ? bad->child : NULL; p; p = p->next) {
		int hits = 0;
		for (const cJSON *m = p->child; m; m = m->next)
			for (size_t i = 0; i < n; i++)
				hits += strcmp(m->valuestring, nodes[i]) == 0;
		if (hits >= 2)
			f *= 0.5;
	}
	return f;
}

static void rise(char **nodes, size_t n)
{
	const char *root = cJSON_GetStringValue(cJSON_GetObjectItem(fleet, "root"));
	for (size_t i = 0; root && i < n; i++) {
		const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(node_cfg(nodes[i]), "rise"));
		if (!r)
			continue;
		char hca[64], counter[64], path[4096];
		if (sscanf(r, "%63[^/]/%63s", hca, counter) != 2)
			continue;
		snprintf(path, sizeof path, "%s/%s/sys/class/infiniband/%s/ports/1/counters/%s", root,
		         nodes[i], hca, counter);
		unsigned long long v = 0;
		FILE *f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%llu", &v) != 1)
				v = 0;
			fclose(f);
		}
		f = fopen(path, "w");
		if (f) {
			fprintf(f, "%llu\n", v + 7);
			fclose(f);
		}
	}
}

static int launcher(int argc, char **argv)
{
	char *list = NULL;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strncmp(argv[i], "--nodelist=", 11) == 0)
			list = argv[i] + 11;
		else if ((strcmp(argv[i], "-w") == 0 || strcmp(argv[i], "--nodelist") == 0) && i + 1 < argc)
			list = argv[++i];
	}
	if (!list || i >= argc) {
		fprintf(stderr, "srun: error: no nodelist or no command\n");
		return 1;
	}
	char copy[65536];
	snprintf(copy, sizeof copy, "%s", list);
	char *nodes[4096];
	size_t n = split_nodes(copy, nodes, 4096);
	for (size_t k = 0; k < n; k++)
		if (cJSON_IsTrue(cJSON_GetObjectItem(node_cfg(nodes[k]), "dead"))) {
			sleep(3600); /* the node does not answer */
			return 1;
		}
	setenv("NODEGATE_FABRIC_SYNTH_NODES", list, 1);
	const char *root = cJSON_GetStringValue(cJSON_GetObjectItem(fleet, "root"));
	if (n == 1 && root) {
		char r[4096];
		snprintf(r, sizeof r, "%s/%s", root, nodes[0]);
		setenv("NODEGATE_FABRIC_ROOT", r, 1);
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "srun: error: execve(): %s: %s\n", argv[i], strerror(errno));
	return 2;
}

struct names {
	char *buf, **v;
	size_t used, cap, n;
};

static int one_name(const char *name, size_t len, void *arg)
{
	struct names *ns = arg;
	if (ns->n == 4096 || ns->used + len + 1 > ns->cap)
		return 1;
	memcpy(ns->buf + ns->used, name, len + 1);
	ns->v[ns->n++] = ns->buf + ns->used;
	ns->used += len + 1;
	return 0;
}

/* The test's nodes: from the stand-in srun, or, launched by a real srun
 * (several slurmd on one host), the step's node list as Slurm writes it
 * ("fab[1-2]"). */
static char **env_nodes(size_t *n)
{
	static char copy[65536];
	static char *nodes[4096];
	const char *l = getenv("NODEGATE_FABRIC_SYNTH_NODES");
	const char *step = getenv("SLURM_STEP_NODELIST");
	if (!l && step && *step) {
		struct names ns = {copy, nodes, 0, sizeof copy, 0};
		if (ng_hostlist_expand(step, strlen(step), 4096, one_name, &ns) > 0) {
			*n = ns.n;
			return nodes;
		}
	}
	snprintf(copy, sizeof copy, "%s", l ? l : "localhost");
	*n = split_nodes(copy, nodes, 4096);
	return nodes;
}

static int all_reduce(int argc, char **argv)
{
	int cycles = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0) {
			printf("USAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] \n\t[-g,--ngpus <gpus per thread>] \n"
			       "\t[-b,--minbytes <min size in bytes>] \n\t[-e,--maxbytes <max size in bytes>] \n"
			       "\t[-f,--stepfactor <increment factor>] \n\t[-n,--iters <iteration count>] \n"
			       "\t[-w,--warmup_iters <warmup iteration count>] \n\t[-N,--run_cycles <cycle count>] \n"
			       "\t[-c,--check <0/1>] \n\t[-h,--help]\n");
			return 0;
		}
		if (strcmp(argv[i], "-N") == 0 && i + 1 < argc)
			cycles = atoi(argv[i + 1]);
	}
	if (cycles < 1 || cycles > 50)
		cycles = 1;
	/* Under a real srun every task runs this; as with MPI, only rank 0 prints. */
	const char *rank = getenv("SLURM_PROCID");
	if (rank && strcmp(rank, "0") != 0) {
		usleep((useconds_t)(num(fleet, "seconds", 0.05) * 1e6));
		return 0;
	}
	size_t n;
	char **nodes = env_nodes(&n);
	const char *hca_env = getenv("NCCL_IB_HCA");
	while (hca_env && *hca_env == '=')
		hca_env++;
	bool socket = false;
	for (size_t i = 0; i < n; i++)
		socket = socket || cJSON_IsTrue(cJSON_GetObjectItem(node_cfg(nodes[i]), "socket"));
	double bw = num(fleet, "busbw", 180) * factor(nodes, n, hca_env && *hca_env ? hca_env : NULL);
	const cJSON *all_hcas = cJSON_GetObjectItem(fleet, "hcas");
	if (hca_env && *hca_env && cJSON_GetArraySize(all_hcas) > 0)
		bw /= cJSON_GetArraySize(all_hcas); /* one rail carries its share */
	usleep((useconds_t)(num(fleet, "seconds", 0.05) * 1e6));
	rise(nodes, n);
	if (getenv("NCCL_DEBUG")) {
		const cJSON *hcas = cJSON_GetObjectItem(fleet, "hcas");
		if (socket) {
			printf("%s:100:100 [0] NCCL INFO NET/IB : No device found.\n", nodes[0]);
			printf("%s:100:100 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.1<0>\n", nodes[0]);
			printf("%s:100:100 [0] NCCL INFO Using network Socket\n", nodes[0]);
		} else {
			printf("%s:100:100 [0] NCCL INFO NET/IB : Using", nodes[0]);
			int k = 0;
			for (const cJSON *h = hcas ? hcas->child : NULL; h; h = h->next)
				if (!hca_env || !*hca_env || strcmp(hca_env, h->valuestring) == 0)
					printf(" [%d]%s:1/IB", k++, h->valuestring);
			printf(" ; OOB ib0:10.0.0.1<0>\n");
			printf("%s:100:100 [0] NCCL INFO Using network IB\n", nodes[0]);
		}
		for (size_t i = 0; i < n; i++)
			printf("%s:100:101 [0] NCCL INFO Channel 00/0 : %zu[0] -> %zu[0] [send] via %s\n",
			       nodes[0], i, (i + 1) % n, socket ? "NET/Socket/0" : "NET/IB/0/GDRDMA");
	}
	printf("# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902\n"
	       "# Collective test starting: all_reduce_perf\n"
	       "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 "
	       "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n");
	for (size_t i = 0; i < n && i < 512; i++)
		printf("#  Rank %2zu Group  0 Pid  %5zu on %10s device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n", i,
		       1000 + i, nodes[i]);
	printf("#\n#                                                              out-of-place                       in-place          \n"
	       "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
	       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
	double ratio = n > 1 ? 2.0 * (double)(n - 1) / (double)n : 1;
	for (int c = 0; c < cycles; c++) {
		double b = bw * (1 + 0.002 * (c - cycles / 2));
		double alg = b / ratio, t = 1073741824.0 / (alg * 1e3);
		printf("  1073741824     268435456     float     sum      -1  %7.1f  %6.2f  %6.2f       0  %7.1f  %6.2f  %6.2f       0\n",
		       t, alg, b, t, alg, b);
	}
	printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.2f \n#\n"
	       "# Collective test concluded: all_reduce_perf\n#\n\n", bw);
	return 0;
}

static int perftest(const char *prog, int argc, char **argv)
{
	const char *hca = "mlx5_0", *server = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0) {
			printf(" Usage:\n   %s            start a server and wait for connection\n"
			       "   %s <host>     connect to server at <host>\n\n Options:\n"
			       "  -d, --ib-dev=<dev>  Use IB device <dev>\n  -D, --duration  Run test for a customized period of seconds.\n"
			       "  -F, --CPU-freq  Do not show a warning even if cpufreq_ondemand module is loaded\n"
			       "  -a, --all  Run sizes from 2 till 2^23\n", prog, prog);
			return 0;
		}
		if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
			hca = argv[++i];
		else if (strcmp(argv[i], "-D") == 0 && i + 1 < argc)
			i++;
		else if (argv[i][0] != '-')
			server = argv[i];
	}
	size_t n;
	char **nodes = env_nodes(&n);
	usleep((useconds_t)(num(fleet, "seconds", 0.05) * 1e6));
	if (!server) {
		printf("\n************************************\n* Waiting for client to connect... *\n"
		       "************************************\n");
		return 0;
	}
	char *pair[2] = {nodes[0], (char *)server};
	rise(pair, 2);
	double gbps = num(fleet, "rail_gbps", 390) * factor(pair, 2, hca);
	double mib = gbps * 1e9 / (1048576.0 * 8);
	const char *title = strstr(prog, "read") ? "RDMA_Read BW Test" : "RDMA_Write BW Test";
	printf("---------------------------------------------------------------------------------------\n"
	       "                    %s\n"
	       " Dual-port       : OFF\t\tDevice         : %s\n"
	       " Number of qps   : 1\t\tTransport type : IB\n"
	       " Connection type : RC\t\tUsing SRQ      : OFF\n"
	       " TX depth        : 128\n CQ Moderation   : 100\n Mtu             : 4096[B]\n"
	       " Link type       : IB\n Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n"
	       " Data ex. method : Ethernet\n"
	       "---------------------------------------------------------------------------------------\n"
	       " local address: LID 0x11 QPN 0x0100 PSN 0x000aaa RKey 0x00b1 VAddr 0x007f0000a000\n"
	       " remote address: LID 0x12 QPN 0x0200 PSN 0x000bbb RKey 0x00b2 VAddr 0x007f0000b000\n"
	       "---------------------------------------------------------------------------------------\n"
	       " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
	       " 65536      500000           0.00               %.2f\t\t   %.6f\n"
	       "---------------------------------------------------------------------------------------\n",
	       title, hca, mib, mib / 65536.0 * 1048576.0 / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	char *name = basename(argv[0]);
	fleet = load();
	int rc;
	if (strcmp(name, "srun") == 0)
		rc = launcher(argc, argv);
	else if (strstr(name, "all_reduce"))
		rc = all_reduce(argc, argv);
	else if (strncmp(name, "ib_", 3) == 0)
		rc = perftest(name, argc, argv);
	else {
		fprintf(stderr, "fabric-synth: run me as srun, all_reduce_perf or ib_write_bw (a symlink)\n");
		rc = 2;
	}
	cJSON_Delete(fleet);
	return rc;
}

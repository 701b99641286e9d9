/* `nodegate epilog` on an 8-GPU synthetic node, beside a process that does
 * nothing, in one run.
 *
 * Slurm runs the Epilog after every job and holds the node until it ends, so
 * its wall time is time no job can use. Each round runs, interleaved so both
 * see the same machine: the epilog itself (8 default H100s from the synthetic
 * NVML library, SLURM_JOB_GPUS=0-7, a kernel log of --kmsg-kib KiB of
 * ordinary lines with a few Xids for other GPUs, no store, output to
 * /dev/null), `nodegate --version` (the same binary's start-up: loader,
 * shared libraries, main) and /bin/true (fork + exec alone). Prints the
 * median and p90 of each and the epilog's ratios to the references, and
 * the shared libraries the binary loads on the SQLite path (the dynamic
 * loader's own list, LD_TRACE_LOADED_OBJECTS, as ldd reads it; libpq is
 * loaded only for a postgresql:// store, so it must not be there).
 * Targets (issue 17, a lean start-up): the epilog's median at most 3 ms;
 * `nodegate --version` at most 2x /bin/true; at most 10 shared libraries.
 * Exit 0 all met, 1 one missed, 2 did not run. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "collect/spawn.h"
#include "core/atomic_file.h"

#define TARGET_MS 3.0
#define TARGET_VERSION_RATIO 2.0
#define TARGET_LIBS 10

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The q-quantile of sorted v (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* The shared objects the loader maps for the binary (the vDSO, which is
 * no file, left out), as `ldd` lists them; -1 when it cannot tell. */
static int count_libraries(const char *binary)
{
	char *argv[] = {(char *)binary, NULL};
	setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
	ng_spawn_result r;
	char err[256];
	int rc = ng_spawn_capture(argv, 30, 1 << 16, &r, err, sizeof err);
	unsetenv("LD_TRACE_LOADED_OBJECTS");
	if (rc < 0 || !r.out) {
		if (rc == 0)
			ng_spawn_result_free(&r);
		return -1;
	}
	int n = 0;
	for (const char *line = r.out; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char one[512];
		snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), line);
		if (len && !strstr(one, "linux-vdso") && !strstr(one, "linux-gate"))
			n++;
		line += len + (end ? 1 : 0);
	}
	ng_spawn_result_free(&r);
	return n;
}

static double median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Wall time of one run of argv, stdout and stderr to /dev/null; -1 when it
 * could not run or did not exit with want_exit. */
static double time_run(char *const argv[], int want_exit)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	double t0 = now_s();
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	double t = now_s() - t0;
	return WIFEXITED(status) && WEXITSTATUS(status) == want_exit ? t : -1;
}

static int write_file(const char *path, const char *text, size_t len)
{
	ng_err err;
	if (ng_write_file_atomic(path, text, len, &err) == 0)
		return 0;
	fprintf(stderr, "epilog_bench: %s\n", err.msg);
	return -1;
}

/* A kernel log of about kib KiB: /dev/kmsg records of the kinds a GPU node
 * logs, and three Xids on a bus no job GPU has (they must be ignored). */
static char *make_kmsg(size_t kib, size_t *len)
{
	size_t cap = kib * 1024 + 4096;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	static const char *const lines[] = {
		"mlx5_core 0000:4b:00.0: mlx5_cmd_out_err:838: QUERY_VPORT_COUNTER(0x770) op_mod(0x0) failed",
		"nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping",
		"EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
		"audit: type=1400 audit(1711111111.123:456): apparmor=\"STATUS\" operation=\"profile_load\"",
		"NVRM: GPU at PCI:0000:18:00: GPU-00000000-0000-4000-8000-000000000000",
		"nvidia-nvswitch3: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 46 LTSSM Fault Up",
		"NVRM: Xid (PCI:0001:ee:00): 31, pid=1234, name=python3, Ch 00000008, intr 10000000.",
	};
	size_t n = 0, seq = 1;
	unsigned long long t = 1000000;
	while (n < kib * 1024) {
		const char *l = lines[seq % (sizeof lines / sizeof lines[0])];
		n += (size_t)snprintf(s + n, cap - n, "6,%zu,%llu,-;%s\n", seq, t, l);
		seq++;
		t += 1731;
	}
	*len = n;
	return s;
}

static const char *build_info(const char *binary, char *out, size_t cap)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", binary);
	char *slash = strrchr(path, '/');
	if (!slash)
		return "unknown build";
	snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "CMakeCache.txt");
	FILE *f = fopen(path, "r");
	if (!f)
		return "unknown build (no CMakeCache.txt beside the binary)";
	char line[512], type[64] = "?";
	bool sanitize = false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "CMAKE_BUILD_TYPE:STRING=%63s", type) == 1)
			continue;
		if (strncmp(line, "NODEGATE_SANITIZE:BOOL=ON", 25) == 0)
			sanitize = true;
	}
	fclose(f);
	snprintf(out, cap, "%s%s", type, sanitize ? " with sanitizers" : "");
	return out;
}

int main(int argc, char **argv)
{
	const char *nodegate = NULL, *library = NULL;
	int runs = 200, warmup = 10;
	size_t kmsg_kib = 256;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--nodegate") == 0 && i + 1 < argc)
			nodegate = argv[++i];
		else if (strcmp(argv[i], "--library") == 0 && i + 1 < argc)
			library = argv[++i];
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--kmsg-kib") == 0 && i + 1 < argc)
			kmsg_kib = (size_t)atol(argv[++i]);
		else {
			fprintf(stderr, "usage: epilog_bench --nodegate PATH [--library PATH] [--runs N] "
			                "[--kmsg-kib K]\n");
			return 2;
		}
	}
	if (!nodegate || runs < 5 || runs > 100000 || kmsg_kib > 65536) {
		fprintf(stderr, "usage: epilog_bench --nodegate PATH [--library PATH] [--runs N>=5] "
		                "[--kmsg-kib K]\n");
		return 2;
	}
	char ng_abs[PATH_MAX], lib_buf[PATH_MAX];
	if (!realpath(nodegate, ng_abs)) {
		fprintf(stderr, "epilog_bench: %s: %s\n", nodegate, strerror(errno));
		return 2;
	}
	if (!library) {
		snprintf(lib_buf, sizeof lib_buf, "%s", ng_abs);
		char *slash = strrchr(lib_buf, '/');
		snprintf(slash + 1, sizeof lib_buf - (size_t)(slash + 1 - lib_buf),
		         "libnodegate-nvml-synth.so");
		library = lib_buf;
	}
	if (access(library, R_OK) != 0) {
		fprintf(stderr, "epilog_bench: no synthetic NVML library at %s\n", library);
		return 2;
	}

	char dir[] = "/tmp/nodegate-epilog-bench-XXXXXX";
	if (!mkdtemp(dir)) {
		fprintf(stderr, "epilog_bench: mkdtemp: %s\n", strerror(errno));
		return 2;
	}
	char gpus[PATH_MAX], kmsg[PATH_MAX], policy[PATH_MAX];
	snprintf(gpus, sizeof gpus, "%s/gpus.json", dir);
	snprintf(kmsg, sizeof kmsg, "%s/kmsg.log", dir);
	snprintf(policy, sizeof policy, "%s/policy.json", dir);
	size_t klen = 0;
	char *ktext = make_kmsg(kmsg_kib, &klen);
	const char *scenario = "{\"schema\": \"nodegate/synthetic-gpus/1\"}\n";
	int rc = 2;
	if (!ktext || write_file(gpus, scenario, strlen(scenario)) < 0 ||
	    write_file(kmsg, ktext, klen) < 0 || write_file(policy, "{}\n", 3) < 0) {
		fprintf(stderr, "epilog_bench: cannot write the bench's files in %s\n", dir);
		goto out;
	}
	setenv("NODEGATE_NVML_LIBRARY", library, 1);
	setenv("NODEGATE_SYNTH_GPUS", gpus, 1);
	setenv("NODEGATE_KMSG", kmsg, 1);
	setenv("SLURM_JOB_GPUS", "0-7", 1);
	unsetenv("SLURM_JOB_START_TIME");
	unsetenv("SLURM_JOB_ID");
	unsetenv("NODEGATE_STORE");
	unsetenv("NODEGATE_POLICY");

	char *epilog[] = {ng_abs, "--policy", policy, "epilog", "--no-store", NULL};
	char *version[] = {ng_abs, "--version", NULL};
	char *truebin[] = {"/bin/true", NULL};

	/* The run measured is a real one: eight GPUs judged ok, no drain. */
	char *check[] = {ng_abs, "--policy", policy, "epilog", "--no-store", "--json", NULL};
	ng_spawn_result r;
	char err[256];
	if (ng_spawn_capture(check, 30, 1 << 20, &r, err, sizeof err) < 0) {
		fprintf(stderr, "epilog_bench: %s\n", err);
		goto out;
	}
	cJSON *res = r.out ? cJSON_Parse(r.out) : NULL;
	const cJSON *sev = cJSON_GetObjectItemCaseSensitive(res, "severity"),
	            *checked = cJSON_GetObjectItemCaseSensitive(res, "checked");
	bool sane = r.exit_status == 0 && cJSON_IsString(sev) && strcmp(sev->valuestring, "ok") == 0 &&
	            cJSON_IsNumber(checked) && checked->valuedouble == 8;
	cJSON_Delete(res);
	if (!sane) {
		fprintf(stderr, "epilog_bench: the epilog did not judge eight healthy GPUs ok:\n%s%s\n",
		        r.out ? r.out : "", r.err ? r.err : "");
		ng_spawn_result_free(&r);
		goto out;
	}
	ng_spawn_result_free(&r);

	double *te = malloc((size_t)runs * sizeof *te), *tv = malloc((size_t)runs * sizeof *tv),
	       *tt = malloc((size_t)runs * sizeof *tt);
	if (!te || !tv || !tt)
		goto out_free;
	for (int i = -warmup; i < runs; i++) {
		double a = time_run(epilog, 0), b = time_run(version, 0), c = time_run(truebin, 0);
		if (a < 0 || b < 0 || c < 0) {
			fprintf(stderr, "epilog_bench: a run failed (round %d)\n", i);
			goto out_free;
		}
		if (i >= 0) {
			te[i] = a;
			tv[i] = b;
			tt[i] = c;
		}
	}
	qsort(te, (size_t)runs, sizeof *te, cmp_double);
	qsort(tv, (size_t)runs, sizeof *tv, cmp_double);
	qsort(tt, (size_t)runs, sizeof *tt, cmp_double);
	double me = median(te, (size_t)runs) * 1e3, mv = median(tv, (size_t)runs) * 1e3,
	       mt = median(tt, (size_t)runs) * 1e3;
	char info[128];
	printf("nodegate epilog on 8 synthetic GPUs, %d runs each, interleaved (%s; kernel log %zu "
	       "KiB)\n",
	       runs, build_info(ng_abs, info, sizeof info), kmsg_kib);
	printf("%-28s %10s %10s %10s\n", "", "median ms", "p90 ms", "min ms");
	printf("%-28s %10.2f %10.2f %10.2f\n", "nodegate epilog", me,
	       quantile(te, (size_t)runs, 0.9) * 1e3, te[0] * 1e3);
	printf("%-28s %10.2f %10.2f %10.2f\n", "nodegate --version (ref)", mv,
	       quantile(tv, (size_t)runs, 0.9) * 1e3, tv[0] * 1e3);
	printf("%-28s %10.2f %10.2f %10.2f\n", "/bin/true (fork+exec)", mt,
	       quantile(tt, (size_t)runs, 0.9) * 1e3, tt[0] * 1e3);
	printf("ratio epilog / nodegate --version: %.2f\n", me / mv);
	printf("ratio epilog / /bin/true:          %.2f\n", me / mt);
	printf("ratio nodegate --version / /bin/true: %.2f\n", mv / mt);
	int libs = count_libraries(ng_abs);
	if (libs < 0) {
		fprintf(stderr, "epilog_bench: the loader's list of libraries could not be read\n");
		goto out_free;
	}
	printf("shared libraries loaded (SQLite path): %d\n", libs);
	bool met_e = me <= TARGET_MS, met_v = mv / mt <= TARGET_VERSION_RATIO,
	     met_l = libs <= TARGET_LIBS;
	printf("target: epilog median at most %.0f ms: %s\n", TARGET_MS,
	       met_e ? "target met" : "TARGET MISSED");
	printf("target: nodegate --version at most %.0fx /bin/true: %s\n", TARGET_VERSION_RATIO,
	       met_v ? "target met" : "TARGET MISSED");
	printf("target: at most %d shared libraries: %s\n", TARGET_LIBS,
	       met_l ? "target met" : "TARGET MISSED");
	rc = met_e && met_v && met_l ? 0 : 1;
out_free:
	free(te);
	free(tv);
	free(tt);
out:
	free(ktext);
	unlink(gpus);
	unlink(kmsg);
	unlink(policy);
	rmdir(dir);
	return rc;
}

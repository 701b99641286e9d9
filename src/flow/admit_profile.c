/* The admission profile's probes, run in-process, one domain at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/admit_profile.h"
#include "flow/probe_records.h"
#include "flow/records_in.h"
#include "collect/harness.h"
#include "collect/identity.h"
#include "collect/probe_cpu.h"
#include "collect/probe_gpu.h"
#include "collect/probe_gpu_common.h"
#include "collect/probe_hostmem.h"
#include "collect/probe_storage.h"
#include "core/json.h"
#include "core/record_build.h"

static bool wanted(const char *domain, const char *const *domains, size_t n)
{
	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (strcmp(domains[i], domain) == 0)
			return true;
	return false;
}

/* Names the probe in each of its records (as `nodegate probe` does) and
 * moves them into all. */
static void take(const ng_ctx *ctx, cJSON *all, cJSON *recs, const char *probe, ng_err *err)
{
	if (!recs) {
		/* A usage or memory error in the probe itself: say it in one record
		 * so the run is held, never silently shorter. */
		ng_ctx_note(ctx, "admit", "probe %s: %s", probe, err->msg);
		return;
	}
	cJSON *r;
	while ((r = cJSON_DetachItemFromArray(recs, 0))) {
		ng_probe_record_tool(r, probe, 0, NULL);
		cJSON_AddItemToArray(all, r);
	}
	cJSON_Delete(recs);
}

/* The fabric tool through the harness: help-text option check, timeout,
 * raw output kept with its digest. What it could not measure is a record
 * that says so, as for the probes. */
static void collect_fabric(const ng_ctx *ctx, cJSON *all, const struct ng_admit_profile *p)
{
	/* Raw fabric output is evidence: kept beside a SQLite store unless
	 * told where. */
	char raw[4096];
	const char *raw_dir = p->raw_dir, *where = ctx->store ? ng_store_where(ctx->store) : NULL;
	if (!raw_dir && where && !strstr(where, "://")) {
		const char *slash = strrchr(where, '/');
		snprintf(raw, sizeof raw, "%.*s/raw", slash ? (int)(slash - where) : 1, slash ? where : ".");
		raw_dir = raw;
	}
	struct ng_harness_opts h = {
		.parser = p->fabric_parser, .argv = p->fabric_argv, .argc = p->fabric_argc,
		.repeat = 1, .timeout_s = p->fabric_timeout_s > 0 ? p->fabric_timeout_s : 600,
		.raw_dir = raw_dir, .probe = true, .max_output = (size_t)256 << 20,
	};
	ng_err err = {0};
	cJSON *recs = ng_harness_run(&h, &err);
	if (!recs) {
		ng_ctx_note(ctx, "admit", "fabric: %s", err.msg);
		return;
	}
	if (p->fabric_diag && ng_apply_diag_file(recs, p->fabric_diag, &err) < 0)
		ng_ctx_note(ctx, "admit", "--fabric-diag %s", err.msg);
	cJSON *r;
	while ((r = cJSON_DetachItemFromArray(recs, 0)))
		cJSON_AddItemToArray(all, r);
	cJSON_Delete(recs);
}

/* NVIDIA GPUs on this node's PCI bus, whatever their driver says: the
 * profile's gpu.count (collect/identity.h). */
/* NVIDIA GPUs on the PCI bus, as the kernel shows them: under
 * NODEGATE_ROOT when set (the kernel's view the GPU checks read too, so a
 * test or a scenario can plant one), else the node's own /sys. */
static long gpus_on_pci(void)
{
	ng_err err = {0};
	const char *root = getenv("NODEGATE_ROOT");
	ng_identity_opts o = {.root = root && *root ? root : NULL};
	cJSON *prof = ng_identity_profile(&o, &err);
	const cJSON *c = ng_json_get(ng_json_get(prof, "gpu"), "count");
	long n = cJSON_IsNumber(c) && c->valuedouble > 0 ? (long)c->valuedouble : 0;
	cJSON_Delete(prof);
	return n;
}

/* The GPU probes, for the domains wanted, when the GPU backend loads and
 * sees GPUs: gpu-compute for compute, gpu-memory for memory, gpu-copy for
 * fabric (the paths inside the node), each with the profile's settings.
 * Returns whether GPU records were added. A node without GPUs has nothing
 * to screen there. A node whose PCI bus shows NVIDIA GPUs but whose
 * installed backend cannot start them (no driver, a GPU the runtime does
 * not see) gets the GPU records with no samples and the reason: absent
 * evidence is not a pass, so the node is held. With no backend installed at
 * all, the GPU probes are not part of this deployment: said in a note. */
static bool collect_gpus(cJSON *all, const ng_ctx *ctx, const struct ng_admit_profile *p,
                         const char *const *domains, size_t n_domains)
{
	bool compute = !p->skip_compute && wanted("compute", domains, n_domains);
	bool memory = !p->skip_memory && wanted("memory", domains, n_domains);
	bool fabric = wanted("fabric", domains, n_domains);
	if (!compute && !memory && !fabric)
		return false;
	char why[NG_GPU_WHY + 512];
	bool absent = false;
	struct ng_gpu_loaded *g = ng_probe_gpu_open(why, sizeof why, &absent);
	if (!g) {
		long n = gpus_on_pci();
		if (n == 0)
			return false;
		/* GPUs the node has and nothing measured: held, never admitted on
		 * its CPU, memory and storage alone. A build without the GPU
		 * backend (no nvcc) is a harness to fix, not a GPU-free node. */
		char was[sizeof why];
		snprintf(was, sizeof was, "%s", why);
		snprintf(why, sizeof why, "%ld NVIDIA GPU%s on the PCI bus, but %s: %.*s", n, n == 1 ? "" : "s",
		         absent ? "no GPU probe backend is installed" : "the GPU probes could not start",
		         (int)NG_GPU_WHY, was);
		ng_ctx_note(ctx, "admit", "%s: the GPUs are unmeasured, the node is held", why);
	} else {
		/* The backend measures the GPUs it sees; a GPU on the bus it does
		 * not see is one nobody measured. */
		long n = gpus_on_pci();
		if (n > g->count) {
			char short_of[NG_GPU_WHY + 128];
			snprintf(short_of, sizeof short_of,
			         "%ld NVIDIA GPUs on the PCI bus, but the GPU backend sees %d: the others are "
			         "unmeasured (a GPU the driver lost, or one it does not see)",
			         n, g->count);
			static const char *const metric[] = {"gpu.gemm.tflops"};
			cJSON *one = ng_gpu_unmeasured(metric, 1, "gpu-compute", short_of);
			ng_err e2 = {0};
			take(ctx, all, one, "gpu-compute", &e2);
			ng_ctx_note(ctx, "admit", "%s: the node is held", short_of);
		}
	}
	ng_err err = {0};
	if (compute) {
		struct ng_gpu_compute_opts o;
		ng_gpu_compute_opts_default(&o);
		o.sibling_fraction = ctx->policy.gpu_sibling_fraction;
		o.series_drop = ctx->policy.gpu_series_drop;
		if (p->quick) {
			o.duration_s = 3;
			o.interval_s = 0.25;
		}
		take(ctx, all, ng_probe_gpu_compute_run(g, why, &o, &err), "gpu-compute", &err);
	}
	if (memory) {
		struct ng_gpu_memory_opts o;
		ng_gpu_memory_opts_default(&o);
		o.share = ctx->policy.gpu_memory_share;
		o.sibling_fraction = ctx->policy.gpu_sibling_fraction;
		if (p->quick) {
			o.duration_s = 1;
			o.interval_s = 0.1;
		}
		take(ctx, all, ng_probe_gpu_memory_run(g, why, &o, &err), "gpu-memory", &err);
	}
	if (fabric) {
		struct ng_gpu_copy_opts o;
		ng_gpu_copy_opts_default(&o);
		o.sibling_fraction = ctx->policy.gpu_sibling_fraction;
		if (p->quick) {
			o.bytes = (uint64_t)64 << 20;
			o.duration_s = 0.2;
			o.interval_s = 0.05;
		}
		take(ctx, all, ng_probe_gpu_copy_run(g, why, &o, &err), "gpu-copy", &err);
	}
	ng_probe_gpu_close(g);
	return true;
}

cJSON *ng_admit_collect(const ng_ctx *ctx, const struct ng_admit_profile *p,
                        const char *const *domains, size_t n_domains, cJSON **missing)
{
	cJSON *all = cJSON_CreateArray();
	*missing = cJSON_CreateArray();
	if (!all || !*missing) {
		cJSON_Delete(all);
		cJSON_Delete(*missing);
		*missing = NULL;
		return NULL;
	}
	ng_err err = {0};
	if (!p->skip_compute && wanted("compute", domains, n_domains)) {
		struct ng_cpu_opts o;
		ng_cpu_opts_default(&o);
		if (p->quick) {
			o.duration_s = 2;
			o.interval_s = 0.25;
		}
		take(ctx, all, ng_probe_cpu_run(&o, &err), "cpu", &err);
	}
	if (!p->skip_memory && wanted("memory", domains, n_domains)) {
		struct ng_hostmem_opts o;
		ng_hostmem_opts_default(&o);
		if (p->quick) {
			o.size = 256u << 20;
			o.phase_s = 0.5;
			o.interval_s = 0.1;
		}
		take(ctx, all, ng_probe_hostmem_run(&o, &err), "hostmem", &err);
	}
	if (!p->skip_storage && wanted("storage", domains, n_domains)) {
		ng_storage_opts o;
		ng_storage_opts_default(&o);
		o.dir = p->storage_dir;
		if (p->quick) {
			o.size = 128u << 20;
			o.duration_s = 2;
			o.interval_s = 0.25;
		}
		cJSON *rec = ng_storage_probe(&o, &err), *one = NULL;
		if (rec) {
			one = cJSON_CreateArray();
			cJSON_AddItemToArray(one, rec);
		}
		take(ctx, all, one, "storage", &err);
	}
	bool gpus = collect_gpus(all, ctx, p, domains, n_domains);
	if (p->fabric_parser && wanted("fabric", domains, n_domains))
		collect_fabric(ctx, all, p);
	/* Domains asked for that nothing here measures: fabric needs its
	 * harness or the GPU copy probe (GPUs and a backend). */
	static const char *const measured[] = {"compute", "memory", "storage", "fabric"};
	for (size_t i = 0; i < n_domains; i++) {
		bool have = false;
		for (size_t k = 0; k < 4; k++)
			have = have || (strcmp(domains[i], measured[k]) == 0 &&
			                (k < 3 || p->fabric_parser || gpus));
		if (!have)
			cJSON_AddItemToArray(*missing, cJSON_CreateString(domains[i]));
	}
	if (cJSON_GetArraySize(all) > 0) {
		if (ng_identity_stamp(all, &ctx->policy, NULL, &err) < 0)
			ng_ctx_note(ctx, "admit", "node identity: %s", err.msg);
		ng_records_settle_unmeasured(all);
	}
	return all;
}

long ng_admit_other_runnable(void)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	char line[256];
	long running = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "procs_running %ld", &running) == 1)
			break;
	fclose(f);
	return running < 0 ? -1 : running - 1;
}

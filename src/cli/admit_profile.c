/* The admission profile's probes, run in-process, one domain at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/admit_profile.h"
#include "collect/harness.h"
#include "collect/identity.h"
#include "collect/probe_cpu.h"
#include "collect/probe_hostmem.h"
#include "collect/probe_storage.h"
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
static void take(cJSON *all, cJSON *recs, const char *probe, ng_err *err)
{
	if (!recs) {
		/* A usage or memory error in the probe itself: say it in one record
		 * so the run is held, never silently shorter. */
		fprintf(stderr, "nodegate admit: probe %s: %s\n", probe, err->msg);
		return;
	}
	cJSON *r;
	while ((r = cJSON_DetachItemFromArray(recs, 0))) {
		cJSON *tool = ng_record_tool(r);
		ng_json_set(tool, "name", cJSON_CreateString("nodegate"));
		ng_json_set(tool, "probe", cJSON_CreateString(probe));
		ng_json_set(tool, "version", cJSON_CreateString(NODEGATE_VERSION));
		cJSON_AddItemToArray(all, r);
	}
	cJSON_Delete(recs);
}

/* The fabric tool through the harness: help-text option check, timeout,
 * raw output kept with its digest. What it could not measure is a record
 * that says so, as for the probes. */
static void collect_fabric(cJSON *all, const struct ng_admit_profile *p)
{
	struct ng_harness_opts h = {
		.parser = p->fabric_parser, .argv = p->fabric_argv, .argc = p->fabric_argc,
		.repeat = 1, .timeout_s = p->fabric_timeout_s > 0 ? p->fabric_timeout_s : 600,
		.raw_dir = p->raw_dir, .probe = true, .max_output = (size_t)256 << 20,
	};
	ng_err err = {{0}};
	cJSON *recs = ng_harness_run(&h, &err);
	if (!recs) {
		fprintf(stderr, "nodegate admit: fabric: %s\n", err.msg);
		return;
	}
	if (p->fabric_diag && ng_apply_diag_file(recs, p->fabric_diag, &err) < 0)
		fprintf(stderr, "nodegate admit: --fabric-diag %s\n", err.msg);
	cJSON *r;
	while ((r = cJSON_DetachItemFromArray(recs, 0)))
		cJSON_AddItemToArray(all, r);
	cJSON_Delete(recs);
}

cJSON *ng_admit_collect(const struct ng_cli *cli, const struct ng_admit_profile *p,
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
	ng_err err = {{0}};
	if (!p->skip_compute && wanted("compute", domains, n_domains)) {
		struct ng_cpu_opts o;
		ng_cpu_opts_default(&o);
		if (p->quick) {
			o.duration_s = 2;
			o.interval_s = 0.25;
		}
		take(all, ng_probe_cpu_run(&o, &err), "cpu", &err);
	}
	if (!p->skip_memory && wanted("memory", domains, n_domains)) {
		struct ng_hostmem_opts o;
		ng_hostmem_opts_default(&o);
		if (p->quick) {
			o.size = 256u << 20;
			o.phase_s = 0.5;
			o.interval_s = 0.1;
		}
		take(all, ng_probe_hostmem_run(&o, &err), "hostmem", &err);
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
		take(all, one, "storage", &err);
	}
	if (p->fabric_parser && wanted("fabric", domains, n_domains))
		collect_fabric(all, p);
	/* Domains asked for that nothing here measures (fabric without its
	 * harness; GPU memory needs the GPU probes). */
	static const char *const measured[] = {"compute", "memory", "storage", "fabric"};
	for (size_t i = 0; i < n_domains; i++) {
		bool have = false;
		for (size_t k = 0; k < 4; k++)
			have = have || (strcmp(domains[i], measured[k]) == 0 &&
			                (k < 3 || p->fabric_parser));
		if (!have)
			cJSON_AddItemToArray(*missing, cJSON_CreateString(domains[i]));
	}
	if (cJSON_GetArraySize(all) > 0) {
		if (ng_identity_stamp(all, &cli->policy, NULL, &err) < 0)
			fprintf(stderr, "nodegate admit: node identity: %s\n", err.msg);
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

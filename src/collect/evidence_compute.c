/* The compute domain's evidence (collect/evidence.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/evidence.h"
#include "collect/identity_read.h"
#include "collect/nvml.h"
#include "core/gpu.h"

const char *ng_evidence_root(const ng_evidence_opts *o)
{
	if (o && o->root && *o->root)
		return o->root;
	const char *env = getenv("NODEGATE_ROOT");
	return env && *env ? env : "/";
}

cJSON *ng_evidence_begin(const char *domain, cJSON **unreadable)
{
	cJSON *ev = cJSON_CreateObject();
	*unreadable = cJSON_CreateArray();
	if (!ev || !*unreadable || !cJSON_AddStringToObject(ev, "domain", domain)) {
		cJSON_Delete(ev);
		cJSON_Delete(*unreadable);
		*unreadable = NULL;
		return NULL;
	}
	return ev;
}

void ng_evidence_add_gpus(cJSON *ev, const ng_evidence_opts *o,
                          cJSON *(*one)(const ng_gpu_state *g), bool driver, cJSON *unreadable)
{
	ng_gpu_snapshot *snap = calloc(1, sizeof *snap);
	ng_nvml_opts no = {.lib_path = o ? o->nvml_lib : NULL};
	ng_err err;
	cJSON *gpus = cJSON_AddArrayToObject(ev, "gpus");
	if (snap && ng_nvml_snapshot(&no, snap, &err) == 0 && snap->nvml == NG_FIELD_OK) {
		for (size_t i = 0; i < snap->n_gpus; i++)
			if (snap->gpu[i].presence == NG_GPU_LISTED && !snap->gpu[i].lost)
				cJSON_AddItemToArray(gpus, one(&snap->gpu[i]));
		if (driver)
			cJSON_AddStringToObject(ev, "driver", snap->driver);
	} else {
		cJSON_AddItemToArray(unreadable, cJSON_CreateString(snap ? snap->nvml_error : "nvml"));
	}
	free(snap);
}

void ng_evidence_add_field(cJSON *obj, const char *key, const void *field)
{
	const ng_gpu_field *f = field;
	if (f->state == NG_FIELD_OK)
		cJSON_AddNumberToObject(obj, key, (double)f->value);
}

static const struct {
	unsigned bit;
	const char *name;
} reasons[] = {
	{NG_CLK_GPU_IDLE, "gpu_idle"},         {0x2, "applications_clocks_setting"},
	{NG_CLK_SW_POWER_CAP, "sw_power_cap"}, {NG_CLK_HW_SLOWDOWN, "hw_slowdown"},
	{0x10, "sync_boost"},                  {NG_CLK_SW_THERMAL, "sw_thermal"},
	{NG_CLK_HW_THERMAL, "hw_thermal"},     {NG_CLK_HW_POWER_BRAKE, "hw_power_brake"},
};

static cJSON *gpu_json(const ng_gpu_state *g)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", g->index);
	cJSON_AddStringToObject(o, "uuid", g->uuid);
	cJSON_AddStringToObject(o, "bus", g->bus);
	ng_evidence_add_field(o, "sm_clock_mhz", &g->sm_clock_mhz);
	ng_evidence_add_field(o, "sm_clock_max_mhz", &g->sm_clock_max_mhz);
	ng_evidence_add_field(o, "app_sm_clock_mhz", &g->app_sm_clock_mhz);
	ng_evidence_add_field(o, "power_mw", &g->power_mw);
	ng_evidence_add_field(o, "power_limit_mw", &g->power_limit_mw);
	ng_evidence_add_field(o, "power_default_limit_mw", &g->power_default_limit_mw);
	ng_evidence_add_field(o, "temperature_c", &g->temperature_c);
	ng_evidence_add_field(o, "utilization_gpu", &g->utilization_gpu);
	ng_evidence_add_field(o, "pstate", &g->pstate);
	ng_evidence_add_field(o, "ecc_volatile_uncorrected", &g->ecc_volatile_uncorrected);
	ng_evidence_add_field(o, "ecc_volatile_corrected", &g->ecc_volatile_corrected);
	ng_evidence_add_field(o, "memory_used_mib", &g->memory_used_mib);
	if (g->clock_reasons.state == NG_FIELD_OK) {
		cJSON *r = cJSON_AddArrayToObject(o, "clock_event_reasons");
		for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
			if (g->clock_reasons.value & reasons[i].bit)
				cJSON_AddItemToArray(r, cJSON_CreateString(reasons[i].name));
	}
	/* Processes on the GPU that are not this one (the probe's own are gone
	 * by now: the flagged stage has ended). */
	cJSON *p = cJSON_AddArrayToObject(o, "other_processes");
	for (size_t i = 0; i < g->n_pids && i < sizeof g->pid / sizeof g->pid[0]; i++)
		if ((pid_t)g->pid[i] != getpid())
			cJSON_AddItemToArray(p, cJSON_CreateNumber(g->pid[i]));
	return o;
}

/* obj[key] = the named line of /proc/self/status, when present. */
static void add_status(cJSON *obj, const char *key, const char *root, const char *field,
                       cJSON *unreadable)
{
	char *status = ng_id_read(root, "/proc/self/status");
	char buf[512];
	const char *v = status ? ng_id_field(status, field, ':', buf, sizeof buf) : NULL;
	if (v)
		cJSON_AddStringToObject(obj, key, v);
	else
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/self/status"));
	free(status);
}

cJSON *ng_evidence_compute(const ng_evidence_opts *o)
{
	const char *root = ng_evidence_root(o);
	cJSON *unreadable;
	cJSON *ev = ng_evidence_begin("compute", &unreadable);
	if (!ev)
		return NULL;
	ng_evidence_add_gpus(ev, o, gpu_json, true, unreadable);
	ng_evidence_add_xids(ev, root, unreadable);
	cJSON *cpu = cJSON_AddObjectToObject(ev, "cpu");
	add_status(cpu, "affinity", root, "Cpus_allowed_list", unreadable);
	char *cg = ng_id_read(root, "/proc/self/cgroup");
	if (cg)
		cJSON_AddStringToObject(cpu, "cgroup", cg);
	else
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/self/cgroup"));
	free(cg);
	/* The governor of every CPU that has one: the set of them, with counts. */
	char **names = NULL;
	size_t n = ng_id_list(root, "/sys/devices/system/cpu", "cpu", &names);
	cJSON *gov = cJSON_AddObjectToObject(cpu, "governors");
	for (size_t i = 0; i < n; i++) {
		if (!names[i][3] || strspn(names[i] + 3, "0123456789") != strlen(names[i] + 3))
			continue;
		char *g = ng_id_readf(root, "/sys/devices/system/cpu/%s/cpufreq/scaling_governor",
		                      names[i]);
		if (g && *g && strlen(g) < 32) {
			cJSON *c = cJSON_GetObjectItemCaseSensitive(gov, g);
			if (c)
				cJSON_SetNumberValue(c, c->valuedouble + 1);
			else
				cJSON_AddNumberToObject(gov, g, 1);
		}
		free(g);
	}
	ng_id_free_list(names, n);
	cJSON_AddItemToObject(ev, "unreadable", unreadable);
	return ev;
}

bool ng_evidence_has_collector(const char *domain)
{
	static const char *const domains[] = {"compute", "memory", "storage", "fabric"};
	for (size_t i = 0; domain && i < sizeof domains / sizeof *domains; i++)
		if (strcmp(domain, domains[i]) == 0)
			return true;
	return false;
}

cJSON *ng_evidence_collect(const char *domain, const ng_evidence_opts *o)
{
	if (!domain)
		return NULL;
	if (strcmp(domain, "compute") == 0)
		return ng_evidence_compute(o);
	if (strcmp(domain, "memory") == 0)
		return ng_evidence_memory(o);
	if (strcmp(domain, "storage") == 0)
		return ng_evidence_storage(o);
	if (strcmp(domain, "fabric") == 0)
		return ng_evidence_fabric(o);
	return NULL;
}

/* Reading the synthetic NVML library's scenario file ($NODEGATE_SYNTH_GPUS,
 * docs/synthetic-gpus.md): every key checked with its path, so a mistyped
 * scenario is refused rather than read as a healthy GPU. */
#include "synth/nvml_synth.h"

/* ---- reading the scenario ------------------------------------------------------ */

struct reader {
	const char *file;
	struct ng_json_path jp; /* where in the document, "gpus[2].pcie.width"; the refusal */
};

static bool bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ng_json_path_vrefuse(&r->jp, fmt, ap);
	va_end(ap);
	return false;
}

/* Appends ".key" or "[i]" to the path; returns the old length to restore. */
static size_t path_push(struct reader *r, const char *key, int index)
{
	return key ? ng_json_path_key(&r->jp, key) : ng_json_path_index(&r->jp, (size_t)index);
}

static void path_pop(struct reader *r, size_t old) { ng_json_path_pop(&r->jp, old); }

/* Every member of obj is one of allowed[], and none appears twice. */
static bool check_keys(struct reader *r, const cJSON *obj, const char *const *allowed, size_t n)
{
	return ng_json_path_check_members(&r->jp, obj, allowed, n, true) == 0;
}

static bool get_whole(struct reader *r, const cJSON *obj, const char *key, double max, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	bool ok = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= max &&
	          v->valuedouble == (double)(unsigned long long)v->valuedouble;
	if (!ok)
		bad(r, "expected a whole number from 0 to %.0f", max);
	else
		*out = v->valuedouble;
	if (ok)
		path_pop(r, old);
	return ok;
}

static bool get_uint(struct reader *r, const cJSON *obj, const char *key, unsigned *out)
{
	double d = *out;
	if (!get_whole(r, obj, key, UINT_MAX, &d))
		return false;
	*out = (unsigned)d;
	return true;
}

static bool get_ull(struct reader *r, const cJSON *obj, const char *key, unsigned long long *out)
{
	double d = (double)*out;
	if (!get_whole(r, obj, key, JSON_WHOLE_MAX, &d))
		return false;
	*out = (unsigned long long)d;
	return true;
}

static bool get_bool(struct reader *r, const cJSON *obj, const char *key, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	if (!cJSON_IsBool(v))
		return bad(r, "expected true or false");
	*out = cJSON_IsTrue(v);
	path_pop(r, old);
	return true;
}

static bool get_string(struct reader *r, const cJSON *obj, const char *key, char *out, size_t size)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v)
		return true;
	size_t old = path_push(r, key, 0);
	if (!cJSON_IsString(v))
		return bad(r, "expected a string");
	if (strlen(v->valuestring) >= size)
		return bad(r, "longer than NVML's %zu-byte buffer", size - 1);
	if (!v->valuestring[0])
		return bad(r, "empty");
	snprintf(out, size, "%s", v->valuestring);
	path_pop(r, old);
	return true;
}

/* The calls a name means: an exported symbol ("nvmlDeviceGetCount_v2"), a
 * name without its version suffix, meaning every version of it
 * ("nvmlDeviceGetCount"), or a group ("remapped_rows"). 0: none. */
static uint64_t calls_named(const char *name)
{
	for (size_t i = 0; i < sizeof groups / sizeof *groups; i++)
		if (strcmp(name, groups[i].name) == 0)
			return groups[i].calls;
	uint64_t calls = 0;
	size_t n = strlen(name);
	for (int s = 0; s < S_COUNT_ALL; s++) {
		const char *sym = sym_name[s];
		if (strcmp(sym, name) == 0) {
			calls |= BIT(s);
		} else if (strncmp(sym, name, n) == 0 && sym[n] == '_' && sym[n + 1] == 'v') {
			const char *d = sym + n + 2;
			bool digits = *d != '\0';
			for (; *d; d++)
				digits = digits && *d >= '0' && *d <= '9';
			if (digits)
				calls |= BIT(s);
		}
	}
	return calls;
}

#define CALL_NAMES_HELP                                                                      \
	"the name of an NVML call (\"nvmlDeviceGetRemappedRows\") or a group (ecc, retired_pages, " \
	"remapped_rows, pcie, pcie_replays, clock_reasons, temperature, clocks, power, nvlink)"

static bool read_call_name(struct reader *r, const char *name, uint64_t *out)
{
	uint64_t calls = calls_named(name);
	if (!calls)
		return bad(r, "\"%s\" is not an NVML call this library answers, nor a group; expected "
		              CALL_NAMES_HELP, name);
	*out |= calls;
	return true;
}

static bool read_calls(struct reader *r, const cJSON *v, uint64_t *out)
{
	if (!cJSON_IsString(v))
		return bad(r, "expected " CALL_NAMES_HELP);
	return read_call_name(r, v->valuestring, out);
}

/* An NVML return code: "GPU_IS_LOST", "NVML_ERROR_GPU_IS_LOST" or 15. */
static bool read_code(struct reader *r, const cJSON *v, int *out)
{
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 1 || v->valuedouble > INT_MAX || v->valuedouble != (double)(int)v->valuedouble)
			return bad(r, "expected an NVML return code other than success (1 to %d)", INT_MAX);
		*out = (int)v->valuedouble;
		return true;
	}
	if (cJSON_IsString(v)) {
		const char *s = v->valuestring;
		if (strncmp(s, "NVML_ERROR_", 11) == 0)
			s += 11;
		for (size_t i = 0; i < sizeof returns / sizeof *returns; i++)
			if (returns[i].code != 0 && strcmp(s, returns[i].name) == 0) {
				*out = returns[i].code;
				return true;
			}
		return bad(r, "\"%s\" is not an NVML error code (such as \"UNKNOWN\", \"GPU_IS_LOST\", "
		              "\"DRIVER_NOT_LOADED\", or a number)", v->valuestring);
	}
	return bad(r, "expected an NVML error code (\"UNKNOWN\", \"GPU_IS_LOST\", ... or a number)");
}

/* "errors": {"nvmlDeviceGetPcieReplayCounter": "UNKNOWN", ...} */
static bool read_errors(struct reader *r, const cJSON *obj, int *error)
{
	size_t old = path_push(r, "errors", 0);
	if (!cJSON_IsObject(obj))
		return bad(r, "expected an object of NVML call names and error codes");
	for (const cJSON *m = obj->child; m; m = m->next) {
		for (const cJSON *p = obj->child; p != m; p = p->next)
			if (strcmp(p->string, m->string) == 0)
				return bad(r, "key \"%s\" appears twice", m->string);
		size_t o2 = path_push(r, m->string, 0);
		uint64_t calls = 0;
		int code = 0;
		if (!read_call_name(r, m->string, &calls) || !read_code(r, m, &code))
			return false;
		for (int s = 0; s < S_COUNT_ALL; s++)
			if (calls & BIT(s))
				error[s] = code;
		path_pop(r, o2);
	}
	path_pop(r, old);
	return true;
}

static bool read_hang(struct reader *r, const cJSON *obj, uint64_t *hang)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "hang");
	if (!v || cJSON_IsNull(v))
		return true;
	size_t old = path_push(r, "hang", 0);
	if (!read_calls(r, v, hang))
		return false;
	path_pop(r, old);
	return true;
}

/* "00000000:18:00.0", "0000:18:00.0", "0000:18:00", "18:00.0" */
static bool parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *device)
{
	unsigned v[3] = {0, 0, 0};
	int digits[3] = {0, 0, 0};
	int part = 0;
	const char *p = s;
	for (; *p && *p != '.'; p++) {
		if (*p == ':') {
			if (++part > 2)
				return false;
			continue;
		}
		int h;
		if (*p >= '0' && *p <= '9')
			h = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			h = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			h = *p - 'A' + 10;
		else
			return false;
		if (++digits[part] > 8)
			return false;
		v[part] = v[part] << 4 | (unsigned)h;
	}
	if (*p == '.' && !(p[1] >= '0' && p[1] <= '7' && p[2] == '\0'))
		return false;
	if (part == 1) { /* bus:device */
		v[2] = v[1];
		v[1] = v[0];
		v[0] = 0;
		digits[2] = digits[1];
		digits[1] = digits[0];
		digits[0] = 1;
	} else if (part != 2) {
		return false;
	}
	if (!digits[0] || digits[1] < 1 || digits[1] > 2 || digits[2] < 1 || digits[2] > 2 || v[2] > 0x1f)
		return false;
	*domain = v[0];
	*bus = v[1];
	*device = v[2];
	return true;
}

static void gpu_defaults(struct nvmlDevice_st *g, unsigned i)
{
	memset(g, 0, sizeof *g);
	g->index = i;
	snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-4000-8000-%012x", i);
	snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
	g->domain = i / 8;
	g->bus = default_bus[i % 8];
	g->device = 0;
	g->pcie_gen = g->pcie_gen_max = 5;
	g->pcie_width = g->pcie_width_max = 16;
	g->clock_reasons = 0x1; /* gpu_idle: nothing runs between jobs */
	g->temperature_c = 34;
	g->sm_clock_mhz = 345;
	g->sm_clock_max_mhz = 1980;
	g->power_mw = 71000;
	g->power_limit_mw = g->power_default_limit_mw = 700000;
	g->app_sm_clock_mhz = 1980;
	g->minor = i;
	/* between jobs: nothing running, the lowest P-state */
	g->pstate = 8;
	g->memory_total_mib = 81559;
	g->n_links = 18;
	for (unsigned l = 0; l < g->n_links; l++)
		g->link[l].active = true;
}

static bool read_clock_reasons(struct reader *r, const cJSON *v, unsigned long long *out)
{
	size_t old = path_push(r, "clock_reasons", 0);
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0 || v->valuedouble > JSON_WHOLE_MAX ||
		    v->valuedouble != (double)(unsigned long long)v->valuedouble)
			return bad(r, "expected a bit mask (a whole number) or a list of names");
		*out = (unsigned long long)v->valuedouble;
		path_pop(r, old);
		return true;
	}
	if (!cJSON_IsArray(v))
		return bad(r, "expected a list of names (gpu_idle, sw_power_cap, hw_slowdown, sw_thermal, "
		              "hw_thermal, hw_power_brake, ...) or a bit mask");
	unsigned long long bits = 0;
	int i = 0;
	for (const cJSON *e = v->child; e; e = e->next, i++) {
		size_t o2 = path_push(r, NULL, i);
		if (cJSON_IsNumber(e)) {
			if (e->valuedouble < 0 || e->valuedouble > JSON_WHOLE_MAX ||
			    e->valuedouble != (double)(unsigned long long)e->valuedouble)
				return bad(r, "expected a reason name or a whole number");
			bits |= (unsigned long long)e->valuedouble;
		} else if (cJSON_IsString(e)) {
			bool found = false;
			for (size_t k = 0; k < sizeof clock_reason_names / sizeof *clock_reason_names; k++)
				if (strcmp(e->valuestring, clock_reason_names[k].name) == 0) {
					bits |= clock_reason_names[k].bit;
					found = true;
				}
			if (!found)
				return bad(r, "unknown clock reason \"%s\" (known: gpu_idle, "
				              "applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost, "
				              "sw_thermal, hw_thermal, hw_power_brake, display_clock_setting)",
				           e->valuestring);
		} else {
			return bad(r, "expected a reason name or a whole number");
		}
		path_pop(r, o2);
	}
	*out = bits;
	path_pop(r, old);
	return true;
}

static bool read_object(struct reader *r, const cJSON *parent, const char *key, const cJSON **out,
                        const char *const *allowed, size_t n)
{
	*out = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (!*out)
		return true;
	path_push(r, key, 0);
	return check_keys(r, *out, allowed, n);
}

#define N(a) (sizeof(a) / sizeof *(a))

/* The GPU's probe object belongs to the probes' backend, which checks all of
 * it; NVML reads only what a throttle changes in its own answers:
 * probe.throttle.{after_s, clock_reasons, sm_clock_mhz, temperature_c,
 * power_mw}. From after_s seconds after the process started, those are what
 * NVML answers. */
static bool read_probe(struct reader *r, const cJSON *probe, struct nvmlDevice_st *g)
{
	const cJSON *t = cJSON_IsObject(probe) ? cJSON_GetObjectItemCaseSensitive(probe, "throttle") : NULL;
	if (!cJSON_IsObject(t))
		return true;
	path_push(r, "probe", 0);
	path_push(r, "throttle", 0);
	const cJSON *after = cJSON_GetObjectItemCaseSensitive(t, "after_s");
	if (!cJSON_IsNumber(after) || !(after->valuedouble >= 0) || after->valuedouble > 1e9)
		return bad(r, "after_s: expected seconds from 0");
	g->throttled = malloc(sizeof *g->throttled);
	if (!g->throttled)
		return bad(r, "out of memory");
	*g->throttled = *g;
	g->throttled->throttled = NULL;
	g->throttle = true;
	g->throttle_after_s = after->valuedouble;
	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(t, "clock_reasons");
	if (cr && !read_clock_reasons(r, cr, &g->throttled->clock_reasons))
		return false;
	return get_uint(r, t, "temperature_c", &g->throttled->temperature_c) &&
	       get_uint(r, t, "sm_clock_mhz", &g->throttled->sm_clock_mhz) &&
	       get_uint(r, t, "power_mw", &g->throttled->power_mw);
}

static bool read_gpu(struct reader *r, const cJSON *o, struct nvmlDevice_st *g)
{
	static const char *const keys[] = {
		"uuid", "name", "pci_bus_id", "lost", "ecc", "retired_pages", "remapped_rows", "pcie",
		"clock_reasons", "temperature_c", "sm_clock_mhz", "sm_clock_max_mhz", "power_mw",
		"power_limit_mw", "power_default_limit_mw", "app_sm_clock_mhz", "minor", "utilization_gpu", "pstate",
		"memory_used_mib", "memory_total_mib", "processes", "nvlink", "p2p",
		"not_supported", "errors", "hang",
		/* The GPU probes' synthetic backend reads this one (src/synth/gpu_probe_synth.c);
		 * NVML reads only probe.throttle's clock fields (read_probe). */
		"probe",
	};
	if (!check_keys(r, o, keys, N(keys)))
		return false;
	size_t base = strlen(r->jp.path);
	if (!get_string(r, o, "uuid", g->uuid, sizeof g->uuid) ||
	    !get_string(r, o, "name", g->name, sizeof g->name))
		return false;
	char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE] = "";
	if (!get_string(r, o, "pci_bus_id", bus_id, sizeof bus_id))
		return false;
	if (bus_id[0] && !parse_bus_id(bus_id, &g->domain, &g->bus, &g->device)) {
		path_push(r, "pci_bus_id", 0);
		return bad(r, "\"%s\" is not a PCI address (write \"00000000:18:00.0\")", bus_id);
	}
	if (!get_bool(r, o, "lost", &g->lost))
		return false;

	const cJSON *ecc;
	static const char *const ecc_keys[] = {"volatile", "aggregate"};
	static const char *const ecc_kinds[] = {"corrected", "uncorrected"};
	if (!read_object(r, o, "ecc", &ecc, ecc_keys, N(ecc_keys)))
		return false;
	if (ecc) {
		size_t at_ecc = strlen(r->jp.path);
		for (int c = 0; c < 2; c++) {
			const cJSON *k;
			if (!read_object(r, ecc, ecc_keys[c], &k, ecc_kinds, N(ecc_kinds)))
				return false;
			if (k)
				for (int t = 0; t < 2; t++)
					if (!get_ull(r, k, ecc_kinds[t], &g->ecc[c][t]))
						return false;
			path_pop(r, at_ecc);
		}
	}
	path_pop(r, base);

	const cJSON *rp;
	static const char *const rp_keys[] = {"sbe", "dbe", "pending"};
	if (!read_object(r, o, "retired_pages", &rp, rp_keys, N(rp_keys)))
		return false;
	if (rp && (!get_uint(r, rp, "sbe", &g->retired_sbe) || !get_uint(r, rp, "dbe", &g->retired_dbe) ||
	           !get_bool(r, rp, "pending", &g->retired_pending)))
		return false;
	path_pop(r, base);

	const cJSON *rr;
	static const char *const rr_keys[] = {"corrected", "uncorrected", "pending", "failed"};
	if (!read_object(r, o, "remapped_rows", &rr, rr_keys, N(rr_keys)))
		return false;
	if (rr && (!get_uint(r, rr, "corrected", &g->remap_corrected) ||
	           !get_uint(r, rr, "uncorrected", &g->remap_uncorrected) ||
	           !get_bool(r, rr, "pending", &g->remap_pending) || !get_bool(r, rr, "failed", &g->remap_failed)))
		return false;
	path_pop(r, base);

	const cJSON *pc;
	static const char *const pc_keys[] = {"gen", "gen_max", "width", "width_max", "replays"};
	if (!read_object(r, o, "pcie", &pc, pc_keys, N(pc_keys)))
		return false;
	if (pc && (!get_uint(r, pc, "gen", &g->pcie_gen) || !get_uint(r, pc, "gen_max", &g->pcie_gen_max) ||
	           !get_uint(r, pc, "width", &g->pcie_width) || !get_uint(r, pc, "width_max", &g->pcie_width_max) ||
	           !get_uint(r, pc, "replays", &g->pcie_replays)))
		return false;
	path_pop(r, base);

	const cJSON *cr = cJSON_GetObjectItemCaseSensitive(o, "clock_reasons");
	if (cr && !read_clock_reasons(r, cr, &g->clock_reasons))
		return false;
	if (!get_uint(r, o, "temperature_c", &g->temperature_c) || !get_uint(r, o, "sm_clock_mhz", &g->sm_clock_mhz) ||
	    !get_uint(r, o, "sm_clock_max_mhz", &g->sm_clock_max_mhz) || !get_uint(r, o, "power_mw", &g->power_mw) ||
	    !get_uint(r, o, "minor", &g->minor) || !get_uint(r, o, "utilization_gpu", &g->utilization_gpu) ||
	    !get_uint(r, o, "pstate", &g->pstate) || !get_uint(r, o, "memory_used_mib", &g->memory_used_mib) ||
	    !get_uint(r, o, "memory_total_mib", &g->memory_total_mib) ||
	    !get_uint(r, o, "power_limit_mw", &g->power_limit_mw) ||
	    !get_uint(r, o, "power_default_limit_mw", &g->power_default_limit_mw) ||
	    !get_uint(r, o, "app_sm_clock_mhz", &g->app_sm_clock_mhz))
		return false;

	const cJSON *nv = cJSON_GetObjectItemCaseSensitive(o, "nvlink");
	if (nv) {
		path_push(r, "nvlink", 0);
		if (!cJSON_IsArray(nv))
			return bad(r, "expected a list of links ([] for a GPU without NVLink)");
		int n = cJSON_GetArraySize(nv);
		if (n > SYNTH_LINKS_MAX)
			return bad(r, "%d links; NVML knows at most %d", n, SYNTH_LINKS_MAX);
		g->n_links = (unsigned)n;
		int i = 0;
		static const char *const link_keys[] = {"active", "replay", "recovery", "crc"};
		for (const cJSON *e = nv->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			struct synth_link *l = &g->link[i];
			*l = (struct synth_link){.active = true};
			if (!check_keys(r, e, link_keys, N(link_keys)) || !get_bool(r, e, "active", &l->active) ||
			    !get_ull(r, e, "replay", &l->replay) || !get_ull(r, e, "recovery", &l->recovery) ||
			    !get_ull(r, e, "crc", &l->crc))
				return false;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}

	const cJSON *procs = cJSON_GetObjectItemCaseSensitive(o, "processes");
	if (procs) {
		path_push(r, "processes", 0);
		if (!cJSON_IsArray(procs) || cJSON_GetArraySize(procs) > 64)
			return bad(r, "expected a list of at most 64 process ids");
		int i = 0;
		for (const cJSON *e = procs->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > 4194304 ||
			    e->valuedouble != (double)(unsigned)e->valuedouble)
				return bad(r, "expected a process id from 1 to 4194304");
			g->process[g->n_processes++] = (unsigned)e->valuedouble;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}
	const cJSON *p2p = cJSON_GetObjectItemCaseSensitive(o, "p2p");
	if (p2p) {
		path_push(r, "p2p", 0);
		if (!cJSON_IsObject(p2p) || cJSON_GetArraySize(p2p) > SYNTH_P2P_MAX)
			return bad(r, "expected an object of at most %d peers: {\"3\": \"disabled_by_regkey\"}",
			           SYNTH_P2P_MAX);
		for (const cJSON *e = p2p->child; e; e = e->next) {
			size_t o2 = path_push(r, e->string, 0);
			char *end = NULL;
			unsigned long peer = strtoul(e->string, &end, 10);
			if (!e->string[0] || *end || peer >= SYNTH_GPUS_MAX)
				return bad(r, "a peer is a GPU index (\"0\" to \"%d\")", SYNTH_GPUS_MAX - 1);
			size_t k = 0;
			while (k < N(p2p_status_names) &&
			       !(cJSON_IsString(e) && strcmp(e->valuestring, p2p_status_names[k]) == 0))
				k++;
			if (k == N(p2p_status_names))
				return bad(r, "expected a peer-access status such as \"disabled_by_regkey\"");
			g->p2p_peer[g->n_p2p] = (unsigned)peer;
			g->p2p_status[g->n_p2p++] = (unsigned)k;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}
	if (g->pstate > 15)
		return bad(r, "pstate: expected 0 (P0) to 15 (P15)");
	if (g->utilization_gpu > 100)
		return bad(r, "utilization_gpu: expected a percentage from 0 to 100");
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(o, "not_supported");
	if (ns) {
		path_push(r, "not_supported", 0);
		if (!cJSON_IsArray(ns))
			return bad(r, "expected a list of NVML call names or groups");
		int i = 0;
		for (const cJSON *e = ns->child; e; e = e->next, i++) {
			size_t o2 = path_push(r, NULL, i);
			if (!read_calls(r, e, &g->not_supported))
				return false;
			path_pop(r, o2);
		}
		path_pop(r, base);
	}
	const cJSON *er = cJSON_GetObjectItemCaseSensitive(o, "errors");
	if (er && !read_errors(r, er, g->error))
		return false;
	if (!read_probe(r, cJSON_GetObjectItemCaseSensitive(o, "probe"), g))
		return false;
	path_pop(r, base);
	return read_hang(r, o, &g->hang);
}

static bool read_scenario(struct reader *r, const cJSON *doc, struct scenario *s)
{
	static const char *const keys[] = {"schema", "driver", "nvml_version", "fail", "gpus"};
	if (!check_keys(r, doc, keys, N(keys)))
		return false;
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (schema && !(cJSON_IsString(schema) && strcmp(schema->valuestring, SCHEMA) == 0)) {
		path_push(r, "schema", 0);
		return bad(r, "expected \"" SCHEMA "\"");
	}
	snprintf(s->driver, sizeof s->driver, "550.54.15");
	snprintf(s->nvml_version, sizeof s->nvml_version, "12.550.54.15");
	if (!get_string(r, doc, "driver", s->driver, sizeof s->driver) ||
	    !get_string(r, doc, "nvml_version", s->nvml_version, sizeof s->nvml_version))
		return false;

	const cJSON *fail = cJSON_GetObjectItemCaseSensitive(doc, "fail");
	if (fail && !cJSON_IsNull(fail)) {
		static const char *const fail_keys[] = {"init", "hang", "zero_devices", "errors"};
		path_push(r, "fail", 0);
		if (!check_keys(r, fail, fail_keys, N(fail_keys)))
			return false;
		const cJSON *init = cJSON_GetObjectItemCaseSensitive(fail, "init");
		if (init && !cJSON_IsNull(init)) {
			size_t old = path_push(r, "init", 0);
			if (!read_code(r, init, &s->init_error))
				return false;
			path_pop(r, old);
		}
		if (!read_hang(r, fail, &s->hang) || !get_bool(r, fail, "zero_devices", &s->zero_devices))
			return false;
		const cJSON *er = cJSON_GetObjectItemCaseSensitive(fail, "errors");
		if (er && !read_errors(r, er, s->error))
			return false;
		path_pop(r, 0);
	}

	const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
	if (gpus && !cJSON_IsArray(gpus)) {
		path_push(r, "gpus", 0);
		return bad(r, "expected a list of GPUs");
	}
	int n = gpus ? cJSON_GetArraySize(gpus) : 8;
	if (n > SYNTH_GPUS_MAX) {
		path_push(r, "gpus", 0);
		return bad(r, "%d GPUs; at most %d", n, SYNTH_GPUS_MAX);
	}
	s->n_gpus = (unsigned)n;
	s->gpu = calloc(n ? (size_t)n : 1, sizeof *s->gpu);
	if (!s->gpu)
		return bad(r, "out of memory");
	for (unsigned i = 0; i < s->n_gpus; i++)
		gpu_defaults(&s->gpu[i], i);
	if (gpus) {
		int i = 0;
		for (const cJSON *e = gpus->child; e; e = e->next, i++) {
			path_push(r, "gpus", 0);
			path_push(r, NULL, i);
			if (!read_gpu(r, e, &s->gpu[i]))
				return false;
			path_pop(r, 0);
		}
	}
	for (unsigned i = 0; i < s->n_gpus; i++)
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(s->gpu[i].uuid, s->gpu[j].uuid) == 0) {
				snprintf(r->jp.path, sizeof r->jp.path, "gpus[%u].uuid", i);
				return bad(r, "\"%s\" is also the uuid of gpus[%u]", s->gpu[i].uuid, j);
			}
			if (s->gpu[i].domain == s->gpu[j].domain && s->gpu[i].bus == s->gpu[j].bus &&
			    s->gpu[i].device == s->gpu[j].device) {
				snprintf(r->jp.path, sizeof r->jp.path, "gpus[%u].pci_bus_id", i);
				return bad(r, "%08X:%02X:%02X.0 is also the address of gpus[%u]", s->gpu[i].domain,
				           s->gpu[i].bus, s->gpu[i].device, j);
			}
		}
	return true;
}

void ng_synth_scenario_free(struct scenario *s)
{
	if (s) {
		for (unsigned i = 0; s->gpu && i < s->n_gpus; i++)
			free(s->gpu[i].throttled);
		free(s->gpu);
		free(s);
	}
}

/* Seconds since this process started (/proc/self/stat's starttime against
 * the boot clock), or -1 when unreadable. The scenario is read at each
 * session's nvmlInit, so a snapshot sees the time it was taken. */
static double process_age_s(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return -1;
	bool ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	const char *p = ok ? strrchr(line, ')') : NULL;
	if (!p)
		return -1;
	/* After the command's closing parenthesis: field 3 on; starttime is 22. */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	unsigned long long start;
	long ticks = sysconf(_SC_CLK_TCK);
	struct timespec now;
	if (!p || sscanf(p + 1, "%llu", &start) != 1 || ticks <= 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &now) != 0)
		return -1;
	return (double)now.tv_sec + (double)now.tv_nsec * 1e-9 - (double)start / (double)ticks;
}

static void apply_throttles(struct scenario *s)
{
	double age = -1;
	for (unsigned i = 0; i < s->n_gpus; i++) {
		struct nvmlDevice_st *g = &s->gpu[i];
		if (!g->throttle)
			continue;
		if (age < 0)
			age = process_age_s();
		if (age >= g->throttle_after_s) {
			g->clock_reasons = g->throttled->clock_reasons;
			g->temperature_c = g->throttled->temperature_c;
			g->sm_clock_mhz = g->throttled->sm_clock_mhz;
			g->power_mw = g->throttled->power_mw;
		}
	}
}

/* The scenario $NODEGATE_SYNTH_GPUS names, or NULL after one line on stderr. */
struct scenario *ng_synth_scenario_load(void)
{
	struct reader r = {0};
	const char *file = getenv("NODEGATE_SYNTH_GPUS");
	char *text = NULL;
	cJSON *doc = NULL;
	struct scenario *s = NULL;
	if (!file || !*file) {
		fprintf(stderr, "nodegate-nvml-synth: NODEGATE_SYNTH_GPUS is not set; set it to a scenario "
		                "file (docs/synthetic-gpus.md)\n");
		return NULL;
	}
	r.file = file;
	FILE *f = fopen(file, "rb");
	if (!f) {
		bad(&r, "cannot open it: %s", strerror(errno));
		goto fail;
	}
	text = malloc(SCENARIO_BYTES_MAX + 1);
	size_t len = text ? fread(text, 1, SCENARIO_BYTES_MAX + 1, f) : 0;
	bool read_error = text && ferror(f);
	fclose(f);
	if (!text) {
		bad(&r, "out of memory");
		goto fail;
	}
	if (read_error) {
		bad(&r, "cannot read it");
		goto fail;
	}
	if (len > SCENARIO_BYTES_MAX) {
		bad(&r, "larger than %u bytes", SCENARIO_BYTES_MAX);
		goto fail;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		bad(&r, "not JSON: a NUL byte at offset %zu", strlen(text));
		goto fail;
	}
	const char *end = NULL;
	doc = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
	if (!doc) {
		size_t at = end && end >= text ? (size_t)(end - text) : 0;
		size_t line = 1;
		for (size_t i = 0; i < at && i < len; i++)
			line += text[i] == '\n';
		bad(&r, "not valid JSON (near byte %zu, line %zu)", at + 1, line);
		goto fail;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		bad(&r, "out of memory");
		goto fail;
	}
	if (!read_scenario(&r, doc, s))
		goto fail;
	apply_throttles(s);
	cJSON_Delete(doc);
	free(text);
	return s;
fail:
	fprintf(stderr, "nodegate-nvml-synth: %s: %s\n", file, r.jp.msg);
	cJSON_Delete(doc);
	free(text);
	ng_synth_scenario_free(s);
	return NULL;
}


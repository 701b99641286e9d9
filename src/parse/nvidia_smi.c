/* nvidia-smi -q (text) into a GPU snapshot (parse/nvidia_smi.h).
 *
 * The dump is an indented tree: "GPU 00000000:18:00.0" at column 0, then
 * "key : value" lines and section names, four spaces a level. The value
 * column moves between drivers (column 37 in 410, 43 in 535, 56 in 590), so
 * a line is split at its first " : ", and a field is found by its path of
 * section names, whatever the indentation. */
#include "parse/nvidia_smi.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse/text.h"

#define DEPTH 8

typedef struct {
	size_t indent;
	ng_span key;
} level;

/* A field summed from several lines (ECC) or OR-ed from several (clock
 * reasons): OK when any line was read, FAILED when any failed. */
typedef struct {
	unsigned n_ok, n_na, n_failed;
	uint64_t value;
	int nvml_return;
} acc;

enum { A_VOL_CORR, A_VOL_UNC, A_AGG_CORR, A_AGG_UNC, A_CLOCK, A_COUNT };

typedef struct {
	ng_gpu_snapshot *out;
	ng_gpu_state *gpu; /* the section being read, or NULL */
	level stack[DEPTH];
	size_t depth;
	acc acc[A_COUNT];
	int power_rank; /* which power line set power_mw */
	uint32_t pending_pid; /* the last "Process ID" line, until its "Type" */
} reader;

/* ---- values ------------------------------------------------------------------------- */

typedef enum { V_VALUE, V_NA, V_FAILED } vclass;

static bool eq_ci(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	if (s.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char a = s.s[i], b = lit[i];
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (char)(b - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

/* NVML's words for what it could not give (nvmlErrorString), with their
 * return codes (nvml.md section 2). */
static const struct {
	const char *text;
	vclass cls;
	int nvml_return;
} value_words[] = {
	{"N/A", V_NA, 3},
	{"Not Supported", V_NA, 3},
	{"Not Available", V_NA, 3},
	{"Requested functionality has been deprecated", V_NA, 26},
	{"Unknown Error", V_FAILED, 999},
	{"ERR!", V_FAILED, 999},
	{"GPU requires reset", V_FAILED, 16},
	{"GPU is lost", V_FAILED, 15},
	{"Insufficient Permissions", V_FAILED, 4},
	{"No Permission", V_FAILED, 4},
	{"Timeout", V_FAILED, 10},
	{"Not Ready", V_FAILED, 27},
	{"No data", V_FAILED, 21},
	{"Corrupted infoROM", V_FAILED, 14},
	{"Insufficient External Power", V_FAILED, 8},
	{"Driver Not Loaded", V_FAILED, 9},
	{"Function Not Found", V_FAILED, 13},
	{"Uninitialized", V_FAILED, 1},
};

static vclass classify(ng_span v, int *nvml_return)
{
	v = ng_span_trim(v);
	if (v.len >= 2 && v.s[0] == '[' && v.s[v.len - 1] == ']')
		v = ng_span_trim((ng_span){v.s + 1, v.len - 2});
	for (size_t i = 0; i < sizeof value_words / sizeof *value_words; i++)
		if (eq_ci(v, value_words[i].text)) {
			*nvml_return = value_words[i].nvml_return;
			return value_words[i].cls;
		}
	*nvml_return = 0;
	return V_VALUE;
}

/* A whole number, then the unit (if any) the field is printed with:
 * "5", "16x", "44 C", "1980 MHz". */
static bool count_value(ng_span v, const char *unit, uint64_t *out)
{
	v = ng_span_trim(v);
	size_t i = 0;
	uint64_t n = 0;
	while (i < v.len && v.s[i] >= '0' && v.s[i] <= '9') {
		uint64_t d = (uint64_t)(v.s[i++] - '0');
		if (n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	if (i == 0)
		return false;
	ng_span rest = ng_span_trim((ng_span){v.s + i, v.len - i});
	if (unit ? !eq_ci(rest, unit) : rest.len != 0)
		return false;
	*out = n;
	return true;
}

/* "67.74 W" as milliwatts. */
static bool watts_value(ng_span v, uint64_t *mw)
{
	v = ng_span_trim(v);
	if (v.len < 2 || v.s[v.len - 1] != 'W')
		return false;
	double w;
	if (!ng_span_number(ng_span_trim((ng_span){v.s, v.len - 1}), &w) || !(w >= 0) || w > 1e9)
		return false;
	*mw = (uint64_t)llround(w * 1000.0);
	return true;
}

static bool yes_no(ng_span v, uint64_t *out)
{
	v = ng_span_trim(v);
	if (eq_ci(v, "Yes") || eq_ci(v, "Active")) {
		*out = 1;
		return true;
	}
	if (eq_ci(v, "No") || eq_ci(v, "Not Active")) {
		*out = 0;
		return true;
	}
	return false;
}

/* ---- fields ------------------------------------------------------------------------- */

typedef enum {
	F_COUNT,  /* a whole number with an optional unit */
	F_BOOL,   /* Yes/No */
	F_WATTS,  /* power, into milliwatts */
	F_ACC,    /* summed into acc[target] */
	F_CLOCK,  /* Active/Not Active, OR-ed into acc[A_CLOCK] as bit */
	F_UUID,
	F_NAME,
	F_GROUP,  /* a section printed as one "N/A" line: its fields */
	F_PSTATE, /* "P8": the performance state's number */
	F_PROCS,  /* "Processes: None", or a section of "Process ID" lines: how many */
	F_PID,    /* one "Process ID" line under "Processes" */
	F_PTYPE,  /* its "Type": C (compute) counts, G (graphics) does not */
} fkind;

#define GOFF(f) offsetof(ng_gpu_state, f)

enum { GR_REMAP, GR_RETIRED, GR_ECC, GR_CLOCK, GR_LINK };

/* Where a line is (its sections, "/" between levels, "|" between the names
 * a section has had), its key, and what it fills. deep: the line may sit
 * further down (HW Thermal Slowdown is indented under HW Slowdown in 535). */
static const struct mapping {
	const char *path, *keys;
	fkind kind;
	size_t target; /* field offset, acc index, group, or power rank */
	const char *unit;
	uint64_t bit;
	bool deep;
} mappings[] = {
	{"", "Product Name", F_NAME, 0, NULL, 0, false},
	{"", "GPU UUID", F_UUID, 0, NULL, 0, false},
	{"", "Remapped Rows", F_GROUP, GR_REMAP, NULL, 0, false},
	{"", "Retired Pages", F_GROUP, GR_RETIRED, NULL, 0, false},
	{"", "ECC Errors", F_GROUP, GR_ECC, NULL, 0, false},
	{"", "Clocks Event Reasons|Clocks Throttle Reasons", F_GROUP, GR_CLOCK, NULL, 0, false},
	{"PCI", "GPU Link Info", F_GROUP, GR_LINK, NULL, 0, false},
	{"PCI/GPU Link Info/PCIe Generation", "Max", F_COUNT, GOFF(pcie_gen_max), NULL, 0, false},
	{"PCI/GPU Link Info/PCIe Generation", "Current", F_COUNT, GOFF(pcie_gen), NULL, 0, false},
	{"PCI/GPU Link Info/Link Width", "Max", F_COUNT, GOFF(pcie_width_max), "x", 0, false},
	{"PCI/GPU Link Info/Link Width", "Current", F_COUNT, GOFF(pcie_width), "x", 0, false},
	{"PCI", "Replays Since Reset|Replay Number", F_COUNT, GOFF(pcie_replays), NULL, 0, false},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "Idle", F_CLOCK, 0, NULL, NG_CLK_GPU_IDLE, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "Applications Clocks Setting", F_CLOCK, 0, NULL, 0x2, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "SW Power Cap", F_CLOCK, 0, NULL, NG_CLK_SW_POWER_CAP, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "HW Slowdown", F_CLOCK, 0, NULL, NG_CLK_HW_SLOWDOWN, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "Sync Boost", F_CLOCK, 0, NULL, 0x10, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "SW Thermal Slowdown", F_CLOCK, 0, NULL, NG_CLK_SW_THERMAL, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "HW Thermal Slowdown", F_CLOCK, 0, NULL, NG_CLK_HW_THERMAL, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "HW Power Brake Slowdown", F_CLOCK, 0, NULL,
	 NG_CLK_HW_POWER_BRAKE, true},
	{"Clocks Event Reasons|Clocks Throttle Reasons", "Display Clock Setting", F_CLOCK, 0, NULL, 0x100, true},
	{"ECC Errors/Volatile", "SRAM Correctable|DRAM Correctable", F_ACC, A_VOL_CORR, NULL, 0, false},
	{"ECC Errors/Volatile",
	 "SRAM Uncorrectable|SRAM Uncorrectable Parity|SRAM Uncorrectable SEC-DED|DRAM Uncorrectable", F_ACC,
	 A_VOL_UNC, NULL, 0, false},
	{"ECC Errors/Volatile/Single Bit", "Total", F_ACC, A_VOL_CORR, NULL, 0, false},
	{"ECC Errors/Volatile/Double Bit", "Total", F_ACC, A_VOL_UNC, NULL, 0, false},
	{"ECC Errors/Aggregate", "SRAM Correctable|DRAM Correctable", F_ACC, A_AGG_CORR, NULL, 0, false},
	{"ECC Errors/Aggregate",
	 "SRAM Uncorrectable|SRAM Uncorrectable Parity|SRAM Uncorrectable SEC-DED|DRAM Uncorrectable", F_ACC,
	 A_AGG_UNC, NULL, 0, false},
	{"ECC Errors/Aggregate/Single Bit", "Total", F_ACC, A_AGG_CORR, NULL, 0, false},
	{"ECC Errors/Aggregate/Double Bit", "Total", F_ACC, A_AGG_UNC, NULL, 0, false},
	{"Retired Pages", "Single Bit ECC", F_COUNT, GOFF(retired_pages_sbe), NULL, 0, false},
	{"Retired Pages", "Double Bit ECC", F_COUNT, GOFF(retired_pages_dbe), NULL, 0, false},
	{"Retired Pages", "Pending Page Blacklist|Pending Page Retirement|Pending", F_BOOL, GOFF(retired_pending),
	 NULL, 0, false},
	{"Remapped Rows", "Correctable Error", F_COUNT, GOFF(remap_corrected), NULL, 0, false},
	{"Remapped Rows", "Uncorrectable Error", F_COUNT, GOFF(remap_uncorrected), NULL, 0, false},
	{"Remapped Rows", "Pending", F_BOOL, GOFF(remap_pending), NULL, 0, false},
	{"Remapped Rows", "Remapping Failure Occurred", F_BOOL, GOFF(remap_failed), NULL, 0, false},
	{"Temperature", "GPU Current Temp", F_COUNT, GOFF(temperature_c), "C", 0, false},
	{"", "Performance State", F_PSTATE, GOFF(pstate), NULL, 0, false},
	{"Utilization", "Gpu|GPU", F_COUNT, GOFF(utilization_gpu), "%", 0, false},
	{"FB Memory Usage", "Used", F_COUNT, GOFF(memory_used_mib), "MiB", 0, false},
	{"FB Memory Usage", "Total", F_COUNT, GOFF(memory_total_mib), "MiB", 0, false},
	{"", "Processes", F_PROCS, GOFF(processes), NULL, 0, false},
	{"Processes", "Process ID", F_PID, GOFF(processes), NULL, 0, true},
	{"Processes", "Type", F_PTYPE, GOFF(processes), NULL, 0, true},
	{"Clocks", "SM", F_COUNT, GOFF(sm_clock_mhz), "MHz", 0, false},
	{"Max Clocks", "SM", F_COUNT, GOFF(sm_clock_max_mhz), "MHz", 0, false},
	{"GPU Power Readings|Power Readings", "Power Draw", F_WATTS, 3, NULL, 0, false},
	{"GPU Power Readings|Power Readings", "Instantaneous Power Draw", F_WATTS, 2, NULL, 0, false},
	{"GPU Power Readings|Power Readings", "Average Power Draw", F_WATTS, 1, NULL, 0, false},
};

static const size_t group_remap[] = {GOFF(remap_corrected), GOFF(remap_uncorrected), GOFF(remap_pending),
                                     GOFF(remap_failed)};
static const size_t group_retired[] = {GOFF(retired_pages_sbe), GOFF(retired_pages_dbe), GOFF(retired_pending)};
static const size_t group_link[] = {GOFF(pcie_gen), GOFF(pcie_gen_max), GOFF(pcie_width), GOFF(pcie_width_max)};

/* Every field of a GPU, for one that could not be read at all. */
static const size_t all_fields[] = {
	GOFF(ecc_volatile_uncorrected), GOFF(ecc_aggregate_uncorrected), GOFF(ecc_volatile_corrected),
	GOFF(ecc_aggregate_corrected), GOFF(retired_pages_sbe), GOFF(retired_pages_dbe), GOFF(retired_pending),
	GOFF(remap_corrected), GOFF(remap_uncorrected), GOFF(remap_pending), GOFF(remap_failed), GOFF(pcie_gen),
	GOFF(pcie_gen_max), GOFF(pcie_width), GOFF(pcie_width_max), GOFF(pcie_replays), GOFF(clock_reasons),
	GOFF(temperature_c), GOFF(sm_clock_mhz), GOFF(sm_clock_max_mhz), GOFF(power_mw),
};

static ng_gpu_field *field_at(ng_gpu_state *g, size_t off) { return (ng_gpu_field *)((char *)g + off); }

/* Whether name is one of alts ("a|b|c"), ignoring case. */
static bool one_of(ng_span name, const char *alts, size_t alts_len)
{
	const char *p = alts, *end = alts + alts_len;
	while (p <= end) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		const char *stop = bar ? bar : end;
		char alt[96];
		size_t n = (size_t)(stop - p);
		if (n < sizeof alt) {
			memcpy(alt, p, n);
			alt[n] = '\0';
			if (eq_ci(name, alt))
				return true;
		}
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

static bool path_matches(const reader *r, const struct mapping *m)
{
	const char *p = m->path;
	size_t level_i = 0;
	if (*p) {
		for (;;) {
			const char *slash = strchr(p, '/');
			size_t n = slash ? (size_t)(slash - p) : strlen(p);
			if (level_i >= r->depth || !one_of(r->stack[level_i].key, p, n))
				return false;
			level_i++;
			if (!slash)
				break;
			p = slash + 1;
		}
	}
	return m->deep ? level_i <= r->depth : level_i == r->depth;
}

static void set_field(ng_gpu_field *f, ng_field_state st, uint64_t value, int nvml_return)
{
	f->state = st;
	f->value = st == NG_FIELD_OK ? value : 0;
	f->nvml_return = st == NG_FIELD_OK ? 0 : nvml_return;
}

static void acc_add(acc *a, vclass c, uint64_t v, int nvml_return, bool or_bits)
{
	if (c == V_NA) {
		a->n_na++;
	} else if (c == V_FAILED) {
		if (!a->n_failed)
			a->nvml_return = nvml_return;
		a->n_failed++;
	} else {
		a->n_ok++;
		if (or_bits)
			a->value |= v;
		else
			a->value = a->value > UINT64_MAX - v ? UINT64_MAX : a->value + v;
	}
}

static void acc_to_field(const acc *a, ng_gpu_field *f)
{
	if (a->n_failed)
		set_field(f, NG_FIELD_FAILED, 0, a->nvml_return ? a->nvml_return : 999);
	else if (a->n_ok)
		set_field(f, NG_FIELD_OK, a->value, 0);
	else if (a->n_na)
		set_field(f, NG_FIELD_NOT_SUPPORTED, 0, 3);
}

/* Printable ASCII only: the text goes to JSON and to terminals. */
static void copy_text(char *dst, size_t cap, ng_span s)
{
	s = ng_span_trim(s);
	size_t n = s.len < cap - 1 ? s.len : cap - 1;
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s.s[k];
		dst[k] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[n] = '\0';
}

static void group_state(reader *r, size_t group, vclass c, int nvml_return)
{
	ng_field_state st = c == V_NA ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED;
	const size_t *offs = NULL;
	size_t n = 0;
	switch (group) {
	case GR_REMAP: offs = group_remap, n = sizeof group_remap / sizeof *group_remap; break;
	case GR_RETIRED: offs = group_retired, n = sizeof group_retired / sizeof *group_retired; break;
	case GR_LINK: offs = group_link, n = sizeof group_link / sizeof *group_link; break;
	case GR_ECC:
		for (size_t a = A_VOL_CORR; a <= A_AGG_UNC; a++)
			acc_add(&r->acc[a], c, 0, nvml_return, false);
		return;
	case GR_CLOCK: acc_add(&r->acc[A_CLOCK], c, 0, nvml_return, true); return;
	}
	for (size_t i = 0; i < n; i++)
		set_field(field_at(r->gpu, offs[i]), st, 0, nvml_return);
}

/* One "key : value" line (or a section name, value.s == NULL) of a GPU. */
static void gpu_line(reader *r, ng_span key, ng_span value, bool has_value)
{
	for (size_t i = 0; i < sizeof mappings / sizeof *mappings; i++) {
		const struct mapping *m = &mappings[i];
		if (!one_of(key, m->keys, strlen(m->keys)) || !path_matches(r, m))
			continue;
		if (m->kind == F_PROCS && !has_value) {
			/* a list of processes follows: each "Process ID" counts one */
			set_field(&r->gpu->processes, NG_FIELD_OK, 0, 0);
			return;
		}
		if (!has_value)
			return; /* a section, read line by line */
		int code;
		vclass c = classify(value, &code);
		if (c == V_FAILED && code == 15)
			r->gpu->lost = true;
		uint64_t v = 0;
		switch (m->kind) {
		case F_NAME: copy_text(r->gpu->name, sizeof r->gpu->name, value); return;
		case F_PSTATE: {
			ng_span t = ng_span_trim(value);
			bool ok = c == V_VALUE && t.len >= 2 && t.len <= 3 && t.s[0] == 'P' &&
			          count_value((ng_span){t.s + 1, t.len - 1}, NULL, &v) && v <= 15;
			if (c == V_VALUE && !ok)
				c = V_FAILED, code = 999;
			set_field(&r->gpu->pstate,
			          c == V_VALUE ? NG_FIELD_OK : c == V_NA ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED, v, code);
			return;
		}
		case F_PROCS:
			if (c == V_VALUE && eq_ci(ng_span_trim(value), "None"))
				set_field(&r->gpu->processes, NG_FIELD_OK, 0, 0);
			else if (c != V_VALUE)
				set_field(&r->gpu->processes, c == V_NA ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED, 0, code);
			return;
		case F_PID:
			r->pending_pid = c == V_VALUE && count_value(value, NULL, &v) && v > 0 && v <= UINT32_MAX
			                     ? (uint32_t)v
			                     : 0;
			return;
		case F_PTYPE: {
			/* only compute processes make a GPU busy ("C", "C+G"); a
			 * display server's graphics context ("G") does not */
			ng_span t = ng_span_trim(value);
			bool compute = c == V_VALUE && memchr(t.s, 'C', t.len) != NULL;
			if (compute && r->gpu->processes.state == NG_FIELD_OK) {
				r->gpu->processes.value++;
				if (r->pending_pid && r->gpu->n_pids < 8)
					r->gpu->pid[r->gpu->n_pids++] = r->pending_pid;
			}
			r->pending_pid = 0;
			return;
		}
		case F_UUID: copy_text(r->gpu->uuid, sizeof r->gpu->uuid, value); return;
		case F_GROUP:
			if (c != V_VALUE)
				group_state(r, m->target, c, code);
			return;
		case F_ACC:
			if (c == V_VALUE && !count_value(value, NULL, &v))
				c = V_FAILED, code = 999;
			acc_add(&r->acc[m->target], c, v, code, false);
			return;
		case F_CLOCK:
			if (c == V_VALUE && !yes_no(value, &v))
				c = V_FAILED, code = 999;
			acc_add(&r->acc[A_CLOCK], c, v ? m->bit : 0, code, true);
			return;
		case F_WATTS: {
			if ((int)m->target < r->power_rank)
				return; /* a better power line was read */
			r->power_rank = (int)m->target;
			if (c == V_VALUE && !watts_value(value, &v))
				c = V_FAILED, code = 999;
			set_field(&r->gpu->power_mw, c == V_VALUE ? NG_FIELD_OK : c == V_NA ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED,
			          v, code);
			return;
		}
		case F_COUNT:
		case F_BOOL: {
			bool ok = c == V_VALUE && (m->kind == F_BOOL ? yes_no(value, &v) : count_value(value, m->unit, &v));
			if (c == V_VALUE && !ok)
				c = V_FAILED, code = 999;
			set_field(field_at(r->gpu, m->target),
			          c == V_VALUE ? NG_FIELD_OK : c == V_NA ? NG_FIELD_NOT_SUPPORTED : NG_FIELD_FAILED, v,
			          code);
			return;
		}
		}
	}
}

/* ---- sections ----------------------------------------------------------------------- */

static void end_gpu(reader *r)
{
	if (!r->gpu)
		return;
	acc_to_field(&r->acc[A_VOL_CORR], &r->gpu->ecc_volatile_corrected);
	acc_to_field(&r->acc[A_VOL_UNC], &r->gpu->ecc_volatile_uncorrected);
	acc_to_field(&r->acc[A_AGG_CORR], &r->gpu->ecc_aggregate_corrected);
	acc_to_field(&r->acc[A_AGG_UNC], &r->gpu->ecc_aggregate_uncorrected);
	acc_to_field(&r->acc[A_CLOCK], &r->gpu->clock_reasons);
	r->gpu = NULL;
}

/* A new GPU for bus; -1 when the bus is there already or there is no room. */
static int begin_gpu(reader *r, const char *bus, ng_err *err)
{
	end_gpu(r);
	ng_gpu_snapshot *s = r->out;
	for (size_t i = 0; i < s->n_gpus; i++)
		if (strcmp(s->gpu[i].bus, bus) == 0)
			return ng_fail(err,
			               "GPU %s appears twice: this holds more than one nvidia-smi -q output; save "
			               "one run per file",
			               bus);
	if (s->n_gpus == NG_GPU_MAX)
		return ng_fail_as(err, NG_ERR_INPUT, "more than %d GPUs in one nvidia-smi -q output", NG_GPU_MAX);
	ng_gpu_state *g = &s->gpu[s->n_gpus];
	memset(g, 0, sizeof *g);
	g->index = (int)s->n_gpus;
	snprintf(g->bus, sizeof g->bus, "%s", bus);
	s->n_gpus++;
	r->gpu = g;
	r->depth = 0;
	memset(r->acc, 0, sizeof r->acc);
	r->power_rank = 0;
	return 0;
}

/* "GPU 00000000:18:00.0" alone on a line: the bus, normalized. */
static bool gpu_header(ng_span line, char bus[16])
{
	line = ng_span_trim(line);
	if (line.len < 5 || line.len > 40 || memcmp(line.s, "GPU ", 4) != 0)
		return false;
	char addr[48];
	memcpy(addr, line.s + 4, line.len - 4);
	addr[line.len - 4] = '\0';
	return ng_gpu_bus_normalize(addr, bus) == 0;
}

/* "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.
 * Reboot the system to recover this GPU": a GPU nothing could be read from. */
static int unreadable_gpu(reader *r, ng_span line, ng_err *err)
{
	static const char lead[] = "Unable to determine the device handle for GPU ";
	line = ng_span_trim(line);
	if (!ng_span_starts_with(line, lead))
		return 1;
	ng_span rest = ng_span_skip(line, sizeof lead - 1);
	const char *colon = memchr(rest.s, ':', rest.len);
	/* the address has colons of its own: the reason follows ": " */
	const char *sep = rest.len ? memmem(rest.s, rest.len, ": ", 2) : NULL;
	if (!colon || !sep)
		return 1;
	char addr[48], bus[16];
	size_t n = (size_t)(sep - rest.s);
	if (n >= sizeof addr)
		return 1;
	memcpy(addr, rest.s, n);
	addr[n] = '\0';
	if (ng_gpu_bus_normalize(addr, bus) < 0)
		return 1;
	if (begin_gpu(r, bus, err) < 0)
		return -1;
	ng_gpu_state *g = r->gpu;
	ng_span why = ng_span_skip(rest, n + 2);
	copy_text(g->error, sizeof g->error, why);
	g->lost = ng_span_contains(why, "GPU is lost");
	for (size_t i = 0; i < sizeof all_fields / sizeof *all_fields; i++)
		set_field(field_at(g, all_fields[i]), NG_FIELD_FAILED, 0, g->lost ? 15 : 999);
	r->gpu = NULL; /* nothing else follows for it */
	return 0;
}

/* nvidia-smi's own words when it could not reach NVML or the driver. */
static const char *const nvml_failures[] = {
	"NVIDIA-SMI has failed",
	"Failed to initialize NVML",
	"couldn't communicate with the NVIDIA driver",
	"Unable to load the NVIDIA driver",
	"Driver/library version mismatch",
};

/* key and value of "key : value" (value.s NULL when the line is a section
 * name); false for a blank line. */
static bool split_line(ng_span line, size_t *indent, ng_span *key, ng_span *value, bool *has_value)
{
	size_t i = 0;
	while (i < line.len && (line.s[i] == ' ' || line.s[i] == '\t'))
		i++;
	*indent = i;
	ng_span body = ng_span_trim(ng_span_skip(line, i));
	if (!body.len)
		return false;
	const char *sep = memmem(body.s, body.len, " : ", 3);
	if (sep) {
		*key = ng_span_trim((ng_span){body.s, (size_t)(sep - body.s)});
		*value = ng_span_trim((ng_span){sep + 3, body.len - (size_t)(sep - body.s) - 3});
		*has_value = true;
	} else if (body.len >= 2 && body.s[body.len - 1] == ':' && body.s[body.len - 2] == ' ') {
		*key = ng_span_trim((ng_span){body.s, body.len - 1});
		*value = (ng_span){body.s + body.len, 0};
		*has_value = true;
	} else {
		*key = body;
		*value = (ng_span){NULL, 0};
		*has_value = false;
	}
	return true;
}

static void empty_snapshot(ng_gpu_snapshot *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->source, sizeof out->source, "nvidia-smi");
}

static int refuse(ng_gpu_snapshot *out, ng_err *err)
{
	empty_snapshot(out);
	out->nvml = NG_FIELD_FAILED;
	snprintf(out->nvml_error, sizeof out->nvml_error, "%.240s", err ? err->msg : "unreadable nvidia-smi output");
	return -1;
}

int ng_nvidia_smi_parse(const char *text, size_t len, ng_gpu_snapshot *out, ng_err *err)
{
	empty_snapshot(out);
	out->nvml = NG_FIELD_OK;
	if (!text)
		len = 0;
	reader r = {.out = out};
	bool header = false, attached_seen = false;
	long long attached = -1;
	char failure[256] = "";
	bool no_devices = false, xml = false;

	ng_lines it;
	ng_lines_init(&it, text ? text : "", len);
	ng_span line;
	while (ng_lines_next(&it, &line)) {
		size_t indent;
		ng_span key, value;
		bool has_value;
		if (!split_line(line, &indent, &key, &value, &has_value))
			continue;
		if (indent == 0) {
			char bus[16];
			if (gpu_header(line, bus)) {
				if (begin_gpu(&r, bus, err) < 0)
					return refuse(out, err);
				continue;
			}
			end_gpu(&r);
			int u = unreadable_gpu(&r, line, err);
			if (u < 0)
				return refuse(out, err);
			if (u == 0)
				continue;
			if (ng_span_contains(line, "NVSMI LOG"))
				header = true;
			else if (has_value && eq_ci(key, "Driver Version"))
				copy_text(out->driver, sizeof out->driver, value);
			else if (has_value && eq_ci(key, "Attached GPUs")) {
				attached_seen = ng_span_integer(value, &attached);
			} else if (ng_span_contains(line, "No devices were found"))
				no_devices = true;
			else if (ng_span_contains(line, "<nvidia_smi_log"))
				xml = true;
			else
				for (size_t i = 0; i < sizeof nvml_failures / sizeof *nvml_failures; i++)
					if (!failure[0] && ng_span_contains(line, nvml_failures[i]))
						copy_text(failure, sizeof failure, line);
			continue;
		}
		if (!r.gpu)
			continue;
		while (r.depth > 0 && r.stack[r.depth - 1].indent >= indent)
			r.depth--;
		gpu_line(&r, key, value, has_value);
		if (r.depth < DEPTH)
			r.stack[r.depth++] = (level){indent, key};
		else
			r.stack[DEPTH - 1] = (level){indent, key}; /* deeper than any dump: keep the nearest */
	}
	end_gpu(&r);

	if (out->n_gpus > 0)
		return 0;
	if (failure[0]) {
		out->nvml = NG_FIELD_FAILED;
		snprintf(out->nvml_error, sizeof out->nvml_error, "nvidia-smi: %.240s", failure);
		return 0;
	}
	if (no_devices || (header && attached_seen && attached == 0))
		return 0; /* NVML answered, and saw no GPU */
	if (xml)
		ng_fail_as(err, NG_ERR_INPUT, "this is nvidia-smi -q -x (XML); nodegate reads the text form: save nvidia-smi -q");
	else if (header && attached_seen)
		ng_fail_as(err, NG_ERR_INPUT, "the nvidia-smi -q output lists %lld GPUs but holds no GPU section: was it cut short?",
		        attached);
	else if (header)
		ng_fail_as(err, NG_ERR_INPUT, "the nvidia-smi -q output holds no GPU section: was it cut short?");
	else
		ng_fail_as(err, NG_ERR_INPUT, "not the output of nvidia-smi -q: no \"NVSMI LOG\" header, no \"GPU <PCI address>\" "
		             "section and no nvidia-smi error message");
	return refuse(out, err);
}

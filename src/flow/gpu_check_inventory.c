/* Every GPU accounted for: NVML's list, the kernel's view (collect/gpu_kernel.h)
 * and the job's ordinals by device minor.
 *
 * NVML is one witness. The PCI bus and the driver's own GPU list are
 * another: a GPU bound to the nvidia driver that NVML does not list, while
 * NVML answers for its siblings, has fallen off the bus or been given up by
 * the driver. That is evidence (gpu.missing), not ignorance. When NVML does
 * not answer at all (missing, failing, hung, listing nothing), the kernel's
 * GPUs are still named, so their kernel Xids can be judged; nothing else is
 * said about them.
 *
 * Slurm's ordinals (SLURM_JOB_GPUS) are device minors, the N of /dev/nvidiaN
 * that gres.conf File= names, not NVML's enumeration order: once GPU 0 has
 * vanished NVML renumbers the rest, and an ordinal taken as an NVML index
 * lands on a neighbour. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "flow/gpu_check_run.h"

#define KVIEW_MAX_BYTES (64u << 10)

static void kview_child(int wfd, const struct ng_gpu_check_result *c, const void *arg)
{
	(void)arg;
	ng_kernel_view *v = calloc(1, sizeof *v);
	char *buf = malloc(KVIEW_MAX_BYTES);
	if (!v || !buf)
		_exit(4);
	ng_kernel_view_read(c->root, v);
	size_t n = ng_kernel_view_write(v, buf, KVIEW_MAX_BYTES);
	ng_write_all(wfd, buf, n);
}

/* Whose kernel to read. A stand-in NVML (--library, NODEGATE_NVML_LIBRARY)
 * describes GPUs that are not this machine's: comparing them with this
 * machine's PCI bus would call every stand-in GPU's neighbour missing. So
 * with a stand-in, only a root given on purpose is read. */
static const char *kernel_root(const struct ng_gpu_check_result *c, bool *read)
{
	const char *env = getenv("NODEGATE_ROOT");
	if (c->root)
		return *read = true, c->root;
	if (env && *env)
		return *read = true, env;
	const char *lib = getenv("NODEGATE_NVML_LIBRARY");
	*read = !c->nvml_library && !(lib && *lib);
	return "/";
}

static void read_kernel_view(struct ng_gpu_check_result *c)
{
	bool want = false;
	const char *root = kernel_root(c, &want);
	if (!want || !(c->kview = calloc(1, sizeof *c->kview)))
		return;
	const char *saved = c->root;
	c->root = root;
	ng_bounded b;
	int rc = ng_check_run_bounded(c, "the kernel's GPU list", kview_child, NULL, KVIEW_MAX_BYTES, &b);
	c->root = saved;
	if (rc < 0 || !b.finished || !b.out.s) {
		ng_check_note(c, "kernel view: not read in time: GPUs NVML does not list are unknown");
	} else {
		ng_kernel_view_parse(b.out.s, b.out.len, c->kview);
		c->kview_read = c->kview->pci_read || c->kview->proc_read;
		for (size_t i = 0; i < c->kview->n_notes; i++)
			ng_check_note(c, "%s", c->kview->note[i]);
	}
	ng_strbuf_free(&b.out);
}

/* The kernel's word that the nvidia driver has this GPU: bound to it on
 * the PCI bus, or in the driver's own list. */
static bool nvidia_bound(const ng_kernel_gpu *k)
{
	return strcmp(k->driver, "nvidia") == 0;
}

static bool listed_at(const ng_gpu_snapshot *s, const char *bus)
{
	for (size_t i = 0; i < s->n_gpus; i++)
		if (s->gpu[i].presence == NG_GPU_LISTED && strcmp(s->gpu[i].bus, bus) == 0)
			return true;
	return false;
}

ng_gpu_state *ng_check_add_ghost(struct ng_gpu_check_result *c, ng_gpu_presence presence, const char *bus,
                                 int minor, const char *uuid, const char *seen_by)
{
	ng_gpu_snapshot *s = c->snap;
	if (s->n_gpus >= NG_GPU_MAX)
		return NULL;
	ng_gpu_state *g = &s->gpu[s->n_gpus++];
	memset(g, 0, sizeof *g);
	g->index = minor;
	g->presence = presence;
	snprintf(g->bus, sizeof g->bus, "%s", bus ? bus : "");
	snprintf(g->uuid, sizeof g->uuid, "%s", uuid ? uuid : "");
	snprintf(g->seen_by, sizeof g->seen_by, "%s", seen_by);
	if (minor >= 0) {
		g->minor.state = NG_FIELD_OK;
		g->minor.value = (uint64_t)minor;
	}
	return g;
}

/* A GPU the kernel knows that NVML does not list: missing when NVML
 * answered for others, unanswered when it did not. */
static void add_kernel_ghost(struct ng_gpu_check_result *c, const ng_kernel_gpu *k)
{
	if (k->excluded) {
		ng_check_note(c, "GPU %s is excluded in the driver's configuration: reported, not counted "
		                 "missing",
		              k->bus);
		return;
	}
	if (!nvidia_bound(k)) {
		ng_check_note(c, "GPU %s is bound to %s, not the nvidia driver (passed through to a VM, or "
		                 "unclaimed): reported, not counted missing",
		              k->bus, k->driver[0] ? k->driver : "no driver");
		return;
	}
	ng_check_add_ghost(c, c->nvml_answered ? NG_GPU_MISSING : NG_GPU_UNANSWERED, k->bus, k->minor,
	                   k->uuid, "the kernel");
}

/* A GPU's device minor: NVML's, else the kernel's for its bus; -1 unknown. */
static int minor_of(const struct ng_gpu_check_result *c, const ng_gpu_state *g)
{
	if (g->minor.state == NG_FIELD_OK && g->minor.value <= 1048575)
		return (int)g->minor.value;
	const ng_kernel_gpu *k = c->kview_read ? ng_kernel_view_find(c->kview, g->bus) : NULL;
	return k ? k->minor : -1;
}

static const ng_kernel_gpu *kernel_by_minor(const struct ng_gpu_check_result *c, int minor)
{
	for (size_t i = 0; c->kview_read && i < c->kview->n; i++)
		if (c->kview->gpu[i].minor == minor)
			return &c->kview->gpu[i];
	return NULL;
}

static const ng_kernel_gpu *kernel_by_uuid(const struct ng_gpu_check_result *c, const char *uuid)
{
	for (size_t i = 0; c->kview_read && i < c->kview->n; i++)
		if (c->kview->gpu[i].uuid[0] && strcasecmp(c->kview->gpu[i].uuid, uuid) == 0)
			return &c->kview->gpu[i];
	return NULL;
}

/* Keeps the GPUs keep[] marks, in order. */
static void keep_only(ng_gpu_snapshot *s, const bool keep[NG_GPU_MAX])
{
	size_t o = 0;
	for (size_t i = 0; i < s->n_gpus && i < NG_GPU_MAX; i++) {
		if (!keep[i])
			continue;
		if (o != i)
			s->gpu[o] = s->gpu[i];
		o++;
	}
	s->n_gpus = o;
}

static void add_store_ghosts(struct ng_gpu_check_result *c, int want_minor);

static bool stored_minor(const struct ng_gpu_check_result *c, int minor)
{
	for (size_t k = 0; k < c->n_inv; k++)
		if (c->inv[k].minor == minor)
			return true;
	return false;
}

/* The job's GPUs out of NVML's whole list, and the kernel's for what NVML
 * does not list. */
static void pick_job(struct ng_gpu_check_result *c)
{
	ng_gpu_snapshot *s = c->snap;
	bool keep[NG_GPU_MAX] = {0};
	size_t n_listed = s->n_gpus, any_minor = 0;
	int minor[NG_GPU_MAX];
	for (size_t i = 0; i < n_listed; i++)
		if ((minor[i] = minor_of(c, &s->gpu[i])) >= 0)
			any_minor++;
	bool by_index = n_listed && any_minor == 0;
	if (by_index)
		ng_check_note(c, "device minors unknown (NVML and the kernel gave none): %s ordinals taken "
		                 "as NVML indexes",
		              c->gpus_from);
	const ng_kernel_gpu *ghost[NG_GPU_MAX];
	int stored[NG_GPU_MAX];
	size_t n_ghost = 0, n_stored = 0, absent = 0, marked = 0;
	int first_absent = -1;
	char first_uuid[NG_JOB_GPU_UUID_LEN + 1] = "";
	size_t absent_uuid = 0;
	for (size_t k = 0; k < c->job->n; k++) {
		const ng_job_gpu *jg = &c->job->gpu[k];
		bool found = false;
		for (size_t i = 0; i < n_listed && !found; i++) {
			bool match = jg->ordinal >= 0
			                 ? (by_index ? s->gpu[i].index == jg->ordinal : minor[i] == jg->ordinal)
			                 : strcasecmp(s->gpu[i].uuid, jg->uuid) == 0;
			if (match) {
				found = true;
				marked += !keep[i];
				keep[i] = true;
			}
		}
		/* A GPU whose minor could not be read (a lost one answers nothing)
		 * takes the ordinal of its NVML index, when no GPU, listed or in the
		 * kernel's view, has that minor. */
		for (size_t i = 0; i < n_listed && !found && jg->ordinal >= 0 && !by_index; i++) {
			if (minor[i] >= 0 || s->gpu[i].index != jg->ordinal || kernel_by_minor(c, jg->ordinal))
				continue;
			found = true;
			marked += !keep[i];
			keep[i] = true;
		}
		if (found)
			continue;
		const ng_kernel_gpu *kg = jg->ordinal >= 0 ? kernel_by_minor(c, jg->ordinal)
		                                           : kernel_by_uuid(c, jg->uuid);
		if (kg && !listed_at(s, kg->bus)) {
			bool dup = false;
			for (size_t g = 0; g < n_ghost; g++)
				dup = dup || ghost[g] == kg;
			if (!dup && n_ghost < NG_GPU_MAX)
				ghost[n_ghost++] = kg;
			continue;
		}
		if (jg->ordinal >= 0 && stored_minor(c, jg->ordinal)) {
			if (n_stored < NG_GPU_MAX)
				stored[n_stored++] = jg->ordinal; /* the store knows that minor's GPU */
			continue;
		}
		if (jg->ordinal >= 0) {
			if (absent++ == 0)
				first_absent = jg->ordinal;
		} else if (absent_uuid++ == 0) {
			memcpy(first_uuid, jg->uuid, sizeof first_uuid);
		}
	}
	if (absent && c->nvml_answered) {
		char more[48] = "";
		if (absent > 1)
			snprintf(more, sizeof more, " (and %zu more)", absent - 1);
		ng_check_note(c, "%s: GPU %d%s not on this node (NVML lists %zu GPU%s%s): not checked",
		              c->gpus_from, first_absent, more, s->n_listed, s->n_listed == 1 ? "" : "s",
		              c->kview_read ? ", the kernel none with that minor" : "");
	} else if (absent && c->kview_read) {
		ng_check_note(c, "%s: GPU %d not known to the kernel either: not checked", c->gpus_from,
		              first_absent);
	}
	if (absent_uuid)
		ng_check_note(c, "%s: %s not among this node's GPUs: not checked", c->gpus_from, first_uuid);
	keep_only(s, keep);
	for (size_t g = 0; g < n_ghost; g++)
		add_kernel_ghost(c, ghost[g]);
	for (size_t g = 0; g < n_stored; g++)
		add_store_ghosts(c, stored[g]);
	if (marked == 0 && s->n_gpus == 0 && c->nvml_answered)
		snprintf(c->why, sizeof c->why, "no GPUs to check: none of %s is on this node", c->gpus_from);
}

static ng_gpu_state *ghost_at(struct ng_gpu_check_result *c, const char *bus)
{
	for (size_t i = 0; i < c->snap->n_gpus; i++)
		if (c->snap->gpu[i].presence != NG_GPU_LISTED && strcmp(c->snap->gpu[i].bus, bus) == 0)
			return &c->snap->gpu[i];
	return NULL;
}

static bool listed_uuid(const ng_gpu_snapshot *s, const char *uuid)
{
	for (size_t i = 0; i < s->n_gpus; i++)
		if (s->gpu[i].presence == NG_GPU_LISTED && strcasecmp(s->gpu[i].uuid, uuid) == 0)
			return true;
	return false;
}

/* A new UUID at a bus the store knows under another: the card was
 * replaced. Recorded (the old UUID is forgotten), and the new card's
 * history starts afresh, since rates and counts are kept by UUID. */
static void find_replacements(struct ng_gpu_check_result *c)
{
	for (size_t k = 0; k < c->n_inv; k++) {
		const ng_store_gpu *old = &c->inv[k];
		if (listed_uuid(c->snap, old->uuid))
			continue;
		for (size_t i = 0; i < c->snap->n_gpus; i++) {
			const ng_gpu_state *g = &c->snap->gpu[i];
			if (g->presence != NG_GPU_LISTED || strcmp(g->bus, old->bus) != 0 || !g->uuid[0])
				continue;
			if (c->n_replaced < NG_GPU_MAX)
				snprintf(c->replaced[c->n_replaced++], sizeof c->replaced[0], "%s", old->uuid);
			ng_check_note(c, "GPU %s replaced: %.60s is now %.60s; its history starts afresh", g->bus,
			              old->uuid, g->uuid);
			break;
		}
	}
}

static bool replaced(const struct ng_gpu_check_result *c, const char *uuid)
{
	for (size_t i = 0; i < c->n_replaced; i++)
		if (strcmp(c->replaced[i], uuid) == 0)
			return true;
	return false;
}

/* A GPU the store knows that NVML does not list (by UUID or at its bus):
 * missing, or unanswered when NVML did not answer. want_minor >= 0: only
 * the GPU of that minor (a job's ordinal). */
static void add_store_ghosts(struct ng_gpu_check_result *c, int want_minor)
{
	for (size_t k = 0; k < c->n_inv; k++) {
		const ng_store_gpu *old = &c->inv[k];
		if (want_minor >= 0 && old->minor != want_minor)
			continue;
		if (listed_uuid(c->snap, old->uuid) || listed_at(c->snap, old->bus) || replaced(c, old->uuid))
			continue;
		const ng_kernel_gpu *kg = c->kview_read ? ng_kernel_view_find(c->kview, old->bus) : NULL;
		if (kg && ((kg->driver[0] && !nvidia_bound(kg)) || kg->excluded))
			continue; /* another driver's, or excluded: noted with the kernel's GPUs */
		ng_gpu_state *g = ghost_at(c, old->bus);
		if (g) {
			snprintf(g->seen_by, sizeof g->seen_by, "the kernel and the store");
			if (!g->uuid[0])
				snprintf(g->uuid, sizeof g->uuid, "%s", old->uuid);
			continue;
		}
		ng_check_add_ghost(c, c->nvml_answered ? NG_GPU_MISSING : NG_GPU_UNANSWERED, old->bus,
		                   (int)old->minor, old->uuid, "the store");
	}
}

void ng_check_account_gpus(struct ng_gpu_check_result *c)
{
	ng_gpu_snapshot *s = c->snap;
	c->nvml_answered = !c->timed_out && s->nvml == NG_FIELD_OK && s->n_listed > 0;
	if (!c->nvml_answered)
		s->n_gpus = 0;
	read_kernel_view(c);
	find_replacements(c);
	if (c->mode != NG_CHECK_HEALTH) {
		pick_job(c);
		return;
	}
	for (size_t i = 0; c->kview_read && i < c->kview->n; i++)
		if (!listed_at(s, c->kview->gpu[i].bus))
			add_kernel_ghost(c, &c->kview->gpu[i]);
	add_store_ghosts(c, -1);
}

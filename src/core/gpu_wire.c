/* The snapshot from a child of this same process to its parent: the
 * struct's own bytes, the header and only the GPUs it holds.
 *
 * The NVML query runs in a child (so a hung NVML cannot hang the check), and
 * its answer used to come back as JSON: printing some 15 KB of numbers and
 * parsing them again was a third of what the epilog did past its start-up.
 * Both ends are one binary, so the layout is the same; the parent still
 * trusts nothing it reads: sizes, counts, enumerations, booleans and the
 * termination of every string are checked before the snapshot is used, as
 * a crash of NVML's code in the child may have left anything behind. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/gpu.h"
#include "core/gpu_fields.h"
#include "core/strbuf.h"

#define WIRE_MAGIC "ngsnap1"

struct wire_head {
	char magic[8];
	uint32_t snapshot_size, state_size;
	uint64_t n_gpus;
};

#define HEAD_BYTES offsetof(ng_gpu_snapshot, gpu)
#define TAIL_AT (offsetof(ng_gpu_snapshot, gpu) + sizeof(((ng_gpu_snapshot *)0)->gpu))
#define TAIL_BYTES (sizeof(ng_gpu_snapshot) - TAIL_AT)

int ng_gpu_snapshot_pack(const ng_gpu_snapshot *s, ng_strbuf *out)
{
	if (!s || s->n_gpus > NG_GPU_MAX)
		return -1;
	struct wire_head h = {.snapshot_size = sizeof *s, .state_size = sizeof s->gpu[0], .n_gpus = s->n_gpus};
	memcpy(h.magic, WIRE_MAGIC, sizeof h.magic);
	ng_strbuf_add(out, (const char *)&h, sizeof h);
	ng_strbuf_add(out, (const char *)s, HEAD_BYTES);
	ng_strbuf_add(out, (const char *)s + TAIL_AT, TAIL_BYTES);
	ng_strbuf_add(out, (const char *)s->gpu, s->n_gpus * sizeof s->gpu[0]);
	return out->oom ? -1 : 0;
}

static bool terminated(const char *s, size_t size) { return memchr(s, '\0', size) != NULL; }
#define TERMINATED(a) terminated((a), sizeof(a))

static bool state_ok(ng_field_state st) { return (unsigned)st <= NG_FIELD_FAILED; }

/* A bool's byte as it came: anything but 0 or 1 is not a bool. */
static bool bool_ok(const void *p)
{
	unsigned char b;
	memcpy(&b, p, 1);
	return b <= 1;
}

static const char *gpu_wrong(const ng_gpu_state *g)
{
#define FIELD_OK(m) if (!state_ok(g->m.state)) return "a field's state is out of range";
	NG_GPU_FIELDS(FIELD_OK)
#undef FIELD_OK
	if (!bool_ok(&g->lost))
		return "\"lost\" is not a boolean";
	if ((unsigned)g->presence > NG_GPU_UNANSWERED)
		return "its presence is out of range";
	if (!TERMINATED(g->uuid) || !TERMINATED(g->name) || !TERMINATED(g->bus) || !TERMINATED(g->error) ||
	    !TERMINATED(g->seen_by))
		return "a string is not terminated";
	if (g->n_pids > sizeof g->pid / sizeof g->pid[0])
		return "more processes than it holds";
	if (g->n_links > NG_NVLINK_MAX)
		return "more NVLinks than it holds";
	for (size_t l = 0; l < g->n_links; l++) {
#define LINK_OK(m) if (!state_ok(g->link[l].m.state)) return "an NVLink field's state is out of range";
		NG_NVLINK_FIELDS(LINK_OK)
#undef LINK_OK
	}
	if (g->n_xid > NG_GPU_XID_MAX)
		return "more Xids than it holds";
	for (size_t x = 0; x < g->n_xid; x++)
		if (!TERMINATED(g->xid[x].message))
			return "an Xid's message is not terminated";
	return NULL;
}

int ng_gpu_snapshot_unpack(const char *buf, size_t len, ng_gpu_snapshot *out, ng_err *err)
{
	ng_gpu_snapshot_clear(out);
	struct wire_head h;
	if (!buf || len < sizeof h)
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: %zu bytes, shorter than its header", len);
	memcpy(&h, buf, sizeof h);
	if (memcmp(h.magic, WIRE_MAGIC, sizeof h.magic) != 0 || h.snapshot_size != sizeof *out ||
	    h.state_size != sizeof out->gpu[0])
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: not one this nodegate wrote");
	if (h.n_gpus > NG_GPU_MAX)
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: %llu GPUs, more than %d",
		                  (unsigned long long)h.n_gpus, NG_GPU_MAX);
	size_t want = sizeof h + HEAD_BYTES + TAIL_BYTES + (size_t)h.n_gpus * sizeof out->gpu[0];
	if (len != want)
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: %zu bytes where its header says %zu", len, want);
	const char *p = buf + sizeof h;
	memcpy(out, p, HEAD_BYTES);
	memcpy((char *)out + TAIL_AT, p + HEAD_BYTES, TAIL_BYTES);
	const char *why = NULL;
	if (out->n_gpus != h.n_gpus)
		why = "its GPU count disagrees with its header";
	else if (!state_ok(out->nvml))
		why = "NVML's state is out of range";
	else if (!TERMINATED(out->nvml_error) || !TERMINATED(out->driver) || !TERMINATED(out->nvml_version) ||
	         !TERMINATED(out->source))
		why = "a string is not terminated";
	else if (!bool_ok(&out->after_job))
		why = "\"after_job\" is not a boolean";
	else if (out->nvml == NG_FIELD_FAILED && out->n_gpus)
		why = "NVML failed but it holds GPUs";
	if (why) {
		ng_gpu_snapshot_clear(out);
		return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: %s", why);
	}
	memcpy(out->gpu, p + HEAD_BYTES + TAIL_BYTES, out->n_gpus * sizeof out->gpu[0]);
	for (size_t i = 0; i < out->n_gpus; i++) {
		if ((why = gpu_wrong(&out->gpu[i])) != NULL) {
			size_t at = i;
			ng_gpu_snapshot_clear(out);
			return ng_fail_as(err, NG_ERR_INPUT, "GPU snapshot: GPU %zu: %s", at, why);
		}
	}
	return 0;
}

/* The storage domain's evidence (collect/evidence.h): each block device's
 * latency, queue and I/O over a short interval (/proc/diskstats before and
 * after), the target's mount, the shared-service mounts, the page cache,
 * each NFS mount's RPC statistics (/proc/self/mountstats). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/evidence.h"
#include "collect/identity_read.h"
#include "parse/proc_text.h"

#define DISKS_MAX 256
#define MOUNTS_MAX 512

/* The target the flagged storage record measured: its "path" (under
 * "where" or anywhere in the record), or NULL. */
static const char *target_of(const cJSON *v, int depth)
{
	if (!v || depth > 8)
		return NULL;
	const cJSON *p = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "path") : NULL;
	if (cJSON_IsString(p) && p->valuestring[0] == '/')
		return p->valuestring;
	const cJSON *c;
	cJSON_ArrayForEach(c, v)
	{
		const char *t = target_of(c, depth + 1);
		if (t)
			return t;
	}
	return NULL;
}

static const char *storage_target(const cJSON *records)
{
	const cJSON *r;
	cJSON_ArrayForEach(r, records)
	{
		const cJSON *dom = cJSON_GetObjectItemCaseSensitive(r, "domain");
		if (cJSON_IsString(dom) && strcmp(dom->valuestring, "storage") == 0) {
			const char *t = target_of(r, 0);
			if (t)
				return t;
		}
	}
	return NULL;
}

static size_t read_disks(const char *root, ng_diskstat *d, size_t *bad)
{
	size_t len;
	char *text = ng_id_read_bytes(root, "/proc/diskstats", &len);
	size_t n = text ? ng_diskstats_parse(text, len, d, DISKS_MAX, bad) : 0;
	free(text);
	return n;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0) {
	}
}

/* Per device: what happened between the two reads, and the queue now. */
static void add_disks(cJSON *ev, const char *root, double settle, cJSON *unreadable)
{
	ng_diskstat *a = calloc(DISKS_MAX, sizeof *a), *b = calloc(DISKS_MAX, sizeof *b);
	size_t bad_a = 0, bad_b = 0;
	size_t na = a ? read_disks(root, a, &bad_a) : 0;
	if (na)
		sleep_s(settle);
	size_t nb = na && b ? read_disks(root, b, &bad_b) : 0;
	if (!na || !nb)
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/diskstats"));
	cJSON *disks = cJSON_AddArrayToObject(ev, "devices");
	cJSON_AddNumberToObject(ev, "interval_s", settle);
	for (size_t i = 0; i < nb; i++) {
		const ng_diskstat *x = NULL, *y = &b[i];
		for (size_t k = 0; k < na && !x; k++)
			if (strcmp(a[k].name, y->name) == 0)
				x = &a[k];
		/* loop and ram devices say nothing of a disk */
		if (!x || strncmp(y->name, "loop", 4) == 0 || strncmp(y->name, "ram", 3) == 0)
			continue;
		uint64_t ios = (y->reads - x->reads) + (y->writes - x->writes);
		uint64_t ms = (y->ms_reading - x->ms_reading) + (y->ms_writing - x->ms_writing);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "device", y->name);
		cJSON_AddNumberToObject(d, "ios", (double)ios);
		cJSON_AddNumberToObject(d, "ios_per_s", settle > 0 ? (double)ios / settle : 0);
		cJSON_AddNumberToObject(d, "sectors", (double)((y->sectors_read - x->sectors_read) +
		                                               (y->sectors_written - x->sectors_written)));
		if (ios)
			cJSON_AddNumberToObject(d, "ms_per_io", (double)ms / (double)ios);
		cJSON_AddNumberToObject(d, "in_flight", (double)y->in_flight);
		cJSON_AddNumberToObject(d, "busy_share",
		                        settle > 0 ? (double)(y->ms_io - x->ms_io) / (settle * 1000) : 0);
		cJSON_AddItemToArray(disks, d);
	}
	if (bad_a + bad_b)
		cJSON_AddNumberToObject(ev, "diskstats_lines_unread", (double)(bad_a + bad_b));
	free(a);
	free(b);
}

static bool shared_fs(const char *fstype)
{
	static const char *const shared[] = {"nfs", "nfs4", "lustre", "ceph", "fuse.ceph-fuse",
	                                     "gpfs", "beegfs", "cifs", "smb3", "glusterfs",
	                                     "fuse.glusterfs", "wekafs"};
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
		if (strcmp(fstype, shared[i]) == 0)
			return true;
	return false;
}

static void add_mounts(cJSON *ev, const char *root, const char *target, cJSON *unreadable)
{
	size_t len, bad = 0;
	char *text = ng_id_read_bytes(root, "/proc/self/mounts", &len);
	ng_mount *m = calloc(MOUNTS_MAX, sizeof *m);
	size_t n = text && m ? ng_mounts_parse(text, len, m, MOUNTS_MAX, &bad) : 0;
	free(text);
	if (!n)
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/self/mounts"));
	const ng_mount *t = target ? ng_mount_of(m, n, target) : NULL;
	if (target)
		cJSON_AddStringToObject(ev, "target", target);
	if (t) {
		cJSON *o = cJSON_AddObjectToObject(ev, "target_mount");
		cJSON_AddStringToObject(o, "device", t->device);
		cJSON_AddStringToObject(o, "mountpoint", t->mountpoint);
		cJSON_AddStringToObject(o, "fstype", t->fstype);
		cJSON_AddStringToObject(o, "options", t->options);
		cJSON_AddBoolToObject(o, "shared_service", shared_fs(t->fstype));
	}
	cJSON *sh = cJSON_AddArrayToObject(ev, "shared_mounts");
	for (size_t i = 0; i < n; i++)
		if (shared_fs(m[i].fstype)) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "mountpoint", m[i].mountpoint);
			cJSON_AddStringToObject(o, "fstype", m[i].fstype);
			cJSON_AddStringToObject(o, "device", m[i].device);
			cJSON_AddItemToArray(sh, o);
		}
	free(m);
}

#define NFS_MOUNTS_MAX 64

/* Each NFS mount's RPC statistics since it was mounted: per operation the
 * calls, retransmissions, major timeouts and mean queue, round-trip and
 * execution times. A shared service that is slow or dropping requests
 * shows here before anywhere else on the node. */
static void add_nfs(cJSON *ev, const char *root, cJSON *unreadable)
{
	size_t len, bad = 0;
	char *text = ng_id_read_bytes(root, "/proc/self/mountstats", &len);
	if (!text) {
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/proc/self/mountstats"));
		return;
	}
	ng_nfs_mount *m = calloc(NFS_MOUNTS_MAX, sizeof *m);
	size_t n = m ? ng_mountstats_parse(text, len, m, NFS_MOUNTS_MAX, &bad) : 0;
	free(text);
	cJSON *arr = cJSON_AddArrayToObject(ev, "nfs_mountstats");
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "mountpoint", m[i].mountpoint);
		cJSON_AddStringToObject(o, "device", m[i].device);
		cJSON_AddStringToObject(o, "fstype", m[i].fstype);
		if (m[i].has_age)
			cJSON_AddNumberToObject(o, "age_s", (double)m[i].age_s);
		if (m[i].ops_unread)
			cJSON_AddNumberToObject(o, "op_lines_unread", (double)m[i].ops_unread);
		cJSON *ops = cJSON_AddArrayToObject(o, "ops");
		for (size_t k = 0; k < m[i].n_ops; k++) {
			const ng_nfs_op *p = &m[i].op[k];
			cJSON *j = cJSON_CreateObject();
			double calls = (double)p->ops;
			cJSON_AddStringToObject(j, "op", p->name);
			cJSON_AddNumberToObject(j, "calls", calls);
			cJSON_AddNumberToObject(j, "retransmissions",
			                        p->transmissions > p->ops
			                            ? (double)(p->transmissions - p->ops)
			                            : 0);
			cJSON_AddNumberToObject(j, "major_timeouts", (double)p->major_timeouts);
			cJSON_AddNumberToObject(j, "avg_queue_ms", (double)p->queue_ms / calls);
			cJSON_AddNumberToObject(j, "avg_rtt_ms", (double)p->rtt_ms / calls);
			cJSON_AddNumberToObject(j, "avg_execute_ms", (double)p->execute_ms / calls);
			if (p->has_errors)
				cJSON_AddNumberToObject(j, "errors", (double)p->errors);
			cJSON_AddItemToArray(ops, j);
		}
		cJSON_AddItemToArray(arr, o);
	}
	if (bad)
		cJSON_AddNumberToObject(ev, "mountstats_lines_unread", (double)bad);
	free(m);
}

static void add_cache(cJSON *ev, const char *root)
{
	char *meminfo = ng_id_read(root, "/proc/meminfo");
	if (!meminfo)
		return;
	cJSON *c = cJSON_AddObjectToObject(ev, "page_cache");
	static const char *const keys[] = {"Cached", "Dirty", "Writeback", "MemAvailable"};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		char buf[64];
		const char *v = ng_id_field(meminfo, keys[i], ':', buf, sizeof buf);
		if (v)
			cJSON_AddStringToObject(c, keys[i], v);
	}
	free(meminfo);
}

cJSON *ng_evidence_storage(const ng_evidence_opts *o)
{
	const char *root = ng_evidence_root(o);
	cJSON *unreadable;
	cJSON *ev = ng_evidence_begin("storage", &unreadable);
	if (!ev)
		return NULL;
	double settle = o && o->settle_s > 0 ? o->settle_s : 1;
	add_disks(ev, root, settle, unreadable);
	add_mounts(ev, root, storage_target(o ? o->records : NULL), unreadable);
	add_cache(ev, root);
	add_nfs(ev, root, unreadable);
	cJSON_AddItemToObject(ev, "unreadable", unreadable);
	return ev;
}

/* The storage probe (see probe_storage.h). One file, in sections: names and
 * options; the test file's content; where a path lives; cleaning up on
 * signals; latency percentiles; the io_uring engine; the probe itself. */
#include "collect/probe_storage.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/record_build.h"

/* ---- names and options ---------------------------------------------------- */

static const char *const pattern_names[] = {"read", "randread", "write", "randwrite"};
static const char *const pattern_metrics[] = {
	"storage.seqread.gbps", "storage.randread.iops", "storage.seqwrite.gbps", "storage.randwrite.iops",
};

void ng_storage_opts_default(ng_storage_opts *o)
{
	*o = (ng_storage_opts){
		.dir = ".",
		.size = 4ull << 30,
		.block = 1u << 20,
		.pattern = NG_STORAGE_READ,
		.depth = 16,
		.duration_s = 10,
		.interval_s = 1,
		.cache = NG_STORAGE_COLD,
		.seed = 0x6e6f64656761746full,
	};
}

const char *ng_storage_pattern_name(ng_storage_pattern p) { return pattern_names[p]; }
const char *ng_storage_metric(ng_storage_pattern p) { return pattern_metrics[p]; }
bool ng_storage_pattern_random(ng_storage_pattern p) { return p == NG_STORAGE_RANDREAD || p == NG_STORAGE_RANDWRITE; }
bool ng_storage_pattern_writes(ng_storage_pattern p) { return p == NG_STORAGE_WRITE || p == NG_STORAGE_RANDWRITE; }

int ng_storage_pattern_parse(const char *s, ng_storage_pattern *p)
{
	for (size_t i = 0; i < sizeof pattern_names / sizeof pattern_names[0]; i++)
		if (strcmp(s, pattern_names[i]) == 0) {
			*p = (ng_storage_pattern)i;
			return 0;
		}
	return -1;
}

int ng_storage_opts_check(const ng_storage_opts *o, ng_err *err)
{
	if ((!o->dir || !*o->dir) && (!o->file || !*o->file))
		return ng_fail(err, "no directory to test (--path)");
	if (o->block < NG_STORAGE_UNIT || o->block % NG_STORAGE_UNIT || o->block > (64u << 20))
		return ng_fail(err, "block %u: must be a multiple of %u bytes, at most 64 MiB "
		               "(O_DIRECT needs aligned blocks)", o->block, NG_STORAGE_UNIT);
	if (o->size < o->block)
		return ng_fail(err, "size %llu is smaller than one block (%u bytes)",
		               (unsigned long long)o->size, o->block);
	if (o->depth < 1 || o->depth > 1024)
		return ng_fail(err, "depth %u: must be 1 to 1024", o->depth);
	if ((uint64_t)o->depth * o->block > (512ull << 20))
		return ng_fail(err, "depth x block is %llu bytes (twice that in buffers); keep it to 512 MiB",
		               (unsigned long long)o->depth * o->block);
	if (!(o->duration_s > 0) || o->duration_s > 3600)
		return ng_fail(err, "duration %g s: must be more than 0 and at most 3600", o->duration_s);
	if (!(o->interval_s >= 0.01) || o->interval_s > o->duration_s)
		return ng_fail(err, "interval %g s: must be at least 0.01 s and at most the duration",
		               o->interval_s);
	if ((unsigned)o->pattern > NG_STORAGE_RANDWRITE || (unsigned)o->cache > NG_STORAGE_WARM)
		return ng_fail(err, "unknown pattern or cache state");
	return 0;
}

/* ---- the test file's content ---------------------------------------------- */

#define MAGIC 0x3145524f5453474eull /* "NGSTORE1" */
#define WORDS (NG_STORAGE_UNIT / 8)
#define STEP 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Word i of a unit is base ^ i*STEP: one multiply per word keeps checking
 * at memory speed, and the base depends on the offset, so a block read from
 * the wrong place differs in every word, not only in its header. */
static uint64_t unit_base(uint64_t off, uint64_t seed) { return mix64(seed ^ mix64(off + 1)); }

void ng_storage_fill(void *buf, uint64_t offset, uint32_t len, uint64_t seed)
{
	uint64_t *w = buf;
	for (uint32_t u = 0; u < len / NG_STORAGE_UNIT; u++, w += WORDS) {
		uint64_t off = offset + (uint64_t)u * NG_STORAGE_UNIT, base = unit_base(off, seed);
		w[0] = MAGIC;
		w[1] = off;
		w[2] = seed;
		for (uint64_t i = 3; i < WORDS; i++)
			w[i] = base ^ (i * STEP);
	}
}

uint32_t ng_storage_check(const void *buf, uint64_t offset, uint32_t len, uint64_t seed, uint64_t *found)
{
	const uint64_t *w = buf;
	uint32_t bad = 0;
	for (uint32_t u = 0; u < len / NG_STORAGE_UNIT; u++, w += WORDS) {
		uint64_t off = offset + (uint64_t)u * NG_STORAGE_UNIT, base = unit_base(off, seed);
		uint64_t d = (w[0] ^ MAGIC) | (w[1] ^ off) | (w[2] ^ seed);
		for (uint64_t i = 3; i < WORDS; i++)
			d |= w[i] ^ (base ^ (i * STEP));
		if (d && bad++ == 0 && found)
			*found = w[0] == MAGIC && w[2] == seed ? w[1] : UINT64_MAX;
	}
	return bad;
}

/* ---- where a path lives ------------------------------------------------------ */

static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{0xef53, "ext4"}, {0x58465342, "xfs"}, {0x9123683e, "btrfs"}, {0x01021994, "tmpfs"},
	{0x858458f6, "ramfs"}, {0x6969, "nfs"}, {0x0bd00bd0, "lustre"}, {0x47504653, "gpfs"},
	{0x19830326, "beegfs"}, {0xff534d42, "cifs"}, {0xfe534d42, "smb2"}, {0x65735546, "fuse"},
	{0x794c7630, "overlayfs"}, {0x2fc12fc1, "zfs"}, {0x00c36400, "ceph"}, {0x01021997, "9p"},
	{0xf2f52010, "f2fs"}, {0x4d44, "vfat"}, {0x73717368, "squashfs"}, {0x5346414f, "afs"},
	{0xca451a4e, "bcachefs"}, {0x794c764f, "overlayfs"}, {0x62656572, "sysfs"},
	{0x9fa0, "proc"}, {0x1373, "devfs"}, {0x3153464a, "jfs"}, {0x52654973, "reiserfs"},
	{0x2011bab0, "exfat"}, {0x5346544e, "ntfs"}, {0x7461636f, "ocfs2"}, {0x00011954, "ufs"},
};

const char *ng_storage_fs_name(unsigned long magic)
{
	for (size_t i = 0; i < sizeof fs_names / sizeof fs_names[0]; i++)
		if (fs_names[i].magic == (magic & 0xffffffffu))
			return fs_names[i].name;
	return NULL;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static char *next_field(char **p)
{
	char *s = *p;
	if (!s || !*s)
		return NULL;
	char *e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

int ng_storage_parse_mountinfo(char *line, struct ng_mountinfo *m)
{
	char *p = line, *f[6];
	line[strcspn(line, "\n")] = '\0';
	for (int i = 0; i < 6; i++)
		if (!(f[i] = next_field(&p)))
			return -1;
	if (sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
		return -1;
	char *sep;
	while ((sep = next_field(&p)) && strcmp(sep, "-") != 0) /* optional fields */
		;
	if (!sep)
		return -1;
	m->root = f[3];
	m->mount_point = f[4];
	m->options = f[5];
	if (!(m->fs_type = next_field(&p)) || !(m->source = next_field(&p)))
		return -1;
	m->super_options = next_field(&p);
	if (!m->super_options)
		m->super_options = p;
	char *all[] = {m->root, m->mount_point, m->options, m->fs_type, m->source, m->super_options};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		unescape_octal(all[i]);
	return 0;
}

static bool path_under(const char *path, const char *mp)
{
	size_t n = strlen(mp);
	if (strcmp(mp, "/") == 0)
		return path[0] == '/';
	return strncmp(path, mp, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The mount holding real: the longest mount point above it, preferring the
 * mounts of its own device (a bind mount of another device can sit above). */
static void add_mount(cJSON *w, const char *real, unsigned maj, unsigned min)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return;
	char line[4096], best[4096] = "";
	size_t best_len = 0;
	bool best_dev = false;
	while (fgets(line, sizeof line, f)) {
		char copy[4096];
		memcpy(copy, line, sizeof copy);
		struct ng_mountinfo m;
		if (ng_storage_parse_mountinfo(copy, &m) < 0 || !path_under(real, m.mount_point))
			continue;
		bool dev = m.major == maj && m.minor == min;
		size_t len = strlen(m.mount_point);
		if ((dev && !best_dev) || (dev == best_dev && len >= best_len)) {
			memcpy(best, line, sizeof best);
			best_len = len;
			best_dev = dev;
		}
	}
	fclose(f);
	struct ng_mountinfo m;
	if (!*best || ng_storage_parse_mountinfo(best, &m) < 0)
		return;
	cJSON_AddStringToObject(w, "mount_point", m.mount_point);
	cJSON_AddStringToObject(w, "mount_source", m.source);
	cJSON_AddStringToObject(w, "mount_fs_type", m.fs_type);
	cJSON_AddStringToObject(w, "mount_options", m.options);
}

static bool read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	if (ok) {
		size_t l = strlen(buf);
		while (l && (buf[l - 1] == '\n' || buf[l - 1] == ' '))
			buf[--l] = '\0';
	}
	return ok && *buf;
}

/* The block device behind maj:min from sysfs; a partition's queue and model
 * belong to its parent disk. */
static cJSON *device_info(unsigned maj, unsigned min)
{
	char link[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32], val[256];
	snprintf(link, sizeof link, "/sys/dev/block/%u:%u", maj, min);
	if (!realpath(link, dir))
		return NULL;
	cJSON *d = cJSON_CreateObject();
	const char *name = strrchr(dir, '/');
	cJSON_AddStringToObject(d, "name", name ? name + 1 : dir);
	snprintf(val, sizeof val, "%u:%u", maj, min);
	cJSON_AddStringToObject(d, "major_minor", val);
	snprintf(path, sizeof path, "%s/partition", dir);
	if (access(path, F_OK) == 0) {
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		const char *disk = strrchr(dir, '/');
		cJSON_AddStringToObject(d, "disk", disk ? disk + 1 : dir);
	}
	snprintf(path, sizeof path, "%s/queue/rotational", dir);
	if (read_line(path, val, sizeof val))
		cJSON_AddBoolToObject(d, "rotational", strcmp(val, "1") == 0);
	static const char *const models[] = {"device/model", "dm/name", "md/level"};
	static const char *const keys[] = {"model", "dm_name", "md_level"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, models[i]);
		if (read_line(path, val, sizeof val))
			cJSON_AddStringToObject(d, keys[i], val);
	}
	return d;
}

cJSON *ng_storage_where(const char *dir, ng_err *err)
{
	char real[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	if (!realpath(dir, real) || statfs(real, &sfs) < 0 || stat(real, &st) < 0) {
		ng_fail(err, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	cJSON *w = cJSON_CreateObject();
	if (!w) {
		ng_fail(err, "out of memory");
		return NULL;
	}
	cJSON_AddStringToObject(w, "path", real);
	const char *fs = ng_storage_fs_name((unsigned long)sfs.f_type);
	char magic[32];
	snprintf(magic, sizeof magic, "0x%lx", (unsigned long)sfs.f_type & 0xffffffffu);
	cJSON_AddStringToObject(w, "fs_type", fs ? fs : "unknown");
	cJSON_AddStringToObject(w, "fs_magic", magic);
	cJSON_AddNumberToObject(w, "fs_free_bytes", (double)sfs.f_bavail * (double)sfs.f_bsize);
	unsigned maj = major(st.st_dev), min = minor(st.st_dev);
	add_mount(w, real, maj, min);
	cJSON *dev = maj ? device_info(maj, min) : NULL;
	if (dev) {
		cJSON_AddItemToObject(w, "device", dev);
	} else {
		cJSON_AddNullToObject(w, "device");
		cJSON_AddStringToObject(w, "device_note", maj ? "no entry in /sys/dev/block"
		                        : "no block device: a network, virtual or FUSE filesystem");
	}
	return w;
}

/* ---- cleaning up on signals --------------------------------------------------- */

static char cleanup_path[PATH_MAX + 64];
static volatile sig_atomic_t cleanup_armed;
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved_actions[3];

/* Only async-signal-safe calls: unlink, sigaction, raise. */
static void on_signal(int sig)
{
	if (cleanup_armed)
		unlink(cleanup_path);
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void cleanup_arm(const char *path)
{
	snprintf(cleanup_path, sizeof cleanup_path, "%s", path);
	cleanup_armed = 1;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &sa, &saved_actions[i]);
}

static void cleanup_disarm(void)
{
	for (size_t i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &saved_actions[i], NULL);
	cleanup_armed = 0;
}

/* ---- latency percentiles ------------------------------------------------------ */

/* A log-linear histogram of nanoseconds: exact below 32 ns, then 32 buckets
 * per power of two (about 3% wide), so memory stays fixed however long the
 * run and every percentile is within 1.6% of the true value. */
#define HIST_SUB 32
#define HIST_N (60 * HIST_SUB)

struct hist {
	uint64_t count[HIST_N];
	uint64_t n, max;
	double sum;
};

static unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	return (e - 4) * HIST_SUB + (unsigned)((v >> (e - 5)) & (HIST_SUB - 1));
}

static double hist_value(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned e = i / HIST_SUB + 4, sub = i % HIST_SUB;
	double lo = ldexp(HIST_SUB + sub, (int)e - 5);
	return lo + ldexp(0.5, (int)e - 5);
}

static void hist_add(struct hist *h, uint64_t ns)
{
	h->count[hist_index(ns)]++;
	h->n++;
	h->sum += (double)ns;
	if (ns > h->max)
		h->max = ns;
}

static double hist_quantile(const struct hist *h, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)h->n), seen = 0;
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < HIST_N; i++) {
		seen += h->count[i];
		if (seen >= rank)
			return fmin(hist_value(i), (double)h->max);
	}
	return (double)h->max;
}

/* ---- the io_uring engine --------------------------------------------------------- */

/* Each slot has two buffers: the next I/O goes out into one while the
 * other, just read, is checked, so checking never holds the queue short. */
struct slot {
	uint64_t off, t0;
	uint32_t len;
	unsigned phase; /* which of the slot's two buffers is in flight */
};

struct engine {
	struct io_uring ring;
	bool ring_ok;
	int fd;
	const char *file;
	unsigned depth; /* ring entries */
	uint64_t size, seed, rng;
	unsigned char *bufs;
	struct slot *slots;
	struct hist *hist;
	uint32_t block;  /* the measured block size, which wrong counts in */
	uint8_t *badmap; /* one bit per such block: each counted once */
	uint64_t bad_blocks, bad_reads, checked_reads, checked_bytes;
	uint64_t first_bad_off, first_bad_found;
	const ng_storage_hooks *hooks;
};

struct pass {
	const char *stage; /* for messages and the fault hook */
	bool write, random, verify, timed;
	uint32_t block;
	unsigned depth;        /* I/Os in flight */
	double duration_s, interval_s;
	uint64_t deadline_ns;  /* an untimed pass stops queueing here, when set */
	/* what it did */
	uint64_t cursor, ios, bytes;
	double elapsed_s;
	double *samples;
	size_t n_samples;
	int errnum;        /* the errno that stopped it, or 0 */
	char why[400];     /* and what it was doing */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void pass_fail(struct pass *p, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pass_fail(struct pass *p, int e, const char *fmt, ...)
{
	if (p->errnum)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof p->why, fmt, ap);
	va_end(ap);
	p->errnum = e ? e : EIO;
}

static unsigned char *slot_buf(const struct engine *e, const struct pass *p, unsigned i, unsigned phase)
{
	return e->bufs + ((size_t)i * 2 + phase) * p->block;
}

/* Queues the next I/O on slot i; false when a one-shot pass has covered the
 * file. A timed sequential pass wraps around: with O_DIRECT the page cache
 * never holds what was read, so the second lap is as cold as the first. */
static bool queue_io(struct engine *e, struct pass *p, unsigned i)
{
	struct slot *s = &e->slots[i];
	uint64_t nblocks = e->size / p->block;
	if (p->random) {
		/* The high half of a 64x64 product: uniform over the blocks,
		 * without the modulo's bias or xorshift's weaker low bits. */
		s->off = (uint64_t)(((unsigned __int128)next_random(&e->rng) * nblocks) >> 64) * p->block;
		s->len = p->block;
	} else {
		if (p->cursor >= e->size) {
			if (!p->timed)
				return false;
			p->cursor = 0;
		}
		s->off = p->cursor;
		s->len = (uint32_t)(e->size - s->off < p->block ? e->size - s->off : p->block);
		p->cursor += s->len;
	}
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	unsigned char *buf = slot_buf(e, p, i, s->phase);
	if (p->write) {
		ng_storage_fill(buf, s->off, s->len, e->seed);
		io_uring_prep_write(sqe, e->fd, buf, s->len, s->off);
	} else {
		io_uring_prep_read(sqe, e->fd, buf, s->len, s->off);
	}
	io_uring_sqe_set_data64(sqe, i);
	s->t0 = now_ns();
	return true;
}

/* Checks a completed read unit by unit, so each block of the measured size
 * that holds a bad unit is counted once, however often it is read. */
/* Queues and submits at once, one system call per I/O, as fio does by
 * default (iodepth_batch_submit=1): handing the kernel a batch lets the
 * block layer hold the first requests back until the last is queued, which
 * cost a quarter of the random-read IOPS on a virtio disk. */
static bool submit_io(struct engine *e, struct pass *p, unsigned i)
{
	if (!queue_io(e, p, i))
		return false;
	int rc;
	while ((rc = io_uring_submit(&e->ring)) == -EINTR)
		;
	if (rc < 0) {
		pass_fail(p, -rc, "submitting %s on %s: %s", p->stage, e->file, strerror(-rc));
		return false;
	}
	return true;
}

static void verify_read(struct engine *e, const struct slot *s, const unsigned char *buf)
{
	bool bad_read = false;
	e->checked_reads++;
	e->checked_bytes += s->len;
	for (uint32_t u = 0; u < s->len; u += NG_STORAGE_UNIT) {
		uint64_t found = 0, off = s->off + u;
		if (!ng_storage_check(buf + u, off, NG_STORAGE_UNIT, e->seed, &found))
			continue;
		if (e->bad_reads == 0 && !bad_read) {
			e->first_bad_off = off;
			e->first_bad_found = found;
		}
		bad_read = true;
		uint64_t b = off / e->block;
		if (!(e->badmap[b / 8] & (1u << (b % 8)))) {
			e->badmap[b / 8] |= (uint8_t)(1u << (b % 8));
			e->bad_blocks++;
		}
	}
	e->bad_reads += bad_read;
}

static bool pass_grow_samples(struct pass *p, double v)
{
	double *n = realloc(p->samples, (p->n_samples + 1) * sizeof *n);
	if (!n)
		return false;
	n[p->n_samples++] = v;
	p->samples = n;
	return true;
}

/* Whether a completion moved all its bytes; false (and why) when not. */
static bool io_ok(const struct engine *e, struct pass *p, const struct slot *s, int res)
{
	if (res < 0) {
		pass_fail(p, -res, "%s of %u bytes at offset %llu of %s failed: %s", p->stage, s->len,
		          (unsigned long long)s->off, e->file, strerror(-res));
		return false;
	}
	if ((uint32_t)res != s->len) {
		pass_fail(p, EIO, "short %s: %d of %u bytes at offset %llu of %s (file truncated?)",
		          p->stage, res, s->len, (unsigned long long)s->off, e->file);
		return false;
	}
	return true;
}

/* Checks and counts a completed I/O (s is its slot as it was). */
static void account_io(struct engine *e, struct pass *p, const struct slot *s, const unsigned char *buf,
                       uint64_t t, bool counted, uint64_t *tick_bytes, uint64_t *tick_ios)
{
	if (!p->write && p->verify)
		verify_read(e, s, buf);
	if (counted) {
		if (p->timed)
			hist_add(e->hist, t - s->t0);
		p->ios++;
		p->bytes += s->len;
		*tick_bytes += s->len;
		(*tick_ios)++;
	}
}

static bool file_vanished(const struct engine *e)
{
	struct stat st;
	return fstat(e->fd, &st) < 0 || st.st_nlink == 0;
}

static double tick_value(const struct pass *p, uint64_t bytes, uint64_t ios, double secs)
{
	return p->random ? (double)ios / secs : (double)bytes / 1e9 / secs;
}

/* One pass: keeps depth I/Os in flight until the time is up (timed) or the
 * file is covered once. Returns 0, or -1 with p->errnum and p->why set. */
static int run_pass(struct engine *e, struct pass *p)
{
	int injected = e->hooks && e->hooks->fault ? e->hooks->fault(p->stage, e->hooks->arg) : 0;
	if (injected) {
		pass_fail(p, injected, "%s of %s failed: %s", p->stage, e->file, strerror(injected));
		return -1;
	}
	if (file_vanished(e)) {
		pass_fail(p, ENOENT, "the test file %s vanished before the %s (removed by something else)",
		          e->file, p->stage);
		return -1;
	}
	uint64_t t_start = now_ns(), tick_start = t_start, tick_bytes = 0, tick_ios = 0;
	uint64_t interval = (uint64_t)(p->interval_s * 1e9), end = t_start + (uint64_t)(p->duration_s * 1e9);
	unsigned inflight = 0, eintr = 0;
	bool stop = false;
	uint64_t last_t = t_start;
	for (unsigned i = 0; i < p->depth && submit_io(e, p, i); i++)
		inflight++;
	while (inflight > 0) {
		struct io_uring_cqe *first;
		int rc = io_uring_wait_cqe(&e->ring, &first);
		if (rc == -EINTR && ++eintr < 1000)
			continue;
		if (rc < 0) {
			pass_fail(p, -rc, "waiting for %s on %s: %s", p->stage, e->file, strerror(-rc));
			break;
		}
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		uint64_t t = 0;
		/* The clock is read per completion: an I/O submitted in this very
		 * loop can complete and be reaped in it too. */
		io_uring_for_each_cqe(&e->ring, head, cqe) {
			t = now_ns();
			bool counted = !p->timed || t <= end;
			bool more = p->timed ? t < end : !p->deadline_ns || t < p->deadline_ns;
			if (counted)
				last_t = t;
			unsigned i = (unsigned)io_uring_cqe_get_data64(cqe);
			struct slot done = e->slots[i];
			seen++;
			inflight--;
			if (!io_ok(e, p, &done, cqe->res)) {
				stop = true;
				continue;
			}
			e->slots[i].phase ^= 1;
			if (!stop && more && !p->errnum && submit_io(e, p, i))
				inflight++;
			account_io(e, p, &done, slot_buf(e, p, i, done.phase), t, counted, &tick_bytes, &tick_ios);
			/* I/Os served at once (cached pages) would keep this loop
			 * going for the whole run: return to the interval clock. */
			if (seen >= p->depth)
				break;
		}
		io_uring_cq_advance(&e->ring, seen);
		if (!p->timed)
			continue;
		while (t >= tick_start + interval && !stop) {
			double secs = (double)(t - tick_start) / 1e9;
			if (!pass_grow_samples(p, tick_value(p, tick_bytes, tick_ios, secs)))
				pass_fail(p, ENOMEM, "out of memory keeping samples");
			tick_start = t;
			tick_bytes = tick_ios = 0;
			if (file_vanished(e))
				pass_fail(p, ENOENT, "the test file %s vanished during the %s (removed by "
				          "something else)", e->file, p->stage);
			stop = p->errnum != 0;
		}
		if (stop || t >= end)
			stop = true;
	}
	/* Drain anything left after an error, so the ring can be torn down. */
	while (inflight > 0) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&e->ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&e->ring, cqe);
		inflight--;
	}
	if (!p->errnum && eintr >= 1000)
		pass_fail(p, EINTR, "interrupted 1000 times waiting for %s on %s", p->stage, e->file);
	uint64_t t_end = now_ns();
	p->elapsed_s = (double)(t_end - t_start) / 1e9;
	/* A last partial interval counts when it is at least half an interval. */
	if (p->timed && !p->errnum && tick_ios && (double)(last_t - tick_start) >= 0.5 * (double)interval)
		pass_grow_samples(p, tick_value(p, tick_bytes, tick_ios, (double)(last_t - tick_start) / 1e9));
	return p->errnum ? -1 : 0;
}

/* ---- the probe --------------------------------------------------------------------- */

struct probe {
	const ng_storage_opts *o;
	cJSON *rec, *cond, *detail;
	char file[PATH_MAX + 64];
	bool created, direct;
	uint64_t size;
	struct engine e;
};

/* A no-measurement record: the reason names the path, the cause, and what
 * the operator can do about it. */
static void give_reason(struct probe *pr, const char *what, int e)
{
	const char *dir = pr->o->dir;
	switch (e) {
	case ENOSPC:
	case EDQUOT:
		ng_record_set_reason(pr->rec, "%s is full (%s) while %s: free space there or pass a "
		                     "smaller --size (this run needs %llu bytes)", dir,
		                     e == ENOSPC ? "ENOSPC" : "EDQUOT", what, (unsigned long long)pr->size);
		break;
	case EROFS:
		ng_record_set_reason(pr->rec, "%s is on a read-only filesystem (EROFS) while %s: the "
		                     "storage probe needs a writable path", dir, what);
		break;
	case EACCES:
	case EPERM:
		ng_record_set_reason(pr->rec, "no permission to write in %s (%s) while %s: run as a user "
		                     "who may create files there", dir, e == EACCES ? "EACCES" : "EPERM", what);
		break;
	case EILSEQ:
		ng_record_set_reason(pr->rec, "%s does not hold a nodegate test file with this seed "
		                     "(its first or last block differs): not reused", pr->o->file);
		break;
	default:
		ng_record_set_reason(pr->rec, "%s: %s", what, strerror(e));
	}
	cJSON *err = cJSON_CreateObject();
	cJSON_AddStringToObject(err, "stage", what);
	cJSON_AddNumberToObject(err, "errno", e);
	cJSON_AddStringToObject(err, "error", strerror(e));
	ng_json_set(pr->detail, "error", err);
}

/* A kept file is reused only when its first and last units hold this seed's
 * content at their offsets; anything else would be counted as wrong. */
static int open_existing(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	if (!realpath(o->file, pr->file))
		return errno;
	pr->direct = o->cache == NG_STORAGE_COLD;
	int fd = pr->direct ? open(pr->file, O_RDWR | O_CLOEXEC | O_DIRECT) : -1;
	if (fd < 0 && pr->direct && errno == EINVAL) {
		pr->direct = false;
		cJSON_AddStringToObject(pr->cond, "direct_note",
		                        "the filesystem refused O_DIRECT (EINVAL): buffered I/O");
	}
	if (fd < 0 && (fd = open(pr->file, O_RDWR | O_CLOEXEC)) < 0)
		return errno;
	pr->e.fd = fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return errno;
	pr->size = (uint64_t)st.st_size / o->block * o->block;
	if (pr->size < o->block)
		return EINVAL;
	void *buf = aligned_alloc(NG_STORAGE_UNIT, NG_STORAGE_UNIT);
	if (!buf)
		return ENOMEM;
	bool ours = true;
	uint64_t ends[2] = {0, pr->size - NG_STORAGE_UNIT};
	for (int i = 0; i < 2 && ours; i++)
		ours = pread(fd, buf, NG_STORAGE_UNIT, (off_t)ends[i]) == NG_STORAGE_UNIT &&
		       ng_storage_check(buf, ends[i], NG_STORAGE_UNIT, o->seed, NULL) == 0;
	free(buf);
	if (!ours)
		return EILSEQ;
	ng_json_set(pr->cond, "file_bytes", cJSON_CreateNumber((double)pr->size));
	cJSON_AddBoolToObject(pr->detail, "reused", true);
	return 0;
}

static int open_test_file(struct probe *pr)
{
	if (pr->o->file)
		return open_existing(pr);
	char real[PATH_MAX];
	if (!realpath(pr->o->dir, real))
		return errno;
	uint64_t r = mix64(now_ns() ^ ((uint64_t)getpid() << 32));
	if (strlen(real) > PATH_MAX - 64)
		return ENAMETOOLONG;
	snprintf(pr->file, sizeof pr->file, "%s/.nodegate-storage.%ld.%08llx", real, (long)getpid(),
	         (unsigned long long)(r & 0xffffffffu));
	int inj = pr->o->hooks && pr->o->hooks->fault ? pr->o->hooks->fault("create", pr->o->hooks->arg) : 0;
	if (inj)
		return inj;
	/* Cold runs read past the page cache; a filesystem that refuses
	 * O_DIRECT (EINVAL) is used buffered, and the record says so. */
	int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
	pr->direct = pr->o->cache == NG_STORAGE_COLD;
	int fd = pr->direct ? open(pr->file, flags | O_DIRECT, 0600) : -1;
	if (fd < 0 && pr->direct) {
		if (errno != EINVAL)
			return errno;
		pr->direct = false;
		cJSON_AddStringToObject(pr->cond, "direct_note",
		                        "the filesystem refused O_DIRECT (EINVAL): buffered I/O");
	}
	if (fd < 0 && (fd = open(pr->file, flags, 0600)) < 0)
		return errno;
	pr->created = true;
	if (!pr->o->keep)
		cleanup_arm(pr->file);
	pr->e.fd = fd;
	return 0;
}

static int reopen_buffered(struct probe *pr, const char *why)
{
	int fd = open(pr->file, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(pr->e.fd);
	pr->e.fd = fd;
	pr->direct = false;
	ng_json_set(pr->cond, "direct_note", cJSON_CreateString(why));
	return 0;
}

static uint32_t prepare_block(const ng_storage_opts *o)
{
	return o->block >= (1u << 20) ? o->block : o->block * ((1u << 20) / o->block);
}

/* Writing the file is not measured: large blocks at a modest depth fill it
 * quickly without needing depth x 1 MiB of buffers. */
static unsigned prepare_depth(const ng_storage_opts *o)
{
	uint32_t pb = prepare_block(o);
	unsigned d = o->depth < 8 ? o->depth : 8;
	while (d > 1 && (uint64_t)pb * d > (uint64_t)o->block * o->depth && (uint64_t)pb * d > (64u << 20))
		d--;
	return d;
}

static int fail_pass(struct probe *pr, struct pass *p)
{
	give_reason(pr, p->why, p->errnum);
	return -1;
}

static int set_cache(struct probe *pr);

/* Writes the whole file once with its content, then sets the cache state. */
static int prepare(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	if (!pr->created)
		return set_cache(pr);
	int inj = o->hooks && o->hooks->fault ? o->hooks->fault("allocate", o->hooks->arg) : 0;
	int rc = inj ? inj : posix_fallocate(pr->e.fd, 0, (off_t)pr->size);
	if (rc && rc != EOPNOTSUPP && rc != EINVAL) {
		give_reason(pr, "allocating the test file", rc);
		return -1;
	}
	struct pass p = {.stage = "write", .write = true, .block = prepare_block(o), .depth = prepare_depth(o)};
	if (run_pass(&pr->e, &p) < 0 && p.errnum == EINVAL && pr->direct) {
		/* Some filesystems take O_DIRECT at open and refuse it at I/O. */
		if ((rc = reopen_buffered(pr, "O_DIRECT writes were refused (EINVAL): buffered I/O")))
			return give_reason(pr, "reopening the test file", rc), -1;
		p = (struct pass){.stage = "write", .write = true, .block = prepare_block(o),
		                  .depth = prepare_depth(o)};
		run_pass(&pr->e, &p);
	}
	if (p.errnum)
		return fail_pass(pr, &p);
	cJSON_AddNumberToObject(pr->detail, "prepare_s", p.elapsed_s);
	cJSON_AddNumberToObject(pr->detail, "prepare_write_gbps", (double)p.bytes / 1e9 / p.elapsed_s);
	return set_cache(pr);
}

/* Cold: fsync and drop the file's pages; warm: read it once through the cache. */
static int set_cache(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	if (fsync(pr->e.fd) < 0)
		return give_reason(pr, "fsync of the test file", errno), -1;
	if (o->cache == NG_STORAGE_COLD) {
		int a = posix_fadvise(pr->e.fd, 0, 0, POSIX_FADV_DONTNEED);
		char what[200];
		snprintf(what, sizeof what, "written, fsync, posix_fadvise(DONTNEED) %s; %s", a ? "refused" : "done",
		         pr->direct ? "reads with O_DIRECT bypass the page cache" :
		         "buffered reads: pages read once may be cached again");
		cJSON_AddStringToObject(pr->cond, "cache_action", what);
	} else {
		/* Warm means served from the page cache: one buffered read of the
		 * whole file (checked like any other) leaves it resident. */
		struct pass w = {.stage = "warming read", .verify = true, .block = prepare_block(o),
		                 .depth = prepare_depth(o)};
		if (run_pass(&pr->e, &w) < 0)
			return fail_pass(pr, &w);
		cJSON_AddStringToObject(pr->cond, "cache_action", "written, fsync, read once through the "
		                        "page cache, buffered I/O; pages not dropped");
	}
	return 0;
}

static void add_latency(struct probe *pr)
{
	const struct hist *h = pr->e.hist;
	cJSON *l = cJSON_CreateObject();
	if (h->n) {
		cJSON_AddNumberToObject(l, "p50", hist_quantile(h, 0.50) / 1e3);
		cJSON_AddNumberToObject(l, "p99", hist_quantile(h, 0.99) / 1e3);
		cJSON_AddNumberToObject(l, "p999", hist_quantile(h, 0.999) / 1e3);
		cJSON_AddNumberToObject(l, "max", (double)h->max / 1e3);
		cJSON_AddNumberToObject(l, "mean", h->sum / (double)h->n / 1e3);
	}
	cJSON_AddNumberToObject(l, "ios", (double)h->n);
	ng_json_set(pr->detail, "latency_us", l);
}

/* After a write pattern, the file is read back (for at most the measured
 * duration again) and checked, so a write that landed wrong is counted.  The
 * read-back is not measured: it reads in the preparation's large blocks, so a
 * loaded node still checks the whole file rather than 4 KiB of it at a time. */
static int verify_written(struct probe *pr)
{
	if (fsync(pr->e.fd) < 0)
		return give_reason(pr, "fsync after writing", errno), -1;
	if (pr->o->cache == NG_STORAGE_COLD)
		posix_fadvise(pr->e.fd, 0, 0, POSIX_FADV_DONTNEED);
	struct pass v = {.stage = "read-back", .verify = true, .block = prepare_block(pr->o),
	                 .depth = prepare_depth(pr->o),
	                 .deadline_ns = now_ns() + (uint64_t)(pr->o->duration_s * 1e9)};
	if (run_pass(&pr->e, &v) < 0)
		return fail_pass(pr, &v);
	cJSON_AddNumberToObject(pr->detail, "read_back_bytes", (double)v.bytes);
	return 0;
}

static int measure(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	struct pass m = {
		.stage = ng_storage_pattern_writes(o->pattern) ? "write" : "read",
		.write = ng_storage_pattern_writes(o->pattern),
		.random = ng_storage_pattern_random(o->pattern),
		.verify = true, .timed = true, .block = o->block, .depth = o->depth,
		.duration_s = o->duration_s, .interval_s = o->interval_s,
	};
	pr->e.rng = o->seed | 1;
	int rc = run_pass(&pr->e, &m);
	if (rc == 0 && m.write)
		rc = verify_written(pr);
	else if (rc < 0)
		fail_pass(pr, &m);
	if (rc == 0) {
		for (size_t i = 0; i < m.n_samples; i++)
			ng_record_add_sample(pr->rec, m.samples[i]);
		ng_record_set_wrong(pr->rec, (double)pr->e.bad_blocks);
		if (!m.n_samples)
			ng_record_set_reason(pr->rec, "no interval completed an I/O in %g s", o->duration_s);
	}
	add_latency(pr);
	cJSON_AddNumberToObject(pr->detail, "measured_s", m.elapsed_s);
	cJSON_AddNumberToObject(pr->detail, "ios", (double)m.ios);
	cJSON_AddNumberToObject(pr->detail, "bytes", (double)m.bytes);
	if (m.elapsed_s > 0)
		cJSON_AddNumberToObject(pr->detail, m.random ? "mean_iops" : "mean_gbps",
		                        m.random ? (double)m.ios / m.elapsed_s : (double)m.bytes / 1e9 / m.elapsed_s);
	free(m.samples);
	return rc;
}

static void add_integrity(struct probe *pr)
{
	const struct engine *e = &pr->e;
	cJSON *v = cJSON_CreateObject();
	cJSON_AddNumberToObject(v, "checked_reads", (double)e->checked_reads);
	cJSON_AddNumberToObject(v, "checked_bytes", (double)e->checked_bytes);
	cJSON_AddNumberToObject(v, "bad_blocks", (double)e->bad_blocks);
	cJSON_AddNumberToObject(v, "bad_reads", (double)e->bad_reads);
	if (e->bad_reads) {
		cJSON_AddNumberToObject(v, "first_bad_offset", (double)e->first_bad_off);
		if (e->first_bad_found == UINT64_MAX)
			cJSON_AddStringToObject(v, "first_bad_holds", "not a nodegate block (overwritten or corrupted)");
		else if (e->first_bad_found != e->first_bad_off)
			cJSON_AddNumberToObject(v, "first_bad_holds_offset", (double)e->first_bad_found);
		else
			cJSON_AddStringToObject(v, "first_bad_holds", "its own header, corrupted content");
	}
	ng_json_set(pr->detail, "integrity", v);
}

static void add_conditions(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	cJSON *c = pr->cond;
	cJSON_AddStringToObject(c, "pattern", ng_storage_pattern_name(o->pattern));
	cJSON_AddNumberToObject(c, "block_bytes", o->block);
	cJSON_AddNumberToObject(c, "file_bytes", (double)pr->size);
	cJSON_AddNumberToObject(c, "queue_depth", o->depth);
	cJSON_AddNumberToObject(c, "duration_s", o->duration_s);
	cJSON_AddNumberToObject(c, "interval_s", o->interval_s);
	cJSON_AddStringToObject(c, "cache", o->cache == NG_STORAGE_COLD ? "cold" : "warm");
	cJSON_AddStringToObject(c, "engine", "io_uring");
	char seed[24];
	snprintf(seed, sizeof seed, "0x%llx", (unsigned long long)o->seed);
	cJSON_AddStringToObject(c, "seed", seed);
}

static int setup_engine(struct probe *pr)
{
	struct engine *e = &pr->e;
	const ng_storage_opts *o = pr->o;
	size_t need = (size_t)o->block * o->depth * 2, prep = (size_t)prepare_block(o) * prepare_depth(o) * 2;
	e->depth = o->depth;
	e->block = o->block;
	e->size = pr->size;
	e->seed = o->seed;
	e->file = pr->file;
	e->hooks = o->hooks;
	e->bufs = aligned_alloc(NG_STORAGE_UNIT, need > prep ? need : prep);
	e->slots = calloc(o->depth, sizeof *e->slots);
	e->hist = calloc(1, sizeof *e->hist);
	e->badmap = calloc(pr->size / o->block / 8 + 1, 1);
	if (!e->bufs || !e->slots || !e->hist || !e->badmap)
		return ENOMEM;
	int rc = io_uring_queue_init(o->depth, &e->ring, 0);
	if (rc < 0)
		return -rc;
	e->ring_ok = true;
	return 0;
}

static void teardown(struct probe *pr)
{
	struct engine *e = &pr->e;
	if (e->ring_ok)
		io_uring_queue_exit(&e->ring);
	if (e->fd >= 0)
		close(e->fd);
	if (pr->created && !pr->o->keep) {
		unlink(pr->file);
		cleanup_disarm();
	}
	free(e->bufs);
	free(e->slots);
	free(e->hist);
	free(e->badmap);
}

/* The directory to examine: dir, or the reused file's own. */
static void examined_dir(const ng_storage_opts *o, char *out, size_t n)
{
	snprintf(out, n, "%s", o->file ? o->file : o->dir);
	char *slash = o->file ? strrchr(out, '/') : NULL;
	if (slash)
		slash[slash == out] = '\0';
	else if (o->file)
		snprintf(out, n, ".");
}

static void run_probe(struct probe *pr)
{
	const ng_storage_opts *o = pr->o;
	ng_err werr;
	char dir[PATH_MAX];
	examined_dir(o, dir, sizeof dir);
	cJSON *where = ng_storage_where(dir, &werr);
	if (!where) {
		ng_record_set_reason(pr->rec, "cannot examine the path to test: %s", werr.msg);
		return;
	}
	/* Free space changes from run to run: evidence, not a condition. */
	for (cJSON *w = where->child; w; w = w->next)
		ng_json_set(strcmp(w->string, "fs_free_bytes") ? pr->cond : pr->detail, w->string,
		            cJSON_Duplicate(w, 1));
	cJSON_Delete(where);
	int rc = open_test_file(pr);
	if (rc) {
		give_reason(pr, o->file ? "opening the test file to reuse" : "creating the test file", rc);
		return;
	}
	if ((rc = setup_engine(pr))) {
		give_reason(pr, "setting up io_uring and buffers", rc);
	} else if (prepare(pr) == 0) {
		if (o->hooks && o->hooks->after_prepare)
			o->hooks->after_prepare(pr->file, pr->size, o->block, o->hooks->arg);
		measure(pr);
		add_integrity(pr);
	}
	ng_json_set(pr->cond, "direct", cJSON_CreateBool(pr->direct));
}

cJSON *ng_storage_probe(const ng_storage_opts *o, ng_err *err)
{
	if (ng_storage_opts_check(o, err) < 0)
		return NULL;
	struct probe pr = {.o = o, .size = o->size / o->block * o->block, .e = {.fd = -1}};
	pr.rec = ng_record_new(ng_storage_metric(o->pattern), "storage", NULL);
	if (!pr.rec) {
		ng_fail(err, "out of memory");
		return NULL;
	}
	pr.cond = ng_record_conditions(pr.rec);
	pr.detail = ng_record_detail(pr.rec);
	add_conditions(&pr);
	run_probe(&pr);
	/* A run that measured nothing keeps wrong at what it saw (0 unless a
	 * block already read back wrong, which outranks everything), as the
	 * harness does, so the gate says no-measurement ("fix the run") rather
	 * than correctness-unverified. */
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pr.rec, "samples")) == 0)
		ng_record_set_wrong(pr.rec, (double)pr.e.bad_blocks);
	if (pr.created || (o->file && pr.e.fd >= 0)) {
		cJSON_AddStringToObject(pr.detail, "file", pr.file);
		cJSON_AddBoolToObject(pr.detail, "kept", o->keep || !pr.created);
	}
	teardown(&pr);
	return pr.rec;
}

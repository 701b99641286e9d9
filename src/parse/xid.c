/* Kernel Xid lines (parse/xid.h). The driver prints
 *   NVRM: Xid (PCI:%04x:%02x:%02x[ GPU-I:%02u[ GPU-CI:%02u]]): %d, [pid=%s, name=%s, ]%s
 * (nvml.md section 12); very old drivers left out "PCI:". Whatever comes
 * before "NVRM:" is the logger's: a /dev/kmsg record prefix, a dmesg
 * timestamp, a syslog or journalctl header. Pure: no I/O, no allocation. */
#include "parse/xid.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "parse/text.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* Whether s[i..] starts with lit, ignoring ASCII case. */
static bool starts_ci(const char *s, size_t len, size_t i, const char *lit)
{
	size_t n = strlen(lit);
	if (i > len || len - i < n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (lower(s[i + k]) != lower(lit[k]))
			return false;
	return true;
}

static const char *find(const char *s, size_t len, size_t from, const char *lit)
{
	if (from > len)
		return NULL;
	return memmem(s + from, len - from, lit, strlen(lit));
}

/* The first "NVRM:" in s[0..len). glibc's memmem hashes pairs of bytes
 * (some 1.7 GB/s here: 150 us for a 256 KiB log); memchr for the 'N', a
 * capital a kernel log seldom has, runs ten times as fast. A text dense in
 * N's goes to memmem once the misses outnumber one in 32 bytes, so no
 * input is much slower than memmem was. */
static const char *find_nvrm(const char *s, size_t len)
{
	const char *p = s, *end = s + len;
	size_t misses = 0;
	while (end - p >= 5) {
		const char *n = memchr(p, 'N', (size_t)(end - p) - 4);
		if (!n)
			return NULL;
		if (memcmp(n + 1, "VRM:", 4) == 0)
			return n;
		p = n + 1;
		if (++misses > 64 + (size_t)(p - s) / 32)
			return memmem(p, (size_t)(end - p), "NVRM:", 5);
	}
	return NULL;
}

/* "NVRM:" in s[from..len). */
static const char *find_nvrm_from(const char *s, size_t len, size_t from)
{
	return from > len ? NULL : find_nvrm(s + from, len - from);
}

/* Up to max hex digits at s[*i]; false when there are none or more. */
static bool hex_run(const char *s, size_t len, size_t *i, size_t max, unsigned long *out)
{
	size_t k = *i;
	unsigned long v = 0;
	while (k < len && hex_value(s[k]) >= 0 && k - *i < max + 1)
		v = v * 16 + (unsigned long)hex_value(s[k++]);
	if (k == *i || k - *i > max)
		return false;
	*i = k;
	*out = v;
	return true;
}

/* Up to max decimal digits at s[*i] (max at most 18, so the value fits). */
static bool dec_run(const char *s, size_t len, size_t *i, size_t max, long long *out)
{
	size_t k = *i;
	long long v = 0;
	if (max > 18)
		max = 18;
	while (k < len && is_digit(s[k]) && k - *i < max + 1) {
		if (k - *i < max)
			v = v * 10 + (s[k] - '0');
		k++;
	}
	if (k == *i || k - *i > max)
		return false;
	*i = k;
	*out = v;
	return true;
}

/* "0000:3b:00", "00000000:3B:00", "0000:3b:00.0" at s[*i] into the
 * normalized form. The domain takes 4 to 8 hex digits but must fit 16 bits. */
static bool pci_address(const char *s, size_t len, size_t *i, char bus[16])
{
	size_t k = *i;
	unsigned long dom, b, dev;
	size_t d0 = k;
	if (!hex_run(s, len, &k, 8, &dom) || k - d0 < 4 || dom > 0xffff)
		return false;
	if (k >= len || s[k] != ':')
		return false;
	k++;
	if (!hex_run(s, len, &k, 2, &b) || k >= len || s[k] != ':')
		return false;
	k++;
	if (!hex_run(s, len, &k, 2, &dev) || dev > 0x1f)
		return false; /* a PCI device number has 5 bits */
	if (k + 1 < len && s[k] == '.' && hex_value(s[k + 1]) >= 0)
		k += 2; /* the function, which the kernel's form leaves out */
	if (k < len && (hex_value(s[k]) >= 0 || s[k] == ':'))
		return false; /* more digits than an address has */
	ng_gpu_bus_format(dom, b, dev, bus);
	*i = k;
	return true;
}

/* The earlier Xid a line names as its cause: the driver writes "caused by
 * previous Xid 149" (Xid 45 after an NVLink fault, for one), anywhere in the
 * text and in any case. 0 when there is none. The whole text is searched,
 * not the part of it kept in the message. */
static int caused_by(const char *s, size_t len)
{
	static const char lit[] = "previous xid";
	size_t n = sizeof lit - 1;
	for (size_t k = 0; k + n <= len; k++) {
		if ((s[k] != 'p' && s[k] != 'P') || !starts_ci(s, len, k, lit))
			continue;
		size_t i = k + n;
		while (i < len && (s[i] == ' ' || s[i] == ':' || s[i] == '#'))
			i++;
		long long code;
		if (dec_run(s, len, &i, 6, &code) && code > 0 && (i == len || !is_digit(s[i])))
			return (int)code;
	}
	return 0;
}

/* Printable ASCII only: the text goes to JSON and to terminals. */
static void copy_text(char *dst, size_t cap, const char *s, size_t len)
{
	size_t n = len < cap - 1 ? len : cap - 1;
	for (size_t k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];
		dst[k] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[n] = '\0';
}

/* The time in the logger's prefix (s[0..end)): a /dev/kmsg record
 * "prio,seq,usec,flags;" or a dmesg "[  966.503025]" anywhere in it (a
 * syslog or journalctl header may come first). -1 when there is none (dmesg
 * -T and ISO times are wall clock, not the kernel's monotonic time). */
static int64_t prefix_time(const char *s, size_t end)
{
	size_t i = 0;
	long long prio, seq, usec;
	if (dec_run(s, end, &i, 4, &prio) && i < end && s[i] == ',' && (++i, dec_run(s, end, &i, 18, &seq)) &&
	    i < end && s[i] == ',' && (++i, dec_run(s, end, &i, 18, &usec)) && i < end &&
	    (s[i] == ',' || s[i] == ';') && memchr(s + i, ';', end - i))
		return usec;

	const char *open = NULL;
	for (size_t k = 0; k < end; k++)
		if (s[k] == '[')
			open = s + k;
	if (!open)
		return -1;
	size_t k = (size_t)(open - s) + 1;
	while (k < end && s[k] == ' ')
		k++;
	long long sec, frac;
	size_t f0;
	if (!dec_run(s, end, &k, 12, &sec) || k >= end || s[k] != '.')
		return -1;
	f0 = ++k;
	if (!dec_run(s, end, &k, 9, &frac) || k >= end || s[k] != ']')
		return -1;
	for (size_t digits = k - f0; digits < 6; digits++)
		frac *= 10;
	for (size_t digits = k - f0; digits > 6; digits--)
		frac /= 10;
	return (int64_t)sec * 1000000 + frac;
}

static void event_init(ng_xid_event *e)
{
	memset(e, 0, sizeof *e);
	e->gpu_instance = e->compute_instance = -1;
	e->pid = -1;
	e->at_usec = -1;
}

/* "pid=..." or "name=..." at s[*i] up to the next comma: the value's span.
 * false when the field is not there. */
static bool field(const char *s, size_t len, size_t *i, const char *key, ng_span *value)
{
	if (!starts_ci(s, len, *i, key))
		return false;
	size_t v = *i + strlen(key);
	const char *comma = memchr(s + v, ',', len - v);
	if (!comma)
		return false; /* the message always follows */
	*value = ng_span_trim((ng_span){s + v, (size_t)(comma - (s + v))});
	*i = (size_t)(comma - s) + 1;
	while (*i < len && (s[*i] == ' ' || s[*i] == '\t'))
		(*i)++;
	return true;
}

static bool unknown_value(ng_span v)
{
	return ng_span_eq(v, "<unknown>") || ng_span_eq(v, "'<unknown>'") || ng_span_eq(v, "\"<unknown>\"");
}

/* One "NVRM: Xid (...)" at s[at] (at points at "NVRM:"). */
static bool parse_xid_at(const char *s, size_t len, size_t at, ng_xid_event *e)
{
	size_t i = at + 5;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (!starts_ci(s, len, i, "Xid"))
		return false;
	i += 3;
	while (i < len && s[i] == ' ')
		i++;
	if (i >= len || s[i] != '(')
		return false;
	i++;
	while (i < len && s[i] == ' ')
		i++;
	if (starts_ci(s, len, i, "PCI:"))
		i += 4;
	if (!pci_address(s, len, &i, e->bus))
		return false;
	/* MIG instances, then the closing parenthesis */
	for (;;) {
		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			return false;
		if (s[i] == ')')
			break;
		long long id;
		if (starts_ci(s, len, i, "GPU-I:")) {
			i += 6;
			if (!dec_run(s, len, &i, 6, &id))
				return false;
			e->gpu_instance = (int)id;
		} else if (starts_ci(s, len, i, "GPU-CI:")) {
			i += 7;
			if (!dec_run(s, len, &i, 6, &id))
				return false;
			e->compute_instance = (int)id;
		} else {
			while (i < len && s[i] != ' ' && s[i] != ')')
				i++; /* a token a later driver may add */
		}
	}
	i++;
	if (i >= len || s[i] != ':')
		return false;
	i++;
	while (i < len && s[i] == ' ')
		i++;
	long long code;
	if (!dec_run(s, len, &i, 6, &code))
		return false;
	if (i < len && s[i] != ',' && s[i] != ' ' && s[i] != '\t')
		return false;
	e->code = (int)code;
	if (i < len && s[i] == ',')
		i++;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;

	ng_span v;
	if (field(s, len, &i, "pid=", &v)) {
		long long pid;
		if (!unknown_value(v) && ng_span_integer(v, &pid))
			e->pid = (long)pid;
	}
	if (field(s, len, &i, "name=", &v) && !unknown_value(v))
		copy_text(e->name, sizeof e->name, v.s, v.len);
	ng_span msg = ng_span_trim((ng_span){s + i, len - i});
	copy_text(e->message, sizeof e->message, msg.s, msg.len);
	e->cause = caused_by(msg.s, msg.len);
	return true;
}

/* "NVRM: The NVIDIA GPU 0000:b3:00.0" (open kernel modules print a fallen
 * GPU this way, without an Xid): the address, or false. */
static bool fallen_gpu_at(const char *s, size_t len, size_t at, char bus[16])
{
	static const char lead[] = "NVRM: The NVIDIA GPU ";
	if (!starts_ci(s, len, at, lead))
		return false;
	size_t i = at + sizeof lead - 1;
	return pci_address(s, len, &i, bus);
}

static const char FALLEN[] = "fallen off the bus";
static const char FALLEN_MESSAGE[] = "GPU has fallen off the bus (logged without an Xid)";

int ng_xid_parse_line(const char *line, size_t len, ng_xid_event *out)
{
	ng_xid_event e;
	if (!line)
		return 0;
	for (const char *p = find_nvrm(line, len); p; p = find_nvrm_from(line, len, (size_t)(p - line) + 1)) {
		size_t at = (size_t)(p - line);
		event_init(&e);
		if (parse_xid_at(line, len, at, &e)) {
			e.at_usec = prefix_time(line, at);
			*out = e;
			return 1;
		}
		/* The same report on one line: a /dev/kmsg record keeps the
		 * printk's line breaks inside it. */
		if (fallen_gpu_at(line, len, at, e.bus) && find(line, len, at, FALLEN)) {
			e.code = 79;
			e.at_usec = prefix_time(line, at);
			snprintf(e.message, sizeof e.message, "%s", FALLEN_MESSAGE);
			*out = e;
			return 1;
		}
	}
	return 0;
}

/* The start of a fallen-GPU report whose "fallen off the bus" is on a
 * following line: its event, without the words. */
static bool fallen_start(ng_span line, ng_xid_event *e)
{
	for (const char *p = find_nvrm(line.s, line.len); p;
	     p = find_nvrm_from(line.s, line.len, (size_t)(p - line.s) + 1)) {
		size_t at = (size_t)(p - line.s);
		event_init(e);
		if (fallen_gpu_at(line.s, line.len, at, e->bus)) {
			e->code = 79;
			e->at_usec = prefix_time(line.s, at);
			snprintf(e->message, sizeof e->message, "%s", FALLEN_MESSAGE);
			return true;
		}
	}
	return false;
}

size_t ng_xid_scan_part(const char *text, size_t len, size_t stop, int64_t since_usec,
                        void (*fn)(const ng_xid_event *e, void *arg), void *arg, size_t *count)
{
	if (!text)
		return 0;
	if (stop > len)
		stop = len;
	ng_lines it;
	ng_lines_init(&it, text, len);
	ng_span line;
	/* Every report this reads has "NVRM:" on its first line, and a kernel
	 * log is mostly other drivers' lines: one search of the rest of the
	 * log finds the next candidate, and the scan goes straight to the line
	 * that holds it (2,600 lines of a 256 KiB log, some 700 of them
	 * candidates, each line walked once cost more than the search). */
	const char *end = text + len, *until = text + stop, *nvrm = NULL;
	while (it.p < until) {
		if (!nvrm || nvrm < it.p)
			nvrm = find_nvrm(it.p, (size_t)(end - it.p));
		if (!nvrm)
			break;
		const char *nl = memrchr(it.p, '\n', (size_t)(nvrm - it.p));
		if (nl)
			it.p = nl + 1;
		if (it.p >= until || !ng_lines_next(&it, &line))
			break; /* the next part's first line */
		ng_xid_event e;
		bool found = ng_xid_parse_line(line.s, line.len, &e) == 1;
		if (!found && fallen_start(line, &e)) {
			/* dmesg shows the printk over three lines, each repeating
			 * "NVRM:": the words are on one of the next two. */
			ng_lines ahead = it;
			ng_span next;
			for (int k = 0; k < 2 && ng_lines_next(&ahead, &next); k++) {
				ng_xid_event other;
				if (!ng_span_contains(next, "NVRM:") || ng_xid_parse_line(next.s, next.len, &other) ||
				    fallen_start(next, &other))
					break;
				if (ng_span_contains(next, FALLEN)) {
					found = true;
					it = ahead; /* the report's lines are used up */
					break;
				}
			}
		}
		if (!found || (since_usec >= 0 && e.at_usec >= 0 && e.at_usec < since_usec))
			continue;
		if (fn)
			fn(&e, arg);
		if (count)
			(*count)++;
	}
	return it.p > until ? (size_t)(it.p - text) : stop;
}

size_t ng_xid_scan(const char *text, size_t len, int64_t since_usec,
                   void (*fn)(const ng_xid_event *e, void *arg), void *arg)
{
	size_t count = 0;
	ng_xid_scan_part(text, len, len, since_usec, fn, arg, &count);
	return count;
}

/* What the snapshot keeps of an event: its instance, process and text. */
static void attach_message(const ng_xid_event *e, char *out, size_t cap)
{
	char who[128] = "";
	size_t n = 0;
	if (e->gpu_instance >= 0)
		n += (size_t)snprintf(who + n, sizeof who - n, "GPU-I:%02d", e->gpu_instance);
	if (e->compute_instance >= 0 && n < sizeof who)
		n += (size_t)snprintf(who + n, sizeof who - n, "%sGPU-CI:%02d", n ? " " : "", e->compute_instance);
	if (e->pid >= 0 && n < sizeof who)
		n += (size_t)snprintf(who + n, sizeof who - n, "%spid=%ld", n ? ", " : "", e->pid);
	if (e->name[0] && n < sizeof who)
		snprintf(who + n, sizeof who - n, "%sname=%.60s", n ? ", " : "", e->name);
	/* cut to fit, rather than printed: the message may fill the space */
	size_t used = 0;
	if (who[0]) {
		size_t w = strnlen(who, sizeof who);
		copy_text(out, cap, who, w);
		used = w < cap - 1 ? w : cap - 1;
		copy_text(out + used, cap - used, ": ", 2);
		used += used + 2 < cap ? 2 : cap - 1 - used;
	}
	copy_text(out + used, cap - used, e->message, strnlen(e->message, sizeof e->message));
}

size_t ng_xid_attach(ng_gpu_snapshot *s, const ng_xid_event *events, size_t n)
{
	size_t unmatched = 0;
	size_t n_gpus = s->n_gpus < NG_GPU_MAX ? s->n_gpus : NG_GPU_MAX;
	char gpu_bus[NG_GPU_MAX][16];
	for (size_t g = 0; g < n_gpus; g++) {
		char raw[sizeof s->gpu[g].bus + 1];
		memcpy(raw, s->gpu[g].bus, sizeof s->gpu[g].bus);
		raw[sizeof s->gpu[g].bus] = '\0';
		if (ng_gpu_bus_normalize(raw, gpu_bus[g]) < 0)
			gpu_bus[g][0] = '\0';
	}
	for (size_t i = 0; i < n; i++) {
		const ng_xid_event *e = &events[i];
		char raw[sizeof e->bus + 1], bus[16];
		memcpy(raw, e->bus, sizeof e->bus);
		raw[sizeof e->bus] = '\0';
		size_t g = n_gpus;
		if (ng_gpu_bus_normalize(raw, bus) == 0)
			for (g = 0; g < n_gpus && strcmp(gpu_bus[g], bus) != 0; g++)
				;
		if (g == n_gpus) {
			unmatched++;
			continue;
		}
		ng_gpu_state *gpu = &s->gpu[g];
		if (gpu->n_xid > NG_GPU_XID_MAX)
			gpu->n_xid = NG_GPU_XID_MAX;
		if (gpu->n_xid == NG_GPU_XID_MAX) {
			/* keep the newest: events come in the log's order */
			memmove(&gpu->xid[0], &gpu->xid[1], (NG_GPU_XID_MAX - 1) * sizeof gpu->xid[0]);
			gpu->n_xid--;
		}
		ng_gpu_xid *x = &gpu->xid[gpu->n_xid++];
		memset(x, 0, sizeof *x);
		x->code = e->code;
		x->cause = e->cause > 0 && e->cause <= 999999 ? e->cause : 0;
		x->at_usec = e->at_usec;
		attach_message(e, x->message, sizeof x->message);
	}
	return unmatched;
}

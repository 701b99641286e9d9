/* The compute evidence's Xids since boot (collect/evidence.h): every Xid
 * the kernel log still holds, read from ROOT/dev/kmsg from its first record
 * and never waiting for more (O_NONBLOCK: EAGAIN is the end). The log's
 * lines are untrusted text: parse/xid.c reads them (fuzz_parse_xid). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/evidence.h"
#include "core/strbuf.h"
#include "parse/xid.h"

#define KMSG_BYTES_MAX (8u << 20) /* the kernel's largest log buffer is 32 MiB; a
                                   * node's Xids are near its end only after a
                                   * flood, which this bound shows as cut */
#define XIDS_KEPT 32              /* the newest, in the evidence */

struct xids {
	ng_xid_event ev[XIDS_KEPT];
	size_t n, total;
};

static void keep(const ng_xid_event *e, void *arg)
{
	struct xids *x = arg;
	x->total++;
	if (x->n == XIDS_KEPT) {
		memmove(x->ev, x->ev + 1, (XIDS_KEPT - 1) * sizeof *x->ev);
		x->n--;
	}
	x->ev[x->n++] = *e;
}

/* The log's text: /dev/kmsg one record per read, a planted file to its
 * end; *cut when the bound stopped it. NULL when it cannot be opened. */
static char *read_log(const char *path, bool *cut, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	ng_strbuf b = {0};
	char rec[8192];
	*cut = false;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof rec);
		if (n < 0 && (errno == EINTR || errno == EPIPE))
			continue; /* EPIPE: records overwritten while reading */
		if (n <= 0)
			break; /* EAGAIN: the end of the buffer */
		if (b.len + (size_t)n > KMSG_BYTES_MAX) {
			*cut = true;
			break;
		}
		ng_strbuf_add(&b, rec, (size_t)n);
		if (rec[n - 1] != '\n')
			ng_strbuf_addc(&b, '\n');
	}
	close(fd);
	if (b.oom) {
		ng_strbuf_free(&b);
		return NULL;
	}
	*len = b.len;
	return b.s ? b.s : calloc(1, 1);
}

void ng_evidence_add_xids(cJSON *ev, const char *root, cJSON *unreadable)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/dev/kmsg", strcmp(root, "/") == 0 ? "" : root);
	bool cut = false;
	size_t len = 0;
	char *text = read_log(path, &cut, &len);
	if (!text) {
		cJSON_AddItemToArray(unreadable, cJSON_CreateString("/dev/kmsg"));
		return;
	}
	struct xids *x = calloc(1, sizeof *x);
	if (!x) {
		free(text);
		return;
	}
	ng_xid_scan(text, len, -1, keep, x);
	free(text);
	cJSON *o = cJSON_AddObjectToObject(ev, "xids_since_boot");
	cJSON_AddNumberToObject(o, "count", (double)x->total);
	if (cut)
		cJSON_AddStringToObject(o, "cut", "the kernel log was read only to its first 8 MiB");
	cJSON *list = cJSON_AddArrayToObject(o, "newest");
	for (size_t i = 0; i < x->n; i++) {
		const ng_xid_event *e = &x->ev[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "bus", e->bus);
		cJSON_AddNumberToObject(j, "code", e->code);
		if (e->at_usec >= 0)
			cJSON_AddNumberToObject(j, "at_s", (double)e->at_usec / 1e6);
		if (e->pid >= 0)
			cJSON_AddNumberToObject(j, "pid", (double)e->pid);
		if (e->message[0])
			cJSON_AddStringToObject(j, "message", e->message);
		cJSON_AddItemToArray(list, j);
	}
	free(x);
}

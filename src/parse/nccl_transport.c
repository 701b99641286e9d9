/* NCCL_DEBUG=INFO lines: which network the channels used (nccl_transport.h). */
#include "parse/nccl_transport.h"

#include <stdio.h>
#include <string.h>

#include "parse/text.h"

/* Finds lit in s; the offset just after it, or -1. */
static long find_after(ng_span s, const char *lit)
{
	size_t n = strlen(lit);
	if (n == 0 || s.len < n)
		return -1;
	for (size_t i = 0; i + n <= s.len; i++)
		if (memcmp(s.s + i, lit, n) == 0)
			return (long)(i + n);
	return -1;
}

/* A name as printed, up to a byte in stop, printable ASCII only. */
static void copy_name(const char *p, size_t len, const char *stop, char *dst, size_t cap)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < cap; i++) {
		unsigned char ch = (unsigned char)p[i];
		if (ch <= ' ' || ch > 0x7e || strchr(stop, ch))
			break;
		dst[k++] = (char)ch;
	}
	dst[k] = '\0';
}

static void add_unique(char (*list)[NG_NT_NAME], size_t *n, const char *name)
{
	if (!name[0])
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(list[i], name) == 0)
			return;
	if (*n < NG_NT_MAX_DEVICES)
		snprintf(list[(*n)++], NG_NT_NAME, "%s", name);
}

/* "Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ib0:..." -> each "[k]name". The
 * OOB part names the bootstrap interface, not a data path, so reading stops there. */
static void read_using(ng_span rest, bool ib, ng_nccl_transport *t)
{
	for (size_t i = 0; i < rest.len; i++) {
		if (rest.s[i] == ';')
			return;
		if (rest.s[i] != '[')
			continue;
		size_t j = i + 1;
		while (j < rest.len && rest.s[j] >= '0' && rest.s[j] <= '9')
			j++;
		if (j == i + 1 || j >= rest.len || rest.s[j] != ']')
			continue;
		char name[NG_NT_NAME];
		/* IB devices keep their port ("mlx5_0:1"); a socket's ":addr" is not a device. */
		copy_name(rest.s + j + 1, rest.len - j - 1, ib ? "/<[;" : ":/<[;", name, sizeof name);
		if (ib)
			add_unique(t->ib, &t->n_ib, name);
		else
			add_unique(t->socket, &t->n_socket, name);
		i = j;
	}
}

static void read_info(ng_span line, ng_nccl_transport *t)
{
	long at;
	if ((at = find_after(line, "Using network ")) >= 0) {
		char net[NG_NT_NAME];
		copy_name(line.s + at, line.len - (size_t)at, "", net, sizeof net);
		if (net[0]) {
			if (t->network[0] && strcmp(t->network, net) != 0)
				t->network_conflict = true;
			else
				snprintf(t->network, sizeof t->network, "%s", net);
		}
		return;
	}
	if ((at = find_after(line, " via NET/")) >= 0) {
		ng_span rest = {line.s + at, line.len - (size_t)at};
		if (ng_span_starts_with(rest, "IB"))
			t->via_ib++;
		else if (ng_span_starts_with(rest, "Socket"))
			t->via_socket++;
		else
			t->via_other++;
		if (ng_span_contains(rest, "/GDRDMA") || ng_span_contains(rest, "/GDR"))
			t->via_gdr++;
		return;
	}
	if (find_after(line, " via P2P") >= 0 || find_after(line, " via SHM") >= 0 ||
	    find_after(line, " via CollNet") >= 0 || find_after(line, " via NVLS") >= 0) {
		t->via_p2p++;
		return;
	}
	if ((at = find_after(line, "NET/IB")) >= 0) {
		ng_span rest = {line.s + at, line.len - (size_t)at};
		long u;
		if (ng_span_contains(rest, "No device found"))
			t->ib_no_device = true;
		else if (ng_span_contains(rest, "GPU Direct RDMA Enabled"))
			t->gdr_said = 1;
		else if (ng_span_contains(rest, "GPU Direct RDMA Disabled") && t->gdr_said < 0)
			t->gdr_said = 0;
		else if ((u = find_after(rest, "Using ")) >= 0)
			read_using((ng_span){rest.s + u, rest.len - (size_t)u}, true, t);
		return;
	}
	if ((at = find_after(line, "NET/Socket")) >= 0) {
		ng_span rest = {line.s + at, line.len - (size_t)at};
		long u = find_after(rest, "Using ");
		if (u >= 0)
			read_using((ng_span){rest.s + u, rest.len - (size_t)u}, false, t);
	}
}

void ng_nccl_transport_read(const char *text, size_t len, ng_nccl_transport *out)
{
	memset(out, 0, sizeof *out);
	out->gdr_said = -1;
	ng_lines it;
	ng_lines_init(&it, text ? text : "", text ? len : 0);
	ng_span line;
	while (ng_lines_next(&it, &line)) {
		long at = find_after(line, "NCCL INFO");
		if (at < 0)
			continue;
		out->info_lines++;
		read_info((ng_span){line.s + at, line.len - (size_t)at}, out);
	}
}

const char *ng_nccl_transport_kind(const ng_nccl_transport *t)
{
	/* The channel lines say where data went; "Using network" only what was picked. */
	if (t->via_socket && !t->via_ib)
		return "socket";
	if (t->via_ib && !t->via_socket && !t->via_other)
		return "ib";
	if (t->via_ib || t->via_socket || t->via_other)
		return "other";
	if (strncmp(t->network, "Socket", 6) == 0)
		return "socket";
	if (strncmp(t->network, "IB", 2) == 0)
		return "ib";
	return t->network[0] ? "other" : "unseen";
}

static cJSON *names(const char (*list)[NG_NT_NAME], size_t n)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(list[i]));
	return a;
}

cJSON *ng_nccl_transport_json(const ng_nccl_transport *t)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", ng_nccl_transport_kind(t));
	if (t->network[0])
		cJSON_AddStringToObject(o, "network", t->network);
	if (t->network_conflict)
		cJSON_AddBoolToObject(o, "network_conflict", true);
	cJSON_AddItemToObject(o, "ib_devices", names(t->ib, t->n_ib));
	cJSON_AddItemToObject(o, "socket_interfaces", names(t->socket, t->n_socket));
	if (t->ib_no_device)
		cJSON_AddBoolToObject(o, "ib_no_device", true);
	cJSON_AddNumberToObject(o, "channels_ib", t->via_ib);
	cJSON_AddNumberToObject(o, "channels_socket", t->via_socket);
	cJSON_AddNumberToObject(o, "channels_other", t->via_other);
	cJSON_AddNumberToObject(o, "channels_gdr", t->via_gdr);
	cJSON_AddNumberToObject(o, "channels_in_node", t->via_p2p);
	/* GDR: the channel lines when IB channels were printed, else what NCCL said. */
	if (t->via_ib)
		cJSON_AddBoolToObject(o, "gdr", t->via_gdr > 0);
	else if (t->gdr_said >= 0)
		cJSON_AddBoolToObject(o, "gdr", t->gdr_said == 1);
	else
		cJSON_AddNullToObject(o, "gdr");
	cJSON_AddNumberToObject(o, "info_lines", t->info_lines);
	return o;
}

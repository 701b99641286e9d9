/* The fabric domain's evidence (collect/evidence.h): the ports, where each
 * HCA sits, and the transport the environment selects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/evidence.h"
#include "collect/ib_ports.h"
#include "collect/identity_read.h"
#include "collect/nvml_p2p.h"

/* The variables that pick NCCL's and UCX's transport and devices. */
static const char *const selectors[] = {
	"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NET", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE",
	"NCCL_NET_GDR_LEVEL", "NCCL_CROSS_NIC", "UCX_NET_DEVICES", "UCX_TLS", "CUDA_VISIBLE_DEVICES",
};

cJSON *ng_evidence_fabric(const ng_evidence_opts *o)
{
	const char *root = ng_evidence_root(o);
	cJSON *unreadable;
	cJSON *ev = ng_evidence_begin("fabric", &unreadable);
	if (!ev)
		return NULL;
	ng_err err;
	cJSON *ports = ng_ib_ports_read(root, &err);
	cJSON_AddItemToObject(ev, "ib", ports ? ports : cJSON_CreateNull());
	/* Topology: the NUMA node of each HCA, as the kernel places it. */
	cJSON *topo = cJSON_AddObjectToObject(ev, "hca_numa_node");
	char **names = NULL;
	size_t n = ng_id_list(root, "/sys/class/infiniband", NULL, &names);
	for (size_t i = 0; i < n; i++) {
		char p[320];
		long long numa;
		snprintf(p, sizeof p, "/sys/class/infiniband/%s/device/numa_node", names[i]);
		if (ng_id_read_int(root, p, &numa))
			cJSON_AddNumberToObject(topo, names[i], (double)numa);
	}
	ng_id_free_list(names, n);
	cJSON *sel = cJSON_AddObjectToObject(ev, "transport_selection");
	for (size_t i = 0; i < sizeof selectors / sizeof selectors[0]; i++) {
		const char *v = getenv(selectors[i]);
		if (v && strlen(v) < 256)
			cJSON_AddStringToObject(sel, selectors[i], v);
	}
	/* Peer access: whether each pair of GPUs may read, write and use
	 * atomics on the other directly (a BIOS's ACS or a driver's registry
	 * key turns it off, and NCCL falls back to the host without a word). */
	cJSON *p2p = ng_nvml_p2p_read(o ? o->nvml_lib : NULL, unreadable);
	if (p2p)
		cJSON_AddItemToObject(ev, "peer_access", p2p);
	cJSON_AddItemToObject(ev, "unreadable", unreadable);
	return ev;
}

static const cJSON *port_in(const cJSON *ports, const char *hca, double port)
{
	const cJSON *p;
	cJSON_ArrayForEach(p, ports)
	{
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "hca");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "port");
		if (cJSON_IsString(h) && strcmp(h->valuestring, hca) == 0 && cJSON_IsNumber(n) &&
		    n->valuedouble == port)
			return p;
	}
	return NULL;
}

static const cJSON *ports_of(const cJSON *ev)
{
	return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "ib"),
	                                        "ports");
}

void ng_evidence_fabric_since(cJSON *ev, const cJSON *previous)
{
	const cJSON *pev = cJSON_GetObjectItemCaseSensitive(previous, "evidence");
	const cJSON *dom = cJSON_GetObjectItemCaseSensitive(pev, "domain");
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(previous, "run_id");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(previous, "captured_at");
	if (!cJSON_IsObject(ev) || !cJSON_IsString(dom) || strcmp(dom->valuestring, "fabric") != 0 ||
	    !cJSON_IsString(run) || !cJSON_IsNumber(at))
		return;
	cJSON *pr = cJSON_AddObjectToObject(ev, "previous_read");
	cJSON_AddStringToObject(pr, "run_id", run->valuestring);
	cJSON_AddNumberToObject(pr, "captured_at", at->valuedouble);
	const cJSON *before = ports_of(pev);
	cJSON *p;
	cJSON_ArrayForEach(p, ports_of(ev))
	{
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "hca");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "port");
		const cJSON *was = cJSON_IsString(h) && cJSON_IsNumber(n)
		                       ? port_in(before, h->valuestring, n->valuedouble)
		                       : NULL;
		if (!was) {
			cJSON_AddStringToObject(p, "previous_port", "absent");
			continue;
		}
		const cJSON *old = cJSON_GetObjectItemCaseSensitive(was, "counters");
		cJSON *since = cJSON_CreateObject(), *reset = cJSON_CreateArray();
		const cJSON *c;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(p, "counters"))
		{
			const cJSON *o = c->string ? cJSON_GetObjectItemCaseSensitive(old, c->string) : NULL;
			if (!cJSON_IsNumber(c) || !cJSON_IsNumber(o))
				continue; /* not read both times: no change to tell */
			if (c->valuedouble < o->valuedouble)
				cJSON_AddItemToArray(reset, cJSON_CreateString(c->string));
			else
				cJSON_AddNumberToObject(since, c->string, c->valuedouble - o->valuedouble);
		}
		cJSON_AddItemToObject(p, "counters_since_previous", since);
		if (cJSON_GetArraySize(reset))
			cJSON_AddItemToObject(p, "counters_reset", reset);
		else
			cJSON_Delete(reset);
	}
}

/* The fabric domain's evidence (collect/evidence.h): the ports, where each
 * HCA sits, and the transport the environment selects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/evidence.h"
#include "collect/ib_ports.h"
#include "collect/identity_read.h"

/* The variables that pick NCCL's and UCX's transport and devices. */
static const char *const selectors[] = {
	"NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NET", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE",
	"NCCL_NET_GDR_LEVEL", "NCCL_CROSS_NIC", "UCX_NET_DEVICES", "UCX_TLS", "CUDA_VISIBLE_DEVICES",
};

cJSON *ng_evidence_fabric(const ng_evidence_opts *o)
{
	const char *root = ng_evidence_root(o);
	cJSON *ev = cJSON_CreateObject();
	if (!ev)
		return NULL;
	cJSON_AddStringToObject(ev, "domain", "fabric");
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
	return ev;
}

/* The failing domain's evidence, captured and kept (flow/evidence.h). */
#include "flow/evidence.h"

#include <stdlib.h>
#include <string.h>

#include "collect/evidence.h"
#include "collect/identity.h"
#include "store/probation.h"

int ng_evidence_capture(ng_store *st, const ng_evidence_capture_in *in, ng_err *err)
{
	char id[256], name[128];
	ng_node_names(id, sizeof id, name, sizeof name);
	if (!in->node || strcmp(in->node, id) != 0)
		return 0;
	ng_evidence_opts o = {.records = in->records};
	int kept = 0;
	for (size_t i = 0; i < in->n_domains; i++) {
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = in->domains[k] && in->domains[i] && !strcmp(in->domains[k], in->domains[i]);
		cJSON *ev = seen ? NULL : ng_evidence_collect(in->domains[i], &o);
		if (!ev)
			continue;
		char *body = cJSON_PrintUnformatted(ev);
		cJSON_Delete(ev);
		int rc = body ? ng_store_put_evidence(st, in->node, in->run_id, in->domains[i], in->now,
		                                      body, err)
		              : ng_fail(err, "out of memory");
		cJSON_free(body);
		if (rc < 0)
			return -1;
		kept++;
	}
	return kept;
}

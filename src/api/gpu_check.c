/* The public API's GPU check (include/nodegate/nodegate.h): the epilog,
 * prolog and health decisions over the flow's (flow/gpu_check.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "api/api.h"
#include "flow/gpu_check.h"

_Static_assert((int)NODEGATE_CHECK_EPILOG == (int)NG_CHECK_EPILOG &&
                   (int)NODEGATE_CHECK_PROLOG == (int)NG_CHECK_PROLOG &&
                   (int)NODEGATE_CHECK_HEALTH == (int)NG_CHECK_HEALTH,
               "the public check modes are flow/gpu_check.h's");

struct nodegate_gpu_check {
	ng_gpu_check_result *r;
};

void nodegate_gpu_check_request_init(nodegate_gpu_check_request *req, nodegate_check_mode mode)
{
	ng_gpu_check_request q;
	ng_gpu_check_request_init(&q, (ng_check_mode)mode);
	*req = (nodegate_gpu_check_request){.mode = mode,
	                                    .gpus = q.gpus,
	                                    .deadline_s = q.deadline_s,
	                                    .kmsg_path = q.kmsg_path,
	                                    .no_kmsg = q.no_kmsg,
	                                    .since_s = q.since_s,
	                                    .nvml_library = q.nvml_library,
	                                    .no_store = q.no_store,
	                                    .smi_file = q.smi_file,
	                                    .node = q.node,
	                                    .root = q.root};
}

int nodegate_gpu_check_run(nodegate_ctx *c, const nodegate_gpu_check_request *req,
                           nodegate_gpu_check **out, nodegate_error *eout)
{
	if (out)
		*out = NULL;
	if (!c || !req || !out)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no context, request or result to fill");
	if (req->mode != NODEGATE_CHECK_EPILOG && req->mode != NODEGATE_CHECK_PROLOG &&
	    req->mode != NODEGATE_CHECK_HEALTH)
		return ng_api_fail_as(eout, NODEGATE_ERR_USAGE, "no such check mode");
	ng_gpu_check_request q;
	ng_gpu_check_request_init(&q, (ng_check_mode)req->mode);
	q.gpus = req->gpus;
	q.deadline_s = req->deadline_s;
	q.kmsg_path = req->kmsg_path;
	q.no_kmsg = req->no_kmsg != 0;
	q.since_s = req->since_s;
	q.nvml_library = req->nvml_library;
	/* The context's store or none: never one named only by the environment,
	 * which the caller did not ask for. */
	q.store = c->ctx.store ? c->store_spec : NULL;
	q.no_store = req->no_store != 0 || !q.store;
	q.smi_file = req->smi_file;
	q.node = req->node;
	q.root = req->root;
	/* The drain is the caller's (nodegate_gpu_check_drains): q.land_slurm
	 * stays false. */
	struct nodegate_gpu_check *g = calloc(1, sizeof *g);
	if (!g)
		return ng_api_fail_as(eout, NODEGATE_ERR_INTERNAL, "out of memory: nothing checked");
	int ran = ng_gpu_check_run(&c->ctx, &q, &g->r);
	if (ran == NG_GPU_CHECK_NOMEM) {
		free(g);
		return ng_api_fail_as(eout, NODEGATE_ERR_INTERNAL, "out of memory: nothing checked");
	}
	if (ran == NG_GPU_CHECK_INPUT) {
		int rc = ng_api_fail_as(eout, NODEGATE_ERR_INPUT, ng_gpu_check_reason(g->r));
		nodegate_gpu_check_release(g);
		return rc;
	}
	ng_gpu_check_tell(&c->ctx, g->r);
	*out = g;
	return 0;
}

const char *nodegate_gpu_check_severity(const nodegate_gpu_check *g)
{
	return g ? ng_gpu_check_severity(g->r) : "n/a";
}

int nodegate_gpu_check_drains(const nodegate_gpu_check *g)
{
	return g && ng_gpu_check_drains(g->r);
}

int nodegate_gpu_check_exit_status(const nodegate_gpu_check *g)
{
	return g ? ng_gpu_check_exit_status(g->r) : 0;
}

const char *nodegate_gpu_check_reason(const nodegate_gpu_check *g)
{
	return g ? ng_gpu_check_reason(g->r) : "";
}

size_t nodegate_gpu_check_count(const nodegate_gpu_check *g)
{
	return g ? ng_gpu_check_count(g->r) : 0;
}

char *nodegate_gpu_check_json(const nodegate_gpu_check *g)
{
	/* The flow's text is malloc'd (cJSON's hooks are the C library's), so
	 * nodegate_free releases it. */
	return g ? ng_gpu_check_json(g->r) : NULL;
}

void nodegate_gpu_check_release(nodegate_gpu_check *g)
{
	if (!g)
		return;
	ng_gpu_check_result_release(g->r);
	free(g);
}

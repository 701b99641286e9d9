/* nodegate gate --batch: the flow's stream of cases (flow/gate_batch.h) on
 * standard input and output, its notes on standard error. */
#include "cli/cmd.h"
#include "flow/gate_batch.h"

int ng_gate_batch(struct ng_cli *cli, FILE *in, FILE *out)
{
	ng_ctx ctx;
	ng_cli_ctx(cli, NULL, &ctx);
	int rc = ng_flow_gate_batch(&ctx, in, out);
	return rc < 0 ? NG_EXIT_USAGE : rc == 1 ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

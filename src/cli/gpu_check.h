/* The command line's side of the GPU check that `nodegate epilog`, `prolog`
 * and `health` share: the options and the printing. The check itself is the
 * flow layer's (flow/gpu_check.h, src/flow/gpu_check.c). */
#ifndef NODEGATE_CLI_GPU_CHECK_H
#define NODEGATE_CLI_GPU_CHECK_H

#include "cli/cmd.h"
#include "flow/gpu_check.h"

/* Parses the verb's options (cli/gpu_check_opts.c), runs the check
 * (flow/gpu_check.c) and prints its result. Returns the exit status. */
int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv);

/* The result as text: one line per GPU, the notes, the verdict last
 * (cli/gpu_check_print.c). */
void ng_gpu_check_print_text(const ng_gpu_check_result *c);

/* The options of the checks (gpu_check_table.c): epilog and prolog take --gpus,
 * health --from-nvidia-smi; each names the other's as belonging to it. */
enum {
	NG_CHECK_O_GPUS = NG_OPT_LONG, NG_CHECK_O_DEADLINE, NG_CHECK_O_KMSG, NG_CHECK_O_NO_KMSG,
	NG_CHECK_O_SINCE, NG_CHECK_O_LIBRARY, NG_CHECK_O_NO_STORE, NG_CHECK_O_SMI, NG_CHECK_O_LAND,
	NG_CHECK_O_SLURM_CONF, NG_CHECK_O_NODE, NG_CHECK_O_ROOT,
};
extern const struct ng_opt ng_check_job_opts[];
extern const struct ng_opt ng_check_health_opts[];

#endif

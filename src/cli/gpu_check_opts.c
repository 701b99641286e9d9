/* The options of `nodegate epilog`, `prolog` and `health` (and npd's
 * health check), the run through the flow layer (flow/gpu_check.c), and
 * the printing of its result. */
#include "cli/gpu_check.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config_error.h"
#include "cli/store_cli.h"
#include "flow/ctx.h"

/* What the command line asks for: the check's request, and how to print it. */
struct check_opts {
	const struct ng_cmd_entry *e;
	ng_gpu_check_request req;
	bool json;
	char why[512]; /* a mistake on the command line */
};

static int parse_seconds(const char *s, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A mistake on the command line: kept in c->why for ng_gpu_check_main,
 * which reports it as a configuration error (cli/config_error.h). */
static int opt_error(struct check_opts *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int opt_error(struct check_opts *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
	return NG_EXIT_USAGE;
}

static int parse_opts(struct check_opts *c, int argc, char **argv)
{
	const struct ng_cmd_entry *e = c->e;
	bool health = c->req.mode == NG_CHECK_HEALTH;
	struct ng_opt_parser op;
	ng_opt_begin_table(&op, e, health ? ng_check_health_opts : ng_check_job_opts, argc, argv);
	op.keep_errors = true; /* reported as a configuration error (cli/config_error.h) */
	int ch;
	while ((ch = ng_opt_next(&op)) != NG_OPT_END) {
		if (ch == NG_OPT_ERROR) {
			/* The other kind of check's option says whose it is. */
			const char *typed = argv[op.next - 1];
			if (health && strncmp(typed, "--gpus", 6) == 0 && (!typed[6] || typed[6] == '='))
				return opt_error(c, "--gpus is for epilog and prolog: health checks "
				                    "the whole node");
			if (!health && strncmp(typed, "--from-nvidia-smi", 17) == 0 &&
			    (!typed[17] || typed[17] == '='))
				return opt_error(c, "--from-nvidia-smi is for health: a saved dump is "
				                    "not a job's GPUs");
			return opt_error(c, "%s", op.why);
		}
		switch (ch) {
		case NG_OPT_EXIT: return op.status;
		case 'j': c->json = true; break;
		case NG_CHECK_O_GPUS: c->req.gpus = op.arg; break;
		case NG_CHECK_O_DEADLINE:
			if (parse_seconds(op.arg, 3600, &c->req.deadline_s) < 0 || c->req.deadline_s <= 0)
				return opt_error(c, "--deadline takes seconds, more than 0 and at most "
				                             "3600");
			break;
		case NG_CHECK_O_KMSG: c->req.kmsg_path = op.arg; break;
		case NG_CHECK_O_NO_KMSG: c->req.no_kmsg = true; break;
		case NG_CHECK_O_SINCE:
			if (parse_seconds(op.arg, 10 * 366 * 86400.0, &c->req.since_s) < 0)
				return opt_error(c, "--since takes seconds ago, 0 or more");
			break;
		case NG_CHECK_O_LIBRARY: c->req.nvml_library = op.arg; break;
		case 's': c->req.store = op.arg; break;
		case NG_CHECK_O_NO_STORE: c->req.no_store = true; break;
		case NG_CHECK_O_SMI: c->req.smi_file = op.arg; break;
		case NG_CHECK_O_LAND:
			if (strcmp(op.arg, "slurm") == 0)
				c->req.land_slurm = true;
			else if (strcmp(op.arg, "none") == 0)
				c->req.land_slurm = false;
			else
				return opt_error(c, "--land takes slurm or none");
			break;
		case NG_CHECK_O_SLURM_CONF: c->req.slurm_conf = op.arg; break;
		case NG_CHECK_O_NODE: c->req.node = op.arg; break;
		case NG_CHECK_O_ROOT: c->req.root = op.arg; break;
		}
	}
	if (op.next < argc)
		return opt_error(c, "unexpected argument \"%s\"", argv[op.next]);
	if (c->req.no_kmsg && c->req.kmsg_path)
		return opt_error(c, "--kmsg and --no-kmsg: use one or the other");
	if (c->req.land_slurm && c->req.smi_file)
		return opt_error(c, "--land slurm with --from-nvidia-smi: a saved dump is not "
		                             "this node's GPUs now; nothing would be drained");
	return -1;
}

/* A note from the flow (the --on-verdict program's failure): one line on
 * standard error, control characters escaped. */
static void note_to_stderr(void *arg, const char *verb, const char *fmt, va_list ap)
{
	(void)verb; /* the command's own name, for npd's run of health as for the rest */
	char text[512], prefix[64];
	vsnprintf(text, sizeof text, fmt, ap);
	snprintf(prefix, sizeof prefix, "nodegate %s: note: ", (const char *)arg);
	ng_cli_print_line(stderr, prefix, text);
}

/* The guard of a check whose configuration failed: never a drain. */
static int config_error(const struct ng_cli *cli, const struct check_opts *c, const char *kind,
                        const char *why)
{
	ng_config_guard g;
	bool npd = c->e == &ng_cmd_npd_entry; /* npd adds --no-store for the check, not for this */
	ng_config_guard_for_check(cli->store_spec, c->e->name, npd, c->req.store, c->req.no_store && !npd, &g);
	return ng_config_error(&g, kind, "%s", why);
}

int ng_gpu_check_main(struct ng_cli *cli, const struct ng_cmd_entry *e, ng_check_mode mode,
                      int argc, char **argv)
{
	struct check_opts c = {.e = e};
	ng_gpu_check_request_init(&c.req, mode);
	int rc = parse_opts(&c, argc, argv);
	/* Slurm drains the node on any non-zero Epilog or Prolog status: a
	 * mistake in the hook's command line must not drain the fleet. */
	if (rc == NG_EXIT_USAGE)
		return config_error(cli, &c, NG_CONFIG_OPTION, c.why);
	if (rc >= 0)
		return rc;
	ng_ctx ctx = {.policy = cli->policy, .store_spec = cli->store_spec,
	              .on_verdict = cli->on_verdict, .no_land = cli->no_land,
	              .note = note_to_stderr, .note_arg = (void *)e->name};
	ng_gpu_check_result *r;
	int ran = ng_gpu_check_run(&ctx, &c.req, &r);
	if (ran == NG_GPU_CHECK_NOMEM) {
		fprintf(stderr, "nodegate %s: out of memory: nothing checked\n", e->name);
		return NG_EXIT_OK;
	}
	if (ran == NG_GPU_CHECK_INPUT) {
		rc = config_error(cli, &c, NG_CONFIG_INPUT, ng_gpu_check_reason(r));
		ng_gpu_check_result_release(r);
		return rc;
	}
	if (c.json) {
		char *text = ng_gpu_check_json(r);
		printf("%s\n", text ? text : "null");
		free(text);
	} else {
		ng_gpu_check_print_text(r);
	}
	ng_gpu_check_tell(&ctx, r);
	rc = ng_gpu_check_exit_status(r);
	ng_gpu_check_result_release(r);
	/* A reader that went away (SIGPIPE is ignored: src/cli/main.c) is an
	 * output error, a note; the verdict's exit status stands. */
	if (fflush(stdout) == EOF || ferror(stdout))
		fprintf(stderr, "nodegate %s: note: the report could not be written to standard output "
		                "(%s); the exit status is the verdict's\n",
		        e->name, strerror(errno));
	return rc;
}

/* The options of `nodegate epilog`, `prolog` and `health` (and npd's
 * health check), the run through the flow layer (flow/gpu_check.c), and
 * the printing of its result. */
#include "cli/gpu_check.h"

#include <errno.h>
#include <getopt.h>
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
	enum { O_GPUS = 256, O_DEADLINE, O_KMSG, O_NO_KMSG, O_SINCE, O_LIBRARY, O_STORE, O_NO_STORE,
	       O_SMI, O_LAND, O_SLURM_CONF, O_NODE, O_ROOT };
	const struct option all[] = {
		{"gpus", required_argument, NULL, O_GPUS},
		{"deadline", required_argument, NULL, O_DEADLINE},
		{"kmsg", required_argument, NULL, O_KMSG},
		{"no-kmsg", no_argument, NULL, O_NO_KMSG},
		{"since", required_argument, NULL, O_SINCE},
		{"library", required_argument, NULL, O_LIBRARY},
		{"store", required_argument, NULL, O_STORE},
		{"no-store", no_argument, NULL, O_NO_STORE},
		{"from-nvidia-smi", required_argument, NULL, O_SMI},
		{"land", required_argument, NULL, O_LAND},
		{"slurm-conf", required_argument, NULL, O_SLURM_CONF},
		{"node", required_argument, NULL, O_NODE},
		{"root", required_argument, NULL, O_ROOT},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const struct ng_cmd_entry *e = c->e;
	int ch;
	opterr = 0; /* one message, ours, not getopt's as well */
	while ((ch = getopt_long(argc, argv, ":jh", all, NULL)) != -1) {
		switch (ch) {
		case 'h': ng_cmd_print_help(e, stdout); return NG_EXIT_OK;
		case 'j': c->json = true; break;
		case O_GPUS:
			if (c->req.mode == NG_CHECK_HEALTH)
				return opt_error(c, "--gpus is for epilog and prolog: health checks "
				                             "the whole node");
			c->req.gpus = optarg;
			break;
		case O_DEADLINE:
			if (parse_seconds(optarg, 3600, &c->req.deadline_s) < 0 || c->req.deadline_s <= 0)
				return opt_error(c, "--deadline takes seconds, more than 0 and at most "
				                             "3600");
			break;
		case O_KMSG: c->req.kmsg_path = optarg; break;
		case O_NO_KMSG: c->req.no_kmsg = true; break;
		case O_SINCE:
			if (parse_seconds(optarg, 10 * 366 * 86400.0, &c->req.since_s) < 0)
				return opt_error(c, "--since takes seconds ago, 0 or more");
			break;
		case O_LIBRARY: c->req.library = optarg; break;
		case O_STORE: c->req.store = optarg; break;
		case O_NO_STORE: c->req.no_store = true; break;
		case O_SMI:
			if (c->req.mode != NG_CHECK_HEALTH)
				return opt_error(c, "--from-nvidia-smi is for health: a saved dump is "
				                             "not a job's GPUs");
			c->req.smi_file = optarg;
			break;
		case O_LAND:
			if (strcmp(optarg, "slurm") == 0)
				c->req.land_slurm = true;
			else if (strcmp(optarg, "none") == 0)
				c->req.land_slurm = false;
			else
				return opt_error(c, "--land takes slurm or none");
			break;
		case O_SLURM_CONF: c->req.slurm_conf = optarg; break;
		case O_NODE: c->req.node = optarg; break;
		case O_ROOT: c->req.root = optarg; break;
		case ':': return opt_error(c, "%s needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return opt_error(c, "unknown option -%c (see nodegate %s --help)", optopt,
				                 e->name);
			return opt_error(c, "unknown option %s (see nodegate %s --help)", argv[optind - 1],
			                 e->name);
		}
	}
	if (optind < argc)
		return opt_error(c, "unexpected argument \"%s\"", argv[optind]);
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
	ng_config_guard_for_check(cli, c->e->name, npd, c->req.store, c->req.no_store && !npd, &g);
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

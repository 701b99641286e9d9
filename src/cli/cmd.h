/* The command table: one entry per verb, one cmd_<verb>.c per entry. */
#ifndef NODEGATE_CLI_CMD_H
#define NODEGATE_CLI_CMD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"
#include "core/json.h"
#include "core/json_file.h"
#include "core/policy.h"
#include "judge/record.h"
#include "core/strbuf.h"
#include "cli/options.h"
#include "flow/ctx.h"
#include "flow/gate_records.h"
#include "flow/records_in.h"

/* Exit statuses every verb shares. */
enum { NG_EXIT_OK = 0, NG_EXIT_NOT_ADMISSIBLE = 1, NG_EXIT_USAGE = 2, NG_EXIT_STORE = 3 };

struct ng_cmd_entry;

/* What a verb needs main to hold for it, as tmux's command entries say. A
 * store is opened only when the verb asks (ng_cli_store, cli/store_cli.h),
 * after its options: a usage error comes before a store error, and a
 * --store given to the verb names it. */
enum ng_cmd_needs {
	NG_CMD_NEEDS_NOTHING = 0,
	NG_CMD_NEEDS_STORE,          /* a store, made when it does not exist */
	NG_CMD_NEEDS_EXISTING_STORE, /* a store that must be there: it only reads or changes */
};

struct ng_cli {
	ng_policy policy;
	const char *prog;
	const char *store_spec; /* the global --store, or NULL */
	const char *on_verdict; /* the global --on-verdict: a program told of each verdict */
	bool no_land;           /* report only: change no scheduler state, run no hook (npd) */
	const struct ng_cmd_entry *cmd; /* the verb main runs */
	ng_store *store;        /* its store once opened (ng_cli_store); main closes it */
	/* The store it needs: its entry's; a subcommand or an option that
	 * differs (baseline build, fabric --expect-busbw) sets it before
	 * ng_cli_store. */
	enum ng_cmd_needs needs;
};

struct ng_cmd_entry {
	const char *name;
	const char *usage;   /* arguments after the verb */
	const char *summary; /* one line for `nodegate --help` */
	const char *help;    /* the rest of `nodegate VERB --help`, before its options */
	const struct ng_opt *opts; /* the verb's options (cli/options.h): parsing and --help */
	const char *help_tail;     /* after the Options section: examples, exit status */
	int (*exec)(struct ng_cli *cli, int argc, char **argv);
	enum ng_cmd_needs needs;
};

extern const struct ng_cmd_entry ng_cmd_gate_entry;
extern const struct ng_cmd_entry ng_cmd_parse_entry;
extern const struct ng_cmd_entry ng_cmd_run_entry;
extern const struct ng_cmd_entry ng_cmd_probe_entry;
extern const struct ng_cmd_entry ng_cmd_identity_entry;
extern const struct ng_cmd_entry ng_cmd_policy_entry;
extern const struct ng_cmd_entry ng_cmd_verdicts_entry;
extern const struct ng_cmd_entry ng_cmd_admit_entry;
extern const struct ng_cmd_entry ng_cmd_ingest_entry;
extern const struct ng_cmd_entry ng_cmd_baseline_entry;
extern const struct ng_cmd_entry ng_cmd_quarantine_entry;
extern const struct ng_cmd_entry ng_cmd_release_entry;
extern const struct ng_cmd_entry ng_cmd_override_entry;
extern const struct ng_cmd_entry ng_cmd_fleet_entry;
extern const struct ng_cmd_entry ng_cmd_floors_entry; /* cmd_floors.c */
extern const struct ng_cmd_entry ng_cmd_audit_entry;
extern const struct ng_cmd_entry ng_cmd_epilog_entry;
extern const struct ng_cmd_entry ng_cmd_prolog_entry;
extern const struct ng_cmd_entry ng_cmd_health_entry;
extern const struct ng_cmd_entry ng_cmd_scenarios_entry;
extern const struct ng_cmd_entry ng_cmd_selftest_entry;
extern const struct ng_cmd_entry ng_cmd_metrics_entry;
extern const struct ng_cmd_entry ng_cmd_kube_entry;
extern const struct ng_cmd_entry ng_cmd_npd_entry;
extern const struct ng_cmd_entry ng_cmd_report_entry; /* cmd_report.c */
extern const struct ng_cmd_entry ng_cmd_fabric_entry; /* cmd_fabric.c */
extern const struct ng_cmd_entry ng_cmd_gpus_entry;   /* cmd_gpus.c */

/* A verb made of subcommands ("baseline build", "audit verify"). */
struct ng_subcmd {
	const char *name;
	int (*fn)(struct ng_cli *cli, int argc, char **argv); /* argv[0] is the subcommand */
};

/* util.c */
/* Runs the subcommand argv[1] names; help for --help, -h or "help"; a usage
 * error naming the choices otherwise. */
int ng_cmd_dispatch(const struct ng_cmd_entry *e, const struct ng_subcmd *subs, size_t n,
                    struct ng_cli *cli, int argc, char **argv);
int ng_cmd_usage_error(const struct ng_cmd_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ng_cmd_print_help(const struct ng_cmd_entry *e, FILE *out);
/* Parses a verb whose only options are --json and --help. Returns -1 to go
 * on, or the exit status to return (help printed, or a usage error). */
int ng_cmd_json_option(const struct ng_cmd_entry *e, int argc, char **argv, bool *json);
/* ng_self_path, ng_shipped_path: flow/install_tree.h. */
/* ng_read_file, ng_load_json_file: core/json_file.h. */
/* Clearing SLURM_* for the runs a verb starts: ng_env_unset_prefix
 * (flow/testing/test_env.h). */
/* Reading a policy file: ng_policy_load_file (core/policy_file.h). */
/* s as one shell word for a command suggested in a message (`nodegate
 * release 'x;touch y'`), control characters escaped (core/strbuf.h), in out
 * (NG_SHELL_WORD_MAX holds any node or class name). */
/* (NG_SHELL_WORD_MAX: core/strbuf.h, ng_shell_word) */
/* prefix, then s with its control characters escaped, then a newline: a
 * message that carries a name from outside cannot forge a line. */
void ng_cli_print_line(FILE *out, const char *prefix, const char *s);
const char *ng_cli_shell_word(const char *s, char out[NG_SHELL_WORD_MAX]);
/* ng_json_add_number: core/json.h. */
/* gate_report.c: a verdict with its arithmetic, as text or one JSON line. */
void ng_report_gate_explain(FILE *out, const char *label, const ng_gate_input *in,
                            const ng_gate_trace *t, const ng_policy *pol);
void ng_report_gate_json(FILE *out, const char *label, const ng_gate_trace *t);
/* record_table.c: a readable view of an array of records. */
void ng_print_record_table(FILE *out, const cJSON *records);
/* ng_record_measured: flow/gate_records.h. */
/* emit_records.c: show, keep and judge a measuring verb's records. */
struct ng_emit_opts {
	const char *baseline_path; /* judge with the gate when set */
	const char *cohort;        /* --cohort-drops, as text */
	const char *out_path;      /* also write the records there */
	bool explain, json;
};
int ng_emit_records(struct ng_cli *cli, const struct ng_cmd_entry *cmd, cJSON *records,
                    const struct ng_emit_opts *o);
/* ng_apply_diag_file: flow/records_in.h. */
/* Runs the gate's batch mode (cmd_gate_batch.c). */
int ng_gate_batch(struct ng_cli *cli, FILE *in, FILE *out);

/* cli_ctx.c: the flow layer's context for a verb (flow/ctx.h): cli's policy,
 * store st (may be NULL), --on-verdict and landing, the actor, and the
 * flow's notes on standard error as "nodegate VERB: ...". */
void ng_cli_ctx(const struct ng_cli *cli, ng_store *st, ng_ctx *out);

#endif

/* Landing on Slurm: draining a node with a reason that names what failed,
 * and resuming it, through scontrol (collect/spawn.h: an argv, never a
 * shell; every call under a timeout; retries while slurmctld cannot be
 * reached, within a total budget, never forever).
 *
 * Its promises:
 *  - an operator's drain is never touched: a node drained or down with a
 *    reason that does not start "nodegate:" keeps its reason (drain leaves
 *    it alone) and its state (resume refuses);
 *  - draining is State=DRAIN (running jobs finish), never DOWN;
 *  - every reason starts "nodegate: ", holds no control characters and is
 *    at most NG_SLURM_REASON_MAX bytes;
 *  - what scontrol said is not taken on trust: the node's state is read back
 *    and out->changed says whether it really changed.
 *
 * It never measures: the caller says what to land (DESIGN.md, src/land/). */
#ifndef NODEGATE_LAND_SLURM_H
#define NODEGATE_LAND_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define NG_SLURM_REASON_PREFIX "nodegate: "
#define NG_SLURM_REASON_MAX 200 /* bytes, prefix included */
#define NG_SLURM_NODE_MAX 64
#define NG_SLURM_DEFAULT_CALL_TIMEOUT_S 10.0
#define NG_SLURM_DEFAULT_BUDGET_S 30.0
#define NG_SLURM_DEFAULT_READBACK_S 5.0
#define NG_SLURM_OPERATOR_DRAIN "already drained by an operator: left alone"

typedef struct {
	const char *scontrol;   /* NULL: $NODEGATE_SCONTROL, else "scontrol" on PATH */
	const char *slurm_conf; /* NULL: SLURM_CONF as inherited (if any) */
	const char *node;       /* NULL: $SLURMD_NODENAME, else the short hostname */
	double call_timeout_s;  /* one scontrol call; 0: 10 s */
	double budget_s;        /* all retries of one step while slurmctld is unreachable; 0: 30 s */
	double readback_s;      /* how long to wait for the state to show; 0: 5 s */
	/* resume only a drain whose reason starts with this (NULL: any of
	 * nodegate's): releasing a quarantine case must not resume a node a GPU
	 * health check drained */
	const char *resume_prefix;
	/* CLOCK_MONOTONIC seconds by which every call, retry and read-back is
	 * over, scontrol killed if need be (0: none; the budgets above alone).
	 * An epilog's landing shares the check's one deadline. */
	double deadline;
} ng_slurm_opts;

typedef struct {
	char node[NG_SLURM_NODE_MAX + 1];
	char reason[NG_SLURM_REASON_MAX + 1]; /* the sanitized reason sent (drain) */
	char state_before[64], reason_before[256];
	char state_after[64], reason_after[256];
	bool acted;      /* an update was sent to slurmctld */
	bool changed;    /* read back: the node's state really changed as asked */
	bool left_alone; /* an operator's drain: not overwritten, not resumed */
	int calls;       /* scontrol calls made, retries included */
	char message[512]; /* one line: what happened */
} ng_slurm_result;

/* Drains o->node (see ng_slurm_opts) with State=DRAIN and the reason
 * (sanitized, "nodegate: " put in front when it lacks it). Returns 0 when
 * the node reads drained by nodegate afterwards (out->changed says whether
 * this call changed it), 1 when it was left alone (an operator's drain or
 * down), -1 when it could not be done or the read-back does not show it
 * (err and out->message say why). */
int ng_slurm_drain(const ng_slurm_opts *o, const char *reason, ng_slurm_result *out,
                   ng_err *err);

/* Resumes the node, only when nodegate drained it (its reason starts
 * "nodegate:"). Returns 0 when it is not drained afterwards (out->changed:
 * this call resumed it; a node that was not drained is 0 with nothing
 * done), 1 when refused (an operator's drain, or a node down), -1 on
 * failure, as for drain. */
int ng_slurm_resume(const ng_slurm_opts *o, ng_slurm_result *out, ng_err *err);

/* The reason as it would be sent: prefix, no control characters (each run of
 * them and of spaces becomes one space), printable ASCII only ('?' for other
 * bytes), at most NG_SLURM_REASON_MAX bytes ("..." marks a cut). */
void ng_slurm_sanitize_reason(const char *in, char out[NG_SLURM_REASON_MAX + 1]);

/* The node name landing would use: o->node, $SLURMD_NODENAME or the short
 * hostname. -1 (err set) when there is none or it is not a plain node name
 * (letters, digits, '.', '-', '_'; no lists or ranges). */
int ng_slurm_node_name(const ng_slurm_opts *o, char out[NG_SLURM_NODE_MAX + 1], ng_err *err);

/* Parses one line of `scontrol show node NODE -o` (or the multi-line form):
 * the State= and Reason= values (the reason without its "[user@time]"
 * stamp; "" when none). Returns 0, or -1 when there is no State=. */
int ng_slurm_parse_node(const char *text, char *state, size_t state_len, char *reason,
                        size_t reason_len);

/* About a parsed state: drained or draining (the DRAIN flag); down or
 * failing; not responding ('*' or NOT_RESPONDING: the moment after RESUME). */
bool ng_slurm_state_drain(const char *state);
bool ng_slurm_state_down(const char *state);
bool ng_slurm_state_not_responding(const char *state);
/* A reason nodegate set. */
bool ng_slurm_reason_ours(const char *reason);

/* The result as a JSON object text for the audit log (free() it): node,
 * action, before, after, changed, left_alone, calls, message. NULL when out
 * of memory. */
char *ng_slurm_result_json(const ng_slurm_result *r, const char *action);

#endif

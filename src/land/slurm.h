/* Landing on Slurm: draining a node with a reason that names what failed,
 * and resuming it, through scontrol (collect/spawn.h: an argv, never a
 * shell; every call under a timeout; retries while slurmctld cannot be
 * reached, within a total budget, never forever).
 *
 * Its promises:
 *  - an operator's drain is never touched: a node drained or down with a
 *    reason that is not nodegate's (ng_slurm_reason_ours) keeps its reason
 *    (drain leaves it alone) and its state (resume refuses);
 *  - draining is State=DRAIN (running jobs finish), never DOWN;
 *  - every reason starts "ng:" and its first 20 characters (what `sinfo -R`
 *    shows) say the severity and what failed ("ng:fatal ecc GPU0 ..."); it
 *    ends " [nodegate]", holds no control characters and is at most
 *    NG_SLURM_REASON_MAX bytes;
 *  - what scontrol said is not taken on trust: the node's state is read back
 *    and out->changed says whether it really changed.
 *
 * It never measures: the caller says what to land (DESIGN.md, src/land/). */
#ifndef NODEGATE_LAND_SLURM_H
#define NODEGATE_LAND_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define NG_SLURM_REASON_PREFIX "ng:"
#define NG_SLURM_REASON_MARK " [nodegate]"
#define NG_SLURM_LEGACY_PREFIX "nodegate:" /* reasons set before the short form */
#define NG_SLURM_REASON_MAX 200 /* bytes, prefix included */
#define NG_SLURM_NODE_MAX 64
#define NG_SLURM_DEFAULT_CALL_TIMEOUT_S 10.0
#define NG_SLURM_DEFAULT_BUDGET_S 30.0
#define NG_SLURM_DEFAULT_READBACK_S 5.0
#define NG_SLURM_OPERATOR_DRAIN "already drained by an operator: left alone"

/* Slurm drains a node whose Epilog or Prolog exits non-zero, with its own
 * reason ("Epilog error", "Prolog error"). Such a drain is nodegate's only
 * when the caller's store shows a nodegate epilog (prolog) run there that
 * exited 1 right before the drain's stamp: the caller answers. reason is
 * "Epilog error" or "Prolog error", stamp the drain's time (unix seconds). */
typedef bool (*ng_slurm_hook_drain_fn)(const char *reason, long long stamp, void *arg);

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
	/* resume only this quarantine case's drain (ng_slurm_reason_of_case); 0: any */
	long long resume_case;
	/* NULL: Slurm's own Epilog/Prolog error drain is an operator's, as any
	 * reason nodegate did not set */
	ng_slurm_hook_drain_fn hook_drain_ours;
	void *hook_arg;
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
	bool hook_drain; /* Slurm's drain after nodegate's epilog/prolog exited 1: nodegate's */
	long long stamp_before; /* the reason's [user@time] as unix seconds; 0 none */
	int calls;       /* scontrol calls made, retries included */
	char message[512]; /* one line: what happened */
} ng_slurm_result;

/* Drains o->node (see ng_slurm_opts) with State=DRAIN and the reason
 * (sanitized: "ng:" in front and " [nodegate]" at the end). Returns 0 when
 * the node reads drained by nodegate afterwards (out->changed says whether
 * this call changed it), 1 when it was left alone (an operator's drain or
 * down), -1 when it could not be done or the read-back does not show it
 * (err and out->message say why). */
int ng_slurm_drain(const ng_slurm_opts *o, const char *reason, ng_slurm_result *out,
                   ng_err *err);

/* Resumes the node, only when nodegate drained it (ng_slurm_reason_ours). Returns 0 when it is not drained afterwards (out->changed:
 * this call resumed it; a node that was not drained is 0 with nothing
 * done), 1 when refused (an operator's drain, or a node down), -1 on
 * failure, as for drain. */
int ng_slurm_resume(const ng_slurm_opts *o, ng_slurm_result *out, ng_err *err);

/* The reason as it would be sent: "ng:" (in place of a "nodegate:" or "ng:"
 * the text starts with), no control characters (each run of them and of
 * spaces becomes one space), printable ASCII only ('?' for other bytes), cut
 * ("..." marks it) so that with " [nodegate]" after it, it is at most
 * NG_SLURM_REASON_MAX bytes. */
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

#define NG_SLURM_HOOK_DRAIN_WINDOW_S 120 /* PrologEpilogTimeout's 60 s, and margin */

/* The rule behind hook_drain_ours, from what the store keeps of the node's
 * newest GPU check: "Epilog error" (or "Prolog error") stamped within
 * NG_SLURM_HOOK_DRAIN_WINDOW_S after a nodegate epilog (prolog) there that
 * drained, i.e. exited 1. Anything else is not nodegate's. */
bool ng_slurm_hook_drain_is_ours(const char *reason, long long stamp, const char *last_mode,
                                 bool last_drained, long long last_at);

/* The time in the "[user@YYYY-MM-DDTHH:MM:SS]" stamp Slurm puts after a
 * node's Reason= (slurmctld's local time), as unix seconds. 0 with *at set,
 * -1 when there is none. */
int ng_slurm_parse_stamp(const char *text, long long *at);

/* About a parsed state: drained or draining (the DRAIN flag); down or
 * failing; not responding ('*' or NOT_RESPONDING: the moment after RESUME). */
bool ng_slurm_state_drain(const char *state);
bool ng_slurm_state_down(const char *state);
bool ng_slurm_state_not_responding(const char *state);
/* A reason nodegate set: "ng:" ... " [nodegate]", or the older
 * "nodegate: ..." form. */
bool ng_slurm_reason_ours(const char *reason);
/* A reason nodegate set for quarantine case case_id ("ng:quarantine ...
 * case N: ..." or the older "nodegate: quarantined case N: ..."). */
bool ng_slurm_reason_of_case(const char *reason, long long case_id);

/* Runs `scontrol ARGS...` (at most 6) for o->node as drain and resume do:
 * the same program, SLURM_CONF, timeouts, retries while slurmctld is
 * unreachable, and deadline; out->node is the node's name and out->calls
 * counts the calls. 0: it exited 0 and *text holds its standard output
 * (free() it); 1: it failed and why says how; -1: nodegate failed (err). */
int ng_slurm_scontrol(const ng_slurm_opts *o, const char *const *args, size_t n_args,
                      ng_slurm_result *out, char **text, char *why, size_t why_len, ng_err *err);

/* The result as a JSON object text for the audit log (free() it): node,
 * action, before, after, changed, left_alone, calls, message. NULL when out
 * of memory. */
char *ng_slurm_result_json(const ng_slurm_result *r, const char *action);

#endif

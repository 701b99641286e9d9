/* The quarantine cases as an operator reads them (`nodegate quarantine`):
 * each case with its probation and its node's lemon verdict, and one case
 * found the way an operator names it, with the evidence its run captured. */
#ifndef NODEGATE_FLOW_QUARANTINE_CASES_H
#define NODEGATE_FLOW_QUARANTINE_CASES_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "flow/ctx.h"
#include "judge/lemon.h"
#include "store/probation.h"
#include "store/store.h"

/* One case and what its probation and lemon verdict add to it. */
typedef struct {
	ng_store_case c;
	ng_store_probation probation;
	bool has_probation;
	const ng_lemon_verdict *lemon; /* list: the node's verdict (in the list's lemons), or NULL */
} ng_case_view;

typedef struct {
	ng_case_view *cases; /* newest first */
	size_t n;
	char (*lemon_nodes)[256]; /* every node with a case, and its verdict */
	ng_lemon_verdict *lemons;
	size_t n_lemons;
} ng_case_list;

/* The open cases (all: closed ones too), in ctx's store at ctx's clock. 0,
 * or -1 with err (NG_ERR_STORE, NG_ERR_INTERNAL when out of memory).
 * Release *out with ng_case_list_release. */
int ng_case_list_read(const ng_ctx *ctx, bool all, ng_case_list *out, ng_err *err);
void ng_case_list_release(ng_case_list *l);

/* One case, whole. */
typedef struct {
	ng_case_view view;
	ng_lemon_verdict lemon; /* the case's node's verdict now */
	cJSON *captured;        /* what the collectors captured for the case's run (an array) */
} ng_case_detail;

/* The case arg names: NODE (its stable id or scheduler name) means its open
 * case, else its newest one; a number that names no node is a case ID. 1
 * found (*out set; release it with ng_case_detail_release), 0 none, -1
 * with err: NG_ERR_USAGE when arg names two nodes, NG_ERR_STORE. */
int ng_case_find(const ng_ctx *ctx, const char *arg, ng_case_detail *out, ng_err *err);
void ng_case_detail_release(ng_case_detail *d);

/* "open", "probation" (closed, its probation still in force) or "closed". */
const char *ng_case_state(const ng_case_view *v);

/* What releases a case next. */
typedef enum {
	NG_CASE_NEXT_NONE,        /* closed already */
	NG_CASE_NEXT_FORCE,       /* a lemon: a forced release after the repair */
	NG_CASE_NEXT_RELEASE,     /* the condition holds: a release releases it */
	NG_CASE_NEXT_MORE_PASSES, /* *more passing runs of the failed test first */
} ng_case_next_step;

/* The next step of case c of node's lemon verdict, with passes_needed
 * passing runs needed (*more set for NG_CASE_NEXT_MORE_PASSES). */
ng_case_next_step ng_case_next(const ng_store_case *c, const ng_lemon_verdict *lemon,
                               long passes_needed, int64_t *more);

/* ---- as JSON (quarantine_cases_json.c): what `nodegate quarantine --json` prints */

/* {"cases": [...]}: each case (id, node, node_name, state, class, software,
 * domain, metric, opened_at, release_condition, passes of passes_needed,
 * retries, closed_at/by/reason), its probation and its node's repeat
 * verdict; the recorded evidence is left to the detail. */
cJSON *ng_case_list_json(const ng_case_list *l, long passes_needed);
/* One case as the list gives it, with its recorded evidence, what its run
 * captured of the failing domain and what that evidence says. */
cJSON *ng_case_detail_json(const ng_case_detail *d, long passes_needed);

#endif

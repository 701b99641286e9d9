/* The nvbandwidth parser's own types, shared by its parts: nvbandwidth.c
 * (helpers, invocations, the walk over the input, the entry),
 * nvbandwidth_text.c (matrices and the text format), nvbandwidth_json.c (the
 * -j JSON) and nvbandwidth_records.c (records out). Not for use outside
 * src/parse/nvbandwidth*.c. */
#ifndef NODEGATE_PARSE_NVBANDWIDTH_INT_H
#define NODEGATE_PARSE_NVBANDWIDTH_INT_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "core/json.h"
#include "core/metric.h"
#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

#define NVB_NAME_MAX 96     /* longest testcase name we accept (the longest known has 56) */
#define NVB_STR_MAX 400     /* longest message kept in a record */
#define NVB_FIELDS_MAX 4096 /* widest matrix row, in fields */
#define NVB_JSON_TRIES 64   /* failed JSON parse attempts per input, so crafted input stays linear */
#define NVB_LIST_MAX 256    /* testcase names kept from --list output */
#define NVB_KEEP_MAX 16     /* warnings, errors, list names... kept per invocation beyond this are counted */

/* The name of the record for an invocation as a whole: the --list output, a
 * usage text, testcases the text output waives without naming them, or
 * errors not tied to any testcase. No testcase has this name. */
#define NVB_RUN_METRIC "nvbandwidth.run"

/* ---- the parse state ------------------------------------------------------ */

enum mstate { M_NONE, M_HEADER, M_ROWS, M_ENDED };

struct mtx {
	enum mstate state;
	cJSON *obj, *values, *row_labels;
	size_t ncols, nrows;
	size_t header_len, label_w; /* for rows whose wide cells touch (setw(10) with 10 digits) */
	bool bad;
	size_t n, nna;
	double min, max, sum, sumabs;
};

struct run {
	cJSON *obj; /* in its record's detail.runs; NULL when no run is open */
	char name[NVB_NAME_MAX + 1];
	bool done, multi;
	struct mtx m;
};

struct inv {
	cJSON *recs; /* testcase records, in the order nvbandwidth named them */
	cJSON *info; /* what the invocation printed about itself */
	size_t start;
	bool json, list, usage, unparsed;
	int unnamed_waived, orphan_verify, listed;
	int cmd_verify; /* from an echoed command line: 1 verification on, -1 skipped, 0 not shown */
	cJSON *errors, *warnings, *devices, *list_names;
};

struct ctx {
	const char *text;
	size_t len;
	ng_run_status st;
	struct inv **invs;
	size_t ninv, capinv;
	struct inv *cur;     /* where text lines go */
	struct inv *orphans; /* where lines outside any text invocation go, when JSON is near */
	int pending_cmd;     /* an echoed command line waiting for its invocation (as cmd_verify) */
	char pending_line[NVB_STR_MAX + 1];
	struct run run;
	ng_span *fields;
	bool oom;
	bool json_unparsed;
};

/* nvbandwidth.c */
cJSON *nvb_track(struct ctx *c, cJSON *v);
void nvb_add_item(struct ctx *c, cJSON *obj, const char *key, cJSON *v);
void nvb_push(struct ctx *c, cJSON *arr, cJSON *v);
void nvb_add_num(struct ctx *c, cJSON *obj, const char *key, double v);
cJSON *nvb_str_item(ng_span s);
void nvb_add_str(struct ctx *c, cJSON *obj, const char *key, ng_span s);
void nvb_keep(struct ctx *c, cJSON *arr, ng_span s);
bool nvb_valid_name(ng_span s);
void nvb_copy_name(char *dst, ng_span s);
bool nvb_span_ends_with(ng_span s, const char *lit);
size_t nvb_span_find(ng_span s, const char *lit);
size_t nvb_verify_count(ng_span s);
bool nvb_error_line(ng_span t);
bool nvb_warning_line(ng_span t);
ng_span nvb_key_base(ng_span key, bool *final, bool *part);
bool nvb_echo_line(ng_span t, bool *skip);
struct inv *nvb_inv_new(struct ctx *c, size_t start, bool json);
cJSON *nvb_rec_for(struct ctx *c, struct inv *v, const char *name);
cJSON *nvb_run_new(struct ctx *c, cJSON *rec);
void nvb_run_problem(struct ctx *c, cJSON *run, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void nvb_run_verify(struct ctx *c, cJSON *run, ng_span msg);
double nvb_run_wrong(const cJSON *run);

/* nvbandwidth_text.c */
void nvb_mtx_stats_reset(struct mtx *m);
void nvb_mtx_cell(struct ctx *c, struct mtx *m, cJSON *row, const double *v);
void nvb_mtx_finish(struct ctx *c, struct mtx *m);
void nvb_parse_title(struct ctx *c, cJSON *m, ng_span title);
cJSON *nvb_matrix_new(struct ctx *c, cJSON *run);
bool nvb_sum_agrees(double sum, const struct mtx *m, bool json);
void nvb_run_close(struct ctx *c, const char *why);
bool nvb_take_echo(struct ctx *c, ng_span t);
void nvb_text_line(struct ctx *c, ng_span line, size_t at);

/* nvbandwidth_json.c */
void nvb_json_side_message(struct ctx *c, struct inv *v, ng_span t, bool from_error_key);
void nvb_json_doc(struct ctx *c, const cJSON *nvb, size_t start);
bool nvb_json_start(const char *p, const char *end);

/* nvbandwidth_records.c */
cJSON *nvb_emit(struct ctx *c);

#endif

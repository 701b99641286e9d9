/* The dcgmi parser's own types, shared by its parts: dcgmi.c (strings, test
 * names, statuses, foreign lines and the entry), dcgmi_json.c (the -j JSON),
 * dcgmi_text.c (the boxed text table) and dcgmi_outcome.c (the diag map, DCGM's
 * own faults and who is told). Not for use outside src/parse/dcgmi*.c. */
#ifndef NODEGATE_PARSE_DCGMI_INT_H
#define NODEGATE_PARSE_DCGMI_INT_H

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse/parse.h"
#include "core/json.h"
#include "core/record_build.h"
#include "core/strbuf.h"
#include "parse/launcher.h"
#include "parse/text.h"

/* dcgmi wraps warning and info text at this many characters per table row
 * (DATA_INFO_TAG_LEN in dcgmi/Diag.cpp), mid-word. */
#define CHUNK 45
#define MAX_MESSAGES 64        /* foreign lines kept in detail.messages */
#define MAX_MESSAGE_LEN 1024   /* bytes kept of one foreign line */
#define MAX_PROBLEMS 32        /* unreadable parts listed in detail.problems */
#define MAX_JSON_CANDIDATES 16 /* lines starting with '{' tried as the JSON */
#define MAX_GPUS 256
#define MAX_COPY_DEPTH 32

enum rank { R_PASS, R_SKIP, R_FAIL };
extern const char *const dg_rank_names[]; /* by enum rank */

/* dcgmErrorSeverity_t and dcgmErrorCategory_t (dcgm_errors.h), for people
 * reading the record: the numbers are kept as printed. */
enum { SEV_ISOLATE = 2, SEV_CONFIG = 5 };

struct dcgm {
	cJSON *rec, *detail, *tests, *messages, *problems;
	size_t n_messages, n_dropped, n_problems, n_nonblank;
	ng_span first_line; /* the first foreign line, for the reason */
	bool runtime_error;
	long long gpus[MAX_GPUS];
	size_t n_gpus;
};

enum found { F_NONE, F_FOUND, F_BROKEN };

struct summary {
	cJSON *map; /* test name -> worst status */
	int n_tests, n_fail;
	int n_harness;    /* Fail results that are DCGM's own fault */
	bool isolate;     /* a failing result carries severity ISOLATE */
	bool config_only; /* every failure is the node's configuration */
	bool config_coded; /* ... and DCGM coded every one severity CONFIG */
	const char *config_what; /* the configuration a failure names, or NULL */
	ng_strbuf failed, skipped, passed, harness;
};

struct verdict {
	const char *outcome; /* "node", "harness", "clean" */
	ng_strbuf reason;
};

/* dcgmi.c */
char *dg_clean_copy(const char *s, size_t n);
cJSON *dg_json_str(const char *s, size_t n);
cJSON *dg_json_span(ng_span s);
void dg_append(cJSON *arr, cJSON *item);
bool dg_span_ieq(ng_span s, const char *lit);
cJSON *dg_copy_clean(const cJSON *v, int depth);
cJSON *dg_child_array(cJSON *obj, const char *key);
void dg_problem(struct dcgm *c, const char *fmt, ...);
enum rank dg_map_status(ng_span raw, bool *known);
int dg_rank_of(const cJSON *status);
const char *dg_label_of(const cJSON *obj, const char *key);
void dg_set_status(struct dcgm *c, cJSON *test, cJSON *obj, ng_span raw);
cJSON *dg_test_new(struct dcgm *c, ng_span display, const char *category);
void dg_note_gpu(struct dcgm *c, long long id);
cJSON *dg_test_entity(struct dcgm *c, cJSON *test, ng_span group, long long id, ng_span raw_label);
bool dg_entity_has_warning(const cJSON *test, const char *text);
void dg_add_warning_text(cJSON *target, ng_span text);
void dg_add_info_text(cJSON *target, ng_span text);
void dg_add_message(struct dcgm *c, ng_span t);

/* dcgmi_json.c */
void dg_set_detail_once(struct dcgm *c, const char *key, cJSON *v);
void dg_read_json(struct dcgm *c, const cJSON *doc);
enum found dg_find_json(const char *text, size_t len, cJSON **doc, size_t *start, size_t *end,
                            char *why, size_t why_len);

/* dcgmi_text.c */
int dg_read_text(struct dcgm *c, const char *text, size_t len, int *closed);

/* dcgmi_outcome.c */
void dg_summarise(struct dcgm *c, struct summary *s);
bool dg_diag_allowed(ng_run_status st, const struct summary *s);
int dg_cmp_ll(const void *a, const void *b);
void dg_decide(struct dcgm *c, ng_run_status st, const struct summary *s, bool readable,
                   const char *unreadable, struct verdict *v);

#endif

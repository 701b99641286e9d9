/* The nccl-tests parser's own types, shared by its parts: nccl_tests.c (the
 * entry, helpers and runs), nccl_tests_text.c (the text table and the lines
 * around it), nccl_tests_json.c (the -J report) and nccl_tests_records.c
 * (from runs to records). Not for use outside src/parse/nccl_tests*.c. */
#ifndef NODEGATE_PARSE_NCCL_TESTS_INT_H
#define NODEGATE_PARSE_NCCL_TESTS_INT_H

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse/parse.h"
#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

#define NT_MAX_FIELDS 64
#define NT_MAX_MESSAGES 32
#define NT_MAX_NOTES 16
#define NT_MAX_TABLE 4096
#define NT_MAX_STR 240
#define NT_TAG NG_LAUNCH_TAG

/* What a run has seen so far; deciding whether a line starts a new run. */
enum {
	F_VERSION = 1 << 0,
	F_START = 1 << 1,
	F_PARAMS = 1 << 2,
	F_DEVICES = 1 << 3,
	F_LAYOUT = 1 << 4,
	F_ROWS = 1 << 5,
	F_OOB = 1 << 6,
	F_AVG = 1 << 7,
	F_CONCLUDED = 1 << 8,
	F_USAGE = 1 << 9,
	F_JSON = 1 << 10,
};
#define F_ALL 0x7ffu
/* Once a run has any of these, a header line belongs to the next run. */
#define F_TABLE_DONE (F_OOB | F_AVG | F_CONCLUDED | F_USAGE | F_JSON)

enum nt_wrong { NT_W_NONE, NT_W_NA, NT_W_NUM };

typedef struct {
	bool present; /* the half was printed at all */
	bool has_time, has_algbw, has_busbw;
	double time, algbw, busbw;
	enum nt_wrong wrong_kind;
	double wrong;
} nt_half;

typedef struct {
	double size;
	char type[24], redop[24]; /* "" when not printed */
	bool has_root;
	long long root;
	bool table_start; /* first row under a column header */
	nt_half oop, ip;
	cJSON *detail; /* the row as kept in the record */
} nt_row;

/* Where each column sits, read off the column header. */
typedef struct {
	bool known;
	bool pre_redop, pre_root;
	int nhalf; /* columns in each of the two halves */
	int h_algbw, h_busbw, h_wrong, h_imin, h_imax, h_ip99, h_icv, h_bitdiff;
	bool wrong_is_error; /* <= v2.11: a maximum relative error, not a count */
	bool cputime, per_iter;
	int ntrail; /* fields after the halves; a -S timestamp is two */
	bool timestamp;
} nt_layout;

typedef struct {
	unsigned seen;
	bool is_json;
	char tag[NT_TAG]; /* launcher label, "" when none */
	char version[32], git[24];
	long long nccl_lib, nccl_hdr; /* NCCL_VERSION_CODE, -1 unknown */
	char nccl_info[32];           /* "NCCL INFO NCCL version X" */
	char program[64], collective[48];
	const char *collective_source;
	int usage;            /* times the usage text was printed */
	char usage_why[200];  /* the option it refused, as it was said */
	char arg_error[200];  /* "invalid size specified for 'minbytes'" */
	int validation;       /* -1 unknown */
	cJSON *params, *devices, *messages, *notes, *json_meta, *argv;
	nt_layout layout;
	bool table_pending;
	nt_row *rows;
	size_t nrows, caprows;
	long long oob;
	char oob_status[12];
	double avg;
	bool avg_is_number;
	char avg_check[12];
	bool has_reduced;
	long long reduced_max;
	char json_path[200];
} nt_run;

/* Lines kept back for the next run of a stream (printed before it starts). */
typedef struct {
	char program[64];
	char json_path[200];
	char nccl_info[32];
	cJSON *messages;
} nt_pending;

typedef struct {
	nt_run *runs;
	size_t nruns, cap;
	cJSON *orphans; /* error lines no run claimed */
	ng_run_status st;
	cJSON **usage_rec; /* per run: the usage record it produced */
	bool oom;
} nt_ctx;

/* nccl_tests.c */
void nt_copy_clean(ng_span s, char *dst, size_t cap);
cJSON *nt_span_str(ng_span s);
void nt_put(cJSON *obj, const char *key, cJSON *item);
void nt_push(cJSON *arr, cJSON *item);
void nt_put_num(cJSON *obj, const char *key, bool has, double v);
void nt_push_capped(cJSON *arr, ng_span s, int max);
int nt_cell(ng_span s, double *v);
bool nt_is_word(ng_span s, size_t max);
bool nt_span_int_signed(ng_span s, long long *out);
ng_span nt_after_colon(ng_span s);
void nt_nccl_version_str(long long code, char *buf, size_t cap);
bool nt_program_from_token(ng_span tok, char *prog, size_t pcap, char *coll, size_t ccap);
void nt_layout_default(nt_layout *l);
nt_run *nt_new_run(nt_ctx *c, const char *tag, nt_pending *pend);
nt_row *nt_add_row(nt_ctx *c, nt_run *r);
void nt_set_collective(nt_run *r, const char *prog, const char *coll, const char *source);

/* nccl_tests_text.c */
cJSON *nt_row_detail_base(const nt_row *row, double count);
void nt_read_stream(nt_ctx *c, const char *tag, const char *text, size_t len);
void nt_read_text(nt_ctx *c, const ng_launch *l);

/* nccl_tests_json.c */
void nt_json_report(nt_ctx *c, const cJSON *doc, const char *tag, nt_pending *pend);
bool nt_looks_like_json(const char *text, size_t len);
const char *nt_json_start(const char *text, size_t len);
void nt_read_json(nt_ctx *c, const char *text, size_t len, cJSON *out);

/* nccl_tests_records.c */
cJSON *nt_record_start(nt_ctx *c, const nt_run *r, const char *collective, size_t run_index);
void nt_finish_reason(const nt_ctx *c, cJSON *rec, const char *why);
void nt_add_record(nt_ctx *c, cJSON *out, cJSON *rec);
void nt_nothing_measured(cJSON *rec);
const char *nt_cause_line(const cJSON *messages);
void nt_cause_words(const cJSON *messages, const char *cause, char *buf, size_t cap);
void nt_emit_run(nt_ctx *c, cJSON *out, size_t ri);

#endif

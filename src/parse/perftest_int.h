/* The perftest parser's own types, shared by its parts: perftest.c (text
 * helpers, recognising lines, the entry), perftest_text.c (lines into header
 * blocks and tables) and perftest_records.c (from blocks to runs to records).
 * Not for use outside src/parse/perftest*.c. */
#ifndef NODEGATE_PARSE_PERFTEST_INT_H
#define NODEGATE_PARSE_PERFTEST_INT_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/parse.h"
#include "core/record_build.h"
#include "parse/launcher.h"
#include "parse/text.h"

/* MiB/s in one decimal Gb/s: perftest's own "Factor=10^9/(2^20*8)=119.2". */
#define PT_MIB_PER_GBIT (1e9 / (1048576.0 * 8.0))

#define PT_MAX_COLS 12
#define PT_MAX_TABLES 64 /* beyond this a log is not perftest's; headers are ignored */
#define PT_MAX_BLOCKS 128
#define PT_MAX_SEGMENTS 128
#define PT_MAX_KEPT 16 /* error lines kept as evidence per block or segment */
#define PT_LINE 200    /* longest text kept from one line */

enum pt_side { SIDE_UNKNOWN, SIDE_CLIENT, SIDE_SERVER };
enum pt_phase { PH_CONFIG, PH_ADDR, PH_TABLE };
enum pt_colkind { COL_PLAIN, COL_BYTES, COL_ITERS, COL_PEAK, COL_AVG, COL_MSGRATE, COL_BW };
enum pt_tabkind { TAB_OTHER, TAB_BW, TAB_LAT };

typedef struct {
	enum pt_colkind kind;
	char key[48];
	double div; /* bandwidth columns: printed value / div = Gb/s; 0 when unknown */
} pt_col;

typedef struct {
	enum pt_tabkind kind;
	int block;   /* the block it belongs to */
	bool open;   /* still taking rows */
	bool closed; /* ended by the rule line: complete */
	char bad[PT_LINE + 80];  /* why its rows cannot be read at all */
	char unit_bad[120];      /* why its figures cannot be converted */
	char unit[24];           /* the bandwidth unit as printed */
	double div;
	size_t ncols;
	pt_col col[PT_MAX_COLS];
	int c_bytes, c_iters, c_peak, c_avg, c_rate;
	double (*rows)[PT_MAX_COLS];
	size_t nrows, caprows;
} pt_table;

typedef struct {
	char title[PT_LINE];
	char test[40]; /* ib_write_bw, ...; "" when no title was seen */
	bool bidir;
	cJSON *config, *local, *remote, *local_gid, *remote_gid, *errors;
	int nerrors;
	char first_error[PT_LINE];
	enum pt_phase phase;
	bool banner;        /* the server's "Waiting for client to connect" came first */
	bool cm_wait;       /* the rdma_cm server's "Waiting for client rdma_cm QP" */
	bool config_closed; /* the rule after the header fields was seen */
	bool mixed;         /* its header lines interleave with another process's */
	bool two_tables;    /* a second table header came while the first was empty */
	int group;          /* the other block of an interleaved pair, -1 */
	int segment;
	int last_addr; /* 1 local, 2 remote: where a GID line belongs */
	int ntables;
} pt_block;

typedef struct {
	char program[40]; /* from the command line that starts it */
	char command[PT_LINE];
	cJSON *errors;
	int nerrors;
	char first_error[PT_LINE];
	bool usage;
	char usage_program[40];
	int nblocks;
} pt_segment;

typedef struct {
	pt_block *b;
	size_t nb, capb;
	pt_table *t;
	size_t nt, capt;
	pt_segment *s;
	size_t ns, caps;
	int cur;           /* the block lines belong to, -1 */
	bool banner;       /* a server banner not yet claimed by a block */
	bool usage;        /* inside usage text */
	bool usage_first;  /* the next usage line names the program */
	char version[32];
	bool oom;
} pt_ctx;

typedef struct {
	int blocks[2];
	size_t n;
	int segment; /* for a run with no block: the segment it stands for */
} pt_run;

typedef struct {
	char s[1024];
	size_t n;
} pt_reason;

/* The line in lower case, for matching words; NUL bytes become spaces and
 * only the first PT_LOW - 1 bytes are looked at (perftest's lines are short). */
#define PT_LOW 1024

/* perftest.c */
void pt_span_copy(char *buf, size_t cap, ng_span s);
cJSON *pt_span_json(ng_span s);
void pt_lower_copy(char *low, ng_span s);
bool pt_span_has_char(ng_span s, char ch);
void pt_reason_add(pt_reason *r, const char *fmt, ...);
const char *pt_program_of(ng_span tok);
const char *pt_command_program(ng_span line);
bool pt_is_rule(ng_span line);
bool pt_parse_title(ng_span line, char *test, size_t cap, bool *bidir);
bool pt_is_error_line(const char *low);
bool pt_is_usage_error_line(const char *low);
bool pt_grow(void **p, size_t *cap, size_t need, size_t size);
pt_segment *pt_segment_new(pt_ctx *c);
pt_block *pt_block_new(pt_ctx *c);

/* perftest_text.c */
void pt_on_line(pt_ctx *c, ng_span raw, ng_span next);

/* perftest_records.c */
bool pt_pairs(const pt_block *a, const pt_block *b);
size_t pt_make_runs(const pt_ctx *c, pt_run *runs);
bool pt_run_records(const pt_ctx *c, const pt_run *r, ng_run_status st, cJSON *out);

#endif

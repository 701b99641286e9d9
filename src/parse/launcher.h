/* The launcher layer: what srun, mpirun, kubectl, ts or journald wrapped
 * around a tool's output, taken off before the tool's parser reads it.
 *
 * Pure. Every parser that reads a tool run under a launcher (nccl-tests,
 * perftest, nvbandwidth, dcgmi) goes through it first, so a prefix one of
 * them understands, all of them understand. Per line it strips, in any order
 * and repeated:
 *
 *   timestamps   `Dec 01 21:13:04 ` (ts), `00:00:05 ` (ts -s),
 *                `2026-12-01T21:13:04.5Z ` (kubectl --timestamps, ts with an
 *                ISO format), `[2026-12-01 21:13:04] `, and journald's
 *                `Dec 01 21:13:04 host ident[pid]: ` (short and short-iso)
 *   labels       `0: ` (srun -l), `[1,0]<stdout>:` (mpirun --tag-output),
 *                `[host:rank] `, `[0] ` (mpiexec -prepend-rank),
 *                `[pod/NAME/CONTAINER] ` (kubectl logs --prefix)
 *   file heads   `==> out/1/rank.0/stdout <==` (per-rank files of
 *                mpirun --output-filename, pasted with tail or head): the
 *                lines after it belong to that file
 *
 * Lines of one label form one stream, so interleaved ranks never mix into
 * one table. Known launcher noise is dropped: ssh host-key warnings,
 * --report-bindings lines, Open MPI's help-message aggregation notices and
 * its dashed WARNING boxes. NCCL INFO/WARN lines are the tool's own and stay.
 *
 * Input that carries none of this comes back byte for byte as one stream. */
#ifndef NODEGATE_PARSE_LAUNCHER_H
#define NODEGATE_PARSE_LAUNCHER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "parse/parse.h"
#include "parse/text.h"

#define NG_LAUNCH_TAG 64
/* More labels than this is not launcher output: later labels read whole. */
#define NG_LAUNCH_MAX_STREAMS 256

enum {
	NG_LAUNCH_SRUN = 1 << 0,
	NG_LAUNCH_MPIRUN_TAG = 1 << 1,
	NG_LAUNCH_HOST_RANK = 1 << 2,
	NG_LAUNCH_RANK = 1 << 3,
	NG_LAUNCH_POD = 1 << 4,
	NG_LAUNCH_FILE = 1 << 5,
	NG_LAUNCH_TIMESTAMP = 1 << 6,
	NG_LAUNCH_JOURNALD = 1 << 7,
};

typedef struct {
	char tag[NG_LAUNCH_TAG]; /* the stream's label, "" when unlabelled */
	char *text;              /* its lines, prefixes gone, NUL-terminated */
	size_t len;
	size_t lines;
} ng_launch_stream;

typedef struct {
	ng_launch_stream *streams; /* in order of first appearance */
	size_t nstreams;
	unsigned styles;      /* NG_LAUNCH_* seen */
	size_t prefixed;      /* lines that carried a prefix */
	size_t noise;         /* launcher lines dropped */
	char *joined;         /* every stream, one after another */
	size_t joined_len;
} ng_launch;

/* Splits text (NUL at text[len]; other NULs allowed). False when out of
 * memory; out is then empty and safe to free. */
bool ng_launch_read(const char *text, size_t len, ng_launch *out);
void ng_launch_free(ng_launch *l);

/* Whether the layer changed anything: a prefix, a second stream or noise. */
bool ng_launch_changed(const ng_launch *l);

/* {"styles": [...], "streams": N, "noise_dropped": N} for a record's
 * detail, or NULL when nothing was changed (or out of memory). */
cJSON *ng_launch_json(const ng_launch *l);

/* Adds detail.launcher to every record of an array when the layer changed
 * anything. False when out of memory. */
bool ng_launch_annotate(cJSON *records, const ng_launch *l);

/* A tool's parser behind the layer: reads text as it came when the layer
 * changed nothing, the joined streams otherwise, and adds detail.launcher. */
typedef cJSON *(*ng_bare_parser)(const char *text, size_t len, ng_run_status st, ng_err *err);
cJSON *ng_launch_parse(const char *text, size_t len, ng_run_status st, ng_err *err, ng_bare_parser bare);

/* The prefixes of one line (without its newline): returns the content,
 * writes the label (cap bytes, "" when none) and ORs the styles seen. */
ng_span ng_launch_strip(ng_span line, char *tag, size_t cap, unsigned *styles);

/* Whether a line, its prefixes gone, is launcher noise on its own. */
bool ng_launch_noise(ng_span content);

#endif

/* Storing a file of records (`nodegate ingest`): read as a JSON array, one
 * record object or JSON Lines, every record checked for what the store
 * needs, then stored in one transaction, so a file with any bad record
 * stores nothing. */
#ifndef NODEGATE_FLOW_INGEST_H
#define NODEGATE_FLOW_INGEST_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "flow/ctx.h"
#include "store/store.h"

typedef struct {
	size_t n;     /* records stored */
	int64_t *ids; /* their ids in the store, n of them */
	size_t bare;  /* of them, records without a software identity */
} ng_ingested;

/* Reads path ("-": standard input; name is how messages call it), checks
 * each record and stores them all with how in ctx's store. 0 with *out;
 * -1 with err: NG_ERR_INPUT when the file cannot be read or a record is bad
 * (the message names the file, and the line or record), NG_ERR_STORE when
 * the store failed (nothing of the file is stored either way). Release
 * *out with ng_ingested_release. */
int ng_ingest_file(const ng_ctx *ctx, const char *path, const char *name,
                   const ng_store_ingest *how, ng_ingested *out, ng_err *err);
void ng_ingested_release(ng_ingested *r);

/* Told of each file of a batch in turn, as it is done: name as messages
 * call it ("standard input" for "-"); got when it was stored, else NULL
 * with why in err. */
typedef void (*ng_ingest_file_fn)(void *arg, const char *name, const ng_ingested *got,
                                  const ng_err *err);

/* Stores each of paths[0..n) with ng_ingest_file, one transaction each: a
 * file that fails stores nothing and the others are still read. fn (may be
 * NULL) is told of each. *out (when out is not NULL): {"stored": [{file,
 * records, run_id, ids}], "failed": [{file, error}]}. Returns how many
 * files failed. */
size_t ng_ingest_files(const ng_ctx *ctx, char *const *paths, size_t n,
                       const ng_store_ingest *how, ng_ingest_file_fn fn, void *arg,
                       cJSON **out);

#endif

/* The failing domain's evidence, captured when admission flags a domain and
 * before it is confirmed (collect/evidence.h), kept by run in the store: a
 * case opened by the run names the run, and `nodegate quarantine show`
 * prints its evidence and what it says. */
#ifndef NODEGATE_FLOW_EVIDENCE_H
#define NODEGATE_FLOW_EVIDENCE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef struct {
	const char *node, *run_id;   /* the run's node (stable id) and id */
	const char *const *domains;  /* the flagged domains */
	size_t n_domains;
	const cJSON *records;        /* the flagged run's records (an array) */
	int64_t now;
	double deadline_s;           /* each collector ends within this (admission: the policy's
	                              * health.deadline_seconds); <= 0: 15 s */
} ng_evidence_capture_in;

/* Captures each flagged domain that has a collector, once, when the run is
 * this machine's own (records read from elsewhere describe a node this
 * machine is not: nothing is captured). Each collector runs in a child
 * under the deadline (NVML on a GPU fallen off the bus may never return):
 * one that does not finish is kept as evidence that says so, and the
 * admission goes on. Returns how many were kept, or -1
 * with err when the store failed. */
int ng_evidence_capture(ng_store *st, const ng_evidence_capture_in *in, ng_err *err);

#endif

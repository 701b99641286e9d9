/* Kubernetes: a quarantined node cordoned, tainted and labelled through
 * kubectl, and released again (docs/kubernetes.md). Every call is
 * `kubectl` (or $NODEGATE_KUBECTL) through collect/spawn.h with an argv and
 * a timeout; nothing talks to the API server directly. */
#ifndef NODEGATE_LAND_KUBE_H
#define NODEGATE_LAND_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define NG_KUBE_TIMEOUT_S 30.0
#define NG_KUBE_TAINT_KEY "nodegate.io/quarantine"
#define NG_KUBE_LABEL_KEY "nodegate.io/outcome"
/* a released node on probation: only canary workloads tolerate it */
#define NG_KUBE_PROBATION_KEY "nodegate.io/probation"
/* set on a node nodegate cordoned: only such a cordon is undone by release */
#define NG_KUBE_CORDON_ANNOTATION "nodegate.io/cordoned"
#define NG_KUBE_VALUE_MAX 63 /* a label (and taint) value's limit */

/* A label value Kubernetes accepts: at most 63 of [A-Za-z0-9._-], starting
 * and ending with a letter or digit (or empty). */
bool ng_kube_value_ok(const char *s);
/* Makes a label value of free text: every run of other characters becomes
 * one '-', cut to 63, ends trimmed to a letter or digit. Empty when nothing
 * is left. */
void ng_kube_value_of(const char *text, char out[NG_KUBE_VALUE_MAX + 1]);
/* A node name kubectl takes as a name, never an option: a DNS subdomain
 * (lowercase letters, digits, '-' and '.', at most 253, starting and ending
 * with a letter or digit). */
bool ng_kube_node_ok(const char *s);

typedef struct {
	bool dry_run;     /* print each command, run none */
	double timeout_s; /* per command; 0: NG_KUBE_TIMEOUT_S */
	FILE *out;        /* one line per command: what ran and how it ended */
} ng_kube_opts;

/* Cordons NODE (and annotates it nodegate.io/cordoned=true) unless it is
 * cordoned already, taints it nodegate.io/quarantine=REASON:NoSchedule and
 * labels it nodegate.io/outcome=quarantined. A cordon someone else set is
 * left as it is, unmarked. reason must pass ng_kube_value_ok. Every step is
 * tried; returns the number that failed (0: all done). */
int ng_kube_cordon(const char *node, const char *reason, const ng_kube_opts *o);
/* A released node on probation (docs/admission.md, "Probation"): taints it
 * nodegate.io/probation=case-N:NoSchedule (canary workloads tolerate it),
 * then removes the quarantine taint, labels it nodegate.io/outcome=probation
 * and uncordons it as release does. Returns the number of steps that failed. */
int ng_kube_probation(const char *node, long long case_id, const ng_kube_opts *o);
/* Removes both taints and the label (already gone is not a failure), and
 * uncordons NODE only when the annotation says nodegate cordoned it: another
 * party's cordon is left alone. Returns the number of steps that failed. */
int ng_kube_release(const char *node, const ng_kube_opts *o);

#endif

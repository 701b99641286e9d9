/* Node identity and class.
 *
 * The profile is what the node is: a stable node id (not only the host name),
 * CPU model and count, memory size and population, NUMA layout, local drives,
 * NICs and InfiniBand ports, firmware/BIOS, kernel, container digest when in
 * one, GPU models/count/UUIDs when NVML is present, and tool versions. The
 * class key is derived from the profile by a template that policy can change
 * (identity.class_template): two nodes are compared only when their keys match. */
#ifndef NODEGATE_COLLECT_IDENTITY_H
#define NODEGATE_COLLECT_IDENTITY_H

#include <cjson/cJSON.h>

#include "core/error.h"
#include "core/policy.h"
#include "core/strbuf.h"

typedef struct {
	/* Where /proc, /sys, /etc and /dev are read from: "/" on a node; tests
	 * point it at a tree they built. NULL means "/". */
	const char *root;
} ng_identity_opts;

/* The profile as a JSON object (schema "nodegate/profile/1"), with "node_id".
 * Fields that cannot be read are absent, never guessed. NULL only when out of
 * memory. */
cJSON *ng_identity_profile(const ng_identity_opts *o, ng_err *err);

/* The class key the template gives for the profile, e.g.
 * "2xAMD-EPYC-7B13/24GiB/6.1.0-26". -1 with err naming the field when the
 * template names one the profile lacks. */
int ng_identity_class(const cJSON *profile, const char *tmpl, ng_strbuf *out, ng_err *err);

/* The software and firmware identity of a profile, "sw-" and 16 hex digits:
 * a digest of kernel, OS, driver, BIOS, microcode, VBIOS, NIC firmware,
 * container and tool versions. Equal profiles give equal keys. */
void ng_identity_software(const cJSON *profile, ng_strbuf *out);

/* Collects the profile once and sets "node", "node_name" (the scheduler
 * name of the profile's host), "class", "software" and "profile" on every
 * record that lacks them (records: an array of records, or one record).
 * When the policy's template cannot give a class for this node, node and
 * profile are still set, class is left absent, and -1 comes back with err
 * naming the field. pol NULL means the default template. */
int ng_identity_stamp(cJSON *records, const ng_policy *pol, const ng_identity_opts *o, ng_err *err);

/* The node's scheduler name (docs/naming.md): $SLURMD_NODENAME, else the
 * short host name (up to the first dot). host is the host name to shorten
 * (NULL: this machine's). "" when there is neither. */
void ng_node_scheduler_name(const char *host, char *out, size_t cap);

/* This node's stable id as records carry it ("node": machine id or DMI
 * id, else the host name) and its scheduler name, without the rest of the
 * profile: for the GPU checks, which run at the end of every job. */
void ng_node_names(char *id, size_t id_cap, char *name, size_t name_cap);

/* Set by the NVML module when it is built: called with the profile's "gpu"
 * object after what sysfs and /proc/driver/nvidia gave (devices[], count,
 * model, uuids, driver), to add or correct fields (CUDA version, UUIDs).
 * Returns -1 with err on failure; the profile then notes "nvml_error". */
extern int (*ng_identity_nvml_hook)(cJSON *gpu, ng_err *err);

#endif

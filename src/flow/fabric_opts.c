/* A fabric run's options: their defaults, and what they become once given
 * (flow/fabric.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json_file.h"
#include "flow/fabric.h"

#define DEFAULT_LAUNCHER "srun --nodelist={nodes} --nodes={n} --ntasks-per-node=1 --exclusive"
#define DEFAULT_NCCL "all_reduce_perf -b 1G -e 1G -g 8 -n 20 -N 3"

void ng_fabric_opts_default(ng_fabric_opts *o, const ng_policy *pol, const char *self)
{
	snprintf(o->spec_buf, sizeof o->spec_buf, "%s", DEFAULT_LAUNCHER);
	snprintf(o->nccl_buf, sizeof o->nccl_buf, "%s", DEFAULT_NCCL);
	o->perftest = "ib_write_bw";
	o->perftest_seconds = 5;
	o->timeout_s = 120;
	o->fraction = pol->flag_fraction;
	o->counters = true;
	o->class_key = "fabric";
	o->remote_nodegate = self ? self : "nodegate";
}

static size_t split_spaces(char *buf, char **tok, size_t cap)
{
	size_t n = 0;
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n + 1 < cap;
	     t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	tok[n] = NULL;
	return n;
}

static int read_topology(const char *path, ng_topology *topology, ng_err *err)
{
	ng_err e;
	size_t len;
	char *text = ng_read_file(path, &len, &e);
	if (!text)
		return ng_fail_as(err, NG_ERR_INPUT, "--topology: %s", e.msg);
	int rc = ng_topology_parse(text, len, topology, &e);
	free(text);
	if (rc < 0)
		return ng_fail_as(err, NG_ERR_INPUT, "--topology %s: %s", path, e.msg);
	return 0;
}

int ng_fabric_opts_settle(ng_fabric_opts *o, const char *topology_path, ng_topology *topology,
                          ng_err *err)
{
	o->n_launcher = split_spaces(o->spec_buf, o->launcher, NG_FABRIC_MAX_TOKENS);
	o->n_nccl = split_spaces(o->nccl_buf, o->nccl, NG_FABRIC_MAX_TOKENS);
	if (o->n_launcher == 0 || o->n_nccl == 0)
		return ng_fail_as(err, NG_ERR_USAGE, "--launcher and --nccl must name a program");
	for (char *save = NULL, *t = strtok_r(o->hca_buf, ",", &save); t && o->n_hcas < NG_FABRIC_MAX_HCAS;
	     t = strtok_r(NULL, ",", &save))
		o->hcas[o->n_hcas++] = t;
	if (topology_path) {
		if (read_topology(topology_path, topology, err) < 0)
			return -1;
		o->topology = topology;
	}
	if (!o->raw_dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(o->raw_dir, sizeof o->raw_dir, "%s/nodegate-fabric-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(o->raw_dir))
			return ng_fail_as(err, NG_ERR_INPUT, "cannot make a directory for raw outputs (%s): %s",
			                  o->raw_dir, strerror(errno));
	} else if (mkdir(o->raw_dir, 0755) < 0 && errno != EEXIST) {
		return ng_fail_as(err, NG_ERR_INPUT, "cannot create --raw-dir %s: %s", o->raw_dir,
		                  strerror(errno));
	}
	return 0;
}

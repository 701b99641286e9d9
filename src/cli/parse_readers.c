/* nodegate parse for the readers whose output is not a measurement record:
 * a saved `nvidia-smi -q` (a GPU snapshot, as epilog and health judge it),
 * kernel Xid lines (the events epilog and health attach to GPUs) and sacct
 * job accounting (what the fleet report counts GPU-hours from). Each reads
 * with the same parser the rest of nodegate uses, and prints its JSON. */
#include "cli/parse_readers.h"

#include <stdlib.h>
#include <string.h>

#include "parse/nvidia_smi.h"
#include "parse/sacct.h"
#include "parse/xid.h"

/* A saved nvidia-smi -q: the GPU snapshot, or an input error when the text
 * is no dump (and not nvidia-smi's own report that NVML failed). */
static int read_nvidia_smi(const char *text, size_t len, cJSON **out, ng_err *err)
{
	int rc = ng_nvidia_smi_json(text, len, out, err);
	return rc < 0 ? NG_EXIT_USAGE : rc ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

/* Kernel log text: every Xid line, in order. No Xid is an answer too. */
static int read_xid(const char *text, size_t len, cJSON **out, ng_err *err)
{
	return ng_xid_json(text, len, out, err) < 0 ? NG_EXIT_USAGE : NG_EXIT_OK;
}

/* sacct --parsable2 lines: the jobs, and the lines it refused (exit 1). */
static int read_sacct(const char *text, size_t len, cJSON **out, ng_err *err)
{
	int rc = ng_sacct_json(text, len, out, err);
	return rc < 0 ? NG_EXIT_USAGE : rc ? NG_EXIT_NOT_ADMISSIBLE : NG_EXIT_OK;
}

static void table_nvidia_smi(FILE *f, const cJSON *doc)
{
	const cJSON *nvml = cJSON_GetObjectItemCaseSensitive(doc, "nvml");
	const cJSON *drv = cJSON_GetObjectItemCaseSensitive(doc, "driver");
	fprintf(f, "nvml     %s\n", cJSON_IsString(nvml) ? nvml->valuestring : "?");
	if (cJSON_IsString(drv) && drv->valuestring[0])
		fprintf(f, "driver   %s\n", drv->valuestring);
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(doc, "nvml_error");
	if (cJSON_IsString(err) && err->valuestring[0])
		fprintf(f, "error    %s\n", err->valuestring);
	const cJSON *g, *gpus = cJSON_GetObjectItemCaseSensitive(doc, "gpus");
	cJSON_ArrayForEach(g, gpus)
	{
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(g, "index");
		const cJSON *bus = cJSON_GetObjectItemCaseSensitive(g, "bus");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(g, "name");
		fprintf(f, "gpu %-3d  %-12s %s\n", cJSON_IsNumber(idx) ? idx->valueint : -1,
		        cJSON_IsString(bus) ? bus->valuestring : "?", cJSON_IsString(name) ? name->valuestring : "?");
	}
}

static void table_xid(FILE *f, const cJSON *doc)
{
	if (!cJSON_GetArraySize(doc))
		fprintf(f, "no Xid lines\n");
	const cJSON *e;
	cJSON_ArrayForEach(e, doc)
	{
		fprintf(f, "Xid %-3d  %-12s %s\n", cJSON_GetObjectItemCaseSensitive(e, "code")->valueint,
		        cJSON_GetObjectItemCaseSensitive(e, "bus")->valuestring,
		        cJSON_GetObjectItemCaseSensitive(e, "message")->valuestring);
	}
}

static void table_sacct(FILE *f, const cJSON *doc)
{
	const cJSON *j, *jobs = cJSON_GetObjectItemCaseSensitive(doc, "jobs");
	cJSON_ArrayForEach(j, jobs)
	{
		fprintf(f, "job %-14s %-12s gpus %-4.0f nodes %d\n", cJSON_GetObjectItemCaseSensitive(j, "id")->valuestring,
		        cJSON_GetObjectItemCaseSensitive(j, "state")->valuestring,
		        cJSON_GetObjectItemCaseSensitive(j, "gpus")->valuedouble,
		        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "nodes")));
	}
	const cJSON *bad = cJSON_GetObjectItemCaseSensitive(doc, "lines_refused");
	if (cJSON_IsNumber(bad) && bad->valuedouble > 0)
		fprintf(f, "refused  %.0f line(s), the first at line %.0f: %s\n", bad->valuedouble,
		        cJSON_GetObjectItemCaseSensitive(doc, "first_refused_line")->valuedouble,
		        cJSON_GetObjectItemCaseSensitive(doc, "refused_why")->valuestring);
}

static const struct ng_parse_reader readers[] = {
    {"nvidia-smi", read_nvidia_smi, table_nvidia_smi,
     "a saved nvidia-smi -q: the GPU snapshot epilog and health judge (JSON nodegate/gpus/1)"},
    {"xid", read_xid, table_xid, "kernel log text (dmesg, journalctl, /dev/kmsg): every Xid line"},
    {"sacct", read_sacct, table_sacct, "sacct --parsable2 job accounting: jobs, nodes, GPUs, times"},
};

const struct ng_parse_reader *ng_parse_reader_find(const char *tool)
{
	for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++)
		if (strcmp(readers[i].tool, tool) == 0)
			return &readers[i];
	return NULL;
}

const struct ng_parse_reader *ng_parse_reader_table(size_t *n)
{
	*n = sizeof readers / sizeof readers[0];
	return readers;
}

/* nodegate probe KIND: a short, controlled measurement of one path of the
 * node, as a record the gate accepts unchanged. */
#include <string.h>

#include "cli/probe.h"

static int exec_probe(struct ng_cli *cli, int argc, char **argv);

static const struct ng_probe_kind *const kinds[] = {
	&ng_probe_storage,
	&ng_probe_cpu,
	&ng_probe_hostmem,
	&ng_probe_gpu_compute,
	&ng_probe_gpu_memory,
	&ng_probe_gpu_copy,
	NULL,
};

const struct ng_cmd_entry ng_cmd_probe_entry = {
	.name = "probe",
	.usage = "KIND [OPTIONS]   (nodegate probe KIND --help)",
	.summary = "Measure one path of this node (storage, cpu, hostmem, gpu-*) into a record.",
	.help =
	"Every probe writes a record the gate accepts unchanged; --baseline gives the\n"
	"verdict directly, --json prints the records, --out keeps them. A probe that\n"
	"could not measure (disk full, read-only path, no memory) says so in a record\n"
	"with no samples, never a number.\n",
	.exec = exec_probe,
};

static int exec_probe(struct ng_cli *cli, int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		FILE *out = argc < 2 ? stderr : stdout;
		ng_cmd_print_help(&ng_cmd_probe_entry, out);
		fprintf(out, "\nKinds:\n");
		for (const struct ng_probe_kind *const *k = kinds; *k; k++)
			fprintf(out, "  %-11s %s\n", (*k)->name, (*k)->summary);
		return argc < 2 ? NG_EXIT_USAGE : NG_EXIT_OK;
	}
	for (const struct ng_probe_kind *const *k = kinds; *k; k++)
		if (strcmp((*k)->name, argv[1]) == 0)
			return ng_probe_main(cli, *k, argc - 1, argv + 1);
	return ng_cmd_usage_error(&ng_cmd_probe_entry, "unknown probe kind \"%s\"", argv[1]);
}

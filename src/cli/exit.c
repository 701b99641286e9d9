/* Error classes to exit statuses (cli/exit.h). */
#include "cli/exit.h"

#include <stdio.h>

#include "cli/cmd.h"

int ng_exit_for_class(ng_err_class code, ng_err_class otherwise)
{
	switch (code) {
	case NG_ERR_USAGE:
	case NG_ERR_INPUT:
	case NG_ERR_INTERNAL: return NG_EXIT_USAGE;
	case NG_ERR_STORE: return NG_EXIT_STORE;
	case NG_ERR_LANDING: return NG_EXIT_NOT_ADMISSIBLE;
	case NG_ERR_UNCLASSIFIED: break;
	}
	return otherwise == NG_ERR_UNCLASSIFIED ? NG_EXIT_USAGE
	                                        : ng_exit_for_class(otherwise, NG_ERR_USAGE);
}

int ng_exit_for(const ng_err *err, ng_err_class otherwise)
{
	return ng_exit_for_class(err ? err->code : NG_ERR_UNCLASSIFIED, otherwise);
}

int ng_cli_fail(const struct ng_cmd_entry *e, const ng_err *err, ng_err_class otherwise)
{
	bool store = err->code == NG_ERR_STORE ||
	             (err->code == NG_ERR_UNCLASSIFIED && otherwise == NG_ERR_STORE);
	fprintf(stderr, "nodegate %s: %s%s\n", e->name, store ? "store: " : "", err->msg);
	return ng_exit_for(err, otherwise);
}

/* The store's command-line edge: which store, and reading a NODE argument. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/store_cli.h"
#include "cli/exit.h"
#include "flow/ctx.h"

static ng_store *open_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
                            const char *spec)
{
	ng_ctx ctx = {.policy = cli->policy};
	ng_err err;
	if (ng_ctx_open_store(&ctx, spec ? spec : cli->store_spec, &err) < 0) {
		ng_cli_store_error(e, &err);
		return NULL;
	}
	return ctx.store;
}

static ng_store *open_existing_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
                                    const char *spec)
{
	ng_ctx ctx = {.policy = cli->policy};
	ng_err err;
	if (ng_ctx_open_existing_store(&ctx, spec ? spec : cli->store_spec, &err) < 0) {
		ng_cli_store_error(e, &err);
		return NULL;
	}
	return ctx.store;
}

ng_store *ng_cli_store(struct ng_cli *cli, const char *spec)
{
	const struct ng_cmd_entry *e = cli->cmd;
	if (!cli->store && e && cli->needs == NG_CMD_NEEDS_EXISTING_STORE)
		cli->store = open_existing_store(cli, e, spec);
	else if (!cli->store && e && cli->needs == NG_CMD_NEEDS_STORE)
		cli->store = open_store(cli, e, spec);
	return cli->store;
}

bool ng_cli_store_ctx(struct ng_cli *cli, const char *spec, ng_ctx *ctx)
{
	ng_store *st = ng_cli_store(cli, spec);
	if (st)
		ng_cli_ctx(cli, st, ctx);
	return st != NULL;
}

int ng_cli_store_error(const struct ng_cmd_entry *e, const ng_err *err)
{
	fprintf(stderr, "nodegate %s: store: %s\n", e->name, err->msg);
	/* Whatever failed beneath it, a store operation failed: the store's status. */
	return ng_exit_for_class(NG_ERR_STORE, NG_ERR_STORE);
}

int ng_cli_resolve_node(ng_store *st, const struct ng_cmd_entry *e, const char *arg,
                        ng_store_node_ref *out)
{
	ng_err err;
	int r = ng_store_resolve_node(st, arg, out, &err);
	if (r < 0)
		return ng_cli_store_error(e, &err);
	if (r == 2) {
		/* Never guess between two nodes: the wrong one would be released. */
		fprintf(stderr,
		        "nodegate %s: \"%s\" names more than one node: %s; name one by its id\n",
		        e->name, arg, out->candidates);
		return NG_EXIT_USAGE;
	}
	return 0;
}

bool ng_cli_parse_id(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < 1)
		return false;
	*out = v;
	return true;
}

int ng_cli_col_width(int w, const char *s)
{
	int n = (int)strlen(s);
	return n > w ? n : w;
}

void ng_print_json(const cJSON *doc)
{
	char *s = cJSON_Print(doc);
	printf("%s\n", s ? s : "null");
	free(s);
}


/* The store's command-line edge: which store, and reading a NODE argument. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli/store_cli.h"
#include "cli/exit.h"
#include "flow/ctx.h"

ng_store *ng_cli_open_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
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

/* Opening a store creates it when it is missing, so a read with a mistyped
 * path would report a freshly made, empty store (an audit log verified, no
 * quarantines). A SQLite store must exist already. The spec is resolved as
 * ng_store_open resolves it. */
ng_store *ng_cli_open_existing_store(const struct ng_cli *cli, const struct ng_cmd_entry *e,
                                     const char *spec)
{
	const char *s = spec ? spec : cli->store_spec;
	const char *env = getenv("NODEGATE_STORE");
	if ((!s || !*s) && env && *env)
		s = env;
	ng_strbuf def = {0};
	ng_err err;
	if (!s || !*s) {
		if (ng_store_default_path(&def, &err) < 0) {
			ng_cli_store_error(e, &err);
			return NULL;
		}
		s = def.s;
	}
	bool pg = strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0;
	if (!pg && access(s, F_OK) != 0) {
		fprintf(stderr, "nodegate %s: store: there is no store at %s: nothing to read. Name "
		                "the store with --store or $NODEGATE_STORE\n",
		        e->name, s);
		ng_strbuf_free(&def);
		return NULL;
	}
	ng_store *st = ng_cli_open_store(cli, e, s);
	ng_strbuf_free(&def);
	return st;
}

ng_store *ng_cli_store(struct ng_cli *cli, const char *spec)
{
	const struct ng_cmd_entry *e = cli->cmd;
	if (!cli->store && e && e->needs == NG_CMD_NEEDS_EXISTING_STORE)
		cli->store = ng_cli_open_existing_store(cli, e, spec);
	else if (!cli->store && e && e->needs == NG_CMD_NEEDS_STORE)
		cli->store = ng_cli_open_store(cli, e, spec);
	return cli->store;
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

void ng_print_json(const cJSON *doc)
{
	char *s = cJSON_Print(doc);
	printf("%s\n", s ? s : "null");
	free(s);
}


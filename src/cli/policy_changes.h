/* The policy verb's subcommands that try a policy before it drains anyone
 * (cmd_policy_changes.c): replay, history, shadow, promote. */
#ifndef NODEGATE_CLI_POLICY_CHANGES_H
#define NODEGATE_CLI_POLICY_CHANGES_H

#include "cli/cmd.h"

/* argv[0] is the subcommand; -1 when it is none of these. */
int ng_policy_changes(struct ng_cli *cli, int argc, char **argv);

#endif

/* The admission run's table, for people (cli/admit_report.c). */
#ifndef NODEGATE_CLI_ADMIT_REPORT_H
#define NODEGATE_CLI_ADMIT_REPORT_H

#include <stdio.h>

#include "flow/admit.h"

void ng_admit_print_table(FILE *out, const struct ng_admit_run *r);

#endif

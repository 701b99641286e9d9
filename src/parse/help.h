/* Reading a program's own help text to learn which options it accepts.
 *
 * nccl-tests before v2.19.2 answers an option it does not know (-I) with its
 * usage text and exit status 0, having measured nothing. Asking the binary
 * first, and refusing to pass what it does not list, closes that trap. */
#ifndef NODEGATE_PARSE_HELP_H
#define NODEGATE_PARSE_HELP_H

#include <stdbool.h>
#include <stddef.h>

/* Whether help lists opt ("-I" or "--per_iter_timing") as an option. */
bool ng_help_lists_option(const char *help, size_t len, const char *opt);

/* The first option among args that help does not list, written into buf as
 * it would be looked up ("-I" for "-I1", "--foo" for "--foo=1"); NULL when
 * every option is listed. Values, negative numbers and a lone "-" are not
 * options; "--" ends the options. */
const char *ng_help_first_unknown_option(const char *help, size_t len, char *const *args,
                                         size_t n, char *buf, size_t buflen);

#endif

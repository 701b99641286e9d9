/* The text of /sys/class/infiniband/HCA/ports/N files, read strictly.
 *
 *   state       "4: ACTIVE"
 *   phys_state  "5: LinkUp"
 *   rate        "200 Gb/sec (4X HDR)"   (also "2.5 Gb/sec (1X SDR)")
 *   counters/NAME "12345"                 (a decimal count, newline optional)
 *
 * Anything else is refused (the caller records the file as unreadable),
 * never read as 0: a counter that cannot be read did not stay still. Pure. */
#ifndef NODEGATE_PARSE_IB_COUNTERS_H
#define NODEGATE_PARSE_IB_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "4: ACTIVE" -> 4 and "ACTIVE" (printable ASCII, cut to cap). */
bool ng_ib_parse_state(const char *text, size_t len, int *code, char *name, size_t cap);
/* "200 Gb/sec (4X HDR)" -> 200 (decimal Gb/s), and the width/speed "4X HDR" when printed. */
bool ng_ib_parse_rate(const char *text, size_t len, double *gbps, char *what, size_t cap);
/* "12345\n" -> 12345. */
bool ng_ib_parse_counter(const char *text, size_t len, uint64_t *value);

/* The error counters nodegate keeps before and after each test, and whose
 * rise it names: each means frames lost or a link that went away. */
extern const char *const ng_ib_error_counters[];
extern const size_t ng_ib_n_error_counters;

#endif

/* units.h: times and sizes as torchprof prints them. Everything below the renderers keeps integer
 * nanoseconds and bytes; only text output goes through here. */
#ifndef LP_UNITS_H
#define LP_UNITS_H

#include <stddef.h>

#include "layerprof.h"

/* Unit formatting, as torchprof prints: "49.693us", "1.808ms", "1.234s"; "756.50 Kb", "0 b".
 * Return the length of the full text, as snprintf does (it is truncated when >= size). */
int lp_format_time(double ns, lp_units units, char *buf, size_t size);
int lp_format_bytes(double bytes, char *buf, size_t size);

/* ISO 8601 UTC of `t` (seconds since the epoch): "2024-05-01T12:34:56Z", into buf (at least 21
 * bytes); "" when it cannot be formatted. */
void lp_format_date(long long t, char *buf, size_t size);

#endif

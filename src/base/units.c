/* units.c: the units torchprof (and PyTorch's profiler tables) print, so our columns read the
 * same. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "base/units.h"

/* PyTorch's format_time picks the unit by magnitude, switching at 1e3 and 1e6 microseconds; a
 * forced unit keeps every row of a column comparable at a glance. */
int lp_format_time(double ns, lp_units units, char *buf, size_t size) {
    static const struct {
        const char *suffix;
        double us_per_unit;
    } unit[] = {
        [LP_UNITS_US] = {"us", 1.0},
        [LP_UNITS_MS] = {"ms", 1e3},
        [LP_UNITS_S] = {"s", 1e6},
    };
    double us = ns / 1e3;
    if (units < LP_UNITS_US || units > LP_UNITS_S) {
        double mag = fabs(us);
        units = mag >= 1e6 ? LP_UNITS_S : mag >= 1e3 ? LP_UNITS_MS : LP_UNITS_US;
    }
    return snprintf(buf, size, "%.3f%s", us / unit[units].us_per_unit, unit[units].suffix);
}

/* PyTorch's format_memory: binary multiples, torchprof's lowercase "b" suffixes. Means can be
 * fractional: whole bytes are rounded first, so 1023.6 prints "1.00 Kb", never "1024 b". */
int lp_format_bytes(double bytes, char *buf, size_t size) {
    const double kb = 1024.0, mb = kb * 1024.0, gb = mb * 1024.0;
    if (isnan(bytes)) return snprintf(buf, size, "nan b");
    double rounded = round(bytes);
    double mag = fabs(rounded);
    if (mag >= gb) return snprintf(buf, size, "%.2f Gb", bytes / gb);
    if (mag >= mb) return snprintf(buf, size, "%.2f Mb", bytes / mb);
    if (mag >= kb) return snprintf(buf, size, "%.2f Kb", bytes / kb);
    /* Through int, a rounded -0.0 (a tiny negative mean) prints "0 b", never "-0 b". */
    return snprintf(buf, size, "%d b", (int)rounded);
}

void lp_format_date(long long t, char *buf, size_t size) {
    time_t tt = (time_t)t;
    struct tm tm;
    if (!buf || !size) return;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm)) buf[0] = '\0';
}

/* names.h: the spellings of the options' enum values, shared by the option table, the YAML reader
 * and the writer, so the names a file or a flag may spell and the names --print-config writes can
 * never drift apart. */
#ifndef LP_NAMES_H
#define LP_NAMES_H

#include <stddef.h>

/* One spelling of an enum value. The first entry for a value is its canonical name; later ones
 * are aliases the reader also accepts ("zero" for "zeros", as --input does). */
typedef struct lp_cfg_name {
    const char *name;
    int value;
} lp_cfg_name;

typedef struct lp_cfg_names {
    const lp_cfg_name *v;
    size_t n;
    const char *what; /* "mode", "CUDA timing": the word validation messages use */
    /* A canonical name still accepted but not offered in --help's value name, or NULL: "graph",
     * kept for old scripts, runs as markers. */
    const char *unlisted;
} lp_cfg_names;

extern const lp_cfg_names lp_cfg_modes;        /* lp_mode */
extern const lp_cfg_names lp_cfg_units;        /* lp_units */
extern const lp_cfg_names lp_cfg_formats;      /* lp_format */
extern const lp_cfg_names lp_cfg_fills;        /* lp_fill */
extern const lp_cfg_names lp_cfg_cuda_timings; /* lp_cuda_timing */

/* The canonical name of `value`, or NULL when it has none. */
const char *lp_cfg_name_of(const lp_cfg_names *t, int value);

#endif

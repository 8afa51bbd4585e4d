/* input_spec.h: dtype helpers shared by the input parser and the config file. */
#ifndef LP_INPUT_SPEC_H
#define LP_INPUT_SPEC_H

#include <stddef.h>

#include "layerprof.h"

/* 1 and *out set when `name[0..len)` names a dtype ("float32", "int64", aliases "float", "long").
 */
int lp_dtype_from_name(const char *name, size_t len, lp_dtype *out);
int lp_dtype_is_integer(lp_dtype dtype);

/* 1 and *out set when `s[0..len)` is a whole finite number ("0.5", "-1e3"). */
int lp_parse_finite(const char *s, size_t len, double *out);

#endif

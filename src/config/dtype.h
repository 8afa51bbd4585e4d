/* dtype.h: the dtypes an input may have, for the input parsers and the config file. */
#ifndef LP_DTYPE_H
#define LP_DTYPE_H

#include <stddef.h>

#include "layerprof.h"

/* 1 and *out set when `name[0..len)` names a dtype ("float32", "int64", aliases "float", "long").
 */
int lp_dtype_from_name(const char *name, size_t len, lp_dtype *out);

/* 1 for the integer dtypes (bool included), 0 for floating point and unknown values. */
int lp_dtype_is_integer(lp_dtype dtype);

/* Bytes of one element; 0 for an unknown value. */
int lp_dtype_size(lp_dtype dtype);

#endif

/* dtype.c: the dtypes an input may have, by name, size and kind (dtype.h). */
#include "config/dtype.h"

#include <string.h>

#include "layerprof.h"

static const struct {
    const char *name;
    lp_dtype dtype;
    int size;
    int is_integer;
} dtype_table[] = {
    {"float32", LP_DTYPE_FLOAT32, 4, 0},   {"float", LP_DTYPE_FLOAT32, 4, 0},
    {"float64", LP_DTYPE_FLOAT64, 8, 0},   {"double", LP_DTYPE_FLOAT64, 8, 0},
    {"float16", LP_DTYPE_FLOAT16, 2, 0},   {"half", LP_DTYPE_FLOAT16, 2, 0},
    {"bfloat16", LP_DTYPE_BFLOAT16, 2, 0}, {"int64", LP_DTYPE_INT64, 8, 1},
    {"long", LP_DTYPE_INT64, 8, 1},        {"int32", LP_DTYPE_INT32, 4, 1},
    {"int", LP_DTYPE_INT32, 4, 1},         {"int16", LP_DTYPE_INT16, 2, 1},
    {"int8", LP_DTYPE_INT8, 1, 1},         {"uint8", LP_DTYPE_UINT8, 1, 1},
    {"bool", LP_DTYPE_BOOL, 1, 1},
};
#define N_DTYPES (sizeof dtype_table / sizeof dtype_table[0])

const char *lp_dtype_name(lp_dtype dtype) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == dtype) return dtype_table[i].name; /* first is canonical */
    return "unknown";
}

int lp_dtype_from_name(const char *name, size_t len, lp_dtype *out) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (strlen(dtype_table[i].name) == len && strncmp(dtype_table[i].name, name, len) == 0) {
            *out = dtype_table[i].dtype;
            return 1;
        }
    return 0;
}

int lp_dtype_size(lp_dtype d) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == d) return dtype_table[i].size;
    return 0;
}

int lp_dtype_is_integer(lp_dtype d) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtype_table[i].dtype == d) return dtype_table[i].is_integer;
    return 0;
}

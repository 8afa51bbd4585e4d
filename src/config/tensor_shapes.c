/* tensor_shapes.c: a program's input shapes, checked before the package's map sees them
 * (tensor_shapes.h). The map's own check (collect/pt2_shapes.c) trusts that every size it reads
 * is there: this is what makes that true for shapes that come from outside the library. */
#include "config/tensor_shapes.h"

#include <inttypes.h>

#include "base/error.h"

int lp_tensor_shapes_check(const lp_tensor_shape *inputs, size_t n, const char *who) {
    if (!inputs && n) return lp_error_set(LP_ERR_INVALID, "%s: inputs is NULL, n is %zu", who, n);
    if (n > LP_MAX_INPUTS)
        return lp_error_set(LP_ERR_INVALID, "%s: %zu inputs, at most %d", who, n, LP_MAX_INPUTS);
    for (size_t i = 0; i < n; i++) {
        const lp_tensor_shape *t = &inputs[i];
        if (t->rank < 0 || t->rank > LP_MAX_DIMS)
            return lp_error_set(LP_ERR_INVALID, "%s: input %zu has rank %d, not 0..%d", who, i,
                                t->rank, LP_MAX_DIMS);
        if (t->rank && !t->sizes)
            return lp_error_set(LP_ERR_INVALID, "%s: input %zu has rank %d and NULL sizes", who, i,
                                t->rank);
        for (int d = 0; d < t->rank; d++)
            if (t->sizes[d] < 0)
                return lp_error_set(LP_ERR_INVALID, "%s: input %zu dimension %d is %" PRId64, who,
                                    i, d, t->sizes[d]);
        if (t->dtype < -1 || t->dtype > LP_DTYPE_BOOL)
            return lp_error_set(LP_ERR_INVALID,
                                "%s: input %zu has dtype %d, not an lp_dtype (or -1)", who, i,
                                t->dtype);
    }
    return LP_OK;
}

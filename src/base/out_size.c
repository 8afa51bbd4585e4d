/* out_size.c: see out_size.h. */
#include "base/out_size.h"

#include "base/error.h"

int lp_out_size_check(size_t size, size_t first, const char *type, const char *getter) {
    if (size >= first) return LP_OK;
    return lp_error_set(LP_ERR_INVALID,
                        "%s: a %s of %zu bytes is smaller than any version of it (%zu bytes or "
                        "more): call it through its macro, which passes sizeof",
                        getter, type, size, first);
}

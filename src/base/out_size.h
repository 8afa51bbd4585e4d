/* out_size.h: output structs (lp_node_info, lp_op_info, lp_run_info, lp_meta_info,
 * lp_option_info) a program may know smaller, from an older layerprof.h. Their getters are macros
 * that pass the caller's sizeof; the library fills its own, whole struct and copies out only that
 * many bytes, so fields added later are never written past the caller's struct. Fields are only
 * ever added at the end. */
#ifndef LP_OUT_SIZE_H
#define LP_OUT_SIZE_H

#include <stddef.h>
#include <string.h>

#include "layerprof.h"

/* The end of a field: a struct's first version ends at its last field of that time. */
#define LP_FIELD_END(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* The first versions (layerprof 0.1): the smallest size a caller may pass. */
#define LP_NODE_INFO_SIZE_1 LP_FIELD_END(lp_node_info, container)
#define LP_OP_INFO_SIZE_1 LP_FIELD_END(lp_op_info, share)
/* lp_run_info's 0.1.0 form ended with two graph-mode fields, always 0. They are gone in 0.2.0
 * (before 1.0 a minor release may change the ABI: docs/install.md), so its first form ends at
 * dropped. */
#define LP_RUN_INFO_SIZE_1 LP_FIELD_END(lp_run_info, dropped)
#define LP_REPORT_META_SIZE_1 LP_FIELD_END(lp_meta_info, iterations)
#define LP_OPTION_INFO_SIZE_1 LP_FIELD_END(lp_option_info, in_yaml)

/* LP_OK when `size` is at least `first` (the struct's first version), else LP_ERR_INVALID naming
 * `type` and the getter. */
int lp_out_size_check(size_t size, size_t first, const char *type, const char *getter);

/* Copies the first `size` bytes of the whole struct at `full` (of `full_size`) to `out`. */
static inline void lp_out_copy(void *out, size_t size, const void *full, size_t full_size) {
    memcpy(out, full, size < full_size ? size : full_size);
}

#endif

// dtypes.cpp: layerprof's input dtypes (lp_dtype) as libtorch's scalar types.
#include "shim_internal.hpp"

c10::ScalarType lps::scalar_type(lp_dtype d) noexcept {
    switch (d) {
    case LP_DTYPE_FLOAT64:
        return c10::kDouble;
    case LP_DTYPE_FLOAT16:
        return c10::kHalf;
    case LP_DTYPE_BFLOAT16:
        return c10::kBFloat16;
    case LP_DTYPE_INT64:
        return c10::kLong;
    case LP_DTYPE_INT32:
        return c10::kInt;
    case LP_DTYPE_INT16:
        return c10::kShort;
    case LP_DTYPE_INT8:
        return c10::kChar;
    case LP_DTYPE_UINT8:
        return c10::kByte;
    case LP_DTYPE_BOOL:
        return c10::kBool;
    case LP_DTYPE_FLOAT32:
    default:
        return c10::kFloat;
    }
}

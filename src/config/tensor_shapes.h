/* tensor_shapes.h: the argument checks of lp_session_input_shapes_set (the shapes of a forward's
 * input tensors that a program hands in), apart from the session so that they are tested alone. */
#ifndef LP_TENSOR_SHAPES_H
#define LP_TENSOR_SHAPES_H

#include <stddef.h>

#include "layerprof.h"

/* LP_OK when the `n` `inputs` are well formed: `inputs` not NULL unless `n` is 0, at most
 * LP_MAX_INPUTS, each rank in 0 .. LP_MAX_DIMS with its sizes present and >= 0, each dtype an
 * lp_dtype or -1. Else LP_ERR_INVALID, the message starting with `who` and naming the input. */
int lp_tensor_shapes_check(const lp_tensor_shape *inputs, size_t n, const char *who);

#endif

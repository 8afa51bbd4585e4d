/* nvtx.h: an NVTX range per measured module call (and op call), in the domain "layerprof", for
 * Nsight Systems. Module names are registered once at open, so the hot path only pushes a handle.
 * Built for real only with LP_HAVE_NVTX (the CUDA Toolkit's nvtx3 headers). */
#ifndef LP_NVTX_H
#define LP_NVTX_H

#include <stdint.h>

#include "model/tree.h"

typedef struct lp_nvtx lp_nvtx;

/* Creates the domain and registers every node's name (the root by its class, the rest by dotted
 * path). LP_ERR_UNSUPPORTED without NVTX in this build, LP_ERR_NOMEM; with a message. */
int lp_nvtx_open(lp_nvtx **out, const lp_tree *tree);
void lp_nvtx_close(lp_nvtx *n);

/* Hot path: a range named by module node `module`, or by `op_name` when `module` is -1. */
void lp_nvtx_push(lp_nvtx *n, int32_t module, const char *op_name);
void lp_nvtx_pop(lp_nvtx *n);

#endif

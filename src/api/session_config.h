/* session_config.h: what a session records, from its options alone: the shim's hooks and the
 * collector's configuration. No libtorch: the session (session_open.c, session_recording.c) and
 * every benchmark, lp_bench_core's synthetic events included, configure with these, so that a
 * decision the bench measures (which hooks, which collector features) is the one users run. */
#ifndef LP_API_SESSION_CONFIG_H
#define LP_API_SESSION_CONFIG_H

#include <stdint.h>

#include "collect/collector.h"
#include "layerprof.h"

/* The shim's hooks (LPS_HOOK_*) for the options' mode and columns; `flops`: a FLOPs column asked
 * for ops' shapes. */
unsigned session_config_hooks(const lp_options *o, int flops);

/* The collector's configuration for the options on a CPU or (`cuda`) CUDA device: memory, ops,
 * the chosen modules (`selected`, or NULL), shapes, FLOPs, output shapes, the timeline and the
 * live histograms. CUDA time, the scope hooks and the shapes describer (shim-side) are left
 * for the caller. */
lp_collector_config session_config_collector(const lp_options *o, int cuda, const uint8_t *selected,
                                             int flops, int out_shape);

#endif

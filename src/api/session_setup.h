/* session_setup.h: what a session is built from, given a loaded model and the options: its module
 * tree, the inputs the model file records, the shim's hooks and the collector's configuration.
 * The session (session_open.c, session_recording.c) builds itself with these, and so do the
 * benchmarks (bench/), so that a decision the bench measures (which hooks, which collector
 * features) is the decision users run. */
#ifndef LP_API_SESSION_SETUP_H
#define LP_API_SESSION_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "collect/collector.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "model/tree.h"

/* Initialises `t` and adds the model's modules, parent before child, with their sizes. On failure
 * `t` holds what was added (free it with lp_tree_free) and the message is set. */
int session_setup_tree(lp_tree *t, const lps_model *m);

/* The inputs `m` records ("layerprof.inputs": one argument per line, in the --input syntax),
 * appended to inputs[*n..max); their texts live until lp_options_release(owner). `model_path`
 * names the file in the messages. LP_ERR_INVALID when the model records none. */
int session_setup_recorded_inputs(const lps_model *m, const char *model_path, lp_input_spec *inputs,
                                  size_t max, size_t *n, lp_options *owner);

/* The shim's hooks (LPS_HOOK_*) for the options' mode and columns; `flops`: a FLOPs column asked
 * for ops' shapes. */
unsigned session_setup_hooks(const lp_options *o, int flops);

/* The collector's configuration for the options on a CPU or (`cuda`) CUDA device: memory, ops,
 * the chosen modules (`selected`, or NULL), shapes, FLOPs, output shapes, the timeline and the
 * live histograms. CUDA time and the scope hooks come from the CUDA profiler and are left 0. */
lp_collector_config session_setup_collector(const lp_options *o, int cuda, const uint8_t *selected,
                                            int flops, int out_shape);

#endif

/* session_setup.h: what a session is built from, given a loaded model: its module tree and the
 * inputs the model file records (session_config.h: the hooks and the collector's configuration
 * from the options). The session (session_open.c) builds itself with these, and so do the
 * benchmarks (bench/), so that what the bench measures is what users run. */
#ifndef LP_API_SESSION_SETUP_H
#define LP_API_SESSION_SETUP_H

#include <stddef.h>
#include <stdint.h>

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

#endif

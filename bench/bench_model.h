/* bench_model.h: a model as the benchmarks run it, and the recordings they run it with, built the
 * way a session builds its own (src/api/session_setup.h, session_config.h): the same module tree,
 * recorded inputs, shim hooks and collector configuration, so that what a line measures is what
 * users run. Only the loop around the forwards is the bench's own: unprofiled and profiled forwards
 * alternate on one loaded model, which a session cannot do. Internal to bench/. */
#ifndef LP_BENCH_MODEL_H
#define LP_BENCH_MODEL_H

#include <stdint.h>

#include "collect/collector.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "model/tree.h"

/* A loaded model and its inputs. */
typedef struct bench_model {
    lps_model *m;
    lps_inputs *in;
} bench_model;

/* The program's --input SPEC arguments (the CLI's syntax), for every model it opens; without any,
 * each model runs on the inputs its file records. Exits 2 on a bad spec. */
void bench_inputs_from_args(int argc, char **argv);

/* Loads `path` on `device` in shim execution mode `exec` (LPS_EXEC_*) and makes its inputs. Exits
 * 2, saying why, on failure. */
void bench_model_open(bench_model *bm, const char *path, const char *device, int exec);
void bench_model_close(bench_model *bm);
/* One forward; exits 2 on failure. */
void bench_forward(bench_model *bm);
/* `n` forwards (the executor's own warm-up: the profiling executor's first runs); returns the
 * fastest, on the wall clock, as a time estimate. */
uint64_t bench_warm_up(bench_model *bm, int n);

/* The session's mode for a shim execution mode: markers for LPS_EXEC_MARKERS, else hooks (the
 * frame callbacks: all an optimised, unmarked model could report). */
lp_mode bench_mode_of(int exec);

/* The hooks a session installs in `mode` with memory and events as given (session_config_hooks). */
unsigned bench_hooks(lp_mode mode, int memory, int events);

/* A profiled setting: the module tree and the collector a session with these options records
 * into, and the hooks it installs. */
typedef struct bench_recording {
    lp_tree tree;
    lp_collector *c;
    unsigned hooks;
} bench_recording;

/* Built for `m` (every copy of one file has the same modules), on the CPU or (`cuda`) a CUDA
 * device; with `cuda_time` (or NULL), CUDA time per module through those scope hooks (the CUDA
 * profiler's, lp_cuda_prof_hooks). Exits 2 on failure. */
void bench_recording_open(bench_recording *r, const lps_model *m, lp_mode mode, int memory,
                          int events, int cuda, const lp_scope_hooks *cuda_time);
/* The session's sink: events go straight to the collector (lp_collector_sink). */
lp_event_sink bench_recording_sink(bench_recording *r);
void bench_recording_close(bench_recording *r);

/* What one forward delivers, counted by a sink that does nothing else (the [shim-only] row, the
 * events per forward). */
typedef struct bench_counts {
    uint64_t enters, exits, ops, op_ends, allocs, frees;
    uint64_t top_ops; /* ops not nested in another op */
    int depth;
    /* The open module frames, innermost last, for the site markers' current_module: the
     * [shim-only] row pays their lookup as a profiled forward does. Deeper ones are counted. */
    int32_t modules[64];
    int n_modules;
} bench_counts;
lp_event_sink bench_counting_sink(bench_counts *k);
/* Events per forward with `hooks`, averaged over `n` forwards. */
bench_counts bench_count_events(bench_model *bm, unsigned hooks, int n);

#endif

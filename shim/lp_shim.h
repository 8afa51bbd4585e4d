/* lp_shim.h: the only bridge to libtorch, in plain C.
 *
 * Everything that needs a libtorch header lives behind this interface: loading a model, listing
 * its modules, making inputs, running forward, and the RecordFunction callbacks and memory reporter
 * that turn libtorch's activity into plain events. No C++ exception, type or allocation crosses it:
 * every function catches everything and returns an lp_status code, with the message available from
 * lps_error_last() on the same thread. */
#ifndef LP_SHIM_H
#define LP_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "layerprof.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lps_model lps_model;
typedef struct lps_inputs lps_inputs;

/* The shim's last error message on this thread (borrowed, thread-local). */
const char *lps_error_last(void);

/* "1.13", "2.15": the libtorch the shim was compiled against. Static storage. */
const char *lps_torch_version(void);

/* Keeps libtorch's own log and warning output away from the terminal unless `verbose`. Call once,
 * before loading. */
void lps_set_verbose(int verbose);

/* Intra-op threads (at::set_num_threads); 0 leaves libtorch's default. */
int lps_set_threads(int threads);

/* Loads a TorchScript file onto `device` ("cpu", "cuda", "cuda:N"). `optimize` selects the
 * executor mode, which libtorch fixes per function at its first run: 0 for the hooks mode
 * (optimizer off, a frame per submodule call), 1 for the graph mode. *out: free with
 * lps_model_free. */
int lps_model_load(const char *path, const char *device, int optimize, lps_model **out);
void lps_model_free(lps_model *m);

/* The module tree in named_modules() order, root first. Strings are borrowed from the model. */
size_t lps_model_module_count(const lps_model *m);
int lps_model_module(const lps_model *m, size_t index, const char **path, const char **class_name,
                     int32_t *parent);

/* The default inputs recorded in the file (extra file "layerprof.inputs": one spec per line), or
 * NULL when there are none. Borrowed from the model. */
const char *lps_model_default_inputs(const lps_model *m);

/* Makes input tensors on the model's device. Random values come from `seed`. Sizes are checked
 * against the memory available before anything is allocated. *out: free with lps_inputs_free. */
int lps_inputs_create(lps_model *m, const lp_input_spec *specs, size_t n, uint64_t seed,
                      lps_inputs **out);
void lps_inputs_free(lps_inputs *in);

/* Runs forward once under inference mode, discarding the output. Waits for the device. */
int lps_forward(lps_model *m, lps_inputs *in);

/* Runs forward once and copies the output's bytes (a tensor, or the tensors of a tuple/list, in
 * order) into a buffer the caller frees with free(). For checking that profiling changes nothing.
 */
int lps_forward_output(lps_model *m, lps_inputs *in, void **bytes, size_t *size);

/* Where events go. Called on the threads that run the model; must not throw. */
typedef struct lps_sink {
    void *ctx;
    void (*call_enter)(void *ctx, int32_t module, uint64_t t_ns);
    void (*call_exit)(void *ctx, uint64_t t_ns);
    void (*op_start)(void *ctx, const char *name, int32_t module, uint64_t t_ns);
    void (*op_end)(void *ctx, uint64_t t_ns);
    void (*memory)(void *ctx, const void *ptr, int64_t bytes, int device, uint64_t t_ns);
} lps_sink;

/* Device ids of memory events. */
enum { LPS_DEV_CPU = 0, LPS_DEV_CUDA = 1 };

enum {
    LPS_HOOK_MODULES = 1u << 0, /* call_enter/exit for TorchScript frames (self -> module) */
    LPS_HOOK_OPS = 1u << 1,     /* op_start/end for every op */
    LPS_HOOK_MEMORY = 1u << 2   /* the memory reporter */
};

/* Installs the callbacks on the calling thread (and the tasks it forks). In graph mode (the model
 * was loaded with optimize=1) top-level ops carry their module, resolved once per op site.
 * Fails with LP_ERR_BUSY when another profiler holds a slot layerprof needs. */
int lps_profile_begin(lps_model *m, const lps_sink *sink, unsigned hooks);
/* Removes them. Safe to call when nothing is installed. */
void lps_profile_end(lps_model *m);

/* Graph mode diagnostics: op sites resolved (slow path) and cache hits since the last begin. */
void lps_graph_stats(const lps_model *m, uint64_t *resolved, uint64_t *hits);

#ifdef __cplusplus
}
#endif

#endif

/* lp_shim.h: the only bridge to libtorch, in plain C.
 *
 * Everything that needs a libtorch header lives behind this interface: loading a model, listing
 * its modules, making inputs, running forward, and the RecordFunction callbacks and memory reporter
 * that turn libtorch's activity into plain events. No C++ exception, type or allocation crosses it:
 * every function is noexcept, catches everything and returns an lp_status code. A failure sets the
 * library's one thread-local message (lp_error_set, src/base/error.h; read with lp_error_last()),
 * so the core never has to choose between two messages. */
#ifndef LP_SHIM_H
#define LP_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include "collect/event_sink.h"
#include "layerprof.h"

#ifdef __cplusplus
extern "C" {
#define LPS_NOEXCEPT noexcept
#else
#define LPS_NOEXCEPT
#endif

typedef struct lps_model lps_model;
typedef struct lps_inputs lps_inputs;

/* "1.13", "2.15": the libtorch the shim was compiled against. Static storage. */
const char *lps_torch_version(void) LPS_NOEXCEPT;

/* Keeps libtorch's own log and warning output away from the terminal unless `verbose`. Call once,
 * before loading. */
void lps_set_verbose(int verbose) LPS_NOEXCEPT;

/* Intra-op threads (at::set_num_threads); 0 leaves libtorch's default. */
int lps_set_threads(int threads) LPS_NOEXCEPT;

/* How a model runs, which libtorch fixes per function at its first run (docs/libtorch.md). */
enum {
    LPS_EXEC_HOOKS = 0,     /* optimizer off: a TorchScript frame per submodule call */
    LPS_EXEC_OPTIMISED = 1, /* optimizer on, no markers: the model as shipped (reference runs) */
    LPS_EXEC_MARKERS = 2,   /* optimizer on, with enter/exit markers at every submodule call site */
    /* With LPS_EXEC_MARKERS (or'ed in): the exit markers also take the call's output, whose
     * first tensor's sizes go to sink.out_shape (the out_shape column). */
    LPS_EXEC_OUTPUTS = 1 << 8
};

/* Loads a TorchScript file onto `device` ("cpu", "cuda", "cuda:N") to run as `exec` says
 * (LPS_EXEC_*). With LPS_EXEC_MARKERS the markers are put into every method's graph before its
 * first run (shim/markers.cpp). *out: free with lps_model_free. */
int lps_model_load(const char *path, const char *device, int exec, lps_model **out) LPS_NOEXCEPT;
void lps_model_free(lps_model *m) LPS_NOEXCEPT;

/* The shim's libtorch as layerprof.hpp states a program's ("2.15/cxx11abi=1"): the version and
 * the C++ ABI, which must both match for a torch::jit::Module to cross from the program. */
const char *lps_torch_build(void) LPS_NOEXCEPT;

/* Wraps a torch::jit::Module the program holds (`module` points to it) instead of loading a file
 * (shim/attach.cpp). The model shares the module's object, so the program's own forwards are the
 * ones profiled. `torch_build` is the program's libtorch (lps_torch_build's form); another than
 * the shim's is refused with LP_ERR_UNSUPPORTED. The module's parameters must be on `device`.
 * With LPS_EXEC_MARKERS the markers go into the module's method graphs, and lps_model_free takes
 * them out again. LP_ERR_STATE when forward already ran in a way `exec` cannot profile (libtorch
 * compiled it at that first run), LP_ERR_BUSY when another open model wraps the same module.
 * *out: free with lps_model_free, before the program lets the module go. */
int lps_model_attach(void *module, const char *torch_build, const char *device, int exec,
                     lps_model **out) LPS_NOEXCEPT;

/* The same for an AOTInductor package the program loaded itself: `loader` is its
 * torch::inductor::AOTIModelPackageLoader, `path` the package it was loaded from (layerprof's map
 * is read from it); of `exec`, LPS_EXEC_OUTPUTS alone counts (the map's output shapes are
 * delivered, as lps_model_load's package does). LP_ERR_MODEL when the package has no map or its
 * library is not loaded here with kernel profiling, LP_ERR_BUSY when another open model holds the
 * same loader, and LP_ERR_UNSUPPORTED for another libtorch (or 1.x). *out: free with lps_model_free
 * before the program lets the loader go. */
int lps_model_attach_package(void *loader, const char *torch_build, const char *path,
                             const char *device, int exec, lps_model **out) LPS_NOEXCEPT;

/* Around a forward the program runs itself on the calling thread (an attached model). enter sets
 * the thread's TorchScript optimizer as the model's mode needs, resets the per-forward state,
 * enters the root (markers) and starts the driver's clock. leave stops the clock, leaves the root
 * when the forward `completed` (0: it threw), waits for the device and puts the thread's setting
 * back. LP_ERR_STATE for an enter inside an open forward, or a leave without one. */
int lps_forward_enter(lps_model *m) LPS_NOEXCEPT;
int lps_forward_leave(lps_model *m, int completed) LPS_NOEXCEPT;

/* Live forwards (docs/sampling.md): the program's forwards of a marked model (LPS_EXEC_MARKERS) on
 * several threads at once, each recorded or not. lps_live_prepare gives the model the sink its
 * recorded forwards deliver module calls to (no op, memory or FLOPs hooks), once, before any live
 * forward. enter and leave wrap one forward on the calling thread, its state in `f` (the
 * caller's): enter sets the thread's TorchScript optimizer as the mode needs and, when `record`,
 * makes the markers the thread runs deliver to that sink and enters the root; leave exits the
 * root when the forward `completed`, stops delivering and puts the thread's setting back. A
 * forward not recorded reads no clock: its markers cost a thread-local load and a compare. No
 * device synchronisation. Neither touches the state lps_forward_enter/leave keep. */
typedef struct lps_live_forward {
    int saved_optimize;
    int recording;
    uint64_t t0; /* the root's entry, when recording */
} lps_live_forward;
int lps_live_prepare(lps_model *m, const lp_event_sink *sink) LPS_NOEXCEPT;
int lps_live_enter(lps_model *m, int record, lps_live_forward *f) LPS_NOEXCEPT;
/* *forward_ns: the recorded forward's time from the root's entry to its exit (0 otherwise). */
int lps_live_leave(lps_model *m, lps_live_forward *f, int completed,
                   uint64_t *forward_ns) LPS_NOEXCEPT;

/* An AOTInductor package (a path ending in .pt2, shim/aoti.cpp), loaded by lps_model_load on a
 * libtorch 2.x build (LP_ERR_UNSUPPORTED on 1.x): its kernels are timed in the modules
 * python/layerprof_export.py's map places them in. */
typedef struct lps_pt2_info {
    int is_pt2;        /* the model is a package */
    int has_map;       /* it holds layerprof's module map (else every kernel is the root's) */
    size_t kernels;    /* kernels per forward, by the map */
    uint64_t unplaced; /* kernel calls that did not follow the map's order (timed in the root) */
    int calls_hooked;  /* the map's calls were counted by forward hooks at export */
    size_t calls_without_nodes; /* modules called there that left no node in the graph */
} lps_pt2_info;
int lps_model_pt2_info(const lps_model *m, lps_pt2_info *out) LPS_NOEXCEPT;
/* The shapes of the next forward's inputs, checked against the package's map (`inputs`
 * well formed, at most LP_MAX_INPUTS: config/tensor_shapes.h): LP_OK, and that forward delivers
 * the FLOPs and output shapes the map works out for them; else LP_ERR_INVALID with the reason,
 * and it delivers none. Once per forward, before lps_forward_enter; allocates nothing. LP_OK and
 * nothing else for a model that is not a package with a map. */
int lps_model_pt2_shapes(lps_model *m, const lp_tensor_shape *inputs, size_t n) LPS_NOEXCEPT;
/* The next forward has no shapes: those given before it, if any, are dropped (a refused call, a
 * forward that failed to begin, or inputs the program could not describe). */
void lps_model_pt2_shapes_forget(lps_model *m) LPS_NOEXCEPT;
/* Where the work of module `index` of a package went when it has no kernel of its own and
 * Inductor fused its nodes into kernels placed in other modules (the map's kernels and the modules
 * each fused, docs/pt2.md): the path of the module holding the kernel ("" the root) in *module,
 * the kernel's name in *kernel (of several, the one placed deepest: the most specific), how many
 * more kernels took some of its work in *more. *module is NULL otherwise (and for every
 * TorchScript module). Read once, when the session builds its tree; strings borrowed from the
 * model. */
int lps_model_module_fused(const lps_model *m, size_t index, const char **module,
                           const char **kernel, unsigned *more) LPS_NOEXCEPT;

/* The module tree in named_modules() order, root first. Strings are borrowed from the model. */
size_t lps_model_module_count(const lps_model *m) LPS_NOEXCEPT;
int lps_model_module(const lps_model *m, size_t index, const char **path, const char **class_name,
                     int32_t *parent) LPS_NOEXCEPT;

/* 0 for a container module without forward (ModuleList, ModuleDict): code indexes it, never calls
 * it, so it has no frame of its own in either mode. */
int lps_model_module_has_forward(const lps_model *m, size_t index) LPS_NOEXCEPT;

/* What a module holds: parameters (elements) and the bytes of its parameters and buffers, its
 * own (`self_`) and with its submodules'. A tensor two modules share (tied weights, a shared
 * submodule) counts once in every total that covers both. */
typedef struct lps_module_size {
    uint64_t self_params, params;
    uint64_t self_bytes, bytes;
} lps_module_size;
int lps_model_module_size(const lps_model *m, size_t index, lps_module_size *out) LPS_NOEXCEPT;

/* The default inputs recorded in the file (extra file "layerprof.inputs": one spec per line), or
 * NULL when there are none. Borrowed from the model. */
const char *lps_model_default_inputs(const lps_model *m) LPS_NOEXCEPT;

/* Makes input tensors on the model's device. Random values come from `seed`. Sizes are checked
 * against the memory available before anything is allocated. *out: free with lps_inputs_free. */
int lps_inputs_create(lps_model *m, const lp_input_spec *specs, size_t n, uint64_t seed,
                      lps_inputs **out) LPS_NOEXCEPT;
void lps_inputs_free(lps_inputs *in) LPS_NOEXCEPT;

/* Copies `bytes` of plain data (the tensor's dtype, row-major) into input `index`, whose size
 * must match exactly. */
int lps_inputs_set(lps_inputs *in, size_t index, const void *data, size_t bytes) LPS_NOEXCEPT;

/* Runs forward once under inference mode, discarding the output. Waits for the device. */
int lps_forward(lps_model *m, lps_inputs *in) LPS_NOEXCEPT;

/* Wall time of the last forward call itself (lps_forward or lps_forward_output): from the call into
 * TorchScript until it and the tasks it forked were done, without the shim's setup around it or the
 * device synchronisation after it. The driver's own timing of the forward. */
uint64_t lps_last_forward_ns(const lps_model *m) LPS_NOEXCEPT;

/* The same forward from the call until its device work was done: the device synchronisation
 * included (on the CPU, the same as lps_last_forward_ns plus the shim's return). 0 when the last
 * forward failed or was the program's own (lps_forward_enter/exit). */
uint64_t lps_last_synced_ns(const lps_model *m) LPS_NOEXCEPT;

/* Runs forward once and copies the output's bytes (a tensor, or the tensors of a tuple/list, in
 * order) into a buffer the caller frees with free(). For checking that profiling changes nothing.
 */
int lps_forward_output(lps_model *m, lps_inputs *in, void **bytes, size_t *size) LPS_NOEXCEPT;

/* Where events go: lp_event_sink (src/collect/event_sink.h), which the collector fills. The
 * hooks below say which of its functions are called: LPS_HOOK_SHAPES gives op_start a shape_key,
 * LPS_HOOK_FLOPS calls flops and flops_unknown, LPS_EXEC_OUTPUTS out_shape, a package add_calls. */

/* Device ids of memory events. */
enum { LPS_DEV_CPU = 0, LPS_DEV_CUDA = 1 };

enum {
    LPS_HOOK_MODULES = 1u << 0, /* call_enter/exit for TorchScript frames (self -> module) */
    LPS_HOOK_OPS = 1u << 1,     /* op_start/end for every op */
    LPS_HOOK_MEMORY = 1u << 2,  /* the memory reporter */
    LPS_HOOK_SHAPES = 1u << 3,  /* with OPS: ops get their inputs, and op_start a shape_key */
    /* LPS_EXEC_MARKERS: the markers call call_enter/method_enter/call_exit (no RecordFunction
     * callback: the markers are interpreter instructions), and each forward's root call is
     * entered and left around it by the driver. */
    LPS_HOOK_MARKERS = 1u << 4,
    LPS_HOOK_FLOPS = 1u << 5 /* sink.flops for every op with a formula (reads the ops' inputs) */
};

/* With LPS_HOOK_SHAPES, called from inside sink.op_start on the thread that delivers it: writes
 * the starting op's input sizes as text, one entry per input ("[1, 3, 224, 224], [64, 3, 7, 7],
 * []": tensors give their sizes, tensor lists a list of sizes, anything else []), like snprintf.
 * Returns the length the whole text needs, or -1 outside an op_start or on failure. Allocates:
 * call it only for a key seen for the first time. */
int lps_op_input_shapes(char *buf, size_t size) LPS_NOEXCEPT;

/* Installs the callbacks on the calling thread (and the tasks it forks).
 * Fails with LP_ERR_BUSY when another profiler holds a slot layerprof needs. */
int lps_profile_begin(lps_model *m, const lp_event_sink *sink, unsigned hooks) LPS_NOEXCEPT;
/* Removes them. Safe to call when nothing is installed. */
void lps_profile_end(lps_model *m) LPS_NOEXCEPT;

/* Markers (LPS_EXEC_MARKERS): the call sites marked when the model was loaded, and, after the
 * forwards so far, how many enter and exit markers the optimised graph of forward holds for
 * these inputs, against how many the marked graph holds once its calls are inlined (what the
 * optimizer was given). Loop unrolling copies a loop's markers with its body, so the optimised
 * graph may hold more; `lost` counts, per module type, the enter markers it holds fewer of.
 * lost == 0 and enters == exits: the optimizer removed no marker. `attr_reads` is filled for any
 * optimised model (markers or not), to compare what markers cost. The optimised graph exists
 * only after a forward has run. */
typedef struct lps_marker_census {
    size_t sites;         /* marker pairs put into the methods' graphs */
    size_t expected;      /* enter markers in forward's graph with every call inlined */
    size_t enters, exits; /* enter and exit markers in the optimised graph the executor runs */
    size_t lost;          /* enter markers missing from the optimised graph, by module type */
    size_t object_sites;  /* sites marked with the module object (not a fixed callee) */
    size_t attr_reads;    /* prim::GetAttr in the optimised graph (any optimised model) */
} lps_marker_census;
int lps_markers_census(lps_model *m, lps_inputs *in, lps_marker_census *out) LPS_NOEXCEPT;

/* --- CUDA (shim/cuda.cpp) --------------------------------------------------------------------
 * 1 when the shim was built against a CUDA-enabled libtorch (the CUDA-events timer exists). */
int lps_cuda_built(void) LPS_NOEXCEPT;
/* LP_OK for "cpu", or for "cuda[:N]" when that device can be used in this process; otherwise
 * LP_ERR_UNSUPPORTED with "CUDA is not available: <why>". Call before lps_model_load. */
int lps_cuda_check(const char *device) LPS_NOEXCEPT;
/* Waits until the model's device has finished all queued work (nothing to do on the CPU). */
int lps_device_synchronize(lps_model *m) LPS_NOEXCEPT;

/* The CUDA-events timer, the fallback when CUPTI cannot be used. `ctx` is the lps_model; the
 * signatures match lp_cuda_events_backend (src/collect/cuda_events.h). Only the thread that called
 * begin is timed. push/pop (hot path) record an event on that thread's current stream. collect,
 * after lps_forward returned (the device is idle), hands every call recorded since the last
 * collect to `span`, in the order they started: its scope, the index (in that order) of the
 * innermost enclosing recorded call or -1, and its span in ns, or -1 when it could not be read
 * (a failed event, a call left open by a forward that threw). Self times are the core's to work
 * out. *lost: the calls it could not record (pool full, another thread, nested too deep). */
int lps_cuda_events_begin(void *ctx) LPS_NOEXCEPT;
void lps_cuda_events_push(void *ctx, uint64_t scope) LPS_NOEXCEPT;
void lps_cuda_events_pop(void *ctx, uint64_t scope) LPS_NOEXCEPT;
int lps_cuda_events_collect(void *ctx,
                            void (*span)(void *span_ctx, uint64_t scope, int32_t parent,
                                         int64_t ns),
                            void *span_ctx, uint64_t *lost) LPS_NOEXCEPT;
void lps_cuda_events_end(void *ctx) LPS_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif

/* session_internal.h: the session's state and what its files (src/api/session_*.c) share.
 *
 * The api layer is the only one that talks to the shim. Each file has one job, and the files call
 * one way, down this list (ctest arch.rings fails on a ring):
 *   session_attach.c     a module or package the program holds; the forwards it runs itself
 *   session_open.c       options copied, pre-flight checks, custom-op libraries, model, tree,
 *                        inputs, collector; close
 *   session_live.c       live forwards, on several threads at once
 *   session_forward.c    one forward's lifecycle, which every forward goes through; the sampler's
 *                        decision; runs, single forwards, kept outputs
 *   session_steps.c      steps and the schedule's cycles; enable/disable; regions and contexts
 *   session_read.c       getters, rendering, outputs and their file names (reads the figures)
 *   session_recording.c  the shim's hooks; when the recording is merged into the report; clearing
 *   session_notes.c      the lines under the report's table
 *   session_setup.c      the module tree and recorded inputs a session is built from
 *   session_config.c     the hooks and collector configuration, from the options alone
 *                        (the bench builds with these two as well) */
#ifndef LP_SESSION_INTERNAL_H
#define LP_SESSION_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collect/collector.h"
#include "collect/compose.h"
#include "collect/recording.h"
#include "collect/sampler.h"
#include "collect/cuda_prof.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "base/note_list.h"
#include "model/tree.h"

_Static_assert((int)LPS_DEV_CPU == (int)LP_DEV_CPU && (int)LPS_DEV_CUDA == (int)LP_DEV_CUDA,
               "device ids agree");

/* One forward's lifecycle (session_forward.c). Every forward, whichever way it started, goes
 * through session_forward_begin and session_forward_end; `how` says which way. */
enum {
    SESSION_FWD_SAMPLED = 1,     /* the sampler decides too (single and the program's forwards) */
    SESSION_FWD_PROGRAM = 2,     /* the program runs it itself, on the module it attached */
    SESSION_FWD_LIVE = 4,        /* any thread of a live session: no driving-thread state */
    SESSION_FWD_UNPROFILED = 8,  /* a warm-up or a check: never recorded, not counted as seen */
    SESSION_FWD_KEEP_HOOKS = 16, /* a run's iteration: the hooks stay until the run ends */
};
typedef struct session_forward {
    unsigned how;
    int profiled;
    uint64_t ordinal; /* from 1, among the forwards the session saw; 0 for an unprofiled one */
    uint64_t t0;      /* its start, for the sampler's budget */
} session_forward;

struct lp_session {
    lp_options opts; /* pointers below are the session's own copies */
    char *model_path, *device, *sort;
    char **paths, **columns, **labels;
    lp_output_spec *outputs;
    char **output_files;
    lp_input_spec inputs[LP_MAX_INPUTS];
    char *input_texts[LP_MAX_INPUTS]; /* the session's copies of inputs[i].file */
    size_t n_inputs;

    lps_model *model;
    lps_inputs *tensors;
    lp_tree tree;
    lp_collector *collector;
    uint8_t *selected;
    uint64_t driver_ns;
    uint64_t synced_ns;   /* the profiled forwards with their device synchronisation, summed */
    lp_note_list notes;   /* the lines the session adds as it goes (session_notes.c) */
    char date[32];        /* ISO 8601 UTC of the last lp_session_run (or of the open) */
    int trace_done;       /* profiled iterations recorded on the timeline so far */
    lp_cuda_prof *cuda;   /* CUDA time per module and NVTX ranges; NULL when neither is on */
    int trace_full_noted; /* the note that the timeline's buffers filled up was added */

    /* The trees the forwards record into, s->tree the first, and the report made of them. */
    lp_recording rec;
    _Atomic int dirty;          /* events since the last merge */
    int32_t main_context;       /* region id of context "main", -1 until used */
    _Atomic int enabled;        /* lp_session_enable */
    _Atomic int stop;           /* lp_session_stop: the run stops after this forward */
    _Atomic int sched_profiled; /* the current step is profiled by the schedule */
    uint64_t step;              /* steps completed (lp_session_step, or run's forwards) */
    int hooks_on;               /* the shim's hooks are installed on the driving thread */
    int cycles_done;
    /* A cycle's first warm-up or active step started: what the session holds is dropped when
     * that cycle first records, so the last completed cycle stays readable until then. */
    int clear_pending;
    int partial_cycle; /* the figures held are of a cycle that has not completed */
    int step_traced;   /* the current step is recorded on the timeline */
    /* The sampler's decisions in the current step (not live), and whether a region recorded in
     * it: a step whose forwards the sampler all left out, and no region recorded, recorded
     * nothing and is not an iteration. */
    int step_forwards_decided, step_forwards_sampled, step_region_recorded;

    /* lp_session_attach: the program's module, whose forwards the program runs itself. */
    int attached;
    int pt2;                     /* the model is an AOTInductor package (.pt2) */
    int in_forward;              /* between lp_session_forward_begin and _end (not live) */
    session_forward program_fwd; /* that forward */
    /* The first profiled forward among the program's first 3 (the report says so), 0: none. */
    _Atomic uint64_t early_forward;
    int flops;     /* a flops column was asked for: ops' FLOPs are recorded */
    int out_shape; /* out_shape was asked for (markers mode): outputs' shapes recorded */

    /* Sampling and live forwards (session_live.c, docs/sampling.md). */
    int live;         /* forward_begin/_end may run on several threads at once */
    uint64_t live_id; /* unique per session: threads' sampler state is keyed by it */
    lp_sampler sampler;
    _Atomic int live_open;             /* live forwards open now, on any thread */
    _Atomic uint64_t live_driver_ns;   /* live profiled forwards' time, summed */
    _Atomic uint64_t live_profiled;    /* live profiled forwards completed */
    uint64_t live_counted;             /* profiled live forwards counted as iterations (merge) */
    _Atomic uint64_t forwards_seen;    /* forwards the session ran or saw begin */
    _Atomic uint64_t forwards_sampled; /* of those, profiled */
};

/* What a session profiles: a TorchScript file (module NULL: opts->model_path), or a
 * torch::jit::Module the program holds (lp_session_attach), or a package's loader it holds
 * (lp_session_attach_package). */
typedef struct session_source {
    void *module; /* or the program's AOTIModelPackageLoader (package) */
    const char *torch_build;
    int package; /* lp_session_attach_package */
} session_source;

/* Live forwards (session_live.c). setup, at open: whether the session is live, its sampler.
 * begin and end: a live forward on the calling thread (lp_session_forward_begin/_end). */
int session_live_setup(lp_session *s);
int session_live_begin(lp_session *s);
int session_live_end(lp_session *s, int completed);

/* Opens a session on `src` (session_open.c); `opts` is of the current version. */
int session_open_from(lp_session **out, const lp_options *opts, const session_source *src);

/* Adds a line under the report's table (printf format; session_notes.c). */
void session_add_note(lp_session *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The notes every report carries on how the session was opened (the mode, the warm-up, what
 * this model or mode will not record); `asked_graph`: the options named graph mode. */
void session_add_open_notes(lp_session *s, const lps_pt2_info *pt2, int asked_graph);
/* Every line under the report's table, in the order they print, into `l` (empty on entry):
 * the session's own, then what the model, the device, the noise and the warnings add. */
int session_report_notes(const lp_session *s, const lp_tree *t, lp_note_list *l);

/* Profiled iterations recorded on the timeline: trace_iterations, or 3 when it is 0. */
int session_trace_cap(const lp_session *s);

/* The sampler's decision for a forward starting on the calling thread (session_forward.c). */
int session_sample(lp_session *s);

/* Installs the shim's hooks on the driving thread (and CUDA timing), once per run. */
int session_hooks_install(lp_session *s);

/* Removes the hooks; CUDA records are joined here, before any merge. */
int session_hooks_remove(lp_session *s);

/* Merges what the threads recorded into the trees, and recomposes the report when regions exist.
 * Driving thread, with no forward running and no region call in flight on another thread. */
int session_sync_report(lp_session *s);

/* The tree every reader sees: the module tree, or the composed one once regions exist, with what
 * was recorded since the last read merged first. LP_ERR_STATE, naming `reader`, while a live
 * forward is open. */
int session_report_tree(lp_session *s, const lp_tree **out, const char *reader);

/* Points the collector at the tree of the region the next forward runs in. */
int session_target_for_forward(lp_session *s);

/* A schedule's fresh start: every figure recorded so far is dropped. */
int session_clear_figures(lp_session *s);

/* "report_%d.json" with the cycle number in place of the first "%d"; nothing else is a format. */
int session_cycle_file(const char *pattern, int cycle, char *buf, size_t size);

/* 1 for an output written once per schedule cycle (a file name with "%d"). */
int session_is_cycle_output(const lp_session *s, const lp_output_spec *o);

/* Whether the step now starting is profiled. A cycle's warm-up starts fresh, and so does its
 * first active step (dropping the warm-up). */
int session_start_step(lp_session *s);

/* Before the first recording of a step that starts fresh. Driving thread. */
int session_apply_pending_clear(lp_session *s);

/* A step ended: counts it when it was recorded, and moves the schedule on. */
int session_end_step(lp_session *s);

/* Recorded now: the session and schedule say so, and no placeholder region is innermost. */
int session_profiling_now(lp_session *s);

/* Renders one output to its file (or stdout), with every write error reported. */
int session_write_one(lp_session *s, const lp_output_spec *o);

/* Starts a forward `how` says: whether it is profiled (into f->profiled), counted as seen; on
 * the driving thread the pending clear, the target tree and the hooks as it is profiled or not.
 * On failure nothing needs ending. */
int session_forward_begin(lp_session *s, session_forward *f, unsigned how);

/* Ends it: `completed` 0 for a forward that failed or was abandoned (what it left open is reset);
 * a completed profiled one is counted, its times summed (`synced_ns`: 0 where unknown), the
 * figures marked for the next merge. The sampler's budget sees it; on the driving thread the
 * hooks go unless `how` keeps them. Returns the end's own failure (CUDA records), else LP_OK. */
int session_forward_end(lp_session *s, session_forward *f, int completed, uint64_t driver_ns,
                        uint64_t synced_ns);

/* A forward's output kept (lp_session_forward, lp_session_forward_output). */
typedef struct session_output {
    void *bytes;
    size_t size;
} session_output;

/* Calls the options' progress callback, if any. */
void session_progress(const lp_session *s, lp_phase phase, int done, int total);

/* A cycle completed: its figures go to the callback and to the outputs named per cycle. */
int session_cycle_done(lp_session *s, int cycle);

#endif

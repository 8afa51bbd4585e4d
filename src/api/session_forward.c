/* session_forward.c: one forward's lifecycle, which every forward goes through whichever way it
 * started (a run's iterations and warm-ups, lp_session_forward, the program's own between
 * lp_session_forward_begin and _end, live forwards on any thread); the sampler's decision; and
 * the session's own forwards: runs, single forwards, kept outputs.
 *
 *   begin: is it profiled (the session, the schedule, the sampler)? counted as seen; the pending
 *          clear, the target tree and the hooks (driving thread only)
 *   end:   counted as sampled, its time summed, the figures marked dirty for the next merge; the
 *          sampler's budget; the hooks off again (driving thread only)
 * The hooks themselves, the merge and the clear are the recording's (session_recording.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/session_internal.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/thread_local.h"
#include "base/units.h"

/* The sampler's generator for the calling thread, seeded per session and thread. */
static _Atomic uint64_t next_thread_index = 0;
static LP_THREAD_LOCAL struct {
    uint64_t session_id; /* whose generator `rng` is (0: none yet) */
    uint64_t rng;
} t_sampler;

int session_sample(lp_session *s) {
    if (t_sampler.session_id != s->live_id) {
        t_sampler.session_id = s->live_id;
        t_sampler.rng = lp_sampler_rng_seed(&s->sampler, atomic_fetch_add(&next_thread_index, 1));
    }
    return lp_sampler_decide(&s->sampler, &t_sampler.rng);
}

int session_forward_begin(lp_session *s, session_forward *f, unsigned how) {
    *f = (session_forward){how, 0, 0, 0};
    int live = how & SESSION_FWD_LIVE;
    if (!(how & SESSION_FWD_UNPROFILED)) {
        /* A live session has no schedule and no region around its forwards (session_live.c):
         * whether it is enabled is all the session says. */
        f->profiled = live ? atomic_load_explicit(&s->enabled, memory_order_relaxed)
                           : session_profiling_now(s);
        if (f->profiled && (how & SESSION_FWD_SAMPLED)) {
            f->profiled = session_sample(s);
            if (!live) { /* the step's iteration: session_end_step */
                s->step_forwards_decided++;
                s->step_forwards_sampled += f->profiled;
            }
        }
        f->ordinal = atomic_fetch_add_explicit(&s->forwards_seen, 1, memory_order_relaxed) + 1;
    }
    if (!live) {
        int rc = LP_OK;
        if (f->profiled && !(rc = session_apply_pending_clear(s)) &&
            !(rc = session_target_for_forward(s)))
            rc = session_hooks_install(s);
        if (rc || !f->profiled) {
            int hrc = session_hooks_remove(s); /* other code runs unobserved */
            if (rc || hrc) return rc ? rc : hrc;
        }
    }
    f->t0 = (how & SESSION_FWD_SAMPLED) && s->sampler.budget > 0 ? lp_now_ns() : 0;
    return LP_OK;
}

/* The first profiled forward among a module's first 3 after attaching, for the report's note
 * (session_notes.c): TorchScript optimises a module during those. Any thread: the first wins. */
static void mark_early_forward(lp_session *s, const session_forward *f) {
    if (!(f->how & SESSION_FWD_PROGRAM) || s->pt2 || s->opts.mode == LP_MODE_HOOKS ||
        f->ordinal > 3)
        return;
    uint64_t none = 0;
    atomic_compare_exchange_strong(&s->early_forward, &none, f->ordinal);
}

int session_forward_end(lp_session *s, session_forward *f, int completed, uint64_t driver_ns,
                        uint64_t synced_ns) {
    int live = f->how & SESSION_FWD_LIVE, rc = LP_OK;
    if (!completed) {
        /* What the failed forward left open: a live one's on its own thread only. */
        if (!live)
            lp_collector_reset_stacks(s->collector);
        else if (f->profiled)
            lp_collector_reset_calling_thread(s->collector);
    } else if (f->profiled) {
        atomic_fetch_add_explicit(&s->forwards_sampled, 1, memory_order_relaxed);
        if (live) { /* folded in by the driving thread's merge (session_recording.c) */
            atomic_fetch_add_explicit(&s->live_profiled, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&s->live_driver_ns, driver_ns, memory_order_relaxed);
        } else {
            s->driver_ns += driver_ns;
            s->synced_ns += synced_ns;
            rc = lp_cuda_prof_iteration_done(s->cuda, s->collector);
        }
        if (!atomic_load_explicit(&s->dirty, memory_order_relaxed))
            atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
        mark_early_forward(s, f);
    }
    if (completed && !rc && (f->how & SESSION_FWD_SAMPLED) && s->sampler.budget > 0)
        lp_sampler_observe(&s->sampler, f->profiled, lp_now_ns() - f->t0);
    if (!live && !(f->how & SESSION_FWD_KEEP_HOOKS)) {
        int hrc = session_hooks_remove(s); /* the program's other code runs unobserved */
        if (!rc) rc = hrc;
    }
    return rc;
}

void session_progress(const lp_session *s, lp_phase phase, int done, int total) {
    if (!s->opts.progress) return;
    lp_progress p = {phase, done, total};
    s->opts.progress(&p, s->opts.progress_payload);
}

/* One forward on the session's inputs, through the lifecycle: the only place the session runs
 * one itself. With `output`, its output is kept there (the caller's to free; NULL on failure). */
static int run_forward(lp_session *s, unsigned how, session_output *output) {
    if (output) *output = (session_output){NULL, 0};
    session_forward f;
    int rc = session_forward_begin(s, &f, how);
    if (rc) return rc;
    rc = output ? lps_forward_output(s->model, s->tensors, &output->bytes, &output->size)
                : lps_forward(s->model, s->tensors);
    int erc = session_forward_end(s, &f, rc == LP_OK, rc ? 0 : lps_last_forward_ns(s->model),
                                  rc ? 0 : lps_last_synced_ns(s->model));
    if (!rc) rc = erc;
    if (rc && output) {
        free(output->bytes);
        *output = (session_output){NULL, 0};
    }
    return rc;
}

/* The session's own forwards need its inputs, which an attached module may not have been given,
 * and none may start inside a forward the program runs (lp_session_forward_begin). */
static int check_can_run(lp_session *s, const char *fn) {
    if (s->in_forward || atomic_load(&s->live_open))
        return lp_error_set(LP_ERR_STATE,
                            "%s: a forward begun with lp_session_forward_begin is "
                            "open: end it first",
                            fn);
    if (!s->tensors)
        return lp_error_set(LP_ERR_STATE,
                            "%s: the session was attached to a module and given no inputs: run "
                            "the module's forwards between lp_session_forward_begin and "
                            "lp_session_forward_end (layerprof.hpp: Session::forward), or give "
                            "inputs in the options",
                            fn);
    return LP_OK;
}

int lp_session_stop(lp_session *s) {
    if (!s) return LP_ERR_INVALID; /* no message: lp_error_set is not async-signal-safe */
    atomic_store(&s->stop, 1);
    return LP_OK;
}

/* A stop request honoured after `done` of `want` profiled iterations: said in every report. */
static void note_interrupted(lp_session *s, int done, int want) {
    session_add_note(s,
                     "interrupted: stopped after %d of %d profiled iterations; the figures are "
                     "theirs",
                     done, want);
}

/* What run_forwards runs: `warmup` unprofiled forwards, then `iterations`, each a step recorded
 * as the session and schedule say; with `output`, the last one's output is kept. */
typedef struct run_args {
    int warmup, iterations;
    session_output *output;
} run_args;

/* A run (lp_session_run, and lp_session_forward_output's profiled forward): warm-up, the
 * iterations with the hooks around them, stop requests and progress, then the merge. */
static int run_forwards(lp_session *s, const run_args *a) {
    lp_format_date((long long)time(NULL), s->date, sizeof s->date);
    session_progress(s, LP_PHASE_WARMUP, 0, a->warmup);
    int rc = LP_OK;
    for (int i = 0; i < a->warmup; i++) {
        if (atomic_exchange(&s->stop, 0)) {
            note_interrupted(s, 0, a->iterations);
            session_progress(s, LP_PHASE_DONE, 0, a->iterations);
            return session_sync_report(s);
        }
        if ((rc = run_forward(s, SESSION_FWD_UNPROFILED, NULL))) return rc;
        session_progress(s, LP_PHASE_WARMUP, i + 1, a->warmup);
    }
    session_progress(s, LP_PHASE_PROFILE, 0, a->iterations);
    for (int i = 0; i < a->iterations && !rc; i++) {
        if (atomic_exchange(&s->stop, 0)) {
            note_interrupted(s, i, a->iterations);
            break;
        }
        /* Only the last forward's output is kept: an earlier one's goes at once. */
        if (a->output) free(a->output->bytes);
        if ((rc = run_forward(s, SESSION_FWD_KEEP_HOOKS, a->output))) break;
        session_progress(s, LP_PHASE_PROFILE, i + 1, a->iterations);
        rc = session_end_step(s); /* each forward is a step */
    }
    int hrc = session_hooks_remove(s);
    if (!rc) rc = hrc;
    atomic_store(&s->dirty, 1);
    int frc = session_sync_report(s);
    session_progress(s, LP_PHASE_DONE, a->iterations, a->iterations);
    return rc ? rc : frc;
}

int lp_session_run(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_run: session is NULL");
    int rc = check_can_run(s, "lp_session_run");
    if (rc) return rc;
    run_args a = {s->opts.warmup, s->opts.iterations, NULL};
    return run_forwards(s, &a);
}

int lp_session_forward(lp_session *s, void **output, size_t *output_size) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward: session is NULL");
    if (output && !output_size)
        return lp_error_set(LP_ERR_INVALID, "lp_session_forward: output_size is NULL");
    if (output) *output = NULL;
    if (output_size) *output_size = 0;
    int rc = check_can_run(s, "lp_session_forward");
    if (rc) return rc;
    session_output kept = {NULL, 0};
    rc = run_forward(s, SESSION_FWD_SAMPLED, output ? &kept : NULL);
    if (!rc && output) {
        *output = kept.bytes;
        *output_size = kept.size;
    }
    return rc;
}

int lp_session_input_set(lp_session *s, size_t index, const void *data, size_t bytes) {
    if (!s || (!data && bytes))
        return lp_error_set(LP_ERR_INVALID, "lp_session_input_set: NULL argument");
    if (!s->tensors) return check_can_run(s, "lp_session_input_set");
    return lps_inputs_set(s->tensors, index, data, bytes);
}

int lp_session_forward_output(lp_session *s, int profiled, void **bytes, size_t *size) {
    if (!s || !bytes || !size)
        return lp_error_set(LP_ERR_INVALID, "lp_session_forward_output: NULL argument");
    *bytes = NULL;
    *size = 0;
    int rc = check_can_run(s, "lp_session_forward_output");
    if (rc) return rc;
    session_output kept = {NULL, 0};
    if (!profiled) {
        rc = run_forward(s, SESSION_FWD_UNPROFILED, &kept);
    } else {
        /* A run of one iteration without warm-up, so the forward is exactly what a run
         * measures, with its output kept. */
        run_args a = {0, 1, &kept};
        rc = run_forwards(s, &a);
        if (rc == LP_OK && !kept.bytes)
            rc = lp_error_set(LP_ERR_STATE, "lp_session_forward_output: the forward did not run");
    }
    if (rc) {
        free(kept.bytes);
        return rc;
    }
    *bytes = kept.bytes;
    *size = kept.size;
    return LP_OK;
}

/* session_run.c: running forwards: the shim's hooks around them, warm-up and profiled
 * iterations, single forwards in a program's own loop, and forwards whose output is kept. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/session_internal.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/units.h"

void session_progress(const lp_session *s, lp_phase phase, int done, int total) {
    if (!s->opts.progress) return;
    lp_progress p = {phase, done, total};
    s->opts.progress(&p, s->opts.progress_payload);
}

int session_forward_once(lp_session *s, int profiled, session_output *output) {
    if (output) *output = (session_output){NULL, 0};
    int rc = output ? lps_forward_output(s->model, s->tensors, &output->bytes, &output->size)
                    : lps_forward(s->model, s->tensors);
    if (rc) {
        lp_collector_reset_stacks(s->collector);
        return rc;
    }
    if (!profiled) return LP_OK;
    atomic_fetch_add(&s->forwards_sampled, 1);
    s->driver_ns += lps_last_forward_ns(s->model);
    s->synced_ns += lps_last_synced_ns(s->model);
    atomic_store(&s->dirty, 1);
    rc = lp_cuda_prof_iteration_done(s->cuda, s->collector);
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

int lp_session_request_stop(lp_session *s) {
    if (!s) return LP_ERR_INVALID; /* no message: lp_error_set is not async-signal-safe */
    atomic_store(&s->stop, 1);
    return LP_OK;
}

/* A stop request honoured after `done` of `want` profiled iterations: said in every report. */
static void note_interrupted(lp_session *s, int done, int want) {
    char what[64];
    snprintf(what, sizeof what, "%d of %d", done, want);
    session_add_note(s, "interrupted: stopped after %s profiled iterations; the figures are theirs",
                     what);
}

int session_run_forwards(lp_session *s, const session_run_args *a) {
    lp_format_date((long long)time(NULL), s->date, sizeof s->date);
    session_progress(s, LP_PHASE_WARMUP, 0, a->warmup);
    int rc = LP_OK;
    for (int i = 0; i < a->warmup; i++) {
        if (atomic_exchange(&s->stop, 0)) {
            note_interrupted(s, 0, a->iterations);
            session_progress(s, LP_PHASE_DONE, 0, a->iterations);
            return session_sync_report(s);
        }
        if ((rc = session_forward_once(s, 0, NULL))) return rc;
        session_progress(s, LP_PHASE_WARMUP, i + 1, a->warmup);
    }
    session_progress(s, LP_PHASE_PROFILE, 0, a->iterations);
    if ((rc = session_target_for_forward(s))) return rc;
    for (int i = 0; i < a->iterations && !rc; i++) {
        if (atomic_exchange(&s->stop, 0)) {
            note_interrupted(s, i, a->iterations);
            break;
        }
        int profiled = session_profiling_now(s);
        atomic_fetch_add(&s->forwards_seen, 1);
        rc = profiled ? session_apply_pending_clear(s) : LP_OK;
        if (!rc) rc = profiled ? session_hooks_install(s) : session_hooks_remove(s);
        if (!rc) {
            /* Only the last forward's output is kept: an earlier one's goes at once. */
            if (a->output) free(a->output->bytes);
            rc = session_forward_once(s, profiled, a->output);
        }
        if (rc) break;
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
    session_run_args a = {s->opts.warmup, s->opts.iterations, NULL};
    return session_run_forwards(s, &a);
}

int lp_session_forward(lp_session *s, void **output, size_t *output_size) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward: session is NULL");
    if (output && !output_size)
        return lp_error_set(LP_ERR_INVALID, "lp_session_forward: output_size is NULL");
    if (output) *output = NULL;
    if (output_size) *output_size = 0;
    int rc = check_can_run(s, "lp_session_forward");
    if (rc) return rc;
    int profiled = session_profiling_now(s) && session_sample(s);
    atomic_fetch_add(&s->forwards_seen, 1);
    rc = profiled ? session_apply_pending_clear(s) : LP_OK;
    if (!rc && profiled) rc = session_target_for_forward(s);
    if (!rc && profiled) rc = session_hooks_install(s);
    session_output kept = {NULL, 0};
    uint64_t t0 = s->sampler.budget > 0 ? lp_now_ns() : 0; /* the budget's measured costs */
    if (!rc) rc = session_forward_once(s, profiled, output ? &kept : NULL);
    if (!rc && s->sampler.budget > 0) lp_sampler_observe(&s->sampler, profiled, lp_now_ns() - t0);
    int hrc =
        session_hooks_remove(s); /* hooks stay only for the forward: other code runs unobserved */
    if (!rc) rc = hrc;
    if (rc) {
        free(kept.bytes);
    } else if (output) {
        *output = kept.bytes;
        *output_size = kept.size;
    }
    return rc;
}

int lp_session_set_input(lp_session *s, size_t index, const void *data, size_t bytes) {
    if (!s || (!data && bytes))
        return lp_error_set(LP_ERR_INVALID, "lp_session_set_input: NULL argument");
    if (!s->tensors) return check_can_run(s, "lp_session_set_input");
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
        rc = session_forward_once(s, 0, &kept);
    } else {
        /* A run of one iteration without warm-up, so the forward is exactly what a run
         * measures, with its output kept. */
        session_run_args a = {0, 1, &kept};
        rc = session_run_forwards(s, &a);
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

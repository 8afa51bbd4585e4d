/* session_steps.c: steps and torch.profiler's schedule: which step is recorded, cycles that
 * complete (the callback and the outputs named per cycle), enabling and disabling. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "api/session_internal.h"
#include "base/error.h"
#include "config/schedule.h"

/* A cycle completed: its figures go to the callback and to the outputs named per cycle. */
int session_cycle_done(lp_session *s, int cycle) {
    int rc = session_hooks_remove(s);
    atomic_store(&s->dirty, 1);
    if (!rc) rc = session_sync_report(s);
    if (rc) return rc;
    s->cycles_done = cycle;
    s->partial_cycle = 0;
    if (s->opts.on_cycle) s->opts.on_cycle(s, cycle, s->opts.on_cycle_payload);
    for (size_t i = 0; i < s->opts.n_outputs && !rc; i++) {
        if (!session_is_cycle_output(s, &s->outputs[i])) continue;
        char file[LP_PATH_MAX];
        lp_output_spec o = s->outputs[i];
        if (!(rc = session_cycle_file(o.file, cycle, file, sizeof file))) {
            o.file = file;
            rc = session_write_one(s, &o);
        }
    }
    return rc;
}

/* Whether the step now starting is profiled. A cycle's warm-up starts fresh, and so does its
 * first active step (dropping the warm-up). */
int session_start_step(lp_session *s) {
    const lp_schedule *sc = &s->opts.schedule;
    lp_sched_phase phase = lp_sched_phase_of(sc, s->step);
    atomic_store(&s->sched_profiled, lp_sched_profiled(phase));
    /* The timeline holds the first trace_iterations recorded steps, regions included. */
    s->step_traced = atomic_load(&s->enabled) && lp_sched_profiled(phase) &&
                     s->trace_done < session_trace_cap(s);
    lp_collector_set_tracing(s->collector, s->step_traced);
    if (!lp_sched_on(sc)) return LP_OK;
    int warmup_starts = phase == LP_SCHED_WARMUP &&
                        (s->step == 0 || lp_sched_phase_of(sc, s->step - 1) != LP_SCHED_WARMUP);
    if (warmup_starts || lp_sched_starts_active(sc, s->step)) s->clear_pending = 1;
    return LP_OK;
}

/* Before the first recording of a step that starts fresh. Driving thread. */
int session_apply_pending_clear(lp_session *s) {
    if (!s->clear_pending) return LP_OK;
    s->clear_pending = 0;
    s->partial_cycle = 1;
    return session_clear_figures(s);
}

int session_end_step(lp_session *s) {
    const lp_schedule *sc = &s->opts.schedule;
    int rc = LP_OK;
    /* A disabled session's steps record nothing: counting them would dilute every mean. */
    if (atomic_load(&s->sched_profiled) && atomic_load(&s->enabled)) {
        s->trace_done += s->step_traced;
        lp_recording_count_step(&s->rec);
        atomic_store(&s->dirty, 1);
    }
    if (lp_sched_on(sc) && lp_sched_ends_cycle(sc, s->step))
        rc = session_cycle_done(s, lp_sched_cycle_of(sc, s->step));
    s->step++;
    int src = session_start_step(s);
    return rc ? rc : src;
}

/* Recorded now: the session and schedule say so, and no placeholder region is innermost. */
int session_profiling_now(lp_session *s) {
    return atomic_load(&s->enabled) && atomic_load(&s->sched_profiled) &&
           lp_collector_region_recording(s->collector);
}

int lp_session_step(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_step: session is NULL");
    /* Any thread of a live session: its profiled forwards are its iterations (session_merge.c),
     * and it has no schedule to move on. */
    if (s->live) return LP_OK;
    return session_end_step(s);
}

int lp_session_enable(lp_session *s, int enabled) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_enable: session is NULL");
    atomic_store(&s->enabled, enabled != 0);
    return LP_OK;
}

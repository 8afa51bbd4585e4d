/* session_steps.c: what is recorded when: steps and torch.profiler's schedule (which step is
 * recorded, cycles that complete: the callback and the outputs named per cycle), enabling and
 * disabling, and regions and contexts, the program's own code segments (docs/regions.md). */
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
    /* A disabled session's steps record nothing: counting them would dilute every mean. Nor do
     * those whose forwards the sampler all left out, unless a region recorded in them (regions
     * are not sampled: their figures are per step). */
    int sampled_out =
        s->step_forwards_decided && !s->step_forwards_sampled && !s->step_region_recorded;
    s->step_forwards_decided = s->step_forwards_sampled = s->step_region_recorded = 0;
    if (atomic_load(&s->sched_profiled) && atomic_load(&s->enabled) && !sampled_out) {
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
    /* Any thread of a live session: its profiled forwards are its iterations (session_recording.c),
     * and it has no schedule to move on. */
    if (s->live) return LP_OK;
    return session_end_step(s);
}

int lp_session_enable(lp_session *s, int enabled) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_enable: session is NULL");
    atomic_store(&s->enabled, enabled != 0);
    return LP_OK;
}

/* Region and context names become path segments: "main/preprocess". */
static int check_name(const char *what, const char *name, const char *caller) {
    if (!name) return lp_error_set(LP_ERR_INVALID, "%s: the %s name is NULL", caller, what);
    if (!*name || strchr(name, '/'))
        return lp_error_set(LP_ERR_INVALID,
                            "%s: bad %s name '%s' (it must be non-empty, without '/')", caller,
                            what, name);
    return LP_OK;
}

static int32_t context_id(lp_session *s, const char *context) {
    if (strcmp(context, "main") == 0 && s->main_context >= 0) return s->main_context;
    int32_t id = lp_region_intern(s->collector, -1, context);
    if (id >= 0 && strcmp(context, "main") == 0) s->main_context = id;
    return id;
}

/* A new region's name: a path segment ("main/preprocess") that no module path under its parent
 * can be ("main/stem" when forwards run in "main"), so every path names one node. */
static int check_new_region(const lp_session *s, const char *name, const char *caller) {
    int rc = check_name("region", name, caller);
    if (rc) return rc;
    for (int32_t m = s->tree.nodes[0].first_child; m >= 0; m = s->tree.nodes[m].next_sibling)
        if (strcmp(s->tree.nodes[m].path, name) == 0)
            return lp_error_set(LP_ERR_INVALID,
                                "%s: region name '%s' is also a module of the model: a forward's "
                                "'%s' would have the same path; pick another name",
                                caller, name, name);
    return LP_OK;
}

static int region_open(lp_session *s, int32_t parent, const char *name, const char *caller) {
    if (lp_region_find(s->collector, parent, name) < 0) { /* first sight: the checks, once */
        int rc = check_new_region(s, name, caller);
        if (rc) return rc;
    }
    int32_t id = lp_region_intern(s->collector, parent, name);
    if (id < 0) return id;
    const lp_region_entry *e = lp_region_get(s->collector, id);
    int record =
        session_profiling_now(s) && atomic_load(&lp_region_get(s->collector, e->context)->enabled);
    int rc = record ? session_apply_pending_clear(s) : LP_OK;
    if (!rc) rc = lp_ev_region_begin(s->collector, id, record);
    if (!rc && record && !s->live) s->step_region_recorded = 1;
    if (!rc) atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
    return rc;
}

int lp_session_region_begin(lp_session *s, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_region_begin: session is NULL");
    if (!name)
        return lp_error_set(LP_ERR_INVALID, "lp_session_region_begin: the region name is NULL");
    int32_t parent = lp_collector_open_region(s->collector);
    if (parent < 0 && (parent = context_id(s, "main")) < 0) return parent;
    return region_open(s, parent, name, "lp_session_region_begin");
}

int lp_session_region_begin_in(lp_session *s, const char *context, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_region_begin_in: session is NULL");
    int rc = check_name("context", context, "lp_session_region_begin_in");
    if (rc) return rc;
    if (!name)
        return lp_error_set(LP_ERR_INVALID, "lp_session_region_begin_in: the region name is NULL");
    int32_t ctx = context_id(s, context);
    if (ctx < 0) return ctx;
    int32_t parent = lp_collector_open_region(s->collector);
    if (parent >= 0 && lp_region_get(s->collector, parent)->context != ctx) {
        const lp_region_entry *open = lp_region_get(s->collector, parent);
        return lp_error_set(
            LP_ERR_STATE,
            "lp_session_region_begin_in('%s', '%s'): region '%s' of context '%s' is open: "
            "a region nests only in its own context",
            context, name, open->name, lp_region_get(s->collector, open->context)->name);
    }
    return region_open(s, parent >= 0 ? parent : ctx, name, "lp_session_region_begin_in");
}

int lp_session_region_end(lp_session *s, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_region_end: session is NULL");
    int rc = lp_ev_region_end(s->collector, name);
    if (!rc) atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
    return rc;
}

int lp_session_context_enable(lp_session *s, const char *context, int enabled) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_context_enable: session is NULL");
    int rc = check_name("context", context, "lp_session_context_enable");
    if (rc) return rc;
    int32_t id = context_id(s, context);
    if (id < 0) return id;
    lp_region_set_enabled(s->collector, id, enabled);
    return LP_OK;
}

/* session_recording.c: the session's recording: the shim's hooks on the driving thread, which
 * deliver the events straight to the collector's sink, and CUDA timing around them; when the
 * recording is finished into the report, and cleared. collect/recording.h does those two; the
 * session adds what it alone knows: how many iterations the timeline holds, and the note when the
 * timeline's buffers filled up. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "api/session_internal.h"
#include "api/session_config.h"
#include "base/error.h"

int session_hooks_install(lp_session *s) {
    if (s->hooks_on) return LP_OK;
    lp_event_sink sink; /* the shim delivers straight to the collector */
    lp_collector_sink(s->collector, &sink);
    unsigned hooks = session_config_hooks(&s->opts, s->flops);
    int rc = lps_profile_begin(s->model, &sink, hooks);
    if (rc) return rc;
    if ((rc = lp_cuda_prof_begin(s->cuda))) {
        lps_profile_end(s->model);
        return rc;
    }
    s->hooks_on = 1;
    return LP_OK;
}

int session_hooks_remove(lp_session *s) {
    if (!s->hooks_on) return LP_OK;
    lps_profile_end(s->model);
    s->hooks_on = 0;
    return lp_cuda_prof_end(s->cuda, s->collector);
}

/* Once per session: a timeline that lost spans or memory samples says so under the table. */
static void note_trace_full(lp_session *s) {
    const lp_timeline *tl = lp_collector_timeline(s->collector);
    if (!tl->recorded || !(tl->lost_spans || tl->lost_mem) || s->trace_full_noted) return;
    s->trace_full_noted = 1;
    char msg[200];
    snprintf(msg, sizeof msg,
             "%llu spans and %llu memory samples were not recorded: a thread's buffer was full",
             (unsigned long long)tl->lost_spans, (unsigned long long)tl->lost_mem);
    session_add_note(s, "note: the trace buffer filled up; %s", msg);
}

/* Merges what the threads recorded into the trees, and recomposes the report when regions exist.
 * Driving thread, with no forward running and no region call in flight on another thread. */
int session_sync_report(lp_session *s) {
    if (!atomic_exchange(&s->dirty, 0)) return LP_OK;
    /* A live session's profiled forwards are its iterations (its steps count nothing). */
    for (uint64_t now = atomic_load(&s->live_profiled); s->live_counted < now; s->live_counted++)
        lp_recording_count_step(&s->rec);
    s->driver_ns += atomic_exchange(&s->live_driver_ns, 0);
    int rc = lp_recording_finish(&s->rec, (uint64_t)s->trace_done);
    if (rc) return rc;
    note_trace_full(s);
    return LP_OK;
}

/* The tree every reader sees: the module tree, or the composed one once regions exist, with what
 * was recorded since the last read merged first. Merging here, not after every forward, step and
 * region end, keeps those cheap (docs/architecture.md). A live session's forwards write their
 * threads' figures while they run: no merge then. */
int session_report_tree(lp_session *s, const lp_tree **out, const char *reader) {
    *out = NULL;
    if (s->live && atomic_load(&s->live_open))
        return lp_error_set(LP_ERR_STATE,
                            "%s: a live forward is open: read once the forwards "
                            "finished (only the openmetrics format renders meanwhile)",
                            reader);
    int rc = session_sync_report(s);
    if (!rc) *out = lp_recording_report(&s->rec);
    return rc;
}

/* Points the collector at the tree of the region the next forward runs in. */
int session_target_for_forward(lp_session *s) {
    return lp_recording_target(&s->rec);
}

/* A schedule's fresh start: every figure recorded so far is dropped. */
int session_clear_figures(lp_session *s) {
    atomic_store(&s->dirty, 1);
    int rc = session_sync_report(s); /* no thread keeps figures that the clear would miss */
    if (rc) return rc;
    lp_recording_clear(&s->rec);
    s->driver_ns = 0;
    s->synced_ns = 0;
    atomic_store(&s->dirty, 1);
    return LP_OK;
}

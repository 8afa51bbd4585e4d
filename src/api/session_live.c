/* session_live.c: live forwards: a session whose forwards run on several threads at once
 * (lp_session_forward_begin/_end), each profiled or not as the sampler decides, while another
 * thread renders the exposition (docs/sampling.md). Each goes through the one lifecycle
 * (session_forward.c) with SESSION_FWD_LIVE, which keeps it off the driving thread's state.
 *
 * What a forward on the live path touches of the session: the sampler (an atomic add, and in
 * budget mode two running means), counters (atomic adds, and one compare-and-swap for the
 * early-forward note), and the calling thread's own state (a thread-local struct below, the
 * collector's per-thread state). No lock, nothing another forward writes non-atomically, nothing
 * the reader writes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "api/session_internal.h"
#include "base/error.h"
#include "base/thread_local.h"
#include "config/schedule.h"

/* Session ids, so that a thread's state never carries over to another session opened at the same
 * address (here, and the sampler's generator in session_forward.c). */
static _Atomic uint64_t next_session_id = 1;

/* The calling thread's open forward of a live session. */
typedef struct live_thread {
    int open; /* a forward of session `open_id` is open on this thread */
    uint64_t open_id;
    session_forward fwd;
    lps_live_forward shim;
} live_thread;
static LP_THREAD_LOCAL live_thread t_live;

int session_live_setup(lp_session *s) {
    s->live_id = atomic_fetch_add(&next_session_id, 1);
    lp_sampler_init(&s->sampler, s->opts.sample_every, s->opts.sample_probability,
                    s->opts.sample_budget, s->opts.seed);
    /* Module times only, from the markers: every other recording installs thread-local hooks
     * or keeps per-forward state on the session (docs/sampling.md). */
    s->live = s->attached && s->opts.mode != LP_MODE_HOOKS && !s->pt2 && !s->opts.events &&
              !s->opts.memory && !s->flops && !s->out_shape && !s->opts.trace && !s->cuda &&
              !lp_sched_on(&s->opts.schedule) && lp_collector_timeline(s->collector)->recorded == 0;
    if (!s->live) return LP_OK;
    lp_event_sink sink;
    lp_collector_sink(s->collector, &sink);
    return lps_live_prepare(s->model, &sink);
}

int session_live_begin(lp_session *s) {
    if (t_live.open)
        return lp_error_set(LP_ERR_STATE,
                            t_live.open_id == s->live_id
                                ? "lp_session_forward_begin: a forward is already open on this "
                                  "thread: end it first (lp_session_forward_end)"
                                : "lp_session_forward_begin: a forward of another session is open "
                                  "on this thread: end it first");
    if (lp_collector_open_region(s->collector) >= 0)
        return lp_error_set(LP_ERR_STATE,
                            "lp_session_forward_begin: a live session's forwards do not run in "
                            "regions (docs/sampling.md): end the region first");
    session_forward *f = &t_live.fwd;
    int rc =
        session_forward_begin(s, f, SESSION_FWD_LIVE | SESSION_FWD_SAMPLED | SESSION_FWD_PROGRAM);
    if (!rc && (rc = lps_live_enter(s->model, f->profiled, &t_live.shim)))
        session_forward_end(s, f, 0, 0, 0);
    if (rc) return rc;
    t_live.open = 1;
    t_live.open_id = s->live_id;
    atomic_fetch_add_explicit(&s->live_open, 1, memory_order_relaxed);
    return LP_OK;
}

int session_live_end(lp_session *s, int completed) {
    if (!t_live.open || t_live.open_id != s->live_id)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_end: no forward is open on this "
                                          "thread (lp_session_forward_begin was not called)");
    t_live.open = 0;
    atomic_fetch_sub_explicit(&s->live_open, 1, memory_order_relaxed);
    uint64_t ns = 0;
    int rc = lps_live_leave(s->model, &t_live.shim, completed, &ns);
    int erc = session_forward_end(s, &t_live.fwd, completed && !rc, ns, 0);
    return rc ? rc : erc;
}

/* session_live.c: sampling, and live forwards: a session whose forwards run on several threads
 * at once (lp_session_forward_begin/_end), each profiled or not as the sampler decides, while
 * another thread renders the exposition (docs/sampling.md).
 *
 * What a forward on the live path touches of the session: the sampler (an atomic add, and in
 * budget mode two running means), two counters (atomic adds), and the calling thread's own
 * state (a thread-local struct below, the collector's per-thread state). No lock, nothing another
 * forward writes non-atomically, nothing the reader writes. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "api/session_internal.h"
#include "base/clock.h"
#include "base/error.h"
#include "config/schedule.h"

/* Session ids, so that a thread's state never carries over to another session opened at the same
 * address. */
static _Atomic uint64_t next_session_id = 1;
static _Atomic uint64_t next_thread_index = 0;

/* The calling thread's forward of a live session, and its generator for the sampler. */
typedef struct live_thread {
    uint64_t session_id; /* whose generator `rng` is (0: none yet) */
    uint64_t rng;
    int open; /* a forward of session `open_id` is open on this thread */
    uint64_t open_id;
    int profiled;
    uint64_t ordinal; /* the forward's number, from 1, among the session's */
    uint64_t t0;      /* budget mode: the forward's start */
    lps_live_forward shim;
} live_thread;
static _Thread_local live_thread t_live;

static uint64_t *thread_rng(lp_session *s) {
    if (t_live.session_id != s->live_id) {
        t_live.session_id = s->live_id;
        t_live.rng = lp_sampler_rng_seed(&s->sampler, atomic_fetch_add(&next_thread_index, 1));
    }
    return &t_live.rng;
}

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

int session_sample(lp_session *s) {
    return lp_sampler_decide(&s->sampler, thread_rng(s));
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
    int profiled = atomic_load_explicit(&s->enabled, memory_order_relaxed) && session_sample(s);
    int rc = lps_live_enter(s->model, profiled, &t_live.shim);
    if (rc) return rc;
    t_live.ordinal = atomic_fetch_add_explicit(&s->forwards_seen, 1, memory_order_relaxed) + 1;
    t_live.open = 1;
    t_live.open_id = s->live_id;
    t_live.profiled = profiled;
    t_live.t0 = s->sampler.budget > 0 ? lp_now_ns() : 0;
    atomic_fetch_add_explicit(&s->live_open, 1, memory_order_relaxed);
    return LP_OK;
}

/* As session_attach.c says it for one thread: TorchScript optimises during the first 3 forwards.
 * Once per session, by whichever thread gets there first. */
static void note_early_forward(lp_session *s, uint64_t ordinal) {
    if (atomic_exchange(&s->live_early_noted, 1)) return;
    char n[24];
    snprintf(n, sizeof n, "%llu", (unsigned long long)ordinal);
    session_add_note(
        s,
        "note: forward %s after attaching was profiled: TorchScript optimises a module "
        "during its first 3 forwards, so run those unprofiled first "
        "(layerprof::Session::warmup)",
        n);
}

int session_live_end(lp_session *s, int completed) {
    if (!t_live.open || t_live.open_id != s->live_id)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_end: no forward is open on this "
                                          "thread (lp_session_forward_begin was not called)");
    t_live.open = 0;
    atomic_fetch_sub_explicit(&s->live_open, 1, memory_order_relaxed);
    uint64_t ns = 0;
    int rc = lps_live_leave(s->model, &t_live.shim, completed, &ns);
    if (t_live.profiled && (rc || !completed)) {
        lp_collector_reset_calling_thread(s->collector); /* what the failed forward left open */
    } else if (t_live.profiled) {
        atomic_fetch_add_explicit(&s->forwards_sampled, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->live_profiled, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->live_driver_ns, ns, memory_order_relaxed);
        if (!atomic_load_explicit(&s->dirty, memory_order_relaxed))
            atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
        if (t_live.ordinal <= 3) note_early_forward(s, t_live.ordinal);
    }
    if (s->sampler.budget > 0 && completed && !rc)
        lp_sampler_observe(&s->sampler, t_live.profiled, lp_now_ns() - t_live.t0);
    return rc;
}

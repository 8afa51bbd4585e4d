/* cuda_prof.c: which way CUDA time is measured (CUPTI activity records, or the shim's CUDA events)
 * and NVTX ranges, and their life over a session, behind the collector's scope hooks. See
 * cuda_prof.h; the methods are cupti.c, cuda_events.c and nvtx.c.
 *
 * The hot path (scope enter/exit) is a push or pop of a 64-bit id: no lock, no allocation. */
#include "collect/cuda_prof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "collect/cupti.h"
#include "collect/nvtx.h"

enum { METHOD_NONE = 0, METHOD_CUPTI, METHOD_EVENTS };

struct lp_cuda_prof {
    lp_cuda_prof_config cfg;
    lp_cuda_events_backend events; /* copied: the config's pointer need not outlive open */
    int method;
    char fallback[200]; /* why CUPTI was not used, when auto fell back to events */
    int began;
    uint64_t events_lost; /* calls the events fallback could not time */
    lp_cuda_spans spans;  /* the events fallback's spans of one forward, reused */
    lp_cuda_join_stats stats;
    lp_cupti *cupti; /* claimed at open for METHOD_CUPTI */
    lp_nvtx *nvtx;   /* cfg.nvtx */
};

/* ---- hooks (hot path) ---------------------------------------------------------------------------
 */

static void scope_enter_hook(void *ctx, uint64_t scope, int32_t module, const char *op_name) {
    lp_cuda_prof *p = ctx;
    if (p->nvtx) lp_nvtx_push(p->nvtx, module, op_name);
    if (p->method == METHOD_EVENTS)
        p->events.push(p->events.ctx, scope);
    else if (p->method == METHOD_CUPTI)
        lp_cupti_push(p->cupti, scope);
}

static void scope_exit_hook(void *ctx, uint64_t scope) {
    lp_cuda_prof *p = ctx;
    if (p->method == METHOD_EVENTS)
        p->events.pop(p->events.ctx, scope);
    else if (p->method == METHOD_CUPTI)
        lp_cupti_pop(p->cupti, scope);
    if (p->nvtx) lp_nvtx_pop(p->nvtx);
}

/* ---- session ------------------------------------------------------------------------------------
 */

static int use_events(lp_cuda_prof *p) {
    if (!p->events.begin)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "CUDA events timing is not available: the libtorch this build uses "
                            "has no CUDA support");
    p->method = METHOD_EVENTS;
    return LP_OK;
}

int lp_cuda_prof_open(lp_cuda_prof **out, const lp_cuda_prof_config *cfg) {
    if (!out || !cfg) return lp_error_set(LP_ERR_INVALID, "lp_cuda_prof_open: NULL argument");
    *out = NULL;
    if ((int)cfg->timing < LP_CUDA_TIMING_AUTO || cfg->timing > LP_CUDA_TIMING_OFF)
        return lp_error_set(LP_ERR_INVALID, "unknown CUDA timing %d (auto, cupti, events or off)",
                            cfg->timing);
    int timing = cfg->cuda_device && cfg->timing != LP_CUDA_TIMING_OFF;
    if (!timing && !cfg->nvtx) return LP_OK;
    lp_cuda_prof *p = calloc(1, sizeof *p);
    if (!p) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    p->cfg = *cfg;
    if (cfg->events) p->events = *cfg->events;
    p->cfg.events = NULL;
    int rc = LP_OK;
    if (cfg->nvtx && (rc = lp_nvtx_open(&p->nvtx, cfg->tree))) goto fail;
    if (timing && cfg->timing == LP_CUDA_TIMING_EVENTS) {
        rc = use_events(p);
    } else if (timing) {
        char why[200];
        if ((p->cupti = lp_cupti_claim(why, sizeof why))) {
            p->method = METHOD_CUPTI;
        } else if (cfg->timing == LP_CUDA_TIMING_CUPTI) {
            rc = lp_error_set(LP_ERR_UNSUPPORTED, "CUPTI is not available: %s", why);
        } else if ((rc = use_events(p)) == LP_OK) {
            snprintf(p->fallback, sizeof p->fallback, "%s", why);
        } else {
            rc = lp_error_set(LP_ERR_UNSUPPORTED,
                              "no way to time CUDA kernels: CUPTI is not available (%s) and "
                              "this libtorch has no CUDA events; use --cuda-timing off",
                              why);
        }
    }
    if (rc) goto fail;
    *out = p;
    return LP_OK;
fail:
    lp_cuda_prof_close(p);
    return rc;
}

void lp_cuda_prof_close(lp_cuda_prof *p) {
    if (!p) return;
    if (p->began && p->method == METHOD_EVENTS && p->events.end) p->events.end(p->events.ctx);
    lp_cupti_release(p->cupti);
    lp_nvtx_close(p->nvtx);
    lp_cuda_spans_free(&p->spans);
    free(p);
}

int lp_cuda_prof_timing(const lp_cuda_prof *p) {
    return p && p->method != METHOD_NONE;
}

const char *lp_cuda_prof_method(const lp_cuda_prof *p) {
    if (!p || p->method == METHOD_NONE) return "off";
    return p->method == METHOD_CUPTI ? "cupti" : "events";
}

lp_scope_hooks lp_cuda_prof_hooks(lp_cuda_prof *p) {
    lp_scope_hooks h = {0};
    if (p && (p->method != METHOD_NONE || p->cfg.nvtx)) {
        h.ctx = p;
        h.enter = scope_enter_hook;
        h.exit = scope_exit_hook;
    }
    return h;
}

int lp_cuda_prof_begin(lp_cuda_prof *p) {
    if (!p || p->method == METHOD_NONE) return LP_OK;
    if (p->method == METHOD_CUPTI) {
        char why[200];
        if (lp_cupti_enable(p->cupti, why, sizeof why) == 0) return LP_OK;
        if (p->cfg.timing == LP_CUDA_TIMING_CUPTI)
            return lp_error_set(LP_ERR_UNSUPPORTED, "CUPTI is not available: %s", why);
        lp_cupti_release(p->cupti);
        p->cupti = NULL;
        p->method = METHOD_NONE;
        int rc = use_events(p);
        if (rc) return rc;
        snprintf(p->fallback, sizeof p->fallback, "%s", why);
    }
    if (p->method == METHOD_EVENTS && !p->began) {
        int rc = lp_cuda_events_begin(&p->events);
        if (rc) return rc;
        p->began = 1;
    }
    return LP_OK;
}

int lp_cuda_prof_iteration_done(lp_cuda_prof *p, lp_collector *c) {
    if (p && p->method == METHOD_CUPTI)
        return lp_cupti_iteration_done(p->cupti, lp_collector_add_cuda, c, &p->stats);
    if (!p || p->method != METHOD_EVENTS || !p->began) return LP_OK;
    uint64_t lost = 0;
    int rc = lp_cuda_events_collect(&p->events, &p->spans, lp_collector_add_cuda, c, &lost);
    p->events_lost += lost;
    return rc;
}

int lp_cuda_prof_end(lp_cuda_prof *p, lp_collector *c) {
    if (!p || p->method != METHOD_CUPTI) return LP_OK;
    return lp_cupti_flush_join(p->cupti, lp_collector_add_cuda, c, &p->stats);
}

void lp_cuda_prof_stats(const lp_cuda_prof *p, lp_cuda_join_stats *out) {
    if (p)
        *out = p->stats;
    else
        memset(out, 0, sizeof *out);
}

size_t lp_cuda_prof_notes(const lp_cuda_prof *p, char *notes, size_t size, size_t max) {
    size_t n = 0;
    if (!p || !max) return 0;
#define NOTE(...) (n < max ? (void)snprintf(notes + n++ * size, size, __VA_ARGS__) : (void)0)
    const lp_cuda_join_stats *s = &p->stats;
    if (p->method == METHOD_CUPTI) {
        NOTE("CUDA time: CUPTI activity records (%llu kernels, %llu memcpys, %llu memsets "
             "joined to their modules through %s)",
             (unsigned long long)s->kernels, (unsigned long long)s->memcpys,
             (unsigned long long)s->memsets, lp_cupti_tagging_name(lp_cupti_tagging(p->cupti)));
        if (s->unattributed)
            NOTE("note: %llu CUDA records (%.3f ms) were launched outside any profiled module "
                 "and are in no row",
                 (unsigned long long)s->unattributed, (double)s->unattributed_ns / 1e6);
        if (s->dropped)
            NOTE("warning: CUPTI dropped %llu activity records (buffers full): CUDA times are "
                 "low",
                 (unsigned long long)s->dropped);
        if (lp_cupti_tags_lost(p->cupti))
            NOTE("warning: %llu launches could not be tagged with their module (tag buffer "
                 "full): their CUDA time is in no row",
                 (unsigned long long)lp_cupti_tags_lost(p->cupti));
        uint64_t failures = lp_cupti_push_failures(p->cupti);
        if (failures)
            NOTE("warning: %llu CUPTI correlation pushes/pops failed: some CUDA time may be "
                 "misattributed",
                 (unsigned long long)failures);
    } else if (p->method == METHOD_EVENTS) {
        if (p->fallback[0])
            NOTE("CUDA time: CUDA events on the current stream (CUPTI unavailable: %s)",
                 p->fallback);
        else
            NOTE("CUDA time: CUDA events on the current stream");
        /* Every events report says it, not only the docs: the overstatement is several times
         * on a launch-bound model (docs/cuda.md has the figures). */
        NOTE("warning: CUDA-event spans include the idle gaps between launches: on a "
             "launch-bound model (small batches) every module reads high, by up to several "
             "times; CUPTI (--cuda-timing cupti) measures the kernels themselves");
        if (p->events_lost)
            NOTE("warning: %llu calls could not be timed with CUDA events (pool full or another "
                 "thread): CUDA times are low",
                 (unsigned long long)p->events_lost);
    }
    if (p->cfg.nvtx)
        NOTE("NVTX: a range per module call%s in domain 'layerprof'",
             p->cfg.ops ? " and per op" : "");
#undef NOTE
    return n;
}

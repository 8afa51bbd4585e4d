/* cupti_collector.c: CUPTI activity records (or the shim's CUDA events) and NVTX ranges behind the
 * collector's scope hooks. See cupti_collector.h.
 *
 * CUPTI is process-global: one set of buffer callbacks, one external-correlation stack per thread.
 * So one session at a time uses it (g_active), and its records go through one lock. The hot path
 * (scope enter/exit) is a push or pop of a 64-bit id: no lock, no allocation. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include "collect/cuda_prof.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#if LP_HAVE_CUPTI
#include <cupti.h>
#include <dlfcn.h>
#endif
#if LP_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

enum { METHOD_NONE = 0, METHOD_CUPTI, METHOD_EVENTS };

struct lp_cuda_prof {
    lp_cuda_prof_config cfg;
    lp_cuda_events_backend events; /* copied: the config's pointer need not outlive open */
    int method;
    char fallback[200]; /* why CUPTI was not used, when auto fell back to events */
    int began;
    uint64_t events_lost; /* calls the events fallback could not time */
    lp_cuda_join_stats stats;

    pthread_mutex_t lock; /* guards rec: CUPTI completes buffers on its own thread */
    lp_cuda_records rec;
    _Atomic uint64_t push_failures; /* any thread, on failure only */

#if LP_HAVE_CUPTI
    CUpti_SubscriberHandle subscriber;
    int subscribed;
#endif
#if LP_HAVE_NVTX
    nvtxDomainHandle_t domain;
    nvtxStringHandle_t *names; /* per module node, registered once at open */
    size_t n_names;
#endif
};

/* ---- CUPTI, opened at run time ------------------------------------------------------------------
 */

#if LP_HAVE_CUPTI

typedef struct cupti_api {
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*get_result_string)(CUptiResult, const char **);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*push)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*pop)(CUpti_ExternalCorrelationKind, uint64_t *);
} cupti_api;

static cupti_api g_cupti;
static char g_cupti_error[160];
static int g_cupti_loaded;
static pthread_once_t g_cupti_once = PTHREAD_ONCE_INIT;
static _Atomic(lp_cuda_prof *) g_active; /* the session whose records CUPTI's buffers carry */

#ifndef LP_CUPTI_LIBRARY
#define LP_CUPTI_LIBRARY ""
#endif

/* The record fields read below sit at the same offsets in every CUPTI since CUDA 11 (Kernel4 ..
 * Kernel10, Memcpy4 .. 6, Memset2 .. 4), so a newer libcupti than the headers still parses. */
#define CUPTI_MAJOR(v) ((v) >= 10000u ? (v) / 10000u : 0u)

static void cupti_load(void) {
    char soname[32];
    snprintf(soname, sizeof soname, "libcupti.so.%d", CUDA_VERSION / 1000);
    /* libtorch 2.x links libcupti (Kineto): that copy is the one CUPTI state of the process. */
    void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcupti.so", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(soname, RTLD_NOW);
    if (!h && LP_CUPTI_LIBRARY[0]) h = dlopen(LP_CUPTI_LIBRARY, RTLD_NOW);
    if (!h) {
        const char *e = dlerror();
        snprintf(g_cupti_error, sizeof g_cupti_error, "cannot load %s: %s", soname,
                 e ? e : "not found");
        return;
    }
    struct {
        const char *name;
        void **slot;
    } syms[] = {
        {"cuptiGetVersion", (void **)&g_cupti.get_version},
        {"cuptiGetResultString", (void **)&g_cupti.get_result_string},
        {"cuptiSubscribe", (void **)&g_cupti.subscribe},
        {"cuptiUnsubscribe", (void **)&g_cupti.unsubscribe},
        {"cuptiActivityRegisterCallbacks", (void **)&g_cupti.register_callbacks},
        {"cuptiActivityEnable", (void **)&g_cupti.enable},
        {"cuptiActivityDisable", (void **)&g_cupti.disable},
        {"cuptiActivityFlushAll", (void **)&g_cupti.flush_all},
        {"cuptiActivityGetNextRecord", (void **)&g_cupti.next_record},
        {"cuptiActivityGetNumDroppedRecords", (void **)&g_cupti.dropped},
        {"cuptiActivityPushExternalCorrelationId", (void **)&g_cupti.push},
        {"cuptiActivityPopExternalCorrelationId", (void **)&g_cupti.pop},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            snprintf(g_cupti_error, sizeof g_cupti_error, "libcupti lacks %s", syms[i].name);
            return;
        }
        memcpy(syms[i].slot, &p, sizeof p); /* object to function pointer, as POSIX allows */
    }
    uint32_t v = 0;
    if (g_cupti.get_version(&v) != CUPTI_SUCCESS ||
        CUPTI_MAJOR(v) != CUPTI_MAJOR(CUPTI_API_VERSION)) {
        snprintf(g_cupti_error, sizeof g_cupti_error,
                 "libcupti's API version %u does not match the headers' %u", v,
                 (unsigned)CUPTI_API_VERSION);
        return;
    }
    g_cupti_loaded = 1; /* the handle stays open for the life of the process */
}

static const char *cupti_str(CUptiResult r) {
    const char *s = NULL;
    if (g_cupti.get_result_string && g_cupti.get_result_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
    (void)userdata, (void)domain, (void)cbid, (void)data; /* subscribed only to hold CUPTI */
}

#define LP_CUPTI_BUFFER (4u << 20)

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, LP_CUPTI_BUFFER);
    *size = *buffer ? LP_CUPTI_BUFFER : 0;
    *max_records = 0;
}

/* Parses one completed buffer into plain records. Runs on CUPTI's thread or inside a flush. */
static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                         size_t size, size_t valid) {
    (void)size;
    lp_cuda_prof *p = atomic_load(&g_active);
    if (p && buffer) {
        pthread_mutex_lock(&p->lock);
        CUpti_Activity *r = NULL;
        while (g_cupti.next_record(buffer, valid, &r) == CUPTI_SUCCESS) {
            lp_cuda_activity a = {0};
            switch (r->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
                a = (lp_cuda_activity){k->start, k->end, k->correlationId, k->streamId,
                                       LP_CUDA_KERNEL};
                lp_cuda_records_add_activity(&p->rec, &a);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
                a = (lp_cuda_activity){m->start, m->end, m->correlationId, m->streamId,
                                       LP_CUDA_MEMCPY};
                lp_cuda_records_add_activity(&p->rec, &a);
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
                a = (lp_cuda_activity){m->start, m->end, m->correlationId, m->streamId,
                                       LP_CUDA_MEMSET};
                lp_cuda_records_add_activity(&p->rec, &a);
                break;
            }
            case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                const CUpti_ActivityExternalCorrelation *e =
                    (const CUpti_ActivityExternalCorrelation *)r;
                lp_cuda_ext_corr x = {(uint32_t)e->externalKind, e->correlationId, e->externalId};
                lp_cuda_records_add_ext(&p->rec, &x);
                break;
            }
            default:
                break;
            }
        }
        size_t dropped = 0;
        if (g_cupti.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS) p->rec.dropped += dropped;
        pthread_mutex_unlock(&p->lock);
    }
    free(buffer);
}

static const CUpti_ActivityKind k_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                             CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                             CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
#define N_KINDS (sizeof k_kinds / sizeof k_kinds[0])

/* Loads CUPTI and takes its one subscriber slot, so no other tool changes its state under us. */
static int cupti_claim(lp_cuda_prof *p, char *why, size_t n) {
    pthread_once(&g_cupti_once, cupti_load);
    if (!g_cupti_loaded) {
        snprintf(why, n, "%s", g_cupti_error);
        return -1;
    }
    CUptiResult r = g_cupti.subscribe(&p->subscriber, on_callback, NULL);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(why, n,
                 "CUPTI is taken by another tool (Nsight Systems/Compute, torch.profiler, a "
                 "debugger)");
        return -1;
    }
    if (r != CUPTI_SUCCESS) {
        snprintf(why, n, "cuptiSubscribe failed: %s", cupti_str(r));
        return -1;
    }
    p->subscribed = 1;
    return 0;
}

static int cupti_enable(lp_cuda_prof *p, char *why, size_t n) {
    lp_cuda_prof *expected = NULL;
    if (!atomic_compare_exchange_strong(&g_active, &expected, p) && expected != p) {
        snprintf(why, n, "CUPTI is used by another layerprof session in this process");
        return -1;
    }
    CUptiResult r = g_cupti.register_callbacks(on_buffer_requested, on_buffer_completed);
    size_t i = 0;
    for (; r == CUPTI_SUCCESS && i < N_KINDS; i++)
        r = g_cupti.enable(k_kinds[i]);
    if (r != CUPTI_SUCCESS) {
        while (i-- > 0)
            g_cupti.disable(k_kinds[i]);
        atomic_store(&g_active, NULL);
        snprintf(why, n, "CUPTI activity records: %s", cupti_str(r));
        return -1;
    }
    return 0;
}

/* Delivers every record still in CUPTI's buffers (the device is idle: forwards synchronise). */
static void cupti_flush_disable(lp_cuda_prof *p) {
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < N_KINDS; i++)
        g_cupti.disable(k_kinds[i]);
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    lp_cuda_prof *expected = p;
    atomic_compare_exchange_strong(&g_active, &expected, NULL);
}

static void cupti_release(lp_cuda_prof *p) {
    if (atomic_load(&g_active) == p) cupti_flush_disable(p);
    if (p->subscribed) g_cupti.unsubscribe(p->subscriber);
    p->subscribed = 0;
}

#endif /* LP_HAVE_CUPTI */

/* ---- hooks (hot path) ---------------------------------------------------------------------------
 */

static void scope_enter_hook(void *ctx, uint64_t scope, int32_t module, const char *op_name) {
    lp_cuda_prof *p = ctx;
#if LP_HAVE_NVTX
    if (p->cfg.nvtx) {
        nvtxEventAttributes_t a;
        memset(&a, 0, sizeof a);
        a.version = NVTX_VERSION;
        a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
        if (module >= 0 && (size_t)module < p->n_names) {
            a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
            a.message.registered = p->names[module];
        } else {
            a.messageType = NVTX_MESSAGE_TYPE_ASCII;
            a.message.ascii = op_name ? op_name : "?";
        }
        nvtxDomainRangePushEx(p->domain, &a);
    }
#else
    (void)module, (void)op_name;
#endif
    if (p->method == METHOD_EVENTS) {
        p->events.push(p->events.ctx, scope);
    }
#if LP_HAVE_CUPTI
    else if (p->method == METHOD_CUPTI) {
        if (g_cupti.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, scope) != CUPTI_SUCCESS)
            atomic_fetch_add_explicit(&p->push_failures, 1, memory_order_relaxed);
    }
#endif
}

static void scope_exit_hook(void *ctx, uint64_t scope) {
    lp_cuda_prof *p = ctx;
    if (p->method == METHOD_EVENTS) {
        p->events.pop(p->events.ctx, scope);
    }
#if LP_HAVE_CUPTI
    else if (p->method == METHOD_CUPTI) {
        uint64_t last = 0;
        if (g_cupti.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last) != CUPTI_SUCCESS ||
            last != scope)
            atomic_fetch_add_explicit(&p->push_failures, 1, memory_order_relaxed);
    }
#endif
#if LP_HAVE_NVTX
    if (p->cfg.nvtx) nvtxDomainRangePop(p->domain);
#endif
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

#if LP_HAVE_NVTX
static int nvtx_open(lp_cuda_prof *p) {
    const lp_tree *t = p->cfg.tree;
    p->domain = nvtxDomainCreateA("layerprof");
    p->n_names = t ? t->n_nodes : 0;
    p->names = calloc(p->n_names ? p->n_names : 1, sizeof *p->names);
    if (!p->names) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    /* Built once here, never on the hot path: the root by its class, the rest by dotted path. */
    for (size_t i = 0; i < p->n_names; i++) {
        const lp_tree_node *n = &t->nodes[i];
        p->names[i] = nvtxDomainRegisterStringA(p->domain, n->parent < 0 ? n->name : n->path);
    }
    return LP_OK;
}
#endif

int lp_cuda_prof_open(lp_cuda_prof **out, const lp_cuda_prof_config *cfg) {
    if (!out || !cfg) return lp_error_set(LP_ERR_INVALID, "lp_cuda_prof_open: NULL argument");
    *out = NULL;
    if ((int)cfg->timing < LP_CUDA_TIMING_AUTO || cfg->timing > LP_CUDA_TIMING_OFF)
        return lp_error_set(LP_ERR_INVALID, "unknown CUDA timing %d (auto, cupti, events or off)",
                            cfg->timing);
    int timing = cfg->cuda_device && cfg->timing != LP_CUDA_TIMING_OFF;
    if (!timing && !cfg->nvtx) return LP_OK;
#if !LP_HAVE_NVTX
    if (cfg->nvtx)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "NVTX ranges are not available: this build did not find the CUDA "
                            "Toolkit's NVTX headers");
#endif
    lp_cuda_prof *p = calloc(1, sizeof *p);
    if (!p) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    p->cfg = *cfg;
    if (cfg->events) p->events = *cfg->events;
    p->cfg.events = NULL;
    pthread_mutex_init(&p->lock, NULL);
    int rc = LP_OK;
#if LP_HAVE_NVTX
    if (cfg->nvtx && (rc = nvtx_open(p))) goto fail;
#endif
    if (timing && cfg->timing == LP_CUDA_TIMING_EVENTS) {
        rc = use_events(p);
    } else if (timing) {
        char why[200] = "this build did not find CUPTI (the CUDA Toolkit)";
#if LP_HAVE_CUPTI
        if (cupti_claim(p, why, sizeof why) == 0) p->method = METHOD_CUPTI;
#endif
        if (p->method != METHOD_CUPTI) {
            if (cfg->timing == LP_CUDA_TIMING_CUPTI)
                rc = lp_error_set(LP_ERR_UNSUPPORTED, "CUPTI is not available: %s", why);
            else if ((rc = use_events(p)) == LP_OK)
                snprintf(p->fallback, sizeof p->fallback, "%s", why);
            else
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
#if LP_HAVE_CUPTI
    if (p->method == METHOD_CUPTI || p->subscribed) cupti_release(p);
#endif
#if LP_HAVE_NVTX
    free(p->names);
#endif
    lp_cuda_records_free(&p->rec);
    pthread_mutex_destroy(&p->lock);
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

/* The backend's failure, said as the timer's: its message is the thread's error already. */
static int events_error(int rc, const char *fallback) {
    char why[512];
    const char *e = lp_error_last();
    snprintf(why, sizeof why, "%s", e && *e ? e : fallback);
    return lp_error_set(rc, "CUDA events: %s", why);
}

int lp_cuda_prof_begin(lp_cuda_prof *p) {
    if (!p || p->method == METHOD_NONE) return LP_OK;
#if LP_HAVE_CUPTI
    if (p->method == METHOD_CUPTI) {
        char why[200];
        if (cupti_enable(p, why, sizeof why) == 0) return LP_OK;
        if (p->cfg.timing == LP_CUDA_TIMING_CUPTI)
            return lp_error_set(LP_ERR_UNSUPPORTED, "CUPTI is not available: %s", why);
        cupti_release(p);
        p->method = METHOD_NONE;
        int rc = use_events(p);
        if (rc) return rc;
        snprintf(p->fallback, sizeof p->fallback, "%s", why);
    }
#endif
    if (p->method == METHOD_EVENTS && !p->began) {
        lp_error_clear();
        int rc = p->events.begin(p->events.ctx);
        if (rc) return events_error(rc, "cannot start");
        p->began = 1;
    }
    return LP_OK;
}

int lp_cuda_prof_iteration_done(lp_cuda_prof *p, lp_collector *c) {
    if (!p || p->method != METHOD_EVENTS || !p->began) return LP_OK;
    uint64_t lost = 0;
    lp_error_clear();
    int rc = p->events.collect(p->events.ctx, lp_collector_add_cuda, c, &lost);
    p->events_lost += lost;
    return rc ? events_error(rc, "cannot read the timings") : LP_OK;
}

int lp_cuda_prof_end(lp_cuda_prof *p, lp_collector *c) {
    if (!p || p->method != METHOD_CUPTI) return LP_OK;
#if LP_HAVE_CUPTI
    cupti_flush_disable(p);
    pthread_mutex_lock(&p->lock);
    int rc = lp_cuda_join(&p->rec, lp_collector_add_cuda, c, &p->stats);
    lp_cuda_records_clear(&p->rec);
    pthread_mutex_unlock(&p->lock);
    if (rc) return lp_error_set(rc, "out of memory joining CUDA activity records");
#else
    (void)c;
#endif
    return LP_OK;
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
             "joined to their modules)",
             (unsigned long long)s->kernels, (unsigned long long)s->memcpys,
             (unsigned long long)s->memsets);
        if (s->unattributed)
            NOTE("note: %llu CUDA records (%.3f ms) were launched outside any profiled module "
                 "and are in no row",
                 (unsigned long long)s->unattributed, (double)s->unattributed_ns / 1e6);
        if (s->dropped)
            NOTE("warning: CUPTI dropped %llu activity records (buffers full): CUDA times are "
                 "low",
                 (unsigned long long)s->dropped);
        uint64_t failures = atomic_load(&p->push_failures);
        if (failures)
            NOTE("warning: %llu CUPTI correlation pushes/pops failed: some CUDA time may be "
                 "misattributed",
                 (unsigned long long)failures);
    } else if (p->method == METHOD_EVENTS) {
        if (p->fallback[0])
            NOTE("CUDA time: CUDA events on the current stream (CUPTI unavailable: %s); spans "
                 "include idle gaps",
                 p->fallback);
        else
            NOTE("CUDA time: CUDA events on the current stream (spans include idle gaps)");
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

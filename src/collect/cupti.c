/* cupti.c: CUPTI activity records, opened at run time. See cupti.h. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include "collect/cupti.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/thread_block.h"
#include "base/thread_local.h"
#include "layerprof.h"

#if LP_HAVE_CUPTI
#include <cupti.h>
#include <dlfcn.h>

/* A launch as the launch callbacks saw it: CUPTI's correlation id and the scope it ran in. */
typedef struct launch_tag {
    uint32_t correlation_id;
    uint64_t scope;
} launch_tag;

/* One forward's launch tags fit many times over (resnet50 launches ~600 kernels, each seen by a
 * runtime and a driver callback); the pages are touched only as tags arrive. */
#define LP_CUPTI_TAGS (1u << 20)

struct lp_cupti {
    CUpti_SubscriberHandle subscriber;
    int tagging;          /* lp_cupti_tagging */
    pthread_mutex_t lock; /* guards rec: CUPTI completes buffers on its own thread */
    lp_cuda_records rec;
    launch_tag *tags;      /* LP_CUPTI_TAGGING_CALLBACKS: written by the launch callbacks */
    _Atomic size_t n_tags; /* slots taken, may pass LP_CUPTI_TAGS (then lost) */
    uint64_t tags_lost;    /* launches the full tag buffer could not hold */
    _Atomic uint64_t push_failures; /* any thread, on failure only */
};

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
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);
    CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **);
    /* Optional (CUPTI 12.6 and later): API records for chosen functions only. */
    CUptiResult (*enable_runtime_api)(CUpti_CallbackId, uint8_t);
    CUptiResult (*enable_driver_api)(CUpti_CallbackId, uint8_t);
} cupti_api;

/* The runtime and driver functions that put work on the device: every kernel launch (through the
 * runtime, or the driver as cuBLAS, cuDNN and Triton's kernels do), graph launch, memcpy and
 * memset. Found once by name, so a newer libcupti's new launch functions are included too. */
#define LP_CUPTI_MAX_LAUNCH_FNS 256
typedef struct launch_fn {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
} launch_fn;
static launch_fn g_launch_fns[LP_CUPTI_MAX_LAUNCH_FNS];
static size_t g_n_launch_fns;

static cupti_api g_cupti;
static char g_cupti_error[160];
static int g_cupti_loaded;
static pthread_once_t g_cupti_once = PTHREAD_ONCE_INIT;
static _Atomic(lp_cupti *) g_active; /* the session whose records CUPTI's buffers carry */

#ifndef LP_CUPTI_LIBRARY
#define LP_CUPTI_LIBRARY ""
#endif

/* The record fields read below sit at the same offsets in every CUPTI since CUDA 11 (Kernel4 ..
 * Kernel10, Memcpy4 .. 6, Memset2 .. 4), so a newer libcupti than the headers still parses. */
#define CUPTI_MAJOR(v) ((v) >= 10000u ? (v) / 10000u : 0u)

static int puts_work_on_device(const char *name) {
    return strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset");
}

static void find_launch_fns(void) {
    static const CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                   CUPTI_CB_DOMAIN_DRIVER_API};
    for (size_t d = 0; d < 2; d++) {
        /* Callback ids are dense from 1; a newer libcupti may know more than these headers. */
        for (uint32_t id = 1; id < 4096 && g_n_launch_fns < LP_CUPTI_MAX_LAUNCH_FNS; id++) {
            const char *name = NULL;
            if (g_cupti.callback_name(domains[d], id, &name) != CUPTI_SUCCESS || !name) continue;
            if (puts_work_on_device(name))
                g_launch_fns[g_n_launch_fns++] = (launch_fn){domains[d], id};
        }
    }
}

static void cupti_load(void) {
    char soname[32];
    snprintf(soname, sizeof soname, "libcupti.so.%d", CUDA_VERSION / 1000);
    /* LAYERPROF_CUPTI names another libcupti (a newer toolkit's; the unit tests' fake). Else
     * libtorch 2.x's copy (Kineto links it): that is the one CUPTI state of the process. */
    const char *forced = getenv("LAYERPROF_CUPTI");
    void *h = forced && forced[0] ? dlopen(forced, RTLD_NOW) : NULL;
    if (forced && forced[0] && !h) {
        const char *e = dlerror();
        snprintf(g_cupti_error, sizeof g_cupti_error, "cannot load LAYERPROF_CUPTI=%s: %s", forced,
                 e ? e : "not found");
        return;
    }
    if (!h) h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
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
        {"cuptiEnableCallback", (void **)&g_cupti.enable_callback},
        {"cuptiGetCallbackName", (void **)&g_cupti.callback_name},
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
    void *p = dlsym(h, "cuptiActivityEnableRuntimeApi");
    memcpy(&g_cupti.enable_runtime_api, &p, sizeof p);
    p = dlsym(h, "cuptiActivityEnableDriverApi");
    memcpy(&g_cupti.enable_driver_api, &p, sizeof p);
    find_launch_fns();
    g_cupti_loaded = 1; /* the handle stays open for the life of the process */
}

static const char *cupti_str(CUptiResult r) {
    const char *s = NULL;
    if (g_cupti.get_result_string && g_cupti.get_result_string(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

/* The launching thread's scopes (LP_CUPTI_TAGGING_CALLBACKS): the launch callbacks run on the
 * thread that launches, so the innermost scope pushed there is the one the launch belongs to. */
#define LP_CUPTI_MAX_DEPTH 256
static LP_THREAD_LOCAL uint64_t *tl_scopes; /* LP_CUPTI_MAX_DEPTH, a thread block of its own */
static LP_THREAD_LOCAL uint32_t tl_depth;

static void forget_scopes(void) {
    tl_scopes = NULL;
}
static lp_thread_block scopes_block = {.size = LP_CUPTI_MAX_DEPTH * sizeof(uint64_t),
                                       .forget = forget_scopes};

/* Hot path: called by CUPTI on entry to and exit from each enabled launch function. Only the
 * enabled functions call it (cuptiEnableCallback per function), and only while a run records. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
    (void)userdata, (void)cbid;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CUpti_CallbackData *d = data;
    uint32_t depth = tl_depth;
    if (d->callbackSite != CUPTI_API_ENTER || depth == 0 || depth > LP_CUPTI_MAX_DEPTH ||
        !tl_scopes)
        return;
    lp_cupti *p = atomic_load_explicit(&g_active, memory_order_acquire);
    if (!p || !p->tags) return;
    size_t i = atomic_fetch_add_explicit(&p->n_tags, 1, memory_order_relaxed);
    if (i < LP_CUPTI_TAGS) p->tags[i] = (launch_tag){d->correlationId, tl_scopes[depth - 1]};
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
    lp_cupti *p = atomic_load(&g_active);
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

/* Always: the device's work. The API kinds only when tagging through API records: CUPTI writes
 * an EXTERNAL_CORRELATION record only beside an API record (docs/cuda.md has the run that
 * showed it). */
static const CUpti_ActivityKind k_work_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
#define N_WORK_KINDS (sizeof k_work_kinds / sizeof k_work_kinds[0])
static const CUpti_ActivityKind k_api_kinds[] = {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                                 CUPTI_ACTIVITY_KIND_RUNTIME,
                                                 CUPTI_ACTIVITY_KIND_DRIVER};

const char *lp_cupti_tagging_name(int tagging) {
    switch (tagging) {
    case LP_CUPTI_TAGGING_CALLBACKS:
        return "launch callbacks";
    case LP_CUPTI_TAGGING_API_LAUNCHES:
        return "API records of launches";
    case LP_CUPTI_TAGGING_API_ALL:
        return "API records of every call";
    default:
        return "?";
    }
}

/* LAYERPROF_CUPTI_TAGGING: callbacks (the default), api-launches or api-all. */
static int tagging_from_env(char *why, size_t n) {
    const char *e = getenv("LAYERPROF_CUPTI_TAGGING");
    if (!e || !e[0] || !strcmp(e, "callbacks")) return LP_CUPTI_TAGGING_CALLBACKS;
    if (!strcmp(e, "api-launches")) {
        if (g_cupti.enable_runtime_api && g_cupti.enable_driver_api)
            return LP_CUPTI_TAGGING_API_LAUNCHES;
        snprintf(why, n, "LAYERPROF_CUPTI_TAGGING=api-launches needs CUPTI 12.6 or later");
        return -1;
    }
    if (!strcmp(e, "api-all")) return LP_CUPTI_TAGGING_API_ALL;
    snprintf(why, n, "LAYERPROF_CUPTI_TAGGING=%s: use callbacks, api-launches or api-all", e);
    return -1;
}

lp_cupti *lp_cupti_claim(char *why, size_t n) {
    pthread_once(&g_cupti_once, cupti_load);
    if (!g_cupti_loaded) {
        snprintf(why, n, "%s", g_cupti_error);
        return NULL;
    }
    int tagging = tagging_from_env(why, n);
    if (tagging < 0) return NULL;
    if (g_n_launch_fns == 0) {
        snprintf(why, n, "libcupti names no launch function (cuptiGetCallbackName)");
        return NULL;
    }
    lp_cupti *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    c->tagging = tagging;
    CUptiResult r = g_cupti.subscribe(&c->subscriber, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            snprintf(why, n,
                     "CUPTI is taken by another tool (Nsight Systems/Compute, torch.profiler, a "
                     "debugger)");
        else
            snprintf(why, n, "cuptiSubscribe failed: %s", cupti_str(r));
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

int lp_cupti_tagging(const lp_cupti *c) {
    return c ? c->tagging : -1;
}

/* Turns on (1) or off (0) what tags launches with their scope. */
static CUptiResult set_tagging(lp_cupti *c, uint32_t on) {
    CUptiResult r = CUPTI_SUCCESS;
    switch (c->tagging) {
    case LP_CUPTI_TAGGING_CALLBACKS:
        for (size_t i = 0; i < g_n_launch_fns && (r == CUPTI_SUCCESS || !on); i++)
            r = g_cupti.enable_callback(on, c->subscriber, g_launch_fns[i].domain,
                                        g_launch_fns[i].cbid);
        return r;
    case LP_CUPTI_TAGGING_API_LAUNCHES:
        r = on ? g_cupti.enable(k_api_kinds[0]) : g_cupti.disable(k_api_kinds[0]);
        for (size_t i = 0; i < g_n_launch_fns && (r == CUPTI_SUCCESS || !on); i++)
            r = g_launch_fns[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API
                    ? g_cupti.enable_runtime_api(g_launch_fns[i].cbid, (uint8_t)on)
                    : g_cupti.enable_driver_api(g_launch_fns[i].cbid, (uint8_t)on);
        return r;
    default:
        for (size_t i = 0; i < 3 && (r == CUPTI_SUCCESS || !on); i++)
            r = on ? g_cupti.enable(k_api_kinds[i]) : g_cupti.disable(k_api_kinds[i]);
        return r;
    }
}

int lp_cupti_enable(lp_cupti *c, char *why, size_t n) {
    lp_cupti *expected = NULL;
    if (!atomic_compare_exchange_strong(&g_active, &expected, c) && expected != c) {
        snprintf(why, n, "CUPTI is used by another layerprof session in this process");
        return -1;
    }
    if (c->tagging == LP_CUPTI_TAGGING_CALLBACKS && !c->tags &&
        !(c->tags = calloc(LP_CUPTI_TAGS, sizeof *c->tags))) {
        atomic_store(&g_active, NULL);
        snprintf(why, n, "out of memory");
        return -1;
    }
    CUptiResult r = g_cupti.register_callbacks(on_buffer_requested, on_buffer_completed);
    size_t i = 0;
    for (; r == CUPTI_SUCCESS && i < N_WORK_KINDS; i++)
        r = g_cupti.enable(k_work_kinds[i]);
    if (r == CUPTI_SUCCESS && (r = set_tagging(c, 1)) != CUPTI_SUCCESS) set_tagging(c, 0);
    if (r != CUPTI_SUCCESS) {
        while (i-- > 0)
            g_cupti.disable(k_work_kinds[i]);
        atomic_store(&g_active, NULL);
        snprintf(why, n, "CUPTI activity records (%s): %s", lp_cupti_tagging_name(c->tagging),
                 cupti_str(r));
        return -1;
    }
    return 0;
}

void lp_cupti_push(lp_cupti *c, uint64_t scope) {
    if (c->tagging == LP_CUPTI_TAGGING_CALLBACKS) {
        uint32_t d = tl_depth++;
        /* Made at an outermost push only, so a stack that exists holds every open scope; without
         * memory for it, each push fails once (its pop then counts nothing more). */
        if (!tl_scopes && d == 0) tl_scopes = lp_thread_block_get(&scopes_block);
        if (d < LP_CUPTI_MAX_DEPTH && tl_scopes)
            tl_scopes[d] = scope;
        else
            atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
        return;
    }
    if (g_cupti.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, scope) != CUPTI_SUCCESS)
        atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
}

void lp_cupti_pop(lp_cupti *c, uint64_t scope) {
    if (c->tagging == LP_CUPTI_TAGGING_CALLBACKS) {
        uint32_t d = tl_depth;
        if (d == 0 || (d <= LP_CUPTI_MAX_DEPTH && tl_scopes && tl_scopes[d - 1] != scope))
            atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
        if (d) tl_depth = d - 1;
        return;
    }
    uint64_t last = 0;
    if (g_cupti.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last) != CUPTI_SUCCESS ||
        last != scope)
        atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
}

/* Moves the launch callbacks' tags into the records as external correlations of our kind, so one
 * join serves every way of tagging. Runs with the device idle and no launch in flight. */
static void take_tags(lp_cupti *c) {
    if (!c->tags) return;
    size_t n = atomic_exchange(&c->n_tags, 0);
    if (n > LP_CUPTI_TAGS) {
        c->tags_lost += n - LP_CUPTI_TAGS;
        n = LP_CUPTI_TAGS;
    }
    for (size_t i = 0; i < n; i++) {
        lp_cuda_ext_corr x = {LP_CUDA_EXT_KIND, c->tags[i].correlation_id, c->tags[i].scope};
        lp_cuda_records_add_ext(&c->rec, &x);
    }
}

/* Delivers every record still in CUPTI's buffers (the device is idle: forwards synchronise). */
static void flush_disable(lp_cupti *c) {
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    set_tagging(c, 0);
    for (size_t i = 0; i < N_WORK_KINDS; i++)
        g_cupti.disable(k_work_kinds[i]);
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    lp_cupti *expected = c;
    atomic_compare_exchange_strong(&g_active, &expected, NULL);
}

static int join_all(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    pthread_mutex_lock(&c->lock);
    take_tags(c);
    int rc = lp_cuda_join(&c->rec, sink, ctx, stats);
    lp_cuda_records_clear(&c->rec);
    pthread_mutex_unlock(&c->lock);
    return rc ? lp_error_set(rc, "out of memory joining CUDA activity records") : LP_OK;
}

int lp_cupti_flush_join(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    flush_disable(c);
    return join_all(c, sink, ctx, stats);
}

int lp_cupti_iteration_done(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    /* Half full: join now (the forward synchronised, so its records are all complete), so the
     * next forwards never run out of tag slots however many iterations a run has. */
    if (!c || !c->tags || atomic_load(&c->n_tags) < LP_CUPTI_TAGS / 2) return LP_OK;
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return join_all(c, sink, ctx, stats);
}

uint64_t lp_cupti_push_failures(const lp_cupti *c) {
    return c ? atomic_load(&((lp_cupti *)c)->push_failures) : 0;
}

uint64_t lp_cupti_tags_lost(const lp_cupti *c) {
    return c ? c->tags_lost : 0;
}

void lp_cupti_release(lp_cupti *c) {
    if (!c) return;
    if (atomic_load(&g_active) == c) flush_disable(c);
    g_cupti.unsubscribe(c->subscriber);
    lp_cuda_records_free(&c->rec);
    free(c->tags);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

#else /* !LP_HAVE_CUPTI: never claimed, so nothing below is reached */

lp_cupti *lp_cupti_claim(char *why, size_t n) {
    snprintf(why, n, "this build did not find CUPTI (the CUDA Toolkit)");
    return NULL;
}
int lp_cupti_enable(lp_cupti *c, char *why, size_t n) {
    (void)c;
    snprintf(why, n, "this build did not find CUPTI (the CUDA Toolkit)");
    return -1;
}
void lp_cupti_push(lp_cupti *c, uint64_t scope) {
    (void)c, (void)scope;
}
void lp_cupti_pop(lp_cupti *c, uint64_t scope) {
    (void)c, (void)scope;
}
int lp_cupti_flush_join(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    (void)c, (void)sink, (void)ctx, (void)stats;
    return LP_OK;
}
uint64_t lp_cupti_push_failures(const lp_cupti *c) {
    (void)c;
    return 0;
}
int lp_cupti_iteration_done(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    (void)c, (void)sink, (void)ctx, (void)stats;
    return LP_OK;
}
uint64_t lp_cupti_tags_lost(const lp_cupti *c) {
    (void)c;
    return 0;
}
int lp_cupti_tagging(const lp_cupti *c) {
    (void)c;
    return -1;
}
const char *lp_cupti_tagging_name(int tagging) {
    (void)tagging;
    return "?";
}
void lp_cupti_release(lp_cupti *c) {
    (void)c;
}

#endif

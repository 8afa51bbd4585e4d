/* cupti.c: CUPTI activity records, opened at run time. See cupti.h. */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include "collect/cupti.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

#if LP_HAVE_CUPTI
#include <cupti.h>
#include <dlfcn.h>

struct lp_cupti {
    CUpti_SubscriberHandle subscriber;
    pthread_mutex_t lock; /* guards rec: CUPTI completes buffers on its own thread */
    lp_cuda_records rec;
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
} cupti_api;

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

static const CUpti_ActivityKind k_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                             CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                             CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
#define N_KINDS (sizeof k_kinds / sizeof k_kinds[0])

lp_cupti *lp_cupti_claim(char *why, size_t n) {
    pthread_once(&g_cupti_once, cupti_load);
    if (!g_cupti_loaded) {
        snprintf(why, n, "%s", g_cupti_error);
        return NULL;
    }
    lp_cupti *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
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

int lp_cupti_enable(lp_cupti *c, char *why, size_t n) {
    lp_cupti *expected = NULL;
    if (!atomic_compare_exchange_strong(&g_active, &expected, c) && expected != c) {
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

void lp_cupti_push(lp_cupti *c, uint64_t scope) {
    if (g_cupti.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, scope) != CUPTI_SUCCESS)
        atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
}

void lp_cupti_pop(lp_cupti *c, uint64_t scope) {
    uint64_t last = 0;
    if (g_cupti.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last) != CUPTI_SUCCESS ||
        last != scope)
        atomic_fetch_add_explicit(&c->push_failures, 1, memory_order_relaxed);
}

/* Delivers every record still in CUPTI's buffers (the device is idle: forwards synchronise). */
static void flush_disable(lp_cupti *c) {
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (size_t i = 0; i < N_KINDS; i++)
        g_cupti.disable(k_kinds[i]);
    g_cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    lp_cupti *expected = c;
    atomic_compare_exchange_strong(&g_active, &expected, NULL);
}

int lp_cupti_flush_join(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats) {
    flush_disable(c);
    pthread_mutex_lock(&c->lock);
    int rc = lp_cuda_join(&c->rec, sink, ctx, stats);
    lp_cuda_records_clear(&c->rec);
    pthread_mutex_unlock(&c->lock);
    return rc ? lp_error_set(rc, "out of memory joining CUDA activity records") : LP_OK;
}

uint64_t lp_cupti_push_failures(const lp_cupti *c) {
    return c ? atomic_load(&((lp_cupti *)c)->push_failures) : 0;
}

void lp_cupti_release(lp_cupti *c) {
    if (!c) return;
    if (atomic_load(&g_active) == c) flush_disable(c);
    g_cupti.unsubscribe(c->subscriber);
    lp_cuda_records_free(&c->rec);
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
void lp_cupti_release(lp_cupti *c) {
    (void)c;
}

#endif

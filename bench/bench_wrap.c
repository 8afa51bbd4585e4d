/* bench_wrap.c: heap counters for the objects linked into a benchmark program (see bench_util.h).
 *
 * The program is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (and --wrap=free when
 * BENCH_WRAP_FREE is defined): only calls made from objects in the executable (layerprof's static
 * core and shim, the bench itself) come here; libtorch's shared libraries call libc directly.
 *
 * Frees are tracked only in the torch-free program: in the torch program, inline libtorch header
 * code compiled into the shim may free blocks that libtorch's libraries allocated, which would
 * make `live` meaningless. There, calls and bytes requested are enough to show that the hot path
 * allocates nothing and that allocations do not grow with iterations. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_util.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static _Atomic uint64_t g_calls, g_bytes;
static _Atomic int64_t g_live;

#ifdef BENCH_WRAP_FREE
#define USABLE(p) ((int64_t)malloc_usable_size(p))
#else
#define USABLE(p) ((int64_t)0)
#endif

void *__wrap_malloc(size_t n) {
    void *p = __real_malloc(n);
    atomic_fetch_add_explicit(&g_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_bytes, n, memory_order_relaxed);
    if (p) atomic_fetch_add_explicit(&g_live, USABLE(p), memory_order_relaxed);
    return p;
}

void *__wrap_calloc(size_t k, size_t n) {
    void *p = __real_calloc(k, n);
    atomic_fetch_add_explicit(&g_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_bytes, k * n, memory_order_relaxed);
    if (p) atomic_fetch_add_explicit(&g_live, USABLE(p), memory_order_relaxed);
    return p;
}

void *__wrap_realloc(void *old, size_t n) {
    int64_t before = old ? USABLE(old) : 0;
    void *p = __real_realloc(old, n);
    atomic_fetch_add_explicit(&g_calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_bytes, n, memory_order_relaxed);
    if (p || n == 0)
        atomic_fetch_add_explicit(&g_live, (p ? USABLE(p) : 0) - before, memory_order_relaxed);
    return p;
}

#ifdef BENCH_WRAP_FREE
void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p) {
    if (p) atomic_fetch_sub_explicit(&g_live, USABLE(p), memory_order_relaxed);
    __real_free(p);
}
#endif

void bench_heap_get(bench_heap *out) {
    out->calls = atomic_load(&g_calls);
    out->bytes = atomic_load(&g_bytes);
    out->live = atomic_load(&g_live);
}

int bench_heap_tracks_frees(void) {
#ifdef BENCH_WRAP_FREE
    return 1;
#else
    return 0;
#endif
}

/* cuda_join.c: joins CUDA activity records to scopes and sums them over the tree. See cuda_join.h.
 * Plain C, fed plain structs: everything here is unit-tested without a GPU. */
#include "collect/cuda_join.h"

#include <stdlib.h>
#include <string.h>

#include "layerprof.h"

int lp_cuda_scope_decode(uint64_t scope, uint32_t *thread, int32_t *index) {
    unsigned kind = (unsigned)(scope >> 62);
    *thread = 0;
    *index = -1;
    if (kind == LP_SCOPE_MODULE) {
        if (scope & 0x3FFFFFFF80000000ull) return LP_SCOPE_NONE; /* not a non-negative int32 */
        *index = (int32_t)(scope & 0x7FFFFFFFull);
        return LP_SCOPE_MODULE;
    }
    if (kind == LP_SCOPE_OP) {
        uint64_t row = scope & 0xFFFFFFFFFFull;
        if (row > 0x7FFFFFFFull) return LP_SCOPE_NONE;
        *thread = (uint32_t)((scope >> 40) & 0x3FFFFFu);
        *index = (int32_t)row;
        return LP_SCOPE_OP;
    }
    return LP_SCOPE_NONE;
}

/* ---- records -----------------------------------------------------------------------------------
 */

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap * 2 : 1024;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

int lp_cuda_records_add_activity(lp_cuda_records *r, const lp_cuda_activity *a) {
    if (grow((void **)&r->acts, &r->cap_acts, r->n_acts + 1, sizeof *r->acts)) {
        r->dropped++;
        return -1;
    }
    r->acts[r->n_acts++] = *a;
    return 0;
}

int lp_cuda_records_add_ext(lp_cuda_records *r, const lp_cuda_ext_corr *e) {
    if (grow((void **)&r->ext, &r->cap_ext, r->n_ext + 1, sizeof *r->ext)) {
        r->dropped++;
        return -1;
    }
    r->ext[r->n_ext++] = *e;
    return 0;
}

void lp_cuda_records_clear(lp_cuda_records *r) {
    r->n_acts = r->n_ext = 0;
    r->dropped = 0;
}

void lp_cuda_records_free(lp_cuda_records *r) {
    if (!r) return;
    free(r->acts);
    free(r->ext);
    memset(r, 0, sizeof *r);
}

/* ---- join --------------------------------------------------------------------------------------
 */

typedef struct corr {
    uint32_t correlation_id;
    uint32_t order; /* arrival order: keeps the first of duplicate correlations */
    uint64_t scope;
} corr;

static int by_correlation(const void *a, const void *b) {
    const corr *x = a, *y = b;
    if (x->correlation_id != y->correlation_id)
        return x->correlation_id < y->correlation_id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The scope of a correlation id, or 0. `m` sorted by correlation id, first duplicate first. */
static uint64_t scope_of(const corr *m, size_t n, uint32_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m[mid].correlation_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && m[lo].correlation_id == id ? m[lo].scope : 0;
}

int lp_cuda_join(const lp_cuda_records *r, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *st) {
    size_t n = 0;
    corr *m = NULL;
    if (r->n_ext) {
        m = malloc(r->n_ext * sizeof *m);
        if (!m) return LP_ERR_NOMEM;
        for (size_t i = 0; i < r->n_ext; i++)
            if (r->ext[i].external_kind == LP_CUDA_EXT_KIND && r->ext[i].external_id != 0)
                m[n++] = (corr){r->ext[i].correlation_id, (uint32_t)i, r->ext[i].external_id};
        qsort(m, n, sizeof *m, by_correlation);
    }
    st->dropped += r->dropped;
    for (size_t i = 0; i < r->n_acts; i++) {
        const lp_cuda_activity *a = &r->acts[i];
        uint64_t ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
        st->records++;
        if (a->kind == LP_CUDA_KERNEL)
            st->kernels++;
        else if (a->kind == LP_CUDA_MEMCPY)
            st->memcpys++;
        else
            st->memsets++;
        uint64_t scope = scope_of(m, n, a->correlation_id);
        if (scope && sink && sink(ctx, scope, ns) == 0) {
            st->attributed++;
            st->attributed_ns += ns;
        } else {
            st->unattributed++;
            st->unattributed_ns += ns;
        }
    }
    free(m);
    return LP_OK;
}

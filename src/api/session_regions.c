/* session_regions.c: regions and contexts, the program's own code segments (docs/regions.md). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "api/session_internal.h"
#include "base/error.h"

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

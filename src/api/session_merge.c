/* session_merge.c: what the threads recorded, merged into the trees: one module tree per region
 * that forwards ran in (mounts), composed into the report when regions exist. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/session_internal.h"
#include "base/error.h"

/* After a run's merge: what the timeline covers, and a note when its buffers filled up. */
void session_timeline_done(lp_session *s) {
    lp_timeline *tl = lp_collector_timeline(s->collector);
    if (!tl->recorded) return;
    tl->iterations = (uint64_t)s->trace_done;
    tl->iterations_of = s->tree.iterations;
    if (tl->lost_spans || tl->lost_mem) {
        for (size_t i = 0; i < s->n_notes; i++)
            if (strncmp(s->notes[i], "note: the trace buffer", 22) == 0) return;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%llu spans and %llu memory samples were not recorded: a thread's buffer was full",
                 (unsigned long long)tl->lost_spans, (unsigned long long)tl->lost_mem);
        session_add_note(s, "note: the trace buffer filled up; %s", msg);
    }
}

/* Merges what the threads recorded into the trees, and recomposes the report when regions exist.
 * Driving thread, with no forward running and no region call in flight on another thread. */
int session_sync_report(lp_session *s) {
    if (!atomic_exchange(&s->dirty, 0)) return LP_OK;
    int rc = lp_collector_finish(s->collector);
    if (rc) return rc;
    session_timeline_done(s);
    if (s->tree.iterations == 0 && s->tree.nodes[0].fig.calls + lp_region_count(s->collector)) {
        s->tree.iterations = 1; /* a program that never stepped: its whole recording */
        s->implicit_iteration = 1;
    }
    lp_tree_set_shares(&s->tree);
    if (!lp_region_count(s->collector)) return LP_OK;
    return lp_compose(&s->composed, s->collector, s->mounts, s->n_mounts, s->tree.iterations);
}

/* The tree every reader sees: the module tree, or the composed one once regions exist. */
const lp_tree *session_report_tree(const lp_session *s) {
    lp_session *m = (lp_session *)s; /* merging pending events changes no figure already read */
    if (session_sync_report(m)) return &s->tree;
    return lp_region_count(s->collector) ? &s->composed : &s->tree;
}

/* A mount's tree: the module tree's shape, no figures. */
static int mount_new(lp_session *s, int32_t region, lp_tree **out) {
    if (s->n_mounts == LP_MAX_MOUNTS)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "forwards ran in more than %d different regions of one session",
                            LP_MAX_FORWARD_REGIONS);
    lp_tree *t = calloc(1, sizeof *t);
    if (!t) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    lp_tree_init(t);
    /* One pool for the session's trees: the composed report reads its strings from the mounts. */
    int rc = lp_tree_share_strings(t, &s->tree);
    for (size_t i = 0; i < s->tree.n_nodes && rc >= 0; i++) {
        const lp_tree_node *n = &s->tree.nodes[i];
        rc = lp_tree_add(t, n->path, n->class_name, n->parent);
        if (rc >= 0) t->nodes[rc].container = n->container;
        if (rc >= 0) t->nodes[rc].fig.size = n->fig.size;
    }
    if (rc < 0) {
        lp_tree_free(t);
        free(t);
        return rc;
    }
    s->mounts[s->n_mounts++] = (lp_mount){region, t};
    *out = t;
    return LP_OK;
}

/* Points the collector at the tree of the region the next forward runs in. */
int session_target_for_forward(lp_session *s) {
    int32_t region = lp_collector_open_region(s->collector);
    lp_tree *t = NULL;
    for (size_t i = 0; i < s->n_mounts && !t; i++)
        if (s->mounts[i].region == region) t = s->mounts[i].tree;
    int rc = t ? LP_OK : mount_new(s, region, &t);
    if (rc || lp_collector_tree(s->collector) == t) return rc;
    if ((rc = lp_collector_finish(s->collector))) return rc; /* the old tree's figures first */
    lp_collector_set_tree(s->collector, t);
    return LP_OK;
}

/* A schedule's fresh start: every figure recorded so far is dropped. */
int session_clear_figures(lp_session *s) {
    atomic_store(&s->dirty, 1);
    int rc = session_sync_report(s);
    if (rc) return rc;
    for (size_t i = 0; i < s->n_mounts; i++) {
        lp_tree *t = s->mounts[i].tree;
        for (size_t n = 0; n < t->n_nodes; n++) {
            lp_module_size size = t->nodes[n].fig.size; /* what the module is stays */
            memset(&t->nodes[n].fig, 0, sizeof t->nodes[n].fig);
            t->nodes[n].fig.size = size;
            t->nodes[n].first_op = -1;
        }
        t->n_ops = 0;
    }
    lp_collector_clear_regions(s->collector);
    s->tree.iterations = 0;
    s->implicit_iteration = 0;
    s->driver_ns = 0;
    s->synced_ns = 0;
    atomic_store(&s->dirty, 1);
    return LP_OK;
}

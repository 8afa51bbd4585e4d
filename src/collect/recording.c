/* recording.c: the trees a session's forwards record into, and finishing them into the report
 * (recording.h). The one place that sequences a merge: the session only says when. */
#include <stdlib.h>

#include "base/error.h"
#include "layerprof.h"
#include "collect/recording.h"

void lp_recording_init(lp_recording *r, lp_collector *c, lp_tree *tree) {
    r->collector = c;
    r->mounts[0] = (lp_mount){-1, tree};
    r->n_mounts = 1;
    r->implicit_iteration = 0;
    lp_tree_init(&r->composed);
}

void lp_recording_free(lp_recording *r) {
    for (size_t i = 1; i < r->n_mounts; i++) {
        lp_tree_free(r->mounts[i].tree);
        free(r->mounts[i].tree);
    }
    r->n_mounts = 0;
    lp_tree_free(&r->composed);
}

/* The tree of forwards run in `region`, made on its first forward: the module tree's shape. */
static int mount_new(lp_recording *r, int32_t region, lp_tree **out) {
    if (r->n_mounts == LP_MAX_MOUNTS)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "forwards ran in more than %d different regions of one session",
                            LP_MAX_FORWARD_REGIONS);
    lp_tree *t = calloc(1, sizeof *t);
    if (!t) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    int rc = lp_tree_copy_shape(t, r->mounts[0].tree);
    if (rc) {
        free(t);
        return rc;
    }
    r->mounts[r->n_mounts++] = (lp_mount){region, t};
    *out = t;
    return LP_OK;
}

int lp_recording_target(lp_recording *r) {
    lp_collector *c = r->collector;
    int32_t region = lp_collector_open_region(c);
    lp_tree *t = NULL;
    for (size_t i = 0; i < r->n_mounts && !t; i++)
        if (r->mounts[i].region == region) t = r->mounts[i].tree;
    int rc = t ? LP_OK : mount_new(r, region, &t);
    if (rc || lp_collector_tree(c) == t) return rc;
    if ((rc = lp_collector_finish(c))) return rc; /* the old tree's figures first */
    lp_collector_set_tree(c, t);
    return LP_OK;
}

int lp_recording_finish(lp_recording *r, uint64_t traced) {
    lp_collector *c = r->collector;
    lp_tree *tree = r->mounts[0].tree;
    int rc = lp_collector_finish(c);
    if (rc) return rc;
    lp_timeline *tl = lp_collector_timeline(c);
    if (tl->recorded) {
        tl->iterations = traced;
        tl->iterations_of = tree->iterations;
    }
    if (tree->iterations == 0 && tree->nodes[0].fig.calls + lp_region_count(c)) {
        tree->iterations = 1; /* a program that never stepped: its whole recording */
        r->implicit_iteration = 1;
    }
    lp_tree_set_shares(tree);
    if (!lp_region_count(c)) return LP_OK;
    return lp_compose(&r->composed, c, r->mounts, r->n_mounts, tree->iterations);
}

void lp_recording_count_step(lp_recording *r) {
    if (r->implicit_iteration)
        r->implicit_iteration = 0; /* already counted when it was finished */
    else
        r->mounts[0].tree->iterations++;
}

void lp_recording_clear(lp_recording *r) {
    for (size_t i = 0; i < r->n_mounts; i++)
        lp_tree_clear_figures(r->mounts[i].tree);
    lp_collector_clear_regions(r->collector);
    r->implicit_iteration = 0;
}

const lp_tree *lp_recording_report(const lp_recording *r) {
    return lp_region_count(r->collector) ? &r->composed : r->mounts[0].tree;
}

/* fuzz_paths.c: libFuzzer target for module path patterns (--path, `paths:` in a config).
 *
 * The input is up to 8 patterns, one per line, matched against a small fixed module tree with a
 * deep chain. lp_paths_select must succeed, or refuse with LP_ERR_NOT_FOUND (a pattern that matches
 * nothing, with a "did you mean" message) or LP_ERR_INVALID (a pattern too long); on success
 * exactly the nodes some pattern matches through lp_path_matches are selected, and every pattern
 * matches at least one node. Any violation aborts, so libFuzzer keeps the input as a crash; a
 * pattern that takes exponential time shows up as a timeout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"
#include "model/paths.h"
#include "model/tree.h"

#define MAX_PATTERNS 8

static lp_tree g_tree;

/* Pre-order, like named_modules(): {path, class, parent index}. */
static const struct {
    const char *path, *cls;
    int32_t parent;
} k_nodes[] = {
    {"", "Net", -1},
    {"features", "Sequential", 0},
    {"features.0", "Conv2d", 1},
    {"features.1", "ReLU", 1},
    {"features.10", "Conv2d", 1},
    {"layer1", "Sequential", 0},
    {"layer1.0", "BasicBlock", 5},
    {"layer1.0.conv1", "Conv2d", 6},
    {"layer1.0.bn1", "BatchNorm2d", 6},
    {"layer1.1", "BasicBlock", 5},
    {"layer1.1.conv1", "Conv2d", 9},
    {"a", "Deep", 0},
    {"a.b", "Deep", 11},
    {"a.b.c", "Deep", 12},
    {"a.b.c.d", "Deep", 13},
    {"a.b.c.d.e", "Deep", 14},
    {"a.b.c.d.e.f", "Deep", 15},
    {"a.b.c.d.e.f.g", "Deep", 16},
    {"a.b.c.d.e.f.g.h", "Deep", 17},
    {"Net", "Linear", 0}, /* a child named like the root's class */
    {"fc", "Linear", 0},
};
#define N_NODES (sizeof k_nodes / sizeof k_nodes[0])

static void build_tree(void) {
    lp_tree_init(&g_tree);
    for (size_t i = 0; i < N_NODES; i++)
        if (lp_tree_add(&g_tree, k_nodes[i].path, k_nodes[i].cls, k_nodes[i].parent) != (int)i)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_tree.n_nodes) build_tree();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    const char *patterns[MAX_PATTERNS];
    size_t n = 0;
    for (char *p = text; n < MAX_PATTERNS;) {
        patterns[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }

    uint8_t selected[N_NODES];
    int rc = lp_paths_select(&g_tree, patterns, n, selected);
    if (rc != LP_OK && rc != LP_ERR_NOT_FOUND && rc != LP_ERR_INVALID) {
        fprintf(stderr, "lp_paths_select: unexpected status %d: %s\n", rc, lp_error_last());
        abort();
    }
    if (rc != LP_OK && !lp_error_last()[0]) abort();

    int any_pattern_empty = 0;
    uint8_t expect[N_NODES] = {0};
    for (size_t k = 0; k < n; k++) {
        int hits = 0;
        for (size_t i = 0; i < N_NODES; i++)
            if (lp_path_matches(&g_tree, patterns[k], (int32_t)i)) {
                expect[i] = 1;
                hits++;
            }
        if (!hits) any_pattern_empty = 1;
    }
    if (rc == LP_OK) {
        if (any_pattern_empty) {
            fprintf(stderr, "selected although a pattern matches nothing\n");
            abort();
        }
        if (memcmp(selected, expect, N_NODES) != 0) {
            fprintf(stderr, "lp_paths_select and lp_path_matches disagree\n");
            abort();
        }
    } else if (rc == LP_ERR_NOT_FOUND && !any_pattern_empty) {
        fprintf(stderr, "not found although every pattern matches: %s\n", lp_error_last());
        abort();
    }
    free(text);
    return 0;
}

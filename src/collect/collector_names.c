/* collector_names.c: the collector's global tables of op names and input-shape texts, which a
 * thread adds to when it creates an op row (collector.c's find_row): never in steady state, so
 * under a lock, out of the hot path's file. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collector.h"
#include "collect/collector_internal.h"

/* Global id of an op name, interned by text on its first sight in any thread. */
int32_t lp_collector_intern_name(lp_collector *c, const char *name) {
    int32_t id = -1;
    pthread_mutex_lock(&c->names_lock);
    for (size_t i = 0; i < c->n_names; i++)
        if (c->name_ptrs[i] == name || strcmp(c->names[i], name) == 0) {
            id = (int32_t)i;
            break;
        }
    if (id < 0 && c->n_names == c->cap_names) {
        size_t cap = c->cap_names ? c->cap_names * 2 : 64;
        char **n = realloc(c->names, cap * sizeof *n);
        if (n) c->names = n;
        const char **p = realloc(c->name_ptrs, cap * sizeof *p);
        if (p) c->name_ptrs = p;
        if (n && p) c->cap_names = cap;
    }
    if (id < 0 && c->n_names < c->cap_names) {
        size_t len = strlen(name) + 1;
        char *copy = malloc(len);
        if (copy) {
            memcpy(copy, name, len);
            c->names[c->n_names] = copy;
            c->name_ptrs[c->n_names] = name;
            id = (int32_t)c->n_names++;
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    return id;
}

/* Global id of the starting op's input-shape text, from the describer, interned by text. Runs
 * when a thread creates a row, never in steady state. -1 when there is no text. */
int32_t lp_collector_intern_shapes(lp_collector *c) {
    if (!c->cfg.describe_shapes) return -1;
    char small[512];
    char *text = small;
    int n = c->cfg.describe_shapes(c->cfg.describe_payload, small, sizeof small);
    if (n < 0) return -1;
    if ((size_t)n >= sizeof small) { /* a long signature (a cat of many tensors) */
        text = malloc((size_t)n + 1);
        if (!text) return -1;
        int m = c->cfg.describe_shapes(c->cfg.describe_payload, text, (size_t)n + 1);
        if (m < 0 || m > n) {
            free(text);
            return -1;
        }
    }
    int32_t id = -1;
    pthread_mutex_lock(&c->names_lock);
    for (size_t i = 0; i < c->n_shapes; i++)
        if (strcmp(c->shape_texts[i], text) == 0) {
            id = (int32_t)i;
            break;
        }
    if (id < 0 && c->n_shapes == c->cap_shapes) {
        size_t cap = c->cap_shapes ? c->cap_shapes * 2 : 64;
        char **p = realloc(c->shape_texts, cap * sizeof *p);
        if (p) {
            c->shape_texts = p;
            c->cap_shapes = cap;
        }
    }
    if (id < 0 && c->n_shapes < c->cap_shapes) {
        char *copy = text;
        if (text == small) {
            size_t len = strlen(small) + 1;
            copy = malloc(len);
            if (copy) memcpy(copy, small, len);
        }
        if (copy) {
            c->shape_texts[c->n_shapes] = copy;
            id = (int32_t)c->n_shapes++;
            text = small; /* the table owns it now */
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    if (text != small) free(text);
    return id;
}

/* bench_model.c: see bench_model.h. */
#define _GNU_SOURCE
#include "bench_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/session_config.h"
#include "api/session_setup.h"
#include "base/clock.h"

static void die(const char *what, int rc) {
    fprintf(stderr, "bench: %s: %s (%d)\n", what, lp_error_last(), rc);
    exit(2);
}

static lp_input_spec g_inputs[LP_MAX_INPUTS];
static size_t g_n_inputs;

void bench_inputs_from_args(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--input") != 0) continue;
        if (g_n_inputs == LP_MAX_INPUTS || lp_input_spec_parse(argv[i + 1], &g_inputs[g_n_inputs]))
            die("--input", LP_ERR_INVALID);
        g_n_inputs++;
    }
}

void bench_model_open(bench_model *bm, const char *path, const char *device, int exec) {
    lps_set_verbose(0);
    int rc;
    if ((rc = lps_model_load(path, device, exec, &bm->m))) die("lps_model_load", rc);
    if (g_n_inputs) {
        if ((rc = lps_inputs_create(bm->m, g_inputs, g_n_inputs, 0, &bm->in)))
            die("lps_inputs_create", rc);
        return;
    }
    /* The inputs the file records, read as a session reads them. */
    lp_input_spec specs[LP_MAX_INPUTS];
    size_t n = 0;
    lp_options owner;
    lp_options_init(&owner);
    rc = session_setup_recorded_inputs(bm->m, path, specs, LP_MAX_INPUTS, &n, &owner);
    if (!rc) rc = lps_inputs_create(bm->m, specs, n, 0, &bm->in);
    lp_options_release(&owner);
    if (rc) die("the model's inputs (give them with --input)", rc);
}

void bench_model_close(bench_model *bm) {
    lps_inputs_free(bm->in);
    lps_model_free(bm->m);
}

void bench_forward(bench_model *bm) {
    int rc = lps_forward(bm->m, bm->in);
    if (rc) die("lps_forward", rc);
}

uint64_t bench_warm_up(bench_model *bm, int n) {
    uint64_t est = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        uint64_t a = lp_now_ns();
        bench_forward(bm);
        uint64_t d = lp_now_ns() - a;
        if (d < est) est = d;
    }
    return est;
}

lp_mode bench_mode_of(int exec) {
    return exec == LPS_EXEC_MARKERS ? LP_MODE_MARKERS : LP_MODE_HOOKS;
}

/* Options as the CLI's --mode, --memory and --events set them, everything else the default. */
static void options_for(lp_options *o, lp_mode mode, int memory, int events) {
    lp_options_init(o);
    o->mode = mode;
    o->memory = memory;
    o->events = events;
}

unsigned bench_hooks(lp_mode mode, int memory, int events) {
    lp_options o;
    options_for(&o, mode, memory, events);
    unsigned hooks = session_config_hooks(&o, 0);
    lp_options_release(&o);
    return hooks;
}

void bench_recording_open(bench_recording *r, const lps_model *m, lp_mode mode, int memory,
                          int events, int cuda, const lp_scope_hooks *cuda_time) {
    lp_options o;
    options_for(&o, mode, memory, events);
    r->hooks = session_config_hooks(&o, 0);
    lp_collector_config cc = session_config_collector(&o, cuda, NULL, 0, 0);
    lp_options_release(&o);
    if (cuda_time) cc.cuda_time = 1, cc.scopes = *cuda_time;
    int rc = session_setup_tree(&r->tree, m);
    if (rc) die("the module tree", rc);
    if ((rc = lp_collector_create(&r->c, &r->tree, &cc))) die("lp_collector_create", rc);
}

lp_event_sink bench_recording_sink(bench_recording *r) {
    lp_event_sink sink;
    lp_collector_sink(r->c, &sink);
    return sink;
}

void bench_recording_close(bench_recording *r) {
    lp_collector_free(r->c);
    lp_tree_free(&r->tree);
    r->c = NULL;
}

/* The counting sink answers 1 (op events wanted) so that the shim delivers every op. */
static int count_enter(void *c, int32_t m, uint64_t t) {
    (void)t;
    bench_counts *k = c;
    k->enters++;
    if (k->n_modules < (int)(sizeof k->modules / sizeof k->modules[0]))
        k->modules[k->n_modules] = m;
    k->n_modules++;
    return 1;
}
static int count_exit(void *c, uint64_t t) {
    (void)t;
    bench_counts *k = c;
    k->exits++;
    if (k->n_modules > 0) k->n_modules--;
    return 1;
}
static int32_t count_current_module(void *c) {
    const bench_counts *k = c;
    int n = k->n_modules;
    return n > 0 && n <= (int)(sizeof k->modules / sizeof k->modules[0]) ? k->modules[n - 1] : -1;
}
static int count_op(void *c, const char *name, uint64_t shape_key, uint64_t t) {
    (void)name, (void)shape_key, (void)t;
    bench_counts *k = c;
    k->ops++;
    if (k->depth++ == 0) k->top_ops++;
    return 1;
}
static void count_op_end(void *c, uint64_t t) {
    (void)t;
    ((bench_counts *)c)->op_ends++;
    ((bench_counts *)c)->depth--;
}
static void count_memory(void *c, const void *p, int64_t b, int d, uint64_t t) {
    (void)p, (void)d, (void)t;
    if (b > 0)
        ((bench_counts *)c)->allocs++;
    else
        ((bench_counts *)c)->frees++;
}

lp_event_sink bench_counting_sink(bench_counts *k) {
    return (lp_event_sink){.ctx = k,
                           .call_enter = count_enter,
                           .call_exit = count_exit,
                           .op_start = count_op,
                           .op_end = count_op_end,
                           .memory = count_memory,
                           .method_enter = count_enter,
                           .current_module = count_current_module};
}

bench_counts bench_count_events(bench_model *bm, unsigned hooks, int n) {
    bench_counts k = {0};
    lp_event_sink sink = bench_counting_sink(&k);
    int rc = lps_profile_begin(bm->m, &sink, hooks);
    if (rc) die("lps_profile_begin", rc);
    for (int i = 0; i < n; i++)
        bench_forward(bm);
    lps_profile_end(bm->m);
    k.enters /= (uint64_t)n, k.exits /= (uint64_t)n, k.ops /= (uint64_t)n;
    k.op_ends /= (uint64_t)n, k.allocs /= (uint64_t)n, k.frees /= (uint64_t)n;
    k.top_ops /= (uint64_t)n;
    return k;
}

/* bench_core.c: the collector and the renderer without libtorch, on synthetic events.
 *
 *   lp_bench_core throughput [--seconds S]   events per second through the collector, one core
 *   lp_bench_core memory                     bytes per module, per op row, per distinct op name
 *   lp_bench_core iterations [--max N]       layerprof's heap at 10, 100, 1000 iterations
 *   lp_bench_core treesize [--max N]         tree build, events, aggregation, rendering at 1k..N
 *                                            (bench_treesize.c)
 *   lp_bench_core instructions [--iterations N]  the hot path's instructions, under callgrind
 *                                            (bench/instructions.py runs it and judges them)
 *
 * Every heap call of the core is counted through the linker's --wrap (bench_wrap.c), frees
 * included, so the byte figures are the allocation sizes the collector and tree really ask for
 * (malloc_usable_size: what the allocator hands out, which is what the process pays). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif

#include "base/clock.h"
#include "bench_script.h"
#include "bench_util.h"
#include "collect/collector.h"
#include "layerprof.h"
#include "model/tree.h"
#include "report/render.h"

static void die(const char *what) {
    fprintf(stderr, "lp_bench_core: %s: %s\n", what, lp_error_last());
    exit(2);
}

/* A resnet-sized model: root, 4 stages of 2 blocks of 5 leaves (53 modules). */
enum { N_STAGES = 4, N_BLOCKS = 2, N_LEAVES = 5 };

static void small_model(lp_tree *t) {
    lp_tree_init(&*t);
    if (lp_tree_add(t, "", "Net", -1) < 0) die("lp_tree_add");
    char path[64];
    for (int s = 0; s < N_STAGES; s++) {
        snprintf(path, sizeof path, "layer%d", s);
        int32_t sp = lp_tree_add(t, path, "Sequential", 0);
        for (int b = 0; b < N_BLOCKS; b++) {
            snprintf(path, sizeof path, "layer%d.%d", s, b);
            int32_t bp = lp_tree_add(t, path, "Block", sp);
            for (int l = 0; l < N_LEAVES; l++) {
                snprintf(path, sizeof path, "layer%d.%d.m%d", s, b, l);
                if (lp_tree_add(t, path, "Conv2d", bp) < 0) die("lp_tree_add");
            }
        }
    }
}

static const char *const k_ops[N_LEAVES] = {"aten::conv2d", "aten::batch_norm", "aten::relu",
                                            "aten::conv2d", "aten::batch_norm"};
static const char k_nested[] = "aten::_convolution";
static const char k_add[] = "aten::add";

enum { SCRIPT_MODULES = 0, SCRIPT_OPS = 1, SCRIPT_MEMORY = 2 };

/* One forward of the small model. SCRIPT_OPS: every leaf runs an op (convs with a nested op),
 * every block a residual add. SCRIPT_MEMORY: each op allocates its output and frees the output of
 * the op before the previous one (a caching allocator's addresses repeat every iteration). */
static void small_script(script *s, int flags) {
    int ops = flags & SCRIPT_OPS;
    int mem = flags & SCRIPT_MEMORY;
    uintptr_t live[3] = {0, 0, 0};
    int n_alloc = 0;
    int32_t node = 0;
#define ALLOC()                                                                                    \
    do {                                                                                           \
        if (mem) {                                                                                 \
            uintptr_t p = 0x10000000u + (uintptr_t)(n_alloc++) * 4096u;                            \
            emit(s, EV_MEM, -1, NULL, p, 802816);                                                  \
            if (live[0]) emit(s, EV_MEM, -1, NULL, live[0], -802816);                              \
            live[0] = live[1], live[1] = live[2], live[2] = p;                                     \
        }                                                                                          \
    } while (0)
    emit(s, EV_ENTER, node++, NULL, 0, 0);
    for (int st = 0; st < N_STAGES; st++) {
        int32_t stage = node++;
        emit(s, EV_ENTER, stage, NULL, 0, 0);
        for (int b = 0; b < N_BLOCKS; b++) {
            int32_t block = node++;
            emit(s, EV_ENTER, block, NULL, 0, 0);
            for (int l = 0; l < N_LEAVES; l++) {
                int32_t leaf = node++;
                emit(s, EV_ENTER, leaf, NULL, 0, 0);
                if (ops) {
                    emit(s, EV_OP, -1, k_ops[l], 0, 0);
                    if (l == 0 || l == 3) {
                        emit(s, EV_OP, -1, k_nested, 0, 0);
                        ALLOC();
                        emit(s, EV_OP_END, -1, NULL, 0, 0);
                    } else {
                        ALLOC();
                    }
                    emit(s, EV_OP_END, -1, NULL, 0, 0);
                }
                emit(s, EV_EXIT, -1, NULL, 0, 0);
            }
            if (ops) {
                emit(s, EV_OP, -1, k_add, 0, 0);
                ALLOC();
                emit(s, EV_OP_END, -1, NULL, 0, 0);
            }
            emit(s, EV_EXIT, -1, NULL, 0, 0);
        }
        emit(s, EV_EXIT, -1, NULL, 0, 0);
    }
    for (int i = 0; i < 3; i++)
        if (live[i]) emit(s, EV_MEM, -1, NULL, live[i], -802816);
    emit(s, EV_EXIT, -1, NULL, 0, 0);
#undef ALLOC
}

/* What the collector records, each a mode of the product: the module frames alone (markers or
 * hooks, modules only), with op rows (events), with memory, with both. */
typedef struct bench_case {
    const char *name;
    int flags, memory, ops;
} bench_case;
static const bench_case k_cases[] = {
    {"enter/exit (modules only)", SCRIPT_MODULES, 0, 0},
    {"enter/exit+ops, op rows (events)", SCRIPT_OPS, 0, 1},
    {"enter/exit+ops+memory (memory)", SCRIPT_OPS | SCRIPT_MEMORY, 1, 0},
    {"enter/exit+ops+memory, op rows (all)", SCRIPT_OPS | SCRIPT_MEMORY, 1, 1},
};
#define N_CASES (sizeof k_cases / sizeof k_cases[0])

/* The small model, one forward's script for `k`, and a collector recording as `k` says. */
static lp_collector *case_open(const bench_case *k, lp_tree *tree, script *s) {
    small_model(tree);
    small_script(s, k->flags);
    lp_collector *c;
    lp_collector_config cc = bench_session_config(k->memory, k->ops);
    if (lp_collector_create(&c, tree, &cc)) die("lp_collector_create");
    return c;
}

/* ---- throughput --------------------------------------------------------------------------------
 */

static int cmd_throughput(double seconds, const char *only) {
    for (size_t k = 0; k < N_CASES; k++) {
        if (only && !strstr(k_cases[k].name, only)) continue;
        lp_tree tree;
        script s = {0};
        lp_collector *c = case_open(&k_cases[k], &tree, &s);
        uint64_t t = 0;
        for (int i = 0; i < 100; i++) { /* warm: rows, pointer map */
            play(c, &s, &t);
            lp_collector_count_iteration(c);
        }
        bench_samples rates = {0};
        for (int trial = 0; trial < 5; trial++) {
            uint64_t events = 0, t0 = bench_cpu_ns(), now = t0;
            uint64_t until = t0 + (uint64_t)(seconds / 5 * 1e9);
            while (now < until) {
                for (int i = 0; i < 16; i++) {
                    events += play(c, &s, &t);
                    lp_collector_count_iteration(c);
                }
                now = bench_cpu_ns();
            }
            bench_samples_add(&rates, (double)events / ((double)(now - t0) * 1e-9));
        }
        lp_collector_finish(c);
        lp_collector_stats st;
        lp_collector_get_stats(c, &st);
        double rate = bench_median(rates.v, rates.n);
        const char *ok = st.dropped || st.unbalanced ? "events dropped!" : "ok";
        printf("THRU|%-38s|%5zu|%8.1f|%7.1f|%s\n", k_cases[k].name, s.n, rate / 1e6, 1e9 / rate,
               ok);
        /* The budget on the range over the trials: PASS when the slowest trial meets it, MISS when
         * the fastest does not, UNSURE between (bench/README.md, "Core throughput"). */
        double slowest = bench_quantile(rates.v, rates.n, 0),
               fastest = bench_quantile(rates.v, rates.n, 1);
        char what[96], text[96], note[96];
        snprintf(what, sizeof what, "core throughput: %s", k_cases[k].name);
        snprintf(text, sizeof text, "%.1f M events/s [%.1f, %.1f]", rate / 1e6, slowest / 1e6,
                 fastest / 1e6);
        snprintf(note, sizeof note, "margin %+.1f M/s (the slowest of %zu trials)",
                 (slowest - 20e6) / 1e6, rates.n);
        bench_budget_verdict(what, bench_judge_at_least(slowest, fastest, 20e6), text, ">= 20 M/s",
                             note);
        bench_samples_free(&rates);
        free(s.ev);
        lp_collector_free(c);
        lp_tree_free(&tree);
    }
    /* The shim stamps every event with this clock: its cost comes on top of the collector's. */
    uint64_t sink = 0, t0 = bench_cpu_ns();
    for (int i = 0; i < 2000000; i++)
        sink += lp_now_ns();
    double clock_ns = (double)(bench_cpu_ns() - t0) / 2e6;
    printf("INFO|lp_now_ns, %s, costs %.1f ns per call (the shim takes one per event)%s\n",
           lp_clock_source(), clock_ns, sink == 1 ? " " : "");
    return 0;
}

/* ---- memory per module and per op ---------------------------------------------------------------
 */

static int64_t live_now(void) {
    bench_heap h;
    bench_heap_get(&h);
    return h.live;
}

/* A flat model: root + n leaves; every leaf runs `ops_per` ops named names[leaf % n_names + j]. */
typedef struct mem_probe {
    int64_t tree_nodes; /* the tree after construction */
    int64_t collector;  /* the collector and its thread state after one iteration */
    int64_t tree_ops;   /* what lp_collector_finish added to the tree (op rows) */
} mem_probe;

static mem_probe probe(int n, int ops_per, const char *const *names, int n_names, int distinct) {
    char path[32];
    mem_probe p;
    int64_t l0 = live_now();
    lp_tree tree;
    lp_tree_init(&tree);
    lp_tree_add(&tree, "", "Net", -1);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "m%d", i);
        if (lp_tree_add(&tree, path, "Linear", 0) < 0) die("lp_tree_add");
    }
    int64_t l1 = live_now();
    lp_collector *c;
    lp_collector_config cc = bench_session_config(1, 1);
    if (lp_collector_create(&c, &tree, &cc)) die("lp_collector_create");
    uint64_t t = 0;
    int k = 0;
    lp_ev_call_enter(c, 0, t += 10);
    for (int i = 0; i < n; i++) {
        lp_ev_call_enter(c, i + 1, t += 10);
        for (int j = 0; j < ops_per; j++) {
            const char *name = distinct ? names[k++ % n_names] : names[j % n_names];
            lp_ev_op_start(c, name, 0, t += 10);
            lp_ev_op_end(c, t += 10);
        }
        lp_ev_call_exit(c, t += 10);
    }
    lp_ev_call_exit(c, t += 10);
    lp_collector_count_iteration(c);
    int64_t l2 = live_now();
    lp_collector_finish(c);
    int64_t l3 = live_now();
    p.tree_nodes = l1 - l0;
    p.collector = l2 - l1;
    p.tree_ops = l3 - l2;
    lp_collector_free(c);
    lp_tree_free(&tree);
    return p;
}

static int cmd_memory(void) {
    enum { N = 1000, M = 2000 };
    char(*names)[32] = malloc(sizeof(char[32]) * 2 * M);
    const char **name_ptrs = malloc(sizeof *name_ptrs * 2 * M);
    if (!names || !name_ptrs) die("out of memory");
    for (int i = 0; i < 2 * M; i++) {
        snprintf(names[i], sizeof names[i], "aten::op_%d", i);
        name_ptrs[i] = names[i];
    }
    /* Per module: 1000 vs 2000 leaves, no ops. */
    mem_probe a = probe(N, 0, name_ptrs, 1, 0), b = probe(2 * N, 0, name_ptrs, 1, 0);
    double tree_per_mod = (double)(b.tree_nodes - a.tree_nodes) / N;
    double coll_per_mod = (double)(b.collector - a.collector) / N;
    double coll_fixed = (double)a.collector - coll_per_mod * (N + 1);
    /* Per op row: 1000 leaves with 1 vs 2 ops of the same two names (rows, not names, grow). */
    mem_probe r1 = probe(N, 1, name_ptrs, 2, 0), r2 = probe(N, 2, name_ptrs, 2, 0);
    double coll_per_row = (double)(r2.collector - r1.collector) / N;
    double tree_per_row = (double)(r2.tree_ops - r1.tree_ops) / N;
    /* Per distinct op name: 1000 leaves each running a different name vs two different names. */
    mem_probe d1 = probe(N, 1, name_ptrs, 2 * M, 1), d2 = probe(N, 2, name_ptrs, 2 * M, 1);
    double coll_per_name = (double)(d2.collector - d1.collector) / N;
    double tree_per_name = (double)(d2.tree_ops - d1.tree_ops) / N;

    printf("MEM|module: tree node (path, names, figures)|%.0f\n", tree_per_mod);
    printf("MEM|module: collector (per-thread figures, selection)|%.0f\n", coll_per_mod);
    printf("MEM|op row (module, op) seen: collector (row, index)|%.0f\n", coll_per_row);
    printf("MEM|op row (module, op) seen: tree (op node)|%.0f\n", tree_per_row);
    printf("MEM|distinct op name + its row: collector|%.0f\n", coll_per_name);
    printf("MEM|distinct op name + its row: tree|%.0f\n", tree_per_name);
    printf("MEM|fixed: collector + one thread's state (stack, pointer map)|%.0f\n", coll_fixed);
    printf("INFO|sizes: lp_figures %zu B, lp_tree_node %zu B, lp_op_node %zu B; the collector's "
           "row index doubles, so bytes per row step between powers of two\n",
           sizeof(lp_figures), sizeof(lp_tree_node), sizeof(lp_op_node));
    free(names);
    free(name_ptrs);
    return 0;
}

/* ---- iterations
 * ---------------------------------------------------------------------------------- */

static int cmd_iterations(int max) {
    lp_tree tree;
    small_model(&tree);
    script s = {0};
    small_script(&s, SCRIPT_OPS | SCRIPT_MEMORY);
    lp_collector *c;
    lp_collector_config cc = bench_session_config(1, 1);
    if (lp_collector_create(&c, &tree, &cc)) die("lp_collector_create");
    uint64_t t = 0;
    int64_t first = 0, last = 0;
    for (int it = 1, next = 10; it <= max; it++) {
        play(c, &s, &t);
        lp_collector_count_iteration(c);
        if (it == next || it == max) {
            bench_heap h;
            bench_heap_get(&h);
            printf("CITER|%-12s|%6d|%10lld|%8llu|%10.1f\n", "synthetic", it, (long long)h.live,
                   (unsigned long long)h.calls, (double)bench_rss_now() / 1048576.0);
            if (it == 10 || !first) first = h.live;
            last = h.live;
            next *= 10;
        }
    }
    lp_collector_finish(c);
    char what[96];
    snprintf(what, sizeof what, "synthetic: core heap flat from 10 to %d iterations", max);
    bench_budget(what, last == first, "%+.0f B", (double)(last - first), "+0 B");
    free(s.ev);
    lp_collector_free(c);
    lp_tree_free(&tree);
    return 0;
}

/* ---- main
 * ------------------------------------------------------------------------------------------ */

/* ---- instructions ------------------------------------------------------------------------------
 *
 * Under callgrind (bench/instructions.py), each case's `iterations` forwards are counted alone:
 * collection is toggled on around them and the counts dumped under the case's name, while the
 * setup and the warm-up run uncounted. Instructions do not move with the machine's load, so the
 * counts are a regression gate where time ratios cannot be. Prints, per case, the events one
 * forward plays: module call pairs, op pairs, memory events. */
static int cmd_instructions(int iterations) {
#ifndef BENCH_HAVE_CALLGRIND
    (void)iterations;
    fprintf(stderr, "lp_bench_core: built without valgrind/callgrind.h: no instruction counts\n");
    return 2;
#else
    if (iterations < 1) iterations = 1;
    for (size_t k = 0; k < N_CASES; k++) {
        lp_tree tree;
        script s = {0};
        lp_collector *c = case_open(&k_cases[k], &tree, &s);
        size_t pairs = 0, ops = 0, mem = 0;
        for (size_t i = 0; i < s.n; i++) {
            pairs += s.ev[i].kind == EV_ENTER;
            ops += s.ev[i].kind == EV_OP;
            mem += s.ev[i].kind == EV_MEM;
        }
        uint64_t t = 0;
        for (int i = 0; i < 100; i++) { /* warm: rows, pointer map, as a long run is */
            play(c, &s, &t);
            lp_collector_count_iteration(c);
        }
        CALLGRIND_TOGGLE_COLLECT;
        for (int i = 0; i < iterations; i++) {
            play(c, &s, &t);
            lp_collector_count_iteration(c);
        }
        CALLGRIND_TOGGLE_COLLECT;
        char name[32];
        snprintf(name, sizeof name, "case%zu", k);
        CALLGRIND_DUMP_STATS_AT(name);
        lp_collector_stats st;
        lp_collector_finish(c);
        lp_collector_get_stats(c, &st);
        printf("CASE|%s|%s|%d|%zu|%zu|%zu|%s\n", name, k_cases[k].name, iterations, pairs, ops, mem,
               st.dropped || st.unbalanced ? "events dropped!" : "ok");
        free(s.ev);
        lp_collector_free(c);
        lp_tree_free(&tree);
    }
    return 0;
#endif
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(
            stderr,
            "usage: lp_bench_core throughput|memory|iterations|treesize|instructions [options]\n"
            "  (see bench/README.md; bench/run.sh runs everything)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* As lp_bench_torch: fixed heap thresholds, so no timing depends on glibc trimming a heap. */
    bench_fix_heap();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "throughput"))
        return cmd_throughput(atof(bench_arg(argc, argv, "--seconds", "2")),
                              bench_arg(argc, argv, "--only", NULL));
    if (!strcmp(cmd, "memory")) return cmd_memory();
    if (!strcmp(cmd, "instructions"))
        return cmd_instructions(atoi(bench_arg(argc, argv, "--iterations", "200")));
    if (!strcmp(cmd, "iterations"))
        return cmd_iterations(atoi(bench_arg(argc, argv, "--max", "1000")));
    if (!strcmp(cmd, "treesize"))
        return bench_cmd_treesize(atoi(bench_arg(argc, argv, "--min", "1000")),
                                  atoi(bench_arg(argc, argv, "--max", "100000")),
                                  atoi(bench_arg(argc, argv, "--reps", "3")));
    fprintf(stderr, "lp_bench_core: unknown command '%s'\n", cmd);
    return 2;
}

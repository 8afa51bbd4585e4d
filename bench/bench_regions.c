/* bench_regions.c: what regions, steps and a disabled session cost a program's own loop, through
 * the public API only (links liblayerprof): lp_session_region_begin/lp_session_region_end,
 * lp_session_forward, lp_session_step, lp_session_enable, lp_session_context_enable.
 *
 *   lp_bench_regions micro MODEL.pt [--pairs N] [--rounds R]
 *   lp_bench_regions macro MODEL.pt [--name N] [--target-s S] [--rounds R] [--clock cpu|wall]
 *                    [--diag 0|1]
 *
 * `micro`: the cost of one lp_session_region_begin + lp_session_region_end pair (no forward; the
 * model only opens the session) on a disabled session, in a disabled context of an enabled session,
 * and on an enabled session, beside an empty loop iteration and two calls of an empty function
 * through a pointer (what any out-of-line call costs). Each block runs N pairs back to back (caches
 * and branch predictors warm) and is timed as a whole on the thread's CPU clock; every round runs
 * one block of each setting, in an order that rotates by one each round.
 *
 * `macro`: a program's loop on one model, one intra-op thread, the model's recorded inputs:
 *   bare         lp_session_forward on a disabled session, no region, no step: the cheapest
 *                forward the API gives (no hook installed), the baseline;
 *   off+regions  per iteration: regions preprocess, forward (around lp_session_forward) and
 *                postprocess, then lp_session_step; session disabled;
 *   ctx-off      the same, session enabled but context "main" disabled;
 *   on+regions   the same, session and context enabled: modules only (no memory, no events);
 *   [A/A] bare, [off+step]  (--diag 1) a second baseline (the harness's own bias) and bare
 *                forwards followed by lp_session_step on the disabled session.
 * All run on one session on one thread, settings switched between blocks with lp_session_enable /
 * lp_session_context_enable, in rotating interleaved blocks, so the machine's noise hits each
 * alike. Times are per iteration, on the thread's CPU clock (--clock wall: the wall clock); ratios
 * are against `bare`. Each iteration also measures, on the wall clock, the time it spends outside
 * lp_session_forward: what the program's other calls cost where it makes them, right after a
 * forward has pushed layerprof's code and data out of the caches. The regions' cost is far below
 * the ratios' noise; this is where it shows.
 *
 * At the end each checks what the session recorded: `micro` every pair of the enabled blocks and
 * none other, `macro` the regions and the model's root exactly once per on+regions iteration
 * (exit status 3 otherwise).
 *
 * Output: `|`-separated lines that bench/run.sh turns into tables (MICRO|, MACRO|, INFO|, and
 * BUDGET| lines as bench_stats.h writes them). */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "layerprof.h"

static void die(const char *what, int rc) {
    fprintf(stderr, "lp_bench_regions: %s: %s (%d, %s)\n", what, lp_error_last(), rc,
            lp_status_name(rc));
    exit(2);
}

static void check(int rc, const char *what) {
    if (rc) die(what, rc);
}

static uint64_t wall_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static lp_session *open_session(const char *path) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.threads = 1;
    lp_session *s = NULL;
    check(lp_session_open(&s, &o), "lp_session_open");
    return s;
}

/* ---- micro: one begin/end pair ---------------------------------------------------------------
 */

typedef enum micro_kind { MICRO_EMPTY, MICRO_CALLS, MICRO_REGIONS } micro_kind;

typedef struct micro_setting {
    const char *name;
    micro_kind kind;
    int enabled,
        context;      /* lp_session_enable, lp_session_context_enable("main") before each block */
    bench_samples ns; /* ns per pair, one per round */
} micro_setting;

static void noop(lp_session *s, const char *name) {
    (void)s, (void)name;
}
/* Through a volatile pointer: the compiler cannot inline or drop the calls. */
static void (*volatile g_noop)(lp_session *, const char *) = noop;

/* ns per pair over one block of `n` pairs. */
static double micro_block(lp_session *s, micro_setting *m, long n) {
    if (m->kind == MICRO_REGIONS) {
        check(lp_session_enable(s, m->enabled), "lp_session_enable");
        check(lp_session_context_enable(s, "main", m->context), "lp_session_context_enable");
    }
    int rc = 0;
    uint64_t t0 = bench_cpu_ns();
    switch (m->kind) {
    case MICRO_EMPTY:
        for (long i = 0; i < n; i++)
            __asm__ volatile("" ::: "memory");
        break;
    case MICRO_CALLS:
        for (long i = 0; i < n; i++) {
            void (*f)(lp_session *, const char *) = g_noop;
            f(s, "region");
            f = g_noop;
            f(s, "region");
        }
        break;
    case MICRO_REGIONS:
        for (long i = 0; i < n; i++) {
            rc |= lp_session_region_begin(s, "region");
            rc |= lp_session_region_end(s, "region");
        }
        break;
    }
    uint64_t t1 = bench_cpu_ns();
    if (rc) die("lp_session_region_begin/lp_session_region_end in a block", rc);
    return (double)(t1 - t0) / (double)n;
}

static int cmd_micro(const char *path, long pairs, int rounds) {
    lp_session *s = open_session(path);
    micro_setting ms[] = {
        {"empty loop", MICRO_EMPTY, 0, 0, {0}}, {"2 no-op calls", MICRO_CALLS, 0, 0, {0}},
        {"disabled", MICRO_REGIONS, 0, 1, {0}}, {"ctx-off", MICRO_REGIONS, 1, 0, {0}},
        {"enabled", MICRO_REGIONS, 1, 1, {0}},
    };
    size_t nm = sizeof ms / sizeof ms[0];
    for (size_t i = 0; i < nm; i++) /* warm-up: the region is interned, the thread's state made */
        micro_block(s, &ms[i], pairs / 10 + 1);
    for (int r = 0; r < rounds; r++)
        for (size_t j = 0; j < nm; j++) {
            micro_setting *m = &ms[(j + (size_t)r) % nm];
            bench_samples_add(&m->ns, micro_block(s, m, pairs));
        }
    double empty = bench_median(ms[0].ns.v, ms[0].ns.n);
    for (size_t i = 0; i < nm; i++) {
        micro_setting *m = &ms[i];
        double med = bench_median(m->ns.v, m->ns.n);
        /* The median per-round ratio to the empty loop with its interval (bench_ratio_interval: no
         * [A/A] here, so the floor). */
        char x[32] = "1.0";
        if (i > 0) {
            bench_interval xi = bench_ratio_interval(&m->ns, &ms[0].ns, 0, NULL);
            snprintf(x, sizeof x, "%.1f ±%.1f", xi.mid, bench_half_width(xi));
        }
        printf("MICRO|%-13s|%8.2f|%12s|%8.2f|%ld x %d\n", m->name, med, x, med - empty, pairs,
               rounds);
    }
    for (size_t i = 0; i < nm; i++)
        bench_samples_free(&ms[i].ns);
    check(lp_session_enable(s, 1), "lp_session_enable");
    check(lp_session_context_enable(s, "main", 1), "lp_session_context_enable");
    /* Only the enabled blocks' pairs should have been recorded (warm-up included). */
    size_t idx = 0;
    lp_node_info ni;
    unsigned long long want = (unsigned long long)pairs * (unsigned long long)rounds +
                              (unsigned long long)(pairs / 10 + 1);
    int ok = 0;
    if (lp_session_find(s, "main/region", &idx) == LP_OK && lp_session_node(s, idx, &ni) == LP_OK) {
        ok = ni.raw_calls == want;
        printf("INFO|micro: recorded %s: region main/region %llu calls for %llu enabled pairs\n",
               ok ? "ok" : "MISMATCH", (unsigned long long)ni.raw_calls, want);
    } else {
        printf("INFO|micro: recorded MISMATCH: no region main/region in the report (%s)\n",
               lp_error_last());
    }
    lp_session_close(s);
    return ok ? 0 : 3;
}

/* ---- macro: a program's loop around forwards -------------------------------------------------
 */

typedef struct macro_setting {
    const char *name;
    int regions; /* 0: bare lp_session_forward; 1: regions + forward + step; 2: step */
    int enabled,
        context;     /* lp_session_enable, lp_session_context_enable("main") before each block */
    int profiled;    /* whether its forwards are profiled (the table says so) */
    bench_samples t; /* per iteration, primary clock, timed rounds */
    bench_samples other;     /* the same on the other clock */
    bench_samples outside;   /* wall ns per iteration outside lp_session_forward */
    bench_samples block;     /* per round: the block's median */
    bench_samples out_block; /* per round: the block's median of `outside` */
    double *scratch;
    uint64_t iters, steps; /* all iterations run (warm-up included), steps among them */
} macro_setting;

static int g_cpu_clock = 1;

/* One iteration of the program's loop. Returns the wall ns it spent outside lp_session_forward:
 * what the other calls cost where a program makes them, between forwards that have evicted
 * layerprof's data and code from the caches (plus two reads of the clock, ~2 x 20 ns). */
static double iteration(lp_session *s, int regions) {
    uint64_t t0 = wall_ns(), f0, f1;
    if (regions != 1) {
        f0 = wall_ns();
        check(lp_session_forward(s, NULL, NULL), "lp_session_forward (no region)");
        f1 = wall_ns();
        if (regions == 2) check(lp_session_step(s), "lp_session_step (no region)");
    } else {
        check(lp_session_region_begin(s, "preprocess"), "lp_session_region_begin(preprocess)");
        check(lp_session_region_end(s, "preprocess"), "lp_session_region_end(preprocess)");
        check(lp_session_region_begin(s, "forward"), "lp_session_region_begin(forward)");
        f0 = wall_ns();
        check(lp_session_forward(s, NULL, NULL), "lp_session_forward (in region forward)");
        f1 = wall_ns();
        check(lp_session_region_end(s, "forward"), "lp_session_region_end(forward)");
        check(lp_session_region_begin(s, "postprocess"), "lp_session_region_begin(postprocess)");
        check(lp_session_region_end(s, "postprocess"), "lp_session_region_end(postprocess)");
        check(lp_session_step(s), "lp_session_step");
    }
    uint64_t t1 = wall_ns();
    return (double)((t1 - t0) - (f1 - f0));
}

static void macro_block(lp_session *s, macro_setting *m, int n, int record) {
    check(lp_session_enable(s, m->enabled), "lp_session_enable");
    check(lp_session_context_enable(s, "main", m->context), "lp_session_context_enable");
    size_t first = m->t.n;
    for (int i = 0; i < n; i++) {
        uint64_t a = wall_ns(), ac = bench_cpu_ns();
        double outside = iteration(s, m->regions);
        uint64_t bc = bench_cpu_ns(), b = wall_ns();
        if (record) {
            bench_samples_add(&m->outside, outside);
            double wall = (double)(b - a), cpu = (double)(bc - ac);
            bench_samples_add(&m->t, g_cpu_clock ? cpu : wall);
            bench_samples_add(&m->other, g_cpu_clock ? wall : cpu);
        }
    }
    m->iters += (uint64_t)n;
    m->steps += m->regions ? (uint64_t)n : 0;
    if (record) {
        size_t k = m->t.n - first;
        memcpy(m->scratch, m->t.v + first, k * sizeof *m->scratch);
        bench_samples_add(&m->block, bench_quantile_inplace(m->scratch, k, 0.5));
        memcpy(m->scratch, m->outside.v + first, k * sizeof *m->scratch);
        bench_samples_add(&m->out_block, bench_quantile_inplace(m->scratch, k, 0.5));
    }
}

/* The raw calls of the report node at `path`, or -1 when there is none. */
static long long node_calls(lp_session *s, const char *path) {
    size_t idx;
    lp_node_info ni;
    if (lp_session_find(s, path, &idx) != LP_OK || lp_session_node(s, idx, &ni) != LP_OK) return -1;
    return (long long)ni.raw_calls;
}

/* Per round r: what m's calls outside the forward cost beyond bare's, as a share (%) of bare's
 * iteration: (m's block median of `outside` - bare's) / bare's block median, round r. */
static void share_rounds(const macro_setting *m, const macro_setting *bare, bench_samples *out) {
    for (size_t r = 0; r < m->out_block.n && r < bare->out_block.n && r < bare->block.n; r++)
        bench_samples_add(out, (m->out_block.v[r] - bare->out_block.v[r]) / bare->block.v[r] * 100);
}

/* What no in-process figure shows for the in-loop cost: it differs between processes of the same
 * code by up to a tenth of itself (bench/results/2026-11-26-verdicts-two-runs.md: nested 195 and
 * 208 ns, resnet18 5,728 and 6,344 ns in two full runs; nested 0.109-0.116% of a forward in three
 * runs within two minutes), from where each process's code and data land in the caches the forward
 * has just evicted. */
static const double k_share_floor = 0.10;

/* The interval of the median of the per-round shares (share_rounds): bench_median_ci's order
 * statistics, widened each side by `aa` (the [A/A] bare's own share interval's farther end from
 * 0, in points) or by k_share_floor of the figure itself, whichever is larger. */
static bench_interval share_interval(const macro_setting *m, const macro_setting *bare, double aa,
                                     double *cover) {
    bench_samples sh = {0};
    share_rounds(m, bare, &sh);
    bench_interval i = bench_median_ci(sh.v, sh.n, cover);
    bench_samples_free(&sh);
    double floor = k_share_floor * (i.mid < 0 ? -i.mid : i.mid);
    double w = aa > floor ? aa : floor;
    i.lo -= w;
    i.hi += w;
    return i;
}

static int cmd_macro(const char *path, const char *name, double target_s, int rounds, int diag) {
    lp_session *s = open_session(path);
    macro_setting ms[] = {
        {"bare", 0, 0, 1, 0, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
        {"off+regions", 1, 0, 1, 0, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
        {"ctx-off", 1, 1, 0, 0, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
        {"on+regions", 1, 1, 1, 1, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
        /* Diagnostics: the harness's own bias, and the step alone. */
        {"[A/A] bare", 0, 0, 1, 0, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
        {"[off+step]", 2, 0, 1, 0, {0}, {0}, {0}, {0}, {0}, NULL, 0, 0},
    };
    size_t nm = sizeof ms / sizeof ms[0] - (diag ? 0 : 2);

    /* Calibration on the baseline: four forwards of the executor's own warm-up, then three timed.
     */
    macro_block(s, &ms[0], 4, 0);
    uint64_t c0 = bench_cpu_ns();
    macro_block(s, &ms[0], 3, 0);
    double fwd_ns = (double)(bench_cpu_ns() - c0) / 3;
    int per_block = (int)(target_s / rounds * 1e9 / (fwd_ns > 1 ? fwd_ns : 1));
    if (per_block < 2) per_block = 2;
    for (size_t i = 0; i < nm; i++) {
        ms[i].scratch = malloc((size_t)per_block * sizeof *ms[i].scratch);
        if (!ms[i].scratch) die("out of memory", LP_ERR_NOMEM);
    }
    for (size_t i = 0; i < nm; i++) /* warm-up block per setting: regions interned, tree mounted */
        macro_block(s, &ms[i], per_block < 4 ? per_block : 4, 0);

    uint64_t w0 = wall_ns(), p0 = bench_cpu_ns();
    for (int r = 0; r < rounds; r++)
        for (size_t j = 0; j < nm; j++)
            macro_block(s, &ms[(j + (size_t)r) % nm], per_block, 1);
    double wall = (double)(wall_ns() - w0), cpu = (double)(bench_cpu_ns() - p0);

    double base = bench_median(ms[0].t.v, ms[0].t.n);
    double base_other = bench_median(ms[0].other.v, ms[0].other.n);
    /* The harness's own spread, from the [A/A] bare row (--diag 1): on the ratio of iterations
     * (widens every x_bare) and on the share of the calls outside the forward (widens the
     * budget's). Without it, the floor alone. */
    double aa_dev = 0, aa_share = 0;
    if (diag) {
        aa_dev = bench_aa_spread(&ms[4].block, &ms[0].block);
        bench_interval a = share_interval(&ms[4], &ms[0], 0, NULL);
        aa_share = -a.lo > a.hi ? -a.lo : a.hi;
        if (aa_share < 0) aa_share = 0;
    }
    char other_note[256];
    int on = snprintf(other_note, sizeof other_note, "%s, %s clock: bare %.1f us", name,
                      g_cpu_clock ? "wall" : "CPU", base_other / 1e3);
    for (size_t i = 0; i < nm; i++) {
        macro_setting *m = &ms[i];
        double med = bench_median(m->t.v, m->t.n);
        /* x_bare: the median per-round ratio to bare with its interval (bench_ratio_interval,
         * widened by the [A/A] spread or the floor; the [A/A] row itself by the floor). */
        bench_interval xi = {1, 1, 1};
        char xs[32] = "1.000";
        if (i > 0) {
            xi = bench_ratio_interval(&m->block, &ms[0].block,
                                      strcmp(m->name, "[A/A] bare") ? aa_dev : 0, NULL);
            snprintf(xs, sizeof xs, "%.3f ±%.3f", xi.mid, bench_half_width(xi));
        }
        double out = bench_median(m->outside.v, m->outside.n);
        /* +ns: the median over rounds of the block medians' difference to bare's. */
        bench_samples d = {0};
        for (size_t r = 0; r < m->out_block.n && r < ms[0].out_block.n; r++)
            bench_samples_add(&d, m->out_block.v[r] - ms[0].out_block.v[r]);
        double extra_ns = bench_median(d.v, d.n);
        bench_samples_free(&d);
        const char *calls = m->regions == 1 ? "3+step" : m->regions == 2 ? "step" : "-";
        printf("MACRO|%-12s|%-11s|%-6s|%-4s|%10.1f|%13s|%+9.2f|%10.0f|%+8.0f|%d x %d\n", name,
               m->name, calls, m->profiled ? "yes" : "no", med / 1e3, xs, (med - base) / 1e3, out,
               extra_ns, rounds, per_block);
        if (i > 0 && on > 0 && (size_t)on < sizeof other_note)
            on += snprintf(other_note + on, sizeof other_note - (size_t)on, ", %s x%.3f", m->name,
                           bench_median(m->other.v, m->other.n) / base_other);
        if (!strcmp(m->name, "off+regions")) {
            /* "A disabled session costs nearly nothing": what the program's calls cost in its loop,
             * as a share of the cheapest forward, per round, with the interval of its median; the
             * ratio x is beside it, but its noise (~±0.5%) is larger than the cost it would show.
             */
            char what[96], text[96], note[160];
            double cover = 0;
            bench_interval sh = share_interval(m, &ms[0], aa_share, &cover);
            snprintf(what, sizeof what, "%s disabled session: 3 regions + step, of a forward",
                     name);
            snprintf(text, sizeof text, "%.0f ns, %.3f%% [%.3f, %.3f] (x %.3f [%.3f, %.3f])",
                     extra_ns, sh.mid, sh.lo, sh.hi, xi.mid, xi.lo, xi.hi);
            bench_margin_note(note, sizeof note, 1.0 - sh.mid, bench_half_width(sh), 3, "%");
            bench_verdict vd = bench_judge_at_most(sh.lo, sh.hi, 1.0);
            if (sh.hi < 0) {
                /* The regions and the step cannot cost less than nothing. */
                vd = BENCH_SUSPECT;
                snprintf(note, sizeof note,
                         "SUSPECT: cheaper than bare beyond the noise: the harness, not the code");
            } else if (cover < BENCH_MIN_COVERAGE) {
                vd = BENCH_UNSURE;
                snprintf(note, sizeof note, "%d rounds: the interval covers %.0f%% < 95%%", rounds,
                         cover * 100);
            }
            bench_budget_verdict(what, vd, text, "<= 1%", note);
        }
    }
    printf("INFO|%s\n", other_note);
    printf("INFO|%s: %d rounds x %d iterations per setting; cpu/wall %.2f\n", name, rounds,
           per_block, wall > 0 ? cpu / wall : 0);
    double cover = 0;
    bench_median_ci(ms[0].block.v, ms[0].block.n, &cover);
    printf("INFO|%s: each ± is the %.1f%% order-statistic interval of the median per-round ratio, "
           "widened each side by the [A/A] spread %.3f (at least %.3f); the budget's share of a "
           "forward, by the [A/A]'s own share %.4f points (at least %.3f of itself)%s\n",
           name, cover * 100, aa_dev, BENCH_RATIO_FLOOR, aa_share, k_share_floor,
           diag ? "" : " (no [A/A]: --diag 0)");

    /* What the session recorded: only on+regions's iterations should show (warm-up included). */
    check(lp_session_enable(s, 1), "lp_session_enable");
    check(lp_session_context_enable(s, "main", 1), "lp_session_context_enable");
    uint64_t steps = 0, rec = ms[3].iters;
    for (size_t i = 0; i < nm; i++)
        steps += ms[i].steps;
    lp_run_info ri;
    check(lp_session_run_info(s, &ri), "lp_session_run_info");
    long long fwd = node_calls(s, "main/forward"), model = node_calls(s, "main/forward/");
    long long pre = node_calls(s, "main/preprocess");
    int ok = fwd == (long long)rec && model == (long long)rec && pre == (long long)rec;
    printf("INFO|%s: recorded %s: regions main/forward %lld, main/preprocess %lld, model root %lld "
           "calls for %llu enabled iterations; %llu events, %llu dropped; the session counts %llu "
           "iterations for %llu steps\n",
           name, ok ? "ok" : "MISMATCH", fwd, pre, model, (unsigned long long)rec,
           (unsigned long long)ri.events, (unsigned long long)ri.dropped,
           (unsigned long long)ri.iterations, (unsigned long long)steps);

    for (size_t i = 0; i < nm; i++) {
        bench_samples_free(&ms[i].t);
        bench_samples_free(&ms[i].other);
        bench_samples_free(&ms[i].outside);
        bench_samples_free(&ms[i].block);
        bench_samples_free(&ms[i].out_block);
        free(ms[i].scratch);
    }
    lp_session_close(s);
    return ok ? 0 : 3;
}

/* ---- main -------------------------------------------------------------------------------------
 */

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: lp_bench_regions micro|macro MODEL.pt [options]\n"
                        "  (see the comment at the top of bench/bench_regions.c; bench/run.sh runs "
                        "it)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* The same fixed heap thresholds as lp_bench_torch (see bench/README.md). */
    bench_fix_heap();
    const char *cmd = argv[1], *path = argv[2];
    char name_buf[128];
    bench_model_name(path, name_buf, sizeof name_buf);
    const char *name = bench_arg(argc, argv, "--name", name_buf);
    g_cpu_clock = strcmp(bench_arg(argc, argv, "--clock", "cpu"), "wall") != 0;
    int rounds = atoi(bench_arg(argc, argv, "--rounds", "20"));
    if (rounds < 1) rounds = 1;
    if (!strcmp(cmd, "micro")) {
        long pairs = atol(bench_arg(argc, argv, "--pairs", "1000000"));
        return cmd_micro(path, pairs > 0 ? pairs : 1, rounds);
    }
    if (!strcmp(cmd, "macro"))
        return cmd_macro(path, name, atof(bench_arg(argc, argv, "--target-s", "3")), rounds,
                         atoi(bench_arg(argc, argv, "--diag", "1")));
    fprintf(stderr, "lp_bench_regions: unknown command '%s'\n", cmd);
    return 2;
}

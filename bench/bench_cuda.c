/* bench_cuda.c: what CUDA time per module costs on a GPU, in one process (bench/README.md, GPU).
 *
 *   lp_bench_cuda MODEL.pt [--input SPEC]... [--device cuda[:N]] [--rounds R] [--target-s S]
 *                 [--name NAME]
 *
 * Settings, each a block of forwards per round, the order rotating from round to round:
 *   opt            the model loaded a second time, optimised, unmarked, unprofiled: x_opt's base
 *   [A/A]          opt again, as a setting of its own: the harness's bias (should read 1.000)
 *   markers        the marked model, unprofiled
 *   modules        modules only, no CUDA time
 *   cupti          modules + CUDA time through CUPTI, launches tagged by callbacks (the default)
 *   cupti-api      the same, tagged through API records of the launch functions only
 *   cupti-api-all  the same, tagged through API records of every CUDA call
 *   events         modules + CUDA time through CUDA events
 * A forward is timed from the call until the device is idle (the shim synchronises), on the wall
 * clock: on a GPU the CPU clock would leave the kernels out. CUPTI is one subscriber per process,
 * so each CUDA-timed block claims it and gives it back; that happens between forwards, untimed.
 *
 * Prints a ROW per setting (median per forward, x_opt, launches per forward, ns per launch over
 * opt) and BUDGET lines (bench_stats.h): <= 1.05x on resnet50 at batch 32 and <= 1.25x on
 * resnet18 at batch 1, with CUPTI on (as the CUDA issue set them; the name decides which), read
 * PASS, MISS, UNSURE or SUSPECT as the CPU bench's are (bench/README.md, Verdicts).
 * Without a GPU it says so and exits 77. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "bench_model.h"
#include "bench_util.h"
#include "collect/collector.h"
#include "collect/cuda_prof.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "model/tree.h"

static void die(const char *what) {
    fprintf(stderr, "lp_bench_cuda: %s: %s\n", what, lp_error_last());
    exit(2);
}

/* ---- the model ---------------------------------------------------------------------------- */

static const char *g_device = "cuda";

/* ---- settings ----------------------------------------------------------------------------- */

typedef struct setting {
    const char *name;
    int profiled;
    int timing;          /* lp_cuda_timing; LP_CUDA_TIMING_OFF: none */
    const char *tagging; /* LAYERPROF_CUPTI_TAGGING for cupti */
    bench_model *bm;
    bench_recording rec; /* the session's tree and collector (profiled settings) */
    lp_cuda_prof *prof;  /* open during this setting's blocks only */
    bench_samples fwd;
    bench_samples block_med;     /* per timed round: the median forward of this setting's block */
    bench_samples first;         /* per timed round: the block's first forward, untimed in x_opt */
    uint64_t launches, forwards; /* CUDA records joined, forwards they came from */
    int unavailable;             /* the method could not be had here: said once, then skipped */
} setting;

/* The collector's scope hooks are fixed at its creation; the CUDA profiler is opened per block
 * (CUPTI's one subscriber slot), so they go through the setting. */
static void scope_enter(void *ctx, uint64_t scope, int32_t module, const char *op) {
    setting *s = ctx;
    lp_scope_hooks h = lp_cuda_prof_hooks(s->prof);
    if (h.enter) h.enter(h.ctx, scope, module, op);
}
static void scope_exit(void *ctx, uint64_t scope) {
    setting *s = ctx;
    lp_scope_hooks h = lp_cuda_prof_hooks(s->prof);
    if (h.exit) h.exit(h.ctx, scope);
}

static void setting_open(setting *s, bench_model *bm) {
    s->bm = bm;
    if (!s->profiled) return;
    lp_scope_hooks scopes = {s, scope_enter, scope_exit};
    bench_recording_open(&s->rec, bm->m, LP_MODE_MARKERS, 0, 0, 1,
                         s->timing != LP_CUDA_TIMING_OFF ? &scopes : NULL);
}

static int prof_open(setting *s) {
    if (s->timing == LP_CUDA_TIMING_OFF) return 0;
    if (s->tagging) setenv("LAYERPROF_CUPTI_TAGGING", s->tagging, 1);
    lp_cuda_events_backend ev = {s->bm->m,
                                 lps_cuda_events_begin,
                                 lps_cuda_events_push,
                                 lps_cuda_events_pop,
                                 lps_cuda_events_collect,
                                 lps_cuda_events_end};
    lp_cuda_prof_config pc = {.cuda_device = 1,
                              .timing = s->timing,
                              .tree = &s->rec.tree,
                              .events = lps_cuda_built() ? &ev : NULL};
    if (lp_cuda_prof_open(&s->prof, &pc) || lp_cuda_prof_begin(s->prof)) {
        if (!s->unavailable) printf("INFO|%s: not measured here: %s\n", s->name, lp_error_last());
        s->unavailable = 1;
        lp_cuda_prof_close(s->prof);
        s->prof = NULL;
        return -1;
    }
    return 0;
}

static void prof_close(setting *s) {
    if (!s->prof) return;
    if (lp_cuda_prof_end(s->prof, s->rec.c)) die("lp_cuda_prof_end");
    lp_cuda_join_stats st;
    lp_cuda_prof_stats(s->prof, &st);
    s->launches += st.records;
    lp_cuda_prof_close(s->prof);
    s->prof = NULL;
}

static void run_block(setting *s, int n, int record) {
    if (s->unavailable) return;
    if (s->profiled) {
        if (prof_open(s)) return;
        lp_event_sink sink = bench_recording_sink(&s->rec); /* what the CLI pays */
        if (lps_profile_begin(s->bm->m, &sink, s->rec.hooks)) die("lps_profile_begin");
    }
    size_t first = s->fwd.n;
    /* One forward more than the block's n, the first: a CUDA-timed block claims the profiler at
     * its start, and whatever that leaves to the next launches is paid once per session in a
     * program but once per block here, so with few forwards per block it would weigh in each
     * block's median (docs/cuda.md has the run that showed it). Timed apart (the INFO lines,
     * every setting's, so the unprofiled ones' first forwards are the control), never in x_opt;
     * each block's median is of n forwards that follow another. */
    for (int i = -1; i < n; i++) {
        uint64_t a = lp_now_ns();
        bench_forward(s->bm);
        uint64_t b = lp_now_ns();
        if (record) bench_samples_add(i < 0 ? &s->first : &s->fwd, (double)(b - a));
        if (s->profiled) {
            lp_collector_count_iteration(s->rec.c);
            if (s->prof && lp_cuda_prof_iteration_done(s->prof, s->rec.c)) die("iteration_done");
        }
    }
    if (record) bench_samples_add(&s->block_med, bench_median(s->fwd.v + first, s->fwd.n - first));
    if (s->profiled) {
        lps_profile_end(s->bm->m);
        uint64_t before = s->launches;
        prof_close(s);
        if (!record)
            s->launches = before;
        else
            s->forwards += (uint64_t)(s->timing != LP_CUDA_TIMING_OFF ? n + 1 : 0);
    }
}

/* ---- main --------------------------------------------------------------------------------- */

static const char *budget_for(const char *name, double *limit) {
    if (strstr(name, "resnet50")) return *limit = 1.05, "<= 1.05x";
    if (strstr(name, "resnet18")) return *limit = 1.25, "<= 1.25x";
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: lp_bench_cuda MODEL.pt [--input SPEC]... [--device cuda[:N]] "
                        "[--rounds R] [--target-s S] [--name NAME]\n");
        return 2;
    }
    const char *path = argv[1], *name = path;
    int rounds = 20;
    double target_s = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--input")) {
            continue; /* bench_inputs_from_args */
        } else if (!strcmp(argv[i], "--device")) {
            g_device = argv[i + 1];
        } else if (!strcmp(argv[i], "--rounds")) {
            rounds = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--target-s")) {
            target_s = atof(argv[i + 1]);
        } else if (!strcmp(argv[i], "--name")) {
            name = argv[i + 1];
        } else {
            fprintf(stderr, "lp_bench_cuda: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (rounds < 1 || target_s <= 0) {
        fprintf(stderr, "lp_bench_cuda: --rounds and --target-s must be positive\n");
        return 2;
    }
    bench_inputs_from_args(argc, argv);
    lps_set_verbose(0);
    if (lps_cuda_check(g_device)) {
        printf("skipped: %s\n", lp_error_last());
        return 77;
    }
    bench_model opt, marked;
    bench_model_open(&opt, path, g_device, LPS_EXEC_OPTIMISED);
    bench_model_open(&marked, path, g_device, LPS_EXEC_MARKERS);

    setting ss[] = {
        {.name = "opt", .timing = LP_CUDA_TIMING_OFF},
        /* The optimised model again, as a setting of its own: the harness's own bias and
         * spread (it should read 1.000); every interval is widened by it. */
        {.name = "[A/A]", .timing = LP_CUDA_TIMING_OFF},
        {.name = "markers", .timing = LP_CUDA_TIMING_OFF},
        {.name = "modules", .profiled = 1, .timing = LP_CUDA_TIMING_OFF},
        {.name = "cupti", .profiled = 1, .timing = LP_CUDA_TIMING_CUPTI, .tagging = "callbacks"},
        {.name = "cupti-api",
         .profiled = 1,
         .timing = LP_CUDA_TIMING_CUPTI,
         .tagging = "api-launches"},
        {.name = "cupti-api-all",
         .profiled = 1,
         .timing = LP_CUDA_TIMING_CUPTI,
         .tagging = "api-all"},
        {.name = "events", .profiled = 1, .timing = LP_CUDA_TIMING_EVENTS},
    };
    size_t ns = sizeof ss / sizeof ss[0];
    for (size_t i = 0; i < ns; i++) {
        int unmarked = !strcmp(ss[i].name, "opt") || !strcmp(ss[i].name, "[A/A]");
        setting_open(&ss[i], unmarked ? &opt : &marked);
    }

    /* Warm-up: TorchScript's profiling executor optimises in the first forwards, cuDNN picks its
     * algorithms; then one untimed block per setting. */
    uint64_t est = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = lp_now_ns();
        bench_forward(&opt);
        bench_forward(&marked);
        uint64_t d = lp_now_ns() - a;
        if (d < est) est = d;
    }
    int per_block = (int)(target_s * 1e9 / ((double)rounds * (double)ns * (double)est / 2) + 0.5);
    if (per_block < 2) per_block = 2;
    for (size_t i = 0; i < ns; i++)
        run_block(&ss[i], per_block, 0);
    for (int r = 0; r < rounds; r++)
        for (size_t j = 0; j < ns; j++)
            run_block(&ss[(j + (size_t)r) % ns], per_block, 1);

    double base = bench_median(ss[0].fwd.v, ss[0].fwd.n);
    printf("INFO|%s on %s: %d rounds of %d forwards per setting (and a first one, set apart); "
           "opt %.1f us per forward\n",
           name, g_device, rounds, per_block, base / 1e3);
    /* x_opt: the median over rounds of this setting's block median over opt's in the same
     * round, so drift between rounds (clocks, the other tenants of a shared machine) cancels;
     * ± is the larger half of its 95% interval (bench_ratio_interval), widened by how far [A/A]
     * strays from 1 (at least BENCH_RATIO_FLOOR), as the CPU bench does. */
    double aa_dev = 0;
    for (size_t i = 1; i < ns; i++)
        if (!strcmp(ss[i].name, "[A/A]")) {
            bench_interval a = bench_ratio_interval(&ss[i].block_med, &ss[0].block_med, -1, NULL);
            aa_dev = fabs(a.lo - 1) > fabs(a.hi - 1) ? fabs(a.lo - 1) : fabs(a.hi - 1);
        }
    for (size_t i = 0; i < ns; i++) {
        setting *s = &ss[i];
        if (!s->fwd.n) continue;
        double med = bench_median(s->fwd.v, s->fwd.n);
        double q1 = bench_quantile(s->fwd.v, s->fwd.n, 0.25);
        double q3 = bench_quantile(s->fwd.v, s->fwd.n, 0.75);
        int aa = !strcmp(s->name, "[A/A]");
        bench_interval x =
            bench_ratio_interval(&s->block_med, &ss[0].block_med, aa ? 0 : aa_dev, NULL);
        double per_fwd = s->forwards ? (double)s->launches / (double)s->forwards : 0;
        char launches[32] = "-", ns_launch[32] = "-";
        if (per_fwd > 0) {
            snprintf(launches, sizeof launches, "%.0f", per_fwd);
            snprintf(ns_launch, sizeof ns_launch, "%.0f", (x.mid - 1) * base / per_fwd);
        }
        printf("ROW|%-14s|%-13s|%10.1f|%10.1f|%7.3f|%7.3f|%8s|%8s\n", name, s->name, med / 1e3,
               (q3 - q1) / 2e3, x.mid, bench_half_width(x), launches, ns_launch);
        double limit = 0;
        const char *limit_text = budget_for(name, &limit);
        if (limit_text && !strcmp(s->name, "cupti")) {
            char what[128], value[64], note[96] = "";
            snprintf(what, sizeof what, "%s CUDA time per module (CUPTI), x optimised", name);
            snprintf(value, sizeof value, "%.3fx ±%.3f", x.mid, bench_half_width(x));
            /* A profiled forward faster than the unprofiled optimised one beyond the noise is
             * not a measurement: the harness is at fault, never a PASS. */
            bench_ratio_check check = bench_ratio_check_of(x);
            bench_verdict v = bench_judge(x, limit, check, 0);
            if (check) bench_check_note(note, sizeof note, check, "the unprofiled optimised model");
            bench_budget_verdict(what, v, value, limit_text, note);
        }
    }
    /* Every setting's, the unprofiled ones too: what a CUDA-timed block's first forward costs
     * beyond any block's first forward. */
    for (size_t i = 0; i < ns; i++)
        if (ss[i].first.n)
            printf("INFO|%s: a block's first forward %.1f us, median; not in x_opt\n", ss[i].name,
                   bench_median(ss[i].first.v, ss[i].first.n) / 1e3);
    for (size_t i = 0; i < ns; i++) {
        bench_samples_free(&ss[i].fwd);
        bench_samples_free(&ss[i].first);
        bench_samples_free(&ss[i].block_med);
        if (ss[i].rec.c) bench_recording_close(&ss[i].rec);
    }
    bench_model_close(&opt);
    bench_model_close(&marked);
    return 0;
}

/* bench_overhead.c: `lp_bench_torch overhead` (bench_overhead.h). One table row per profiling
 * setting plus BUDGET lines (bench_stats.h).
 *
 * x_opt, the ratio users care about, is against a second copy of the model loaded with the
 * optimizer on and no markers, run unprofiled in the same process, interleaved with the other
 * settings: across processes on a shared machine that baseline swung from 0.58x to 1.84x for the
 * same code. Two copies can run side by side because the executor mode is thread-local and set
 * before each forward (shim/model.cpp), and each copy has its own compiled functions. Another
 * copy, loaded like the first, is the [A/A] setting (add_settings says why). With `--copies K`,
 * each kind has K copies and the rounds rotate over them (bench_copy_plan in bench_stats.h says
 * why). The profiled settings record as a session does (bench_model.h).
 *
 * Why one thread per setting: the collector finds a thread's state through a thread-local cache
 * keyed by the collector; alternating two collectors on one thread makes it claim a new state
 * (and allocate) at every switch. Each setting therefore runs its blocks on its own thread, which
 * keeps every collector on one warm state, exactly as one session on one thread would be. The
 * unprofiled baseline runs on a thread of its own too, so all settings are measured alike. */
#define _GNU_SOURCE
#include "bench_overhead.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/clock.h"
#include "bench_model.h"
#include "bench_util.h"

static void die(const char *what) {
    fprintf(stderr, "lp_bench_torch: %s: %s\n", what, lp_error_last());
    exit(2);
}

/* ---- a setting and its thread ------------------------------------------------------------ */

typedef struct variant {
    const char *name;
    int profiled; /* 0: unprofiled (the baseline, opt, [A/A]) */
    int memory, ops;
    int empty_sink; /* diagnostic: the shim's callbacks into a sink that only counts (no core) */
    bench_counts k;
    bench_model *bm;
    bench_recording rec;      /* the session's tree, collector and hooks (profiled, not empty) */
    unsigned hooks;           /* the hooks installed around each block (0: none) */
    bench_samples fwd;        /* ns per forward, timed rounds only (the primary clock) */
    bench_samples fwd_other;  /* the same on the other clock (wall when the primary is CPU) */
    size_t round_first;       /* where this round's forwards start in `fwd` */
    bench_samples block_med;  /* per round: median of the block (a diagnostic, see BLOCK_Q) */
    bench_samples block_fast; /* per round: the block's BLOCK_Q quantile, what ratios read */
    bench_samples begin_end;  /* ns for lps_profile_begin + lps_profile_end around a block */
    double *scratch;          /* per_block doubles: the block's median without a heap call */
    uint64_t hot_allocs;      /* heap calls by layerprof's code during recorded forwards */
    uint64_t minflt, n_rec;   /* page faults (minor) during recorded forwards, forwards recorded */
    int cpu_clock;            /* forwards timed on the thread's CPU clock, else the wall clock */
    pthread_t thread;
    sem_t go, done;
    int todo, record, quit;
} variant;

/* Each round's block of a setting is read by its fast end, its forwards' 10th percentile: the
 * noise of a shared machine is one-sided (another tenant's work slows some forwards, speeds none;
 * bench/README.md, "The fast end"), and every forward of a setting runs the same profiled work.
 * lp_bench_sampling, whose cost is in one forward in 100, times whole blocks instead. The block
 * runs in up to ROUND_SLICES slices, the settings' slices interleaved, so that every setting's
 * forwards are spread over the whole round and meet the same spells of that work (back to back,
 * a spell of a second hit one setting's block and not the baseline's). Each slice is a profile of
 * its own (begin/end around it, outside the timed forwards), as each block was. */
#define BLOCK_Q 0.1
#define ROUND_SLICES 8

static void run_block(variant *v) {
    lp_event_sink sink = v->empty_sink
                             ? bench_counting_sink(&v->k)
                             : (v->rec.c ? bench_recording_sink(&v->rec) : (lp_event_sink){0});
    uint64_t t0 = 0, t1 = 0;
    if (v->hooks) {
        t0 = lp_now_ns();
        int rc = lps_profile_begin(v->bm->m, &sink, v->hooks);
        t1 = lp_now_ns();
        if (rc) die("lps_profile_begin");
    }
    bench_heap h0, h1;
    bench_heap_get(&h0);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    for (int i = 0; i < v->todo; i++) {
        uint64_t a = lp_now_ns(), ac = bench_cpu_ns();
        bench_forward(v->bm);
        uint64_t bc = bench_cpu_ns(), b = lp_now_ns();
        if (v->record) {
            double wall = (double)(b - a), cpu = (double)(bc - ac);
            bench_samples_add(&v->fwd, v->cpu_clock ? cpu : wall);
            bench_samples_add(&v->fwd_other, v->cpu_clock ? wall : cpu);
        }
        if (v->rec.c) lp_collector_count_iteration(v->rec.c);
    }
    bench_heap_get(&h1);
    getrusage(RUSAGE_THREAD, &ru1);
    if (v->record) {
        v->hot_allocs += h1.calls - h0.calls;
        v->minflt += (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
        v->n_rec += (uint64_t)v->todo;
    }
    if (v->hooks) {
        uint64_t t2 = lp_now_ns();
        lps_profile_end(v->bm->m);
        uint64_t t3 = lp_now_ns();
        if (v->record) bench_samples_add(&v->begin_end, (double)((t1 - t0) + (t3 - t2)));
    }
}

/* The round's block, every slice of it: its median and its fast end. */
static void close_round(variant *v) {
    size_t n = v->fwd.n - v->round_first;
    memcpy(v->scratch, v->fwd.v + v->round_first, n * sizeof *v->scratch);
    bench_samples_add(&v->block_med, bench_quantile_inplace(v->scratch, n, 0.5));
    bench_samples_add(&v->block_fast, bench_quantile_inplace(v->scratch, n, BLOCK_Q));
}

static void *variant_thread(void *arg) {
    variant *v = arg;
    /* Intra-op threads are per thread for OpenMP: pin this one to 1 as well. */
    lps_set_threads(1);
    for (;;) {
        while (sem_wait(&v->go) != 0 && errno == EINTR) {
        }
        if (v->quit) break;
        run_block(v);
        sem_post(&v->done);
    }
    return NULL;
}

static void variant_run(variant *v, int n, int record) {
    v->todo = n;
    v->record = record;
    sem_post(&v->go);
    while (sem_wait(&v->done) != 0 && errno == EINTR) {
    }
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* ---- one run: the copies, the settings, the rounds ------------------------------------------ */

typedef struct overhead {
    const bench_overhead_args *a;
    int exec, plain; /* plain: --exec opt, the unprofiled settings only */
    bench_copy_plan plan;
    bench_model mine[BENCH_MAX_COPIES], opts[BENCH_MAX_COPIES];
    bench_counts k; /* events per forward */
    variant vs[10];
    size_t nv;
    variant *ref, *aa; /* x_opt's reference (NULL when plain), the [A/A] */
    int per_block;
    double wall, cpu; /* of the timed rounds */
    /* Figures every setting is read against. */
    double base, opt_ns, aa_dev;
    bench_interval base_xo;
} overhead;

/* The mode's copies and the optimised ones, each past the executor's warm-up; returns the
 * fastest forward seen, the time estimate the blocks are sized from. */
static uint64_t open_copies(overhead *o) {
    uint64_t est = UINT64_MAX;
    for (int i = 0; i < o->plan.m; i++) {
        bench_model_open(&o->mine[i], o->a->path, "cpu", o->exec);
        uint64_t e = bench_warm_up(&o->mine[i], 4);
        if (e < est) est = e;
    }
    for (int i = 0; !o->plain && i < o->plan.k; i++) {
        bench_model_open(&o->opts[i], o->a->path, "cpu", LPS_EXEC_OPTIMISED);
        bench_warm_up(&o->opts[i], 4);
    }
    return est;
}

static variant *add(overhead *o, const char *name, int profiled, int memory, int ops) {
    variant *v = &o->vs[o->nv++];
    *v = (variant){.name = name, .profiled = profiled, .memory = memory, .ops = ops};
    v->cpu_clock = o->a->cpu_clock;
    return v;
}

static void add_settings(overhead *o) {
    memset(o->vs, 0, sizeof o->vs);
    add(o, "baseline", 0, 0, 0);
    /* x_opt's reference: the optimised copies, no markers, unprofiled. */
    if (!o->plain) o->ref = add(o, "opt", 0, 0, 0);
    /* A/A check: another copy of the model in the baseline's mode (bench_copy_aa), run unprofiled
     * on its own thread. Its ratio to the baseline shows the harness's own bias and noise, and
     * widens every interval (so it runs in every profile, --quick too). Another copy rather than
     * the baseline's own, so that it sees the copies' placement bias (bench_copy_plan), the bias
     * that separates `opt` from the mode's copy, where a second run of the same copy cannot. */
    o->aa = add(o, "[A/A]", 0, 0, 0);
    if (o->plain) return;
    add(o, "modules", 1, 0, 0);
    add(o, "memory", 1, 1, 0);
    add(o, "events", 1, 0, 1);
    add(o, "mem+events", 1, 1, 1);
    if (o->a->diag) add(o, "[shim-only]", 1, 1, 1)->empty_sink = 1;
}

/* Each profiled setting's recording (as a session's, on the first copy: every copy was loaded
 * from one file the same way, so the modules and their indices agree), its buffers and thread. */
static void start_settings(overhead *o, uint64_t est) {
    lp_mode mode = bench_mode_of(o->exec);
    int rounds = o->a->rounds;
    o->per_block = (int)(o->a->target_s * 1e9 / ((double)rounds * (double)est) + 0.5);
    if (o->per_block < o->a->min_block) o->per_block = o->a->min_block;
    for (size_t i = 0; i < o->nv; i++) {
        variant *v = &o->vs[i];
        if (v->profiled) v->hooks = bench_hooks(mode, v->memory, v->ops);
        if (v->profiled && !v->empty_sink)
            bench_recording_open(&v->rec, o->mine[0].m, mode, v->memory, v->ops, 0, NULL);
        bench_samples_reserve(&v->fwd, (size_t)rounds * (size_t)o->per_block + 1);
        bench_samples_reserve(&v->fwd_other, (size_t)rounds * (size_t)o->per_block + 1);
        bench_samples_reserve(&v->block_med, (size_t)rounds + 1);
        bench_samples_reserve(&v->block_fast, (size_t)rounds + 1);
        bench_samples_reserve(&v->begin_end, (size_t)rounds * ROUND_SLICES + 1);
        v->scratch = malloc((size_t)o->per_block * sizeof *v->scratch);
        if (!v->scratch) die("malloc");
        sem_init(&v->go, 0, 0);
        sem_init(&v->done, 0, 0);
        if (pthread_create(&v->thread, NULL, variant_thread, v)) die("pthread_create");
    }
}

/* Round r's copies (bench_copy_plan): read by each setting's thread after variant_run's semaphore.
 */
static void place_copies(overhead *o, int r) {
    for (size_t i = 0; i < o->nv; i++) {
        variant *v = &o->vs[i];
        v->bm = v == o->ref  ? &o->opts[bench_copy_opt(o->plan, r)]
                : v == o->aa ? &o->mine[bench_copy_aa(o->plan, r)]
                             : &o->mine[bench_copy_mine(o->plan, r)];
    }
}

static void run_rounds(overhead *o) {
    /* Warm-up blocks, one per setting on each copy it will run: first sight of every op row and
     * allocation, and each copy's first profiled forwards, happen here. */
    for (int r = 0; r < o->plan.m; r++) {
        place_copies(o, r);
        for (size_t i = 0; i < o->nv; i++)
            variant_run(&o->vs[i], o->per_block, 0);
    }
    double cpu0 = cpu_seconds();
    uint64_t wall0 = lp_now_ns();
    /* Rounds: every setting runs one block in slices, interleaved (ROUND_SLICES), the order
     * rotating so none always follows another. */
    int slices = o->per_block < ROUND_SLICES ? o->per_block : ROUND_SLICES;
    for (int r = 0; r < o->a->rounds; r++) {
        place_copies(o, r);
        for (size_t i = 0; i < o->nv; i++)
            o->vs[i].round_first = o->vs[i].fwd.n;
        for (int sl = 0; sl < slices; sl++) {
            int n = o->per_block / slices + (sl < o->per_block % slices);
            for (size_t j = 0; j < o->nv; j++)
                variant_run(&o->vs[(j + (size_t)r + (size_t)sl) % o->nv], n, 1);
        }
        for (size_t i = 0; i < o->nv; i++)
            close_round(&o->vs[i]);
    }
    o->wall = (double)(lp_now_ns() - wall0) * 1e-9;
    o->cpu = cpu_seconds() - cpu0;
    for (size_t i = 0; i < o->nv; i++) {
        o->vs[i].quit = 1;
        sem_post(&o->vs[i].go);
        pthread_join(o->vs[i].thread, NULL);
    }
}

static void free_run(overhead *o) {
    for (size_t i = 0; i < o->nv; i++) {
        variant *v = &o->vs[i];
        if (v->rec.c) bench_recording_close(&v->rec);
        bench_samples_free(&v->fwd);
        bench_samples_free(&v->fwd_other);
        bench_samples_free(&v->block_med);
        bench_samples_free(&v->block_fast);
        bench_samples_free(&v->begin_end);
        free(v->scratch);
        sem_destroy(&v->go);
        sem_destroy(&v->done);
    }
    for (int i = 0; i < o->plan.m; i++)
        bench_model_close(&o->mine[i]);
    for (int i = 0; !o->plain && i < o->plan.k; i++)
        bench_model_close(&o->opts[i]);
}

/* ---- figures and verdicts ------------------------------------------------------------------ */

/* The memory+events budget per op, in ns. */
static const double k_ns_op_budget = 400;
/* Hooks mode's modules-only budgets, as issue 7 set them (bench/README.md, Budgets): against the
 * same-mode baseline, at most 1.03x on models whose ops take 4 us or more, at most 150 ns per op
 * on the others. The optimizer being off is hooks mode's price before any callback runs; it shows
 * in x_opt, printed beside them as information. */
static const double k_hooks_modules_x_same = 1.03;
static const double k_hooks_modules_ns_op = 150;
/* ns/op is printed and judged only when its interval's half-width is at most this: a quarter of
 * the 400 ns/op budget (bench/README.md, Verdicts). */
static const double k_ns_op_cutoff = k_ns_op_budget / 4;

/* The 95% interval of the median per-round ratio of v's blocks' fast ends (BLOCK_Q) over ref's,
 * widened by `widen` or BENCH_RATIO_FLOOR (bench_ratio_interval). */
static bench_interval ratio_interval(const variant *v, const variant *ref, double widen,
                                     double *cover) {
    return bench_ratio_interval(&v->block_fast, &ref->block_fast, widen, cover);
}

/* bench_margin_note with this file's digits: ratios 3 decimals, ns/op (`unit` non-empty) whole ns.
 */
static void margin_note(char *buf, size_t size, double margin, double noise, const char *unit) {
    bench_margin_note(buf, size, margin, noise, *unit ? 0 : 3, unit);
}

/* "ok", or what the collector could not use: the figures are not needed for timing, but a run
 * whose events were dropped would make the overhead look smaller than it is. */
static void check_text(variant *v, char *buf, size_t size) {
    lp_collector_finish(v->rec.c);
    lp_collector_stats st;
    lp_collector_get_stats(v->rec.c, &st);
    const lp_tree *t = &v->rec.tree;
    uint64_t root_calls = t->n_nodes ? t->nodes[0].fig.calls : 0;
    int n = 0;
    buf[0] = '\0';
    if (st.dropped)
        n += snprintf(buf + n, size - (size_t)n, "drop=%llu ", (unsigned long long)st.dropped);
    if (st.unbalanced && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "unbal=%llu ", (unsigned long long)st.unbalanced);
    if (root_calls != t->iterations && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "root=%llu/%llu ", (unsigned long long)root_calls,
                      (unsigned long long)t->iterations);
    if (st.threads != 1 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "thr=%u ", st.threads);
    if (v->ops && !t->n_ops && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "no-ops ");
    if (v->hot_allocs && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "allocs=%llu ", (unsigned long long)v->hot_allocs);
    if (!n) snprintf(buf, size, "ok");
}

/* A budget line on ns per op against the same-mode baseline, [lo, hi] its interval and res its
 * half-width: UNSURE ("not measurable") when res exceeds k_ns_op_cutoff. */
static void budget_ns_op(const char *what, double limit, bench_ratio_check check, double ns_op,
                         double lo, double hi, double res) {
    int measurable = res <= k_ns_op_cutoff;
    char text[96], note[160], limit_text[32];
    bench_verdict vd = bench_judge((bench_interval){lo, ns_op, hi}, limit, check, k_ns_op_cutoff);
    if (measurable) {
        snprintf(text, sizeof text, "%.0f ns/op [%.0f, %.0f]", ns_op, lo, hi);
        margin_note(note, sizeof note, limit - ns_op, res, " ns/op");
    } else {
        snprintf(text, sizeof text, "not measurable");
        snprintf(note, sizeof note,
                 "noise ±%.0f ns/op > %.0f, the cutoff (a quarter of the 400 ns/op budget)", res,
                 k_ns_op_cutoff);
    }
    snprintf(limit_text, sizeof limit_text, "<= %.0f ns/op", limit);
    if (check) bench_check_note(note, sizeof note, check, "its unprofiled reference");
    bench_budget_verdict(what, vd, text, limit_text, note);
}

/* A "ratio <= limit" budget line on the interval x. */
static void budget_ratio(const char *what, bench_interval x, const char *text, double limit,
                         bench_ratio_check check) {
    char note[160], limit_text[32];
    bench_verdict vd = bench_judge(x, limit, check, 0);
    margin_note(note, sizeof note, limit - x.mid, bench_half_width(x), "");
    snprintf(limit_text, sizeof limit_text, "<= %.2fx", limit);
    if (check) bench_check_note(note, sizeof note, check, "its unprofiled reference");
    bench_budget_verdict(what, vd, text, limit_text, note);
}

/* The baseline's figures, which every setting is read against, and its row. The [A/A] spread: how
 * far the [A/A] setting, a separately loaded copy of the baseline's model on another thread,
 * strays from 1.000 anywhere in its interval. Every ratio's interval is widened by it (and by at
 * least BENCH_RATIO_FLOOR, what the A/A cannot see: see ratio_interval). */
static void read_baseline(overhead *o) {
    const variant *base = &o->vs[0];
    o->base = bench_median(base->fwd.v, base->fwd.n);
    o->opt_ns = o->ref ? bench_median(o->ref->fwd.v, o->ref->fwd.n) : 0;
    bench_interval a = ratio_interval(o->aa, base, -1, NULL);
    o->aa_dev = fabs(a.lo - 1) > fabs(a.hi - 1) ? fabs(a.lo - 1) : fabs(a.hi - 1);
    /* The unprofiled baseline of this mode against the optimised reference (the markers' own
     * cost when nothing is profiled, hooks mode's cost of turning the optimizer off). */
    o->base_xo = (bench_interval){0, 0, 0};
    char xo[32] = "-";
    if (o->ref) {
        o->base_xo = ratio_interval(base, o->ref, o->aa_dev, NULL);
        snprintf(xo, sizeof xo, "%.3f±%.3f", o->base_xo.mid, bench_half_width(o->base_xo));
    }
    printf("ROW|%-12s|%-7s|%-10s|%7s|%10.1f|%10s|%14s|%12s|%8s|%8s|%8s|%s\n", o->a->name,
           o->a->exec, "baseline", "-", o->base / 1e3, "-", "-", xo, "-", "-", "-", "-");
}

/* One setting's ratios: to the same-mode baseline (xs) and to the optimised reference (xo), ns
 * per op against the baseline with its interval, and what the ratios say of the harness. */
typedef struct setting_figures {
    bench_interval xs, xo;
    double ns_op, ns_lo, ns_hi, ns_res, ns_op_opt;
    int ns_measurable;
    bench_ratio_check suspect_same, suspect;
} setting_figures;

static setting_figures figures_of(const overhead *o, const variant *v) {
    setting_figures f = {0};
    uint64_t ops = o->k.ops;
    /* Point figures are medians of the per-round ratios (each round's block median over the
     * reference's block median in the same round), so drift slower than a round cancels. */
    f.xs = ratio_interval(v, &o->vs[0], v == o->aa ? 0 : o->aa_dev, NULL);
    if (o->ref && v != o->ref) f.xo = ratio_interval(v, o->ref, o->aa_dev, NULL);
    /* ns per op against the same-mode baseline, with its interval. Measurable only when the
     * interval's half-width per op is at most a quarter of the 400 ns/op budget. */
    double per_fwd = o->base / (ops ? (double)ops : 1);
    if (ops) {
        f.ns_op = (f.xs.mid - 1) * per_fwd;
        f.ns_lo = (f.xs.lo - 1) * per_fwd, f.ns_hi = (f.xs.hi - 1) * per_fwd;
    }
    f.ns_res = (f.ns_hi - f.ns_lo) / 2;
    f.ns_measurable = ops && f.ns_res <= k_ns_op_cutoff;
    f.ns_op_opt = ops && o->ref ? (f.xo.mid * o->opt_ns - o->opt_ns) / (double)ops : 0;
    /* Impossible: a setting that does more work than its reference reading faster than it beyond
     * the noise (the whole interval below 1); skewed: by more than 5% within the noise. The worse
     * of its two ratios' checks. */
    int profiled = v->profiled && !v->empty_sink;
    f.suspect_same = profiled ? bench_ratio_check_of(f.xs) : BENCH_RATIO_OK;
    f.suspect = f.suspect_same;
    if (profiled && o->ref && bench_ratio_check_of(f.xo) > f.suspect)
        f.suspect = bench_ratio_check_of(f.xo);
    return f;
}

static void print_row(const overhead *o, variant *v, const setting_figures *f) {
    double med = bench_median(v->fwd.v, v->fwd.n);
    double be_us = bench_median(v->begin_end.v, v->begin_end.n) / 1e3;
    char check[128] = "diagnostic";
    if (v->rec.c) check_text(v, check, sizeof check);
    if (f->suspect)
        snprintf(check + strlen(check), sizeof check - strlen(check), "%s",
                 f->suspect == BENCH_RATIO_SUSPECT ? " SUSPECT" : " skewed");
    char xs[32], xo[32] = "-", nss[16] = "-", nso[16] = "-";
    snprintf(xs, sizeof xs, "%.3f±%.3f", f->xs.mid, bench_half_width(f->xs));
    if (o->ref && v != o->ref)
        snprintf(xo, sizeof xo, "%.3f±%.3f", f->xo.mid, bench_half_width(f->xo));
    if (f->ns_measurable) {
        snprintf(nss, sizeof nss, "%.0f", f->ns_op);
        if (o->ref) snprintf(nso, sizeof nso, "%.0f", f->ns_op_opt);
    }
    printf("ROW|%-12s|%-7s|%-10s|%7llu|%10.1f|%10.1f|%14s|%12s|%8s|%8s|%8.1f|%s\n", o->a->name,
           o->a->exec, v->name, (unsigned long long)o->k.ops, o->base / 1e3, med / 1e3, xs, xo, nss,
           nso, be_us, check);
}

/* The budget lines a setting answers to. Which budget a memory+events setting answers to: ops of
 * 4 us or more (the opt copy's forward / ops) make 400 ns/op the same as 10%, so x_opt <= 1.10
 * speaks for them; shorter ops, ns/op (bench/README.md). Hooks mode's modules-only budget splits
 * the models the same way (x_same <= 1.03 or <= 150 ns/op). */
static void judge(const overhead *o, const variant *v, const setting_figures *f) {
    const char *name = o->a->name, *exec = o->a->exec;
    uint64_t ops = o->k.ops;
    int op_bound = ops && o->opt_ns / (double)ops < 4000;
    char what[96], text[96];
    if (!strcmp(v->name, "modules") && o->ref && o->exec == LPS_EXEC_HOOKS) {
        /* Hooks mode: issue 7's budgets, against the same-mode baseline. Only that ratio can be
         * impossible here: the optimised copy runs another graph, which may be the slower one
         * (its x_opt is printed below, not judged). */
        if (!op_bound) {
            snprintf(text, sizeof text, "%.3fx [%.3f, %.3f] (x optimised %.3fx)", f->xs.mid,
                     f->xs.lo, f->xs.hi, f->xo.mid);
            snprintf(what, sizeof what, "%s %s modules only, x same-mode", name, exec);
            budget_ratio(what, f->xs, text, k_hooks_modules_x_same, f->suspect_same);
        } else {
            snprintf(what, sizeof what, "%s %s modules only, per op vs same-mode", name, exec);
            budget_ns_op(what, k_hooks_modules_ns_op, f->suspect_same, f->ns_op, f->ns_lo, f->ns_hi,
                         f->ns_res);
        }
        printf("INFO|%s hooks modules only, x optimised (what the user pays in total; not a "
               "budget): %.3fx [%.3f, %.3f], the de-optimisation alone (baseline x optimised) "
               "%.3fx [%.3f, %.3f]\n",
               name, f->xo.mid, f->xo.lo, f->xo.hi, o->base_xo.mid, o->base_xo.lo, o->base_xo.hi);
    } else if (!strcmp(v->name, "modules") && o->ref) {
        snprintf(text, sizeof text, "%.3fx [%.3f, %.3f] (x same-mode %.3fx)", f->xo.mid, f->xo.lo,
                 f->xo.hi, f->xs.mid);
        snprintf(what, sizeof what, "%s %s modules only, x optimised", name, exec);
        budget_ratio(what, f->xo, text, 1.05, f->suspect);
    }
    if (!strcmp(v->name, "mem+events") && o->ref && !op_bound) {
        snprintf(text, sizeof text, "%.3fx [%.3f, %.3f]", f->xo.mid, f->xo.lo, f->xo.hi);
        snprintf(what, sizeof what, "%s %s memory+events, x optimised", name, exec);
        budget_ratio(what, f->xo, text, 1.10, f->suspect);
    }
    if (!strcmp(v->name, "mem+events") && op_bound) {
        snprintf(what, sizeof what, "%s %s memory+events, per op vs same-mode", name, exec);
        budget_ns_op(what, k_ns_op_budget, f->suspect, f->ns_op, f->ns_lo, f->ns_hi, f->ns_res);
    }
}

static void print_infos(const overhead *o) {
    const char *name = o->a->name, *exec = o->a->exec;
    double cover = 0;
    bench_median_ci(o->vs[0].block_fast.v, o->vs[0].block_fast.n, &cover);
    printf("INFO|%s %s: each ± is the %.1f%% order-statistic interval of the median per-round "
           "ratio of the blocks' %.0fth percentiles (%d rounds), widened each side by the [A/A] "
           "spread %.3f (at least %.3f); %d cop%s of each kind, rotated per round\n",
           name, exec, cover * 100, BLOCK_Q * 100, o->a->rounds, o->aa_dev, BENCH_RATIO_FLOOR,
           o->plan.k, o->plan.k == 1 ? "y" : "ies");
    /* The same ratios read from the blocks' medians, as before the fast end: what it buys. */
    const variant *base = &o->vs[0];
    double aa_med = bench_aa_spread(&o->aa->block_med, &base->block_med);
    printf("INFO|%s %s, by block medians instead: [A/A] spread %.3f", name, exec, aa_med);
    for (size_t i = 1; i < o->nv; i++) {
        const variant *v = &o->vs[i];
        if (v == o->ref || v == o->aa) continue;
        bench_interval xs = bench_ratio_interval(&v->block_med, &base->block_med, aa_med, NULL);
        printf(", %s x_same %.3f±%.3f", v->name, xs.mid, bench_half_width(xs));
        if (!o->ref) continue;
        bench_interval xo = bench_ratio_interval(&v->block_med, &o->ref->block_med, aa_med, NULL);
        printf(" x_opt %.3f±%.3f", xo.mid, bench_half_width(xo));
    }
    printf("\n");
    if (o->nv > 1) {
        double other_base = bench_median(o->vs[0].fwd_other.v, o->vs[0].fwd_other.n);
        printf("INFO|%s %s, %s clock: baseline %.1f us", name, exec,
               o->a->cpu_clock ? "wall" : "CPU", other_base / 1e3);
        for (size_t i = 1; i < o->nv; i++)
            printf(", %s x%.3f", o->vs[i].name,
                   bench_median(o->vs[i].fwd_other.v, o->vs[i].fwd_other.n) / other_base);
        printf("\n");
    }
    printf("INFO|%s %s: page faults per forward:", name, exec);
    for (size_t i = 0; i < o->nv; i++)
        printf(" %s %.0f", o->vs[i].name,
               o->vs[i].n_rec ? (double)o->vs[i].minflt / o->vs[i].n_rec : 0.0);
    printf("\n");
    double cpu_wall = o->wall > 0 ? o->cpu / o->wall : 0;
    if (!o->plain)
        printf("INFO|%s %s: per forward %llu ops (%llu top-level), %llu frames, %llu allocs, "
               "%llu frees; %d rounds x %d forwards per setting; cpu/wall %.2f\n",
               name, exec, (unsigned long long)o->k.ops, (unsigned long long)o->k.top_ops,
               (unsigned long long)o->k.enters, (unsigned long long)o->k.allocs,
               (unsigned long long)o->k.frees, o->a->rounds, o->per_block, cpu_wall);
    else
        printf("INFO|%s opt: %d rounds x %d forwards; cpu/wall %.2f\n", name, o->a->rounds,
               o->per_block, cpu_wall);
}

static int exec_of(const char *exec) {
    if (!strcmp(exec, "hooks")) return LPS_EXEC_HOOKS;
    if (!strcmp(exec, "opt")) return LPS_EXEC_OPTIMISED;
    if (!strcmp(exec, "markers")) return LPS_EXEC_MARKERS;
    return -1;
}

int bench_overhead(const bench_overhead_args *a) {
    static overhead o; /* large (copies, settings): not on the stack */
    memset(&o, 0, sizeof o);
    bench_overhead_args args = *a;
    if (args.rounds < 1) args.rounds = 1;
    o.a = &args;
    if ((o.exec = exec_of(args.exec)) < 0) {
        fprintf(stderr, "lp_bench_torch: unknown --exec '%s' (hooks, markers or opt)\n", args.exec);
        return 2;
    }
    o.plain = o.exec == LPS_EXEC_OPTIMISED;
    if (args.copies < 1 || args.copies > BENCH_MAX_COPIES) {
        fprintf(stderr, "lp_bench_torch: --copies %d: give 1 to %d\n", args.copies,
                BENCH_MAX_COPIES);
        return 2;
    }
    o.plan = bench_copy_plan_of(args.copies);
    uint64_t est = open_copies(&o);
    lp_mode mode = bench_mode_of(o.exec);
    if (!o.plain) o.k = bench_count_events(&o.mine[0], bench_hooks(mode, 1, 1), 2);
    add_settings(&o);
    start_settings(&o, est);
    run_rounds(&o);
    read_baseline(&o);
    for (size_t i = 1; i < o.nv; i++) {
        setting_figures f = figures_of(&o, &o.vs[i]);
        print_row(&o, &o.vs[i], &f);
        judge(&o, &o.vs[i], &f);
    }
    print_infos(&o);
    free_run(&o);
    return 0;
}

/* bench_stats.c: see bench_stats.h. */
#include "bench_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_samples_reserve(bench_samples *s, size_t n) {
    if (n <= s->cap) return;
    double *p = realloc(s->v, n * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    s->v = p;
    s->cap = n;
}

void bench_samples_add(bench_samples *s, double v) {
    if (s->n == s->cap) bench_samples_reserve(s, s->cap ? s->cap * 2 : 256);
    s->v[s->n++] = v;
}

void bench_samples_free(bench_samples *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_quantile_inplace(double *v, size_t n, double q) {
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double frac = pos - (double)i;
    return i + 1 < n ? v[i] + (v[i + 1] - v[i]) * frac : v[i];
}

double bench_quantile(const double *v, size_t n, double q) {
    if (!n) return 0;
    double *c = malloc(n * sizeof *c);
    if (!c) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    memcpy(c, v, n * sizeof *c);
    double r = bench_quantile_inplace(c, n, q);
    free(c);
    return r;
}

double bench_median(const double *v, size_t n) {
    return bench_quantile(v, n, 0.5);
}

bench_interval bench_median_ci(const double *v, size_t n, double *coverage) {
    bench_interval r = {0, 0, 0};
    if (coverage) *coverage = 0;
    if (!n) return r;
    double *c = malloc(n * sizeof *c);
    if (!c) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    memcpy(c, v, n * sizeof *c);
    r.mid = bench_quantile_inplace(c, n, 0.5); /* sorts c */
    /* tail = P(B < k) for B ~ Binomial(n, 1/2), k = 1, 2, ...; the largest k with tail <= 2.5%. */
    size_t k = 1;
    double pmf = 1, tail = 0, cover = 1;
    for (size_t i = 0; i < n; i++)
        pmf *= 0.5; /* P(B = 0); rounds stay far below the 1,000 where this underflows */
    tail = pmf;     /* P(B < 1) */
    /* Below 6 samples: the whole range, which misses the median with probability 2 P(B = 0). */
    cover = 1 - 2 * tail;
    if (tail <= 0.025) {
        for (size_t j = 1; 2 * (j + 1) <= n + 1; j++) {
            double next = tail + pmf * (double)(n - (j - 1)) / (double)j; /* P(B < j + 1) */
            if (next > 0.025) break;
            pmf = pmf * (double)(n - (j - 1)) / (double)j;
            tail = next;
            k = j + 1;
        }
        cover = 1 - 2 * tail;
    }
    r.lo = c[k - 1];
    r.hi = c[n - k];
    if (coverage) *coverage = cover;
    free(c);
    return r;
}

void bench_budget(const char *what, int pass, const char *value_fmt, double value,
                  const char *limit) {
    char text[64];
    snprintf(text, sizeof text, value_fmt, value);
    bench_budget_text(what, pass, text, limit);
}

void bench_budget_text(const char *what, int pass, const char *value, const char *limit) {
    bench_budget_verdict(what, pass ? BENCH_PASS : BENCH_MISS, value, limit, NULL);
}

const char *bench_verdict_name(bench_verdict v) {
    switch (v) {
    case BENCH_PASS:
        return "PASS";
    case BENCH_MISS:
        return "MISS";
    case BENCH_UNSURE:
        return "UNSURE";
    default:
        return "SUSPECT";
    }
}

bench_interval bench_ratio_interval(const bench_samples *num, const bench_samples *den,
                                    double widen, double *coverage) {
    bench_samples r = {0};
    for (size_t i = 0; i < num->n && i < den->n; i++)
        bench_samples_add(&r, num->v[i] / den->v[i]);
    bench_interval ci = bench_median_ci(r.v, r.n, coverage);
    bench_samples_free(&r);
    double w = widen < 0 ? 0 : widen > BENCH_RATIO_FLOOR ? widen : BENCH_RATIO_FLOOR;
    ci.lo -= w * ci.mid;
    ci.hi += w * ci.mid;
    return ci;
}

double bench_half_width(bench_interval i) {
    return i.hi - i.mid > i.mid - i.lo ? i.hi - i.mid : i.mid - i.lo;
}

double bench_aa_spread(const bench_samples *aa, const bench_samples *ref) {
    bench_interval a = bench_ratio_interval(aa, ref, -1, NULL);
    double below = a.lo < 1 ? 1 - a.lo : a.lo - 1, above = a.hi < 1 ? 1 - a.hi : a.hi - 1;
    return below > above ? below : above;
}

bench_verdict bench_judge_at_most(double lo, double hi, double limit) {
    if (hi <= limit) return BENCH_PASS;
    if (lo > limit) return BENCH_MISS;
    return BENCH_UNSURE;
}

bench_ratio_check bench_ratio_check_of(bench_interval r) {
    if (r.hi < 1) return BENCH_RATIO_SUSPECT;
    if (r.mid < BENCH_SKEWED_RATIO) return BENCH_RATIO_SKEWED;
    return BENCH_RATIO_OK;
}

bench_verdict bench_judge(bench_interval x, double limit, bench_ratio_check check,
                          double max_half) {
    if (check == BENCH_RATIO_SUSPECT) return BENCH_SUSPECT;
    if (check == BENCH_RATIO_SKEWED) return BENCH_UNSURE;
    if (max_half > 0 && (x.hi - x.lo) / 2 > max_half) return BENCH_UNSURE;
    return bench_judge_at_most(x.lo, x.hi, limit);
}

bench_verdict bench_judge_at_least(double lo, double hi, double limit) {
    if (lo >= limit) return BENCH_PASS;
    if (hi < limit) return BENCH_MISS;
    return BENCH_UNSURE;
}

void bench_check_note(char *buf, size_t size, bench_ratio_check check, const char *than) {
    if (check == BENCH_RATIO_SUSPECT)
        snprintf(buf, size,
                 "SUSPECT: faster than %s beyond the noise: the harness, not the code "
                 "(bench/README.md)",
                 than);
    else if (check == BENCH_RATIO_SKEWED)
        snprintf(buf, size,
                 "skewed: median below %.2fx %s, within the noise: a skewed reference, not a "
                 "decision (bench/README.md)",
                 BENCH_SKEWED_RATIO, than);
    else if (size)
        buf[0] = '\0';
}

void bench_margin_note(char *buf, size_t size, double margin, double noise, int decimals,
                       const char *unit) {
    snprintf(buf, size, "margin %+.*f%s = %.1fx the noise ±%.*f", decimals, margin, unit,
             noise > 0 ? margin / noise : 0.0, decimals, noise);
}

void bench_budget_verdict(const char *what, bench_verdict v, const char *value, const char *limit,
                          const char *note) {
    printf("BUDGET|%s|%s|%s|%s%s%s\n", what, value, limit, bench_verdict_name(v),
           note && *note ? "|" : "", note && *note ? note : "");
    fflush(stdout);
}

/* ---- model copies ---------------------------------------------------------------------------- */

bench_copy_plan bench_copy_plan_of(int copies) {
    return (bench_copy_plan){copies, copies < 2 ? 2 : copies};
}

int bench_copy_mine(bench_copy_plan p, int r) {
    return r % p.k;
}

int bench_copy_aa(bench_copy_plan p, int r) {
    return (r % p.k + 1) % p.m;
}

int bench_copy_opt(bench_copy_plan p, int r) {
    return (r + r / p.k) % p.k;
}

/* sampler.c: see sampler.h. */
#include "collect/sampler.h"

#include <string.h>

#define MEAN_WEIGHT (1.0 / 16)
#define MIN_RATE 1e-4 /* a budget rate never drops below this, so the cost is still measured */
/* Nor rises above this: unprofiled forwards keep coming, so their mean keeps up too (at 1, a
 * first plain forward that happened to be slow would make profiling look free for good). */
#define MAX_RATE 0.5

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static uint64_t to_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

void lp_sampler_init(lp_sampler *s, int every, double probability, double budget, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->every = every > 1 ? (uint64_t)every : 1;
    s->probability = probability > 0 && probability < 1 ? probability : 1;
    s->budget = budget > 0 ? budget : 0;
    s->seed = seed;
}

int lp_sampler_all(const lp_sampler *s) {
    return s->every == 1 && s->probability >= 1 && s->budget <= 0;
}

/* splitmix64: spreads consecutive seeds and thread indices over the whole state. */
static uint64_t splitmix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t lp_sampler_rng_seed(const lp_sampler *s, uint64_t thread_index) {
    uint64_t x = splitmix(s->seed ^ splitmix(thread_index + 1));
    return x ? x : 1;
}

/* xorshift64*: a uniform double in [0, 1). */
static double uniform(uint64_t *rng) {
    uint64_t x = *rng ? *rng : 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

double lp_sampler_budget_rate(const lp_sampler *s) {
    if (!atomic_load_explicit(&s->profiled_seen, memory_order_relaxed)) return 1;
    if (!atomic_load_explicit(&s->plain_seen, memory_order_relaxed)) return 0;
    double p = from_bits(atomic_load_explicit(&s->profiled_mean_bits, memory_order_relaxed));
    double u = from_bits(atomic_load_explicit(&s->plain_mean_bits, memory_order_relaxed));
    double cost = p - u;
    /* rate * cost <= budget * u: the profiled forwards' extra time stays a `budget` share of the
     * time the forwards take anyway. */
    double rate = cost > 0 ? s->budget * u / cost : MAX_RATE;
    return rate > MAX_RATE ? MAX_RATE : rate < MIN_RATE ? MIN_RATE : rate;
}

int lp_sampler_decide(lp_sampler *s, uint64_t *rng) {
    if (lp_sampler_all(s)) return 1;
    uint64_t n = atomic_fetch_add_explicit(&s->decisions, 1, memory_order_relaxed);
    if (s->every > 1 && n % s->every != 0) return 0;
    if (s->probability < 1 && uniform(rng) >= s->probability) return 0;
    if (s->budget > 0) {
        double rate = lp_sampler_budget_rate(s);
        if (rate <= 0) return 0;
        if (rate < 1 && uniform(rng) >= rate) return 0;
    }
    return 1;
}

void lp_sampler_observe(lp_sampler *s, int profiled, uint64_t ns) {
    _Atomic uint64_t *mean = profiled ? &s->profiled_mean_bits : &s->plain_mean_bits;
    _Atomic uint64_t *seen = profiled ? &s->profiled_seen : &s->plain_seen;
    uint64_t n = atomic_fetch_add_explicit(seen, 1, memory_order_relaxed);
    double m = from_bits(atomic_load_explicit(mean, memory_order_relaxed));
    m = n == 0 ? (double)ns : m + MEAN_WEIGHT * ((double)ns - m);
    atomic_store_explicit(mean, to_bits(m), memory_order_relaxed);
}

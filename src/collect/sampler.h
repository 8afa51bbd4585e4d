/* sampler.h: which forwards of a session that stays open are profiled (docs/sampling.md): every
 * Nth, each with a probability, and within a budget of the forward time profiling may cost.
 *
 * Any thread decides for its own forward with no lock: the every-Nth count is one atomic add, the
 * probability a per-thread generator the caller holds, the budget two running means updated with
 * relaxed atomics (a lost update among racing threads only delays the mean). */
#ifndef LP_SAMPLER_H
#define LP_SAMPLER_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct lp_sampler {
    uint64_t every;     /* >= 1 */
    double probability; /* (0, 1] */
    double budget;      /* the fraction of forward time profiling may cost; 0: off */
    uint64_t seed;
    _Atomic uint64_t decisions; /* forwards decided so far (every Nth counts them) */
    /* Budget: running means (weight 1/16) of a profiled and of an unprofiled forward's time, in
     * ns, as double bits; and how many of each were seen. */
    _Atomic uint64_t profiled_mean_bits, plain_mean_bits;
    _Atomic uint64_t profiled_seen, plain_seen;
} lp_sampler;

/* Values as lp_options holds them (validated). */
void lp_sampler_init(lp_sampler *s, int every, double probability, double budget, uint64_t seed);

/* 1 when every forward is profiled (the defaults): no decision to make, nothing to measure. */
int lp_sampler_all(const lp_sampler *s);

/* The first state of a thread's generator: a mix of the seed and the thread's index, never 0. */
uint64_t lp_sampler_rng_seed(const lp_sampler *s, uint64_t thread_index);

/* Whether the forward now starting is profiled. `rng` is the calling thread's generator state
 * (lp_sampler_rng_seed), advanced only when the probability or the budget is drawn. */
int lp_sampler_decide(lp_sampler *s, uint64_t *rng);

/* Budget mode: a forward ended after `ns`, profiled or not. */
void lp_sampler_observe(lp_sampler *s, int profiled, uint64_t ns);

/* Budget mode: the probability the budget now allows, in [1e-4, 0.5] (at most every other
 * forward, so that both means stay current). 1 until a profiled forward was measured; 0 until an
 * unprofiled one was (the next forward is then left unprofiled). */
double lp_sampler_budget_rate(const lp_sampler *s);

#endif

/* bench_overhead.h: `lp_bench_torch overhead`, layerprof's cost per forward on a real model, each
 * profiling setting against the same model unprofiled, interleaved in one process (bench_overhead.c
 * says how). Internal to bench/. */
#ifndef LP_BENCH_OVERHEAD_H
#define LP_BENCH_OVERHEAD_H

typedef struct bench_overhead_args {
    const char *path; /* the TorchScript file */
    const char *exec; /* "hooks", "markers" or "opt" (the optimised unmarked model, unprofiled) */
    const char *name; /* the model's name on every line */
    double target_s;  /* timed forwards per setting, in seconds of forwards */
    int rounds;       /* each setting runs one block per round */
    int min_block;    /* forwards a block at least, whatever target_s says (>= 1) */
    int diag;         /* the [shim-only] row too */
    int copies;       /* copies of each kind, rotated per round (bench_copy_plan) */
    int cpu_clock;    /* forwards timed on the thread's CPU clock; 0: the wall clock */
} bench_overhead_args;

/* Prints a ROW per setting, BUDGET lines and INFO lines; returns the exit status. */
int bench_overhead(const bench_overhead_args *a);

#endif

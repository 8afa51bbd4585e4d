/* schedule.h: torch.profiler's schedule(wait, warmup, active, repeat) as pure step arithmetic.
 *
 * Steps count from 0. A cycle is `wait` + `warmup` + `active` steps; cycles repeat `repeat` times
 * (0: forever). The session asks, per step, whether it is recorded, whether its figures start
 * fresh (the first active step: warm-up and the previous cycle are discarded), and whether it
 * completes a cycle (the last active step). No schedule (active 0): every step is recorded and
 * no cycle ever completes. */
#ifndef LP_SCHEDULE_H
#define LP_SCHEDULE_H

#include <stdint.h>

#include "layerprof.h"

typedef enum lp_sched_phase {
    LP_SCHED_RECORD = 0, /* no schedule: recorded */
    LP_SCHED_WAIT,       /* not profiled */
    LP_SCHED_WARMUP,     /* profiled, then discarded */
    LP_SCHED_ACTIVE,     /* recorded */
    LP_SCHED_DONE        /* after the last repeat: not profiled */
} lp_sched_phase;

/* 1 when `s` schedules anything (active > 0). */
int lp_sched_on(const lp_schedule *s);
lp_sched_phase lp_sched_phase_of(const lp_schedule *s, uint64_t step);
/* 1 for RECORD, WARMUP and ACTIVE: hooks are installed for this step. */
int lp_sched_profiled(lp_sched_phase phase);
/* 1 when `step` is the first active step of a cycle. */
int lp_sched_starts_active(const lp_schedule *s, uint64_t step);
/* 1 when `step` is the last active step of a cycle: the cycle completes after it. */
int lp_sched_ends_cycle(const lp_schedule *s, uint64_t step);
/* The cycle `step` belongs to, from 1 (0 without a schedule). */
int lp_sched_cycle_of(const lp_schedule *s, uint64_t step);

#endif

/* bench_script.h: synthetic events for lp_bench_core: a script of module calls, ops and memory
 * events, recorded once and played into a collector as the shim would deliver them. Internal to
 * bench/. */
#ifndef LP_BENCH_SCRIPT_H
#define LP_BENCH_SCRIPT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "api/session_config.h"
#include "collect/collector.h"
#include "layerprof.h"

/* The collector's configuration of a CPU session with --memory and --events as given, every other
 * option its default (session_config_collector): the live histograms included, as users run it. */
static inline lp_collector_config bench_session_config(int memory, int events) {
    lp_options o;
    lp_options_init(&o);
    o.memory = memory;
    o.events = events;
    lp_collector_config cc = session_config_collector(&o, 0, NULL, 0, 0);
    lp_options_release(&o);
    return cc;
}

enum { EV_ENTER, EV_EXIT, EV_OP, EV_OP_END, EV_MEM };

typedef struct event {
    int kind;
    int32_t arg; /* module for EV_ENTER, else -1 */
    const char *name;
    uintptr_t ptr;
    int64_t bytes;
} event;

typedef struct script {
    event *ev;
    size_t n, cap;
} script;

static inline void emit(script *s, int kind, int32_t arg, const char *name, uintptr_t ptr,
                        int64_t bytes) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        event *e = realloc(s->ev, cap * sizeof *e);
        if (!e) {
            fprintf(stderr, "lp_bench_core: out of memory\n");
            exit(2);
        }
        s->ev = e;
        s->cap = cap;
    }
    s->ev[s->n++] = (event){kind, arg, name, ptr, bytes};
}

/* Plays one iteration; timestamps advance 100 ns per event. Returns the events played. */
static inline size_t play(lp_collector *c, const script *s, uint64_t *t) {
    for (size_t i = 0; i < s->n; i++) {
        const event *e = &s->ev[i];
        uint64_t now = (*t += 100);
        switch (e->kind) {
        case EV_ENTER:
            lp_ev_call_enter(c, e->arg, now);
            break;
        case EV_EXIT:
            lp_ev_call_exit(c, now);
            break;
        case EV_OP:
            lp_ev_op_start(c, e->name, 0, now);
            break;
        case EV_OP_END:
            lp_ev_op_end(c, now);
            break;
        default:
            lp_ev_memory(c, (const void *)e->ptr, e->bytes, LP_DEV_CPU, now);
        }
    }
    return s->n;
}

/* lp_bench_core treesize (bench_treesize.c). */
int bench_cmd_treesize(int min, int max, int reps);

#endif

/* merge.h: the figures `layerprof merge` keeps of each report (merge.c), shared with the renderer
 * (merge_render.c). Only per-module numbers are kept, never the parsed documents: memory grows
 * with reports x modules x LP_MQ_COUNT doubles. */
#ifndef LP_MERGE_H
#define LP_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "layerprof.h"
#include "report/merge_stats.h"

/* The quantities per module and report, each per call (a module called twice per forward counts
 * its calls, so reports of different --iterations compare). */
typedef enum lp_merge_q {
    LP_MQ_SELF = 0,
    LP_MQ_TOTAL,
    LP_MQ_CUDA_SELF,
    LP_MQ_CUDA_TOTAL,
    LP_MQ_COUNT
} lp_merge_q;

typedef struct lp_merge_module {
    char *path, *cls, *name; /* name: the last segment (the class for the root) */
    int32_t parent;
} lp_merge_module;

/* Option names compared between reports, as bits of lp_merge.differs. */
enum { LP_MD_DEVICE = 1, LP_MD_MODE = 2, LP_MD_THREADS = 4, LP_MD_INPUTS = 8 };

struct lp_merge {
    unsigned flags;
    lp_merge_module *modules; /* the first report's tree, in its order (parents first) */
    size_t n_modules;
    /* values[q][report * n_modules + module]: per-call ns, NaN where the module did not run */
    double *values[LP_MQ_COUNT];
    char **sources; /* per report: its label(s) or file name */
    size_t n_reports, cap_reports;
    int has_cuda; /* some report recorded CUDA time */
    /* The first report's model and options, to compare the others with. */
    char *model, *device, *mode, *inputs;
    long long threads;
    unsigned differs; /* LP_MD_* of the options some report differed in (--force) */
};

/* The spread of quantity q of module m across the reports (scratch: room for 2 x n_reports). */
void lp_merge_spread(const lp_merge *m, lp_merge_q q, size_t module, double *scratch,
                     lp_spread *out);

/* "threads, inputs": the names of LP_MD_* bits, into buf. */
void lp_merge_option_names(unsigned bits, char *buf, size_t size);

#endif

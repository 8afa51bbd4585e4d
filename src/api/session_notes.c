/* session_notes.c: the lines a report carries under its table: what the session says as it goes
 * (the mode, a stop request, what the recording lacks), what the model is (params, FLOPs), the
 * forward's device time, the run's noise, and the warnings. They are a list with no fixed length
 * (base/note_list.h): a note that could not be kept fails the render rather than vanish. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/session_internal.h"
#include "base/units.h"
#include "model/noise.h"
#include "report/columns.h"

void session_add_note(lp_session *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lp_note_list_vaddf(&s->notes, fmt, ap); /* a line not kept is counted in notes.lost */
    va_end(ap);
}

/* The notes an AOTInductor package's report carries. */
static void add_pt2_notes(lp_session *s, const lps_pt2_info *pt2) {
    session_add_note(s,
                     "mode: AOTInductor package (each compiled kernel timed in the module its "
                     "nodes came from, a fused one in its modules' lowest common ancestor, where "
                     "the others' rows say their time went: [fused into ...]; the wrapper's "
                     "code between two kernels in the innermost module both are in that is "
                     "called once per forward, else the root; calls %s)",
                     pt2->calls_hooked ? "as forward hooks counted them at export"
                                       : "as the exported graph recorded them");
    if (pt2->calls_without_nodes)
        session_add_note(s,
                         "note: %zu module%s called at export without leaving a node in the "
                         "compiled graph (identity modules: nn.Identity, StochasticDepth or "
                         "Dropout in eval mode): calls and no time",
                         pt2->calls_without_nodes,
                         pt2->calls_without_nodes == 1 ? " was" : "s were");
    if (!pt2->has_map)
        session_add_note(s,
                         "note: '%s' holds no layerprof module map: every kernel is timed in the "
                         "root; export the model with python/layerprof_export.py to place its "
                         "kernels in modules",
                         s->model_path);
    if (s->opts.mode == LP_MODE_HOOKS)
        session_add_note(s, "%s",
                         "note: --mode does not apply to an AOTInductor package: it runs as "
                         "compiled");
    if (!pt2->has_map &&
        lp_columns_any(s->opts.columns, s->opts.n_columns, LP_NEED_FLOPS | LP_NEED_OUT_SHAPE, 0))
        session_add_note(s, "%s",
                         "note: FLOPs and out_shape come from layerprof's module map, which this "
                         "package has not: those columns stay blank");
    /* The wrapper allocates between kernels: collect/pkg_memory.h, docs/pt2.md "Memory". */
    if (s->opts.memory && pt2->has_map)
        session_add_note(
            s, "%s",
            "note: memory per module of a package: a buffer its wrapper allocates is "
            "the module of the kernel that runs next (its producer), a buffer it "
            "frees the module of the kernel that ran last (usually its last consumer); a "
            "module's figures are its kernels' over the forward, split evenly "
            "between its calls");
    else if (s->opts.memory)
        session_add_note(s, "%s",
                         "note: without layerprof's module map every kernel is the root's, and so "
                         "is the memory the package's wrapper allocates");
}

/* What every report says of how the session was opened: the mode (a package's, markers as asked
 * for graph, hooks, markers), the warm-up TorchScript needs, and what the options ask for that
 * this model or mode will not record. */
void session_add_open_notes(lp_session *s, const lps_pt2_info *pt2, int asked_graph) {
    if (pt2->is_pt2)
        add_pt2_notes(s, pt2);
    else if (asked_graph)
        session_add_note(s, "%s",
                         "mode: markers (asked for graph, which now runs as markers: the optimised "
                         "model, with exact module calls marked at every call site)");
    else if (s->opts.mode == LP_MODE_HOOKS)
        session_add_note(
            s, "%s",
            "mode: hooks (TorchScript optimizer off, so every module call is a real frame; "
            "the model ran unoptimised)");
    else
        session_add_note(s, "%s",
                         "mode: markers (the optimised model, with exact module calls marked at "
                         "every call site)");
    /* TorchScript's profiling executor runs the first forwards unoptimised while it records
     * shapes, then optimises: those forwards say little of the model as it runs
     * (docs/libtorch.md, "Two modes", has the figures). */
    if (!s->attached && !pt2->is_pt2 && s->opts.mode != LP_MODE_HOOKS && s->opts.warmup < 3)
        session_add_note(s,
                         "note: warm-up %d: TorchScript optimises the model during its first 3 "
                         "forwards, so the first profiled ones may include that work (--warmup 3)",
                         s->opts.warmup);
    if (s->tree.n_nodes == 1 && !pt2->is_pt2)
        session_add_note(
            s,
            "note: '%s' has no submodules (frozen or optimized for inference?): only the root "
            "can be timed",
            s->model_path);
    if (s->opts.mode == LP_MODE_HOOKS && !pt2->is_pt2 &&
        lp_columns_any(s->opts.columns, s->opts.n_columns, LP_NEED_OUT_SHAPE, 0))
        session_add_note(s, "%s",
                         "note: out_shape is recorded in markers mode only (the default): the "
                         "column stays blank in hooks mode");
    if (s->opts.shapes && !s->opts.events)
        session_add_note(s, "%s",
                         "note: shapes are recorded with op rows only (events): none recorded");
}

/* A size, FLOPs or output-shape column among those asked for. */
static int asks_for_model_figures(const lp_session *s) {
    return lp_columns_any(s->opts.columns, s->opts.n_columns, LP_NEED_FLOPS | LP_NEED_OUT_SHAPE,
                          LP_COLGRP_SIZE);
}

/* `value` as column `id` formats it ("11,689,512", "3.64 G", "44.63 Mb"). */
static void format_as(const char *id, double value, char *buf, size_t size) {
    const lp_column *col = lp_column_find(id);
    if (!col || col->fmt(value, LP_UNITS_AUTO, buf, size) < 0) snprintf(buf, size, "%.0f", value);
}

/* FLOPs of the measured subtrees' tops, over all iterations: the root's when it was profiled. */
static uint64_t selected_flops(const lp_tree *t) {
    uint64_t sum = 0;
    for (size_t i = 0; i < t->n_nodes; i++) {
        const lp_tree_node *n = &t->nodes[i];
        if (n->selected && (n->parent < 0 || !t->nodes[n->parent].selected))
            sum += n->fig.flops_total;
    }
    return sum;
}

static size_t model_notes(const lp_session *s, char (*lines)[256], size_t max) {
    if (max < 2 || !asks_for_model_figures(s) || !s->tree.n_nodes) return 0;
    const lp_figures *root = &s->tree.nodes[0].fig;
    size_t n = 0;
    char params[48], bytes[48], flops[48];
    format_as("params", (double)root->size.params, params, sizeof params);
    format_as("param_bytes", (double)root->size.bytes, bytes, sizeof bytes);
    int len =
        snprintf(lines[n], sizeof lines[n], "model: %s parameters, %s with buffers", params, bytes);
    if (s->flops && s->tree.iterations && len > 0 && (size_t)len < sizeof lines[n]) {
        /* The whole model's FLOPs when the root was profiled; with paths selected only the
         * selected subtrees' ops were counted, and the line says so rather than call their sum
         * the model's (issue: "0FLOPs per forward" with --path). */
        int whole = s->tree.nodes[0].selected;
        format_as("flops", (double)selected_flops(&s->tree) / (double)s->tree.iterations, flops,
                  sizeof flops);
        size_t fl = strlen(flops);
        const char *gap = fl && flops[fl - 1] >= '0' && flops[fl - 1] <= '9' ? " " : "";
        snprintf(lines[n] + len, sizeof lines[n] - (size_t)len,
                 "; %s%sFLOPs per forward%s (2 per multiply-add%s)", flops, gap,
                 whole ? "" : " in the selected modules",
                 whole ? "" : "; the rest was not profiled");
    }
    n++;
    for (size_t i = 0; i < s->tree.n_nodes && n < max; i++)
        if (s->tree.nodes[i].fig.out.varies) {
            snprintf(lines[n++], sizeof lines[0],
                     "out_shape: * the calls returned different shapes: the first call's is shown");
            break;
        }
    const char *names[8];
    size_t all = s->flops ? lp_collector_no_formula(s->collector, names, 8) : 0;
    if (all && n < max) {
        size_t shown = all < 8 ? all : 8, used = 0;
        used += (size_t)snprintf(lines[n], sizeof lines[n], "flops: no formula for");
        for (size_t i = 0; i < shown && used < sizeof lines[n]; i++)
            used += (size_t)snprintf(lines[n] + used, sizeof lines[n] - used, "%s %s", i ? "," : "",
                                     names[i]);
        if (used < sizeof lines[n])
            snprintf(lines[n] + used, sizeof lines[n] - used, "%s (counted as 0)",
                     all > shown ? " and others" : "");
        n++;
    }
    return n;
}

/* On a CUDA device: the forward's true time, which no CPU column shows. A module's CPU time ends
 * when its last kernel was launched, so the root's CPU total can be well under the forward's
 * (docs/cuda.md has figures). */
static int forward_note(const lp_session *s, const lp_tree *t, char *buf, size_t size) {
    if (!s->device || strncmp(s->device, "cuda", 4) != 0 || !s->synced_ns || !t->iterations ||
        !t->n_nodes)
        return 0;
    double it = (double)t->iterations;
    char fwd[32], kern[32];
    lp_format_time((double)s->synced_ns / it, s->opts.units, fwd, sizeof fwd);
    int n = snprintf(buf, size,
                     "forward: %s per iteration on %s, until its device work was done (the CPU "
                     "columns are host time: a module's ends when its last kernel was launched)",
                     fwd, s->device);
    if (t->has_cuda_time && n > 0 && (size_t)n < size) {
        lp_format_time((double)t->nodes[0].fig.cuda_total_ns / it, s->opts.units, kern,
                       sizeof kern);
        snprintf(buf + n, size - (size_t)n, "; CUDA time: %s", kern);
    }
    return 1;
}

/* TorchScript's profiling executor runs a module's first forwards unoptimised, recording shapes,
 * then optimises: profiling those says little about the model as it runs. The forward that was
 * (the first, whichever thread ran it) is recorded by session_forward_end; the line is made here.
 */
static int early_forward_note(const lp_session *s, lp_note_list *l) {
    uint64_t ordinal = atomic_load(&s->early_forward);
    if (!ordinal) return LP_OK;
    return lp_note_list_addf(l,
                             "note: forward %llu after attaching was profiled: TorchScript "
                             "optimises a module during its first 3 forwards, so run those "
                             "unprofiled first (layerprof::Session::warmup)",
                             (unsigned long long)ordinal);
}

/* Every line under the report's table, in the order they print, into `l` (empty on entry). */
int session_report_notes(const lp_session *s, const lp_tree *t, lp_note_list *l) {
    int rc = LP_OK;
    for (size_t i = 0; i < s->notes.n && !rc; i++)
        rc = lp_note_list_addf(l, "%s", s->notes.lines[i]);
    if (!rc && s->notes.lost)
        rc = lp_note_list_addf(l, "warning: %zu notes were lost: out of memory", s->notes.lost);
    if (!rc) rc = early_forward_note(s, l);
    char lines[6][256];
    size_t n = 0;
    if (!rc && forward_note(s, t, lines[0], sizeof lines[0]))
        rc = lp_note_list_addf(l, "%s", lines[0]);
    n = rc ? 0 : model_notes(s, lines, 3);
    for (size_t i = 0; i < n && !rc; i++)
        rc = lp_note_list_addf(l, "%s", lines[i]);
    n = rc ? 0 : lp_noise_notes(t, lines, 2); /* whether the ranking is within the run's noise */
    for (size_t i = 0; i < n && !rc; i++)
        rc = lp_note_list_addf(l, "%s", lines[i]);
    n = rc ? 0 : lp_cuda_prof_notes(s->cuda, &lines[0][0], sizeof lines[0], 6);
    for (size_t i = 0; i < n && !rc; i++)
        rc = lp_note_list_addf(l, "%s", lines[i]);
    lps_pt2_info pt2;
    if (!rc && !s->attached && lps_model_pt2_info(s->model, &pt2) == LP_OK && pt2.unplaced)
        rc = lp_note_list_addf(l,
                               "warning: %llu kernel calls did not follow the package's order as "
                               "its module map gives it: they are timed in the root",
                               (unsigned long long)pt2.unplaced);
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    if (!rc && (st.dropped || st.unbalanced))
        rc = lp_note_list_addf(
            l, "warning: %llu events could not be attributed (%llu unbalanced); figures may be low",
            (unsigned long long)(st.dropped + st.unbalanced), (unsigned long long)st.unbalanced);
    if (!rc && st.pkg_failed)
        rc = lp_note_list_addf(l,
                               "warning: out of memory for the package's memory per module on %u "
                               "threads: their wrapper's allocations and frees are the root's",
                               (unsigned)st.pkg_failed);
    if (!rc && s->partial_cycle)
        rc = lp_note_list_addf(
            l, "note: schedule cycle %d has not completed: these figures are of its steps so far",
            s->cycles_done + 1);
    if (!rc && !t->iterations) rc = lp_note_list_addf(l, "note: no profiled iteration completed");
    return rc;
}

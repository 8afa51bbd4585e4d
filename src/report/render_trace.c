/* render_trace.c: the timeline as Chrome's Trace Event Format (JSON object form), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing both open.
 *
 *  - one "X" (complete) event per module call and per op call (op spans need `events`), on the
 *    thread (tid) that ran it; ts and dur in microseconds with three decimals, so the exact ns is
 *    kept. Spans nest per thread: a child lies within its parent.
 *  - "C" (counter) events: bytes allocated since the trace began, per device, summed over threads
 *    (needs `memory`).
 *  - "M" (metadata) events naming the process and the threads.
 * Events are built one at a time with jansson and streamed, so a million spans never sit in memory
 * as JSON objects. */
#include <string.h>

#include "base/error.h"
#include "report/json_report.h"
#include "report/render.h"

#define PID 1

static int put_event(json_t *ev, FILE *out, int *first) {
    if (!ev) return LP_ERR_NOMEM;
    if (!*first) fputs(",\n", out);
    *first = 0;
    int rc = json_dumpf(ev, out, JSON_COMPACT | JSON_REAL_PRECISION(15)) ? LP_ERR_IO : LP_OK;
    json_decref(ev);
    return rc;
}

/* ns since the origin -> microseconds; %.15g keeps three decimals exactly below 10^12 us. */
static json_t *us(uint64_t ns, uint64_t origin) {
    return json_real((double)(ns - origin) / 1000.0);
}

static json_t *meta_event(const char *what, int tid, const char *name) {
    json_t *args = json_pack("{s:s}", "name", name);
    if (tid < 0)
        return json_pack("{s:s,s:s,s:i,s:o}", "name", what, "ph", "M", "pid", PID, "args", args);
    return json_pack("{s:s,s:s,s:i,s:i,s:o}", "name", what, "ph", "M", "pid", PID, "tid", tid,
                     "args", args);
}

static json_t *span_event(const lp_tree *t, const lp_timeline *tl, const lp_span *s,
                          uint64_t origin) {
    json_t *ev;
    if (s->kind == LP_SPAN_MODULE) {
        const lp_tree_node *n = &t->nodes[s->id];
        const char *name = n->parent < 0 ? n->class_name : n->path;
        ev = json_pack("{s:s,s:s,s:s,s:o,s:o,s:i,s:i,s:{s:s,s:s}}", "name", name, "cat", "module",
                       "ph", "X", "ts", us(s->t0, origin), "dur", us(s->t1, s->t0), "pid", PID,
                       "tid", (int)s->tid + 1, "args", "path", n->path, "class", n->class_name);
    } else if (s->kind == LP_SPAN_REGION) {
        ev = json_pack("{s:s,s:s,s:s,s:o,s:o,s:i,s:i}", "name", tl->region_paths[s->id], "cat",
                       "region", "ph", "X", "ts", us(s->t0, origin), "dur", us(s->t1, s->t0), "pid",
                       PID, "tid", (int)s->tid + 1);
    } else {
        const char *name = lp_tree_op_name(t, s->id);
        ev = json_pack("{s:s,s:s,s:s,s:o,s:o,s:i,s:i}", "name", name ? name : "op", "cat", "op",
                       "ph", "X", "ts", us(s->t0, origin), "dur", us(s->t1, s->t0), "pid", PID,
                       "tid", (int)s->tid + 1);
    }
    return ev;
}

static const char *const counter_names[LP_DEV_COUNT] = {"CPU memory", "CUDA memory"};

int lp_render_trace(const lp_tree *t, const lp_timeline *tl, const json_t *run, FILE *out) {
    int rc = lp_render_require(t, out);
    if (rc) return rc;
    if (!tl || !tl->recorded)
        return lp_error_set(LP_ERR_STATE,
                            "no timeline was recorded: profile with trace on (--trace) to write a "
                            "trace");
    uint64_t origin = UINT64_MAX;
    for (size_t i = 0; i < tl->n_spans; i++)
        if (tl->spans[i].t0 < origin) origin = tl->spans[i].t0;
    if (tl->n_mem && tl->mem[0].t < origin) origin = tl->mem[0].t;
    if (origin == UINT64_MAX) origin = 0;

    int first = 1;
    fputs("{\"traceEvents\": [\n", out);
    const char *model = json_string_value(json_object_get(run, "model"));
    char pname[512];
    snprintf(pname, sizeof pname, "layerprof: %s", model ? model : "model");
    rc = put_event(meta_event("process_name", -1, pname), out, &first);
    for (uint32_t tid = 0; tid < tl->n_threads && rc == LP_OK; tid++) {
        char tname[32];
        snprintf(tname, sizeof tname, tid == 0 ? "thread %u (first)" : "thread %u", tid);
        rc = put_event(meta_event("thread_name", (int)tid + 1, tname), out, &first);
        if (rc == LP_OK)
            rc = put_event(json_pack("{s:s,s:s,s:i,s:i,s:{s:i}}", "name", "thread_sort_index", "ph",
                                     "M", "pid", PID, "tid", (int)tid + 1, "args", "sort_index",
                                     (int)tid),
                           out, &first);
    }
    for (size_t i = 0; i < tl->n_spans && rc == LP_OK; i++) {
        const lp_span *s = &tl->spans[i];
        if (s->kind == LP_SPAN_MODULE && (s->id < 0 || (size_t)s->id >= t->n_nodes)) continue;
        if (s->kind == LP_SPAN_REGION && (s->id < 0 || (size_t)s->id >= tl->n_region_paths))
            continue;
        rc = put_event(span_event(t, tl, s, origin), out, &first);
    }
    int64_t live[LP_DEV_COUNT] = {0};
    for (size_t i = 0; i < tl->n_mem && rc == LP_OK; i++) {
        const lp_mem_sample *m = &tl->mem[i];
        if (m->device >= LP_DEV_COUNT) continue;
        live[m->device] += m->delta;
        /* One counter value per timestamp: the last sample at a given ns wins. */
        if (i + 1 < tl->n_mem && tl->mem[i + 1].t == m->t && tl->mem[i + 1].device == m->device)
            continue;
        rc = put_event(json_pack("{s:s,s:s,s:o,s:i,s:{s:I}}", "name", counter_names[m->device],
                                 "ph", "C", "ts", us(m->t, origin), "pid", PID, "args", "allocated",
                                 (json_int_t)live[m->device]),
                       out, &first);
    }
    if (rc == LP_OK) {
        fputs("\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": ", out);
        json_t *other = json_object();
        static const char *const keys[] = {
            "model", "device", "mode", "libtorch_version", "layerprof_version", "date"};
        for (size_t k = 0; other && k < sizeof keys / sizeof keys[0]; k++) {
            const char *v = json_string_value(json_object_get(run, keys[k]));
            if (v) json_object_set_new(other, keys[k], json_string(v));
        }
        if (other) {
            json_object_set_new(other, "iterations_recorded",
                                json_integer((json_int_t)tl->iterations));
            json_object_set_new(other, "iterations_run",
                                json_integer((json_int_t)tl->iterations_of));
            json_object_set_new(other, "lost_spans", json_integer((json_int_t)tl->lost_spans));
            json_object_set_new(other, "lost_memory_samples",
                                json_integer((json_int_t)tl->lost_mem));
        }
        rc = !other                                                       ? LP_ERR_NOMEM
             : json_dumpf(other, out, JSON_COMPACT | JSON_PRESERVE_ORDER) ? LP_ERR_IO
                                                                          : LP_OK;
        json_decref(other);
        fputs("}\n", out);
    }
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "render: out of memory writing the trace");
    if (rc != LP_OK || ferror(out))
        return lp_error_set(LP_ERR_IO, "render: writing the trace failed");
    return LP_OK;
}

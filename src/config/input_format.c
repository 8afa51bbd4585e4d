/* input_format.c: input entries written back as the --input text that reads them again
 * (lp_input_format, lp_input_spec_format): for --print-config and the report's "inputs". It
 * calls the parsers' files, never the other way: input_parse.c checks that the entries are one
 * whole value, input_spec.c names the dtype. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"
#include "layerprof.h"

/* One tensor spec as "SHAPE:DTYPE[:FILL]" ("FILE:SHAPE:DTYPE" for a file). */
static int format_tensor(const lp_input_spec *spec, char *buf, size_t size) {
    char shape[LP_MAX_DIMS * 21 + 1];
    size_t off = 0;
    shape[0] = '\0';
    for (int i = 0; i < spec->ndim && i < LP_MAX_DIMS; i++)
        off += (size_t)snprintf(shape + off, sizeof shape - off, i ? "x%lld" : "%lld",
                                (long long)spec->shape[i]);
    const char *dt = lp_dtype_name(spec->dtype);
    switch (spec->fill) {
    case LP_FILL_FILE:
        return snprintf(buf, size, "%s:%s:%s", spec->file ? spec->file : "", shape, dt);
    case LP_FILL_ZEROS:
        return snprintf(buf, size, "%s:%s:zeros", shape, dt);
    case LP_FILL_ONES:
        return snprintf(buf, size, "%s:%s:ones", shape, dt);
    case LP_FILL_RANDOM:
    default:
        if (spec->has_range)
            return snprintf(buf, size, "%s:%s:%.17g..%.17g", shape, dt, spec->low, spec->high);
        return snprintf(buf, size, "%s:%s", shape, dt);
    }
}

typedef struct writer {
    char *buf;
    size_t size, len;
} writer;

static void put(writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(writer *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = w->len < w->size ? w->size - w->len : 0;
    int k = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0) w->len += (size_t)k;
}

/* Writes the value at e[0]; returns the entries it used (the input was checked whole). */
static size_t format_value(writer *w, const lp_input_spec *e) {
    static const char open[] = {
        [LP_INPUT_LIST] = '[', [LP_INPUT_TUPLE] = '(', [LP_INPUT_DICT] = '{'};
    static const char close[] = {
        [LP_INPUT_LIST] = ']', [LP_INPUT_TUPLE] = ')', [LP_INPUT_DICT] = '}'};
    char tensor[LP_MAX_DIMS * 21 + 128]; /* a tensor spec without its file */
    switch (e->kind) {
    case LP_INPUT_TENSOR:
        if (e->fill == LP_FILL_FILE) { /* FILE:SHAPE:DTYPE, the file name of any length */
            lp_input_spec shape = *e;
            shape.fill = LP_FILL_RANDOM;
            shape.has_range = 0;
            format_tensor(&shape, tensor, sizeof tensor);
            put(w, "%s:%s", e->file ? e->file : "", tensor);
        } else {
            format_tensor(e, tensor, sizeof tensor);
            put(w, "%s", tensor);
        }
        return 1;
    case LP_INPUT_INT:
        put(w, "int:%lld", (long long)e->integer);
        return 1;
    case LP_INPUT_FLOAT:
        put(w, "float:%.17g", e->real);
        return 1;
    case LP_INPUT_BOOL:
        put(w, "bool:%s", e->integer ? "true" : "false");
        return 1;
    case LP_INPUT_STR:
        put(w, "str:%s", e->file);
        return 1;
    case LP_INPUT_NONE:
        put(w, "none");
        return 1;
    case LP_INPUT_SAVED:
        put(w, "saved:%s", e->file);
        return 1;
    default: {
        size_t used = 1;
        put(w, "%c", open[e->kind]);
        for (size_t i = 0; i < e->n_items; i++) {
            if (i) put(w, ", ");
            if (e->kind == LP_INPUT_DICT) {
                const lp_input_spec *k = &e[used++];
                if (k->kind == LP_INPUT_INT)
                    put(w, "int:%lld: ", (long long)k->integer);
                else
                    put(w, "%s: ", k->file);
            }
            used += format_value(w, e + used);
        }
        /* A one-item tuple keeps its comma, as Python writes it. */
        put(w, "%s%c", e->kind == LP_INPUT_TUPLE && e->n_items == 1 ? "," : "", close[e->kind]);
        return used;
    }
    }
}

int lp_input_format(const lp_input_spec *entries, size_t n, char *buf, size_t size) {
    if (!entries || (!buf && size))
        return lp_error_set(LP_ERR_INVALID, "lp_input_format: NULL argument");
    if (!lp_input_value_size(entries, n))
        return lp_error_set(LP_ERR_INVALID, "lp_input_format: the entries are not one whole value");
    writer w = {buf, size, 0};
    if (size) buf[0] = '\0';
    format_value(&w, entries);
    return w.len > (size_t)INT32_MAX ? INT32_MAX : (int)w.len;
}

int lp_input_spec_format(const lp_input_spec *spec, char *buf, size_t size) {
    if (!spec || (!buf && size))
        return lp_error_set(LP_ERR_INVALID, "lp_input_spec_format: NULL argument");
    if (spec->kind != LP_INPUT_TENSOR) return lp_input_format(spec, 1, buf, size);
    return format_tensor(spec, buf, size);
}

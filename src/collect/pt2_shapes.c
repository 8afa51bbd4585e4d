/* pt2_shapes.c: a package's input constraints and its shape-dependent figures (pt2_shapes.h);
 * the expressions they are written in are pt2_shapes_expr.c's. */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include "collect/pt2_shapes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

/* --- reading the map -------------------------------------------------------------------------- */

static int malformed(const char *path, const char *what) {
    return lp_error_set(LP_ERR_MODEL,
                        "'%s': layerprof's module map has a malformed %s; export the package "
                        "again with python/layerprof_export.py",
                        path, what);
}

static int nomem(void) {
    return lp_error_set(LP_ERR_NOMEM, "out of memory reading a package's module map");
}

/* An expression of the map, or the status that says why not (`what`: the entry, for the
 * message). */
static int read_expr(lp_sym_expr *e, json_t *value, const char *const *names, size_t n,
                     const char *path, const char *what) {
    int rc = lp_sym_expr_read(e, value, names, n);
    return rc == LP_ERR_INVALID ? malformed(path, what) : rc;
}

void lp_pt2_shapes_free(lp_pt2_shapes *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n_symbols; i++)
        free(s->symbols[i].name);
    free(s->symbols);
    for (size_t i = 0; i < s->n_inputs; i++) {
        lp_pt2_input_dims *in = &s->inputs[i];
        free(in->dtype);
        free(in->example);
        for (size_t d = 0; d < in->n_dims; d++)
            lp_sym_expr_clear(&in->dims[d]);
        free(in->dims);
        free(in->last);
    }
    free(s->inputs);
    free(s->examples);
    for (size_t m = 0; m < s->n_modules; m++) {
        lp_pt2_module *mod = &s->modules[m];
        lp_sym_expr_clear(&mod->flops);
        for (size_t c = 0; c < mod->n_calls; c++) {
            for (size_t d = 0; d < mod->calls[c].rank; d++)
                lp_sym_expr_clear(&mod->calls[c].dims[d]);
            free(mod->calls[c].dims);
            free(mod->calls[c].now);
        }
        free(mod->calls);
    }
    free(s->modules);
    for (size_t i = 0; i < s->n_no_formula; i++)
        free(s->no_formula[i]);
    free(s->no_formula);
    free(s->values);
    free(s->bound);
    free(s->try_values);
    free(s->try_bound);
    free(s->bound_input);
    free(s->bound_dim);
    free(s);
}

/* The symbols: names and ranges, and the arrays sized by their number. */
static int read_symbols(lp_pt2_shapes *s, json_t *root) {
    json_t *symbols = json_object_get(root, "symbols");
    size_t n = json_object_size(symbols);
    s->symbols = calloc(n ? n : 1, sizeof *s->symbols);
    s->values = calloc(n ? n : 1, sizeof *s->values);
    s->bound = calloc(n ? n : 1, 1);
    s->try_values = calloc(n ? n : 1, sizeof *s->try_values);
    s->try_bound = calloc(n ? n : 1, 1);
    s->bound_input = calloc(n ? n : 1, sizeof *s->bound_input);
    s->bound_dim = calloc(n ? n : 1, sizeof *s->bound_dim);
    if (!s->symbols || !s->values || !s->bound || !s->try_values || !s->try_bound ||
        !s->bound_input || !s->bound_dim)
        return nomem();
    const char *key;
    json_t *v;
    json_object_foreach(symbols, key, v) {
        lp_pt2_symbol *sym = &s->symbols[s->n_symbols];
        sym->name = strdup(key);
        if (!sym->name) return nomem();
        s->n_symbols++;
        sym->min = (int64_t)json_integer_value(json_object_get(v, "min"));
        json_t *max = json_object_get(v, "max");
        sym->max = json_is_integer(max) ? (int64_t)json_integer_value(max) : -1;
    }
    return LP_OK;
}

/* One input's dims, and its example's shape and dtype from its spec ("2x16:int64:0..999": 2x16,
 * int64; float32 when the spec names none). */
static int read_input(lp_pt2_shapes *s, lp_pt2_input_dims *in, json_t *dims, const char *spec,
                      const char *const *names, const char *path) {
    const char *colon = strchr(spec, ':');
    in->example = strndup(spec, colon ? (size_t)(colon - spec) : strlen(spec));
    if (!colon)
        in->dtype = strdup("float32");
    else {
        const char *fill = strchr(colon + 1, ':');
        in->dtype = strndup(colon + 1, fill ? (size_t)(fill - colon - 1) : strlen(colon + 1));
    }
    size_t n = json_array_size(dims);
    in->dims = calloc(n ? n : 1, sizeof *in->dims);
    in->last = calloc(n ? n : 1, sizeof *in->last);
    if (!in->example || !in->dtype || !in->dims || !in->last) return nomem();
    size_t j;
    json_t *d;
    json_array_foreach(dims, j, d) {
        in->n_dims++;
        int rc = read_expr(&in->dims[j], d, names, s->n_symbols, path, "input dimension");
        if (rc) return rc;
    }
    return LP_OK;
}

static int read_module(lp_pt2_shapes *s, lp_pt2_module *m, json_t *v, const char *const *names,
                       const char *path) {
    json_t *flops = json_object_get(v, "flops");
    m->has_flops = flops && !json_is_null(flops);
    if (m->has_flops) {
        int rc = read_expr(&m->flops, flops, names, s->n_symbols, path, "module's flops");
        if (rc) return rc;
    }
    json_t *shapes = json_object_get(v, "out_shapes");
    size_t n = json_array_size(shapes);
    m->calls = calloc(n ? n : 1, sizeof *m->calls);
    if (!m->calls) return nomem();
    size_t j, k;
    json_t *call, *d;
    json_array_foreach(shapes, j, call) {
        lp_pt2_call *c = &m->calls[j];
        m->n_calls++;
        size_t rank = json_array_size(call);
        c->dims = calloc(rank ? rank : 1, sizeof *c->dims);
        c->now = calloc(rank ? rank : 1, sizeof *c->now);
        if (!c->dims || !c->now) return nomem();
        json_array_foreach(call, k, d) {
            c->rank++;
            int rc = read_expr(&c->dims[k], d, names, s->n_symbols, path, "module's out_shapes");
            if (rc) return rc;
        }
    }
    return LP_OK;
}

/* The inputs' example shapes joined, for the message of a wrong number of inputs. */
static int join_examples(lp_pt2_shapes *s) {
    size_t len = 1;
    for (size_t i = 0; i < s->n_inputs; i++)
        len += strlen(s->inputs[i].example) + 2;
    s->examples = malloc(len);
    if (!s->examples) return nomem();
    s->examples[0] = '\0';
    for (size_t i = 0; i < s->n_inputs; i++) {
        if (i) strcat(s->examples, ", ");
        strcat(s->examples, s->inputs[i].example);
    }
    return LP_OK;
}

static int read_shapes(lp_pt2_shapes *s, json_t *root, json_t *modules, const char *const *examples,
                       size_t n_examples, const char *path) {
    int rc = read_symbols(s, root);
    if (rc) return rc;
    const char **names = calloc(s->n_symbols ? s->n_symbols : 1, sizeof *names);
    if (!names) return nomem();
    for (size_t i = 0; i < s->n_symbols; i++)
        names[i] = s->symbols[i].name;
    json_t *dims = json_object_get(root, "input_dims");
    size_t i;
    json_t *v;
    if (!json_is_array(dims) || json_array_size(dims) != n_examples) {
        rc = malformed(path, "input_dims");
        goto done;
    }
    s->inputs = calloc(n_examples ? n_examples : 1, sizeof *s->inputs);
    s->modules =
        calloc(json_array_size(modules) ? json_array_size(modules) : 1, sizeof *s->modules);
    json_t *no_formula = json_object_get(root, "no_formula");
    s->no_formula = calloc(json_array_size(no_formula) ? json_array_size(no_formula) : 1,
                           sizeof *s->no_formula);
    if (!s->inputs || !s->modules || !s->no_formula) {
        rc = nomem();
        goto done;
    }
    json_array_foreach(dims, i, v) {
        s->n_inputs++;
        if ((rc = read_input(s, &s->inputs[i], v, examples[i], names, path))) goto done;
    }
    if ((rc = join_examples(s))) goto done;
    json_array_foreach(modules, i, v) {
        s->n_modules++;
        if ((rc = read_module(s, &s->modules[i], v, names, path))) goto done;
    }
    json_array_foreach(no_formula, i, v) {
        const char *name = json_string_value(v);
        if (!name) continue;
        if (!(s->no_formula[s->n_no_formula] = strdup(name))) {
            rc = nomem();
            goto done;
        }
        s->n_no_formula++;
    }
done:
    free(names);
    return rc;
}

int lp_pt2_shapes_read(lp_pt2_shapes **out, json_t *root, json_t *modules,
                       const char *const *examples, size_t n_examples, const char *path) {
    *out = NULL;
    lp_pt2_shapes *s = calloc(1, sizeof *s);
    if (!s) return nomem();
    int rc = read_shapes(s, root, modules, examples, n_examples, path);
    if (rc) {
        lp_pt2_shapes_free(s);
        return rc;
    }
    *out = s;
    return LP_OK;
}

/* --- the check -------------------------------------------------------------------------------- */

/* The figures at the symbols' values just bound. */
static void evaluate(lp_pt2_shapes *s) {
    for (size_t m = 0; m < s->n_modules; m++) {
        lp_pt2_module *mod = &s->modules[m];
        int64_t v = 0;
        mod->flops_now = 0;
        if (mod->has_flops &&
            lp_sym_expr_eval(&mod->flops, s->values, s->bound, s->n_symbols, &v) && v >= 0)
            mod->flops_now = (uint64_t)v;
        for (size_t c = 0; c < mod->n_calls; c++) {
            lp_pt2_call *call = &mod->calls[c];
            call->known = call->rank > 0;
            for (size_t d = 0; d < call->rank && call->known; d++)
                call->known = lp_sym_expr_eval(&call->dims[d], s->values, s->bound, s->n_symbols,
                                               &call->now[d]);
        }
    }
}

/* Whether the inputs are the ones last checked, with their figures evaluated. */
static int same_as_last(const lp_pt2_shapes *s, const lp_pt2_input *inputs) {
    if (!s->evaluated) return 0;
    for (size_t i = 0; i < s->n_inputs; i++)
        if (inputs[i].rank != s->inputs[i].n_dims ||
            (inputs[i].rank &&
             memcmp(inputs[i].sizes, s->inputs[i].last, inputs[i].rank * sizeof(int64_t)) != 0))
            return 0;
    return 1;
}

/* Plain symbols first: they take their sizes from the inputs (into try_values). */
static int bind_symbols(lp_pt2_shapes *s, const lp_pt2_input *inputs) {
    for (size_t i = 0; i < s->n_inputs; i++) {
        const lp_pt2_input_dims *want = &s->inputs[i];
        const lp_pt2_input *got = &inputs[i];
        if (got->rank != want->n_dims)
            return lp_error_set(LP_ERR_INVALID,
                                "input %zu has %zu dimensions, the package was compiled for %zu "
                                "(%s at export)",
                                i, got->rank, want->n_dims, want->example);
        for (size_t d = 0; d < got->rank; d++) {
            int sym = lp_sym_expr_symbol(&want->dims[d]);
            if (sym < 0) continue;
            const lp_pt2_symbol *range = &s->symbols[sym];
            int64_t size = got->sizes[d];
            if (s->try_bound[sym] && s->try_values[sym] != size)
                return lp_error_set(LP_ERR_INVALID,
                                    "input %zu dimension %zu is %" PRId64 ", but input %zu "
                                    "dimension %zu is %" PRId64 ": the package has one size for "
                                    "both (%s, dynamic at export)",
                                    i, d, size, s->bound_input[sym], s->bound_dim[sym],
                                    s->try_values[sym], range->name);
            if (size < range->min || (range->max >= 0 && size > range->max)) {
                char max[24] = "";
                if (range->max >= 0) snprintf(max, sizeof max, "%" PRId64, range->max);
                return lp_error_set(LP_ERR_INVALID,
                                    "input %zu dimension %zu is %" PRId64 ", outside the "
                                    "package's range %" PRId64 "..%s (%s, dynamic at export)",
                                    i, d, size, range->min, max, range->name);
            }
            s->try_bound[sym] = 1;
            s->try_values[sym] = size;
            s->bound_input[sym] = i;
            s->bound_dim[sym] = d;
        }
    }
    return LP_OK;
}

/* Fixed and compound dims, against the symbols bound. */
static int check_dims(const lp_pt2_shapes *s, const lp_pt2_input *inputs) {
    for (size_t i = 0; i < s->n_inputs; i++)
        for (size_t d = 0; d < inputs[i].rank; d++) {
            const lp_sym_expr *e = &s->inputs[i].dims[d];
            if (lp_sym_expr_symbol(e) >= 0) continue;
            int64_t want = 0, size = inputs[i].sizes[d];
            int fixed = strspn(e->text, "0123456789") == strlen(e->text);
            if (!lp_sym_expr_eval(e, s->try_values, s->try_bound, s->n_symbols, &want))
                return lp_error_set(LP_ERR_INVALID,
                                    "input %zu dimension %zu is %" PRId64 ": the package's %s "
                                    "cannot be worked out from the other inputs",
                                    i, d, size, e->text);
            if (want != size && fixed)
                return lp_error_set(LP_ERR_INVALID,
                                    "input %zu dimension %zu is %" PRId64 ", the package was "
                                    "compiled for %" PRId64 " (fixed at export)",
                                    i, d, size, want);
            if (want != size)
                return lp_error_set(LP_ERR_INVALID,
                                    "input %zu dimension %zu is %" PRId64 ", the package needs "
                                    "%s = %" PRId64 " (dynamic at export)",
                                    i, d, size, e->text, want);
        }
    return LP_OK;
}

int lp_pt2_shapes_check(lp_pt2_shapes *s, const lp_pt2_input *inputs, size_t n) {
    if (n != s->n_inputs)
        return lp_error_set(LP_ERR_INVALID, "the package takes %zu %s (%s at export), not %zu",
                            s->n_inputs, s->n_inputs == 1 ? "input" : "inputs", s->examples, n);
    /* Dtypes before the cache: the same sizes in another dtype are other bytes (int32 ids where
     * the package reads int64 ones would have it read past the buffer). */
    for (size_t i = 0; i < n; i++)
        if (inputs[i].dtype && strcmp(inputs[i].dtype, s->inputs[i].dtype) != 0)
            return lp_error_set(LP_ERR_INVALID,
                                "input %zu is %s, the package was compiled for %s (AOTInductor "
                                "fixes dtypes at export)",
                                i, inputs[i].dtype, s->inputs[i].dtype);
    if (same_as_last(s, inputs)) return LP_OK;
    if (s->n_symbols) {
        memset(s->try_values, 0, s->n_symbols * sizeof *s->try_values);
        memset(s->try_bound, 0, s->n_symbols);
    }
    int rc = bind_symbols(s, inputs);
    if (!rc) rc = check_dims(s, inputs);
    if (rc) return rc;
    if (s->n_symbols) {
        memcpy(s->values, s->try_values, s->n_symbols * sizeof *s->values);
        memcpy(s->bound, s->try_bound, s->n_symbols);
    }
    for (size_t i = 0; i < n; i++)
        if (inputs[i].rank)
            memcpy(s->inputs[i].last, inputs[i].sizes, inputs[i].rank * sizeof(int64_t));
    evaluate(s);
    s->evaluated = 1;
    return LP_OK;
}

void lp_pt2_shapes_deliver(const lp_pt2_shapes *s, const lp_event_sink *sink, int flops,
                           int out_shape) {
    if (flops && sink->add_flops)
        for (size_t m = 0; m < s->n_modules; m++)
            if (s->modules[m].flops_now)
                sink->add_flops(sink->ctx, (int32_t)m, s->modules[m].flops_now);
    if (flops && sink->flops_unknown)
        for (size_t i = 0; i < s->n_no_formula; i++)
            sink->flops_unknown(sink->ctx, s->no_formula[i]);
    if (out_shape && sink->add_out_shape)
        for (size_t m = 0; m < s->n_modules; m++)
            for (size_t c = 0; c < s->modules[m].n_calls; c++)
                if (s->modules[m].calls[c].known)
                    sink->add_out_shape(sink->ctx, (int32_t)m, s->modules[m].calls[c].now,
                                        (int)s->modules[m].calls[c].rank);
}

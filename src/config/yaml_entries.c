/* yaml_entries.c: the configuration's lists of entries: the inputs list and the outputs list (the
 * schedule, a mapping of option rows, is yaml_read.c's). Each entry's keys are read
 * with their own small key list, and the rules that tie several keys together are checked after,
 * pointing at the key that broke them. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "config/dtype.h"
#include "config/input_spec.h"
#include "config/option_parse.h"
#include "config/yaml_internal.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Plain decimal digits with an optional sign, as the option values take them. */
static int plain_digits(const yaml_node_t *n, uint64_t *mag, int *neg) {
    if (!cfg_is_plain(n) || cfg_has_nul(n)) return 0;
    return lp_opt_parse_digits(cfg_scalar(n), mag, neg);
}

/* A finite decimal number ("0", "-1.5", "1e-3"); hex floats, inf and nan are refused. */
static int plain_number(const yaml_node_t *n, double *out) {
    if (n->type != YAML_SCALAR_NODE || !cfg_is_plain(n) || cfg_has_nul(n)) return 0;
    const char *s = cfg_scalar(n);
    size_t len = n->data.scalar.length, i = 0, digits = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits) return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp_digits = 0;
        if (++i < len && (s[i] == '-' || s[i] == '+')) i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            exp_digits++;
        if (!exp_digits) return 0;
    }
    if (i != len) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + len || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                      */

/* An input entry's keys, as rows so their messages are built as the options' are. */
enum { IN_SHAPE, IN_DTYPE, IN_FILL, IN_RANGE, IN_FILE };
static const lp_opt input_keys[] = {
    [IN_SHAPE] = {"shape", NULL, LP_OPT_STRING, .what = "a list of positive integers"},
    [IN_DTYPE] = {"dtype", NULL, LP_OPT_STRING,
                  .what = "float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8 "
                          "or bool"},
    [IN_FILL] = {"fill", NULL, LP_OPT_ENUM, .names = &lp_cfg_fills},
    [IN_RANGE] = {"range", NULL, LP_OPT_STRING, .what = "[low, high], two numbers"},
    [IN_FILE] = {"file", NULL, LP_OPT_STRING, .what = "the path of a raw data file"},
};
static const char *const input_names[] = {"shape", "dtype", "fill", "range", "file"};

/* One input while it is read: the spec plus what the cross-key checks need to point at. */
typedef struct cfg_input {
    lp_input_spec spec;
    int fill_given, file_given;
    yaml_mark_t fill_mark, range_mark;
} cfg_input;

static int read_shape(cfg_ctx *c, yaml_node_t *v, cfg_input *in) {
    size_t n = cfg_seq_len(v);
    char buf[LP_OPT_QUOTE_MAX];
    if (n < 1 || n > LP_MAX_DIMS)
        return cfg_error_at(c, v->start_mark, "'shape' must have 1 to %d dimensions, got %zu",
                            LP_MAX_DIMS, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = cfg_item(c, v, i);
        uint64_t mag;
        int neg;
        if (it->type != YAML_SCALAR_NODE || !plain_digits(it, &mag, &neg) || neg || mag == 0 ||
            mag > (uint64_t)INT64_MAX)
            return cfg_error_at(c, it->start_mark,
                                "each dimension of 'shape' must be a positive integer, got %s",
                                cfg_describe(it, buf, sizeof buf));
        in->spec.shape[i] = (int64_t)mag;
    }
    in->spec.ndim = (int)n;
    return LP_OK;
}

static int read_dtype(cfg_ctx *c, yaml_node_t *v, cfg_input *in) {
    const char *names[LP_DTYPE_BOOL + 1];
    char buf[LP_OPT_QUOTE_MAX];
    if (cfg_is_null(v)) return cfg_wrong_value(c, v, &input_keys[IN_DTYPE], "'dtype'");
    if (lp_dtype_from_name(cfg_scalar(v), v->data.scalar.length, &in->spec.dtype)) return LP_OK;
    for (int d = 0; d <= LP_DTYPE_BOOL; d++)
        names[d] = lp_dtype_name((lp_dtype)d);
    const char *near = lp_closest(cfg_scalar(v), names, COUNT(names));
    cfg_describe(v, buf, sizeof buf);
    if (near)
        return cfg_error_at(c, v->start_mark, "unknown dtype %s; did you mean '%s'?", buf, near);
    return cfg_error_at(c, v->start_mark, "unknown dtype %s (expected %s)", buf,
                        input_keys[IN_DTYPE].what);
}

static int read_range(cfg_ctx *c, yaml_node_t *v, cfg_input *in) {
    double lo, hi;
    if (cfg_seq_len(v) != 2 || !plain_number(cfg_item(c, v, 0), &lo) ||
        !plain_number(cfg_item(c, v, 1), &hi))
        return cfg_error_at(c, v->start_mark, "'range' must be %s", input_keys[IN_RANGE].what);
    if (!(lo < hi))
        return cfg_error_at(c, v->start_mark, "'range' is empty: low must be below high");
    in->spec.has_range = 1;
    in->spec.low = lo;
    in->spec.high = hi;
    in->range_mark = v->start_mark;
    return LP_OK;
}

static int read_input_file(cfg_ctx *c, yaml_node_t *v, cfg_input *in) {
    size_t len = v->data.scalar.length;
    if (cfg_is_null(v) || len == 0 || cfg_has_nul(v))
        return cfg_wrong_value(c, v, &input_keys[IN_FILE], "'file'");
    if (len >= LP_PATH_MAX)
        return cfg_error_at(c, v->start_mark, "'file' is longer than %d bytes", LP_PATH_MAX - 1);
    if (!(in->spec.file = lp_arena_strndup(c->arena, cfg_scalar(v), len))) return cfg_nomem();
    in->file_given = 1;
    return LP_OK;
}

static int read_input_key(cfg_ctx *c, size_t index, yaml_node_t *v, void *arg) {
    cfg_input *in = arg;
    const lp_opt *key = &input_keys[index];
    char subject[LP_OPT_QUOTE_MAX];
    int value, rc;
    lp_opt_subject(key, subject, sizeof subject);
    int want_list = index == IN_SHAPE || index == IN_RANGE;
    if (v->type != (want_list ? YAML_SEQUENCE_NODE : YAML_SCALAR_NODE))
        return cfg_wrong_value(c, v, key, subject);
    switch (index) {
    case IN_SHAPE:
        return read_shape(c, v, in);
    case IN_DTYPE:
        return read_dtype(c, v, in);
    case IN_FILL:
        if (cfg_is_null(v) || cfg_has_nul(v)) return cfg_wrong_value(c, v, key, subject);
        if ((rc = lp_opt_parse_enum(key, subject, cfg_scalar(v), &value)))
            return cfg_positioned(c, v->start_mark, rc);
        in->spec.fill = (lp_fill)value;
        in->fill_given = 1;
        in->fill_mark = v->start_mark;
        return LP_OK;
    case IN_RANGE:
        return read_range(c, v, in);
    default:
        return read_input_file(c, v, in);
    }
}

/* The rules that involve several keys of one input, as lp_input_spec_parse has them. */
static int check_input(cfg_ctx *c, const yaml_node_t *map, cfg_input *in) {
    lp_input_spec *s = &in->spec;
    if (s->ndim == 0)
        return cfg_error_at(c, map->start_mark,
                            "an input needs a 'shape', e.g. {shape: [1, 3, 224, 224]}");
    if (in->file_given) {
        if (in->fill_given && s->fill != LP_FILL_FILE)
            return cfg_error_at(c, in->fill_mark, "'fill: %s' conflicts with 'file'",
                                lp_cfg_name_of(&lp_cfg_fills, (int)s->fill));
        s->fill = LP_FILL_FILE;
    } else if (s->fill == LP_FILL_FILE) {
        return cfg_error_at(c, in->fill_mark, "'fill: file' needs a 'file' to read");
    }
    if (s->has_range && s->fill != LP_FILL_RANDOM)
        return cfg_error_at(c, in->range_mark, "'range' applies to random values only, not to %s",
                            s->fill == LP_FILL_FILE ? "a file"
                                                    : lp_cfg_name_of(&lp_cfg_fills, (int)s->fill));
    if (s->fill == LP_FILL_RANDOM && lp_dtype_is_integer(s->dtype) && s->dtype != LP_DTYPE_BOOL &&
        !s->has_range)
        return cfg_error_at(c, map->start_mark, "random %s values need a 'range: [low, high]'",
                            lp_dtype_name(s->dtype));
    return LP_OK;
}

/* An entry written as text: one forward argument in the --input syntax ("[3x320x320, 3x240x320]",
 * "int:5", "saved:args.pt"); its entries go to specs[*n..]. */
static int read_input_text(cfg_ctx *c, yaml_node_t *it, lp_input_spec *specs, size_t max,
                           size_t *n) {
    size_t got;
    if (cfg_is_null(it) || cfg_has_nul(it) || it->data.scalar.length == 0)
        return cfg_error_at(c, it->start_mark, "an input written as text cannot be empty or null");
    int rc = lp_input_parse_in(c->arena, cfg_scalar(it), specs + *n, max - *n, &got);
    if (rc) return cfg_positioned(c, it->start_mark, rc);
    *n += got;
    return LP_OK;
}

int cfg_read_inputs(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt) {
    char buf[LP_OPT_QUOTE_MAX];
    if (v->type != YAML_SEQUENCE_NODE) return cfg_wrong_value(c, v, opt, "'inputs'");
    size_t count = cfg_seq_len(v), n = 0;
    /* Read into room for every entry allowed, then kept at its own size in the arena. */
    lp_input_spec *all = calloc(opt->max, sizeof *all), *specs = NULL;
    if (!all) return cfg_nomem();
    int rc = LP_OK;
    for (size_t i = 0; i < count && !rc; i++) {
        yaml_node_t *it = cfg_item(c, v, i);
        if (n == opt->max) {
            rc = cfg_error_at(c, it->start_mark, "at most %zu input entries are allowed", opt->max);
        } else if (it->type == YAML_SCALAR_NODE) {
            rc = read_input_text(c, it, all, opt->max, &n);
        } else if (it->type != YAML_MAPPING_NODE) {
            rc = cfg_error_at(c, it->start_mark,
                              "each entry of 'inputs' must be a mapping such as "
                              "{shape: [1, 3, 224, 224], dtype: float32}, or one argument as "
                              "text such as \"[3x320x320, 3x240x320]\", got %s",
                              cfg_describe(it, buf, sizeof buf));
        } else {
            cfg_input in = {0};
            in.spec.dtype = LP_DTYPE_FLOAT32;
            in.spec.fill = LP_FILL_RANDOM;
            rc = cfg_walk(c, it, "an input", input_names, COUNT(input_names), read_input_key, &in);
            if (!rc) rc = check_input(c, it, &in);
            if (!rc) all[n++] = in.spec;
        }
    }
    if (!rc && n && !(specs = lp_arena_alloc(c->arena, n, sizeof *specs))) rc = cfg_nomem();
    if (!rc && n) memcpy(specs, all, n * sizeof *specs);
    free(all);
    if (rc) return rc;
    *LP_OPT_FIELD(c->opts, opt, const lp_input_spec *) = specs;
    *LP_OPT_COUNT(c->opts, opt) = n;
    return LP_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Outputs                                                                                     */

static int read_output_key(cfg_ctx *c, size_t index, yaml_node_t *v, void *arg) {
    lp_output_spec *out = arg;
    const lp_opt *key = index == 0 ? &lp_opt_output_format : &lp_opt_output_file;
    const char *subject = index == 0 ? "'format'" : "'file'";
    int value, rc;
    if (v->type != YAML_SCALAR_NODE) return cfg_wrong_value(c, v, key, subject);
    if (index == 1 && cfg_is_null(v)) {
        out->file = NULL;
        return LP_OK;
    }
    if (cfg_is_null(v) || cfg_has_nul(v) || !v->data.scalar.length)
        return cfg_wrong_value(c, v, key, subject);
    if (index == 1) {
        if (!(out->file = lp_arena_strndup(c->arena, cfg_scalar(v), v->data.scalar.length)))
            return cfg_nomem();
        return LP_OK;
    }
    if ((rc = lp_opt_parse_enum(key, subject, cfg_scalar(v), &value)))
        return cfg_positioned(c, v->start_mark, rc);
    out->format = (lp_format)value;
    return LP_OK;
}

int cfg_read_outputs(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt) {
    static const char *const names[] = {"format", "file"};
    char buf[LP_OPT_QUOTE_MAX];
    if (v->type != YAML_SEQUENCE_NODE) return cfg_wrong_value(c, v, opt, "'outputs'");
    size_t n = cfg_seq_len(v);
    lp_output_spec *outs = NULL;
    if (n && !(outs = lp_arena_alloc(c->arena, n, sizeof *outs))) return cfg_nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = cfg_item(c, v, i);
        if (it->type != YAML_MAPPING_NODE)
            return cfg_error_at(c, it->start_mark,
                                "each entry of 'outputs' must be a mapping such as "
                                "{format: tree, file: \"-\"}, got %s",
                                cfg_describe(it, buf, sizeof buf));
        outs[i] = (lp_output_spec){LP_FORMAT_TREE, NULL};
        int rc = cfg_walk(c, it, "an output", names, COUNT(names), read_output_key, &outs[i]);
        if (rc) return rc;
    }
    *LP_OPT_FIELD(c->opts, opt, const lp_output_spec *) = outs;
    *LP_OPT_COUNT(c->opts, opt) = n;
    return LP_OK;
}

/* options_validate.c: lp_options_validate, row by row from the option table, so the API, the CLI
 * and the config file agree on every range and name. A string is checked by option_parse.c, the
 * same check a value typed on the command line gets. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/labels.h"
#include "config/option_table.h"
#include "config/option_parse.h"
#include "config/options_version.h"
#include "layerprof.h"

/* All zero is "no schedule"; anything else needs active steps, or the cycle would never record. */
static int validate_schedule(const lp_schedule *s) {
    const struct {
        const char *name;
        int value;
    } f[] = {
        {"wait", s->wait}, {"warmup", s->warmup}, {"active", s->active}, {"repeat", s->repeat}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value < 0)
            return lp_error_set(LP_ERR_INVALID, "schedule.%s must be 0 or more, not %d", f[i].name,
                                f[i].value);
    if (s->active == 0)
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            if (f[i].value)
                return lp_error_set(LP_ERR_INVALID,
                                    "schedule.%s is %d but schedule.active is 0: a schedule "
                                    "records at least 1 active step per cycle (all 0: no "
                                    "schedule)",
                                    f[i].name, f[i].value);
    return LP_OK;
}

/* "between 1 and 10000000", "-1 (no limit) or more": the row's range as validation says it. */
static int validate_int(const lp_opt *opt, int v) {
    char note[64] = "";
    if (v >= opt->lo && v <= opt->hi) return LP_OK;
    if (opt->lo_note) snprintf(note, sizeof note, " (%s)", opt->lo_note);
    if (opt->hi == INT_MAX)
        return lp_error_set(LP_ERR_INVALID, "%s must be %d%s or more, not %d", opt->key, opt->lo,
                            note, v);
    return lp_error_set(LP_ERR_INVALID, "%s must be between %d%s and %d, not %d", opt->key, opt->lo,
                        note, opt->hi, v);
}

static int validate_string(const lp_opt *opt, const char *s) {
    if ((opt->flags & LP_OPTF_REQUIRED) && (!s || !*s))
        return lp_error_set(LP_ERR_INVALID, "no %s file given", opt->key);
    if (!s) return LP_OK;
    if (opt->check == LP_CHECK_DEVICE) {
        int is_cuda, index;
        return lp_device_parse(s, &is_cuda, &index);
    }
    return lp_opt_check_string(opt, opt->key, s);
}

/* A (pointer, count) pair: no count without an array, no NULL entry ("path 2 is NULL"). */
static int validate_list(const lp_opt *opt, const lp_options *o) {
    size_t n = *LP_OPT_COUNT(o, opt);
    const void *list = *LP_OPT_FIELD(o, opt, const void *const);
    const char *name = lp_opt_leaf(opt);
    /* "paths": "path 2"; "libraries": "library 2" */
    size_t len = strlen(name);
    int ies = len > 3 && !strcmp(name + len - 3, "ies");
    int singular = (int)len - (ies ? 3 : 1);
    if (opt->max && n > opt->max)
        return lp_error_set(LP_ERR_INVALID, "at most %zu %s, not %zu", opt->max, name, n);
    if (n && !list)
        return lp_error_set(LP_ERR_INVALID, "n_%s is %zu but %s is NULL", name, n, name);
    for (size_t i = 0; i < n; i++) {
        int rc = LP_OK;
        if (opt->type == LP_OPT_INPUTS) {
            /* Entry by entry, one whole value at a time (lp_input_kind). */
            const lp_input_spec *in = &((const lp_input_spec *)list)[i];
            size_t used = lp_input_value_size(in, n - i);
            if (in->kind == LP_INPUT_TENSOR && (in->ndim < 0 || in->ndim > LP_MAX_DIMS))
                rc = lp_error_set(LP_ERR_INVALID, "input %zu: %d dimensions", i + 1, in->ndim);
            else if (!used)
                rc = lp_error_set(LP_ERR_INVALID,
                                  "input entries %zu to %zu are not one whole value (a bad kind, a "
                                  "container's n_items past the end, a dict key that is neither "
                                  "str nor int, or saved:FILE inside a container)",
                                  i + 1, n);
            else
                i += used - 1;
        } else if (opt->type == LP_OPT_OUTPUTS) {
            const lp_output_spec *out = &((const lp_output_spec *)list)[i];
            if (!lp_cfg_name_of(&lp_cfg_formats, (int)out->format))
                rc = lp_error_set(LP_ERR_INVALID, "output %zu: unknown format %d", i + 1,
                                  (int)out->format);
        } else {
            const char *s = ((const char *const *)list)[i];
            if (!s)
                return lp_error_set(LP_ERR_INVALID, "%.*s%s %zu is NULL", singular, name,
                                    ies ? "y" : "", i + 1);
            if (opt->type == LP_OPT_COLUMNS || opt->check)
                rc = lp_opt_check_string(opt, opt->key, s);
        }
        if (rc) return rc;
    }
    if (opt->check == LP_CHECK_LABEL) return lp_labels_check_list(opt->key, list, n);
    return LP_OK;
}

static int validate_row(const lp_opt *opt, const lp_options *o) {
    char what[256];
    int v;
    switch (opt->type) {
    case LP_OPT_INT:
        return validate_int(opt, *LP_OPT_FIELD(o, opt, const int));
    case LP_OPT_ENUM:
        v = *LP_OPT_FIELD(o, opt, const int);
        if (lp_cfg_name_of(opt->names, v)) return LP_OK;
        return lp_error_set(LP_ERR_INVALID, "unknown %s %d (%s)", opt->names->what, v,
                            lp_opt_what(opt, what, sizeof what));
    case LP_OPT_STRING:
        return validate_string(opt, *LP_OPT_FIELD(o, opt, const char *const));
    case LP_OPT_COLUMNS:
    case LP_OPT_PATHS:
    case LP_OPT_INPUTS:
    case LP_OPT_OUTPUTS:
        return validate_list(opt, o);
    case LP_OPT_SCHEDULE:
        return validate_schedule(LP_OPT_FIELD(o, opt, const lp_schedule));
    case LP_OPT_REAL:
        if (lp_opt_real_in_range(opt, *LP_OPT_FIELD(o, opt, const double))) return LP_OK;
        return lp_error_set(LP_ERR_INVALID, "%s must be %s, not %g", opt->key,
                            lp_opt_what(opt, what, sizeof what),
                            *LP_OPT_FIELD(o, opt, const double));
    default: /* booleans, the seed: every value means something; the mappings hold none */
        return LP_OK;
    }
}

static int validate_rows(const lp_options *o);

int lp_options_validate(const lp_options *in) {
    if (!in) return lp_error_set(LP_ERR_INVALID, "options are NULL");
    lp_options_view view; /* an older version's missing fields read as their defaults */
    int rc = lp_options_view_open(&view, in, "lp_options_validate");
    if (!rc) rc = validate_rows(&view.opts);
    lp_options_view_close(&view);
    return rc;
}

static int validate_rows(const lp_options *o) {
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++) {
        /* The schedule's counts are checked together by their parent; input_file's and
         * inputs_saved's list is inputs'. */
        if ((all[i].flags & LP_OPTF_BY_PARENT) || all[i].type == LP_OPT_INPUT_FILE ||
            all[i].type == LP_OPT_INPUT_SAVED)
            continue;
        int rc = validate_row(&all[i], o);
        if (rc) return rc;
    }
    return LP_OK;
}

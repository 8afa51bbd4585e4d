/* yaml_write.c: lp_options written back as a configuration file (the CLI's --print-config).
 *
 * The option table says what to write, in its order: every key, defaults included, so the output
 * documents the whole run. Strings are always double-quoted (a path named "true" or "null" stays a
 * string) and numbers are written with just enough digits to read back exactly, so parsing the
 * output gives identical options. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "config/dtype.h"
#include "config/names.h"
#include "config/option_table.h"
#include "config/options_version.h"
#include "layerprof.h"

/* Decodes one UTF-8 character of a NUL-terminated string. Returns its length in bytes, or 0 when
 * it is malformed (overlong, a surrogate, past U+10FFFF): YAML text must be valid UTF-8. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp) {
    size_t n;
    uint32_t min;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0) {
        n = 2, min = 0x80, *cp = s[0] & 0x1Fu;
    } else if ((s[0] & 0xF0) == 0xE0) {
        n = 3, min = 0x800, *cp = s[0] & 0x0Fu;
    } else if ((s[0] & 0xF8) == 0xF0) {
        n = 4, min = 0x10000, *cp = s[0] & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) { /* the terminating NUL fails this test, so no overrun */
        if ((s[i] & 0xC0) != 0x80) return 0;
        *cp = (*cp << 6) | (s[i] & 0x3Fu);
    }
    if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
    return n;
}

static int valid_utf8(const char *s) {
    uint32_t cp;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_decode(p, &cp);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

/* Characters written as they are inside double quotes: those libyaml's reader accepts as
 * printable, minus the line breaks it would fold into spaces (NEL, LS, PS) and the BOM. */
static int is_literal(uint32_t cp) {
    if (cp == '"' || cp == '\\' || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) return 0;
    return (cp >= 0x20 && cp <= 0x7E) || (cp >= 0xA0 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* A YAML double-quoted scalar, or null. `s` was checked with valid_utf8. */
static void put_string(FILE *out, const char *s) {
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        uint32_t cp = 0;
        size_t n = utf8_decode(p, &cp);
        if (!n) break; /* cannot happen after check_writable; never loop on it */
        if (is_literal(cp))
            fwrite(p, 1, n, out);
        else if (cp == '"')
            fputs("\\\"", out);
        else if (cp == '\\')
            fputs("\\\\", out);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp < 0x100)
            fprintf(out, "\\x%02" PRIX32, cp);
        else if (cp < 0x10000)
            fprintf(out, "\\u%04" PRIX32, cp);
        else
            fprintf(out, "\\U%08" PRIX32, cp);
        p += n;
    }
    fputc('"', out);
}

static void put_string_list(FILE *out, const char *const *list, size_t n) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        put_string(out, list[i]);
    }
    fputc(']', out);
}

/* The shortest %g form that reads back as the same double ("0.1", not "0.10000000000000001"). */
static void put_double(FILE *out, double v) {
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
}

static const char *yes_no(int b) {
    return b ? "true" : "false";
}

/* One forward argument, from in[0] (of n; checked whole): a tensor as a mapping, anything else as
 * its text in the --input syntax, which the reader parses back. Returns the entries it used. */
static size_t put_input(FILE *out, const lp_input_spec *in, size_t n) {
    if (in->kind != LP_INPUT_TENSOR) {
        int len = lp_input_format(in, n, NULL, 0);
        char *text = len >= 0 ? malloc((size_t)len + 1) : NULL;
        fputs("  - ", out);
        if (text) lp_input_format(in, n, text, (size_t)len + 1);
        put_string(out, text ? text : "");
        fputc('\n', out);
        free(text);
        return lp_input_value_size(in, n);
    }
    fputs("  - shape: [", out);
    for (int d = 0; d < in->ndim; d++)
        fprintf(out, d ? ", %" PRId64 : "%" PRId64, in->shape[d]);
    fprintf(out, "]\n    dtype: %s\n", lp_dtype_name(in->dtype));
    fprintf(out, "    fill: %s\n", lp_cfg_name_of(&lp_cfg_fills, (int)in->fill));
    if (in->has_range) {
        fputs("    range: [", out);
        put_double(out, in->low);
        fputs(", ", out);
        put_double(out, in->high);
        fputs("]\n", out);
    }
    if (in->fill == LP_FILL_FILE) {
        fputs("    file: ", out);
        put_string(out, in->file);
        fputc('\n', out);
    }
    return 1;
}

/* What YAML cannot carry at all. Values it can carry but the reader refuses (iterations 0, an
 * empty string) are written as they are: the output then shows the mistake. */
static int check_input(size_t i, const lp_input_spec *in) {
    const char *name = lp_dtype_name(in->dtype);
    lp_dtype dt;
    if (in->kind == LP_INPUT_STR || in->kind == LP_INPUT_SAVED)
        return in->file && valid_utf8(in->file)
                   ? LP_OK
                   : lp_error_set(LP_ERR_INVALID, "input %zu: the text is %s", i + 1,
                                  in->file ? "not valid UTF-8" : "NULL");
    if (in->kind == LP_INPUT_FLOAT && !isfinite(in->real))
        return lp_error_set(LP_ERR_INVALID, "input %zu: the number is not finite", i + 1);
    if (in->kind != LP_INPUT_TENSOR) return LP_OK;
    if (in->ndim < 0 || in->ndim > LP_MAX_DIMS)
        return lp_error_set(LP_ERR_INVALID, "input %zu has %d dimensions", i + 1, in->ndim);
    if (!lp_dtype_from_name(name, strlen(name), &dt) || dt != in->dtype)
        return lp_error_set(LP_ERR_INVALID, "input %zu: unknown dtype %d", i + 1, (int)in->dtype);
    if (!lp_cfg_name_of(&lp_cfg_fills, (int)in->fill))
        return lp_error_set(LP_ERR_INVALID, "input %zu: unknown fill %d", i + 1, (int)in->fill);
    if (in->has_range && (!isfinite(in->low) || !isfinite(in->high)))
        return lp_error_set(LP_ERR_INVALID, "input %zu: the range is not finite", i + 1);
    if (in->fill == LP_FILL_FILE && (!in->file || !valid_utf8(in->file)))
        return lp_error_set(LP_ERR_INVALID, "input %zu: the file name is %s", i + 1,
                            in->file ? "not valid UTF-8" : "NULL");
    return LP_OK;
}

static int check_output(size_t i, const lp_output_spec *out) {
    if (!lp_cfg_name_of(&lp_cfg_formats, (int)out->format))
        return lp_error_set(LP_ERR_INVALID, "output %zu: unknown format %d", i + 1,
                            (int)out->format);
    if (out->file && !valid_utf8(out->file))
        return lp_error_set(LP_ERR_INVALID, "output %zu: the file is not valid UTF-8", i + 1);
    return LP_OK;
}

static int check_row(const lp_opt *opt, const lp_options *o) {
    const char *s;
    int v;
    switch (opt->type) {
    case LP_OPT_STRING:
        s = *LP_OPT_FIELD(o, opt, const char *const);
        if (s && !valid_utf8(s))
            return lp_error_set(LP_ERR_INVALID, "%s: the string is not valid UTF-8", opt->key);
        return LP_OK;
    case LP_OPT_ENUM:
        v = *LP_OPT_FIELD(o, opt, const int);
        if (!lp_cfg_name_of(opt->names, v))
            return lp_error_set(LP_ERR_INVALID, "unknown %s %d", opt->names->what, v);
        return LP_OK;
    case LP_OPT_COLUMNS:
    case LP_OPT_PATHS:
    case LP_OPT_INPUTS:
    case LP_OPT_OUTPUTS:
        break;
    default:
        return LP_OK;
    }
    size_t n = *LP_OPT_COUNT(o, opt);
    const void *list = *LP_OPT_FIELD(o, opt, const void *const);
    if (n && !list)
        return lp_error_set(LP_ERR_INVALID, "%s: the list has a count but no array", opt->key);
    for (size_t i = 0, value_end = 0; i < n; i++) {
        int rc = LP_OK;
        if (opt->type == LP_OPT_INPUTS && i == value_end) { /* a value starts: is it whole? */
            size_t used = lp_input_value_size(&((const lp_input_spec *)list)[i], n - i);
            if (!used)
                return lp_error_set(LP_ERR_INVALID, "input %zu does not start a whole value",
                                    i + 1);
            value_end = i + used;
        }
        if (opt->type == LP_OPT_INPUTS)
            rc = check_input(i, &((const lp_input_spec *)list)[i]);
        else if (opt->type == LP_OPT_OUTPUTS)
            rc = check_output(i, &((const lp_output_spec *)list)[i]);
        else if (!(s = ((const char *const *)list)[i]) || !valid_utf8(s))
            rc = lp_error_set(LP_ERR_INVALID, "%s: entry %zu is NULL or not valid UTF-8", opt->key,
                              i + 1);
        if (rc) return rc;
    }
    return LP_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing, row by row                                                                         */

static void put_value(FILE *out, const lp_opt *opt, const lp_options *o) {
    switch (opt->type) {
    case LP_OPT_BOOL:
        fputs(yes_no(*LP_OPT_FIELD(o, opt, const int)), out);
        break;
    case LP_OPT_INT:
        fprintf(out, "%d", *LP_OPT_FIELD(o, opt, const int));
        break;
    case LP_OPT_U64:
        fprintf(out, "%" PRIu64, *LP_OPT_FIELD(o, opt, const uint64_t));
        break;
    case LP_OPT_REAL:
        fprintf(out, "%.17g", *LP_OPT_FIELD(o, opt, const double));
        break;
    case LP_OPT_ENUM:
        fputs(lp_cfg_name_of(opt->names, *LP_OPT_FIELD(o, opt, const int)), out);
        break;
    case LP_OPT_STRING:
        put_string(out, *LP_OPT_FIELD(o, opt, const char *const));
        break;
    case LP_OPT_COLUMNS:
    case LP_OPT_PATHS:
        put_string_list(out, *LP_OPT_FIELD(o, opt, const char *const *const),
                        *LP_OPT_COUNT(o, opt));
        break;
    default: /* the structured values have their own writers below */
        break;
    }
}

/* A mapping's keys on one line: "{a: 1, b: true}". */
static void put_flow_mapping(FILE *out, const char *parent, const lp_options *o) {
    size_t n, k = 0;
    const lp_opt *all = lp_opt_all(&n);
    fputc('{', out);
    for (size_t i = 0; i < n; i++)
        if (lp_opt_in_mapping(&all[i], parent)) {
            fprintf(out, "%s%s: ", k++ ? ", " : "", lp_opt_leaf(&all[i]));
            put_value(out, &all[i], o);
        }
    fputc('}', out);
}

static void put_row(FILE *out, const lp_opt *opt, const lp_options *o) {
    size_t n = opt->count_offset ? *LP_OPT_COUNT(o, opt) : 0;
    const lp_schedule *sc;
    switch (opt->type) {
    case LP_OPT_MAPPING:
        fprintf(out, "%s:", opt->key);
        if (opt->flags & LP_OPTF_FLOW) {
            fputc(' ', out);
            put_flow_mapping(out, opt->key, o);
            fputc('\n', out);
            return;
        }
        fputc('\n', out);
        size_t n_all;
        const lp_opt *all = lp_opt_all(&n_all);
        for (size_t i = 0; i < n_all; i++)
            if (lp_opt_in_mapping(&all[i], opt->key)) {
                fprintf(out, "  %s: ", lp_opt_leaf(&all[i]));
                put_value(out, &all[i], o);
                fputc('\n', out);
            }
        return;
    case LP_OPT_SCHEDULE:
        /* Only when set: all 0 (no schedule) is the reader's default, and a file without the key
         * reads back the same. Invalid values (active 0 with a wait) are written as they are. */
        sc = LP_OPT_FIELD(o, opt, const lp_schedule);
        if (sc->wait || sc->warmup || sc->active || sc->repeat) {
            fprintf(out, "%s: ", opt->key);
            put_flow_mapping(out, opt->key, o);
            fputc('\n', out);
        }
        return;
    case LP_OPT_INPUTS:
        fputs(n ? "inputs:\n" : "inputs: []\n", out);
        for (size_t i = 0; i < n;)
            i += put_input(out, &(*LP_OPT_FIELD(o, opt, const lp_input_spec *const))[i], n - i);
        return;
    case LP_OPT_OUTPUTS:
        fputs(n ? "outputs:\n" : "outputs: []\n", out);
        for (size_t i = 0; i < n; i++) {
            const lp_output_spec *spec = &(*LP_OPT_FIELD(o, opt, const lp_output_spec *const))[i];
            fprintf(out,
                    "  - {format: %s, file: ", lp_cfg_name_of(&lp_cfg_formats, (int)spec->format));
            put_string(out, spec->file);
            fputs("}\n", out);
        }
        return;
    default:
        fprintf(out, "%s: ", opt->key);
        put_value(out, opt, o);
        fputc('\n', out);
        return;
    }
}

static int write_rows(const lp_options *o, FILE *out);

int lp_options_write_yaml(const lp_options *in, FILE *out) {
    if (!in || !out) return lp_error_set(LP_ERR_INVALID, "lp_options_write_yaml: NULL argument");
    lp_options_view view; /* an older version's missing fields read as their defaults */
    int rc = lp_options_view_open(&view, in, "lp_options_write_yaml");
    if (!rc) rc = write_rows(&view.opts, out);
    lp_options_view_close(&view);
    return rc;
}

static int write_rows(const lp_options *o, FILE *out) {
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++) {
        int rc = all[i].flags & LP_OPTF_NOT_YAML ? LP_OK : check_row(&all[i], o);
        if (rc) return rc;
    }
    fputs("# layerprof configuration: every option, defaults included (docs/config.md).\n", out);
    for (size_t i = 0; i < n; i++)
        if (lp_opt_in_mapping(&all[i], NULL) && !(all[i].flags & LP_OPTF_NOT_YAML))
            put_row(out, &all[i], o);
    if (fflush(out) != 0 || ferror(out))
        return lp_error_set(LP_ERR_IO, "cannot write the configuration: %s", strerror(errno));
    return LP_OK;
}

/* config_emit.c: lp_options written back as a configuration file (the CLI's --print-config).
 *
 * Every key is written, defaults included, so the output documents the whole run. Strings are
 * always double-quoted (a path named "true" or "null" stays a string) and numbers are written
 * with just enough digits to read back exactly, so parsing the output gives identical options. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "config/input_spec.h"
#include "config/names.h"
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
    fputs("]\n", out);
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

static void put_input(FILE *out, const lp_input_spec *in) {
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
}

/* What YAML cannot carry at all. Values it can carry but the reader refuses (iterations 0, an
 * empty string) are written as they are: the output then shows the mistake. */
static int check_writable(const lp_options *o) {
    const char *const strings[] = {o->model_path, o->device, o->sort};
    lp_dtype dt;
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (strings[i] && !valid_utf8(strings[i]))
            return lp_error_set(LP_ERR_INVALID, "option string is not valid UTF-8");
    if (!lp_cfg_name_of(&lp_cfg_modes, (int)o->mode))
        return lp_error_set(LP_ERR_INVALID, "unknown mode %d", (int)o->mode);
    if (!lp_cfg_name_of(&lp_cfg_units, (int)o->units))
        return lp_error_set(LP_ERR_INVALID, "unknown units %d", (int)o->units);
    if (!lp_cfg_name_of(&lp_cfg_cuda_timings, (int)o->cuda_timing))
        return lp_error_set(LP_ERR_INVALID, "unknown cuda_timing %d", (int)o->cuda_timing);
    if ((o->n_inputs && !o->inputs) || (o->n_paths && !o->paths) || (o->n_columns && !o->columns) ||
        (o->n_outputs && !o->outputs))
        return lp_error_set(LP_ERR_INVALID, "an options list has a count but no array");
    for (size_t i = 0; i < o->n_inputs; i++) {
        const lp_input_spec *in = &o->inputs[i];
        const char *name = lp_dtype_name(in->dtype);
        if (in->ndim < 0 || in->ndim > LP_MAX_DIMS)
            return lp_error_set(LP_ERR_INVALID, "input %zu has %d dimensions", i + 1, in->ndim);
        if (!lp_dtype_from_name(name, strlen(name), &dt) || dt != in->dtype)
            return lp_error_set(LP_ERR_INVALID, "input %zu: unknown dtype %d", i + 1,
                                (int)in->dtype);
        if (!lp_cfg_name_of(&lp_cfg_fills, (int)in->fill))
            return lp_error_set(LP_ERR_INVALID, "input %zu: unknown fill %d", i + 1, (int)in->fill);
        if (in->has_range && (!isfinite(in->low) || !isfinite(in->high)))
            return lp_error_set(LP_ERR_INVALID, "input %zu: the range is not finite", i + 1);
        if (in->fill == LP_FILL_FILE &&
            (!memchr(in->file, '\0', sizeof in->file) || !valid_utf8(in->file)))
            return lp_error_set(LP_ERR_INVALID, "input %zu: the file name is not valid UTF-8",
                                i + 1);
    }
    for (size_t i = 0; i < o->n_paths; i++)
        if (!o->paths[i] || !valid_utf8(o->paths[i]))
            return lp_error_set(LP_ERR_INVALID, "path %zu is NULL or not valid UTF-8", i + 1);
    for (size_t i = 0; i < o->n_columns; i++)
        if (!o->columns[i] || !valid_utf8(o->columns[i]))
            return lp_error_set(LP_ERR_INVALID, "column %zu is NULL or not valid UTF-8", i + 1);
    for (size_t i = 0; i < o->n_outputs; i++) {
        if (!lp_cfg_name_of(&lp_cfg_formats, (int)o->outputs[i].format))
            return lp_error_set(LP_ERR_INVALID, "output %zu: unknown format %d", i + 1,
                                (int)o->outputs[i].format);
        if (o->outputs[i].file && !valid_utf8(o->outputs[i].file))
            return lp_error_set(LP_ERR_INVALID, "output %zu: the file is not valid UTF-8", i + 1);
    }
    return LP_OK;
}

int lp_options_write_yaml(const lp_options *o, FILE *out) {
    if (!o || !out) return lp_error_set(LP_ERR_INVALID, "lp_options_write_yaml: NULL argument");
    int rc = check_writable(o);
    if (rc) return rc;

    fputs("# layerprof configuration: every option, defaults included (docs/config.md).\n", out);
    fputs("model: ", out);
    put_string(out, o->model_path);
    fputs("\ndevice: ", out);
    put_string(out, o->device);
    fprintf(out, "\nmode: %s\n", lp_cfg_name_of(&lp_cfg_modes, (int)o->mode));
    fputs(o->n_inputs ? "inputs:\n" : "inputs: []\n", out);
    for (size_t i = 0; i < o->n_inputs; i++)
        put_input(out, &o->inputs[i]);
    fprintf(out, "seed: %" PRIu64 "\n", o->seed);
    fprintf(out, "warmup: %d\niterations: %d\nthreads: %d\n", o->warmup, o->iterations, o->threads);
    /* Only when set: all 0 (no schedule) is the reader's default, and a file without the key
     * reads back the same. Invalid values (active 0 with a wait) are written as they are. */
    const lp_schedule *sc = &o->schedule;
    if (sc->wait || sc->warmup || sc->active || sc->repeat)
        fprintf(out, "schedule: {wait: %d, warmup: %d, active: %d, repeat: %d}\n", sc->wait,
                sc->warmup, sc->active, sc->repeat);
    fprintf(out,
            "profile: {memory: %s, events: %s, shapes: %s, trace: %s, trace_iterations: %d, "
            "cuda_timing: %s, nvtx: %s}\n",
            yes_no(o->memory), yes_no(o->events), yes_no(o->shapes), yes_no(o->trace),
            o->trace_iterations, lp_cfg_name_of(&lp_cfg_cuda_timings, (int)o->cuda_timing),
            yes_no(o->nvtx));
    fputs("paths: ", out);
    put_string_list(out, o->paths, o->n_paths);

    fprintf(out, "display:\n  depth: %d\n  sort: ", o->depth);
    put_string(out, o->sort);
    fprintf(out, "\n  top: %d\n  columns: ", o->top);
    put_string_list(out, o->columns, o->n_columns);
    fprintf(out, "  units: %s\n  ascii: %s\n", lp_cfg_name_of(&lp_cfg_units, (int)o->units),
            yes_no(o->ascii));

    fputs(o->n_outputs ? "outputs:\n" : "outputs: []\n", out);
    for (size_t i = 0; i < o->n_outputs; i++) {
        fprintf(out, "  - {format: %s, file: ",
                lp_cfg_name_of(&lp_cfg_formats, (int)o->outputs[i].format));
        put_string(out, o->outputs[i].file);
        fputs("}\n", out);
    }
    fprintf(out, "summary: %s\n", yes_no(o->summary));
    fprintf(out, "verbose: %s\n", yes_no(o->verbose));

    if (fflush(out) != 0 || ferror(out))
        return lp_error_set(LP_ERR_IO, "cannot write the configuration: %s", strerror(errno));
    return LP_OK;
}

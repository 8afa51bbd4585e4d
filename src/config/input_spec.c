/* input_spec.c: the "SHAPE[:DTYPE][:FILL]" syntax of --input and the model's recorded inputs. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/dtype.h"
#include "config/input_spec.h"
#include "layerprof.h"

int64_t lp_input_spec_bytes(const lp_input_spec *spec) {
    if (!spec || spec->kind != LP_INPUT_TENSOR || spec->ndim < 0 || spec->ndim > LP_MAX_DIMS)
        return 0;
    int64_t n = lp_dtype_size(spec->dtype);
    for (int i = 0; i < spec->ndim; i++) {
        if (spec->shape[i] <= 0) return 0;
        if (n > INT64_MAX / spec->shape[i]) return INT64_MAX;
        n *= spec->shape[i];
    }
    return n;
}

/* "1x3x224x224": positive dimensions separated by 'x'. */
static int parse_shape(const char *s, size_t len, lp_input_spec *out, const char *whole) {
    out->ndim = 0;
    size_t i = 0;
    if (len == 0)
        return lp_error_set(LP_ERR_INVALID, "input '%s': the shape is empty (e.g. 1x3x224x224)",
                            whole);
    while (i < len) {
        if (out->ndim == LP_MAX_DIMS)
            return lp_error_set(LP_ERR_INVALID, "input '%s': more than %d dimensions", whole,
                                LP_MAX_DIMS);
        if (!isdigit((unsigned char)s[i]))
            return lp_error_set(
                LP_ERR_INVALID,
                "input '%s': bad shape: expected a dimension at '%.*s' (e.g. 1x3x224x224)", whole,
                (int)(len - i), s + i);
        int64_t v = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (v > (INT64_MAX - 9) / 10)
                return lp_error_set(LP_ERR_INVALID, "input '%s': dimension too large", whole);
            v = v * 10 + (s[i] - '0');
            i++;
        }
        if (v == 0)
            return lp_error_set(LP_ERR_INVALID, "input '%s': dimensions must be positive", whole);
        out->shape[out->ndim++] = v;
        if (i < len) {
            if (s[i] != 'x' && s[i] != 'X')
                return lp_error_set(
                    LP_ERR_INVALID,
                    "input '%s': bad shape: unexpected '%c' (dimensions are separated by 'x')",
                    whole, s[i]);
            i++;
            if (i == len)
                return lp_error_set(LP_ERR_INVALID, "input '%s': the shape ends with 'x'", whole);
        }
    }
    return LP_OK;
}

int lp_parse_finite(const char *s, size_t len, double *out) {
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* The canonical name closest to s[0..len) among `names`, or NULL (suggest.h's rule). */
static const char *closest_of(const char *s, size_t len, const char *const *names, size_t n) {
    char word[64];
    if (len >= sizeof word) return NULL;
    memcpy(word, s, len);
    word[len] = '\0';
    return lp_closest(word, names, n);
}

static const char *closest_dtype(const char *s, size_t len) {
    const char *names[LP_DTYPE_BOOL + 1];
    for (int d = 0; d <= LP_DTYPE_BOOL; d++)
        names[d] = lp_dtype_name((lp_dtype)d);
    return closest_of(s, len, names, LP_DTYPE_BOOL + 1);
}

static const char *const fill_words[] = {"random", "zeros", "ones"};

/* The config file's message for the same word (yaml_entries.c: read_dtype): "unknown dtype 'X';
 * did you mean 'Y'?" where a dtype is close, else the list. */
static int unknown_dtype(const char *whole, const char *s, size_t len) {
    const char *near = closest_dtype(s, len);
    if (near)
        return lp_error_set(LP_ERR_INVALID, "input '%s': unknown dtype '%.*s'; did you mean '%s'?",
                            whole, (int)len, s, near);
    return lp_error_set(LP_ERR_INVALID,
                        "input '%s': unknown dtype '%.*s' (float32, float64, float16, bfloat16, "
                        "int64, int32, int16, int8, uint8, bool)",
                        whole, (int)len, s);
}

static int parse_fill(const char *s, size_t len, lp_input_spec *out, const char *whole) {
#define IS(word) (len == strlen(word) && strncmp(s, word, len) == 0)
    if (IS("random") || IS("rand"))
        out->fill = LP_FILL_RANDOM;
    else if (IS("zeros") || IS("zero"))
        out->fill = LP_FILL_ZEROS;
    else if (IS("ones") || IS("one"))
        out->fill = LP_FILL_ONES;
    else {
        const char *dots = NULL;
        for (size_t i = 0; i + 1 < len; i++)
            if (s[i] == '.' && s[i + 1] == '.' && i > 0) {
                dots = s + i;
                break;
            }
        double lo, hi;
        if (!dots || !lp_parse_finite(s, (size_t)(dots - s), &lo) ||
            !lp_parse_finite(dots + 2, len - (size_t)(dots - s) - 2, &hi)) {
            const char *near = closest_of(s, len, fill_words, 3);
            if (near)
                return lp_error_set(LP_ERR_INVALID,
                                    "input '%s': unknown fill '%.*s'; did you mean '%s'?", whole,
                                    (int)len, s, near);
            return lp_error_set(
                LP_ERR_INVALID,
                "input '%s': unknown fill '%.*s' (random, zeros, ones, or a range LO..HI)", whole,
                (int)len, s);
        }
        if (!(lo < hi))
            return lp_error_set(LP_ERR_INVALID, "input '%s': empty range %.*s", whole, (int)len, s);
        out->fill = LP_FILL_RANDOM;
        out->has_range = 1;
        out->low = lo;
        out->high = hi;
    }
#undef IS
    return LP_OK;
}

/* Splits `text` at ':' into at most `max` fields. Returns the count, or -1 if there are more. */
static int split_colon(const char *text, const char **f, size_t *flen, int max) {
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *c = strchr(p, ':');
        if (n == max) return -1;
        f[n] = p;
        flen[n] = c ? (size_t)(c - p) : strlen(p);
        n++;
        if (!c) return n;
        p = c + 1;
    }
}

/* `shape` is the SHAPE field of `whole`: the hint must itself be a spec that parses. */
static int check_integer_range(lp_input_spec *out, const char *whole, const char *shape,
                               size_t shape_len) {
    if (lp_dtype_is_integer(out->dtype) && out->fill == LP_FILL_RANDOM &&
        out->dtype != LP_DTYPE_BOOL && !out->has_range)
        return lp_error_set(
            LP_ERR_INVALID, "input '%s': random %s values need a range, e.g. %.*s:%s:0..100", whole,
            lp_dtype_name(out->dtype), (int)shape_len, shape, lp_dtype_name(out->dtype));
    return LP_OK;
}

int lp_input_spec_parse(const char *text, lp_input_spec *out) {
    if (!text || !out) return lp_error_set(LP_ERR_INVALID, "lp_input_spec_parse: NULL argument");
    memset(out, 0, sizeof *out);
    out->dtype = LP_DTYPE_FLOAT32;
    out->fill = LP_FILL_RANDOM;
    const char *f[3];
    size_t fl[3];
    int n = split_colon(text, f, fl, 3);
    if (n < 0)
        return lp_error_set(LP_ERR_INVALID,
                            "input '%s': too many ':' fields (SHAPE[:DTYPE][:FILL])", text);
    int rc = parse_shape(f[0], fl[0], out, text);
    if (rc) return rc;
    int next = 1;
    if (n > 1) {
        if (lp_dtype_from_name(f[1], fl[1], &out->dtype)) {
            next = 2;
        } else if (n == 3) {
            return unknown_dtype(text, f[1], fl[1]);
        } else if (fl[1] >= 4 && closest_dtype(f[1], fl[1])) {
            /* SHAPE:WORD is a dtype or a fill: a word that is neither but close to a dtype
             * ("float33") is a dtype's typo, whatever the fill parser would say of it. Short
             * words are close to too much ("foo" to "bool") to guess. */
            lp_input_spec probe = *out;
            if (parse_fill(f[1], fl[1], &probe, text)) return unknown_dtype(text, f[1], fl[1]);
        }
    }
    if (next < n) {
        rc = parse_fill(f[next], fl[next], out, text);
        if (rc) return rc;
    }
    return check_integer_range(out, text, f[0], fl[0]);
}

int lp_input_owner_arena(lp_options *owner, lp_arena **arena) {
    *arena = owner ? lp_options_arena(owner) : NULL;
    return owner && !*arena ? lp_error_set(LP_ERR_NOMEM, "out of memory keeping an input's text")
                            : LP_OK;
}

int lp_input_spec_parse_file(const char *text, lp_input_spec *out, lp_options *owner) {
    if (!text || !out || !owner)
        return lp_error_set(LP_ERR_INVALID, "lp_input_spec_parse_file: NULL argument");
    lp_arena *arena;
    int rc = lp_input_owner_arena(owner, &arena);
    return rc ? rc : lp_input_spec_parse_file_in(arena, text, out);
}

int lp_input_spec_parse_file_in(lp_arena *arena, const char *text, lp_input_spec *out) {
    if (!text || !out)
        return lp_error_set(LP_ERR_INVALID, "lp_input_spec_parse_file: NULL argument");
    memset(out, 0, sizeof *out);
    out->dtype = LP_DTYPE_FLOAT32;
    /* FILE may contain ':', so take SHAPE[:DTYPE] from the right. */
    const char *last = strrchr(text, ':');
    if (!last || last == text)
        return lp_error_set(LP_ERR_INVALID, "input file '%s': expected FILE:SHAPE[:DTYPE]", text);
    const char *shape = last + 1;
    size_t shape_len = strlen(shape);
    const char *file_end = last;
    lp_dtype dt;
    if (lp_dtype_from_name(shape, shape_len, &dt)) {
        out->dtype = dt;
        const char *prev = last - 1;
        while (prev > text && *prev != ':')
            prev--;
        if (prev == text)
            return lp_error_set(LP_ERR_INVALID, "input file '%s': expected FILE:SHAPE[:DTYPE]",
                                text);
        shape = prev + 1;
        shape_len = (size_t)(last - shape);
        file_end = prev;
    }
    int rc = parse_shape(shape, shape_len, out, text);
    if (rc) return rc;
    size_t flen = (size_t)(file_end - text);
    if (flen == 0)
        return lp_error_set(LP_ERR_INVALID, "input file '%s': the file name is empty", text);
    if (flen >= LP_PATH_MAX)
        return lp_error_set(LP_ERR_INVALID, "input file '%s': path too long", text);
    if (!arena)
        return lp_error_set(LP_ERR_INVALID, "input file '%s': no options to keep the name in",
                            text);
    if (!(out->file = lp_arena_strndup(arena, text, flen)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory reading input file '%s'", text);
    out->fill = LP_FILL_FILE;
    return LP_OK;
}

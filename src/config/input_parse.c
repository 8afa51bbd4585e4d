/* input_parse.c: structured forward arguments (lists, tuples, dicts, scalars, none, saved files)
 * in the --input syntax, as the prefix-ordered entries lp_input_kind describes, and their shape
 * check. The tensor spec itself is input_spec.c's; writing entries back as text is
 * input_format.c's. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "config/input_spec.h"
#include "layerprof.h"

/* Deeper nesting than any model's signature; the limit keeps a hostile string off the stack. */
#define MAX_DEPTH 32

typedef struct parser {
    const char *text; /* the whole argument, for messages */
    const char *p;
    lp_input_spec *out;
    size_t max, n;
    lp_arena *arena; /* where texts are kept; NULL: none may be */
} parser;

static const char *const k_syntax =
    "a shape such as 1x3x224x224, [..], (..), {key: ..}, int:N, float:X, bool:true, str:TEXT, "
    "none or saved:FILE.pt";

static void skip_space(parser *ps) {
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static lp_input_spec *emit(parser *ps, lp_input_kind kind) {
    if (ps->n == ps->max) {
        lp_error_set(LP_ERR_INVALID, "input '%s': more than %zu entries (LP_MAX_INPUTS)", ps->text,
                     ps->max);
        return NULL;
    }
    lp_input_spec *s = &ps->out[ps->n++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

/* An atom (a tensor spec or a scalar) runs to the end of the argument at the top level, and to
 * the next ',' or closing bracket inside a container; surrounding spaces are not part of it. But
 * a top-level str: or saved: takes the rest of the argument as it is, trailing spaces and all,
 * so that every text and file name lp_input_format writes reads back the same. */
static size_t atom_length(const parser *ps, int top) {
    size_t len = top ? strlen(ps->p) : strcspn(ps->p, ",)]}");
    if (top && (strncmp(ps->p, "str:", 4) == 0 || strncmp(ps->p, "saved:", 6) == 0)) return len;
    while (len && isspace((unsigned char)ps->p[len - 1]))
        len--;
    return len;
}

static int starts(const char *s, size_t len, const char *word) {
    size_t w = strlen(word);
    return len >= w && strncmp(s, word, w) == 0;
}

static int parse_int(const char *s, size_t len, int64_t *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno) return 0;
    *out = v;
    return 1;
}

static int bad_atom(parser *ps, const char *s, size_t len, const char *why) {
    return lp_error_set(LP_ERR_INVALID, "input '%s': %s '%.*s'", ps->text, why, (int)len, s);
}

static int copy_text(parser *ps, lp_input_spec *spec, const char *s, size_t len) {
    if (len >= LP_PATH_MAX)
        return lp_error_set(LP_ERR_INVALID, "input '%s': text longer than %d bytes", ps->text,
                            LP_PATH_MAX - 1);
    if (!ps->arena)
        return lp_error_set(LP_ERR_INVALID,
                            "input '%s': a text needs options to keep it (lp_input_parse's owner)",
                            ps->text);
    if (!(spec->file = lp_arena_strndup(ps->arena, s, len)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory reading input '%s'", ps->text);
    return LP_OK;
}

static int tensor_atom(parser *ps, const char *s, size_t len) {
    char buf[256];
    if (len >= sizeof buf) return bad_atom(ps, s, len > 40 ? 40 : len, "tensor spec too long at");
    memcpy(buf, s, len);
    buf[len] = '\0';
    lp_input_spec *spec = emit(ps, LP_INPUT_TENSOR);
    if (!spec) return LP_ERR_INVALID;
    return lp_input_spec_parse(buf, spec);
}

static int atom(parser *ps, int top) {
    const char *s = ps->p;
    size_t len = atom_length(ps, top);
    ps->p += len;
    if (len == 0) return lp_error_set(LP_ERR_INVALID, "input '%s': a value is missing", ps->text);
    if (isdigit((unsigned char)s[0])) return tensor_atom(ps, s, len);
    lp_input_spec *spec;
    if (len == 4 && strncmp(s, "none", 4) == 0)
        return emit(ps, LP_INPUT_NONE) ? LP_OK : LP_ERR_INVALID;
    if (starts(s, len, "int:")) {
        if (!(spec = emit(ps, LP_INPUT_INT))) return LP_ERR_INVALID;
        return parse_int(s + 4, len - 4, &spec->integer) ? LP_OK
                                                         : bad_atom(ps, s, len, "bad integer");
    }
    if (starts(s, len, "float:")) {
        if (!(spec = emit(ps, LP_INPUT_FLOAT))) return LP_ERR_INVALID;
        return lp_parse_finite(s + 6, len - 6, &spec->real) ? LP_OK
                                                            : bad_atom(ps, s, len, "bad number");
    }
    if (starts(s, len, "bool:")) {
        if (!(spec = emit(ps, LP_INPUT_BOOL))) return LP_ERR_INVALID;
        if (len == 9 && strncmp(s + 5, "true", 4) == 0)
            spec->integer = 1;
        else if (len == 10 && strncmp(s + 5, "false", 5) == 0)
            spec->integer = 0;
        else
            return bad_atom(ps, s, len, "bool takes true or false, not");
        return LP_OK;
    }
    if (starts(s, len, "str:")) {
        if (!(spec = emit(ps, LP_INPUT_STR))) return LP_ERR_INVALID;
        return copy_text(ps, spec, s + 4, len - 4);
    }
    if (starts(s, len, "saved:")) {
        if (!top) return bad_atom(ps, s, len, "saved:FILE is a whole argument list, not an item:");
        if (len == 6) return bad_atom(ps, s, len, "the file name is empty in");
        if (!(spec = emit(ps, LP_INPUT_SAVED))) return LP_ERR_INVALID;
        return copy_text(ps, spec, s + 6, len - 6);
    }
    return lp_error_set(LP_ERR_INVALID, "input '%s': unknown value '%.*s' (expected %s)", ps->text,
                        (int)len, s, k_syntax);
}

/* A dict key: int:N (a digit or a sign right after "int:"), or a bare word (a string) up to the
 * ':' that ends it; so "int: x" is the word "int" and its value. */
static int dict_key(parser *ps) {
    const char *s = ps->p;
    lp_input_spec *spec;
    if (strncmp(s, "int:", 4) == 0 &&
        (isdigit((unsigned char)s[4]) || s[4] == '-' || s[4] == '+')) {
        size_t len = 4;
        if (s[len] == '-' || s[len] == '+') len++;
        while (isdigit((unsigned char)s[len]))
            len++;
        if (!(spec = emit(ps, LP_INPUT_INT))) return LP_ERR_INVALID;
        if (!parse_int(s + 4, len - 4, &spec->integer))
            return bad_atom(ps, s, len, "bad integer key");
        ps->p += len;
    } else {
        size_t len = strcspn(s, ":,()[]{} \t\r\n");
        if (len == 0)
            return lp_error_set(LP_ERR_INVALID, "input '%s': expected a key at '%.20s'", ps->text,
                                s);
        if (!(spec = emit(ps, LP_INPUT_STR))) return LP_ERR_INVALID;
        int rc = copy_text(ps, spec, s, len);
        if (rc) return rc;
        ps->p += len;
    }
    skip_space(ps);
    if (*ps->p != ':')
        return lp_error_set(LP_ERR_INVALID, "input '%s': expected ':' after the key '%s'", ps->text,
                            spec->kind == LP_INPUT_STR ? spec->file : "int");
    ps->p++;
    skip_space(ps);
    return LP_OK;
}

static int value(parser *ps, int top, int depth);

static int container(parser *ps, lp_input_kind kind, char close, int depth) {
    size_t head = ps->n;
    if (!emit(ps, kind)) return LP_ERR_INVALID;
    if (depth >= MAX_DEPTH)
        return lp_error_set(LP_ERR_INVALID, "input '%s': nested deeper than %d", ps->text,
                            MAX_DEPTH);
    ps->p++; /* the opening bracket */
    skip_space(ps);
    while (*ps->p != close) {
        int rc = kind == LP_INPUT_DICT ? dict_key(ps) : LP_OK;
        if (!rc) rc = value(ps, 0, depth + 1);
        if (rc) return rc;
        ps->out[head].n_items++;
        skip_space(ps);
        if (*ps->p == ',') {
            ps->p++;
            skip_space(ps);
        } else if (*ps->p != close) {
            if (!*ps->p)
                return lp_error_set(LP_ERR_INVALID, "input '%s': '%c' is missing at the end",
                                    ps->text, close);
            return lp_error_set(LP_ERR_INVALID, "input '%s': expected ',' or '%c' at '%.20s'",
                                ps->text, close, ps->p);
        }
    }
    ps->p++;
    return LP_OK;
}

static int value(parser *ps, int top, int depth) {
    skip_space(ps);
    switch (*ps->p) {
    case '[':
        return container(ps, LP_INPUT_LIST, ']', depth);
    case '(':
        return container(ps, LP_INPUT_TUPLE, ')', depth);
    case '{':
        return container(ps, LP_INPUT_DICT, '}', depth);
    case ']':
    case ')':
    case '}':
        return lp_error_set(LP_ERR_INVALID, "input '%s': unexpected '%c'", ps->text, *ps->p);
    default:
        return atom(ps, top);
    }
}

int lp_input_parse(const char *text, lp_input_spec *out, size_t max, size_t *n, lp_options *owner) {
    if (!text || (!out && max) || !n)
        return lp_error_set(LP_ERR_INVALID, "lp_input_parse: NULL argument");
    lp_arena *arena;
    int rc = lp_input_owner_arena(owner, &arena);
    return rc ? rc : lp_input_parse_in(arena, text, out, max, n);
}

int lp_input_parse_in(lp_arena *arena, const char *text, lp_input_spec *out, size_t max,
                      size_t *n) {
    if (!text || (!out && max) || !n)
        return lp_error_set(LP_ERR_INVALID, "lp_input_parse: NULL argument");
    *n = 0;
    parser ps = {text, text, out, max, 0, arena};
    int rc = value(&ps, 1, 0);
    if (rc) return rc;
    skip_space(&ps);
    if (*ps.p)
        return lp_error_set(LP_ERR_INVALID, "input '%s': unexpected '%.20s' after the value", text,
                            ps.p);
    *n = ps.n;
    return LP_OK;
}

/* ------------------------------------------------------------------------------------------ */

static size_t value_size(const lp_input_spec *e, size_t n, int depth) {
    if (n == 0 || depth > MAX_DEPTH) return 0;
    switch (e->kind) {
    case LP_INPUT_TENSOR:
        return e->ndim >= 0 && e->ndim <= LP_MAX_DIMS && (e->fill != LP_FILL_FILE || e->file) ? 1
                                                                                              : 0;
    case LP_INPUT_INT:
    case LP_INPUT_FLOAT:
    case LP_INPUT_BOOL:
    case LP_INPUT_NONE:
        return 1;
    case LP_INPUT_STR:
        return e->file ? 1 : 0;
    case LP_INPUT_SAVED:
        return depth == 0 && e->file && e->file[0] ? 1 : 0;
    case LP_INPUT_LIST:
    case LP_INPUT_TUPLE:
    case LP_INPUT_DICT: {
        size_t used = 1;
        for (size_t i = 0; i < e->n_items; i++) {
            if (e->kind == LP_INPUT_DICT) {
                if (used >= n || (e[used].kind != LP_INPUT_STR && e[used].kind != LP_INPUT_INT) ||
                    !value_size(e + used, n - used, depth + 1))
                    return 0;
                used++;
            }
            if (used >= n) return 0;
            size_t item = value_size(e + used, n - used, depth + 1);
            if (!item) return 0;
            used += item;
        }
        return used;
    }
    default:
        return 0;
    }
}

size_t lp_input_value_size(const lp_input_spec *entries, size_t n) {
    return entries ? value_size(entries, n, 0) : 0;
}

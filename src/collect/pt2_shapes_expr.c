/* pt2_shapes_expr.c: the integer expressions of a package's map (pt2_shapes.h): parsed into
 * reverse Polish form once, evaluated with Python's rounding at each new input shape. */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "collect/pt2_shapes.h"
#include "layerprof.h"

enum { OP_PUSH, OP_SYMBOL, OP_ADD, OP_SUB, OP_MUL, OP_FLOORDIV, OP_MOD, OP_MAX, OP_MIN, OP_NEG };

struct lp_sym_step {
    int op;
    int64_t value; /* OP_PUSH: the integer; OP_SYMBOL: its index */
};

/* The evaluation's stack: an expression that needs more fails to evaluate. */
#define LP_SYM_STACK 64

/* Recursive descent over the text, appending to the expression's RPN. Every step takes at least
 * one character of the text, so strlen + 1 steps are room enough. */
typedef struct parser {
    const char *p;
    const char *const *symbols;
    size_t n_symbols;
    lp_sym_expr *out;
} parser;

static int parse_expr(parser *ps);

static void emit(parser *ps, int op, int64_t value) {
    ps->out->rpn[ps->out->n_rpn].op = op;
    ps->out->rpn[ps->out->n_rpn].value = value;
    ps->out->n_rpn++;
}

static void skip(parser *ps) {
    while (*ps->p == ' ')
        ps->p++;
}

/* Skips blanks, then takes `tok` when the text goes on with it. */
static int eat(parser *ps, const char *tok) {
    skip(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return 0;
    ps->p += n;
    return 1;
}

static int parse_primary(parser *ps) {
    skip(ps);
    if (eat(ps, "(")) return parse_expr(ps) && eat(ps, ")");
    if (isdigit((unsigned char)*ps->p)) {
        int64_t v = 0;
        for (; isdigit((unsigned char)*ps->p); ps->p++) {
            if (v > (INT64_MAX - 9) / 10) return 0;
            v = v * 10 + (*ps->p - '0');
        }
        emit(ps, OP_PUSH, v);
        return 1;
    }
    const char *start = ps->p;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
        ps->p++;
    size_t len = (size_t)(ps->p - start);
    if (len == 0) return 0;
    int is_max = len == 3 && strncmp(start, "max", 3) == 0;
    int is_min = len == 3 && strncmp(start, "min", 3) == 0;
    if ((is_max || is_min) && eat(ps, "(")) {
        if (!parse_expr(ps) || !eat(ps, ",") || !parse_expr(ps) || !eat(ps, ")")) return 0;
        emit(ps, is_max ? OP_MAX : OP_MIN, 0);
        return 1;
    }
    for (size_t i = 0; i < ps->n_symbols; i++)
        if (strlen(ps->symbols[i]) == len && strncmp(ps->symbols[i], start, len) == 0) {
            emit(ps, OP_SYMBOL, (int64_t)i);
            return 1;
        }
    return 0;
}

static int parse_unary(parser *ps) {
    if (eat(ps, "-")) {
        if (!parse_unary(ps)) return 0;
        emit(ps, OP_NEG, 0);
        return 1;
    }
    return parse_primary(ps);
}

static int parse_term(parser *ps) {
    if (!parse_unary(ps)) return 0;
    for (;;) {
        int op;
        if (eat(ps, "//"))
            op = OP_FLOORDIV;
        else if (eat(ps, "*"))
            op = OP_MUL;
        else if (eat(ps, "%"))
            op = OP_MOD;
        else
            return 1;
        if (!parse_unary(ps)) return 0;
        emit(ps, op, 0);
    }
}

static int parse_expr(parser *ps) {
    if (!parse_term(ps)) return 0;
    for (;;) {
        int op;
        if (eat(ps, "+"))
            op = OP_ADD;
        else if (eat(ps, "-"))
            op = OP_SUB;
        else
            return 1;
        if (!parse_term(ps)) return 0;
        emit(ps, op, 0);
    }
}

int lp_sym_expr_read(lp_sym_expr *e, json_t *value, const char *const *symbols, size_t n_symbols) {
    lp_sym_expr_clear(e);
    if (json_is_integer(value)) {
        char digits[24];
        snprintf(digits, sizeof digits, "%" PRId64, (int64_t)json_integer_value(value));
        e->text = strdup(digits);
        e->rpn = malloc(sizeof *e->rpn);
        if (!e->text || !e->rpn) return lp_error_set(LP_ERR_NOMEM, "out of memory");
        e->rpn[0].op = OP_PUSH;
        e->rpn[0].value = (int64_t)json_integer_value(value);
        e->n_rpn = 1;
        return LP_OK;
    }
    const char *s = json_string_value(value);
    if (!s) return LP_ERR_INVALID;
    size_t len = strlen(s);
    e->text = strndup(s, len);
    e->rpn = malloc((len + 1) * sizeof *e->rpn);
    if (!e->text || !e->rpn) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    parser ps = {s, symbols, n_symbols, e};
    if (!parse_expr(&ps)) return LP_ERR_INVALID;
    skip(&ps);
    return *ps.p == '\0' ? LP_OK : LP_ERR_INVALID;
}

int lp_sym_expr_symbol(const lp_sym_expr *e) {
    return e->n_rpn == 1 && e->rpn[0].op == OP_SYMBOL ? (int)e->rpn[0].value : -1;
}

void lp_sym_expr_clear(lp_sym_expr *e) {
    free(e->rpn);
    free(e->text);
    e->rpn = NULL;
    e->n_rpn = 0;
    e->text = NULL;
}

/* Python's: the quotient rounds down, the remainder has b's sign. 0 when b is 0 or a / b
 * overflows (INT64_MIN // -1). */
static int floor_divmod(int64_t a, int64_t b, int64_t *q, int64_t *r) {
    if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
    *q = a / b;
    *r = a % b;
    if (*r != 0 && ((*r < 0) != (b < 0))) {
        (*q)--;
        *r += b;
    }
    return 1;
}

int lp_sym_expr_eval(const lp_sym_expr *e, const int64_t *values, const unsigned char *bound,
                     size_t n, int64_t *out) {
    int64_t stack[LP_SYM_STACK];
    size_t depth = 0;
    for (size_t k = 0; k < e->n_rpn; k++) {
        const struct lp_sym_step *s = &e->rpn[k];
        if (s->op == OP_PUSH || s->op == OP_SYMBOL) {
            if (depth == LP_SYM_STACK) return 0;
            if (s->op == OP_SYMBOL) {
                size_t i = (size_t)s->value;
                if (i >= n || !bound[i]) return 0;
                stack[depth++] = values[i];
            } else {
                stack[depth++] = s->value;
            }
            continue;
        }
        if (s->op == OP_NEG) {
            if (depth < 1 || stack[depth - 1] == INT64_MIN) return 0;
            stack[depth - 1] = -stack[depth - 1];
            continue;
        }
        if (depth < 2) return 0;
        int64_t b = stack[--depth], *a = &stack[depth - 1], q, r;
        switch (s->op) {
        case OP_ADD:
            if (__builtin_add_overflow(*a, b, a)) return 0;
            break;
        case OP_SUB:
            if (__builtin_sub_overflow(*a, b, a)) return 0;
            break;
        case OP_MUL:
            if (__builtin_mul_overflow(*a, b, a)) return 0;
            break;
        case OP_FLOORDIV:
        case OP_MOD:
            if (!floor_divmod(*a, b, &q, &r)) return 0;
            *a = s->op == OP_FLOORDIV ? q : r;
            break;
        case OP_MAX:
            *a = *a > b ? *a : b;
            break;
        case OP_MIN:
            *a = *a < b ? *a : b;
            break;
        default:
            return 0;
        }
    }
    if (depth != 1) return 0;
    *out = stack[0];
    return 1;
}

/* pt2_shapes.h: what an AOTInductor package's map says of shapes (python/layerprof_shapes.py
 * writes it): the inputs' constraints, fixed dims or symbols with their ranges (dynamic_shapes at
 * export), and the modules' FLOPs per forward and output shapes, figures that may be expressions
 * in those symbols. The input check binds the symbols to a forward's input sizes; the figures are
 * then evaluated once per distinct input shape, and delivered once per forward (shim/aoti.cpp).
 *
 * In collect/ because the delivery goes to the event sink (event_sink.h) that collect/ defines,
 * and the shim includes this header beside that one (docs/architecture.md says why): plain C, no
 * other include of the core, and nothing here allocates once the map is read. */
#ifndef LP_PT2_SHAPES_H
#define LP_PT2_SHAPES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/event_sink.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- expressions -------------------------------------------------------------------------------
 * An integer expression in the package's symbols: integers, names, + - * // % with parentheses,
 * max(a, b), min(a, b), unary minus (python/layerprof_shapes.py's Printer writes nothing else).
 * Floor division and modulo round as Python's do. Zero-initialised: no expression. */
struct lp_sym_step; /* one step of its reverse Polish form (pt2_shapes_expr.c) */
typedef struct lp_sym_expr {
    struct lp_sym_step *rpn; /* owned, n_rpn steps */
    size_t n_rpn;
    char *text; /* owned: the map's text, or the integer written in decimal */
} lp_sym_expr;

/* Reads `e` (zero-initialised, or cleared) from a map value: an integer, or an expression's text
 * whose names are among the `n_symbols` `symbols` (borrowed for the call). LP_OK; LP_ERR_INVALID,
 * with no message set, for anything else, a syntax error or a name not in `symbols` (the caller
 * says which entry of the map it was); LP_ERR_NOMEM with its message. `e` holds what it read so
 * far either way: lp_sym_expr_clear frees it. */
int lp_sym_expr_read(lp_sym_expr *e, json_t *value, const char *const *symbols, size_t n_symbols);

/* Its value with the symbols' `values` (`bound[i]` nonzero: symbol i has one; both `n` long) into
 * *out: 1; 0 when a symbol it uses is unbound, it divides by zero, or a step overflows int64. */
int lp_sym_expr_eval(const lp_sym_expr *e, const int64_t *values, const unsigned char *bound,
                     size_t n, int64_t *out);

/* The index of the plain symbol it is, or -1 (an integer or a compound expression). */
int lp_sym_expr_symbol(const lp_sym_expr *e);

/* Frees what `e` owns and zeroes it. */
void lp_sym_expr_clear(lp_sym_expr *e);

/* --- the package's shapes -------------------------------------------------------------------- */

typedef struct lp_pt2_symbol {
    char *name;       /* owned */
    int64_t min, max; /* max -1: no upper bound */
} lp_pt2_symbol;

typedef struct lp_pt2_input_dims {
    char *dtype;       /* owned: "float32", "int64" (the example's) */
    char *example;     /* owned: the example's shape ("2x16") */
    lp_sym_expr *dims; /* owned, n_dims: fixed (integers) or symbolic */
    size_t n_dims;
    int64_t *last; /* owned, n_dims: its sizes at the inputs last checked (valid when evaluated) */
} lp_pt2_input_dims;

typedef struct lp_pt2_call {
    lp_sym_expr *dims; /* owned, rank: its output's shape; rank 0: not known */
    size_t rank;
    int64_t *now; /* owned, rank: the shape at the inputs last checked, when `known` */
    int known;    /* every dim evaluated there (and rank > 0) */
} lp_pt2_call;

typedef struct lp_pt2_module {
    int has_flops;      /* written by the export (else: unknown) */
    lp_sym_expr flops;  /* its own ops' FLOPs per forward */
    uint64_t flops_now; /* at the inputs last checked (0 when not known) */
    lp_pt2_call *calls; /* owned, n_calls: per call, its output shape */
    size_t n_calls;
} lp_pt2_module;

typedef struct lp_pt2_shapes {
    lp_pt2_symbol *symbols; /* owned, n_symbols */
    size_t n_symbols;
    lp_pt2_input_dims *inputs; /* owned, n_inputs */
    size_t n_inputs;
    char *examples;         /* owned: the inputs' example shapes, ", "-separated ("2x16, 2x32x3") */
    lp_pt2_module *modules; /* owned, n_modules: by module index */
    size_t n_modules;
    char **no_formula; /* owned (each, and the array), n_no_formula: op names the export had no
                        * FLOPs formula for; they live as long as this, the sink may keep them */
    size_t n_no_formula;

    /* The symbols' values at the inputs last checked (n_symbols each, owned), and whether the
     * figures (modules' flops_now and calls' now, inputs' last) are for those inputs. */
    int64_t *values;
    unsigned char *bound;
    int evaluated;
    /* The check's scratch, n_symbols each (owned): allocated with the map, so that a check of new
     * sizes allocates nothing. Where each symbol was bound: input and dimension. */
    int64_t *try_values;
    unsigned char *try_bound;
    size_t *bound_input, *bound_dim;
} lp_pt2_shapes;

/* Reads the map's "symbols", "input_dims" and each module's "flops" and "out_shapes" into a new
 * *out (`modules`: the map's module array, in index order; `root`, `modules` borrowed). The
 * `n_examples` `examples` are the example inputs' specs ("2x16:int64"), their dtypes the ones
 * the package takes (borrowed: copied). LP_OK, or a status and message naming `path` for a
 * malformed entry (LP_ERR_MODEL) or LP_ERR_NOMEM, with *out NULL. Free with lp_pt2_shapes_free. */
int lp_pt2_shapes_read(lp_pt2_shapes **out, json_t *root, json_t *modules,
                       const char *const *examples, size_t n_examples, const char *path);

void lp_pt2_shapes_free(lp_pt2_shapes *s);

/* One input as the check sees it: its sizes and its dtype's name ("float32"), both borrowed; a
 * NULL dtype is not checked (a program's tensor of a dtype lp_dtype does not name). */
typedef struct lp_pt2_input {
    const int64_t *sizes;
    size_t rank;
    const char *dtype;
} lp_pt2_input;

/* Whether the `n` `inputs` fit the package: LP_OK when they do (the symbols are then bound to
 * their sizes and, when they changed, the figures evaluated again), else LP_ERR_INVALID with the
 * message that says which input and dimension does not, and what the package allows (`s` is then
 * unchanged). Runs once per forward: with the sizes last checked it compares and returns; with new
 * ones it evaluates; it never allocates. */
int lp_pt2_shapes_check(lp_pt2_shapes *s, const lp_pt2_input *inputs, size_t n);

/* Delivers the figures at the inputs last checked, once per forward: each module's FLOPs
 * (`flops` nonzero: sink->add_flops, and sink->flops_unknown for the ops without a formula) and
 * its calls' output shapes (`out_shape` nonzero: sink->add_out_shape). A NULL function of the
 * sink is skipped. */
void lp_pt2_shapes_deliver(const lp_pt2_shapes *s, const lp_event_sink *sink, int flops,
                           int out_shape);

#ifdef __cplusplus
}
#endif

#endif

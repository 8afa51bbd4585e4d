/* test_pt2_shapes.c: a package's input constraints and shape expressions (collect/pt2_shapes.c),
 * on synthetic maps: the expression grammar python/layerprof_shapes.py writes, the check's
 * messages, the figures evaluated at the inputs' sizes and their delivery to the event sink. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "collect/pt2_shapes.h"
#include "layerprof.h"

static const char *const k_symbols[] = {"batch", "seq"};

/* An expression's value at batch 5, seq 40; 0 when it does not parse or evaluate. */
static int value_of(const char *text, int64_t *out) {
    static const int64_t values[] = {5, 40};
    static const unsigned char bound[] = {1, 1};
    lp_sym_expr e = {0};
    json_t *j = json_string(text);
    int ok = lp_sym_expr_read(&e, j, k_symbols, 2) == LP_OK;
    json_decref(j);
    ok = ok && lp_sym_expr_eval(&e, values, bound, 2, out);
    lp_sym_expr_clear(&e);
    return ok;
}

/* Whether the text reads as an expression at all (its value aside). */
static int parses(const char *text) {
    lp_sym_expr e = {0};
    json_t *j = json_string(text);
    int rc = lp_sym_expr_read(&e, j, k_symbols, 2);
    json_decref(j);
    lp_sym_expr_clear(&e);
    return rc == LP_OK;
}

static void test_expressions_follow_pythons_arithmetic(void **state) {
    (void)state;
    int64_t v = 0;
    assert_true(value_of("48*batch*seq", &v));
    assert_int_equal(v, 48 * 5 * 40);
    assert_true(value_of("(192*batch*(seq*seq)) + (18432*batch*seq)", &v));
    assert_int_equal(v, 192 * 5 * 40 * 40 + 18432 * 5 * 40);
    assert_true(value_of("(seq - 1)//2 + 1", &v));
    assert_int_equal(v, 20);
    assert_true(value_of("max(batch, seq) - min(3, seq)", &v));
    assert_int_equal(v, 37);
    assert_true(value_of("(0 - 7)//2", &v)); /* floor division rounds down, as Python's */
    assert_int_equal(v, -4);
    assert_true(value_of("(0 - 7)%3", &v)); /* the remainder has the divisor's sign */
    assert_int_equal(v, 2);
    assert_true(value_of("-seq*2", &v));
    assert_int_equal(v, -80);
    assert_false(value_of("seq//(batch - 5)", &v)); /* division by zero */
    assert_false(value_of("tokens", &v));           /* no such symbol */
    assert_false(value_of("2*", &v));
    assert_false(value_of("((seq)", &v));
    assert_false(value_of("seq seq", &v));
}

static void test_floor_division_and_modulo_with_negatives_are_pythons(void **state) {
    (void)state;
    int64_t v = 0;
    assert_true(value_of("7//(0 - 2)", &v)); /* Python: 7 // -2 == -4 */
    assert_int_equal(v, -4);
    assert_true(value_of("7%(0 - 2)", &v)); /* 7 % -2 == -1 */
    assert_int_equal(v, -1);
    assert_true(value_of("(0 - 7)//(0 - 2)", &v)); /* -7 // -2 == 3 */
    assert_int_equal(v, 3);
    assert_true(value_of("(0 - 7)%(0 - 2)", &v)); /* -7 % -2 == -1 */
    assert_int_equal(v, -1);
    assert_true(value_of("-seq//3", &v)); /* unary minus binds first: (-40) // 3 == -14 */
    assert_int_equal(v, -14);
    assert_true(value_of("-seq%3", &v)); /* (-40) % 3 == 2 */
    assert_int_equal(v, 2);
    assert_true(value_of("--seq", &v));
    assert_int_equal(v, 40);
    assert_true(value_of("seq//8", &v)); /* exact: no rounding */
    assert_int_equal(v, 5);
    assert_true(value_of("seq%8", &v));
    assert_int_equal(v, 0);
    assert_false(value_of("seq%(batch - 5)", &v)); /* modulo by zero */
    assert_false(value_of("1//0", &v));
}

static void test_max_min_and_nesting(void **state) {
    (void)state;
    int64_t v = 0;
    assert_true(value_of("max(min(batch, seq), 2*max(1, batch - 10))", &v));
    assert_int_equal(v, 5);
    assert_true(value_of("min(max(batch,seq),100)//(1+1)", &v));
    assert_int_equal(v, 20);
    assert_true(value_of("((((seq))))", &v));
    assert_int_equal(v, 40);
    assert_true(value_of("2*(3+(4*(batch-1)))", &v));
    assert_int_equal(v, 38);
    assert_true(value_of("  seq  -  batch - 1 ", &v)); /* left to right, blanks anywhere */
    assert_int_equal(v, 34);
    assert_true(value_of("1 + 2*3 - 8//3%2", &v)); /* * // % before + -, each left to right */
    assert_int_equal(v, 7);
    assert_true(value_of("max(1, 2) + min(0 - 1, -2)", &v));
    assert_int_equal(v, 0);
    assert_true(value_of("max (batch, 3)", &v)); /* a blank before the parenthesis */
    assert_int_equal(v, 5);
}

static void test_what_does_not_parse_or_evaluate(void **state) {
    (void)state;
    int64_t v = 0;
    assert_false(parses(""));
    assert_false(parses("max(1)"));
    assert_false(parses("max(1, 2"));
    assert_false(parses("min")); /* a name that is no symbol without its arguments */
    assert_false(parses("1 +"));
    assert_false(parses("seq/2")); /* true division is not in the grammar */
    assert_false(parses("batch$"));
    assert_false(parses("99999999999999999999")); /* past int64 */
    assert_true(parses("9223372036854775799"));   /* the largest literal read */
    /* Values that are neither an integer nor text. */
    lp_sym_expr e = {0};
    json_t *j = json_real(1.5);
    assert_int_equal(lp_sym_expr_read(&e, j, k_symbols, 2), LP_ERR_INVALID);
    json_decref(j);
    assert_int_equal(lp_sym_expr_read(&e, json_null(), k_symbols, 2), LP_ERR_INVALID);
    lp_sym_expr_clear(&e);
    /* Overflow has no value (not a wrapped one). */
    assert_true(value_of("9223372036854775799 + 8", &v));
    assert_int_equal(v, INT64_MAX);
    assert_false(value_of("9223372036854775799 + 9", &v));
    assert_false(value_of("0 - 9223372036854775799 - 10", &v));
    assert_false(value_of("4611686018427387904*2", &v));
    assert_false(value_of("-(0 - 9223372036854775799 - 9)", &v)); /* -INT64_MIN */
    assert_false(value_of("(0 - 9223372036854775799 - 9)//(0 - 1)", &v));
}

static void test_an_unbound_symbol_has_no_value(void **state) {
    (void)state;
    lp_sym_expr e = {0};
    json_t *j = json_string("2*seq");
    assert_int_equal(lp_sym_expr_read(&e, j, k_symbols, 2), LP_OK);
    json_decref(j);
    int64_t v = 0;
    const int64_t values[] = {5, 0};
    const unsigned char bound[] = {1, 0};
    assert_false(lp_sym_expr_eval(&e, values, bound, 2, &v));
    /* Fewer values than the symbol's index: unbound too. */
    assert_false(lp_sym_expr_eval(&e, values, bound, 1, &v));
    lp_sym_expr_clear(&e);
}

static void test_an_expression_knows_a_plain_symbol_and_its_text(void **state) {
    (void)state;
    lp_sym_expr e = {0};
    json_t *j = json_string("seq");
    assert_int_equal(lp_sym_expr_read(&e, j, k_symbols, 2), LP_OK);
    json_decref(j);
    assert_int_equal(lp_sym_expr_symbol(&e), 1);
    assert_string_equal(e.text, "seq");
    j = json_integer(-3);
    assert_int_equal(lp_sym_expr_read(&e, j, k_symbols, 2), LP_OK);
    json_decref(j);
    assert_int_equal(lp_sym_expr_symbol(&e), -1);
    assert_string_equal(e.text, "-3");
    int64_t v = 0;
    assert_true(lp_sym_expr_eval(&e, NULL, NULL, 0, &v));
    assert_int_equal(v, -3);
    j = json_string("2*batch");
    assert_int_equal(lp_sym_expr_read(&e, j, k_symbols, 2), LP_OK);
    json_decref(j);
    assert_int_equal(lp_sym_expr_symbol(&e), -1);
    lp_sym_expr_clear(&e);
}

/* Two inputs: ids (batch x seq) and a mask (batch x 2*seq x 3), batch in 1..64, seq 2 and up;
 * one module whose FLOPs and output shape depend on both, one with fixed FLOPs. */
static lp_pt2_shapes *package(void) {
    json_error_t err;
    json_t *root = json_loads("{\"symbols\": {\"batch\": {\"min\": 1, \"max\": 64}, \"seq\": "
                              "{\"min\": 2, \"max\": null}},"
                              " \"input_dims\": [[\"batch\", \"seq\"], [\"batch\", \"2*seq\", 3]],"
                              " \"no_formula\": [\"aten::foo\", 3, \"aten::bar\"]}",
                              0, &err);
    json_t *mods = json_loads(
        "[{\"flops\": \"2*batch*seq\", \"out_shapes\": [[\"batch\", 10], [\"batch\", \"seq\"]]},"
        " {\"flops\": 7, \"out_shapes\": []}]",
        0, &err);
    assert_non_null(root);
    assert_non_null(mods);
    const char *examples[] = {"2x16:int64:0..999", "2x32x3"};
    lp_pt2_shapes *s = NULL;
    int rc = lp_pt2_shapes_read(&s, root, mods, examples, 2, "x.pt2");
    json_decref(root);
    json_decref(mods);
    assert_int_equal(rc, LP_OK);
    assert_non_null(s);
    return s;
}

/* The check of ids and mask with these sizes: "" when they fit, else the message. */
static const char *check(lp_pt2_shapes *s, const int64_t *ids, size_t ids_rank, const int64_t *mask,
                         size_t mask_rank, const char *mask_dtype) {
    lp_pt2_input in[] = {{ids, ids_rank, "int64"}, {mask, mask_rank, mask_dtype}};
    int rc = lp_pt2_shapes_check(s, in, 2);
    if (rc == LP_OK) return "";
    assert_int_equal(rc, LP_ERR_INVALID);
    return lp_error_last();
}

#define CHECK(s, ids, mask)                                                                        \
    check(s, ids, sizeof ids / sizeof *ids, mask, sizeof mask / sizeof *mask, "float32")

/* The k-th call of module m whose shape is known at the inputs last checked, or NULL. */
static const int64_t *known_shape(const lp_pt2_shapes *s, size_t m, size_t k) {
    for (size_t c = 0; c < s->modules[m].n_calls; c++)
        if (s->modules[m].calls[c].known && k-- == 0) return s->modules[m].calls[c].now;
    return NULL;
}

static size_t known_shapes(const lp_pt2_shapes *s, size_t m) {
    size_t n = 0;
    for (size_t c = 0; c < s->modules[m].n_calls; c++)
        n += s->modules[m].calls[c].known != 0;
    return n;
}

static void test_inputs_in_range_bind_the_symbols(void **state) {
    (void)state;
    lp_pt2_shapes *s = package();
    const int64_t ids[] = {2, 16}, mask[] = {2, 32, 3};
    assert_string_equal(CHECK(s, ids, mask), "");
    assert_int_equal(s->modules[0].flops_now, 2 * 2 * 16);
    assert_int_equal(s->modules[1].flops_now, 7);
    assert_int_equal(known_shapes(s, 0), 2);
    assert_int_equal(known_shape(s, 0, 1)[1], 16);
    /* Another shape: the figures follow it. */
    const int64_t ids2[] = {64, 1000}, mask2[] = {64, 2000, 3};
    assert_string_equal(CHECK(s, ids2, mask2), "");
    assert_int_equal(s->modules[0].flops_now, 2 * 64 * 1000);
    assert_int_equal(known_shape(s, 0, 0)[0], 64);
    assert_int_equal(known_shape(s, 0, 0)[1], 10);
    lp_pt2_shapes_free(s);
}

static void test_the_figures_are_evaluated_only_when_the_sizes_change(void **state) {
    (void)state;
    lp_pt2_shapes *s = package();
    const int64_t ids[] = {2, 16}, mask[] = {2, 32, 3};
    assert_string_equal(CHECK(s, ids, mask), "");
    s->modules[0].flops_now = 12345; /* a mark: the same sizes leave it */
    assert_string_equal(CHECK(s, ids, mask), "");
    assert_int_equal(s->modules[0].flops_now, 12345);
    const int64_t ids2[] = {3, 16}, mask2[] = {3, 32, 3};
    assert_string_equal(CHECK(s, ids2, mask2), "");
    assert_int_equal(s->modules[0].flops_now, 2 * 3 * 16);
    lp_pt2_shapes_free(s);
}

static void test_what_the_constraints_refuse_is_named(void **state) {
    (void)state;
    lp_pt2_shapes *s = package();
    const int64_t i65[] = {65, 16}, m65[] = {65, 32, 3};
    assert_string_equal(CHECK(s, i65, m65),
                        "input 0 dimension 0 is 65, outside the package's range 1..64 (batch, "
                        "dynamic at export)");
    const int64_t i1[] = {2, 1}, m1[] = {2, 2, 3};
    assert_string_equal(CHECK(s, i1, m1),
                        "input 0 dimension 1 is 1, outside the package's range 2.. (seq, dynamic "
                        "at export)");
    const int64_t i0[] = {0, 16}, m0[] = {0, 32, 3};
    assert_string_equal(CHECK(s, i0, m0),
                        "input 0 dimension 0 is 0, outside the package's range 1..64 (batch, "
                        "dynamic at export)");
    const int64_t ids[] = {2, 16};
    const int64_t m3[] = {3, 32, 3};
    assert_string_equal(CHECK(s, ids, m3),
                        "input 1 dimension 0 is 3, but input 0 dimension 0 is 2: the package has "
                        "one size for both (batch, dynamic at export)");
    const int64_t m31[] = {2, 31, 3};
    assert_string_equal(CHECK(s, ids, m31),
                        "input 1 dimension 1 is 31, the package needs 2*seq = 32 (dynamic at "
                        "export)");
    const int64_t m4[] = {2, 32, 4};
    assert_string_equal(CHECK(s, ids, m4),
                        "input 1 dimension 2 is 4, the package was compiled for 3 (fixed at "
                        "export)");
    const int64_t m2[] = {2, 32};
    assert_string_equal(CHECK(s, ids, m2),
                        "input 1 has 2 dimensions, the package was compiled for 3 (2x32x3 at "
                        "export)");
    const int64_t mask[] = {2, 32, 3};
    assert_string_equal(check(s, ids, 2, mask, 3, "int64"),
                        "input 1 is int64, the package was compiled for float32 (AOTInductor "
                        "fixes dtypes at export)");
    lp_pt2_input one[] = {{ids, 2, "int64"}};
    assert_int_equal(lp_pt2_shapes_check(s, one, 1), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(),
                        "the package takes 2 inputs (2x16, 2x32x3 at export), not 1");
    /* Nothing was bound by the refused inputs: no figures yet. */
    assert_int_equal(s->evaluated, 0);
    assert_int_equal(s->modules[0].flops_now, 0);
    lp_pt2_shapes_free(s);
}

static void test_a_refused_check_keeps_the_last_figures(void **state) {
    (void)state;
    lp_pt2_shapes *s = package();
    const int64_t ids[] = {2, 16}, mask[] = {2, 32, 3};
    assert_string_equal(CHECK(s, ids, mask), "");
    const int64_t ids2[] = {4, 16}, bad[] = {4, 33, 3};
    assert_string_equal(CHECK(s, ids2, bad),
                        "input 1 dimension 1 is 33, the package needs 2*seq = 32 (dynamic at "
                        "export)");
    assert_int_equal(s->modules[0].flops_now, 2 * 2 * 16);
    assert_int_equal(s->values[0], 2);
    assert_int_equal(s->inputs[0].last[0], 2);
    lp_pt2_shapes_free(s);
}

/* A symbol that only a compound dim uses cannot be bound; one input, whose count is singular. */
static void test_a_dim_no_plain_symbol_binds_is_named(void **state) {
    (void)state;
    json_error_t err;
    json_t *root = json_loads("{\"symbols\": {\"batch\": {\"min\": 1}, \"seq\": {\"min\": 1}},"
                              " \"input_dims\": [[\"batch\", \"2*seq\"]]}",
                              0, &err);
    json_t *mods = json_loads("[]", 0, &err);
    const char *examples[] = {"2x8"};
    lp_pt2_shapes *s = NULL;
    assert_int_equal(lp_pt2_shapes_read(&s, root, mods, examples, 1, "x.pt2"), LP_OK);
    json_decref(root);
    json_decref(mods);
    assert_int_equal(s->symbols[0].max, -1);
    assert_string_equal(s->inputs[0].dtype, "float32");
    const int64_t x[] = {2, 8};
    lp_pt2_input in[] = {{x, 2, "float32"}};
    assert_int_equal(lp_pt2_shapes_check(s, in, 1), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "input 0 dimension 1 is 8: the package's 2*seq cannot be "
                                         "worked out from the other inputs");
    assert_int_equal(lp_pt2_shapes_check(s, in, 0), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "the package takes 1 input (2x8 at export), not 0");
    lp_pt2_shapes_free(s);
}

/* What the fake sink was given. */
typedef struct delivered {
    uint64_t flops[4];
    int flops_calls;
    const char *unknown[4];
    int n_unknown;
    int32_t shape_module[4];
    int64_t shape[4][4];
    int shape_rank[4];
    int n_shapes;
} delivered;

static void on_add_flops(void *ctx, int32_t module, uint64_t flops) {
    delivered *d = ctx;
    d->flops[module] += flops;
    d->flops_calls++;
}

static void on_flops_unknown(void *ctx, const char *name) {
    delivered *d = ctx;
    d->unknown[d->n_unknown++] = name;
}

static void on_add_out_shape(void *ctx, int32_t module, const int64_t *dims, int rank) {
    delivered *d = ctx;
    d->shape_module[d->n_shapes] = module;
    memcpy(d->shape[d->n_shapes], dims, (size_t)rank * sizeof *dims);
    d->shape_rank[d->n_shapes++] = rank;
}

static void test_the_figures_are_delivered_to_the_sink(void **state) {
    (void)state;
    lp_pt2_shapes *s = package();
    delivered d = {0};
    lp_event_sink sink = {0};
    sink.ctx = &d;
    sink.add_flops = on_add_flops;
    sink.flops_unknown = on_flops_unknown;
    sink.add_out_shape = on_add_out_shape;
    /* Before any check: no figures, but the ops without a formula. */
    lp_pt2_shapes_deliver(s, &sink, 1, 1);
    assert_int_equal(d.flops_calls, 0);
    assert_int_equal(d.n_shapes, 0);
    assert_int_equal(d.n_unknown, 2);
    assert_string_equal(d.unknown[0], "aten::foo");
    assert_string_equal(d.unknown[1], "aten::bar");

    const int64_t ids[] = {3, 8}, mask[] = {3, 16, 3};
    assert_string_equal(CHECK(s, ids, mask), "");
    memset(&d, 0, sizeof d);
    lp_pt2_shapes_deliver(s, &sink, 1, 1);
    assert_int_equal(d.flops_calls, 2);
    assert_int_equal(d.flops[0], 2 * 3 * 8);
    assert_int_equal(d.flops[1], 7);
    assert_int_equal(d.n_unknown, 2);
    assert_int_equal(d.n_shapes, 2);
    assert_int_equal(d.shape_module[0], 0);
    assert_int_equal(d.shape_rank[0], 2);
    assert_int_equal(d.shape[0][0], 3);
    assert_int_equal(d.shape[0][1], 10);
    assert_int_equal(d.shape_module[1], 0);
    assert_int_equal(d.shape[1][0], 3);
    assert_int_equal(d.shape[1][1], 8);

    /* What is not asked for is not delivered; a NULL function is skipped. */
    memset(&d, 0, sizeof d);
    lp_pt2_shapes_deliver(s, &sink, 0, 1);
    assert_int_equal(d.flops_calls + d.n_unknown, 0);
    assert_int_equal(d.n_shapes, 2);
    memset(&d, 0, sizeof d);
    lp_pt2_shapes_deliver(s, &sink, 1, 0);
    assert_int_equal(d.n_shapes, 0);
    assert_int_equal(d.flops_calls, 2);
    memset(&d, 0, sizeof d);
    sink.add_flops = NULL;
    sink.add_out_shape = NULL;
    lp_pt2_shapes_deliver(s, &sink, 1, 1);
    assert_int_equal(d.n_unknown, 2);
    lp_pt2_shapes_free(s);
}

/* A call whose shape cannot be evaluated, a negative FLOPs figure, and a module without FLOPs:
 * none is delivered. */
static void test_figures_without_a_value_are_left_out(void **state) {
    (void)state;
    json_error_t err;
    json_t *root =
        json_loads("{\"symbols\": {\"n\": {\"min\": 0}}, \"input_dims\": [[\"n\"]]}", 0, &err);
    json_t *mods = json_loads("[{\"flops\": \"n - 100\", \"out_shapes\": [[\"n//(n - 4)\"], [], "
                              "[\"n\", 2]]}, {\"flops\": null}, {}]",
                              0, &err);
    const char *examples[] = {"4"};
    lp_pt2_shapes *s = NULL;
    assert_int_equal(lp_pt2_shapes_read(&s, root, mods, examples, 1, "x.pt2"), LP_OK);
    json_decref(root);
    json_decref(mods);
    assert_int_equal(s->n_modules, 3);
    assert_int_equal(s->modules[1].has_flops, 0);
    const int64_t x[] = {4};
    lp_pt2_input in[] = {{x, 1, "float32"}};
    assert_int_equal(lp_pt2_shapes_check(s, in, 1), LP_OK);
    assert_int_equal(s->modules[0].flops_now, 0);
    assert_int_equal(known_shapes(s, 0), 1);
    assert_int_equal(known_shape(s, 0, 0)[0], 4);
    assert_int_equal(known_shape(s, 0, 0)[1], 2);
    lp_pt2_shapes_free(s);
}

/* The read's message for a map that does not fit, with its entry named. */
static void assert_refused(const char *root_text, const char *mods_text, size_t n_examples,
                           const char *what) {
    json_error_t err;
    json_t *root = json_loads(root_text, 0, &err);
    json_t *mods = json_loads(mods_text, 0, &err);
    assert_non_null(root);
    assert_non_null(mods);
    const char *examples[] = {"2", "3"};
    static lp_pt2_shapes sentinel;
    lp_pt2_shapes *s = &sentinel; /* set to NULL on failure */
    assert_int_equal(lp_pt2_shapes_read(&s, root, mods, examples, n_examples, "x.pt2"),
                     LP_ERR_MODEL);
    assert_null(s);
    char want[256];
    snprintf(want, sizeof want,
             "'x.pt2': layerprof's module map has a malformed %s; export the package again with "
             "python/layerprof_export.py",
             what);
    assert_string_equal(lp_error_last(), want);
    json_decref(root);
    json_decref(mods);
}

static void test_a_malformed_map_is_refused(void **state) {
    (void)state;
    lp_pt2_shapes *s = NULL;
    json_error_t err;
    json_t *root = json_loads("{\"symbols\": {}, \"input_dims\": [[\"batch\"]]}", 0, &err);
    json_t *mods = json_loads("[]", 0, &err);
    const char *examples[] = {"2"};
    assert_int_not_equal(lp_pt2_shapes_read(&s, root, mods, examples, 1, "x.pt2"), 0);
    json_decref(root);
    json_decref(mods);

    assert_refused("{\"symbols\": {}, \"input_dims\": [[\"batch\"]]}", "[]", 1, "input dimension");
    assert_refused("{\"input_dims\": [[2]]}", "[]", 2, "input_dims"); /* one too few */
    assert_refused("{\"symbols\": {}}", "[]", 1, "input_dims");
    assert_refused("{\"input_dims\": [[2]]}", "[{\"flops\": \"2*\"}]", 1, "module's flops");
    assert_refused("{\"input_dims\": [[2]]}", "[{\"flops\": [1]}]", 1, "module's flops");
    assert_refused("{\"input_dims\": [[2]]}", "[{\"out_shapes\": [[1, \"n\"]]}]", 1,
                   "module's out_shapes");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expressions_follow_pythons_arithmetic),
        cmocka_unit_test(test_floor_division_and_modulo_with_negatives_are_pythons),
        cmocka_unit_test(test_max_min_and_nesting),
        cmocka_unit_test(test_what_does_not_parse_or_evaluate),
        cmocka_unit_test(test_an_unbound_symbol_has_no_value),
        cmocka_unit_test(test_an_expression_knows_a_plain_symbol_and_its_text),
        cmocka_unit_test(test_inputs_in_range_bind_the_symbols),
        cmocka_unit_test(test_the_figures_are_evaluated_only_when_the_sizes_change),
        cmocka_unit_test(test_what_the_constraints_refuse_is_named),
        cmocka_unit_test(test_a_refused_check_keeps_the_last_figures),
        cmocka_unit_test(test_a_dim_no_plain_symbol_binds_is_named),
        cmocka_unit_test(test_the_figures_are_delivered_to_the_sink),
        cmocka_unit_test(test_figures_without_a_value_are_left_out),
        cmocka_unit_test(test_a_malformed_map_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

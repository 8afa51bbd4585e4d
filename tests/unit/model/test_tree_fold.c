/* test_tree_fold.c: the one folding rule (lp_tree_fold) on a hand-built tree, with every
 * expected number worked out beside it: a folded row's self figures are what the unit it stands
 * for did, its op rows take in the hidden modules' (merged by name and shapes), and a row that
 * was not measured itself stands for the time measured below it.
 *
 *   Net (root, 1000 ns)
 *   |-- a (400 ns, self 100)          depth 1: folds at --depth 1
 *   |   |-- x (200 ns, self 150)      ops: add 30, conv 100
 *   |   |   `-- deep (50 ns)          ops: relu 20 > clamp 5
 *   |   `-- off (not selected)
 *   |       `-- z (100 ns)            selected below an unselected parent (a path)
 *   `-- b (not selected)
 *       `-- c (300 ns)                only c was selected: b stands for it */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "model/tree.h"
#include "tree_fixtures.h"

static void calls(lp_tree *t, int32_t m, uint64_t total, uint64_t self) {
    tf_calls(t, m, &total, 1);
    t->nodes[m].fig.self_ns = self;
}

static int32_t op(lp_tree *t, int32_t module, int32_t parent, int32_t name, uint64_t ns) {
    int32_t r = lp_tree_add_op(t, module, parent, name, -1);
    assert_true(r >= 0);
    t->ops[r].fig.calls = 1;
    t->ops[r].fig.total_ns = t->ops[r].fig.self_ns = ns;
    return r;
}

typedef struct built {
    lp_tree t;
    int32_t add, conv, relu, clamp;
} built;

static void build(built *b) {
    lp_tree *t = &b->t;
    lp_tree_init(t);
    int32_t net = tf_node(t, "", "Net", -1, LP_NODE_MODULE);
    int32_t a = tf_node(t, "a", "Block", net, LP_NODE_MODULE);
    int32_t x = tf_node(t, "a.x", "Conv", a, LP_NODE_MODULE);
    int32_t deep = tf_node(t, "a.x.deep", "ReLU", x, LP_NODE_MODULE);
    int32_t off = tf_node(t, "a.off", "Gate", a, LP_NODE_MODULE);
    int32_t z = tf_node(t, "a.off.z", "Linear", off, LP_NODE_MODULE);
    int32_t bb = tf_node(t, "b", "Block", net, LP_NODE_MODULE);
    int32_t c = tf_node(t, "b.c", "Linear", bb, LP_NODE_MODULE);
    t->iterations = 1;
    t->has_flops = 1;
    t->has_memory[LP_DEV_CPU] = 1;
    calls(t, net, 1000, 300);
    calls(t, a, 400, 100);
    calls(t, x, 200, 150);
    calls(t, deep, 50, 50);
    t->nodes[off].selected = 0;
    calls(t, z, 100, 100);
    t->nodes[bb].selected = 0;
    calls(t, c, 300, 300);
    /* FLOPs: a 10 of its own, x 1000, deep 1 (totals: x 1001, a 1011). */
    t->nodes[a].fig.flops_self = 10;
    t->nodes[x].fig.flops_self = 1000;
    t->nodes[deep].fig.flops_self = 1;
    lp_tree_flops_totals(t);
    /* Memory: x kept 64 bytes, deep 32 of which x freed before it returned; a kept 80 in all. */
    t->nodes[a].fig.mem[LP_DEV_CPU].retained = (lp_stat){80, 80, 80, 1};
    t->nodes[a].fig.mem[LP_DEV_CPU].self_retained = (lp_stat){0, 0, 0, 1};
    t->nodes[x].fig.mem[LP_DEV_CPU].self_retained = (lp_stat){64, 64, 64, 1};
    t->nodes[deep].fig.mem[LP_DEV_CPU].self_retained = (lp_stat){32, 32, 32, 1};
    /* Parameters: a holds 5 itself and 12 with x's 7 (a tied weight counts once). */
    t->nodes[a].fig.size = (lp_module_size){1, 5, 12, 20, 48};
    t->nodes[x].fig.size = (lp_module_size){1, 7, 7, 28, 28};
    /* Op rows: a's own add (10 ns), x's add (30) and conv (100), deep's relu (20) > clamp (5). */
    b->add = lp_tree_intern_op_name(t, "aten::add");
    b->conv = lp_tree_intern_op_name(t, "aten::conv2d");
    b->relu = lp_tree_intern_op_name(t, "aten::relu");
    b->clamp = lp_tree_intern_op_name(t, "aten::clamp");
    op(t, a, -1, b->add, 10);
    op(t, x, -1, b->add, 30);
    op(t, x, -1, b->conv, 100);
    int32_t relu = op(t, deep, -1, b->relu, 20);
    op(t, deep, relu, b->clamp, 5);
}

static void a_folded_row_holds_what_it_stands_for(void **state) {
    (void)state;
    built b;
    build(&b);
    lp_tree f;
    assert_int_equal(lp_tree_fold(&b.t, 1, 0, &f), LP_OK);
    assert_int_equal(f.n_nodes, 3); /* Net, a, b */
    const lp_tree_node *a = &f.nodes[lp_tree_find(&f, "a")];
    assert_int_equal(a->folded, 4); /* x, deep, off, z */
    /* Time: a's 100 + x's 150 + deep's 50 + z's 100 (off was not measured): its total. */
    assert_int_equal(a->fig.self_ns, 400);
    assert_int_equal(a->fig.total_ns, 400);
    assert_int_equal(a->fig.calls, 1);
    /* FLOPs: 10 + 1000 + 1, its total. */
    assert_int_equal(a->fig.flops_self, 1011);
    assert_int_equal(a->fig.flops_total, 1011);
    /* Memory and parameters do not add (64 + 32 > the 80 a kept): the whole figures. */
    assert_int_equal(a->fig.mem[LP_DEV_CPU].self_retained.sum, 80);
    assert_int_equal(a->fig.mem[LP_DEV_CPU].retained.sum, 80);
    assert_int_equal(a->fig.size.self_params, 12);
    assert_int_equal(a->fig.size.self_bytes, 48);
    /* Ops: add 10 + 30 merged, conv 100, relu 20 with clamp 5 under it; all under a. */
    int32_t r = a->first_op;
    assert_true(r >= 0);
    assert_int_equal(f.ops[r].op, b.add);
    assert_int_equal(f.ops[r].fig.calls, 2);
    assert_int_equal(f.ops[r].fig.total_ns, 40);
    r = f.ops[r].next_sibling;
    assert_int_equal(f.ops[r].op, b.conv);
    assert_int_equal(f.ops[r].fig.total_ns, 100);
    r = f.ops[r].next_sibling;
    assert_int_equal(f.ops[r].op, b.relu);
    assert_int_equal(f.ops[f.ops[r].first_child].op, b.clamp);
    assert_int_equal(f.ops[f.ops[r].first_child].fig.total_ns, 5);
    assert_int_equal(f.ops[r].next_sibling, -1);
    for (size_t i = 0; i < f.n_ops; i++)
        assert_int_equal(f.ops[i].module, a - f.nodes);
    /* Its top-level op rows (40 + 100 + 20) and its "(self)" remainder, 240, make its self. */
    lp_tree_free(&f);
    lp_tree_free(&b.t);
}

static void an_unmeasured_row_stands_for_the_time_below_it(void **state) {
    (void)state;
    built b;
    build(&b);
    lp_tree f;
    assert_int_equal(lp_tree_fold(&b.t, 1, 0, &f), LP_OK);
    const lp_tree_node *bb = &f.nodes[lp_tree_find(&f, "b")];
    assert_false(bb->selected);
    assert_int_equal(bb->folded, 1);
    assert_int_equal(bb->fig.self_ns, 300); /* c's */
    assert_int_equal(bb->fig.total_ns, 300);
    assert_int_equal(bb->fig.calls, 0); /* time only: b's calls were never watched */
    /* The root keeps its figures: the parts still add up, 300 + 400 + 300 = 1000. */
    const lp_tree_node *net = &f.nodes[0];
    assert_int_equal(net->folded, 0);
    assert_int_equal(net->fig.self_ns + f.nodes[1].fig.total_ns + bb->fig.total_ns, 1000);
    lp_tree_free(&f);
    lp_tree_free(&b.t);
}

/* Depth 0: everything into the root, whose self becomes its total. */
static void depth_zero_folds_the_whole_model_into_the_root(void **state) {
    (void)state;
    built b;
    build(&b);
    lp_tree f;
    assert_int_equal(lp_tree_fold(&b.t, 0, 0, &f), LP_OK);
    assert_int_equal(f.n_nodes, 1);
    assert_int_equal(f.nodes[0].folded, 7);
    assert_int_equal(f.nodes[0].fig.self_ns, 1000); /* 300 + 400 + 300 */
    assert_int_equal(f.nodes[0].fig.flops_self, 1011);
    assert_int_equal(f.n_ops, 5 - 1); /* the two adds are one row */
    lp_tree_free(&f);
    lp_tree_free(&b.t);
}

/* No limit: a copy, figure for figure. */
static void no_limit_copies_the_tree(void **state) {
    (void)state;
    built b;
    build(&b);
    lp_tree f;
    assert_int_equal(lp_tree_fold(&b.t, -1, 0, &f), LP_OK);
    assert_int_equal(f.n_nodes, b.t.n_nodes);
    assert_int_equal(f.n_ops, b.t.n_ops);
    for (size_t i = 0; i < f.n_nodes; i++) {
        assert_string_equal(f.nodes[i].path, b.t.nodes[i].path);
        assert_int_equal(f.nodes[i].folded, 0);
        assert_memory_equal(&f.nodes[i].fig, &b.t.nodes[i].fig, sizeof f.nodes[i].fig);
    }
    lp_tree_free(&f);
    lp_tree_free(&b.t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_folded_row_holds_what_it_stands_for),
        cmocka_unit_test(an_unmeasured_row_stands_for_the_time_below_it),
        cmocka_unit_test(depth_zero_folds_the_whole_model_into_the_root),
        cmocka_unit_test(no_limit_copies_the_tree),
    };
    return cmocka_run_group_tests_name("unit.test_tree_fold", tests, NULL, NULL);
}

/* test_pt2_shapes.cpp: a package's input constraints and shape expressions (shim/pt2_shapes.cpp),
 * on synthetic maps: the expression grammar python/layerprof_shapes.py writes, the check's
 * messages, and the figures evaluated at the inputs' sizes. No libtorch. */
#include <jansson.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "pt2_shapes.hpp"

using lps::InputDesc;
using lps::Pt2Shapes;
using lps::SymExpr;

namespace {

const std::vector<std::string> k_symbols = {"batch", "seq"};

// An expression's value at batch 5, seq 40; false when it does not parse or evaluate.
bool value_of(const char *text, int64_t *out) {
    SymExpr e;
    json_t *j = json_string(text);
    bool ok = e.read(j, k_symbols);
    json_decref(j);
    return ok && e.eval({5, 40}, {1, 1}, out);
}

void test_expressions_follow_pythons_arithmetic(void **) {
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

void test_an_unbound_symbol_has_no_value(void **) {
    SymExpr e;
    json_t *j = json_string("2*seq");
    assert_true(e.read(j, k_symbols));
    json_decref(j);
    int64_t v = 0;
    assert_false(e.eval({5, 0}, {1, 0}, &v));
}

// Two inputs: ids (batch x seq) and a mask (batch x 2*seq x 3), batch in 1..64, seq 2 and up;
// one module whose FLOPs and output shape depend on both.
struct Package {
    Pt2Shapes s;
    Package() {
        json_error_t err;
        json_t *root = json_loads(
            R"({"symbols": {"batch": {"min": 1, "max": 64}, "seq": {"min": 2, "max": null}},
                "input_dims": [["batch", "seq"], ["batch", "2*seq", 3]]})",
            0, &err);
        json_t *mods = json_loads(
            R"([{"flops": "2*batch*seq", "out_shapes": [["batch", 10], ["batch", "seq"]]},
                {"flops": 7, "out_shapes": []}])",
            0, &err);
        int rc = lps::pt2_shapes_read(s, root, mods, {"2x16:int64:0..999", "2x32x3"}, "x.pt2");
        json_decref(root);
        json_decref(mods);
        assert_int_equal(rc, 0);
    }
    std::string check(std::vector<int64_t> ids, std::vector<int64_t> mask,
                      const char *mask_dtype = "float32") {
        std::vector<InputDesc> in = {{ids.data(), ids.size(), "int64"},
                                     {mask.data(), mask.size(), mask_dtype}};
        return lps::pt2_shapes_check(s, in);
    }
};

void test_inputs_in_range_bind_the_symbols(void **) {
    Package p;
    assert_string_equal(p.check({2, 16}, {2, 32, 3}).c_str(), "");
    assert_int_equal(p.s.flops_now[0], 2 * 2 * 16);
    assert_int_equal(p.s.flops_now[1], 7);
    assert_int_equal(p.s.shapes_now[0].size(), 2);
    assert_int_equal(p.s.shapes_now[0][1][1], 16);
    /* Another shape: the figures follow it. */
    assert_string_equal(p.check({64, 1000}, {64, 2000, 3}).c_str(), "");
    assert_int_equal(p.s.flops_now[0], 2 * 64 * 1000);
    assert_int_equal(p.s.shapes_now[0][0][0], 64);
}

void test_what_the_constraints_refuse_is_named(void **) {
    Package p;
    assert_string_equal(p.check({65, 16}, {65, 32, 3}).c_str(),
                        "input 0 dimension 0 is 65, outside the package's range 1..64 (batch, "
                        "dynamic at export)");
    assert_string_equal(p.check({2, 1}, {2, 2, 3}).c_str(),
                        "input 0 dimension 1 is 1, outside the package's range 2.. (seq, dynamic "
                        "at export)");
    assert_string_equal(p.check({2, 16}, {3, 32, 3}).c_str(),
                        "input 1 dimension 0 is 3, but input 0 dimension 0 is 2: the package has "
                        "one size for both (batch, dynamic at export)");
    assert_string_equal(p.check({2, 16}, {2, 31, 3}).c_str(),
                        "input 1 dimension 1 is 31, the package needs 2*seq = 32 (dynamic at "
                        "export)");
    assert_string_equal(p.check({2, 16}, {2, 32, 4}).c_str(),
                        "input 1 dimension 2 is 4, the package was compiled for 3 (fixed at "
                        "export)");
    assert_string_equal(p.check({2, 16}, {2, 32}).c_str(),
                        "input 1 has 2 dimensions, the package was compiled for 3 (2x32x3 at "
                        "export)");
    assert_string_equal(p.check({2, 16}, {2, 32, 3}, "int64").c_str(),
                        "input 1 is int64, the package was compiled for float32 (AOTInductor "
                        "fixes dtypes at export)");
    std::vector<int64_t> ids = {2, 16};
    std::vector<InputDesc> one = {{ids.data(), ids.size(), "int64"}};
    assert_string_equal(lps::pt2_shapes_check(p.s, one).c_str(),
                        "the package takes 2 inputs (2x16, 2x32x3 at export), not 1");
}

void test_a_malformed_map_is_refused(void **) {
    Pt2Shapes s;
    json_error_t err;
    json_t *root = json_loads(R"({"symbols": {}, "input_dims": [["batch"]]})", 0, &err);
    json_t *mods = json_loads("[]", 0, &err);
    assert_int_not_equal(lps::pt2_shapes_read(s, root, mods, {"2"}, "x.pt2"), 0);
    json_decref(root);
    json_decref(mods);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expressions_follow_pythons_arithmetic),
        cmocka_unit_test(test_an_unbound_symbol_has_no_value),
        cmocka_unit_test(test_inputs_in_range_bind_the_symbols),
        cmocka_unit_test(test_what_the_constraints_refuse_is_named),
        cmocka_unit_test(test_a_malformed_map_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}

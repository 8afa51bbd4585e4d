/* test_tensor_shapes.c: the argument checks of lp_session_input_shapes_set (tensor_shapes.c):
 * what is well formed passes, and each malformed argument is refused with a message naming the
 * function and the input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/tensor_shapes.h"
#include "layerprof.h"

static const char *k_who = "lp_session_input_shapes_set";

static void refused(const lp_tensor_shape *in, size_t n, const char *words) {
    assert_int_equal(lp_tensor_shapes_check(in, n, k_who), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), k_who));
    if (!strstr(lp_error_last(), words)) fail_msg("'%s' lacks '%s'", lp_error_last(), words);
}

static void well_formed_shapes_pass(void **state) {
    (void)state;
    int64_t image[] = {1, 3, 224, 224}, ids[] = {2, 16},
            eight[LP_MAX_DIMS] = {1, 1, 1, 1, 1, 1, 1, 1};
    lp_tensor_shape in[] = {{image, 4, LP_DTYPE_FLOAT32},
                            {ids, 2, LP_DTYPE_INT64},
                            {NULL, 0, LP_DTYPE_BOOL}, /* a scalar tensor */
                            {eight, LP_MAX_DIMS, -1}, /* a dtype lp_dtype does not name */
                            {ids, 1, LP_DTYPE_INT32}};
    assert_int_equal(lp_tensor_shapes_check(in, 5, k_who), LP_OK);
    assert_int_equal(lp_tensor_shapes_check(NULL, 0, k_who), LP_OK); /* a package of no input */
    int64_t zero[] = {0, 16}; /* an empty batch is a shape; the package says if it takes it */
    lp_tensor_shape empty = {zero, 2, LP_DTYPE_FLOAT32};
    assert_int_equal(lp_tensor_shapes_check(&empty, 1, k_who), LP_OK);
}

static void malformed_arguments_are_refused(void **state) {
    (void)state;
    refused(NULL, 1, "inputs is NULL");
    int64_t nine[LP_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    lp_tensor_shape too_deep[] = {{nine, 2, LP_DTYPE_FLOAT32}, {nine, LP_MAX_DIMS + 1, 0}};
    refused(too_deep, 2, "input 1 has rank 9, not 0..8");
    lp_tensor_shape negative_rank = {nine, -1, LP_DTYPE_FLOAT32};
    refused(&negative_rank, 1, "input 0 has rank -1");
    lp_tensor_shape no_sizes = {NULL, 2, LP_DTYPE_FLOAT32};
    refused(&no_sizes, 1, "input 0 has rank 2 and NULL sizes");
    int64_t minus[] = {2, -3};
    lp_tensor_shape negative = {minus, 2, LP_DTYPE_FLOAT32};
    refused(&negative, 1, "input 0 dimension 1 is -3");
    lp_tensor_shape dtypes[] = {{minus, 1, LP_DTYPE_BOOL + 1}, {minus, 1, -2}};
    refused(dtypes, 1, "input 0 has dtype 10, not an lp_dtype");
    refused(dtypes + 1, 1, "input 0 has dtype -2");
    lp_tensor_shape many[LP_MAX_INPUTS + 1];
    for (size_t i = 0; i < LP_MAX_INPUTS + 1; i++)
        many[i] = (lp_tensor_shape){minus, 1, LP_DTYPE_FLOAT32};
    assert_int_equal(lp_tensor_shapes_check(many, LP_MAX_INPUTS, k_who), LP_OK);
    refused(many, LP_MAX_INPUTS + 1, "65 inputs, at most 64");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(well_formed_shapes_pass),
        cmocka_unit_test(malformed_arguments_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_paths.c: choosing modules by path (paths.h): torchprof's tuples, dotted paths, globs, the
 * root by class name, and the "did you mean" of a path that matches nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"
#include "model/paths.h"
#include "model/tree.h"

/* Trees ---------------------------------------------------------------------------------------- */

/* Adds a module under the one named by the path's prefix ("" for top-level modules). */
static int32_t add(lp_tree *t, const char *path, const char *cls) {
    int32_t parent = -1;
    if (t->n_nodes > 0) {
        char prefix[256] = "";
        const char *dot = strrchr(path, '.');
        if (dot) memcpy(prefix, path, (size_t)(dot - path));
        parent = lp_tree_find(t, prefix);
        assert_true(parent >= 0);
    }
    int idx = lp_tree_add(t, path, cls, parent);
    assert_true(idx >= 0);
    return idx;
}

/* torchvision's alexnet, as named_modules() lists it. */
static void alexnet(lp_tree *t) {
    static const char *const features[] = {"Conv2d",    "ReLU",   "MaxPool2d", "Conv2d", "ReLU",
                                           "MaxPool2d", "Conv2d", "ReLU",      "Conv2d", "ReLU",
                                           "Conv2d",    "ReLU",   "MaxPool2d"};
    static const char *const classifier[] = {"Dropout", "Linear", "ReLU",  "Dropout",
                                             "Linear",  "ReLU",   "Linear"};
    char path[64];
    lp_tree_init(t);
    add(t, "", "AlexNet");
    add(t, "features", "Sequential");
    for (int i = 0; i < 13; i++) {
        snprintf(path, sizeof path, "features.%d", i);
        add(t, path, features[i]);
    }
    add(t, "avgpool", "AdaptiveAvgPool2d");
    add(t, "classifier", "Sequential");
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "classifier.%d", i);
        add(t, path, classifier[i]);
    }
}

/* A cut-down resnet18: a conv1 at the top level and in blocks, a downsample branch. */
static void resnet(lp_tree *t) {
    static const char *const paths[][2] = {
        {"", "ResNet"},
        {"conv1", "Conv2d"},
        {"bn1", "BatchNorm2d"},
        {"layer1", "Sequential"},
        {"layer1.0", "BasicBlock"},
        {"layer1.0.conv1", "Conv2d"},
        {"layer1.0.bn1", "BatchNorm2d"},
        {"layer1.1", "BasicBlock"},
        {"layer1.1.conv1", "Conv2d"},
        {"layer2", "Sequential"},
        {"layer2.0", "BasicBlock"},
        {"layer2.0.conv1", "Conv2d"},
        {"layer2.0.downsample", "Sequential"},
        {"layer2.0.downsample.0", "Conv2d"},
        {"fc", "Linear"},
    };
    lp_tree_init(t);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        add(t, paths[i][0], paths[i][1]);
}

/* Selecting ------------------------------------------------------------------------------------ */

/* The selected paths, comma-joined in model order ("<root>" for the root), after selecting
 * `patterns`; asserts the selection succeeds. */
static void expect_selected(const lp_tree *t, const char *const *patterns, size_t n,
                            const char *want) {
    uint8_t *sel = malloc(t->n_nodes);
    assert_non_null(sel);
    int rc = lp_paths_select(t, patterns, n, sel);
    if (rc != LP_OK) fail_msg("lp_paths_select: %s", lp_error_last());
    char got[2048] = "";
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (!sel[i]) continue;
        if (*got) strcat(got, ",");
        strcat(got, i == 0 ? "<root>" : t->nodes[i].path);
    }
    free(sel);
    if (strcmp(got, want) != 0) fail_msg("selected '%s', expected '%s'", got, want);
}

static void expect_one(const lp_tree *t, const char *pattern, const char *want) {
    expect_selected(t, &pattern, 1, want);
}

/* Selecting `pattern` fails with `status` and a message containing `part`. */
static void expect_error(const lp_tree *t, const char *pattern, int status, const char *part) {
    uint8_t *sel = malloc(t->n_nodes);
    assert_non_null(sel);
    int rc = lp_paths_select(t, &pattern, 1, sel);
    free(sel);
    assert_int_equal(rc, status);
    if (!strstr(lp_error_last(), part))
        fail_msg("message '%s' does not contain '%s'", lp_error_last(), part);
}

/* Tests ---------------------------------------------------------------------------------------- */

static void torchprofs_tuple_names_the_root_class_then_the_path(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_one(&t, "AlexNet,features,3", "features.3");
    expect_one(&t, "AlexNet,classifier", "classifier");
    const char *const readme[] = {"AlexNet,features,3", "AlexNet,classifier"};
    expect_selected(&t, readme, 2, "features.3,classifier");
    lp_tree_free(&t);
}

static void a_tuple_may_leave_the_root_out(void **state) {
    (void)state;
    lp_tree t;
    resnet(&t);
    expect_one(&t, "layer1,0,conv1", "layer1.0.conv1");
    expect_one(&t, "ResNet,layer1,0,conv1", "layer1.0.conv1");
    lp_tree_free(&t);
}

static void dotted_paths_select_exactly_that_module(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_one(&t, "features.3", "features.3");
    expect_one(&t, "classifier", "classifier"); /* its children are measured through it */
    expect_one(&t, "AlexNet.features.3", "features.3");
    lp_tree_free(&t);
}

static void the_root_is_named_by_its_class_or_by_nothing(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_one(&t, "AlexNet", "<root>");
    expect_one(&t, "", "<root>");
    lp_tree_free(&t);
}

static void a_star_matches_one_segment(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_one(&t, "features.*",
               "features.0,features.1,features.2,features.3,features.4,features.5,features.6,"
               "features.7,features.8,features.9,features.10,features.11,features.12");
    expect_one(&t, "classifier.?",
               "classifier.0,classifier.1,classifier.2,classifier.3,"
               "classifier.4,classifier.5,classifier.6");
    expect_one(&t, "features.1*", "features.1,features.10,features.11,features.12");
    expect_one(&t, "*", "features,avgpool,classifier");
    lp_tree_free(&t);
}

static void a_question_mark_matches_one_character(void **state) {
    (void)state;
    lp_tree t;
    resnet(&t);
    expect_one(&t, "layer?.0", "layer1.0,layer2.0");
    expect_one(&t, "ResNet,layer?,0", "layer1.0,layer2.0");
    lp_tree_free(&t);
}

static void a_double_star_matches_zero_or_more_segments(void **state) {
    (void)state;
    lp_tree t;
    resnet(&t);
    /* zero segments: the top-level conv1; more: every block's */
    expect_one(&t, "**.conv1", "conv1,layer1.0.conv1,layer1.1.conv1,layer2.0.conv1");
    expect_one(&t, "layer2.**",
               "layer2,layer2.0,layer2.0.conv1,layer2.0.downsample,"
               "layer2.0.downsample.0");
    expect_one(&t, "layer1.**.conv1", "layer1.0.conv1,layer1.1.conv1");
    expect_one(&t, "**.downsample.**", "layer2.0.downsample,layer2.0.downsample.0");
    expect_one(&t, "**",
               "<root>,conv1,bn1,layer1,layer1.0,layer1.0.conv1,layer1.0.bn1,layer1.1,"
               "layer1.1.conv1,layer2,layer2.0,layer2.0.conv1,layer2.0.downsample,"
               "layer2.0.downsample.0,fc");
    lp_tree_free(&t);
}

static void lp_path_matches_answers_for_one_node(void **state) {
    (void)state;
    lp_tree t;
    resnet(&t);
    int32_t conv = lp_tree_find(&t, "layer1.0.conv1");
    assert_true(lp_path_matches(&t, "**.conv1", conv));
    assert_true(lp_path_matches(&t, "ResNet,layer1,0,conv1", conv));
    assert_true(lp_path_matches(&t, "layer?.*.conv?", conv));
    assert_false(lp_path_matches(&t, "layer1.0", conv));
    assert_false(lp_path_matches(&t, "layer1.0.conv1.x", conv));
    assert_false(lp_path_matches(&t, "*.conv1", conv));
    assert_true(lp_path_matches(&t, "ResNet", 0));
    lp_tree_free(&t);
}

static void a_parent_and_its_child_can_both_be_selected(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    const char *const both[] = {"features", "features.3"};
    expect_selected(&t, both, 2, "features,features.3");
    const char *const tuples[] = {"AlexNet,classifier", "AlexNet,classifier,1", "classifier.*"};
    expect_selected(&t, tuples, 3,
                    "classifier,classifier.0,classifier.1,classifier.2,classifier.3,"
                    "classifier.4,classifier.5,classifier.6");
    lp_tree_free(&t);
}

static void an_unknown_path_is_not_found_and_names_the_right_spelling(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_error(&t, "features.33", LP_ERR_NOT_FOUND, "did you mean 'features.3'");
    expect_error(&t, "clasifier", LP_ERR_NOT_FOUND, "did you mean 'classifier'");
    expect_error(&t, "AlexNet,features,33", LP_ERR_NOT_FOUND, "did you mean 'AlexNet,features,3'");
    expect_error(&t, "AlexNet.clasifier.1", LP_ERR_NOT_FOUND,
                 "did you mean 'AlexNet.classifier.1'");
    expect_error(&t, "AlexNt", LP_ERR_NOT_FOUND, "did you mean 'AlexNet'");
    expect_error(&t, "features.3", LP_OK, ""); /* the control */
    lp_tree_free(&t);
    resnet(&t);
    expect_error(&t, "layer1.0.conv", LP_ERR_NOT_FOUND, "'layer1.0.conv1'");
    expect_error(&t, "ResNet,layer1,0,conv", LP_ERR_NOT_FOUND, "'ResNet,layer1,0,conv1'");
    lp_tree_free(&t);
}

static void a_path_far_from_every_module_gets_an_example_instead(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    expect_error(&t, "transformer.encoder.layers.0", LP_ERR_NOT_FOUND, "no module matches path");
    assert_null(strstr(lp_error_last(), "did you mean"));
    expect_error(&t, "transformer.encoder.layers.0", LP_ERR_NOT_FOUND, "e.g. 'features'");
    lp_tree_free(&t);
}

static void a_glob_that_matches_nothing_is_not_found(void **state) {
    (void)state;
    lp_tree t;
    resnet(&t);
    expect_error(&t, "layer3.*", LP_ERR_NOT_FOUND, "no module matches path 'layer3.*'");
    expect_error(&t, "**.conv3", LP_ERR_NOT_FOUND, "no module matches path '**.conv3'");
    lp_tree_free(&t);
}

static void every_pattern_must_match_something(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    const char *const two[] = {"features.3", "features.30"};
    uint8_t sel[32];
    assert_int_equal(lp_paths_select(&t, two, 2, sel), LP_ERR_NOT_FOUND);
    assert_non_null(strstr(lp_error_last(), "'features.30'"));
    const char *const null_pattern[] = {"features.3", NULL};
    assert_int_equal(lp_paths_select(&t, null_pattern, 2, sel), LP_ERR_INVALID);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(torchprofs_tuple_names_the_root_class_then_the_path),
        cmocka_unit_test(a_tuple_may_leave_the_root_out),
        cmocka_unit_test(dotted_paths_select_exactly_that_module),
        cmocka_unit_test(the_root_is_named_by_its_class_or_by_nothing),
        cmocka_unit_test(a_star_matches_one_segment),
        cmocka_unit_test(a_question_mark_matches_one_character),
        cmocka_unit_test(a_double_star_matches_zero_or_more_segments),
        cmocka_unit_test(lp_path_matches_answers_for_one_node),
        cmocka_unit_test(a_parent_and_its_child_can_both_be_selected),
        cmocka_unit_test(an_unknown_path_is_not_found_and_names_the_right_spelling),
        cmocka_unit_test(a_path_far_from_every_module_gets_an_example_instead),
        cmocka_unit_test(a_glob_that_matches_nothing_is_not_found),
        cmocka_unit_test(every_pattern_must_match_something),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

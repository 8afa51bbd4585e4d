/* test_callstack.c: graph mode's module resolution (callstack.h) on a synthetic module tree and
 * call stacks written the way libtorch prints them ("block(Block)::forward"), with the exact module
 * each must resolve to: nested modules, helper methods, free functions, container elements, fork
 * tasks, and unknown names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"
#include "model/callstack.h"
#include "model/tree.h"

/* The tree, as named_modules() lists it:
 *   Net
 *   ├── stem            Conv2d
 *   ├── block           Block
 *   │   ├── body        Sequential
 *   │   │   ├── 0       Conv2d
 *   │   │   └── 1       ReLU
 *   │   └── proj        Conv2d
 *   ├── layers          ModuleList (container: no forward)
 *   │   ├── 0           Linear
 *   │   └── 1           Linear
 *   ├── heads           ModuleDict (container)
 *   │   └── cls         Linear
 *   ├── branch          Branch
 *   │   ├── fc1         Linear
 *   │   └── fc2         Linear
 *   └── blocks          Block      (a name that "block" is a prefix of) */
enum { ROOT, STEM, BLOCK, BODY, BODY0, BODY1, PROJ, LAYERS, LAYERS0, LAYERS1, HEADS, CLS, BRANCH };
enum { FC1 = BRANCH + 1, FC2, BLOCKS, N_NODES };

static const struct {
    const char *path, *cls;
    int32_t parent;
    int container;
} k_nodes[N_NODES] = {
    {"", "Net", -1, 0},
    {"stem", "Conv2d", ROOT, 0},
    {"block", "Block", ROOT, 0},
    {"block.body", "Sequential", BLOCK, 0},
    {"block.body.0", "Conv2d", BODY, 0},
    {"block.body.1", "ReLU", BODY, 0},
    {"block.proj", "Conv2d", BLOCK, 0},
    {"layers", "ModuleList", ROOT, 1},
    {"layers.0", "Linear", LAYERS, 0},
    {"layers.1", "Linear", LAYERS, 0},
    {"heads", "ModuleDict", ROOT, 1},
    {"heads.cls", "Linear", HEADS, 0},
    {"branch", "Branch", ROOT, 0},
    {"branch.fc1", "Linear", BRANCH, 0},
    {"branch.fc2", "Linear", BRANCH, 0},
    {"blocks", "Block", ROOT, 0},
};

static int setup(void **state) {
    lp_tree *t = calloc(1, sizeof *t);
    if (!t || lp_tree_init(t)) return -1;
    for (int i = 0; i < N_NODES; i++) {
        if (lp_tree_add(t, k_nodes[i].path, k_nodes[i].cls, k_nodes[i].parent) != i) return -1;
        t->nodes[i].container = k_nodes[i].container;
    }
    *state = t;
    return 0;
}

static int teardown(void **state) {
    lp_tree_free(*state);
    free(*state);
    return 0;
}

/* Splits "name(Class)::method" as the shim does; "::relu" has no instance or class. */
static lp_callstack_frame frame(const char *entry) {
    lp_callstack_frame f = {"", 0, "", 0, "", 0};
    const char *sep = strstr(entry, "::");
    assert_non_null(sep);
    f.method = sep + 2;
    f.method_len = strlen(sep + 2);
    const char *open = memchr(entry, '(', (size_t)(sep - entry));
    if (open) {
        f.instance = entry;
        f.instance_len = (size_t)(open - entry);
        f.class_name = open + 1;
        f.class_len = (size_t)(sep - 1 - (open + 1));
    }
    return f;
}

/* The module that `entries` (outermost first, NULL-terminated) resolve to. */
static int32_t resolve_from(const lp_tree *t, int32_t fork_base, const char *const *entries) {
    lp_callstack_frame frames[16];
    size_t n = 0;
    while (entries[n]) {
        assert_true(n < 16);
        frames[n] = frame(entries[n]);
        n++;
    }
    return lp_callstack_resolve(t, frames, n, fork_base);
}

#define RESOLVE(t, ...) resolve_from((t), -1, (const char *const[]){__VA_ARGS__, NULL})
#define RESOLVE_FORKED(t, base, ...)                                                               \
    resolve_from((t), (base), (const char *const[]){__VA_ARGS__, NULL})

static void nested_modules_resolve_one_instance_name_at_a_time(void **state) {
    const lp_tree *t = *state;
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward"), ROOT);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "stem(Conv2d)::forward"), STEM);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward",
                             "body(Sequential)::forward", "0(Conv2d)::forward"),
                     BODY0);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward",
                             "body(Sequential)::forward", "1(ReLU)::forward"),
                     BODY1);
    assert_int_equal(
        RESOLVE(t, "TOP(Net)::forward", "branch(Branch)::forward", "fc2(Linear)::forward"), FC2);
}

static void a_name_matches_whole_not_as_a_prefix(void **state) {
    const lp_tree *t = *state;
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "blocks(Block)::forward"), BLOCKS);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward"), BLOCK);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "bloc(Block)::forward"), ROOT);

    /* The text is borrowed and not NUL-terminated: only instance_len characters count. */
    lp_callstack_frame f = frame("blocks(Block)::forward");
    f.instance_len = 5;
    assert_int_equal(lp_callstack_resolve(t, &f, 1, -1), BLOCK);
}

static void helper_methods_stay_on_their_module_and_call_its_children(void **state) {
    const lp_tree *t = *state;
    /* An op in the helper itself belongs to the helper's module. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward", "SELF(Block)::_mix"),
                     BLOCK);
    /* A child called from the helper. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward", "SELF(Block)::_mix",
                             "proj(Conv2d)::forward"),
                     PROJ);
    /* A helper of the root. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "SELF(Net)::_run", "stem(Conv2d)::forward"),
                     STEM);
}

static void free_functions_stay_on_the_module_that_called_them(void **state) {
    const lp_tree *t = *state;
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "::relu"), ROOT);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward", "::relu"), BLOCK);
    /* A module called from inside a free function is still found under the caller. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "::helper", "block(Block)::forward"), BLOCK);
    /* An entry without an instance name (nothing before the parenthesis) names nothing. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward", "(Block)::forward"),
                     BLOCK);
}

static void container_elements_are_found_through_their_container(void **state) {
    const lp_tree *t = *state;
    /* The stack names the element, never the ModuleList or ModuleDict, which is not called. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "0(Linear)::forward"), LAYERS0);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "1(Linear)::forward"), LAYERS1);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "cls(Linear)::forward"), CLS);
    /* A child with a forward (block.body, a Sequential) is not looked through: its elements are
     * named under it. */
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward", "0(Conv2d)::forward"),
                     BLOCK);
}

static void a_fork_task_resolves_from_the_module_it_was_forked_on(void **state) {
    const lp_tree *t = *state;
    assert_int_equal(
        RESOLVE_FORKED(t, BRANCH, "TOP(Branch)::<forked function>", "fc1(Linear)::forward"), FC1);
    assert_int_equal(RESOLVE_FORKED(t, BRANCH, "TOP(Branch)::<forked function>"), BRANCH);
    /* A forked helper method of the root: the base is the root. */
    assert_int_equal(RESOLVE_FORKED(t, ROOT, "TOP(Net)::<forked function>", "SELF(Net)::_run_b",
                                    "branch(Branch)::forward", "fc2(Linear)::forward"),
                     FC2);
    /* Without a base the same stack is read from the root, where fc1 is unknown. */
    assert_int_equal(
        RESOLVE_FORKED(t, -1, "TOP(Branch)::<forked function>", "fc1(Linear)::forward"), ROOT);
    /* A base outside the tree is ignored. */
    assert_int_equal(
        RESOLVE_FORKED(t, N_NODES, "TOP(Branch)::<forked function>", "fc1(Linear)::forward"), ROOT);
    /* The base applies only to a stack that starts at a forked function. */
    assert_int_equal(RESOLVE_FORKED(t, BRANCH, "TOP(Net)::forward", "stem(Conv2d)::forward"), STEM);
}

static void an_unknown_name_stops_at_the_closest_enclosing_module(void **state) {
    const lp_tree *t = *state;
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "block(Block)::forward",
                             "nosuch(Foo)::forward", "proj(Conv2d)::forward"),
                     BLOCK);
    assert_int_equal(RESOLVE(t, "TOP(Net)::forward", "nosuch(Foo)::forward"), ROOT);
    /* An empty stack (an op outside every TorchScript frame) is the root's. */
    assert_int_equal(lp_callstack_resolve(t, NULL, 0, -1), ROOT);

    lp_tree empty;
    lp_tree_init(&empty);
    assert_int_equal(RESOLVE(&empty, "TOP(Net)::forward"), -1);
    lp_tree_free(&empty);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(nested_modules_resolve_one_instance_name_at_a_time),
        TEST(a_name_matches_whole_not_as_a_prefix),
        TEST(helper_methods_stay_on_their_module_and_call_its_children),
        TEST(free_functions_stay_on_the_module_that_called_them),
        TEST(container_elements_are_found_through_their_container),
        TEST(a_fork_task_resolves_from_the_module_it_was_forked_on),
        TEST(an_unknown_name_stops_at_the_closest_enclosing_module),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_threads.c: what layerprof shows when a model uses more than one thread (docs/threads.md).
 *
 *  - Intra-op threads: the module tree, every module's calls and every op row's calls are the same
 *    with threads 1 and threads 2. libtorch's intra-op thread count is per process and cannot be
 *    lowered once its pool has started, so each count runs in a child process (this program
 *    re-executed with --child) that prints the figures; the parent compares the two listings.
 *  - torch.jit.fork (models/forked.pt): every module's calls per forward equal the eager counts in
 *    forked.counts.json, in the hooks and the graph mode, over more iterations than a thread's call
 *    stack is deep (a frame left open per forward would overflow it), with no event dropped; the
 *    forked branches have time, and the helper `_run_b`'s own op (aten::tanh) is the root's. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

extern char **environ;

/* ---- child: one run, its figures on stdout -------------------------------------------------- */

static int child(const char *model, const char *mode, int threads) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, model);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.mode = strcmp(mode, "graph") == 0 ? LP_MODE_GRAPH : LP_MODE_HOOKS;
    o.threads = threads;
    o.warmup = 2;
    o.iterations = 2;
    o.events = 1;
    lp_session *s = NULL;
    if (lp_session_open(&s, &o) || lp_session_run(s)) {
        fprintf(stderr, "child %s %s %d: %s\n", model, mode, threads, lp_error_last());
        lp_session_close(s);
        return 1;
    }
    size_t n = 0, n_ops = 0;
    lp_session_node_count(s, &n);
    for (size_t i = 0; i < n; i++) {
        lp_node_info node;
        lp_session_node(s, i, &node);
        printf("module '%s' parent %d calls %llu\n", node.path, node.parent,
               (unsigned long long)node.raw_calls);
    }
    lp_session_op_count(s, &n_ops);
    for (size_t i = 0; i < n_ops; i++) {
        lp_op_info op;
        lp_session_op(s, i, &op);
        printf("op %zu module %d parent %d %s calls %llu\n", i, op.module, op.parent_op, op.name,
               (unsigned long long)op.raw_calls);
    }
    lp_run_info info;
    lp_session_run_info(s, &info);
    printf("dropped %llu\n", (unsigned long long)info.dropped);
    lp_session_close(s);
    return 0;
}

/* Runs this program with --child and returns what it printed (the caller frees it). */
static char *run_child(const char *model, const char *mode, int threads) {
    char threads_arg[16];
    snprintf(threads_arg, sizeof threads_arg, "%d", threads);
    char *const argv[] = {"test_threads", "--child",   (char *)model,
                          (char *)mode,   threads_arg, NULL};
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err) fail_msg("posix_spawn: %s", strerror(err));
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    ssize_t got;
    while ((got = read(fds[0], out + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len < 1024) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
    }
    close(fds[0]);
    out[len] = '\0';
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child %s %s --threads %d failed (status %d)", model, mode, threads, status);
    return out;
}

typedef struct threads_case {
    const char *model, *mode;
} threads_case;

static void same_tree_and_calls_with_one_and_two_threads(void **state) {
    const threads_case *c = *state;
    char *one = run_child(c->model, c->mode, 1);
    char *two = run_child(c->model, c->mode, 2);
    assert_non_null(strstr(one, "module '' parent -1 calls 2"));
    assert_non_null(strstr(one, "\ndropped 0\n"));
    if (strcmp(one, two) != 0) {
        /* First differing line, for the message. */
        const char *a = one, *b = two;
        while (*a && *a == *b) {
            a++;
            b++;
        }
        while (a > one && a[-1] != '\n') {
            a--;
            b--;
        }
        fail_msg("%s %s: threads 1 and 2 differ:\n  1: %.*s\n  2: %.*s", c->model, c->mode,
                 (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
    }
    free(one);
    free(two);
}

/* ---- torch.jit.fork ------------------------------------------------------------------------- */

#define FORKED_ITERATIONS 600 /* more than the collector's 512-frame stack per thread */

static void forked_calls_equal_the_eager_counts(void **state) {
    const lp_mode mode = *(const lp_mode *)*state;
    json_error_t jerr;
    json_t *counts = json_load_file(LP_MODELS_DIR "/forked.counts.json", 0, &jerr);
    if (!counts) fail_msg("forked.counts.json: %s", jerr.text);
    lp_options o;
    lp_options_init(&o);
    o.model_path = LP_MODELS_DIR "/forked.pt";
    o.mode = mode;
    o.warmup = 3;
    o.iterations = FORKED_ITERATIONS;
    o.memory = 1;
    o.events = 1;
    lp_session *s = NULL;
    if (lp_session_open(&s, &o) || lp_session_run(s))
        fail_msg("forked (%s): %s", mode == LP_MODE_HOOKS ? "hooks" : "graph", lp_error_last());

    const char *path;
    json_t *expected;
    json_object_foreach(json_object_get(counts, "calls"), path, expected) {
        size_t i;
        lp_node_info node;
        if (lp_session_find(s, path, &i) || lp_session_node(s, i, &node))
            fail_msg("module '%s': %s", path, lp_error_last());
        if (node.raw_calls != (uint64_t)json_integer_value(expected) * FORKED_ITERATIONS)
            fail_msg("module '%s': %llu calls in %d forwards, expected %lld per forward", path,
                     (unsigned long long)node.raw_calls, FORKED_ITERATIONS,
                     (long long)json_integer_value(expected));
        if (json_integer_value(expected) && node.raw_total_ns == 0)
            fail_msg("module '%s' was called but has no time", path);
    }
    /* The forked branches ran inside the root's call, on the calling thread. */
    lp_node_info root, branch;
    size_t bi;
    assert_int_equal(lp_session_node(s, 0, &root), LP_OK);
    assert_int_equal(lp_session_find(s, "branch_a", &bi), LP_OK);
    assert_int_equal(lp_session_node(s, bi, &branch), LP_OK);
    assert_true(branch.raw_total_ns < root.raw_total_ns);
    assert_true(root.raw_self_ns < root.raw_total_ns);

    /* `_run_b` is a helper of the root: its own op belongs to the root, not to branch_b. */
    size_t n_ops = 0;
    int tanh_in_root = 0;
    lp_session_op_count(s, &n_ops);
    for (size_t i = 0; i < n_ops; i++) {
        lp_op_info op;
        lp_session_op(s, i, &op);
        if (strcmp(op.name, "aten::tanh") == 0) {
            assert_int_equal(op.module, 0);
            assert_int_equal(op.raw_calls, FORKED_ITERATIONS);
            tanh_in_root = 1;
        }
    }
    assert_true(tanh_in_root);

    lp_run_info info;
    assert_int_equal(lp_session_run_info(s, &info), LP_OK);
    assert_int_equal(info.dropped, 0);
    lp_session_close(s);
    json_decref(counts);
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3], atoi(argv[4]));

    static const threads_case k_threads[] = {{"resnet18", "hooks"},
                                             {"resnet18", "graph"},
                                             {"transformer", "hooks"},
                                             {"transformer", "graph"},
                                             {"nested", "hooks"}};
    static const lp_mode k_modes[] = {LP_MODE_HOOKS, LP_MODE_GRAPH};
    enum { N_THREADS = sizeof k_threads / sizeof k_threads[0] };
    struct CMUnitTest tests[N_THREADS + 2];
    char names[N_THREADS + 2][96];
    size_t n = 0;
    for (size_t i = 0; i < N_THREADS; i++, n++) {
        snprintf(names[n], sizeof names[n], "%s_%s_same_tree_and_calls_with_1_and_2_threads",
                 k_threads[i].model, k_threads[i].mode);
        tests[n] = (struct CMUnitTest){.name = names[n],
                                       .test_func = same_tree_and_calls_with_one_and_two_threads,
                                       .initial_state = (void *)&k_threads[i]};
    }
    for (size_t i = 0; i < 2; i++, n++) {
        snprintf(names[n], sizeof names[n], "forked_%s_calls_equal_the_eager_counts",
                 k_modes[i] == LP_MODE_HOOKS ? "hooks" : "graph");
        tests[n] = (struct CMUnitTest){.name = names[n],
                                       .test_func = forked_calls_equal_the_eager_counts,
                                       .initial_state = (void *)&k_modes[i]};
    }
    return _cmocka_run_group_tests("threads", tests, n, NULL, NULL);
}

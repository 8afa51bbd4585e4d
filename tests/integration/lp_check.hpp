// lp_check.hpp: the C++ integration tests' one check macro (they drive libtorch, so they are not
// cmocka tests). A failed check prints where and why, and counts; main() exits 1 on any.
#pragma once

#include <cstdio>

static int g_failures = 0;

#define LP_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);          \
            std::fprintf(stderr, __VA_ARGS__);                                                     \
            std::fputc('\n', stderr);                                                              \
            g_failures++;                                                                          \
        }                                                                                          \
    } while (0)

/* test_clock.c: the event clock keeps CLOCK_MONOTONIC's time and rate whichever source it reads,
 * never runs backwards, and takes LAYERPROF_CLOCK as documented. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void the_source_is_decided_by_the_first_read(void **state) {
    (void)state;
    lp_now_ns();
    const char *src = lp_clock_source();
    assert_true(!strncmp(src, "tsc (", 5) || !strncmp(src, "monotonic (", 11));
    int source = __atomic_load_n(&lp_clock.source, __ATOMIC_ACQUIRE);
    assert_int_equal(source, !strncmp(src, "tsc", 3) ? LP_CLOCK_TSC : LP_CLOCK_MONOTONIC);
}

/* Read between two CLOCK_MONOTONIC reads, the clock lies between them, to within the
 * calibration's error over the time since (1e-5 of a few seconds at most: 100 us is lenient).
 * Load cannot fail it: a preemption only widens the bracket, the order of the reads holds. */
static void it_reads_what_clock_monotonic_reads(void **state) {
    (void)state;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = monotonic_ns();
        uint64_t t = lp_now_ns();
        uint64_t b = monotonic_ns();
        assert_true(t + 100000 >= a);
        assert_true(t <= b + 100000);
    }
}

/* The clock read between two CLOCK_MONOTONIC reads taken within 20 us (a thread preempted between
 * them, as on a loaded CI machine, tries again), and their midpoint. The retry is what keeps the
 * machine's load out of the test: it fails only when 1000 pairs in a row were each interrupted
 * for over 20 us, while a pair takes well under 1 us. */
static void read_pair(uint64_t *t, uint64_t *m) {
    for (int i = 0; i < 1000; i++) {
        uint64_t a = monotonic_ns();
        *t = lp_now_ns();
        uint64_t b = monotonic_ns();
        *m = a + (b - a) / 2;
        if (b - a < 20000) return;
    }
    fail_msg("no two CLOCK_MONOTONIC reads within 20 us in 1000 tries");
}

/* Durations: 50 ms of sleep measured by both clocks agree to 0.1% (the TSC's rate was measured
 * to about 1e-5), plus the pairs' own 20 us. Both clocks time the same interval, so how long the
 * sleep really lasts under load does not matter; only the pairs' width does (read_pair). */
static void its_durations_are_clock_monotonic_durations(void **state) {
    (void)state;
    uint64_t t0, m0, t1, m1;
    read_pair(&t0, &m0);
    sleep_ms(50);
    read_pair(&t1, &m1);
    double dt = (double)(t1 - t0), dm = (double)(m1 - m0);
    assert_true(dt > dm * 0.999 - 40000 && dt < dm * 1.001 + 40000);
}

static void it_never_runs_backwards_on_one_thread(void **state) {
    (void)state;
    uint64_t last = lp_now_ns();
    for (int i = 0; i < 1000000; i++) {
        uint64_t t = lp_now_ns();
        assert_true(t >= last);
        last = t;
    }
}

/* A frame opened on one CPU may close on another: a time read after another thread's read (the
 * hand-off orders them) is not earlier than it. The kernel keeps the TSC as its clocksource only
 * when every CPU's counter is in step; 1 us of slack covers the counter read's own reordering. */
static _Atomic uint64_t g_handed;
static _Atomic int g_turn;

static void *other_thread(void *arg) {
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        while (atomic_load(&g_turn) != 1) {
        }
        uint64_t theirs = atomic_load(&g_handed);
        uint64_t mine = lp_now_ns();
        if (mine + 1000 < theirs) return (void *)1;
        atomic_store(&g_handed, lp_now_ns());
        atomic_store(&g_turn, 0);
    }
    return NULL;
}

static void it_agrees_across_threads(void **state) {
    (void)state;
    pthread_t th;
    atomic_store(&g_turn, 0);
    assert_int_equal(pthread_create(&th, NULL, other_thread, NULL), 0);
    int backwards = 0;
    for (int i = 0; i < 2000; i++) {
        atomic_store(&g_handed, lp_now_ns());
        atomic_store(&g_turn, 1);
        while (atomic_load(&g_turn) != 0) {
        }
        if (lp_now_ns() + 1000 < atomic_load(&g_handed)) backwards++;
    }
    void *ret;
    assert_int_equal(pthread_join(th, &ret), 0);
    assert_null(ret);
    assert_int_equal(backwards, 0);
}

/* What a fresh process decides: this program run again (`--print-source`, main) with
 * LAYERPROF_CLOCK=value, since a forked child would inherit this process's decision. */
static void source_with(const char *value, char *out, size_t size, int *source) {
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        setenv("LAYERPROF_CLOCK", value, 1);
        execl("/proc/self/exe", "test_clock", "--print-source", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    assert_int_equal(read(fd[0], source, sizeof *source), (ssize_t)sizeof *source);
    ssize_t n = read(fd[0], out, size - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The child's side of source_with: the source as an int, then its description. */
static int print_source(void) {
    lp_now_ns();
    const char *text = lp_clock_source();
    int src = __atomic_load_n(&lp_clock.source, __ATOMIC_ACQUIRE);
    ssize_t w = write(1, &src, sizeof src);
    if (w != (ssize_t)sizeof src || write(1, text, strlen(text)) != (ssize_t)strlen(text)) return 1;
    return 0;
}

/* A fresh process with LAYERPROF_CLOCK=value reads CLOCK_MONOTONIC and describes it as `text`. */
static void assert_monotonic_with(const char *value, const char *text) {
    char got[160];
    int source;
    source_with(value, got, sizeof got, &source);
    assert_int_equal(source, LP_CLOCK_MONOTONIC);
    assert_string_equal(got, text);
}

static void layerprof_clock_monotonic_forces_clock_monotonic(void **state) {
    (void)state;
    assert_monotonic_with("monotonic", "monotonic (LAYERPROF_CLOCK=monotonic)");
}

static void a_misspelt_layerprof_clock_is_named_and_falls_back(void **state) {
    (void)state;
    assert_monotonic_with("monotnic",
                          "monotonic (LAYERPROF_CLOCK=monotnic is not 'auto' or 'monotonic')");
}

static void layerprof_clock_auto_is_the_default(void **state) {
    (void)state;
    char with_auto[160], without[160];
    int a, b;
    source_with("auto", with_auto, sizeof with_auto, &a);
    source_with("", without, sizeof without, &b);
    assert_int_equal(a, b);
    assert_true(!strncmp(with_auto, "tsc (", 5) || !strncmp(with_auto, "monotonic (the", 14) ||
                !strncmp(with_auto, "monotonic (no TSC", 17));
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--print-source")) return print_source();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_source_is_decided_by_the_first_read),
        cmocka_unit_test(it_reads_what_clock_monotonic_reads),
        cmocka_unit_test(its_durations_are_clock_monotonic_durations),
        cmocka_unit_test(it_never_runs_backwards_on_one_thread),
        cmocka_unit_test(it_agrees_across_threads),
        cmocka_unit_test(layerprof_clock_monotonic_forces_clock_monotonic),
        cmocka_unit_test(a_misspelt_layerprof_clock_is_named_and_falls_back),
        cmocka_unit_test(layerprof_clock_auto_is_the_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* bench_util.c: see bench_util.h. */
#define _GNU_SOURCE
#include "bench_util.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t klen = strlen(key);
    int64_t kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = strtoll(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

int64_t bench_rss_now(void) {
    int64_t kb = status_kb("VmRSS");
    return kb < 0 ? -1 : kb * 1024;
}

int64_t bench_rss_peak(void) {
    int64_t kb = status_kb("VmHWM");
    return kb < 0 ? -1 : kb * 1024;
}

/* ---- command line and process setup --------------------------------------------------------- */

const char *bench_arg(int argc, char **argv, const char *key, const char *dflt) {
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], key)) return argv[i + 1];
    return dflt;
}

void bench_model_name(const char *path, char *buf, size_t size) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(buf, size, "%s", base);
    char *dot = strrchr(buf, '.');
    if (dot) *dot = '\0';
}

void bench_fix_heap(void) {
    const char *malloc_mode = getenv("LP_BENCH_MALLOC");
    if (!malloc_mode || strcmp(malloc_mode, "default") != 0) {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
}

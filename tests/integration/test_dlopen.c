/* test_dlopen.c: liblayerprof loaded by a program that did not link it (a plugin host, Python's
 * ctypes): dlopen must succeed although every thread-local of the library is in the initial-exec
 * model (src/base/thread_local.h), which places its whole thread-local segment in glibc's small
 * static TLS surplus. Checks the load, the segment's size against its budget, and the error
 * message of several threads (each kept in a block of its own, freed when the thread exits: the
 * sanitizer build sees a leak or a use after free there), and a thread that outlives dlclose:
 * its block's destructor is the library's code, which must still be there when the thread exits
 * (the library is linked -z nodelete).
 *
 * Usage: test_dlopen PATH/liblayerprof.so */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/thread_local.h"
#include "layerprof.h"

static int (*p_options_init_version)(lp_options *, unsigned);
static int (*p_options_validate)(const lp_options *);
static const char *(*p_error_last)(void);

struct tls_find {
    const char *name; /* the library's file name */
    long size;        /* its PT_TLS segment's size; -1 until found */
};

static int find_tls(struct dl_phdr_info *info, size_t n, void *arg) {
    (void)n;
    struct tls_find *f = arg;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (strcmp(slash ? slash + 1 : info->dlpi_name, f->name) != 0) return 0;
    f->size = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS) f->size = (long)info->dlpi_phdr[i].p_memsz;
    return 1;
}

/* A usage error on this thread: its own message, whatever the other threads do. */
static void *bad_options(void *arg) {
    lp_options o;
    p_options_init_version(&o, LP_OPTIONS_VERSION);
    o.model_path = "model.pt"; /* not opened: validation fails before */
    o.sample_every = 0;
    int status = p_options_validate(&o);
    const char *msg = p_error_last();
    if (status != LP_ERR_INVALID || !strstr(msg, "sample")) {
        fprintf(stderr, "thread %d: status %d, message \"%s\"\n", (int)(long)arg, status, msg);
        return (void *)1;
    }
    return NULL;
}

/* Sets its error, then exits only after main has closed the library. */
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stage_cond = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the thread has its message; 2: the library is closed */

static void set_stage(int to) {
    pthread_mutex_lock(&stage_lock);
    stage = to;
    pthread_cond_broadcast(&stage_cond);
    pthread_mutex_unlock(&stage_lock);
}

static void wait_stage(int at_least) {
    pthread_mutex_lock(&stage_lock);
    while (stage < at_least)
        pthread_cond_wait(&stage_cond, &stage_lock);
    pthread_mutex_unlock(&stage_lock);
}

static void *outlive_dlclose(void *arg) {
    void *r = bad_options(arg);
    set_stage(1);
    wait_stage(2);
    return r; /* the thread's exit frees its message block */
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_dlopen PATH/liblayerprof.so\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "FAIL: dlopen: %s\n", dlerror());
        return 1;
    }
    const char *slash = strrchr(argv[1], '/');
    struct tls_find f = {slash ? slash + 1 : argv[1], -1};
    dl_iterate_phdr(find_tls, &f);
    if (f.size < 0 || f.size > LP_TLS_SEGMENT_MAX) {
        fprintf(stderr, "FAIL: the thread-local segment of %s is %ld bytes (budget %d)\n", f.name,
                f.size, LP_TLS_SEGMENT_MAX);
        return 1;
    }
    *(void **)&p_options_init_version = dlsym(lib, "lp_options_init_version");
    *(void **)&p_options_validate = dlsym(lib, "lp_options_validate");
    *(void **)&p_error_last = dlsym(lib, "lp_error_last");
    if (!p_options_init_version || !p_options_validate || !p_error_last) {
        fprintf(stderr, "FAIL: dlsym: %s\n", dlerror());
        return 1;
    }
    enum { N = 4 };
    pthread_t threads[N];
    for (long i = 0; i < N; i++)
        if (pthread_create(&threads[i], NULL, bad_options, (void *)i) != 0) return 1;
    int failed = bad_options((void *)(long)N) != NULL;
    for (int i = 0; i < N; i++) {
        void *r;
        pthread_join(threads[i], &r);
        failed |= r != NULL;
    }
    pthread_t late;
    if (pthread_create(&late, NULL, outlive_dlclose, (void *)(long)(N + 1)) != 0) return 1;
    wait_stage(1);
    dlclose(lib);
    set_stage(2);
    void *r;
    pthread_join(late, &r);
    failed |= r != NULL;
    if (failed) return 1;
    printf("ok: dlopen, thread-local segment %ld bytes (budget %d), %d threads' messages, "
           "a thread's exit after dlclose\n",
           f.size, LP_TLS_SEGMENT_MAX, N + 2);
    return 0;
}

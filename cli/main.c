/* main.c: the layerprof command line. A client of the public API and nothing else: the flags are
 * the option table's (args.c), applied with lp_options_set over the config file's options.
 * Exit codes: 0 ok, 1 runtime failure, 2 usage error; 130 or 143 after SIGINT or SIGTERM, with
 * the reports of the iterations completed written. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "diff.h"
#include "layerprof.h"
#include "merge.h"
#include "signals.h"

/* Usage errors are the ones the user fixes by changing what they typed, or what they run it with
 * (a feature this build lacks: a .pt2 on a libtorch 1.x build, CUDA without a GPU). */
static int exit_code(int status) {
    return status == LP_ERR_INVALID || status == LP_ERR_NOT_FOUND || status == LP_ERR_UNSUPPORTED
               ? LP_EXIT_USAGE
               : LP_EXIT_RUNTIME;
}

static int fail(int status) {
    fprintf(stderr, "layerprof: error: %s\n", lp_error_last());
    return exit_code(status);
}

/* One line on stderr, rewritten in place, at most every 100 ms; erased when the run is done. */
static void show_progress(const lp_progress *p, void *payload) {
    static struct timespec last;
    (void)payload;
    if (p->phase == LP_PHASE_DONE) {
        fputs("\r\033[K", stderr);
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (long)(now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
    if (p->done != 0 && p->done != p->total && ms < 100) return;
    last = now;
    fprintf(stderr, "\r\033[Klayerprof: %s %d/%d",
            p->phase == LP_PHASE_WARMUP ? "warm-up" : "profiling", p->done, p->total);
}

/* Lays the command line over `o` (the defaults, or the config file's options), in order. A list
 * given on the command line replaces the file's: each is emptied once before its first value. */
static int apply(const cli_args *a, lp_options *o) {
    for (size_t i = 0; i < a->n_settings; i++) {
        lp_option_info info;
        for (size_t k = 0; k < lp_options_key_count(); k++)
            if (lp_options_key(k, &info) == LP_OK && info.repeatable &&
                strcmp(info.key, a->settings[i].key) == 0) {
                int rc = lp_options_set(o, info.key, NULL);
                if (rc) return fail(rc);
            }
    }
    for (size_t i = 0; i < a->n_settings; i++) {
        const cli_setting *s = &a->settings[i];
        int rc = lp_options_set(o, s->key, s->value);
        if (rc) {
            cli_setting_error(s, lp_error_last());
            return exit_code(rc);
        }
    }
    return 0;
}

static int run(const cli_args *a) {
    lp_config *cfg = NULL;
    lp_options o;
    lp_options_init(&o);
    if (a->config) {
        int rc = lp_config_load(&cfg, a->config);
        if (rc) return fail(rc);
        o = *lp_config_options(cfg); /* its store is NULL: o's own starts with the first set */
    }
    int rc = apply(a, &o);
    if (!rc && a->print_config) {
        int status = lp_options_write_yaml(&o, stdout);
        rc = status ? fail(status) : 0;
    } else if (!rc && !o.model_path) {
        fprintf(stderr, "layerprof: error: no model given (try 'layerprof --help')\n");
        rc = LP_EXIT_USAGE;
    } else if (!rc) {
        if (isatty(STDERR_FILENO)) o.progress = show_progress; /* quiet when piped or logged */
        lp_session *s = NULL;
        cli_signals_watch(NULL); /* a signal while the model loads stops the run at once */
        int status = lp_session_open(&s, &o);
        if (!status) cli_signals_watch(s);
        if (!status) status = lp_session_run(s);
        if (!status) status = lp_session_write_outputs(s);
        if (status && o.progress) fputs("\r\033[K", stderr); /* a failed run leaves its line */
        rc = status ? fail(status) : 0;
        cli_signals_unwatch();
        if (!rc && cli_signal_caught()) rc = 128 + cli_signal_caught();
        lp_session_close(s);
    }
    lp_options_release(&o);
    lp_config_free(cfg);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "diff") == 0) return lp_cli_diff(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "merge") == 0) return lp_cli_merge(argc - 1, argv + 1);
    cli_args a;
    memset(&a, 0, sizeof a);
    int rc = cli_parse(&a, argc, argv);
    if (rc < 0) rc = run(&a);
    cli_args_free(&a);
    return rc;
}

/* signals.c: Ctrl-C and SIGTERM keep what was measured. The first SIGINT or SIGTERM asks the
 * running session to stop after the forward in progress (lp_session_stop, one atomic
 * store); the CLI then writes every report from the completed iterations and exits 128 + the
 * signal, as a shell expects of a program a signal ended. A second signal ends it at once: each
 * handler is one-shot (SA_RESETHAND), so the default action, termination, comes next. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stddef.h>

#include "signals.h"

static volatile sig_atomic_t g_signal;
static lp_session *volatile g_session;

static void on_signal(int sig) {
    if (!g_signal) g_signal = sig;
    lp_session *s = g_session;
    if (s) lp_session_stop(s);
}

void cli_signals_watch(lp_session *s) {
    g_session = s;
    if (s && g_signal) lp_session_stop(s); /* caught before s existed */
    if (s) return;                                 /* installed by the first call */
    struct sigaction sa;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_signals_unwatch(void) {
    g_session = NULL;
}

int cli_signal_caught(void) {
    return g_signal;
}

/* error.c: one message per thread, so concurrent sessions never see each other's errors. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/thread_block.h"
#include "base/thread_local.h"
#include "layerprof.h"

/* Large enough for a positioned config error with the offending line and its caret: too large for
 * the thread-local segment (thread_local.h), so each thread's message lives in a block of its own,
 * made on its first error. */
#define LP_ERROR_MAX 4096
static LP_THREAD_LOCAL char *t_message; /* NULL until the thread's first error */

/* What lp_error_last says when there was no memory to keep the message in. */
static LP_THREAD_LOCAL const char *t_unkept;

static void forget_message(void) {
    t_message = NULL;
}
static lp_thread_block error_block = {.size = LP_ERROR_MAX, .forget = forget_message};

int lp_error_set(int status, const char *fmt, ...) {
    if (!t_message) t_message = lp_thread_block_get(&error_block);
    if (!t_message) {
        t_unkept = "out of memory (the error message could not be kept)";
        return status;
    }
    t_unkept = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_message, LP_ERROR_MAX, fmt, ap);
    va_end(ap);
    return status;
}

void lp_error_clear(void) {
    t_unkept = NULL;
    if (t_message) t_message[0] = '\0';
}

const char *lp_error_last(void) {
    if (t_unkept) return t_unkept;
    return t_message ? t_message : "";
}

const char *lp_status_name(int status) {
    switch (status) {
    case LP_OK:
        return "ok";
    case LP_ERR_INVALID:
        return "invalid argument";
    case LP_ERR_IO:
        return "i/o error";
    case LP_ERR_MODEL:
        return "model error";
    case LP_ERR_RUNTIME:
        return "runtime error";
    case LP_ERR_NOMEM:
        return "out of memory";
    case LP_ERR_UNSUPPORTED:
        return "unsupported";
    case LP_ERR_BUSY:
        return "busy";
    case LP_ERR_NOT_FOUND:
        return "not found";
    case LP_ERR_STATE:
        return "wrong state";
    default:
        return "unknown status";
    }
}

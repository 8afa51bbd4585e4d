/* error.c: one message per thread, so concurrent sessions never see each other's errors. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "layerprof.h"

/* Large enough for a positioned config error with the offending line and its caret. */
static _Thread_local char lp_error_buf[4096];

int lp_error_set(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lp_error_buf, sizeof lp_error_buf, fmt, ap);
    va_end(ap);
    return status;
}

void lp_error_clear(void) {
    lp_error_buf[0] = '\0';
}

const char *lp_error_last(void) {
    return lp_error_buf;
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

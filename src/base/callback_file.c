/* callback_file.c: see callback_file.h. glibc's fopencookie gives a FILE with our own write. */
#define _GNU_SOURCE
#include "base/callback_file.h"

#include <sys/types.h>

#include "base/error.h"

/* glibc: the number of bytes taken, 0 on error (never negative). */
static ssize_t sink_write(void *p, const char *buf, size_t size) {
    lp_callback_sink *sink = p;
    if (sink->refused) return 0;
    if (size && sink->write(sink->payload, buf, size) != 0) {
        sink->refused = 1;
        return 0;
    }
    return (ssize_t)size;
}

FILE *lp_callback_file(lp_callback_sink *sink) {
    sink->refused = 0;
    cookie_io_functions_t io = {.read = NULL, .write = sink_write, .seek = NULL, .close = NULL};
    return fopencookie(sink, "w", io);
}

int lp_callback_file_close(FILE *f, const lp_callback_sink *sink, int status) {
    int flushed = fflush(f) == 0 && !ferror(f);
    fclose(f);
    if (sink->refused)
        return lp_error_set(LP_ERR_IO,
                            "the write callback refused the output (it returned non-zero)");
    if (status) return status;
    return flushed ? LP_OK : lp_error_set(LP_ERR_IO, "writing to the write callback failed");
}

/* callback_file.h: a FILE whose bytes go to a program's write callback (lp_write_fn), so every
 * renderer, which writes to a FILE, writes to the program unchanged. */
#ifndef LP_CALLBACK_FILE_H
#define LP_CALLBACK_FILE_H

#include <stdio.h>

#include "layerprof.h"

/* The callback and what became of it. The caller owns it; it must outlive the FILE. */
typedef struct lp_callback_sink {
    lp_write_fn write;
    void *payload;
    int refused; /* the callback returned non-zero: nothing more was handed to it */
} lp_callback_sink;

/* A write-only stream that hands its buffered bytes to sink->write in order, in pieces of up to
 * BUFSIZ. NULL when out of memory. Close it with lp_callback_file_close. */
FILE *lp_callback_file(lp_callback_sink *sink);

/* Flushes and closes `f`. When the callback refused a piece: LP_ERR_IO saying so (a render that
 * failed on the refused write reports that rather than its own message). Otherwise `status`, or
 * LP_ERR_IO when the flush failed. */
int lp_callback_file_close(FILE *f, const lp_callback_sink *sink, int status);

#endif

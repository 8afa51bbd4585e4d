/* error.h: the thread-local error message behind lp_error_last(). The one error channel of the
 * library: the shim (C++) sets it too, so a message always belongs to the status it came with. */
#ifndef LP_ERROR_H
#define LP_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the thread-local message (printf format) and returns `status`, so failures read
 * `return lp_error_set(LP_ERR_INVALID, "...", ...);`. */
int lp_error_set(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clears the message (successful calls need not call it: the message is read only after a failure).
 */
void lp_error_clear(void);

#ifdef __cplusplus
}
#endif

#endif

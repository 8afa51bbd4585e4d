/* note_list.h: the lines a report carries under its table ("note: ...", "warning: ..."), as a
 * list with no fixed length.
 *
 * A note says something the figures alone do not (the mode, a stop request, what the recording
 * lacks), so losing one misleads: the list grows as needed, and a line it could not keep (out
 * of memory) is counted, never dropped unseen. Not thread-safe: the driving thread and the
 * renderer add notes, never a forward. */
#ifndef LP_NOTE_LIST_H
#define LP_NOTE_LIST_H

#include <stdarg.h>
#include <stddef.h>

typedef struct lp_note_list {
    char **lines; /* the list's own copies, n of them, in the order added */
    size_t n, cap;
    size_t lost; /* lines that could not be kept: out of memory */
} lp_note_list;

/* An empty list (all zero is one too). */
void lp_note_list_init(lp_note_list *l);

/* Adds one line (printf format). LP_OK, or LP_ERR_NOMEM with `lost` counted and the message set. */
int lp_note_list_addf(lp_note_list *l, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* lp_note_list_addf with the arguments as a va_list (a variadic caller's own). */
int lp_note_list_vaddf(lp_note_list *l, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;

/* Frees every line; the list is empty and usable again. */
void lp_note_list_free(lp_note_list *l);

#endif

/* textbuf.h: what the fixed-width tables (the tree, the summary, the diff) share: a text buffer
 * that grows as cells are formatted into it, and the displayed width of UTF-8 text, so the box
 * glyphs and non-ASCII names pad like ASCII ones. */
#ifndef LP_TEXTBUF_H
#define LP_TEXTBUF_H

#include <stddef.h>

/* Zero-initialise ({0}) before use; p is NUL-terminated once anything was put. Out of memory is
 * sticky (oom), so callers check it once at the end instead of after every append. */
typedef struct lp_textbuf {
    char *p;
    size_t len, cap;
    int oom;
} lp_textbuf;

void lp_textbuf_put(lp_textbuf *b, const char *s, size_t n);
void lp_textbuf_puts(lp_textbuf *b, const char *s);
void lp_textbuf_printf(lp_textbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* `n` copies of `c`. */
void lp_textbuf_pad(lp_textbuf *b, char c, size_t n);
void lp_textbuf_free(lp_textbuf *b);

/* Columns `s` takes on a terminal: one per UTF-8 code point. */
size_t lp_text_width(const char *s);

#endif

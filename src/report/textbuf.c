/* textbuf.c: see textbuf.h. */
#include "report/textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lp_textbuf_put(lp_textbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void lp_textbuf_puts(lp_textbuf *b, const char *s) {
    lp_textbuf_put(b, s, strlen(s));
}

void lp_textbuf_printf(lp_textbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        lp_textbuf_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1); /* rare: a long op name or shape signature */
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    lp_textbuf_put(b, big, (size_t)n);
    free(big);
}

void lp_textbuf_pad(lp_textbuf *b, char c, size_t n) {
    for (size_t i = 0; i < n; i++)
        lp_textbuf_put(b, &c, 1);
}

void lp_textbuf_free(lp_textbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

size_t lp_text_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

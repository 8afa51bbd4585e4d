/* note_list.c: the lines under a report's table, as a list with no fixed length. */
#include "base/note_list.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "layerprof.h"

void lp_note_list_init(lp_note_list *l) {
    *l = (lp_note_list){0};
}

static int lost(lp_note_list *l) {
    l->lost++;
    return lp_error_set(LP_ERR_NOMEM, "out of memory keeping a report's note");
}

int lp_note_list_vaddf(lp_note_list *l, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    if (len < 0) {
        va_end(again);
        return lost(l);
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        char **grown = realloc(l->lines, cap * sizeof *grown);
        if (!grown) {
            va_end(again);
            return lost(l);
        }
        l->lines = grown;
        l->cap = cap;
    }
    char *line = malloc((size_t)len + 1);
    if (line) vsnprintf(line, (size_t)len + 1, fmt, again);
    va_end(again);
    if (!line) return lost(l);
    l->lines[l->n++] = line;
    return LP_OK;
}

int lp_note_list_addf(lp_note_list *l, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = lp_note_list_vaddf(l, fmt, ap);
    va_end(ap);
    return rc;
}

void lp_note_list_free(lp_note_list *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->lines[i]);
    free(l->lines);
    lp_note_list_init(l);
}

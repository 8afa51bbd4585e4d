/* suggest.c: edit distance for "did you mean" hints. Names are short, so the textbook two-row
 * dynamic programme is plenty; it only runs on the error path. */
#include "base/suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int same(char a, char b) {
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

size_t lp_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    size_t *prev = malloc((lb + 1) * sizeof *prev);
    size_t *cur = malloc((lb + 1) * sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return SIZE_MAX;
    }
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev[j - 1] + !same(a[i - 1], b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            size_t best = sub < del ? sub : del;
            cur[j] = best < ins ? best : ins;
        }
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(prev);
    free(cur);
    return d;
}

const char *lp_closest(const char *word, const char *const *candidates, size_t n) {
    if (!word || !candidates) return NULL;
    /* A third of the word keeps long paths forgiving while "time" never suggests "calls". */
    size_t limit = strlen(word) / 3;
    if (limit < 2) limit = 2;
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i]) continue;
        size_t d = lp_edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best_d <= limit ? best : NULL;
}

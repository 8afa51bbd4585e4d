/* suggest.h: "did you mean" for every name a user types (column ids, config keys, module paths). */
#ifndef LP_SUGGEST_H
#define LP_SUGGEST_H

#include <stddef.h>

/* The candidate closest to `word` by edit distance (Levenshtein, ASCII case ignored), or NULL when
 * none is close enough to be a plausible typo: the distance must be at most max(2, strlen(word)/3).
 * Ties go to the earlier candidate. Returns a pointer into `candidates` (borrowed). NULL entries
 * are skipped. */
const char *lp_closest(const char *word, const char *const *candidates, size_t n);

/* Levenshtein distance between a and b, ASCII case ignored. SIZE_MAX when out of memory. */
size_t lp_edit_distance(const char *a, const char *b);

#endif

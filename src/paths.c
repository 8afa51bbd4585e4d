/* paths.c: see paths.h. Patterns are split into segments once per match; selection runs once per
 * session, never on the hot path. */
#include "paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "layerprof.h"
#include "suggest.h"

#define MAX_SEGS 256

typedef struct segs {
    const char *s[MAX_SEGS];
    size_t len[MAX_SEGS];
    int n;
} segs;

static int split(const char *text, char sep, segs *out) {
    out->n = 0;
    if (!*text) return 0;
    for (const char *p = text;;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (out->n == MAX_SEGS) return -1;
        out->s[out->n] = p;
        out->len[out->n++] = len;
        if (!e) return 0;
        p = e + 1;
    }
}

/* fnmatch-like '*' and '?' within one segment. */
static int glob_seg(const char *p, size_t pl, const char *s, size_t sl) {
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    while (si < sl) {
        if (pi < pl && (p[pi] == '?' || p[pi] == s[si])) {
            pi++;
            si++;
        } else if (pi < pl && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return 0;
        }
    }
    while (pi < pl && p[pi] == '*')
        pi++;
    return pi == pl;
}

static int match_segs(const segs *p, int pi, const segs *s, int si) {
    if (pi == p->n) return si == s->n;
    if (p->len[pi] == 2 && strncmp(p->s[pi], "**", 2) == 0) {
        for (int k = si; k <= s->n; k++)
            if (match_segs(p, pi + 1, s, k)) return 1;
        return 0;
    }
    if (si == s->n) return 0;
    return glob_seg(p->s[pi], p->len[pi], s->s[si], s->len[si]) && match_segs(p, pi + 1, s, si + 1);
}

/* Pattern segments, with the root's class name (torchprof's first tuple element) dropped. */
static int pattern_segs(const lp_tree *t, const char *pattern, segs *out) {
    int tuple = strchr(pattern, ',') != NULL;
    if (split(pattern, tuple ? ',' : '.', out)) return -1;
    const char *root = t->n_nodes ? t->nodes[0].class_name : "";
    if (out->n && strlen(root) == out->len[0] && strncmp(out->s[0], root, out->len[0]) == 0) {
        memmove(&out->s[0], &out->s[1], (size_t)(out->n - 1) * sizeof out->s[0]);
        memmove(&out->len[0], &out->len[1], (size_t)(out->n - 1) * sizeof out->len[0]);
        out->n--;
    }
    return 0;
}

int lp_path_matches(const lp_tree *t, const char *pattern, int32_t node) {
    segs p, s;
    if (pattern_segs(t, pattern, &p) || split(t->nodes[node].path, '.', &s)) return 0;
    return match_segs(&p, 0, &s, 0);
}

/* "did you mean" for a pattern that matched nothing: the closest full paths. */
static int not_found(const lp_tree *t, const char *pattern) {
    const char **cands = malloc(t->n_nodes * sizeof *cands);
    if (!cands) return lp_error_set(LP_ERR_NOT_FOUND, "no module matches path '%s'", pattern);
    for (size_t i = 0; i < t->n_nodes; i++)
        cands[i] = t->nodes[i].path;
    /* Compare like for like: a tuple pattern in dotted form, without the root's class name. */
    char dotted[512];
    snprintf(dotted, sizeof dotted, "%s", pattern);
    for (char *c = dotted; *c; c++)
        if (*c == ',') *c = '.';
    const char *key = dotted;
    size_t rl = t->n_nodes ? strlen(t->nodes[0].class_name) : 0;
    if (rl && strncmp(dotted, t->nodes[0].class_name, rl) == 0 && dotted[rl] == '.')
        key = dotted + rl + 1;
    const char *best = lp_closest(key, cands, t->n_nodes);
    const char *second = NULL;
    if (best) {
        for (size_t i = 0; i < t->n_nodes; i++)
            if (cands[i] == best) cands[i] = NULL;
        second = lp_closest(key, cands, t->n_nodes);
    }
    int rc;
    if (best && second)
        rc = lp_error_set(LP_ERR_NOT_FOUND,
                          "no module matches path '%s'; did you mean '%s' or '%s'?", pattern, best,
                          second);
    else if (best)
        rc = lp_error_set(LP_ERR_NOT_FOUND, "no module matches path '%s'; did you mean '%s'?",
                          pattern, best);
    else
        rc = lp_error_set(
            LP_ERR_NOT_FOUND,
            "no module matches path '%s' (paths are dotted, e.g. '%s', or globs like 'layer1.*')",
            pattern, t->n_nodes > 1 ? t->nodes[1].path : "features.0");
    free(cands);
    return rc;
}

int lp_paths_select(const lp_tree *t, const char *const *patterns, size_t n, uint8_t *selected) {
    memset(selected, 0, t->n_nodes);
    for (size_t k = 0; k < n; k++) {
        segs p;
        if (!patterns[k] || pattern_segs(t, patterns[k], &p))
            return lp_error_set(LP_ERR_INVALID, "path pattern %zu is too long or NULL", k + 1);
        int hits = 0;
        for (size_t i = 0; i < t->n_nodes; i++) {
            segs s;
            if (split(t->nodes[i].path, '.', &s)) continue;
            if (match_segs(&p, 0, &s, 0)) {
                selected[i] = 1;
                hits++;
            }
        }
        if (!hits) return not_found(t, patterns[k]);
    }
    return LP_OK;
}

/* paths.c: see paths.h. Patterns are split into segments once per match; selection runs once per
 * session, never on the hot path. */
#include "model/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "layerprof.h"

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

/* Whether pattern segments p[pi..] match path segments s[si..]. A dynamic programme over
 * (pattern segment, path prefix), O(pattern x path): the obvious recursion tries every split for
 * each "**" and took exponential time on "**.**.**...." (found by fuzz/fuzz_paths.c). */
static int match_segs(const segs *p, int pi, const segs *s, int si) {
    /* reach[j]: the pattern segments consumed so far match s[si..j). */
    uint8_t reach[MAX_SEGS + 1], next[MAX_SEGS + 1];
    memset(reach, 0, sizeof reach);
    reach[si] = 1;
    for (int i = pi; i < p->n; i++) {
        int any = p->len[i] == 2 && strncmp(p->s[i], "**", 2) == 0;
        int alive = 0;
        for (int j = si; j <= s->n; j++) {
            if (any) /* zero segments, or one more than "**" already took */
                next[j] = reach[j] || (j > si && next[j - 1]);
            else
                next[j] = j > si && reach[j - 1] &&
                          glob_seg(p->s[i], p->len[i], s->s[j - 1], s->len[j - 1]);
            alive |= next[j];
        }
        if (!alive) return 0;
        memcpy(reach + si, next + si, (size_t)(s->n - si + 1));
    }
    return reach[s->n];
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

/* A dotted path as the user would have typed it: torchprof's tuple ("AlexNet,features,3") when
 * the pattern was a tuple, with the root's class name in front when the pattern had it. */
static const char *spell_like(const lp_tree *t, const char *pattern, int had_root, const char *path,
                              char *buf, size_t size) {
    int tuple = strchr(pattern, ',') != NULL;
    const char *root = t->n_nodes ? t->nodes[0].class_name : "";
    if (!*path || path == root) return root; /* the root itself */
    if (!tuple && !had_root) return path;
    snprintf(buf, size, "%s%s%s", had_root ? root : "", had_root ? (tuple ? "," : ".") : "", path);
    if (tuple)
        for (char *c = buf; *c; c++)
            if (*c == '.') *c = ',';
    return buf;
}

/* "did you mean" for a pattern that matched nothing: the closest full paths. */
static int not_found(const lp_tree *t, const char *pattern) {
    const char **cands = malloc(t->n_nodes * sizeof *cands);
    if (!cands) return lp_error_set(LP_ERR_NOT_FOUND, "no module matches path '%s'", pattern);
    for (size_t i = 0; i < t->n_nodes; i++) /* the root by its class name: its path is "" */
        cands[i] = i == 0 ? t->nodes[0].class_name : t->nodes[i].path;
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
    /* Suggest in the spelling the user chose: a tuple as a tuple, a root prefix kept. */
    char best_text[512], second_text[512];
    if (best) best = spell_like(t, pattern, key != dotted, best, best_text, sizeof best_text);
    if (second)
        second = spell_like(t, pattern, key != dotted, second, second_text, sizeof second_text);
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

/* schedule.c: torch.profiler's schedule as pure step arithmetic (schedule.h), and its text form
 * "wait=1,warmup=1,active=3,repeat=2" (lp_schedule_parse / lp_schedule_format, layerprof.h).
 *
 * Steps are uint64_t and the four counts are ints, so a cycle (at most 3 * INT_MAX steps) always
 * fits in 64 bits; divisions are used instead of products so that no step number, however large,
 * can overflow. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/schedule.h"

/* Negative counts never pass lp_options_validate; read as 0 so the arithmetic stays defined even
 * for a struct that skipped validation. */
static uint64_t count(int v) {
    return v > 0 ? (uint64_t)v : 0;
}

static uint64_t period(const lp_schedule *s) {
    return count(s->wait) + count(s->warmup) + count(s->active);
}

int lp_sched_on(const lp_schedule *s) {
    return s && s->active > 0;
}

lp_sched_phase lp_sched_phase_of(const lp_schedule *s, uint64_t step) {
    if (!lp_sched_on(s)) return LP_SCHED_RECORD;
    uint64_t p = period(s);
    if (s->repeat > 0 && step / p >= count(s->repeat)) return LP_SCHED_DONE;
    uint64_t pos = step % p;
    if (pos < count(s->wait)) return LP_SCHED_WAIT;
    if (pos < count(s->wait) + count(s->warmup)) return LP_SCHED_WARMUP;
    return LP_SCHED_ACTIVE;
}

int lp_sched_profiled(lp_sched_phase phase) {
    return phase == LP_SCHED_RECORD || phase == LP_SCHED_WARMUP || phase == LP_SCHED_ACTIVE;
}

int lp_sched_starts_active(const lp_schedule *s, uint64_t step) {
    return lp_sched_phase_of(s, step) == LP_SCHED_ACTIVE &&
           step % period(s) == count(s->wait) + count(s->warmup);
}

int lp_sched_ends_cycle(const lp_schedule *s, uint64_t step) {
    return lp_sched_phase_of(s, step) == LP_SCHED_ACTIVE && step % period(s) == period(s) - 1;
}

int lp_sched_cycle_of(const lp_schedule *s, uint64_t step) {
    if (!lp_sched_on(s)) return 0;
    uint64_t c = step / period(s);
    /* Only reachable with repeat 0 and billions of steps: saturate rather than wrap. */
    return c >= (uint64_t)INT_MAX ? INT_MAX : (int)c + 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Text form                                                                                   */

static const char *const keys[] = {"wait", "warmup", "active", "repeat"};
#define N_KEYS (sizeof keys / sizeof keys[0])

static int *field(lp_schedule *s, size_t k) {
    switch (k) {
    case 0:
        return &s->wait;
    case 1:
        return &s->warmup;
    case 2:
        return &s->active;
    default:
        return &s->repeat;
    }
}

static int is_space(char ch) {
    return ch == ' ' || ch == '\t';
}

/* [*b, *e) without the blanks around it: "wait = 1, active=2" reads as typed by hand. */
static void trim(const char **b, const char **e) {
    while (*b < *e && is_space(**b))
        (*b)++;
    while (*e > *b && is_space((*e)[-1]))
        (*e)--;
}

/* Plain decimal digits, no sign, at most INT_MAX. */
static int parse_count(const char *b, const char *e, int *out) {
    long long v = 0;
    if (b == e) return 0;
    for (const char *p = b; p < e; p++) {
        if (*p < '0' || *p > '9') return 0;
        v = v * 10 + (*p - '0');
        if (v > INT_MAX) return 0;
    }
    *out = (int)v;
    return 1;
}

int lp_schedule_parse(const char *text, lp_schedule *out) {
    if (!text || !out) return lp_error_set(LP_ERR_INVALID, "lp_schedule_parse: NULL argument");
    lp_schedule s = {0, 0, 0, 0};
    int seen[N_KEYS] = {0};
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *b = p, *e = end;
        trim(&b, &e);
        /* %.*s takes an int; a part longer than that is garbage anyway, so clip what is quoted. */
        int len = e - b > 200 ? 200 : (int)(e - b);
        if (b == e)
            return lp_error_set(LP_ERR_INVALID,
                                "schedule '%s': an empty entry; expected KEY=N entries separated "
                                "by commas, e.g. wait=1,warmup=1,active=3,repeat=2",
                                text);
        const char *eq = memchr(b, '=', (size_t)(e - b));
        if (!eq)
            return lp_error_set(LP_ERR_INVALID,
                                "schedule '%s': '%.*s' is not KEY=N (keys: wait, warmup, active, "
                                "repeat)",
                                text, len, b);
        const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
        trim(&kb, &ke);
        trim(&vb, &ve);
        char key[32];
        size_t klen = (size_t)(ke - kb) < sizeof key - 1 ? (size_t)(ke - kb) : sizeof key - 1;
        memcpy(key, kb, klen);
        key[klen] = '\0';
        size_t k = 0;
        while (k < N_KEYS && ((size_t)(ke - kb) != strlen(keys[k]) || strcmp(key, keys[k]) != 0))
            k++;
        if (k == N_KEYS) {
            const char *near = lp_closest(key, keys, N_KEYS);
            int klen_q = ke - kb > 200 ? 200 : (int)(ke - kb);
            if (near)
                return lp_error_set(LP_ERR_INVALID,
                                    "schedule '%s': unknown key '%.*s'; did you mean '%s'?", text,
                                    klen_q, kb, near);
            return lp_error_set(LP_ERR_INVALID,
                                "schedule '%s': unknown key '%.*s' (keys: wait, warmup, active, "
                                "repeat)",
                                text, klen_q, kb);
        }
        if (seen[k])
            return lp_error_set(LP_ERR_INVALID, "schedule '%s': '%s' is given twice", text,
                                keys[k]);
        seen[k] = 1;
        if (!parse_count(vb, ve, field(&s, k))) {
            int vlen = ve - vb > 200 ? 200 : (int)(ve - vb);
            return lp_error_set(LP_ERR_INVALID,
                                "schedule '%s': '%s' must be a whole number from 0 to %d, not "
                                "'%.*s'",
                                text, keys[k], INT_MAX, vlen, vb);
        }
        if (!*end) break;
        p = end + 1;
    }
    if (s.active < 1)
        return lp_error_set(LP_ERR_INVALID,
                            "schedule '%s': 'active' must be at least 1 (the steps recorded per "
                            "cycle)",
                            text);
    *out = s;
    return LP_OK;
}

int lp_schedule_format(const lp_schedule *schedule, char *buf, size_t size) {
    static const lp_schedule none = {0, 0, 0, 0};
    const lp_schedule *s = schedule ? schedule : &none;
    if (!buf) size = 0; /* measure only, as snprintf(NULL, 0, ...) does */
    return snprintf(buf, size, "wait=%d,warmup=%d,active=%d,repeat=%d", s->wait, s->warmup,
                    s->active, s->repeat);
}

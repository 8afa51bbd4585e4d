/* option_parse.c: one option's value from text (option_parse.h). Every message here is the one
 * the CLI, the YAML reader and lp_options_set give for that mistake. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/input_spec.h"
#include "base/labels.h"
#include "config/option_parse.h"
#include "report/columns.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int nomem(void) {
    return lp_error_set(LP_ERR_NOMEM, "out of memory setting an option");
}

static int is_continuation(unsigned char ch) {
    return (ch & 0xC0) == 0x80;
}

const char *lp_opt_quote(const char *s, size_t len, char *buf, size_t size) {
    const unsigned char *u = (const unsigned char *)s;
    size_t off = 0, i = 0;
    buf[off++] = '\'';
    for (; i < len && off + 6 < size; i++)
        buf[off++] = u[i] < 0x20 || u[i] == 0x7F ? '?' : (char)u[i];
    if (i < len) {
        while (off > 1 && is_continuation((unsigned char)buf[off - 1]))
            off--; /* whole characters */
        if (off > 1) off--;
        memcpy(buf + off, "...", 3);
        off += 3;
    }
    buf[off++] = '\'';
    buf[off] = '\0';
    return buf;
}

const char *lp_opt_subject(const lp_opt *opt, char *buf, size_t size) {
    snprintf(buf, size, "'%s'", lp_opt_leaf(opt));
    return buf;
}

int lp_opt_wrong(const lp_opt *opt, const char *subject, const char *got) {
    char what[512];
    return lp_error_set(LP_ERR_INVALID, "%s must be %s, got %s", subject,
                        lp_opt_what(opt, what, sizeof what), got);
}

static int wrong_text(const lp_opt *opt, const char *subject, const char *text) {
    char q[LP_OPT_QUOTE_MAX];
    return lp_opt_wrong(opt, subject, lp_opt_quote(text, strlen(text), q, sizeof q));
}

/* "SUBJECT must be WHAT, got 'x'; did you mean 'NEAR'?" (WHAT listing the valid names when
 * `list` is given and nothing is near). */
static int unknown_name(const char *subject, const char *what, const char *list, const char *text,
                        const char *near) {
    char q[LP_OPT_QUOTE_MAX];
    lp_opt_quote(text, strlen(text), q, sizeof q);
    if (near && *text) /* everything is "close" to nothing */
        return lp_error_set(LP_ERR_INVALID, "%s must be %s, got %s; did you mean '%s'?", subject,
                            what, q, near);
    if (list)
        return lp_error_set(LP_ERR_INVALID, "%s must be %s (one of: %s), got %s", subject, what,
                            list, q);
    return lp_error_set(LP_ERR_INVALID, "%s must be %s, got %s", subject, what, q);
}

/* ------------------------------------------------------------------------------------------ */
/* Scalars                                                                                     */

int lp_opt_bool_value(const char *text) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; i < COUNT(yes); i++) {
        if (strcmp(text, yes[i]) == 0) return 1;
        if (strcmp(text, no[i]) == 0) return 0;
    }
    return -1;
}

/* YAML 1.1's octal, hex and 1_000 forms, and "1.5", are more likely typos than intent in a
 * profiler's options: only plain digits are numbers here. */
int lp_opt_parse_digits(const char *s, uint64_t *mag, int *neg) {
    size_t i = 0;
    *neg = 0;
    *mag = 0;
    if (s[0] == '-' || s[0] == '+') *neg = s[i++] == '-';
    if (!s[i]) return 0;
    for (; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (*mag > (UINT64_MAX - d) / 10) return 0;
        *mag = *mag * 10 + d;
    }
    return 1;
}

static int parse_int(const lp_opt *opt, const char *subject, const char *text, int *out) {
    uint64_t mag;
    int neg;
    if (!lp_opt_parse_digits(text, &mag, &neg) || mag > (uint64_t)LLONG_MAX)
        return wrong_text(opt, subject, text);
    long long x = neg ? -(long long)mag : (long long)mag;
    if (x < opt->lo || x > opt->hi) return wrong_text(opt, subject, text);
    *out = (int)x;
    return LP_OK;
}

static int parse_u64(const lp_opt *opt, const char *subject, const char *text, uint64_t *out) {
    uint64_t mag;
    int neg;
    if (!lp_opt_parse_digits(text, &mag, &neg) || (neg && mag))
        return wrong_text(opt, subject, text);
    *out = mag;
    return LP_OK;
}

/* A plain decimal number ("0.01", "1", "1e-3"): no hex, inf or nan, nothing after it. */
static int parse_real(const lp_opt *opt, const char *subject, const char *text, double *out) {
    char *end = NULL;
    int plain = *text && strspn(text, "0123456789.eE+-") == strlen(text);
    double x = plain ? strtod(text, &end) : 0;
    if (!plain || !end || *end || !lp_opt_real_in_range(opt, x))
        return wrong_text(opt, subject, text);
    *out = x;
    return LP_OK;
}

int lp_opt_real_in_range(const lp_opt *opt, double x) {
    if (x != x) return 0; /* NaN */
    return (opt->rlo_open ? x > opt->rlo : x >= opt->rlo) && x <= opt->rhi;
}

int lp_opt_parse_enum(const lp_opt *opt, const char *subject, const char *text, int *out) {
    const lp_cfg_names *t = opt->names;
    const char *names[16];
    size_t n = 0;
    char what[256];
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(text, t->v[i].name) == 0) {
            *out = t->v[i].value;
            return LP_OK;
        }
        if (n < COUNT(names)) names[n++] = t->v[i].name;
    }
    return unknown_name(subject, lp_opt_what(opt, what, sizeof what), NULL, text,
                        lp_closest(text, names, n));
}

/* A column id, checked against the renderers' own table, so a typo fails before the run. */
static int check_column(const lp_opt *opt, const char *subject, const char *id) {
    size_t n, off = 0;
    const lp_column *all = lp_columns_all(&n);
    const char *names[64];
    char list[512] = "";
    if (lp_column_find(id)) return LP_OK;
    if (n > COUNT(names)) n = COUNT(names);
    for (size_t i = 0; i < n; i++) {
        names[i] = all[i].id;
        if (off < sizeof list)
            off +=
                (size_t)snprintf(list + off, sizeof list - off, "%s%s", i ? ", " : "", all[i].id);
    }
    return unknown_name(subject, opt->type == LP_OPT_COLUMNS ? "column ids" : "a column id", list,
                        id, lp_closest(id, names, n));
}

/* "cpu", "cuda", "cuda:N". */
int lp_device_parse(const char *device, int *is_cuda, int *index) {
    *is_cuda = 0;
    *index = -1;
    if (!device || strcmp(device, "cpu") == 0) return LP_OK;
    if (strncmp(device, "cuda", 4) == 0) {
        const char *p = device + 4;
        *is_cuda = 1;
        if (*p == '\0') return LP_OK;
        if (*p == ':' && p[1] >= '0' && p[1] <= '9') {
            int v = 0;
            for (p++; *p >= '0' && *p <= '9' && v < 1000; p++)
                v = v * 10 + (*p - '0');
            if (*p == '\0') {
                *index = v;
                return LP_OK;
            }
        }
    }
    return lp_error_set(LP_ERR_INVALID, "unknown device '%s' (cpu, cuda or cuda:N)", device);
}

static int check_device(const lp_opt *opt, const char *subject, const char *s) {
    static const char *const names[] = {"cpu", "cuda"};
    int is_cuda, index;
    char what[64];
    if (lp_device_parse(s, &is_cuda, &index) == LP_OK) return LP_OK;
    /* "gpu" is closest to "cpu" by spelling but always means cuda. */
    return unknown_name(subject, lp_opt_what(opt, what, sizeof what), NULL, s,
                        strncmp(s, "gpu", 3) == 0 ? "cuda" : lp_closest(s, names, COUNT(names)));
}

int lp_opt_check_string(const lp_opt *opt, const char *subject, const char *text) {
    if (!*text) return wrong_text(opt, subject, text);
    switch (opt->check) {
    case LP_CHECK_DEVICE:
        return check_device(opt, subject, text);
    case LP_CHECK_COLUMN:
        return check_column(opt, subject, text);
    case LP_CHECK_LABEL:
        return lp_label_check(subject, text);
    default:
        return LP_OK;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Lists                                                                                       */

/* `old` (n entries of `size` bytes, possibly borrowed) with room for `extra` more, in the arena. */
static void *grown(lp_arena *a, const void *old, size_t n, size_t extra, size_t size) {
    void *p = lp_arena_alloc(a, n + extra, size);
    if (p && n) memcpy(p, old, n * size);
    return p;
}

/* "a,b, c": ids separated by commas, blanks around each ignored; the list replaces the old one. */
static int parse_columns(const lp_opt *opt, const char *subject, const char *text, lp_options *o,
                         lp_arena *a) {
    const char **ids = lp_arena_alloc(a, opt->max, sizeof *ids);
    size_t n = 0;
    char q[LP_OPT_QUOTE_MAX];
    if (!ids) return nomem();
    for (const char *p = text;;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *b = p, *e = end;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (b == e)
            return lp_error_set(LP_ERR_INVALID,
                                "%s must be column ids separated by commas, got %s (an empty "
                                "entry)",
                                subject, lp_opt_quote(text, strlen(text), q, sizeof q));
        if (n == opt->max)
            return lp_error_set(LP_ERR_INVALID, "%s takes at most %zu entries", subject, opt->max);
        char *id = lp_arena_strndup(a, b, (size_t)(e - b));
        if (!id) return nomem();
        int rc = check_column(opt, subject, id);
        if (rc) return rc;
        ids[n++] = id;
        if (!*end) break;
        p = end + 1;
    }
    *LP_OPT_FIELD(o, opt, const char *const *) = ids;
    *LP_OPT_COUNT(o, opt) = n;
    return LP_OK;
}

static int append_path(const lp_opt *opt, const char *subject, const char *text, lp_options *o,
                       lp_arena *a) {
    size_t n = *LP_OPT_COUNT(o, opt);
    const char **list = grown(a, *LP_OPT_FIELD(o, opt, const char *const *), n, 1, sizeof *list);
    if (!*text) return wrong_text(opt, subject, text);
    int rc = opt->check ? lp_opt_check_string(opt, subject, text) : LP_OK;
    if (rc) return rc;
    if (!list || !(list[n] = lp_arena_strndup(a, text, strlen(text)))) return nomem();
    /* Checked whole before it replaces the old list: an error leaves the options unchanged. */
    if (opt->check == LP_CHECK_LABEL && (rc = lp_labels_check_list(subject, list, n + 1)))
        return rc;
    *LP_OPT_FIELD(o, opt, const char *const *) = list;
    *LP_OPT_COUNT(o, opt) = n + 1;
    return LP_OK;
}

/* One forward argument: its entries go to the end of the list (lp_input_kind). */
static int append_input(const lp_opt *opt, const char *text, lp_options *o, lp_arena *a) {
    size_t n = *LP_OPT_COUNT(o, opt), got = 1;
    if (n >= opt->max)
        return lp_error_set(LP_ERR_INVALID, "at most %zu input entries are allowed", opt->max);
    /* Parsed into room for every entry still allowed, then kept at its own size. */
    lp_input_spec *parsed = calloc(opt->max - n, sizeof *parsed);
    if (!parsed) return nomem();
    int rc = LP_OK;
    if (opt->type == LP_OPT_INPUTS) {
        rc = lp_input_parse_in(a, text, parsed, opt->max - n, &got);
    } else if (opt->type == LP_OPT_INPUT_FILE) {
        rc = lp_input_spec_parse_file_in(a, text, parsed);
    } else if (!*text || strlen(text) >= LP_PATH_MAX) {
        rc = lp_error_set(LP_ERR_INVALID, "--inputs: the file name is %s",
                          *text ? "too long" : "empty");
    } else {
        parsed->kind = LP_INPUT_SAVED;
        if (!(parsed->file = lp_arena_strndup(a, text, strlen(text)))) rc = nomem();
    }
    lp_input_spec *list =
        rc ? NULL : grown(a, *LP_OPT_FIELD(o, opt, const lp_input_spec *), n, got, sizeof *list);
    if (list) memcpy(list + n, parsed, got * sizeof *list);
    free(parsed);
    if (rc) return rc;
    if (!list) return nomem();
    *LP_OPT_FIELD(o, opt, const lp_input_spec *) = list;
    *LP_OPT_COUNT(o, opt) = n + got;
    return LP_OK;
}

const lp_opt lp_opt_output_format = {"format", NULL, LP_OPT_ENUM, .names = &lp_cfg_formats};
const lp_opt lp_opt_output_file = {"file", NULL, LP_OPT_STRING,
                                   .what = "a file path, \"-\" or null for stdout"};

/* "FORMAT" (stdout) or "FORMAT:FILE": a format name holds no ':', a file name may. */
static int append_output(const lp_opt *opt, const char *text, lp_options *o, lp_arena *a) {
    size_t n = *LP_OPT_COUNT(o, opt);
    const char *colon = strchr(text, ':');
    size_t flen = colon ? (size_t)(colon - text) : strlen(text);
    char *format = lp_arena_strndup(a, text, flen);
    lp_output_spec spec = {LP_FORMAT_TREE, NULL};
    int value;
    if (!format) return nomem();
    int rc = lp_opt_parse_enum(&lp_opt_output_format, "'format'", format, &value);
    if (rc) return rc;
    spec.format = (lp_format)value;
    if (colon) {
        if (!colon[1]) return wrong_text(&lp_opt_output_file, "'file'", colon + 1);
        if (!(spec.file = lp_arena_strndup(a, colon + 1, strlen(colon + 1)))) return nomem();
    }
    lp_output_spec *list =
        grown(a, *LP_OPT_FIELD(o, opt, const lp_output_spec *), n, 1, sizeof spec);
    if (!list) return nomem();
    list[n] = spec;
    *LP_OPT_FIELD(o, opt, const lp_output_spec *) = list;
    *LP_OPT_COUNT(o, opt) = n + 1;
    return LP_OK;
}

/* The input and schedule parsers quote the whole value, which may hold a line break: messages
 * stay one line (the CLI prints one; the file reader adds an excerpt below it). */
static int one_line(int rc) {
    char msg[1024];
    if (rc != LP_ERR_INVALID) return rc;
    snprintf(msg, sizeof msg, "%s", lp_error_last());
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = '?';
    return lp_error_set(rc, "%s", msg);
}

/* ------------------------------------------------------------------------------------------ */

int lp_opt_parse(const lp_opt *opt, const char *subject, const char *text, lp_options *o,
                 lp_arena *a) {
    int rc, v;
    switch (opt->type) {
    case LP_OPT_BOOL:
        if ((v = lp_opt_bool_value(text)) < 0) return wrong_text(opt, subject, text);
        *LP_OPT_FIELD(o, opt, int) = v;
        return LP_OK;
    case LP_OPT_INT:
        return parse_int(opt, subject, text, LP_OPT_FIELD(o, opt, int));
    case LP_OPT_U64:
        return parse_u64(opt, subject, text, LP_OPT_FIELD(o, opt, uint64_t));
    case LP_OPT_REAL:
        return parse_real(opt, subject, text, LP_OPT_FIELD(o, opt, double));
    case LP_OPT_ENUM:
        if ((rc = lp_opt_parse_enum(opt, subject, text, &v))) return rc;
        *LP_OPT_FIELD(o, opt, int) = v;
        return LP_OK;
    case LP_OPT_STRING: {
        if ((rc = lp_opt_check_string(opt, subject, text))) return rc;
        char *copy = lp_arena_strndup(a, text, strlen(text));
        if (!copy) return nomem();
        *LP_OPT_FIELD(o, opt, const char *) = copy;
        return LP_OK;
    }
    case LP_OPT_COLUMNS:
        return parse_columns(opt, subject, text, o, a);
    case LP_OPT_PATHS:
        return append_path(opt, subject, text, o, a);
    case LP_OPT_INPUTS:
    case LP_OPT_INPUT_FILE:
    case LP_OPT_INPUT_SAVED:
        return one_line(append_input(opt, text, o, a));
    case LP_OPT_OUTPUTS:
        return append_output(opt, text, o, a);
    case LP_OPT_SCHEDULE:
        return one_line(lp_schedule_parse(text, LP_OPT_FIELD(o, opt, lp_schedule)));
    case LP_OPT_MAPPING:
        break;
    }
    return lp_error_set(LP_ERR_INVALID, "%s is a mapping of options: set its keys (%s.KEY)",
                        subject, opt->key);
}

/* config.c: YAML configuration files (docs/config.md) read into lp_options.
 *
 * libyaml's document API loads the whole file as a graph of nodes that keep their positions; then
 * one table of {key, node type, handler, offset} per mapping walks it, so the tables are the
 * schema and adding an option is adding a row. Every value is checked where it is read, so each
 * error can point at its line and column (netplan's parse.c does the same). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/input_spec.h"
#include "config/names.h"
#include "config/options.h"
#include "layerprof.h"
#include "model/columns.h"

/* A configuration is a text file of a few hundred bytes; anything this large is a wrong path. */
#define CFG_MAX_FILE_BYTES (1u << 20)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Enum fields are written through an int lvalue by the generic enum handler. */
_Static_assert(sizeof(lp_mode) == sizeof(int), "lp_mode is int-sized");
_Static_assert(sizeof(lp_units) == sizeof(int), "lp_units is int-sized");
_Static_assert(sizeof(lp_format) == sizeof(int), "lp_format is int-sized");
_Static_assert(sizeof(lp_fill) == sizeof(int), "lp_fill is int-sized");
_Static_assert(sizeof(lp_dtype) == sizeof(int), "lp_dtype is int-sized");

/* ------------------------------------------------------------------------------------------ */
/* Enum names (shared with the writer through config_internal.h)                              */

static const lp_cfg_name mode_names[] = {{"hooks", LP_MODE_HOOKS}, {"graph", LP_MODE_GRAPH}};
static const lp_cfg_name units_names[] = {
    {"auto", LP_UNITS_AUTO}, {"us", LP_UNITS_US}, {"ms", LP_UNITS_MS}, {"s", LP_UNITS_S}};
static const lp_cfg_name format_names[] = {
    {"tree", LP_FORMAT_TREE},         {"json", LP_FORMAT_JSON},   {"csv", LP_FORMAT_CSV},
    {"markdown", LP_FORMAT_MARKDOWN}, {"trace", LP_FORMAT_TRACE}, {"html", LP_FORMAT_HTML},
    {"summary", LP_FORMAT_SUMMARY},   {"md", LP_FORMAT_MARKDOWN}, {"chrome", LP_FORMAT_TRACE}};
static const lp_cfg_name cuda_timing_names[] = {{"auto", LP_CUDA_TIMING_AUTO},
                                                {"cupti", LP_CUDA_TIMING_CUPTI},
                                                {"events", LP_CUDA_TIMING_EVENTS},
                                                {"off", LP_CUDA_TIMING_OFF}};
static const lp_cfg_name fill_names[] = {{"random", LP_FILL_RANDOM}, {"zeros", LP_FILL_ZEROS},
                                         {"ones", LP_FILL_ONES},     {"file", LP_FILL_FILE},
                                         {"rand", LP_FILL_RANDOM},   {"zero", LP_FILL_ZEROS},
                                         {"one", LP_FILL_ONES}};

const lp_cfg_names lp_cfg_modes = {mode_names, COUNT(mode_names), "mode"};
const lp_cfg_names lp_cfg_units = {units_names, COUNT(units_names), "units"};
const lp_cfg_names lp_cfg_formats = {format_names, COUNT(format_names), "format"};
const lp_cfg_names lp_cfg_fills = {fill_names, COUNT(fill_names), "fill"};
const lp_cfg_names lp_cfg_cuda_timings = {cuda_timing_names, COUNT(cuda_timing_names),
                                          "cuda_timing"};

const char *lp_cfg_name_of(const lp_cfg_names *t, int value) {
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].value == value) return t->v[i].name;
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The configuration and the parsing context                                                  */

struct lp_config {
    lp_options opts;
    void **owned; /* every allocation the options point into, freed together */
    size_t n_owned, cap_owned;
};

typedef struct cfg_ctx {
    const char *name; /* file name for messages */
    const char *text; /* the source, to quote the offending line */
    size_t len;
    yaml_document_t *doc;
    lp_config *cfg;
} cfg_ctx;

static int nomem(void) {
    return lp_error_set(LP_ERR_NOMEM, "out of memory reading the configuration");
}

/* Zeroed memory owned by the configuration. */
static void *cfg_alloc(cfg_ctx *c, size_t n, size_t size) {
    lp_config *cfg = c->cfg;
    if (size && n > SIZE_MAX / size) return NULL;
    if (cfg->n_owned == cfg->cap_owned) {
        size_t cap = cfg->cap_owned ? cfg->cap_owned * 2 : 16;
        void **p = realloc(cfg->owned, cap * sizeof *p);
        if (!p) return NULL;
        cfg->owned = p;
        cfg->cap_owned = cap;
    }
    void *mem = calloc(n ? n : 1, size ? size : 1);
    if (mem) cfg->owned[cfg->n_owned++] = mem;
    return mem;
}

/* ------------------------------------------------------------------------------------------ */
/* Positioned messages: "file:line:column: message", the line, a caret under the column        */

/* The length of the line break at s[i], 0 if none. libyaml ends a line at each of these, so its
 * line numbers and ours agree. */
static size_t break_len(const char *s, size_t len, size_t i) {
    const unsigned char *u = (const unsigned char *)s;
    if (u[i] == '\n') return 1;
    if (u[i] == '\r') return i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
    if (u[i] == 0xC2 && i + 1 < len && u[i + 1] == 0x85) return 2; /* NEL */
    if (u[i] == 0xE2 && i + 2 < len && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9))
        return 3; /* LS, PS */
    return 0;
}

/* Where the text proper starts: libyaml drops a UTF-8 byte order mark before counting columns. */
static size_t text_start(const cfg_ctx *c) {
    return c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* UTF-16 files are decoded by libyaml but cannot be quoted byte for byte. */
static int text_is_utf16(const cfg_ctx *c) {
    const unsigned char *u = (const unsigned char *)c->text;
    return c->len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF));
}

static int is_continuation(unsigned char ch) {
    return (ch & 0xC0) == 0x80;
}

/* libyaml's reader reports a byte offset rather than a mark; columns count characters. */
static yaml_mark_t mark_at_offset(const cfg_ctx *c, size_t offset) {
    yaml_mark_t m = {offset, 0, 0};
    size_t i = text_start(c);
    if (offset > c->len) offset = c->len;
    while (i < offset) {
        size_t b = break_len(c->text, c->len, i);
        if (b) {
            m.line++;
            m.column = 0;
            i += b;
        } else {
            if (!is_continuation((unsigned char)c->text[i])) m.column++;
            i++;
        }
    }
    return m;
}

/* The byte offset where 0-based line `line` starts, or SIZE_MAX past the end of the text. */
static size_t find_line(const cfg_ctx *c, size_t line) {
    size_t i = text_start(c), at = 0;
    while (at < line && i < c->len) {
        size_t b = break_len(c->text, c->len, i);
        i += b ? b : 1;
        at += b != 0;
    }
    return at == line ? i : SIZE_MAX;
}

/* 1 when nothing but white space follows the start of mark's line: libyaml reports an unclosed
 * bracket or quote there, and the message should say so rather than quote an empty line. */
static int at_end_of_text(const cfg_ctx *c, yaml_mark_t mark) {
    size_t i = find_line(c, mark.line);
    if (i == SIZE_MAX) return 1;
    for (; i < c->len; i++)
        if (!strchr(" \t\r\n", c->text[i])) return 0;
    return 1;
}

/* Appends "\n  LINE\n  CARET" for mark to buf; nothing when the line is empty or missing. Long
 * lines are cut to a window around the column so the caret stays on screen. */
static void format_excerpt(const cfg_ctx *c, yaml_mark_t mark, char *buf, size_t size) {
    enum { BEFORE = 60, WIDTH = 120 };
    buf[0] = '\0';
    if (text_is_utf16(c)) return;
    size_t i = find_line(c, mark.line);
    if (i == SIZE_MAX) return;
    size_t end = i;
    while (end < c->len && !break_len(c->text, c->len, end))
        end++;
    if (end == i) return;

    /* Skip to the window's first character, counting characters (columns) as libyaml does. */
    size_t first = mark.column > BEFORE + 20 ? mark.column - BEFORE : 0, col = 0;
    while (i < end && col < first) {
        i++;
        while (i < end && is_continuation((unsigned char)c->text[i]))
            i++;
        col++;
    }
    size_t off = 0;
    char line_buf[WIDTH * 4 + 16], caret[WIDTH + 16];
    size_t coff = 0;
    if (first) {
        memcpy(line_buf, "...", 3);
        memcpy(caret, "   ", 3);
        off = coff = 3;
    }
    size_t shown = 0;
    /* Bounded by bytes as well as characters: malformed UTF-8 can make a "character" long. */
    while (i < end && shown < WIDTH && off + 8 < sizeof line_buf) {
        unsigned char ch = (unsigned char)c->text[i];
        /* Control bytes would garble the terminal; a tab stays a tab so the caret lines up. */
        line_buf[off++] = ch < 0x20 && ch != '\t' ? '?' : (char)ch;
        i++;
        while (i < end && is_continuation((unsigned char)c->text[i]) && off + 8 < sizeof line_buf)
            line_buf[off++] = c->text[i++];
        if (col < mark.column) caret[coff++] = ch == '\t' ? '\t' : ' ';
        col++;
        shown++;
    }
    if (i < end) {
        memcpy(line_buf + off, "...", 3);
        off += 3;
    }
    line_buf[off] = '\0';
    while (col < mark.column && coff < WIDTH + 8) {
        caret[coff++] = ' ';
        col++;
    }
    caret[coff] = '\0';
    snprintf(buf, size, "\n  %s\n  %s^", line_buf, caret);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
cfg_error_at(const cfg_ctx *c, yaml_mark_t mark, const char *fmt, ...) {
    char msg[1024], excerpt[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    format_excerpt(c, mark, excerpt, sizeof excerpt);
    return lp_error_set(LP_ERR_INVALID, "%s:%zu:%zu: %s%s", c->name, mark.line + 1, mark.column + 1,
                        msg, excerpt);
}

static int syntax_error(const cfg_ctx *c, const yaml_parser_t *p) {
    if (p->error == YAML_MEMORY_ERROR) return nomem();
    const char *problem = p->problem ? p->problem : "not valid YAML";
    if (p->error == YAML_READER_ERROR)
        return cfg_error_at(c, mark_at_offset(c, p->problem_offset), "syntax error: %s", problem);
    const char *where = at_end_of_text(c, p->problem_mark) ? " at the end of the file" : "";
    if (p->context)
        return cfg_error_at(c, p->problem_mark, "syntax error%s: %s (%s at line %zu, column %zu)",
                            where, problem, p->context, p->context_mark.line + 1,
                            p->context_mark.column + 1);
    return cfg_error_at(c, p->problem_mark, "syntax error%s: %s", where, problem);
}

/* ------------------------------------------------------------------------------------------ */
/* Node helpers                                                                               */

static const char *scalar(const yaml_node_t *n) {
    return (const char *)n->data.scalar.value;
}

static int is_plain(const yaml_node_t *n) {
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* YAML's null: an empty value, ~ or null, unquoted. */
static int is_null(const yaml_node_t *n) {
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (!is_plain(n)) return 0;
    for (size_t i = 0; i < COUNT(nulls); i++)
        if (strcmp(scalar(n), nulls[i]) == 0) return 1;
    return 0;
}

/* A value as messages quote it: 'text' (clipped, control characters hidden) or its kind. */
static const char *describe(const yaml_node_t *n, char *buf, size_t size) {
    if (n->type == YAML_SEQUENCE_NODE) return "a list";
    if (n->type == YAML_MAPPING_NODE) return "a mapping";
    if (is_null(n)) return "null";
    const unsigned char *s = n->data.scalar.value;
    size_t len = n->data.scalar.length, off = 0, i = 0;
    buf[off++] = '\'';
    for (; i < len && off + 6 < size; i++)
        buf[off++] = s[i] < 0x20 || s[i] == 0x7F ? '?' : (char)s[i];
    if (i < len) {
        while (off > 1 && is_continuation((unsigned char)buf[off - 1]))
            off--; /* whole chars */
        if (off > 1) off--;
        memcpy(buf + off, "...", 3);
        off += 3;
    }
    buf[off++] = '\'';
    buf[off] = '\0';
    return buf;
}

static yaml_node_t *item(const cfg_ctx *c, const yaml_node_t *seq, size_t i) {
    return yaml_document_get_node(c->doc, seq->data.sequence.items.start[i]);
}

static size_t seq_len(const yaml_node_t *seq) {
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* Plain decimal digits with an optional sign: YAML 1.1's octal, hex and 1_000 forms are more
 * likely typos than intent in a profiler's options. 0 when malformed or past UINT64_MAX. */
static int parse_digits(const yaml_node_t *n, uint64_t *mag, int *neg) {
    if (!is_plain(n)) return 0;
    const char *s = scalar(n);
    size_t len = n->data.scalar.length, i = 0;
    *neg = 0;
    *mag = 0;
    if (len && (s[0] == '-' || s[0] == '+')) *neg = s[i++] == '-';
    if (i == len) return 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (*mag > (UINT64_MAX - d) / 10) return 0;
        *mag = *mag * 10 + d;
    }
    return 1;
}

/* A finite decimal number ("0", "-1.5", "1e-3"); hex floats, inf and nan are refused. */
static int parse_number(const yaml_node_t *n, double *out) {
    if (!is_plain(n)) return 0;
    const char *s = scalar(n);
    size_t len = n->data.scalar.length, i = 0, digits = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < len && s[i] == '.')
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (!digits) return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp_digits = 0;
        if (++i < len && (s[i] == '-' || s[i] == '+')) i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            exp_digits++;
        if (!exp_digits) return 0;
    }
    if (i != len) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + len || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* The schema: one table of keys per mapping                                                  */

typedef struct cfg_key cfg_key;
typedef struct cfg_table cfg_table;

/* Reads `value` (already known to have the key's node type) into the struct at `base`. */
typedef int (*cfg_handler)(cfg_ctx *c, yaml_node_t *value, void *base, const cfg_key *key);

struct cfg_key {
    const char *name;
    yaml_node_type_t type; /* the node type the value must have; YAML_NO_NODE: the handler
                              takes several and checks them itself */
    cfg_handler handler;
    size_t offset;             /* of the field, in the struct the mapping fills */
    const char *what;          /* the value expected, for messages: "true or false" */
    long long lo, hi;          /* integer range */
    size_t count;              /* lists: offset of the element count */
    size_t max;                /* lists: most entries allowed, 0 for no limit */
    const lp_cfg_names *names; /* enums */
    const cfg_table *sub;      /* nested mappings */
    /* strings: a further check of the value (column ids) */
    int (*check)(cfg_ctx *c, const yaml_node_t *v, const char *s);
};

struct cfg_table {
    const cfg_key *keys;
    size_t n;
    const char *where; /* "the top level", "'display'": where messages say the key was */
};

#define FIELD(base, key, type) ((type *)(void *)((char *)(base) + (key)->offset))

static int parse_mapping(cfg_ctx *c, yaml_node_t *map, const cfg_table *t, void *base);

static int wrong_value(cfg_ctx *c, const yaml_node_t *v, const cfg_key *key) {
    char buf[96];
    return cfg_error_at(c, v->start_mark, "'%s' must be %s, got %s", key->name, key->what,
                        describe(v, buf, sizeof buf));
}

/* The value as a string owned by the configuration; NULL for YAML null. Empty strings and strings
 * with NUL characters ("\0" escapes) are refused: no option has a use for them. */
static int read_string(cfg_ctx *c, const yaml_node_t *v, const cfg_key *key, const char **out) {
    *out = NULL;
    if (is_null(v)) return LP_OK;
    size_t len = v->data.scalar.length;
    if (len == 0 || strlen(scalar(v)) != len) return wrong_value(c, v, key);
    char *s = cfg_alloc(c, len + 1, 1);
    if (!s) return nomem();
    memcpy(s, scalar(v), len);
    *out = s;
    return LP_OK;
}

static int h_string(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    const char **field = FIELD(base, key, const char *);
    int rc = read_string(c, v, key, field);
    return !rc && *field && key->check ? key->check(c, v, *field) : rc;
}

static int h_bool(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; is_plain(v) && i < COUNT(yes); i++) {
        int b = strcmp(scalar(v), yes[i]) == 0 ? 1 : strcmp(scalar(v), no[i]) == 0 ? 0 : -1;
        if (b >= 0) {
            *FIELD(base, key, int) = b;
            return LP_OK;
        }
    }
    return wrong_value(c, v, key);
}

static int h_int(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    uint64_t mag;
    int neg;
    if (!parse_digits(v, &mag, &neg) || mag > (uint64_t)LLONG_MAX) return wrong_value(c, v, key);
    long long x = neg ? -(long long)mag : (long long)mag;
    if (x < key->lo || x > key->hi) return wrong_value(c, v, key);
    *FIELD(base, key, int) = (int)x;
    return LP_OK;
}

static int h_u64(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    uint64_t mag;
    int neg;
    if (!parse_digits(v, &mag, &neg) || (neg && mag)) return wrong_value(c, v, key);
    *FIELD(base, key, uint64_t) = mag;
    return LP_OK;
}

/* "unknown WHAT 'x'; did you mean 'NEAR'?" or, with no NEAR, "unknown WHAT 'x' (expected ...)". */
static int unknown_name(cfg_ctx *c, const yaml_node_t *v, const char *what, const char *near,
                        const char *expected) {
    char buf[96];
    if (near)
        return cfg_error_at(c, v->start_mark, "unknown %s %s; did you mean '%s'?", what,
                            describe(v, buf, sizeof buf), near);
    return cfg_error_at(c, v->start_mark, "unknown %s %s (expected %s)", what,
                        describe(v, buf, sizeof buf), expected);
}

static int h_enum(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    const lp_cfg_names *t = key->names;
    const char *names[16];
    size_t n = 0;
    if (is_null(v)) return wrong_value(c, v, key);
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(scalar(v), t->v[i].name) == 0 && strlen(scalar(v)) == v->data.scalar.length) {
            *FIELD(base, key, int) = t->v[i].value;
            return LP_OK;
        }
        if (n < COUNT(names)) names[n++] = t->v[i].name;
    }
    return unknown_name(c, v, t->what, lp_closest(scalar(v), names, n), key->what);
}

static int h_device(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    static const char *const names[] = {"cpu", "cuda"};
    const char *s;
    int rc = read_string(c, v, key, &s);
    int is_cuda, index;
    if (rc) return rc;
    /* "gpu" is closest to "cpu" by spelling but always means cuda. */
    if (s && lp_device_parse(s, &is_cuda, &index) != LP_OK)
        return unknown_name(c, v, "device",
                            strncmp(s, "gpu", 3) == 0 ? "cuda" : lp_closest(s, names, COUNT(names)),
                            key->what);
    *FIELD(base, key, const char *) = s;
    return LP_OK;
}

/* Column ids are checked against the renderers' own table, so a typo gets a position here rather
 * than a bare message when the report is drawn. */
static int check_column(cfg_ctx *c, const yaml_node_t *v, const char *id) {
    size_t n, off = 0;
    const lp_column *all = lp_columns_all(&n);
    const char *names[64];
    char expected[512] = "";
    if (lp_column_find(id)) return LP_OK;
    if (n > COUNT(names)) n = COUNT(names);
    for (size_t i = 0; i < n; i++) {
        names[i] = all[i].id;
        if (off < sizeof expected)
            off += (size_t)snprintf(expected + off, sizeof expected - off, "%s%s",
                                    i ? ", " : "one of: ", all[i].id);
    }
    return unknown_name(c, v, "column", lp_closest(id, names, n), expected);
}

static int h_mapping(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    return parse_mapping(c, v, key->sub, base);
}

/* A list of non-empty strings into a (const char *const *, size_t) pair of fields. */
static int h_strings(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    size_t n = seq_len(v);
    const char **list = NULL;
    if (key->max && n > key->max)
        return cfg_error_at(c, item(c, v, key->max)->start_mark, "'%s' takes at most %zu entries",
                            key->name, key->max);
    if (n && !(list = cfg_alloc(c, n, sizeof *list))) return nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = item(c, v, i);
        char buf[96];
        if (it->type != YAML_SCALAR_NODE || is_null(it))
            return cfg_error_at(c, it->start_mark, "each entry of '%s' must be a string, got %s",
                                key->name, describe(it, buf, sizeof buf));
        int rc = read_string(c, it, key, &list[i]);
        if (!rc && key->check) rc = key->check(c, it, list[i]);
        if (rc) return rc;
    }
    *FIELD(base, key, const char *const *) = list;
    *(size_t *)(void *)((char *)base + key->count) = n;
    return LP_OK;
}

/* Inputs ------------------------------------------------------------------------------------ */

/* One input while it is read: the spec plus what the cross-key checks need to point at. */
typedef struct cfg_input {
    lp_input_spec spec;
    int fill_given, file_given;
    yaml_mark_t fill_mark, range_mark;
} cfg_input;

static int h_shape(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    cfg_input *in = base;
    size_t n = seq_len(v);
    char buf[96];
    if (n < 1 || n > LP_MAX_DIMS)
        return cfg_error_at(c, v->start_mark, "'shape' must have 1 to %d dimensions, got %zu",
                            LP_MAX_DIMS, n);
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = item(c, v, i);
        uint64_t mag;
        int neg;
        if (it->type != YAML_SCALAR_NODE || !parse_digits(it, &mag, &neg) || neg || mag == 0 ||
            mag > (uint64_t)INT64_MAX)
            return cfg_error_at(c, it->start_mark,
                                "each dimension of '%s' must be a positive integer, got %s",
                                key->name, describe(it, buf, sizeof buf));
        in->spec.shape[i] = (int64_t)mag;
    }
    in->spec.ndim = (int)n;
    return LP_OK;
}

static int h_dtype(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    cfg_input *in = base;
    const char *names[LP_DTYPE_BOOL + 1];
    if (!is_null(v) && lp_dtype_from_name(scalar(v), v->data.scalar.length, &in->spec.dtype))
        return LP_OK;
    if (is_null(v)) return wrong_value(c, v, key);
    for (int d = 0; d <= LP_DTYPE_BOOL; d++)
        names[d] = lp_dtype_name((lp_dtype)d);
    return unknown_name(c, v, "dtype", lp_closest(scalar(v), names, COUNT(names)), key->what);
}

static int h_fill(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    cfg_input *in = base;
    in->fill_given = 1;
    in->fill_mark = v->start_mark;
    return h_enum(c, v, base, key);
}

static int h_range(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    cfg_input *in = base;
    double lo, hi;
    if (seq_len(v) != 2 || item(c, v, 0)->type != YAML_SCALAR_NODE ||
        item(c, v, 1)->type != YAML_SCALAR_NODE || !parse_number(item(c, v, 0), &lo) ||
        !parse_number(item(c, v, 1), &hi))
        return cfg_error_at(c, v->start_mark, "'%s' must be %s", key->name, key->what);
    if (!(lo < hi))
        return cfg_error_at(c, v->start_mark, "'%s' is empty: low must be below high", key->name);
    in->spec.has_range = 1;
    in->spec.low = lo;
    in->spec.high = hi;
    in->range_mark = v->start_mark;
    return LP_OK;
}

static int h_input_file(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    cfg_input *in = base;
    size_t len = v->data.scalar.length;
    /* The spec holds the path itself (a fixed array), so nothing is allocated here. */
    if (is_null(v) || len == 0 || strlen(scalar(v)) != len) return wrong_value(c, v, key);
    if (len >= sizeof in->spec.file)
        return cfg_error_at(c, v->start_mark, "'%s' is longer than %d bytes", key->name,
                            LP_PATH_MAX - 1);
    memcpy(in->spec.file, scalar(v), len + 1);
    in->file_given = 1;
    return LP_OK;
}

#define IN(f) offsetof(cfg_input, f)
static const cfg_key input_keys[] = {
    {"shape", YAML_SEQUENCE_NODE, h_shape, 0, .what = "a list of positive integers"},
    {"dtype", YAML_SCALAR_NODE, h_dtype, 0,
     .what = "float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8 or bool"},
    {"fill", YAML_SCALAR_NODE, h_fill, IN(spec.fill), .what = "random, zeros, ones or file",
     .names = &lp_cfg_fills},
    {"range", YAML_SEQUENCE_NODE, h_range, 0, .what = "[low, high], two numbers"},
    {"file", YAML_SCALAR_NODE, h_input_file, 0, .what = "the path of a raw data file"},
};
static const cfg_table input_table = {input_keys, COUNT(input_keys), "an input"};

/* The rules that involve several keys of one input, as lp_input_spec_parse has them. */
static int check_input(cfg_ctx *c, const yaml_node_t *map, cfg_input *in) {
    lp_input_spec *s = &in->spec;
    if (s->ndim == 0)
        return cfg_error_at(c, map->start_mark,
                            "an input needs a 'shape', e.g. {shape: [1, 3, 224, 224]}");
    if (in->file_given) {
        if (in->fill_given && s->fill != LP_FILL_FILE)
            return cfg_error_at(c, in->fill_mark, "'fill: %s' conflicts with 'file'",
                                lp_cfg_name_of(&lp_cfg_fills, (int)s->fill));
        s->fill = LP_FILL_FILE;
    } else if (s->fill == LP_FILL_FILE) {
        return cfg_error_at(c, in->fill_mark, "'fill: file' needs a 'file' to read");
    }
    if (s->has_range && s->fill != LP_FILL_RANDOM)
        return cfg_error_at(c, in->range_mark, "'range' applies to random values only, not to %s",
                            s->fill == LP_FILL_FILE ? "a file"
                                                    : lp_cfg_name_of(&lp_cfg_fills, (int)s->fill));
    if (s->fill == LP_FILL_RANDOM && lp_dtype_is_integer(s->dtype) && s->dtype != LP_DTYPE_BOOL &&
        !s->has_range)
        return cfg_error_at(c, map->start_mark, "random %s values need a 'range: [low, high]'",
                            lp_dtype_name(s->dtype));
    return LP_OK;
}

static int h_inputs(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    size_t n = seq_len(v);
    lp_input_spec *specs = NULL;
    char buf[96];
    if (n > LP_MAX_INPUTS)
        return cfg_error_at(c, item(c, v, LP_MAX_INPUTS)->start_mark,
                            "at most %d inputs are allowed", LP_MAX_INPUTS);
    if (n && !(specs = cfg_alloc(c, n, sizeof *specs))) return nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = item(c, v, i);
        if (it->type != YAML_MAPPING_NODE)
            return cfg_error_at(c, it->start_mark,
                                "each entry of 'inputs' must be a mapping such as "
                                "{shape: [1, 3, 224, 224], dtype: float32}, got %s",
                                describe(it, buf, sizeof buf));
        cfg_input in = {0};
        in.spec.dtype = LP_DTYPE_FLOAT32;
        in.spec.fill = LP_FILL_RANDOM;
        int rc = parse_mapping(c, it, &input_table, &in);
        if (!rc) rc = check_input(c, it, &in);
        if (rc) return rc;
        specs[i] = in.spec;
    }
    *FIELD(base, key, const lp_input_spec *) = specs;
    *(size_t *)(void *)((char *)base + key->count) = n;
    return LP_OK;
}

/* Outputs ----------------------------------------------------------------------------------- */

#define OUT(f) offsetof(lp_output_spec, f)
static const cfg_key output_keys[] = {
    {"format", YAML_SCALAR_NODE, h_enum, OUT(format),
     .what = "tree, json, csv, markdown, trace, html or summary", .names = &lp_cfg_formats},
    {"file", YAML_SCALAR_NODE, h_string, OUT(file),
     .what = "a file path, \"-\" or null for stdout"},
};
static const cfg_table output_table = {output_keys, COUNT(output_keys), "an output"};

static int h_outputs(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    size_t n = seq_len(v);
    lp_output_spec *outs = NULL;
    char buf[96];
    if (n && !(outs = cfg_alloc(c, n, sizeof *outs))) return nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = item(c, v, i);
        if (it->type != YAML_MAPPING_NODE)
            return cfg_error_at(c, it->start_mark,
                                "each entry of 'outputs' must be a mapping such as "
                                "{format: tree, file: \"-\"}, got %s",
                                describe(it, buf, sizeof buf));
        outs[i].format = LP_FORMAT_TREE;
        outs[i].file = NULL;
        int rc = parse_mapping(c, it, &output_table, &outs[i]);
        if (rc) return rc;
    }
    *FIELD(base, key, const lp_output_spec *) = outs;
    *(size_t *)(void *)((char *)base + key->count) = n;
    return LP_OK;
}

/* Schedule ---------------------------------------------------------------------------------- */

#define SCHED(f) offsetof(lp_schedule, f)
static const cfg_key schedule_keys[] = {
    {"wait", YAML_SCALAR_NODE, h_int, SCHED(wait), .what = "an integer >= 0", .lo = 0,
     .hi = INT_MAX},
    {"warmup", YAML_SCALAR_NODE, h_int, SCHED(warmup), .what = "an integer >= 0", .lo = 0,
     .hi = INT_MAX},
    {"active", YAML_SCALAR_NODE, h_int, SCHED(active), .what = "an integer >= 1", .lo = 1,
     .hi = INT_MAX},
    {"repeat", YAML_SCALAR_NODE, h_int, SCHED(repeat), .what = "an integer >= 0 (0: no limit)",
     .lo = 0, .hi = INT_MAX},
};
static const cfg_table schedule_table = {schedule_keys, COUNT(schedule_keys), "'schedule'"};

/* A mapping {wait, warmup, active, repeat}, or --schedule's string "wait=1,active=2" so a value
 * can be copied between the command line and the file; null is no schedule. */
static int h_schedule(cfg_ctx *c, yaml_node_t *v, void *base, const cfg_key *key) {
    lp_schedule s = {0, 0, 0, 0};
    if (v->type == YAML_MAPPING_NODE) {
        int rc = parse_mapping(c, v, key->sub, &s);
        if (rc) return rc;
        /* A given active was range-checked where it stands; here it was left out. */
        if (s.active < 1)
            return cfg_error_at(c, v->start_mark,
                                "'schedule' needs 'active', the steps recorded per cycle (at "
                                "least 1)");
    } else if (v->type == YAML_SCALAR_NODE && !is_null(v)) {
        if (strlen(scalar(v)) != v->data.scalar.length) return wrong_value(c, v, key);
        if (lp_schedule_parse(scalar(v), &s) != LP_OK)
            return cfg_error_at(c, v->start_mark, "%s", lp_error_last());
    } else if (v->type != YAML_SCALAR_NODE) {
        return wrong_value(c, v, key);
    }
    *FIELD(base, key, lp_schedule) = s;
    return LP_OK;
}

/* The top level, profile and display -------------------------------------------------------- */

#define OPT(f) offsetof(lp_options, f)
static const cfg_key profile_keys[] = {
    {"memory", YAML_SCALAR_NODE, h_bool, OPT(memory), .what = "true or false"},
    {"events", YAML_SCALAR_NODE, h_bool, OPT(events), .what = "true or false"},
    {"shapes", YAML_SCALAR_NODE, h_bool, OPT(shapes), .what = "true or false"},
    {"trace", YAML_SCALAR_NODE, h_bool, OPT(trace), .what = "true or false"},
    {"trace_iterations", YAML_SCALAR_NODE, h_int, OPT(trace_iterations),
     .what = "an integer >= 0 (0: the first 3)", .lo = 0, .hi = LP_MAX_ITERATIONS},
    {"cuda_timing", YAML_SCALAR_NODE, h_enum, OPT(cuda_timing),
     .what = "auto, cupti, events or off", .names = &lp_cfg_cuda_timings},
    {"nvtx", YAML_SCALAR_NODE, h_bool, OPT(nvtx), .what = "true or false"},
};
static const cfg_table profile_table = {profile_keys, COUNT(profile_keys), "'profile'"};

static const cfg_key display_keys[] = {
    {"depth", YAML_SCALAR_NODE, h_int, OPT(depth), .what = "an integer >= -1 (-1: no limit)",
     .lo = -1, .hi = INT_MAX},
    {"sort", YAML_SCALAR_NODE, h_string, OPT(sort), .what = "a column id, or null for model order",
     .check = check_column},
    {"top", YAML_SCALAR_NODE, h_int, OPT(top), .what = "an integer >= 0", .lo = 0, .hi = INT_MAX},
    {"columns", YAML_SEQUENCE_NODE, h_strings, OPT(columns), .what = "a list of column ids",
     .count = OPT(n_columns), .max = LP_MAX_COLUMNS, .check = check_column},
    {"units", YAML_SCALAR_NODE, h_enum, OPT(units), .what = "auto, us, ms or s",
     .names = &lp_cfg_units},
    {"ascii", YAML_SCALAR_NODE, h_bool, OPT(ascii), .what = "true or false"},
};
static const cfg_table display_table = {display_keys, COUNT(display_keys), "'display'"};

#define STR_(x) #x
#define STR(x) STR_(x)
static const cfg_key top_keys[] = {
    {"model", YAML_SCALAR_NODE, h_string, OPT(model_path),
     .what = "the path of a TorchScript file"},
    {"device", YAML_SCALAR_NODE, h_device, OPT(device), .what = "cpu, cuda or cuda:N"},
    {"mode", YAML_SCALAR_NODE, h_enum, OPT(mode), .what = "hooks or graph", .names = &lp_cfg_modes},
    {"inputs", YAML_SEQUENCE_NODE, h_inputs, OPT(inputs),
     .what = "a list of inputs such as {shape: [1, 3, 224, 224]}", .count = OPT(n_inputs)},
    {"seed", YAML_SCALAR_NODE, h_u64, OPT(seed), .what = "an integer >= 0"},
    {"warmup", YAML_SCALAR_NODE, h_int, OPT(warmup),
     .what = "an integer from 0 to " STR(LP_MAX_ITERATIONS), .lo = 0, .hi = LP_MAX_ITERATIONS},
    {"iterations", YAML_SCALAR_NODE, h_int, OPT(iterations),
     .what = "an integer from 1 to " STR(LP_MAX_ITERATIONS), .lo = 1, .hi = LP_MAX_ITERATIONS},
    {"threads", YAML_SCALAR_NODE, h_int, OPT(threads),
     .what = "an integer from 0 (libtorch's default) to " STR(LP_MAX_INTRAOP_THREADS), .lo = 0,
     .hi = LP_MAX_INTRAOP_THREADS},
    {"schedule", YAML_NO_NODE, h_schedule, OPT(schedule),
     .what = "a mapping of wait, warmup, active and repeat, or a string such as "
             "\"wait=1,warmup=1,active=3,repeat=2\"",
     .sub = &schedule_table},
    {"profile", YAML_MAPPING_NODE, h_mapping, 0,
     .what = "a mapping of memory, events, shapes, trace, trace_iterations, cuda_timing and nvtx",
     .sub = &profile_table},
    {"paths", YAML_SEQUENCE_NODE, h_strings, OPT(paths), .what = "a list of module paths",
     .count = OPT(n_paths)},
    {"display", YAML_MAPPING_NODE, h_mapping, 0,
     .what = "a mapping of depth, sort, top, columns, units and ascii", .sub = &display_table},
    {"outputs", YAML_SEQUENCE_NODE, h_outputs, OPT(outputs),
     .what = "a list of outputs such as {format: tree, file: \"-\"}", .count = OPT(n_outputs)},
    {"summary", YAML_SCALAR_NODE, h_bool, OPT(summary), .what = "true or false"},
    {"verbose", YAML_SCALAR_NODE, h_bool, OPT(verbose), .what = "true or false"},
};
static const cfg_table top_table = {top_keys, COUNT(top_keys), "the top level"};

/* ------------------------------------------------------------------------------------------ */
/* Walking a mapping through its table                                                        */

static const cfg_key *find_key(const cfg_table *t, const yaml_node_t *k) {
    if (strlen(scalar(k)) != k->data.scalar.length) return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->keys[i].name, scalar(k)) == 0) return &t->keys[i];
    return NULL;
}

static int unknown_key(cfg_ctx *c, const yaml_node_t *k, const cfg_table *t) {
    char buf[96], expected[512];
    const char *names[32];
    size_t n = t->n < COUNT(names) ? t->n : COUNT(names), off = 0;
    const char *quoted = describe(k, buf, sizeof buf);
    /* A key of a nested mapping written one level up is a common slip: say where it goes. */
    for (size_t i = 0; i < t->n; i++)
        if (t->keys[i].sub && find_key(t->keys[i].sub, k))
            return cfg_error_at(c, k->start_mark, "unknown key %s in %s; it belongs under '%s'",
                                quoted, t->where, t->keys[i].name);
    for (size_t i = 0; i < n; i++)
        names[i] = t->keys[i].name;
    const char *near = lp_closest(scalar(k), names, n);
    if (near)
        return cfg_error_at(c, k->start_mark, "unknown key %s in %s; did you mean '%s'?", quoted,
                            t->where, near);
    expected[0] = '\0';
    for (size_t i = 0; i < n && off < sizeof expected; i++)
        off += (size_t)snprintf(expected + off, sizeof expected - off, "%s%s", i ? ", " : "",
                                names[i]);
    return cfg_error_at(c, k->start_mark, "unknown key %s in %s (expected one of: %s)", quoted,
                        t->where, expected);
}

static int parse_mapping(cfg_ctx *c, yaml_node_t *map, const cfg_table *t, void *base) {
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n = (size_t)(map->data.mapping.pairs.top - pairs);
    char buf[96];
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pairs[i].key);
        yaml_node_t *v = yaml_document_get_node(c->doc, pairs[i].value);
        if (k->type != YAML_SCALAR_NODE || is_null(k))
            return cfg_error_at(c, k->start_mark, "keys in %s must be names, got %s", t->where,
                                describe(k, buf, sizeof buf));
        const cfg_key *key = find_key(t, k);
        if (!key) return unknown_key(c, k, t);
        /* Only known keys get this far, so this loop runs at most t->n times per key. */
        for (size_t j = 0; j < i; j++) {
            yaml_node_t *prev = yaml_document_get_node(c->doc, pairs[j].key);
            if (strcmp(scalar(prev), key->name) == 0)
                return cfg_error_at(c, k->start_mark, "duplicate key '%s' (first at line %zu)",
                                    key->name, prev->start_mark.line + 1);
        }
        if (key->type != YAML_NO_NODE && v->type != key->type) return wrong_value(c, v, key);
        int rc = key->handler(c, v, base, key);
        if (rc) return rc;
    }
    return LP_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Documents, files and the public API                                                         */

static int parse_document(cfg_ctx *c, yaml_parser_t *parser) {
    /* A second document would be silently ignored by yaml_parser_load; refuse it instead. */
    yaml_document_t next;
    if (!yaml_parser_load(parser, &next)) return syntax_error(c, parser);
    yaml_node_t *second = yaml_document_get_root_node(&next);
    yaml_mark_t second_mark = second ? second->start_mark : (yaml_mark_t){0, 0, 0};
    yaml_document_delete(&next);
    if (second)
        return cfg_error_at(c, second_mark,
                            "a second YAML document: a configuration file holds exactly one");

    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    char buf[96];
    if (!root || is_null(root))
        return cfg_error_at(c, root ? root->start_mark : (yaml_mark_t){0, 0, 0},
                            "the configuration is empty: expected a mapping of options such as "
                            "'model: models/resnet18.pt'");
    if (root->type != YAML_MAPPING_NODE)
        return cfg_error_at(c, root->start_mark,
                            "the top level must be a mapping of options (key: value), got %s",
                            describe(root, buf, sizeof buf));
    return parse_mapping(c, root, &top_table, &c->cfg->opts);
}

static int cfg_parse(lp_config **out, const char *text, size_t len, const char *name) {
    lp_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) return nomem();
    lp_options_init(&cfg->opts);
    cfg_ctx c = {name, text, len, NULL, cfg};
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc;
    if (!yaml_parser_initialize(&parser)) {
        free(cfg);
        return nomem();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = syntax_error(&c, &parser);
    } else {
        c.doc = &doc;
        rc = parse_document(&c, &parser);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    if (rc) {
        lp_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return LP_OK;
}

/* The whole file in memory: libyaml's marks are then checked against the same bytes we quote. */
static int read_file(const char *path, char **out, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return lp_error_set(LP_ERR_IO, "%s: cannot open the configuration file: %s", path,
                            strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? LP_OK : nomem();
    while (!rc) {
        if (len == cap) {
            char *bigger = cap < CFG_MAX_FILE_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                rc = cap < CFG_MAX_FILE_BYTES
                         ? nomem()
                         : lp_error_set(LP_ERR_INVALID,
                                        "%s: larger than %u bytes; not a configuration file?", path,
                                        CFG_MAX_FILE_BYTES);
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = lp_error_set(LP_ERR_IO, "%s: cannot read the configuration file: %s", path,
                                  strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_len = len;
    return LP_OK;
}

int lp_config_load(lp_config **out, const char *path) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_config_load: out is NULL");
    *out = NULL;
    if (!path) return lp_error_set(LP_ERR_INVALID, "lp_config_load: no file given");
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(path, &text, &len);
    if (rc) return rc;
    rc = cfg_parse(out, text, len, path);
    free(text);
    return rc;
}

int lp_config_parse_string(lp_config **out, const char *yaml_text, const char *name_for_errors) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_config_parse_string: out is NULL");
    *out = NULL;
    if (!yaml_text) return lp_error_set(LP_ERR_INVALID, "lp_config_parse_string: text is NULL");
    return cfg_parse(out, yaml_text, strlen(yaml_text),
                     name_for_errors ? name_for_errors : "<string>");
}

const lp_options *lp_config_options(const lp_config *cfg) {
    return cfg ? &cfg->opts : NULL;
}

void lp_config_free(lp_config *cfg) {
    if (!cfg) return;
    for (size_t i = 0; i < cfg->n_owned; i++)
        free(cfg->owned[i]);
    free(cfg->owned);
    free(cfg);
}

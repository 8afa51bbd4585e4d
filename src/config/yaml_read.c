/* yaml_read.c: YAML configuration files (docs/config.md) read into lp_options.
 *
 * libyaml's document API loads the whole file as a graph of nodes that keep their positions; the
 * option table (option_table.h) then walks it: its rows are the schema, in the file's nesting.
 * Every value goes through the same parse and check as lp_options_set and the CLI
 * (option_values.h), where it is read, so each error points at its line and column and says what
 * the command line would say. The values that are more than one scalar (inputs, outputs, the
 * schedule) have their readers in yaml_entries.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/option_values.h"
#include "config/yaml_internal.h"
#include "layerprof.h"

/* A configuration is a text file of a few hundred bytes; anything this large is a wrong path. */
#define CFG_MAX_FILE_BYTES (1u << 20)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct lp_config {
    lp_options opts; /* its store stays NULL: the arena below owns what it points to */
    lp_arena *arena;
};

int cfg_nomem(void) {
    return lp_error_set(LP_ERR_NOMEM, "out of memory reading the configuration");
}

/* ------------------------------------------------------------------------------------------ */
/* Nodes                                                                                       */

const char *cfg_scalar(const yaml_node_t *n) {
    return (const char *)n->data.scalar.value;
}

int cfg_is_plain(const yaml_node_t *n) {
    return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

int cfg_is_null(const yaml_node_t *n) {
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    if (!cfg_is_plain(n)) return 0;
    for (size_t i = 0; i < COUNT(nulls); i++)
        if (strcmp(cfg_scalar(n), nulls[i]) == 0) return 1;
    return 0;
}

int cfg_has_nul(const yaml_node_t *n) {
    return strlen(cfg_scalar(n)) != n->data.scalar.length;
}

const char *cfg_describe(const yaml_node_t *n, char *buf, size_t size) {
    if (n->type == YAML_SEQUENCE_NODE) return "a list";
    if (n->type == YAML_MAPPING_NODE) return "a mapping";
    if (cfg_is_null(n)) return "null";
    return lp_opt_quote(cfg_scalar(n), n->data.scalar.length, buf, size);
}

yaml_node_t *cfg_item(const cfg_ctx *c, const yaml_node_t *seq, size_t i) {
    return yaml_document_get_node(c->doc, seq->data.sequence.items.start[i]);
}

size_t cfg_seq_len(const yaml_node_t *seq) {
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

int cfg_wrong_value(const cfg_ctx *c, const yaml_node_t *v, const lp_opt *opt,
                    const char *subject) {
    char buf[LP_OPT_QUOTE_MAX];
    return cfg_positioned(c, v->start_mark,
                          lp_opt_wrong(opt, subject, cfg_describe(v, buf, sizeof buf)));
}

/* ------------------------------------------------------------------------------------------ */
/* Mappings                                                                                    */

/* Where a key of a nested mapping written one level up belongs ("depth": "display"), a common
 * slip; NULL when it is no such key. Only the top level has nested mappings. */
static const char *belongs_under(const char *where, const char *key) {
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    if (strcmp(where, "the top level") != 0) return NULL;
    for (size_t i = 0; i < n; i++)
        if (!lp_opt_in_mapping(&all[i], NULL) && !(all[i].flags & LP_OPTF_NOT_YAML) &&
            strcmp(lp_opt_leaf(&all[i]), key) == 0) {
            const lp_opt *parent = &all[i];
            while (parent > all && !lp_opt_in_mapping(parent, NULL))
                parent--;
            return parent->key;
        }
    return NULL;
}

static int unknown_key(cfg_ctx *c, const yaml_node_t *k, const char *where,
                       const char *const *names, size_t n) {
    char buf[LP_OPT_QUOTE_MAX], expected[512];
    size_t off = 0;
    const char *quoted = cfg_describe(k, buf, sizeof buf);
    const char *parent = cfg_has_nul(k) ? NULL : belongs_under(where, cfg_scalar(k));
    if (parent)
        return cfg_error_at(c, k->start_mark, "unknown key %s in %s; it belongs under '%s'", quoted,
                            where, parent);
    const char *near = lp_closest(cfg_scalar(k), names, n);
    if (near)
        return cfg_error_at(c, k->start_mark, "unknown key %s in %s; did you mean '%s'?", quoted,
                            where, near);
    expected[0] = '\0';
    for (size_t i = 0; i < n && off < sizeof expected; i++)
        off += (size_t)snprintf(expected + off, sizeof expected - off, "%s%s", i ? ", " : "",
                                names[i]);
    return cfg_error_at(c, k->start_mark, "unknown key %s in %s (expected one of: %s)", quoted,
                        where, expected);
}

static size_t find_name(const yaml_node_t *k, const char *const *names, size_t n) {
    for (size_t i = 0; i < n && !cfg_has_nul(k); i++)
        if (strcmp(names[i], cfg_scalar(k)) == 0) return i;
    return SIZE_MAX;
}

int cfg_walk(cfg_ctx *c, yaml_node_t *map, const char *where, const char *const *names, size_t n,
             cfg_key_fn fn, void *arg) {
    yaml_node_pair_t *pairs = map->data.mapping.pairs.start;
    size_t n_pairs = (size_t)(map->data.mapping.pairs.top - pairs);
    char buf[LP_OPT_QUOTE_MAX];
    for (size_t i = 0; i < n_pairs; i++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, pairs[i].key);
        yaml_node_t *v = yaml_document_get_node(c->doc, pairs[i].value);
        if (k->type != YAML_SCALAR_NODE || cfg_is_null(k))
            return cfg_error_at(c, k->start_mark, "keys in %s must be names, got %s", where,
                                cfg_describe(k, buf, sizeof buf));
        size_t index = find_name(k, names, n);
        if (index == SIZE_MAX) return unknown_key(c, k, where, names, n);
        /* Only known keys get this far, so this loop runs at most n times per key. */
        for (size_t j = 0; j < i; j++) {
            yaml_node_t *prev = yaml_document_get_node(c->doc, pairs[j].key);
            if (strcmp(cfg_scalar(prev), names[index]) == 0)
                return cfg_error_at(c, k->start_mark, "duplicate key '%s' (first at line %zu)",
                                    names[index], prev->start_mark.line + 1);
        }
        int rc = fn(c, index, v, arg);
        if (rc) return rc;
    }
    return LP_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Option values                                                                               */

/* A scalar's text for lp_opt_parse. Numbers and booleans must be plain: "10" quoted is a string. */
static int scalar_text(const cfg_ctx *c, const yaml_node_t *v, const lp_opt *opt,
                       const char *subject) {
    int plain_only = opt->type == LP_OPT_BOOL || opt->type == LP_OPT_INT || opt->type == LP_OPT_U64;
    if (v->type != YAML_SCALAR_NODE || cfg_is_null(v) || cfg_has_nul(v) ||
        (plain_only && !cfg_is_plain(v)))
        return cfg_wrong_value(c, v, opt, subject);
    return LP_OK;
}

/* A list of strings (module paths, column ids) into a (pointer, count) pair. */
static int read_strings(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt, const char *subject) {
    size_t n = cfg_seq_len(v);
    const char **list = NULL;
    char buf[LP_OPT_QUOTE_MAX];
    if (opt->max && n > opt->max)
        return cfg_error_at(c, cfg_item(c, v, opt->max)->start_mark, "%s takes at most %zu entries",
                            subject, opt->max);
    if (n && !(list = lp_arena_alloc(c->arena, n, sizeof *list))) return cfg_nomem();
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *it = cfg_item(c, v, i);
        if (it->type != YAML_SCALAR_NODE || cfg_is_null(it))
            return cfg_error_at(c, it->start_mark, "each entry of %s must be a string, got %s",
                                subject, cfg_describe(it, buf, sizeof buf));
        if (cfg_has_nul(it) || !it->data.scalar.length) return cfg_wrong_value(c, it, opt, subject);
        int rc =
            opt->type == LP_OPT_COLUMNS ? lp_opt_check_string(opt, subject, cfg_scalar(it)) : LP_OK;
        if (rc) return cfg_positioned(c, it->start_mark, rc);
        if (!(list[i] = lp_arena_strndup(c->arena, cfg_scalar(it), it->data.scalar.length)))
            return cfg_nomem();
    }
    *LP_OPT_FIELD(c->opts, opt, const char *const *) = list;
    *LP_OPT_COUNT(c->opts, opt) = n;
    return LP_OK;
}

static int read_option(cfg_ctx *c, const lp_opt *opt, yaml_node_t *v) {
    char subject[LP_OPT_QUOTE_MAX];
    lp_opt_subject(opt, subject, sizeof subject);
    switch (opt->type) {
    case LP_OPT_MAPPING:
        if (v->type != YAML_MAPPING_NODE) return cfg_wrong_value(c, v, opt, subject);
        return cfg_read_options(c, v, opt->key);
    case LP_OPT_COLUMNS:
    case LP_OPT_PATHS:
        if (v->type != YAML_SEQUENCE_NODE) return cfg_wrong_value(c, v, opt, subject);
        return read_strings(c, v, opt, subject);
    case LP_OPT_INPUTS:
        return cfg_read_inputs(c, v, opt);
    case LP_OPT_OUTPUTS:
        return cfg_read_outputs(c, v, opt);
    case LP_OPT_SCHEDULE:
        return cfg_read_schedule(c, v, opt);
    case LP_OPT_STRING:
        if ((opt->flags & LP_OPTF_NULLABLE) && cfg_is_null(v)) {
            *LP_OPT_FIELD(c->opts, opt, const char *) = NULL;
            return LP_OK;
        }
        break;
    default:
        break;
    }
    int rc = scalar_text(c, v, opt, subject);
    if (rc) return rc;
    return cfg_positioned(c, v->start_mark,
                          lp_opt_parse(opt, subject, cfg_scalar(v), c->opts, c->arena));
}

typedef struct cfg_rows {
    const lp_opt *rows[32];
    const char *names[32];
    size_t n;
} cfg_rows;

static int read_row(cfg_ctx *c, size_t index, yaml_node_t *v, void *arg) {
    return read_option(c, ((const cfg_rows *)arg)->rows[index], v);
}

int cfg_read_options(cfg_ctx *c, yaml_node_t *map, const char *parent) {
    cfg_rows r = {.n = 0};
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    char where[64];
    for (size_t i = 0; i < n && r.n < COUNT(r.rows); i++)
        if (lp_opt_in_mapping(&all[i], parent) && !(all[i].flags & LP_OPTF_NOT_YAML)) {
            r.rows[r.n] = &all[i];
            r.names[r.n++] = lp_opt_leaf(&all[i]);
        }
    snprintf(where, sizeof where, parent ? "'%s'" : "the top level", parent);
    return cfg_walk(c, map, where, r.names, r.n, read_row, &r);
}

/* ------------------------------------------------------------------------------------------ */
/* Documents, files and the public API                                                         */

static int parse_document(cfg_ctx *c, yaml_parser_t *parser) {
    /* A second document would be silently ignored by yaml_parser_load; refuse it instead. */
    yaml_document_t next;
    if (!yaml_parser_load(parser, &next)) return cfg_syntax_error(c, parser);
    yaml_node_t *second = yaml_document_get_root_node(&next);
    yaml_mark_t second_mark = second ? second->start_mark : (yaml_mark_t){0, 0, 0};
    yaml_document_delete(&next);
    if (second)
        return cfg_error_at(c, second_mark,
                            "a second YAML document: a configuration file holds exactly one");

    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    char buf[LP_OPT_QUOTE_MAX];
    if (!root || cfg_is_null(root))
        return cfg_error_at(c, root ? root->start_mark : (yaml_mark_t){0, 0, 0},
                            "the configuration is empty: expected a mapping of options such as "
                            "'model: models/resnet18.pt'");
    if (root->type != YAML_MAPPING_NODE)
        return cfg_error_at(c, root->start_mark,
                            "the top level must be a mapping of options (key: value), got %s",
                            cfg_describe(root, buf, sizeof buf));
    return cfg_read_options(c, root, NULL);
}

static int cfg_parse(lp_config **out, const char *text, size_t len, const char *name) {
    lp_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg || !(cfg->arena = lp_arena_new())) {
        free(cfg);
        return cfg_nomem();
    }
    lp_options_init(&cfg->opts);
    cfg_ctx c = {name, text, len, NULL, cfg->arena, &cfg->opts};
    yaml_parser_t parser;
    yaml_document_t doc;
    int rc;
    if (!yaml_parser_initialize(&parser)) {
        lp_config_free(cfg);
        return cfg_nomem();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = cfg_syntax_error(&c, &parser);
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
    int rc = buf ? LP_OK : cfg_nomem();
    while (!rc) {
        if (len == cap) {
            char *bigger = cap < CFG_MAX_FILE_BYTES ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                rc = cap < CFG_MAX_FILE_BYTES
                         ? cfg_nomem()
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
    lp_arena_free(cfg->arena);
    free(cfg);
}

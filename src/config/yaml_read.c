/* yaml_read.c: YAML configuration files (docs/config.md) read into lp_options.
 *
 * libyaml's document API loads the whole file as a graph of nodes that keep their positions; the
 * option table (option_table.h) then walks it: its rows are the schema, in the file's nesting.
 * Every value goes through the same parse and check as lp_options_set and the CLI
 * (option_parse.h), where it is read, so each error points at its line and column and says what
 * the command line would say. The values that are more than one scalar (inputs, outputs, the
 * schedule) have their readers in yaml_entries.c; the node helpers and the walk of a mapping's
 * keys are yaml_nodes.c's. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/option_parse.h"
#include "config/yaml_internal.h"
#include "layerprof.h"

/* A configuration is a text file of a few hundred bytes; anything this large is a wrong path. */
#define CFG_MAX_FILE_BYTES (1u << 20)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

struct lp_config {
    lp_options opts; /* its store stays NULL: the arena below owns what it points to */
    lp_arena *arena;
};

/* ------------------------------------------------------------------------------------------ */
/* Option values                                                                               */

/* A scalar's text for lp_opt_parse. Numbers and booleans must be plain: "10" quoted is a string. */
static int scalar_text(const cfg_ctx *c, const yaml_node_t *v, const lp_opt *opt,
                       const char *subject) {
    int plain_only = opt->type == LP_OPT_BOOL || opt->type == LP_OPT_INT ||
                     opt->type == LP_OPT_U64 || opt->type == LP_OPT_REAL;
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

/* A mapping of the schedule's own rows {wait, warmup, active, repeat}, or --schedule's string
 * "wait=1,active=2" so a value can be copied between the command line and the file; null is no
 * schedule. Here rather than in yaml_entries.c: its mapping is read by cfg_read_options, which
 * reads the schedule, and the recursion stays inside this file. */
static int read_schedule(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt) {
    lp_schedule *s = LP_OPT_FIELD(c->opts, opt, lp_schedule);
    *s = (lp_schedule){0, 0, 0, 0};
    if (v->type == YAML_MAPPING_NODE) {
        int rc = cfg_read_options(c, v, opt->key);
        if (rc) return rc;
        /* A given active was range-checked where it stands; here it was left out. */
        if (s->active < 1)
            return cfg_error_at(c, v->start_mark,
                                "'schedule' needs 'active', the steps recorded per cycle (at "
                                "least 1)");
        return LP_OK;
    }
    if (v->type != YAML_SCALAR_NODE || cfg_has_nul(v))
        return cfg_wrong_value(c, v, opt, "'schedule'");
    if (cfg_is_null(v)) return LP_OK;
    return cfg_positioned(c, v->start_mark,
                          lp_opt_parse(opt, "'schedule'", cfg_scalar(v), c->opts, c->arena));
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
        return read_schedule(c, v, opt);
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

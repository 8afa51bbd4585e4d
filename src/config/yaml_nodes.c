/* yaml_nodes.c: the YAML reader's view of libyaml's nodes (scalars, nulls, sequences), how a
 * message quotes a value, and the walk of a mapping's keys with its "did you mean". yaml_read.c
 * and yaml_entries.c both read through these; this file calls neither, only yaml_excerpt.c for
 * the positioned messages. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/option_parse.h"
#include "config/yaml_internal.h"
#include "layerprof.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

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

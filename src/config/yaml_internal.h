/* yaml_internal.h: what the YAML reader's files share. They call one way: yaml_read.c walks the
 * document and calls yaml_entries.c for the structured values; both read nodes through
 * yaml_nodes.c; yaml_excerpt.c, which positions the messages, calls none of them. */
#ifndef LP_YAML_INTERNAL_H
#define LP_YAML_INTERNAL_H

#include <stddef.h>

#include <yaml.h>

#include "config/arena.h"
#include "config/option_table.h"
#include "layerprof.h"

typedef struct cfg_ctx {
    const char *name; /* file name for messages */
    const char *text; /* the source, to quote the offending line */
    size_t len;
    yaml_document_t *doc;
    lp_arena *arena; /* owns what the options point to */
    lp_options *opts;
} cfg_ctx;

/* ---- yaml_excerpt.c: "file:line:column: message", the line, a caret under the column -------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int cfg_error_at(const cfg_ctx *c, yaml_mark_t mark, const char *fmt, ...);

/* libyaml's own error, positioned. */
int cfg_syntax_error(const cfg_ctx *c, const yaml_parser_t *p);

/* LP_ERR_INVALID's message (lp_error_last) positioned at `mark`; other statuses pass through. */
int cfg_positioned(const cfg_ctx *c, yaml_mark_t mark, int status);

/* LP_ERR_NOMEM: "out of memory reading the configuration". */
int cfg_nomem(void);

/* ---- yaml_nodes.c: nodes and mappings -------------------------------------------------------- */

const char *cfg_scalar(const yaml_node_t *n);
int cfg_is_plain(const yaml_node_t *n);
/* YAML's null: an empty value, ~ or null, unquoted. */
int cfg_is_null(const yaml_node_t *n);
/* A scalar holding a NUL ("\0" escape): no option has a use for one. */
int cfg_has_nul(const yaml_node_t *n);
/* A value as messages quote it: 'text' (lp_opt_quote) or its kind ("a list", "null"). */
const char *cfg_describe(const yaml_node_t *n, char *buf, size_t size);
yaml_node_t *cfg_item(const cfg_ctx *c, const yaml_node_t *seq, size_t i);
size_t cfg_seq_len(const yaml_node_t *seq);

/* "SUBJECT must be WHAT, got <the value>", positioned at the value. */
int cfg_wrong_value(const cfg_ctx *c, const yaml_node_t *v, const lp_opt *opt, const char *subject);

/* Reads each key of `map` with fn(c, index of the key in names, value, arg); refuses keys that are
 * not names, duplicates, and unknown keys with a "did you mean". `where` says where the keys are
 * ("an input"). */
typedef int (*cfg_key_fn)(cfg_ctx *c, size_t index, yaml_node_t *value, void *arg);
int cfg_walk(cfg_ctx *c, yaml_node_t *map, const char *where, const char *const *names, size_t n,
             cfg_key_fn fn, void *arg);

/* ---- yaml_read.c: the document ----------------------------------------------------------------
 */

/* The keys of the option table's mapping `parent` ("schedule") read into c->opts. */
int cfg_read_options(cfg_ctx *c, yaml_node_t *map, const char *parent);

/* ---- yaml_entries.c: the values that are more than one scalar -------------------------------- */

int cfg_read_inputs(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt);
int cfg_read_outputs(cfg_ctx *c, yaml_node_t *v, const lp_opt *opt);

#endif

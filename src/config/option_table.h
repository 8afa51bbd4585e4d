/* option_table.h: every option once (docs/config.md): its YAML key, CLI flag, type, field, range
 * or names, default and help line. The YAML reader and writer, lp_options_set, lp_options_init,
 * lp_options_validate and (through lp_options_key) the CLI's parsing and --help all read this
 * table, so adding an option is adding a row. */
#ifndef LP_OPTION_TABLE_H
#define LP_OPTION_TABLE_H

#include <stddef.h>

#include "config/names.h"
#include "layerprof.h"

/* Ceilings that catch typos ("--iterations 1000000000") before they become hour-long runs. Shared
 * by lp_options_validate, the config file and the CLI through the table. Literal numbers: the
 * table stringifies them. */
#define LP_MAX_ITERATIONS 10000000
#define LP_MAX_INTRAOP_THREADS 1024

typedef enum lp_opt_type {
    LP_OPT_MAPPING,     /* a nested mapping of the file (profile, display): no field of its own */
    LP_OPT_BOOL,        /* int, 0 or 1; a switch on the command line */
    LP_OPT_INT,         /* int in [lo, hi] */
    LP_OPT_U64,         /* uint64_t */
    LP_OPT_REAL,        /* double in [rlo, rhi], or (rlo, rhi] with rlo_open */
    LP_OPT_ENUM,        /* an int-sized enum spelled by `names` */
    LP_OPT_STRING,      /* const char *, checked as `check` says */
    LP_OPT_COLUMNS,     /* column ids (const char *const *, count): text "a,b" replaces the list */
    LP_OPT_PATHS,       /* module paths (const char *const *, count): text appends one */
    LP_OPT_INPUTS,      /* lp_input_spec array and count: the text of one forward argument
                           (lp_input_parse: "SHAPE[:DTYPE][:FILL]", "[a, b]", ...) appends its
                           entries */
    LP_OPT_INPUT_FILE,  /* the same array: text "FILE:SHAPE[:DTYPE]" appends one */
    LP_OPT_INPUT_SAVED, /* the same array: text "FILE.pt" appends saved:FILE.pt */
    LP_OPT_OUTPUTS,     /* lp_output_spec array and count: text "FORMAT[:FILE]" appends one */
    LP_OPT_SCHEDULE     /* lp_schedule: text "wait=1,active=2", or the mapping of its own rows */
} lp_opt_type;

/* A further check of a string's value. */
typedef enum lp_opt_check {
    LP_CHECK_NONE = 0,
    LP_CHECK_DEVICE,
    LP_CHECK_COLUMN,
    LP_CHECK_LABEL /* a list of "NAME=VALUE" (base/labels.h): each, and the names unique */
} lp_opt_check;

enum {
    LP_OPTF_NULLABLE = 1u << 0,  /* YAML null leaves the string NULL (model, device, sort) */
    LP_OPTF_NOT_YAML = 1u << 1,  /* no key of the file: lp_options_set and a flag only */
    LP_OPTF_FLOW = 1u << 2,      /* a mapping --print-config writes on one line */
    LP_OPTF_BY_PARENT = 1u << 3, /* validated and written with its parent (the schedule's counts) */
    LP_OPTF_REPEATABLE = 1u << 4, /* each value appends: paths, inputs, outputs */
    LP_OPTF_REQUIRED = 1u << 5    /* lp_options_validate refuses it unset (the model) */
};

typedef struct lp_opt {
    const char *key;  /* lp_options_set's key and the file's: dotted for nested mappings */
    const char *flag; /* the CLI's long flag without "--"; NULL: none */
    lp_opt_type type;
    unsigned flags;            /* LP_OPTF_* */
    size_t offset;             /* of the field in lp_options */
    size_t count_offset;       /* lists: of the element count */
    int lo, hi;                /* INT: the range */
    const char *lo_note;       /* INT: what `lo` means ("no limit"), or NULL */
    const lp_cfg_names *names; /* ENUM */
    lp_opt_check check;        /* STRING */
    size_t max;                /* lists: the most entries, 0 for no limit */
    int def;                   /* BOOL, INT, ENUM: the default */
    double rlo, rhi, rdef;     /* REAL: the range and the default */
    int rlo_open;              /* REAL: rlo itself is refused */
    const char *def_str;       /* STRING: the default */
    const char *default_text;  /* the default as docs/config.md and --help show it */
    const char *what;          /* the value expected, for messages; NULL: from the type */
    const char *value_name;    /* the flag's value in --help; NULL for a switch */
    const char *help;          /* one line for --help */
    lp_option_section section; /* where --help lists the flag */
} lp_opt;

/* The whole table, in the file's order (a mapping's keys right after it). */
const lp_opt *lp_opt_all(size_t *n);

/* The row with exactly this key, or NULL. */
const lp_opt *lp_opt_find(const char *key);

/* The last segment of the key: "sort" for "display.sort". */
const char *lp_opt_leaf(const lp_opt *opt);

/* 1 when the row is a key of the mapping `parent` ("display"; NULL: the top level). */
int lp_opt_in_mapping(const lp_opt *opt, const char *parent);

/* The value the row expects, as messages say it: "an integer from 1 to 10000000", "true or
 * false", "hooks or graph", "a mapping of depth, sort, ..." or the row's own `what`. Returns buf.
 */
const char *lp_opt_what(const lp_opt *opt, char *buf, size_t size);

/* Puts the row's default into its field of `opts` (a list: empty; a mapping: every key of it). */
void lp_opt_reset(const lp_opt *opt, lp_options *opts);

/* The field of `opts` the row describes. */
#define LP_OPT_FIELD(opts, opt, type) ((type *)(void *)((char *)(opts) + (opt)->offset))
#define LP_OPT_COUNT(opts, opt) ((size_t *)(void *)((char *)(opts) + (opt)->count_offset))

#endif

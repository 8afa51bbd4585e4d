/* options_set.c: lp_options_set and lp_options_release (layerprof.h): options set from text, with
 * what they point to owned by a store inside the options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "config/arena.h"
#include "config/option_table.h"
#include "config/option_parse.h"
#include "config/options_version.h"
#include "layerprof.h"

/* "did you mean": a key spelled nearly right, or the dotted key whose last segment was given
 * ("sort" for "display.sort"). */
static int unknown_key(const char *key) {
    size_t n, k = 0;
    const lp_opt *all = lp_opt_all(&n);
    const char *keys[64];
    for (size_t i = 0; i < n && k < sizeof keys / sizeof keys[0]; i++) {
        if (all[i].type == LP_OPT_MAPPING) continue;
        if (strcmp(lp_opt_leaf(&all[i]), key) == 0)
            return lp_error_set(LP_ERR_NOT_FOUND, "unknown option '%s'; did you mean '%s'?", key,
                                all[i].key);
        keys[k++] = all[i].key;
    }
    const char *near = lp_closest(key, keys, k);
    if (near)
        return lp_error_set(LP_ERR_NOT_FOUND, "unknown option '%s'; did you mean '%s'?", key, near);
    return lp_error_set(LP_ERR_NOT_FOUND,
                        "unknown option '%s' (keys are the YAML config's: 'iterations', "
                        "'display.sort', ...; docs/config.md)",
                        key);
}

/* Whether a struct of `version` holds the row's fields (a mapping: every key of it), in the layout
 * the row writes: version 2's input list has the shorter entries, which only lp_options_view
 * reads. */
static int row_fits(const lp_opt *opt, unsigned version) {
    if (opt->type == LP_OPT_MAPPING) {
        size_t n;
        const lp_opt *all = lp_opt_all(&n);
        for (size_t i = 0; i < n; i++)
            if (lp_opt_in_mapping(&all[i], opt->key) && !row_fits(&all[i], version)) return 0;
        return 1;
    }
    if ((opt->type == LP_OPT_INPUTS || opt->type == LP_OPT_INPUT_FILE ||
         opt->type == LP_OPT_INPUT_SAVED) &&
        version < 3)
        return 0;
    return lp_options_version_holds(version, opt->offset) &&
           (!opt->count_offset || lp_options_version_holds(version, opt->count_offset));
}

int lp_options_set(lp_options *opts, const char *key, const char *value) {
    if (!opts || !key) return lp_error_set(LP_ERR_INVALID, "lp_options_set: NULL argument");
    int rc = lp_options_check_version(opts, "lp_options_set");
    if (rc) return rc;
    const lp_opt *opt = lp_opt_find(key);
    if (!opt) return unknown_key(key);
    if (!row_fits(opt, opts->version)) {
        unsigned first = opts->version; /* the version that added the field */
        while (first < LP_OPTIONS_VERSION && !row_fits(opt, first))
            first++;
        return lp_error_set(LP_ERR_INVALID,
                            "'%s' needs options version %u; these are version %u (built against "
                            "an older layerprof.h): rebuild to set it",
                            key, first, opts->version);
    }
    if (!value) {
        lp_opt_reset(opt, opts);
        return LP_OK;
    }
    lp_arena *arena = lp_options_arena(opts);
    if (!arena) return lp_error_set(LP_ERR_NOMEM, "out of memory setting an option");
    char subject[LP_OPT_QUOTE_MAX];
    return lp_opt_parse(opt, lp_opt_subject(opt, subject, sizeof subject), value, opts, arena);
}

void lp_options_release(lp_options *opts) {
    if (!opts) return;
    lp_options_arena_free(opts);
    /* At the caller's own version, when it is one this library knows. */
    if (lp_options_init_version(opts, opts->version) != LP_OK) lp_options_init(opts);
}

/* options_version.c: see options_version.h. */
#include "config/options_version.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "config/option_table.h"

/* The shorter lp_input_spec of version 2: everything before `kind`. */
#define INPUT_SPEC_SIZE_V2 offsetof(lp_input_spec, kind)

size_t lp_options_size_of(unsigned version) {
    switch (version) {
    case 2:
        return offsetof(lp_options, libraries);
    case 3:
        return offsetof(lp_options, sample_every);
    case 4:
        return offsetof(lp_options, prune);
    case 5:
        return offsetof(lp_options, name_width);
    case 6:
        return offsetof(lp_options, labels);
    case 7:
        return sizeof(lp_options);
    default:
        return 0;
    }
}

int lp_options_check_version(const lp_options *opts, const char *what) {
    unsigned v = opts->version;
    if (v >= LP_OPTIONS_VERSION_MIN && v <= LP_OPTIONS_VERSION) return LP_OK;
    if (v > LP_OPTIONS_VERSION)
        return lp_error_set(LP_ERR_INVALID,
                            "%s: options version %u is newer than this layerprof reads (%u to "
                            "%u): the program was built against a newer layerprof.h",
                            what, v, LP_OPTIONS_VERSION_MIN, LP_OPTIONS_VERSION);
    return lp_error_set(LP_ERR_INVALID,
                        "%s: options version %u is not one this layerprof reads (%u to %u): "
                        "initialise with lp_options_init",
                        what, v, LP_OPTIONS_VERSION_MIN, LP_OPTIONS_VERSION);
}

int lp_options_version_holds(unsigned version, size_t offset) {
    return offset < lp_options_size_of(version);
}

int lp_options_view_open(lp_options_view *view, const lp_options *in, const char *what) {
    lp_options_init(&view->opts);
    view->inputs = NULL;
    int rc = lp_options_check_version(in, what);
    if (rc) return rc;
    memcpy(&view->opts, in, lp_options_size_of(in->version));
    view->opts.version = LP_OPTIONS_VERSION;
    if (in->version == 2 && in->n_inputs && in->inputs) { /* the shorter entries, converted */
        view->inputs = calloc(in->n_inputs, sizeof *view->inputs);
        if (!view->inputs) return lp_error_set(LP_ERR_NOMEM, "out of memory reading the inputs");
        for (size_t i = 0; i < in->n_inputs; i++)
            memcpy(&view->inputs[i], (const char *)in->inputs + i * INPUT_SPEC_SIZE_V2,
                   INPUT_SPEC_SIZE_V2);
        view->opts.inputs = view->inputs;
    }
    return LP_OK;
}

void lp_options_view_close(lp_options_view *view) {
    free(view->inputs);
    view->inputs = NULL;
}

/* The defaults are the table's, row by row; only the caller's version of the struct is written. */
int lp_options_init_version(lp_options *opts, unsigned version) {
    if (!opts) return lp_error_set(LP_ERR_INVALID, "lp_options_init: NULL options");
    lp_options full; /* the current struct, of which the caller's version is a prefix */
    /* What no row covers (callbacks and their payloads, the store) starts zero: off. */
    memset(&full, 0, sizeof full);
    full.version = version;
    int rc = lp_options_check_version(&full, "lp_options_init");
    if (rc) return rc;
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++)
        if (!(all[i].flags & LP_OPTF_BY_PARENT)) lp_opt_reset(&all[i], &full);
    memcpy(opts, &full, lp_options_size_of(version));
    return LP_OK;
}

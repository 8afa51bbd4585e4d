/* session_setup.c: a session's module tree and recorded inputs, from a loaded model
 * (session_setup.h says who else builds with them). */
#include <string.h>

#include "api/session_setup.h"
#include "base/error.h"

int session_setup_tree(lp_tree *t, const lps_model *m) {
    int rc = lp_tree_init(t);
    size_t n = lps_model_module_count(m);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const char *path, *cls;
        int32_t parent;
        rc = lps_model_module(m, i, &path, &cls, &parent);
        if (rc == LP_OK) rc = lp_tree_add(t, path, cls, parent);
        if (rc < 0) break;
        lps_module_size ms = {0};
        int known = lps_model_module_size(m, i, &ms) == LP_OK;
        lp_module_size size = {1, ms.self_params, ms.params, ms.self_bytes, ms.bytes};
        lp_tree_set_module(t, rc, !lps_model_module_has_forward(m, i), known ? &size : NULL);
        /* A package's module fused into another's kernel: its row says where its time went. */
        const char *into, *kernel;
        unsigned more;
        int32_t node = rc;
        rc = lps_model_module_fused(m, i, &into, &kernel, &more);
        if (rc == LP_OK && into) rc = lp_tree_set_fused(t, node, into, kernel, more);
    }
    return rc < 0 ? rc : LP_OK; /* the shim and the tree report through the same message */
}

int session_setup_recorded_inputs(const lps_model *m, const char *model_path, lp_input_spec *inputs,
                                  size_t max, size_t *n, lp_options *owner) {
    const char *text = lps_model_default_inputs(m);
    if (!text)
        return lp_error_set(
            LP_ERR_INVALID,
            "'%s' records no input shape: give one with --input SHAPE[:DTYPE] (e.g. 1x3x224x224)",
            model_path);
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (len) {
            char line[512];
            if (len >= sizeof line || *n == max)
                return lp_error_set(LP_ERR_MODEL, "'%s': bad recorded inputs", model_path);
            memcpy(line, text, len);
            line[len] = '\0';
            size_t got;
            int rc = lp_input_parse(line, &inputs[*n], max - *n, &got, owner);
            if (rc) return rc;
            *n += got;
        }
        text += len + (nl ? 1 : 0);
    }
    return LP_OK;
}

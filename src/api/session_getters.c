/* session_getters.c: reading a session's figures: nodes, op rows and what the run did. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "api/session_internal.h"
#include "base/error.h"
#include "base/out_size.h"
#include "model/node_info.h"

int lp_session_node_count(const lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node_count: NULL argument");
    *out = session_report_tree(s)->n_nodes;
    return LP_OK;
}

int lp_session_node_sized(const lp_session *s, size_t index, lp_node_info *out, size_t size) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node: NULL argument");
    lp_node_info full;
    int rc = lp_out_size_check(size, LP_NODE_INFO_SIZE_1, "lp_node_info", "lp_session_node");
    if (!rc) rc = lp_tree_node_info(session_report_tree(s), index, &full, "lp_session_node");
    if (!rc) lp_out_copy(out, size, &full, sizeof full);
    return rc;
}

int lp_session_find(const lp_session *s, const char *path, size_t *out) {
    if (!s || !path || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_find: NULL argument");
    int32_t i = lp_tree_find(session_report_tree(s), path);
    if (i < 0) return lp_error_set(LP_ERR_NOT_FOUND, "no module at path '%s'", path);
    *out = (size_t)i;
    return LP_OK;
}

int lp_session_frozen(const lp_session *s, int *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_frozen: NULL argument");
    *out = s->tree.n_nodes == 1;
    return LP_OK;
}

int lp_session_op_count(const lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op_count: NULL argument");
    *out = session_report_tree(s)->n_ops;
    return LP_OK;
}

int lp_session_op_sized(const lp_session *s, size_t index, lp_op_info *out, size_t size) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op: NULL argument");
    lp_op_info full;
    int rc = lp_out_size_check(size, LP_OP_INFO_SIZE_1, "lp_op_info", "lp_session_op");
    if (!rc) rc = lp_tree_op_info(session_report_tree(s), index, &full);
    if (!rc) lp_out_copy(out, size, &full, sizeof full);
    return rc;
}

int lp_session_run_info_sized(const lp_session *s, lp_run_info *caller, size_t size) {
    if (!s || !caller) return lp_error_set(LP_ERR_INVALID, "lp_session_run_info: NULL argument");
    int rc = lp_out_size_check(size, LP_RUN_INFO_SIZE_1, "lp_run_info", "lp_session_run_info");
    if (rc) return rc;
    lp_run_info full, *out = &full;
    memset(out, 0, sizeof *out);
    session_report_tree(s); /* merges what was recorded since the last read, as every getter */
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    out->iterations = s->tree.iterations;
    out->driver_ns = s->driver_ns;
    out->synced_ns = s->synced_ns;
    out->events = st.events;
    out->dropped = st.dropped + st.unbalanced;
    lp_out_copy(caller, size, &full, sizeof full);
    return LP_OK;
}

const char *lp_torch_version(void) {
    return lps_torch_version();
}

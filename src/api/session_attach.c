/* session_attach.c: a session on a torch::jit::Module the program holds (layerprof.hpp), or on an
 * AOTInductor package's loader (layerprof_pt2.hpp), and the forwards the program runs on it
 * itself, between lp_session_forward_begin and _end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "api/session_internal.h"
#include "base/error.h"
#include "config/options_version.h"
#include "config/tensor_shapes.h"

int lp_session_attach(lp_session **out, const lp_options *in, void *module,
                      const char *torch_build) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_session_attach: out is NULL");
    *out = NULL;
    if (!in || !module || !torch_build)
        return lp_error_set(LP_ERR_INVALID, "lp_session_attach: NULL argument");
    lp_options_view view;
    int rc = lp_options_view_open(&view, in, "lp_session_attach");
    if (rc) return rc;
    /* No file to load: the path, when given, only names the model in the reports. */
    if (!view.opts.model_path || !*view.opts.model_path) view.opts.model_path = "attached module";
    session_source src = {module, torch_build, 0};
    rc = session_open_from(out, &view.opts, &src);
    lp_options_view_close(&view);
    return rc;
}

int lp_session_attach_package(lp_session **out, const lp_options *in, void *loader,
                              const char *torch_build) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_session_attach_package: out is NULL");
    *out = NULL;
    if (!in || !loader || !torch_build)
        return lp_error_set(LP_ERR_INVALID, "lp_session_attach_package: NULL argument");
    lp_options_view view;
    int rc = lp_options_view_open(&view, in, "lp_session_attach_package");
    if (rc) return rc;
    /* The map is read from the package: the path is needed, not only a name. */
    if (!view.opts.model_path || !*view.opts.model_path)
        rc = lp_error_set(LP_ERR_INVALID,
                          "lp_session_attach_package: set the options' model to the package "
                          "(.pt2) the loader was loaded from: its layerprof map is read there");
    session_source src = {loader, torch_build, 1};
    if (!rc) rc = session_open_from(out, &view.opts, &src);
    lp_options_view_close(&view);
    return rc;
}

/* Before the forward: the figures are delivered at its end from the shapes bound here, so a
 * refused shape leaves that forward without figures (the shim keeps no stale ones for it). */
int lp_session_input_shapes_set(lp_session *s, const lp_tensor_shape *inputs, size_t n) {
    static const char who[] = "lp_session_input_shapes_set";
    if (!s) return lp_error_set(LP_ERR_INVALID, "%s: session is NULL", who);
    /* Whatever is refused below, shapes given earlier no longer describe the next forward. */
    if (s->attached && s->pt2 && !s->in_forward) lps_model_pt2_shapes_forget(s->model);
    int rc = lp_tensor_shapes_check(inputs, n, who);
    if (rc) return rc;
    if (!s->attached || !s->pt2)
        return lp_error_set(LP_ERR_STATE,
                            "%s: the session is not attached to a package (%s): input shapes are "
                            "for lp_session_attach_package",
                            who, s->attached ? "a module" : "it runs its own forwards");
    if (s->in_forward)
        return lp_error_set(LP_ERR_STATE,
                            "%s: a forward is open: give the shapes before "
                            "lp_session_forward_begin",
                            who);
    if (!inputs) return LP_OK; /* NULL, 0: the next forward has no shapes, and that is all */
    return lps_model_pt2_shapes(s->model, inputs, n);
}

int lp_session_forward_begin(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward_begin: session is NULL");
    if (!s->attached)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_begin: the session loaded its model "
                                          "itself: run it with lp_session_forward");
    if (s->live) return session_live_begin(s);
    if (s->in_forward)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_begin: a forward is already open: "
                                          "end it first (lp_session_forward_end)");
    session_forward *f = &s->program_fwd;
    int rc = session_forward_begin(s, f, SESSION_FWD_SAMPLED | SESSION_FWD_PROGRAM);
    if (!rc && (rc = lps_forward_enter(s->model))) session_forward_end(s, f, 0, 0, 0);
    if (rc && s->pt2) lps_model_pt2_shapes_forget(s->model); /* not for a later forward */
    if (rc) return rc;
    s->in_forward = 1;
    return LP_OK;
}

int lp_session_forward_end(lp_session *s, int completed) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward_end: session is NULL");
    if (s->live) return session_live_end(s, completed);
    if (!s->in_forward)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_end: no forward is open "
                                          "(lp_session_forward_begin was not called)");
    s->in_forward = 0;
    int rc = lps_forward_leave(s->model, completed);
    /* The program's forwards have no synced time: the program synchronises, not the session. */
    int erc =
        session_forward_end(s, &s->program_fwd, completed && !rc, lps_last_forward_ns(s->model), 0);
    return rc ? rc : erc;
}

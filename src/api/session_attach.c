/* session_attach.c: a session on a torch::jit::Module the program holds (layerprof.hpp), or on an
 * AOTInductor package's loader (layerprof_pt2.hpp), and the forwards the program runs on it
 * itself, between lp_session_forward_begin and _end. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "api/session_internal.h"
#include "base/clock.h"
#include "base/error.h"
#include "config/options_version.h"

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

int lp_session_forward_begin(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward_begin: session is NULL");
    if (!s->attached)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_begin: the session loaded its model "
                                          "itself: run it with lp_session_forward");
    if (s->live) return session_live_begin(s);
    if (s->in_forward)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_begin: a forward is already open: "
                                          "end it first (lp_session_forward_end)");
    int profiled = session_profiling_now(s) && session_sample(s);
    atomic_fetch_add(&s->forwards_seen, 1);
    int rc = profiled ? session_apply_pending_clear(s) : LP_OK;
    if (!rc && profiled) rc = session_target_for_forward(s);
    if (!rc && profiled) rc = session_hooks_install(s);
    if (!rc) rc = lps_forward_enter(s->model);
    if (rc) {
        session_hooks_remove(s);
        return rc;
    }
    s->in_forward = 1;
    s->forward_profiled = profiled;
    s->forward_t0 = s->sampler.budget > 0 ? lp_now_ns() : 0;
    return LP_OK;
}

/* TorchScript's profiling executor runs a module's first forwards unoptimised, recording shapes,
 * then optimises: profiling those says little about the model as it runs. */
static void note_early_forward(lp_session *s) {
    char n[16];
    snprintf(n, sizeof n, "%d", s->attached_forwards);
    session_add_note(
        s,
        "note: forward %s after attaching was profiled: TorchScript optimises a module "
        "during its first 3 forwards, so run those unprofiled first "
        "(layerprof::Session::warmup)",
        n);
}

int lp_session_forward_end(lp_session *s, int completed) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward_end: session is NULL");
    if (s->live) return session_live_end(s, completed);
    if (!s->in_forward)
        return lp_error_set(LP_ERR_STATE, "lp_session_forward_end: no forward is open "
                                          "(lp_session_forward_begin was not called)");
    s->in_forward = 0;
    s->attached_forwards++;
    int rc = lps_forward_leave(s->model, completed);
    if (rc || !completed) {
        lp_collector_reset_stacks(s->collector);
    } else if (s->forward_profiled) {
        atomic_fetch_add(&s->forwards_sampled, 1);
        s->driver_ns += lps_last_forward_ns(s->model);
        atomic_store(&s->dirty, 1);
        rc = lp_cuda_prof_iteration_done(s->cuda, s->collector);
        /* Once per session: the first such forward is the one worth naming. */
        if (!s->pt2 && s->opts.mode != LP_MODE_HOOKS && s->attached_forwards <= 3 &&
            !s->early_noted) {
            s->early_noted = 1;
            note_early_forward(s);
        }
    }
    if (!rc && completed && s->sampler.budget > 0)
        lp_sampler_observe(&s->sampler, s->forward_profiled, lp_now_ns() - s->forward_t0);
    int hrc = session_hooks_remove(s); /* the program's other code runs unobserved */
    return rc ? rc : hrc;
}

/* session_pt2.c: what the report says of an AOTInductor package (.pt2): how its kernels were
 * placed in modules, and which asked-for figures a package cannot give. */
#include "api/session_internal.h"
#include "report/columns.h"

void session_add_pt2_notes(lp_session *s, const lps_pt2_info *pt2) {
    session_add_note(s, "%s",
                     "mode: AOTInductor package (each compiled kernel timed in the module its "
                     "nodes came from, a fused one in its modules' lowest common ancestor; calls "
                     "as the export recorded them)");
    if (!pt2->has_map)
        session_add_note(s,
                         "note: '%s' holds no layerprof module map: every kernel is timed in the "
                         "root; export the model with python/layerprof_export.py to place its "
                         "kernels in modules",
                         s->model_path);
    if (s->opts.mode == LP_MODE_HOOKS)
        session_add_note(s, "%s",
                         "note: --mode does not apply to an AOTInductor package: it runs as "
                         "compiled");
    if (!pt2->has_map &&
        lp_columns_any(s->opts.columns, s->opts.n_columns, LP_NEED_FLOPS | LP_NEED_OUT_SHAPE, 0))
        session_add_note(s, "%s",
                         "note: FLOPs and out_shape come from layerprof's module map, which this "
                         "package has not: those columns stay blank");
    if (s->opts.memory)
        session_add_note(s, "%s",
                         "note: AOTInductor allocates its buffers in the package's wrapper, "
                         "outside the kernels: memory is the root's");
}

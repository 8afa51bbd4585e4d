/* options_version.h: the versions of lp_options a caller may hold (libgit2's rule): each version
 * is a prefix of the current struct, the library never writes past the caller's version, and
 * reads the fields it lacks as their defaults. */
#ifndef LP_OPTIONS_VERSION_H
#define LP_OPTIONS_VERSION_H

#include <stddef.h>

#include "layerprof.h"

/* The oldest version this library reads. Version 2 ends at `store`, and its input list uses the
 * shorter lp_input_spec of that time (tensors only: no `kind` and after). */
#define LP_OPTIONS_VERSION_MIN 2

/* Bytes of lp_options in `version`; 0 for a version this library does not know. */
size_t lp_options_size_of(unsigned version);

/* LP_OK when `opts` holds a version this library reads, else LP_ERR_INVALID saying whether it is
 * too old or too new. `what` names the caller in the message. */
int lp_options_check_version(const lp_options *opts, const char *what);

/* A current-version copy of a caller's options, for the functions that read them. */
typedef struct lp_options_view {
    lp_options opts;
    lp_input_spec *inputs; /* owned: a version-2 input list in today's layout, or NULL */
} lp_options_view;

/* Fills `view` from `in` (its version checked): the fields in.version lacks hold their
 * defaults. LP_ERR_NOMEM when a version-2 input list cannot be converted. Close it with
 * lp_options_view_close, whatever it returned. */
int lp_options_view_open(lp_options_view *view, const lp_options *in, const char *what);
void lp_options_view_close(lp_options_view *view);

/* 1 when the field at `offset` lies inside a struct of `version`. */
int lp_options_version_holds(unsigned version, size_t offset);

#endif

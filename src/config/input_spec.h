/* input_spec.h: what the input parsers (input_spec.c, input_parse.c) share with each other and
 * with the options and config readers. */
#ifndef LP_INPUT_SPEC_H
#define LP_INPUT_SPEC_H

#include <stddef.h>

#include "config/arena.h"
#include "layerprof.h"

/* lp_input_parse and lp_input_spec_parse_file, the texts the entries point to copied into
 * `arena`. A NULL arena refuses a text that must be kept (LP_ERR_INVALID). */
int lp_input_parse_in(lp_arena *arena, const char *text, lp_input_spec *out, size_t max, size_t *n);
int lp_input_spec_parse_file_in(lp_arena *arena, const char *text, lp_input_spec *out);

/* Where the public parsers keep texts: owner's store (NULL when `owner` is NULL). *arena is NULL
 * and LP_ERR_NOMEM returned when the store cannot be made. */
int lp_input_owner_arena(lp_options *owner, lp_arena **arena);

/* 1 and *out set when `s[0..len)` is a whole finite number ("0.5", "-1e3"). */
int lp_parse_finite(const char *s, size_t len, double *out);

#endif

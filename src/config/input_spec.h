/* input_spec.h: the number syntax shared by the input parsers (input_spec.c, input_parse.c). */
#ifndef LP_INPUT_SPEC_H
#define LP_INPUT_SPEC_H

#include <stddef.h>

/* 1 and *out set when `s[0..len)` is a whole finite number ("0.5", "-1e3"). */
int lp_parse_finite(const char *s, size_t len, double *out);

#endif

/* option_parse.h: one option's value read from text and checked, with the one message each
 * mistake gets. The CLI (through lp_options_set) and the YAML reader both call these, so a bad
 * value reads the same wherever it was typed: "SUBJECT must be WHAT, got 'VALUE'", where SUBJECT
 * is how the caller names the option ('iterations' in a file, --iterations on the command line).
 */
#ifndef LP_OPTION_PARSE_H
#define LP_OPTION_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "config/arena.h"
#include "config/option_table.h"
#include "layerprof.h"

/* Room for a quoted value (lp_opt_quote) or a subject ("'trace_iterations'"). */
#define LP_OPT_QUOTE_MAX 96

/* `s[0..len)` as messages quote a value: 'text', clipped with "..." to fit `size` (whole UTF-8
 * characters), control characters shown as '?'. Returns buf. */
const char *lp_opt_quote(const char *s, size_t len, char *buf, size_t size);

/* The subject messages use for a row: its last key segment in quotes ("'sort'"). Returns buf. */
const char *lp_opt_subject(const lp_opt *opt, char *buf, size_t size);

/* Fails with LP_ERR_INVALID: "SUBJECT must be WHAT, got GOT"; GOT is already quoted ('x', null,
 * a list). */
int lp_opt_wrong(const lp_opt *opt, const char *subject, const char *got);

/* Reads `text` into the field of `opts` that `opt` describes; strings and arrays are copied into
 * `arena`. Lists follow lp_options_set: columns are replaced, the others appended to. On failure
 * (LP_ERR_INVALID, or LP_ERR_NOMEM) the options are unchanged. MAPPING rows fail: they hold no
 * value. */
int lp_opt_parse(const lp_opt *opt, const char *subject, const char *text, lp_options *opts,
                 lp_arena *arena);

/* The checks of one string value: non-empty, then the row's check (a device, a column id). */
int lp_opt_check_string(const lp_opt *opt, const char *subject, const char *text);

/* One spelling of an enum (aliases included) into *out; else "SUBJECT must be a or b, got 'x'",
 * with "; did you mean 'y'?" when a name is close. `opt` supplies the names. */
int lp_opt_parse_enum(const lp_opt *opt, const char *subject, const char *text, int *out);

/* The keys of one entry of the outputs list ({format: json, file: r.json}), as rows, so an
 * output's messages are the same from the file and from lp_options_set's "FORMAT[:FILE]". */
extern const lp_opt lp_opt_output_format, lp_opt_output_file;

/* Parses "cpu", "cuda", "cuda:N"; *index is -1 when no index was given. */
int lp_device_parse(const char *device, int *is_cuda, int *index);

/* "true", "yes", "on" (and capitalised) are 1; "false", "no", "off" 0; -1 for anything else. */
int lp_opt_bool_value(const char *text);

/* 1 when `x` is in a REAL row's range (never for NaN). */
int lp_opt_real_in_range(const lp_opt *opt, double x);

/* Plain decimal digits with an optional sign into a magnitude and a sign: 1, or 0 when malformed
 * or past UINT64_MAX. The one number syntax of option values and YAML shapes. */
int lp_opt_parse_digits(const char *s, uint64_t *mag, int *neg);

#endif

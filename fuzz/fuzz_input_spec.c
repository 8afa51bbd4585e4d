/* fuzz_input_spec.c: libFuzzer target for the --input and --input-file parsers.
 *
 * Every input is read as a spec (`SHAPE[:DTYPE][:FILL]`) and as a file spec (`FILE:SHAPE[:DTYPE]`).
 * Each must either be refused with LP_ERR_INVALID and a message naming the input, or give a spec
 * that is valid (1..LP_MAX_DIMS positive dimensions, a known dtype, a non-empty range), whose size
 * lp_input_spec_bytes computes without overflow, and that lp_input_spec_format writes back into
 * text its parser reads into the very same spec. Any violation aborts, so libFuzzer keeps the
 * input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"

static void check_refusal(int rc, const char *what) {
    if (rc != LP_ERR_INVALID) {
        fprintf(stderr, "%s: status %d, not LP_ERR_INVALID: %s\n", what, rc, lp_error_last());
        abort();
    }
    if (!lp_error_last()[0]) {
        fprintf(stderr, "%s: refused without a message\n", what);
        abort();
    }
}

static void check_valid(const lp_input_spec *s, int is_file) {
    int ok = s->ndim >= 1 && s->ndim <= LP_MAX_DIMS;
    for (int i = 0; ok && i < s->ndim; i++)
        ok = s->shape[i] > 0;
    ok = ok && strcmp(lp_dtype_name(s->dtype), "unknown") != 0;
    ok = ok && (is_file ? s->fill == LP_FILL_FILE && s->file[0] : s->fill != LP_FILL_FILE);
    ok = ok && (!s->has_range || s->low < s->high);
    if (!ok) {
        fprintf(stderr, "accepted an invalid spec (ndim %d)\n", s->ndim);
        abort();
    }
    if (lp_input_spec_bytes(s) <= 0) {
        fprintf(stderr, "a valid spec has %lld bytes\n", (long long)lp_input_spec_bytes(s));
        abort();
    }
}

/* The spec written back must parse into the same fields (the file name included). */
static void check_round_trip(const lp_input_spec *s, int is_file) {
    int need = lp_input_spec_format(s, NULL, 0);
    if (need < 0) abort();
    char *text = malloc((size_t)need + 1);
    if (!text) abort();
    if (lp_input_spec_format(s, text, (size_t)need + 1) != need) abort();
    lp_input_spec again;
    int rc = is_file ? lp_input_file_spec_parse(text, &again) : lp_input_spec_parse(text, &again);
    if (rc != LP_OK) {
        fprintf(stderr, "written spec '%s' does not parse: %s\n", text, lp_error_last());
        abort();
    }
    int same = again.ndim == s->ndim && again.dtype == s->dtype && again.fill == s->fill &&
               again.has_range == s->has_range && strcmp(again.file, s->file) == 0 &&
               memcmp(again.shape, s->shape, (size_t)s->ndim * sizeof s->shape[0]) == 0;
    if (same && s->has_range) same = again.low == s->low && again.high == s->high;
    if (!same) {
        fprintf(stderr, "round trip through '%s' changed the spec\n", text);
        abort();
    }
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* the API takes a NUL-terminated string */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    lp_input_spec spec;
    int rc = lp_input_spec_parse(text, &spec);
    if (rc == LP_OK) {
        check_valid(&spec, 0);
        check_round_trip(&spec, 0);
    } else {
        check_refusal(rc, "lp_input_spec_parse");
    }

    rc = lp_input_file_spec_parse(text, &spec);
    if (rc == LP_OK) {
        check_valid(&spec, 1);
        check_round_trip(&spec, 1);
    } else {
        check_refusal(rc, "lp_input_file_spec_parse");
    }
    free(text);
    return 0;
}

/* fuzz_input_spec.c: libFuzzer target for the --input and --input-file parsers.
 *
 * The same bytes are also one structured argument (lp_input_parse: lists, tuples, dicts, scalars,
 * none, saved:FILE): refused with LP_ERR_INVALID and a message, or entries that form one whole
 * value, which lp_input_format writes into text that parses into the very same entries.
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

/* Keeps the texts the parsers copy; released after each input. */
static lp_options g_owner;

/* Both NULL, or both the same text. */
static int same_text(const char *a, const char *b) {
    return a && b ? strcmp(a, b) == 0 : a == b;
}

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
    ok = ok && (is_file ? s->fill == LP_FILL_FILE && s->file && s->file[0]
                        : s->fill != LP_FILL_FILE && !s->file);
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
    int rc = is_file ? lp_input_spec_parse_file(text, &again, &g_owner)
                     : lp_input_spec_parse(text, &again);
    if (rc != LP_OK) {
        fprintf(stderr, "written spec '%s' does not parse: %s\n", text, lp_error_last());
        abort();
    }
    int same = again.ndim == s->ndim && again.dtype == s->dtype && again.fill == s->fill &&
               again.has_range == s->has_range && same_text(again.file, s->file) &&
               memcmp(again.shape, s->shape, (size_t)s->ndim * sizeof s->shape[0]) == 0;
    if (same && s->has_range) same = again.low == s->low && again.high == s->high;
    if (!same) {
        fprintf(stderr, "round trip through '%s' changed the spec\n", text);
        abort();
    }
    free(text);
}

static int same_entry(const lp_input_spec *a, const lp_input_spec *b) {
    if (a->kind != b->kind || a->n_items != b->n_items || a->integer != b->integer ||
        memcmp(&a->real, &b->real, sizeof a->real) != 0 || !same_text(a->file, b->file))
        return 0;
    if (a->kind != LP_INPUT_TENSOR) return 1;
    int same = a->ndim == b->ndim && a->dtype == b->dtype && a->fill == b->fill &&
               a->has_range == b->has_range &&
               memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) == 0;
    return same && (!a->has_range || (a->low == b->low && a->high == b->high));
}

#define MAX_ENTRIES LP_MAX_INPUTS

static void check_structured(const char *text) {
    static lp_input_spec first[MAX_ENTRIES], again[MAX_ENTRIES];
    size_t n = 0, m = 0;
    int rc = lp_input_parse(text, first, MAX_ENTRIES, &n, &g_owner);
    if (rc != LP_OK) {
        check_refusal(rc, "lp_input_parse");
        return;
    }
    if (n == 0 || lp_input_value_size(first, n) != n) {
        fprintf(stderr, "lp_input_parse gave %zu entries that are not one whole value\n", n);
        abort();
    }
    int need = lp_input_format(first, n, NULL, 0);
    if (need < 0) abort();
    char *written = malloc((size_t)need + 1);
    if (!written) abort();
    if (lp_input_format(first, n, written, (size_t)need + 1) != need) abort();
    if (lp_input_parse(written, again, MAX_ENTRIES, &m, &g_owner) != LP_OK) {
        fprintf(stderr, "written argument '%s' does not parse: %s\n", written, lp_error_last());
        abort();
    }
    for (size_t i = 0; i < n; i++)
        if (m != n || !same_entry(&first[i], &again[i])) {
            fprintf(stderr, "round trip through '%s' changed entry %zu\n", written, i);
            abort();
        }
    free(written);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* the API takes a NUL-terminated string */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    lp_options_init(&g_owner);
    lp_input_spec spec;
    int rc = lp_input_spec_parse(text, &spec);
    if (rc == LP_OK) {
        check_valid(&spec, 0);
        check_round_trip(&spec, 0);
    } else {
        check_refusal(rc, "lp_input_spec_parse");
    }

    rc = lp_input_spec_parse_file(text, &spec, &g_owner);
    if (rc == LP_OK) {
        check_valid(&spec, 1);
        check_round_trip(&spec, 1);
    } else {
        check_refusal(rc, "lp_input_spec_parse_file");
    }
    check_structured(text);
    lp_options_release(&g_owner);
    free(text);
    return 0;
}

/* fuzz_config.c: libFuzzer target for the configuration reader and writer, and lp_options_set.
 *
 * Every input must either be refused with a positioned message or parse; and whatever parses must
 * survive lp_options_write_yaml and a second parse unchanged (the second write is byte-identical
 * to the first), which tests the writer's quoting against everything the reader accepts. Any
 * violation aborts, so libFuzzer keeps the input as a crash.
 *
 * The same bytes are also one lp_options_set: the first byte picks the key, the rest is the value.
 * It must succeed or be refused as a bad value with a one-line message, and options it leaves
 * valid must write and read back the same (unless the writer refuses a string that is not
 * UTF-8). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"

static char *write_to_string(const lp_options *opts) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) abort();
    if (lp_options_write_yaml(opts, f) != LP_OK) {
        fprintf(stderr, "lp_options_write_yaml failed: %s\n", lp_error_last());
        abort();
    }
    fclose(f);
    return buf;
}

/* A refusal is LP_ERR_INVALID with "fuzz.yaml:LINE:COLUMN: ...", both 1-based. */
static void check_refusal(int rc, const lp_config *cfg) {
    size_t line = 0, column = 0;
    if (cfg) abort();
    if (rc == LP_ERR_NOMEM) return;
    if (rc != LP_ERR_INVALID ||
        sscanf(lp_error_last(), "fuzz.yaml:%zu:%zu: ", &line, &column) != 2 || !line || !column) {
        fprintf(stderr, "bad refusal %d: %s\n", rc, lp_error_last());
        abort();
    }
}

static void check_round_trip(const lp_options *opts) {
    char *first = write_to_string(opts);
    lp_config *again = NULL;
    if (lp_config_parse_string(&again, first, "written.yaml") != LP_OK) {
        fprintf(stderr, "the written configuration does not parse:\n%s\n%s\n", first,
                lp_error_last());
        abort();
    }
    char *second = write_to_string(lp_config_options(again));
    if (strcmp(first, second) != 0) {
        fprintf(stderr, "round trip changed the options:\n%s\n---\n%s\n", first, second);
        abort();
    }
    free(second);
    lp_config_free(again);
    free(first);
}

static void check_set(const char *text) {
    lp_option_info info;
    if (!text[0] || lp_options_key((unsigned char)text[0] % lp_options_key_count(), &info) != LP_OK)
        return;
    lp_options o;
    lp_options_init(&o);
    int rc = lp_options_set(&o, info.key, text + 1);
    if (!o.model_path) o.model_path = "m.pt";
    /* Only valid options are promised to read back: the writer writes a mistake as it is (a
     * schedule with a repeat and no active step, set one count at a time). */
    if (rc == LP_OK && lp_options_validate(&o) == LP_OK) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) abort();
        rc = lp_options_write_yaml(&o, f);
        fclose(f);
        free(buf);
        if (rc == LP_OK) {
            check_round_trip(&o);
        } else if (rc != LP_ERR_INVALID || !strstr(lp_error_last(), "UTF-8")) {
            fprintf(stderr, "%s = '%s' was set but cannot be written: %s\n", info.key, text + 1,
                    lp_error_last());
            abort();
        }
    } else if (rc != LP_OK &&
               ((rc != LP_ERR_INVALID && rc != LP_ERR_NOMEM) || strchr(lp_error_last(), '\n'))) {
        fprintf(stderr, "%s = '%s': bad refusal %d: %s\n", info.key, text + 1, rc, lp_error_last());
        abort();
    }
    lp_options_release(&o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1); /* the API takes a NUL-terminated string */
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    lp_config *cfg = NULL;
    int rc = lp_config_parse_string(&cfg, text, "fuzz.yaml");
    if (rc == LP_OK)
        check_round_trip(lp_config_options(cfg));
    else
        check_refusal(rc, cfg);
    lp_config_free(cfg);
    check_set(text);
    free(text);
    return 0;
}

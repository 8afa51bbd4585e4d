/* test_option_table.c: the option table (option_table.c) is consistent with itself, with the
 * public introspection the CLI builds its flags and --help from, and with the documentation:
 * docs/config.md documents every key of the file with its default (and no key the table lacks),
 * and the README's option table lists every flag. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/option_table.h"
#include "golden.h"
#include "layerprof.h"

#define ROOT_DIR LP_FIXTURE_DIR "/../../"

/* The flags the CLI has besides the table's (cli/args.c): the README documents them too. */
static const char *const cli_only[] = {"format",       "output", "config",
                                       "print-config", "help",   "version"};

static void keys_and_flags_are_unique_and_nested_rows_follow_their_mapping(void **state) {
    (void)state;
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    assert_true(n > 20);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(all[i].key, all[j].key) == 0) fail_msg("key '%s' twice", all[i].key);
            if (all[i].flag && all[j].flag && strcmp(all[i].flag, all[j].flag) == 0)
                fail_msg("flag '--%s' twice", all[i].flag);
        }
        for (size_t k = 0; all[i].flag && k < sizeof cli_only / sizeof cli_only[0]; k++)
            if (strcmp(all[i].flag, cli_only[k]) == 0) fail_msg("--%s is the CLI's", cli_only[k]);
        assert_ptr_equal(lp_opt_find(all[i].key), &all[i]);
        /* "display.sort" comes after "display" and before the next top-level key. */
        const char *dot = strchr(all[i].key, '.');
        if (dot) {
            size_t p = i;
            while (p > 0 && !lp_opt_in_mapping(&all[p], NULL))
                p--;
            assert_int_equal(strlen(all[p].key), (size_t)(dot - all[i].key));
            assert_memory_equal(all[p].key, all[i].key, strlen(all[p].key));
            assert_true(lp_opt_in_mapping(&all[i], all[p].key));
            assert_false(lp_opt_in_mapping(&all[i], NULL));
            assert_string_equal(lp_opt_leaf(&all[i]), dot + 1);
        }
        if (all[i].help == NULL || !*all[i].help) fail_msg("'%s' has no help line", all[i].key);
        if (!all[i].default_text) fail_msg("'%s' has no default text", all[i].key);
    }
    assert_null(lp_opt_find("nope"));
    assert_null(lp_opt_find(NULL));
}

/* The default shown in docs and --help is the one lp_options_init puts in the field. */
static void default_texts_say_the_defaults(void **state) {
    (void)state;
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++) {
        const lp_opt *o = &all[i];
        char want[64];
        switch (o->type) {
        case LP_OPT_INT:
        case LP_OPT_U64:
            if (strcmp(o->key, "schedule.active") == 0) continue; /* "required" in a mapping */
            snprintf(want, sizeof want, "%d", o->def);
            break;
        case LP_OPT_BOOL:
            snprintf(want, sizeof want, "%s", o->def ? "true" : "false");
            break;
        case LP_OPT_ENUM:
            snprintf(want, sizeof want, "%s", lp_cfg_name_of(o->names, o->def));
            break;
        case LP_OPT_STRING:
            snprintf(want, sizeof want, "%s",
                     o->def_str                    ? o->def_str
                     : o->flags & LP_OPTF_REQUIRED ? "none"
                                                   : "null");
            break;
        default:
            continue;
        }
        if (strcmp(o->default_text, want) != 0)
            fail_msg("'%s': default_text '%s', but the default is %s", o->key, o->default_text,
                     want);
    }
}

/* "hooks|markers": an enum's value name in --help is its canonical names, but those kept only
 * for old scripts ("graph"). */
static void enum_value_names_list_the_canonical_names(void **state) {
    (void)state;
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].type != LP_OPT_ENUM) continue;
        char want[256] = "";
        const lp_cfg_names *t = all[i].names;
        for (size_t k = 0; k < t->n; k++)
            if (lp_cfg_name_of(t, t->v[k].value) == t->v[k].name &&
                !(t->unlisted && !strcmp(t->unlisted, t->v[k].name))) {
                if (*want) strcat(want, "|");
                strcat(want, t->v[k].name);
            }
        assert_string_equal(all[i].value_name, want);
    }
}

static void what_texts_are_built_from_the_rows(void **state) {
    (void)state;
    char buf[512];
    assert_string_equal(lp_opt_what(lp_opt_find("iterations"), buf, sizeof buf),
                        "an integer from 1 to 10000000");
    assert_string_equal(lp_opt_what(lp_opt_find("threads"), buf, sizeof buf),
                        "an integer from 0 (libtorch's default) to 1024");
    assert_string_equal(lp_opt_what(lp_opt_find("display.depth"), buf, sizeof buf),
                        "an integer >= -1 (-1: no limit)");
    assert_string_equal(lp_opt_what(lp_opt_find("display.top"), buf, sizeof buf),
                        "an integer >= 0");
    assert_string_equal(lp_opt_what(lp_opt_find("seed"), buf, sizeof buf), "an integer >= 0");
    assert_string_equal(lp_opt_what(lp_opt_find("profile.nvtx"), buf, sizeof buf), "true or false");
    assert_string_equal(lp_opt_what(lp_opt_find("display.units"), buf, sizeof buf),
                        "auto, us, ms or s"); /* no aliases */
    assert_string_equal(
        lp_opt_what(lp_opt_find("display"), buf, sizeof buf),
        "a mapping of depth, sort, top, columns, units, ascii, prune and name_width");
    assert_string_equal(lp_opt_what(lp_opt_find("model"), buf, sizeof buf),
                        "the path of a TorchScript file");
}

static void introspection_lists_every_option_but_the_mappings(void **state) {
    (void)state;
    size_t n, mappings = 0;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++)
        mappings += all[i].type == LP_OPT_MAPPING;
    assert_int_equal(lp_options_key_count(), n - mappings);
    lp_option_info info;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (all[i].type == LP_OPT_MAPPING) continue;
        assert_int_equal(lp_options_key(k++, &info), LP_OK);
        assert_string_equal(info.key, all[i].key);
        assert_ptr_equal(info.flag, all[i].flag);
        assert_ptr_equal(info.help, all[i].help);
        assert_int_equal(info.takes_value, all[i].type != LP_OPT_BOOL);
        assert_int_equal(info.takes_value, info.value_name != NULL || !info.flag);
        assert_int_equal(info.in_yaml, !(all[i].flags & LP_OPTF_NOT_YAML));
        assert_non_null(lp_option_section_name(info.section));
    }
    lp_options_key(lp_options_key_count() - 1, &info);
    assert_string_equal(info.key, "verbose");
    assert_int_equal(lp_options_key(lp_options_key_count(), &info), LP_ERR_INVALID);
    assert_int_equal(lp_options_key_sized(0, NULL, sizeof(lp_option_info)), LP_ERR_INVALID);
    assert_int_equal(lp_options_key_sized(0, &info, sizeof info.key),
                     LP_ERR_INVALID); /* too small */
    /* A few rows as the CLI sees them. */
    lp_options_key(0, &info);
    assert_string_equal(info.key, "model");
    assert_null(info.flag);
    for (size_t i = 0; i < lp_options_key_count(); i++) {
        lp_options_key(i, &info);
        if (strcmp(info.key, "paths") == 0) {
            assert_string_equal(info.flag, "path");
            assert_true(info.repeatable && info.takes_value && info.in_yaml);
        } else if (strcmp(info.key, "input_file") == 0) {
            assert_string_equal(info.flag, "input-file");
            assert_true(info.repeatable && !info.in_yaml);
        } else if (strcmp(info.key, "profile.memory") == 0) {
            assert_false(info.takes_value);
            assert_int_equal(info.section, LP_SECTION_RECORD);
        } else if (strcmp(info.key, "display.columns") == 0) {
            assert_false(info.repeatable); /* "a,b" replaces the list */
        }
    }
    assert_string_equal(lp_option_section_name(LP_SECTION_INPUTS), "Inputs");
    assert_string_equal(lp_option_section_name(LP_SECTION_OTHER), "Other");
    assert_null(lp_option_section_name((lp_option_section)99));
}

/* ------------------------------------------------------------------------------------------ */
/* The documentation                                                                           */

/* The cells of a markdown table row ("| a | b |"), trimmed; returns the count. */
static size_t cells(const char *line, size_t len, char out[][512], size_t max) {
    size_t n = 0;
    const char *p = line, *end = line + len;
    if (p == end || *p != '|') return 0;
    p++;
    while (p < end && n < max) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        if (!bar) break;
        const char *b = p, *e = bar;
        while (b < e && *b == ' ')
            b++;
        while (e > b && e[-1] == ' ')
            e--;
        size_t k = 0;
        for (const char *q = b; q < e && k + 1 < 512; q++)
            if (*q != '`') out[n][k++] = *q; /* `code` marks are not part of the text */
        out[n++][k] = '\0';
        p = bar + 1;
    }
    return n;
}

/* The table of docs/config.md documenting the keys of `parent` (NULL: the top level). */
static const char *section_of(const char *doc, const char *parent) {
    char heading[64];
    snprintf(heading, sizeof heading, parent ? "\n### `%s`\n" : "\n## Keys\n", parent);
    const char *s = strstr(doc, heading);
    return s ? s + strlen(heading) : NULL;
}

/* Calls fn for each row of the first table after `from` (until the next heading). */
static size_t for_each_row(const char *from, void (*fn)(char c[][512], size_t n, void *arg),
                           void *arg) {
    size_t rows = 0;
    for (const char *line = from; line && *line && strncmp(line, "#", 1) != 0;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char c[8][512];
        size_t n = cells(line, len, c, 8);
        if (n >= 3 && strcmp(c[0], "Key") != 0 && strncmp(c[0], "---", 3) != 0) {
            fn(c, n, arg);
            rows++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return rows;
}

typedef struct doc_check {
    const char *parent;
    size_t documented;
} doc_check;

static void check_doc_row(char c[][512], size_t n, void *arg) {
    doc_check *d = arg;
    char key[600];
    (void)n;
    snprintf(key, sizeof key, d->parent ? "%s.%s" : "%s%s", d->parent ? d->parent : "", c[0]);
    const lp_opt *o = lp_opt_find(key);
    if (!o || (o->flags & LP_OPTF_NOT_YAML))
        fail_msg("docs/config.md documents '%s', which is no key of the option table", key);
    if (strcmp(c[2], o->default_text) != 0)
        fail_msg("docs/config.md says the default of '%s' is '%s'; the table says '%s'", key, c[2],
                 o->default_text);
    d->documented++;
}

static void docs_config_md_documents_every_key_with_its_default(void **state) {
    (void)state;
    char *doc = golden_read_file(ROOT_DIR "docs/config.md");
    assert_non_null(doc);
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    /* The top level and every mapping of the table has its own table in the doc. */
    const char *parents[8] = {NULL};
    size_t n_parents = 1;
    for (size_t i = 0; i < n; i++)
        if (lp_opt_in_mapping(&all[i], NULL) &&
            (all[i].type == LP_OPT_MAPPING || all[i].type == LP_OPT_SCHEDULE))
            parents[n_parents++] = all[i].key;
    for (size_t p = 0; p < n_parents; p++) {
        const char *table = section_of(doc, parents[p]);
        if (!table) fail_msg("docs/config.md has no table for '%s'", parents[p]);
        doc_check d = {parents[p], 0};
        for_each_row(table, check_doc_row, &d);
        size_t want = 0;
        for (size_t i = 0; i < n; i++)
            want += lp_opt_in_mapping(&all[i], parents[p]) && !(all[i].flags & LP_OPTF_NOT_YAML);
        if (d.documented != want)
            fail_msg("docs/config.md documents %zu keys of '%s'; the table has %zu", d.documented,
                     parents[p] ? parents[p] : "the top level", want);
    }
    free(doc);
}

static int is_flag(const char *flag, size_t len) {
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++)
        if (all[i].flag && strlen(all[i].flag) == len && !strncmp(all[i].flag, flag, len)) return 1;
    for (size_t i = 0; i < sizeof cli_only / sizeof cli_only[0]; i++)
        if (strlen(cli_only[i]) == len && !strncmp(cli_only[i], flag, len)) return 1;
    return 0;
}

static void readme_option_table_lists_every_flag(void **state) {
    (void)state;
    char *readme = golden_read_file(ROOT_DIR "README.md");
    assert_non_null(readme);
    const char *table = strstr(readme, "\n| option | meaning |\n");
    assert_non_null(table);
    /* Every flag named in the first column exists. */
    for (const char *line = table + 1; *line == '|'; line = strchr(line, '\n') + 1) {
        const char *end = strstr(line + 1, "` |");
        assert_non_null(end);
        for (const char *p = strstr(line, "`--"); p && p < end; p = strstr(p + 1, " --")) {
            p += p[0] == '`' ? 3 : 3;
            size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz-");
            if (!is_flag(p, len))
                fail_msg("README documents --%.*s, which does not exist", (int)len, p);
        }
    }
    /* Every flag of the table is documented there. */
    size_t n;
    const lp_opt *all = lp_opt_all(&n);
    for (size_t i = 0; i < n; i++) {
        if (!all[i].flag) continue;
        char want[64];
        snprintf(want, sizeof want, "| `--%s", all[i].flag);
        const char *at = strstr(table, want);
        if (!at) fail_msg("README's option table lacks --%s", all[i].flag);
        char next = at[strlen(want)];
        if (next != ' ' && next != '`') fail_msg("README's option table lacks --%s", all[i].flag);
    }
    free(readme);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keys_and_flags_are_unique_and_nested_rows_follow_their_mapping),
        cmocka_unit_test(default_texts_say_the_defaults),
        cmocka_unit_test(enum_value_names_list_the_canonical_names),
        cmocka_unit_test(what_texts_are_built_from_the_rows),
        cmocka_unit_test(introspection_lists_every_option_but_the_mappings),
        cmocka_unit_test(docs_config_md_documents_every_key_with_its_default),
        cmocka_unit_test(readme_option_table_lists_every_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_cli_help.c: `layerprof --help` lists every flag of the option table (lp_options_key), each
 * under its section, so a new option cannot be left out of the help.
 *
 *     test_cli_help LAYERPROF_BINARY */
#define _POSIX_C_SOURCE 200809L /* popen */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

static const char *g_binary;

static char *help_text(void) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --help", g_binary);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t got;
    while ((got = fread(text + len, 1, cap - 1 - len, p)) > 0)
        len += got;
    text[len] = '\0';
    assert_int_equal(pclose(p), 0);
    return text;
}

static void help_lists_every_flag_under_its_section(void **state) {
    (void)state;
    char *help = help_text();
    size_t listed = 0;
    for (size_t i = 0; i < lp_options_key_count(); i++) {
        lp_option_info o;
        assert_int_equal(lp_options_key(i, &o), LP_OK);
        if (!o.flag) continue;
        char want[128];
        snprintf(want, sizeof want, "\n  --%s%s", o.flag, o.value_name ? " " : "");
        const char *at = strstr(help, want);
        if (!at) fail_msg("--help does not list --%s:\n%s", o.flag, help);
        if (!o.value_name && at[strlen(want)] != ' ' && at[strlen(want)] != '\n')
            fail_msg("--help lists --%s with a value it does not take", o.flag);
        if (o.value_name && strncmp(at + strlen(want), o.value_name, strlen(o.value_name)) != 0)
            fail_msg("--help shows --%s without its value %s", o.flag, o.value_name);
        /* The nearest section title above it is the option's section. */
        char title[64];
        snprintf(title, sizeof title, "\n\n%s:\n", lp_option_section_name(o.section));
        const char *section = NULL;
        for (const char *s = strstr(help, "\n\n"); s && s < at; s = strstr(s + 1, "\n\n"))
            section = s;
        if (!section || strncmp(section, title, strlen(title)) != 0)
            fail_msg("--%s is not under '%s' in --help", o.flag, lp_option_section_name(o.section));
        listed++;
    }
    assert_true(listed >= 25); /* the table had 25 flags when this was written */
    free(help);
}

/* --help lists every format by name and every file ending that implies one, from the format
 * table; docs/config.md's `format` row names every format too (a list that once went stale). */
static void help_and_docs_list_every_format(void **state) {
    (void)state;
    char *help = help_text();
    FILE *f = fopen(LP_SOURCE_DIR "/docs/config.md", "r");
    assert_non_null(f);
    char line[4096], row[4096] = "";
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "| `format` |", 12) == 0) snprintf(row, sizeof row, "%s", line);
    fclose(f);
    assert_true(row[0]);
    size_t n = 0;
    for (lp_format fmt = LP_FORMAT_TREE; lp_format_name(fmt); fmt = (lp_format)(fmt + 1), n++) {
        char want[64];
        snprintf(want, sizeof want, "%s", lp_format_name(fmt));
        if (!strstr(help, want)) fail_msg("--help does not name the format %s", want);
        snprintf(want, sizeof want, "`%s`", lp_format_name(fmt));
        if (!strstr(row, want)) fail_msg("docs/config.md's format row leaves out %s", want);
        for (size_t i = 0; lp_format_extension(fmt, i); i++)
            if (!strstr(help, lp_format_extension(fmt, i)))
                fail_msg("--help does not name the ending %s", lp_format_extension(fmt, i));
    }
    assert_true(n >= 8); /* tree ... openmetrics when this was written */
    free(help);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LAYERPROF_BINARY\n", argv[0]);
        return 2;
    }
    g_binary = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(help_lists_every_flag_under_its_section),
        cmocka_unit_test(help_and_docs_list_every_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

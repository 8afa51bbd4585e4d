/* help.c: --help, generated from the option table (lp_options_key) and the CLI's own flags, one
 * section at a time, so a new option shows up here without an edit. */
#include <stdio.h>
#include <string.h>

#include "flags.h"
#include "help.h"
#include "layerprof.h"

enum { HELP_COLUMN = 33, HELP_WIDTH = 100 };

/* `text` from the current column `col` on, wrapped at word boundaries to HELP_WIDTH, continuation
 * lines starting at HELP_COLUMN. */
static void put_wrapped(FILE *out, const char *text, size_t col) {
    while (*text) {
        size_t room = HELP_WIDTH > col ? HELP_WIDTH - col : 20, len = strlen(text), cut = len;
        if (len > room) {
            cut = room;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            if (cut == 0) /* one word longer than the line: break after it */
                for (cut = room; text[cut] && text[cut] != ' '; cut++)
                    ;
        }
        fprintf(out, "%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            text++;
        if (*text) fprintf(out, "%*s", HELP_COLUMN, "");
        col = HELP_COLUMN;
    }
}

static int says_nothing(const char *def) {
    return !def || !strcmp(def, "null") || !strcmp(def, "none") || !strcmp(def, "false");
}

static void put_flag(FILE *out, const lp_option_info *o) {
    char head[128], text[640];
    int n = snprintf(head, sizeof head, "  --%s%s%s", o->flag, o->value_name ? " " : "",
                     o->value_name ? o->value_name : "");
    if (o->takes_value && !says_nothing(o->default_text))
        snprintf(text, sizeof text, "%s (default: %s)", o->help, o->default_text);
    else
        snprintf(text, sizeof text, "%s", o->help);
    fputs(head, out);
    if (n + 2 > HELP_COLUMN) { /* a long flag gets its help on the next line */
        fprintf(out, "\n%*s", HELP_COLUMN, "");
    } else {
        fprintf(out, "%*s", HELP_COLUMN - n, "");
    }
    put_wrapped(out, text, HELP_COLUMN);
}

/* --format's values and --output's file endings, from the format table. */
static void put_format_flag(FILE *out, const lp_option_info *o, int endings) {
    char text[640], names[256];
    size_t n = 0, used = 0;
    names[0] = '\0';
    for (lp_format f = LP_FORMAT_TREE; lp_format_name(f); f = (lp_format)(f + 1))
        n++;
    for (lp_format f = LP_FORMAT_TREE; lp_format_name(f) && used < sizeof names;
         f = (lp_format)(f + 1)) {
        const char *sep = f == LP_FORMAT_TREE ? "" : (size_t)f + 1 < n ? ", " : " or ";
        if (!endings) {
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", sep,
                                     lp_format_name(f));
            continue;
        }
        for (size_t i = 0; lp_format_extension(f, i) && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     lp_format_extension(f, i));
        if (lp_format_extension(f, 0) && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, " (%s)", lp_format_name(f));
    }
    lp_option_info with = *o;
    if (endings)
        snprintf(text, sizeof text, "%s: %s; anything else: tree", o->help, names);
    else
        snprintf(text, sizeof text, "%s: %s", o->help, names);
    with.help = text;
    put_flag(out, &with);
}

void cli_help(FILE *out) {
    size_t n_table = lp_options_key_count(), n_cli;
    const lp_option_info *cli = cli_only_flags(&n_cli);
    fputs("usage: layerprof MODEL.pt [options]\n"
          "       layerprof --config RUN.yaml [options]\n"
          "       layerprof diff BEFORE.json AFTER.json   (per-module change of self and total "
          "time)\n"
          "       layerprof merge REPORT.json...          (per-module spread across many runs, "
          "skew)\n"
          "\n"
          "Profiles a TorchScript model layer by layer and prints torchprof's module tree.\n",
          out);
    for (int s = LP_SECTION_INPUTS; s <= LP_SECTION_OTHER; s++) {
        fprintf(out, "\n%s:\n", lp_option_section_name((lp_option_section)s));
        for (size_t i = 0; i < n_table; i++) {
            lp_option_info o;
            if (lp_options_key(i, &o) == LP_OK && o.flag && o.section == (lp_option_section)s)
                put_flag(out, &o);
        }
        for (size_t i = 0; i < n_cli; i++) {
            if (cli[i].section != (lp_option_section)s) continue;
            if (i == CLI_FORMAT || i == CLI_OUTPUT)
                put_format_flag(out, &cli[i], i == CLI_OUTPUT);
            else
                put_flag(out, &cli[i]);
        }
    }
}

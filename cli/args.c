/* args.c: the command line read into settings (args.h). getopt's long options are built from the
 * option table (lp_options_key), so every option the library knows is a flag with no code here;
 * only the flags that are not options (--format/--output pairing, --config, --print-config,
 * --help, --version) are handled by name. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "flags.h"
#include "help.h"
#include "layerprof.h"

static int fail_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "layerprof: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try 'layerprof --help')\n");
    return LP_EXIT_USAGE;
}

static int nomem(void) {
    fprintf(stderr, "layerprof: error: out of memory reading the command line\n");
    return LP_EXIT_RUNTIME;
}

/* A string the args own, or NULL when out of memory. */
static char *own(cli_args *a, char *s) {
    if (!s) return NULL;
    char **p = realloc(a->owned, (a->n_owned + 1) * sizeof *p);
    if (!p) {
        free(s);
        return NULL;
    }
    a->owned = p;
    return a->owned[a->n_owned++] = s;
}

/* The settings array has room for one per argument, the most argv can give. */
static void add(cli_args *a, const char *key, const char *value, const char *flag,
                const char *format_flag) {
    a->settings[a->n_settings++] = (cli_setting){key, value, flag, format_flag};
}

/* "--format must be tree, json, ... or summary, got 'x'": the message the option table gives a bad
 * format, for the one bad format the table cannot be asked about (see add_output). */
static int bad_format(const char *format) {
    char names[256] = "";
    size_t off = 0;
    int n = 0;
    while (lp_format_name((lp_format)n))
        n++;
    for (int f = 0; f < n && off < sizeof names; f++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                f == 0       ? ""
                                : f + 1 == n ? " or "
                                             : ", ",
                                lp_format_name((lp_format)f));
    fprintf(stderr, "layerprof: error: --format must be %s, got '%s'\n", names, format);
    return LP_EXIT_USAGE;
}

/* The output a --format names (`format`, NULL: none) for `file` (NULL: stdout), as lp_options_set's
 * "FORMAT[:FILE]". Without a --format the file's name says which, as README documents. Returns -1
 * to go on, or an exit code. */
static int add_output(cli_args *a, const char *format, const char *file) {
    const char *format_flag = format ? "--format" : NULL;
    lp_format from_name = LP_FORMAT_TREE;
    if (!format) {
        if (lp_format_from_path(file, &from_name) != LP_OK) from_name = LP_FORMAT_TREE;
        format = lp_format_name(from_name);
    } else if (strchr(format, ':')) {
        return bad_format(format); /* "json:x" would read as a format and a file */
    }
    size_t n = strlen(format) + (file ? strlen(file) + 1 : 0) + 1;
    char *value = own(a, malloc(n));
    if (!value) return nomem();
    snprintf(value, n, file ? "%s:%s" : "%s", format, file);
    add(a, "outputs", value, "--output", format_flag);
    return -1;
}

int cli_parse(cli_args *a, int argc, char **argv) {
    size_t n_table = lp_options_key_count(), n = 0;
    struct option *longopts = calloc(n_table + N_CLI_ONLY + 1, sizeof *longopts);
    char **flags = calloc(n_table, sizeof *flags); /* "--iterations", for messages */
    lp_option_info *infos = calloc(n_table, sizeof *infos);
    a->settings = calloc((size_t)argc + 1, sizeof *a->settings);
    int rc = -1;
    if (!longopts || !flags || !infos || !a->settings) {
        rc = nomem();
        goto done;
    }
    for (size_t i = 0; i < n_table; i++) {
        lp_options_key(i, &infos[i]);
        if (!infos[i].flag) continue;
        if (!(flags[i] = own(a, malloc(strlen(infos[i].flag) + 3)))) {
            rc = nomem();
            goto done;
        }
        sprintf(flags[i], "--%s", infos[i].flag);
        longopts[n++] = (struct option){infos[i].flag, infos[i].takes_value, NULL, 256 + (int)i};
    }
    size_t n_cli;
    const lp_option_info *cli_only = cli_only_flags(&n_cli);
    for (size_t i = 0; i < n_cli; i++)
        longopts[n++] = (struct option){cli_only[i].flag, cli_only[i].takes_value, NULL,
                                        256 + (int)n_table + (int)i};

    /* A --format applies to the next --output; one not followed by an --output before the next
     * --format (or the end) writes to stdout. */
    const char *pending_format = NULL;
    opterr = 0;
    int opt;
    while (rc < 0 && (opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (opt == ':') {
            rc = fail_usage("%s needs a value", argv[optind - 1]);
            break;
        }
        if (opt < 256) {
            rc = fail_usage("unknown option '%s'", argv[optind - 1]);
            break;
        }
        size_t i = (size_t)(opt - 256);
        if (i < n_table) {
            add(a, infos[i].key, infos[i].takes_value ? optarg : "true", flags[i], NULL);
            continue;
        }
        switch (i - n_table) {
        case CLI_FORMAT:
            if (pending_format) rc = add_output(a, pending_format, NULL);
            pending_format = optarg;
            break;
        case CLI_OUTPUT:
            rc = add_output(a, pending_format, optarg);
            pending_format = NULL;
            break;
        case CLI_CONFIG:
            a->config = optarg;
            break;
        case CLI_PRINT_CONFIG:
            a->print_config = 1;
            break;
        case CLI_HELP:
            cli_help(stdout);
            rc = 0;
            break;
        default:
            printf("layerprof %s (libtorch %s)\n", lp_version(), lp_torch_version());
            rc = 0;
            break;
        }
    }
    if (rc < 0 && pending_format) rc = add_output(a, pending_format, NULL);
    if (rc < 0 && optind < argc) add(a, "model", argv[optind++], NULL, NULL);
    if (rc < 0 && optind < argc)
        rc = fail_usage("unexpected argument '%s' (one model at a time)", argv[optind]);
done:
    free(longopts);
    free(flags);
    free(infos);
    return rc;
}

void cli_setting_error(const cli_setting *s, const char *message) {
    const char *end = message[0] == '\'' ? strchr(message + 1, '\'') : NULL;
    if (!s->flag) {
        fprintf(stderr, "layerprof: error: %s\n", message);
        return;
    }
    if (!end) {
        fprintf(stderr, "layerprof: error: %s: %s\n", s->flag, message);
        return;
    }
    /* An output's format came from --format; its file from --output. */
    const char *flag = s->flag;
    if (s->format_flag && strncmp(message, "'format'", 8) == 0) flag = s->format_flag;
    fprintf(stderr, "layerprof: error: %s%s\n", flag, end + 1);
}

void cli_args_free(cli_args *a) {
    for (size_t i = 0; i < a->n_owned; i++)
        free(a->owned[i]);
    free(a->owned);
    free(a->settings);
}

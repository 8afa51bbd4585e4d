/* main.c: the layerprof command line. A client of the public API and nothing else.
 * Exit codes: 0 ok, 1 runtime failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diff.h"
#include "layerprof.h"

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

static void usage(FILE *out) {
    fputs(
        "usage: layerprof MODEL.pt [options]\n"
        "       layerprof --config RUN.yaml [options]\n"
        "\n"
        "Profiles a TorchScript model layer by layer and prints torchprof's module tree.\n"
        "\n"
        "Inputs (default: the inputs recorded in the model file):\n"
        "  --input SHAPE[:DTYPE][:FILL]   e.g. 1x3x224x224, 1x32:int64:0..1000, 2x8:float16:zeros\n"
        "                                 FILL: random (default), zeros, ones, or a range LO..HI;\n"
        "                                 random integers need a range. Repeat for more inputs.\n"
        "  --input-file FILE:SHAPE[:DTYPE] raw little-endian data for one input\n"
        "  --seed N                       seed for random inputs (default 0)\n"
        "\n"
        "Run:\n"
        "  --device DEV                   cpu (default), cuda, cuda:N\n"
        "  --cuda-timing auto|cupti|events|off  CUDA kernel time per module: CUPTI activity\n"
        "                                 records, or CUDA events (auto: CUPTI when available)\n"
        "  --nvtx                         an NVTX range per module (per op with --events)\n"
        "  --mode hooks|graph             hooks (default): optimizer off, true module entry/exit;\n"
        "                                 graph: optimised graph, modules inferred per op\n"
        "  --warmup N                     unprofiled forwards first (default 2)\n"
        "  --iterations N                 profiled forwards (default 10)\n"
        "  --threads N                    intra-op threads (default: libtorch's)\n"
        "  --schedule SPEC                record in cycles, as torch.profiler's schedule:\n"
        "                                 wait=W,warmup=N,active=A,repeat=R (keys in any order,\n"
        "                                 missing ones 0, active >= 1, repeat 0: no limit); an\n"
        "                                 --output name with %d is written once per cycle\n"
        "\n"
        "What to record:\n"
        "  --memory                       retained, peak and net memory per module\n"
        "  --events                       each module's ops, nested under their callers\n"
        "  --shapes                       group ops by input shapes (with --events)\n"
        "  --path P                       profile only these modules and their subtrees; dotted\n"
        "                                 (features.3), torchprof tuples (AlexNet,features,3) or\n"
        "                                 globs (features.*, **.conv1, layer?.0). Repeatable.\n"
        "\n"
        "Display:\n"
        "  --depth N                      fold modules deeper than N into their ancestor\n"
        "  --sort COLUMN                  sort siblings by a column (default: model order)\n"
        "  --top K                        list the K modules with the most self time\n"
        "  --columns A,B,...              pick and order columns (self_cpu, cpu_total, calls, "
        "...)\n"
        "  --units auto|us|ms|s           time units (default auto)\n"
        "  --ascii                        ASCII tree glyphs\n"
        "\n"
        "Outputs (default: the tree on stdout):\n"
        "  --format tree|json|csv|markdown|trace|html|summary\n"
        "                                 the format of the next --output (stdout without one)\n"
        "  --output FILE                  write a report to FILE; repeatable. Without --format\n"
        "                                 the name says which: .json, .csv, .md, .html,\n"
        "                                 .trace.json (Chrome trace); anything else: tree\n"
        "  --trace                        record a timeline (module and op spans, memory over\n"
        "                                 time) for trace and html outputs; implied by trace\n"
        "  --trace-iterations N           profiled iterations on the timeline (default 3)\n"
        "  --summary                      print torchtimer's markdown summary after the tree\n"
        "\n"
        "Compare two JSON reports:\n"
        "  layerprof diff BEFORE.json AFTER.json   per-module change of self and total time\n"
        "\n"
        "Other:\n"
        "  --config FILE                  read options from a YAML file; flags override it\n"
        "  --print-config                 print the effective configuration as YAML and exit\n"
        "  --verbose                      let libtorch's own log output through\n"
        "  --help, --version\n",
        out);
}

static int fail_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "layerprof: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try 'layerprof --help')\n");
    return EXIT_USAGE;
}

/* Strict integer: the whole argument, in range. Upper limits are lp_options_validate's to give. */
static int parse_int(const char *flag, const char *text, long min, long max, int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end) {
        fprintf(stderr, "layerprof: error: %s expects a whole number, not '%s'\n", flag, text);
        return EXIT_USAGE;
    }
    if (v < min || v > max) {
        fprintf(stderr, "layerprof: error: %s must be between %ld and %ld, not %s\n", flag, min,
                max, text);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

/* What the command line said, kept apart so it can be laid over a config file. */
typedef struct cli {
    lp_options set; /* values given on the command line */
    int has_model, has_device, has_mode, has_warmup, has_iterations, has_threads, has_seed;
    int has_memory, has_events, has_shapes, has_depth, has_sort, has_top, has_units, has_ascii;
    int has_verbose;
    int has_cuda_timing, has_nvtx;
    int has_schedule, has_summary;
    lp_input_spec inputs[LP_MAX_INPUTS];
    size_t n_inputs;
    const char *paths[256];
    size_t n_paths;
    char *columns_buf;
    const char *columns[64];
    size_t n_columns;
    lp_output_spec outputs[16];
    int has_format; /* a --format waiting for its --output */
    lp_format format;
    int has_trace, has_trace_iterations;
    size_t n_outputs;
    const char *config;
    int print_config;
} cli;

static int split_columns(cli *c, const char *arg) {
    free(c->columns_buf);
    c->columns_buf = strdup(arg);
    if (!c->columns_buf) return EXIT_RUNTIME;
    c->n_columns = 0;
    for (char *save = NULL, *tok = strtok_r(c->columns_buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (c->n_columns == sizeof c->columns / sizeof c->columns[0])
            return fail_usage("too many columns in '%s'", arg);
        c->columns[c->n_columns++] = tok;
    }
    if (!c->n_columns) return fail_usage("--columns needs at least one column, not '%s'", arg);
    return 0;
}

static int parse_units(const char *arg, lp_units *out) {
    static const struct {
        const char *name;
        lp_units units;
    } table[] = {
        {"auto", LP_UNITS_AUTO}, {"us", LP_UNITS_US}, {"ms", LP_UNITS_MS}, {"s", LP_UNITS_S}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(arg, table[i].name) == 0) {
            *out = table[i].units;
            return 0;
        }
    return fail_usage("--units must be auto, us, ms or s, not '%s'", arg);
}

enum {
    OPT_INPUT = 256,
    OPT_INPUT_FILE,
    OPT_SEED,
    OPT_DEVICE,
    OPT_MODE,
    OPT_WARMUP,
    OPT_ITERATIONS,
    OPT_THREADS,
    OPT_MEMORY,
    OPT_EVENTS,
    OPT_SHAPES,
    OPT_PATH,
    OPT_DEPTH,
    OPT_SORT,
    OPT_TOP,
    OPT_COLUMNS,
    OPT_UNITS,
    OPT_ASCII,
    OPT_OUTPUT,
    OPT_CONFIG,
    OPT_PRINT_CONFIG,
    OPT_VERBOSE,
    OPT_FORMAT,
    OPT_TRACE,
    OPT_TRACE_ITERATIONS,
    OPT_CUDA_TIMING,
    OPT_NVTX,
    OPT_SCHEDULE,
    OPT_SUMMARY,
    OPT_HELP,
    OPT_VERSION
};

static const struct option long_options[] = {
    {"input", required_argument, 0, OPT_INPUT},
    {"input-file", required_argument, 0, OPT_INPUT_FILE},
    {"seed", required_argument, 0, OPT_SEED},
    {"device", required_argument, 0, OPT_DEVICE},
    {"mode", required_argument, 0, OPT_MODE},
    {"warmup", required_argument, 0, OPT_WARMUP},
    {"iterations", required_argument, 0, OPT_ITERATIONS},
    {"threads", required_argument, 0, OPT_THREADS},
    {"memory", no_argument, 0, OPT_MEMORY},
    {"events", no_argument, 0, OPT_EVENTS},
    {"shapes", no_argument, 0, OPT_SHAPES},
    {"path", required_argument, 0, OPT_PATH},
    {"depth", required_argument, 0, OPT_DEPTH},
    {"sort", required_argument, 0, OPT_SORT},
    {"top", required_argument, 0, OPT_TOP},
    {"columns", required_argument, 0, OPT_COLUMNS},
    {"units", required_argument, 0, OPT_UNITS},
    {"ascii", no_argument, 0, OPT_ASCII},
    {"output", required_argument, 0, OPT_OUTPUT},
    {"config", required_argument, 0, OPT_CONFIG},
    {"print-config", no_argument, 0, OPT_PRINT_CONFIG},
    {"verbose", no_argument, 0, OPT_VERBOSE},
    {"format", required_argument, 0, OPT_FORMAT},
    {"trace", no_argument, 0, OPT_TRACE},
    {"trace-iterations", required_argument, 0, OPT_TRACE_ITERATIONS},
    {"cuda-timing", required_argument, 0, OPT_CUDA_TIMING},
    {"nvtx", no_argument, 0, OPT_NVTX},
    {"schedule", required_argument, 0, OPT_SCHEDULE},
    {"summary", no_argument, 0, OPT_SUMMARY},
    {"help", no_argument, 0, OPT_HELP},
    {"version", no_argument, 0, OPT_VERSION},
    {0, 0, 0, 0}};

/* --output FILE: the pending --format, else what the file name says, else the tree. */
static lp_format output_format(const cli *c, const char *file) {
    lp_format f = LP_FORMAT_TREE;
    if (c->has_format) return c->format;
    if (lp_format_from_path(file, &f) != LP_OK) f = LP_FORMAT_TREE;
    return f;
}

/* A --format that no --output followed writes to stdout. */
static int add_stdout_output(cli *c) {
    if (c->n_outputs == sizeof c->outputs / sizeof c->outputs[0])
        return fail_usage("too many outputs%s", "");
    c->outputs[c->n_outputs++] = (lp_output_spec){c->format, NULL};
    c->has_format = 0;
    return 0;
}

/* One line on stderr, rewritten in place, at most every 100 ms; erased when the run is done. */
static void show_progress(const lp_progress *p, void *payload) {
    static struct timespec last;
    (void)payload;
    if (p->phase == LP_PHASE_DONE) {
        fputs("\r\033[K", stderr);
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (long)(now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000;
    if (p->done != 0 && p->done != p->total && ms < 100) return;
    last = now;
    fprintf(stderr, "\r\033[Klayerprof: %s %d/%d",
            p->phase == LP_PHASE_WARMUP ? "warm-up" : "profiling", p->done, p->total);
}

/* Returns -1 to continue, or an exit code. */
static int parse_args(cli *c, int argc, char **argv) {
    lp_options_init(&c->set);
    opterr = 0;
    int opt, rc;
    while ((opt = getopt_long(argc, argv, ":", long_options, NULL)) != -1) {
        const char *a = optarg;
        switch (opt) {
        case OPT_INPUT:
        case OPT_INPUT_FILE:
            if (c->n_inputs == LP_MAX_INPUTS) return fail_usage("at most 16 inputs%s", "");
            if ((opt == OPT_INPUT ? lp_input_spec_parse
                                  : lp_input_file_spec_parse)(a, &c->inputs[c->n_inputs]))
                return fail_usage("%s", lp_error_last());
            c->n_inputs++;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(a, &end, 10);
            if (errno || end == a || *end || a[0] == '-')
                return fail_usage("--seed expects a whole number, not '%s'", a);
            c->set.seed = v;
            c->has_seed = 1;
            break;
        }
        case OPT_DEVICE:
            c->set.device = a;
            c->has_device = 1;
            break;
        case OPT_MODE:
            if (strcmp(a, "hooks") == 0)
                c->set.mode = LP_MODE_HOOKS;
            else if (strcmp(a, "graph") == 0)
                c->set.mode = LP_MODE_GRAPH;
            else
                return fail_usage("--mode must be hooks or graph, not '%s'", a);
            c->has_mode = 1;
            break;
        case OPT_WARMUP:
            if ((rc = parse_int("--warmup", a, 0, INT_MAX, &c->set.warmup))) return rc;
            c->has_warmup = 1;
            break;
        case OPT_ITERATIONS:
            if ((rc = parse_int("--iterations", a, 1, INT_MAX, &c->set.iterations))) return rc;
            c->has_iterations = 1;
            break;
        case OPT_THREADS:
            if ((rc = parse_int("--threads", a, 0, INT_MAX, &c->set.threads))) return rc;
            c->has_threads = 1;
            break;
        case OPT_MEMORY:
            c->set.memory = c->has_memory = 1;
            break;
        case OPT_EVENTS:
            c->set.events = c->has_events = 1;
            break;
        case OPT_SHAPES:
            c->set.shapes = c->has_shapes = 1;
            break;
        case OPT_PATH:
            if (c->n_paths == sizeof c->paths / sizeof c->paths[0])
                return fail_usage("too many --path options%s", "");
            c->paths[c->n_paths++] = a;
            break;
        case OPT_DEPTH:
            if ((rc = parse_int("--depth", a, 0, INT_MAX, &c->set.depth))) return rc;
            c->has_depth = 1;
            break;
        case OPT_SORT:
            c->set.sort = a;
            c->has_sort = 1;
            break;
        case OPT_TOP:
            if ((rc = parse_int("--top", a, 0, INT_MAX, &c->set.top))) return rc;
            c->has_top = 1;
            break;
        case OPT_COLUMNS:
            if ((rc = split_columns(c, a))) return rc;
            break;
        case OPT_UNITS:
            if ((rc = parse_units(a, &c->set.units))) return rc;
            c->has_units = 1;
            break;
        case OPT_ASCII:
            c->set.ascii = c->has_ascii = 1;
            break;
        case OPT_OUTPUT:
            if (c->n_outputs == sizeof c->outputs / sizeof c->outputs[0])
                return fail_usage("too many outputs%s", "");
            c->outputs[c->n_outputs++] = (lp_output_spec){output_format(c, a), a};
            c->has_format = 0;
            break;
        case OPT_FORMAT:
            if (lp_format_parse(a, &c->format)) return fail_usage("%s", lp_error_last());
            if (c->has_format && (rc = add_stdout_output(c))) return rc; /* two in a row */
            c->has_format = 1;
            break;
        case OPT_TRACE:
            c->set.trace = c->has_trace = 1;
            break;
        case OPT_TRACE_ITERATIONS:
            if ((rc = parse_int("--trace-iterations", a, 1, INT_MAX, &c->set.trace_iterations)))
                return rc;
            c->has_trace_iterations = 1;
            break;
        case OPT_CONFIG:
            c->config = a;
            break;
        case OPT_PRINT_CONFIG:
            c->print_config = 1;
            break;
        case OPT_VERBOSE:
            c->set.verbose = c->has_verbose = 1;
            break;
        case OPT_CUDA_TIMING: {
            static const char *const names[] = {"auto", "cupti", "events", "off"};
            size_t k = 0;
            while (k < 4 && strcmp(a, names[k]) != 0)
                k++;
            if (k == 4)
                return fail_usage("--cuda-timing must be auto, cupti, events or off, not '%s'", a);
            c->set.cuda_timing = (lp_cuda_timing)k;
            c->has_cuda_timing = 1;
            break;
        }
        case OPT_NVTX:
            c->set.nvtx = c->has_nvtx = 1;
            break;
        case OPT_SCHEDULE:
            if (lp_schedule_parse(a, &c->set.schedule)) return fail_usage("%s", lp_error_last());
            c->has_schedule = 1;
            break;
        case OPT_SUMMARY:
            c->set.summary = c->has_summary = 1;
            break;
        case OPT_HELP:
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("layerprof %s (libtorch %s)\n", lp_version(), lp_torch_version());
            return 0;
        case ':':
            return fail_usage("%s needs a value", argv[optind - 1]);
        default:
            return fail_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (c->has_format && (rc = add_stdout_output(c))) return rc; /* a --format with no --output */
    if (optind < argc) {
        c->set.model_path = argv[optind++];
        c->has_model = 1;
    }
    if (optind < argc)
        return fail_usage("unexpected argument '%s' (one model at a time)", argv[optind]);
    return -1;
}

/* Lays the command line over `o` (the defaults, or the config file's options). */
static void apply(const cli *c, lp_options *o) {
#define TAKE(flag, field)                                                                          \
    if (c->flag) o->field = c->set.field
    TAKE(has_model, model_path);
    TAKE(has_device, device);
    TAKE(has_mode, mode);
    TAKE(has_warmup, warmup);
    TAKE(has_iterations, iterations);
    TAKE(has_threads, threads);
    TAKE(has_seed, seed);
    TAKE(has_memory, memory);
    TAKE(has_events, events);
    TAKE(has_shapes, shapes);
    TAKE(has_depth, depth);
    TAKE(has_sort, sort);
    TAKE(has_top, top);
    TAKE(has_units, units);
    TAKE(has_ascii, ascii);
    TAKE(has_verbose, verbose);
    TAKE(has_trace, trace);
    TAKE(has_trace_iterations, trace_iterations);
    TAKE(has_cuda_timing, cuda_timing);
    TAKE(has_nvtx, nvtx);
    TAKE(has_schedule, schedule);
    TAKE(has_summary, summary);
#undef TAKE
    if (c->n_inputs) {
        o->inputs = c->inputs;
        o->n_inputs = c->n_inputs;
    }
    if (c->n_paths) {
        o->paths = c->paths;
        o->n_paths = c->n_paths;
    }
    if (c->n_columns) {
        o->columns = c->columns;
        o->n_columns = c->n_columns;
    }
    if (c->n_outputs) {
        o->outputs = c->outputs;
        o->n_outputs = c->n_outputs;
    }
}

/* Usage errors are the ones the user fixes by changing what they typed. */
static int exit_code(int status) {
    return status == LP_ERR_INVALID || status == LP_ERR_NOT_FOUND ? EXIT_USAGE : EXIT_RUNTIME;
}

static int run(cli *c) {
    lp_config *cfg = NULL;
    lp_options o;
    lp_options_init(&o);
    if (c->config) {
        int rc = lp_config_load(&cfg, c->config);
        if (rc) {
            fprintf(stderr, "layerprof: error: %s\n", lp_error_last());
            return exit_code(rc);
        }
        o = *lp_config_options(cfg);
    }
    apply(c, &o);
    int rc = LP_OK;
    if (c->print_config) {
        rc = lp_options_write_yaml(&o, stdout);
        if (rc) fprintf(stderr, "layerprof: error: %s\n", lp_error_last());
        lp_config_free(cfg);
        return rc ? exit_code(rc) : 0;
    }
    if (!o.model_path) {
        lp_config_free(cfg);
        return fail_usage("no model given%s", "");
    }
    if (isatty(STDERR_FILENO)) o.progress = show_progress; /* quiet when piped or logged */
    lp_session *s = NULL;
    rc = lp_session_open(&s, &o);
    if (!rc) rc = lp_session_run(s);
    if (!rc) rc = lp_session_write_outputs(s);
    if (rc && o.progress) fputs("\r\033[K", stderr); /* a failed run leaves its line */
    if (rc) fprintf(stderr, "layerprof: error: %s\n", lp_error_last());
    lp_session_close(s);
    lp_config_free(cfg);
    return rc ? exit_code(rc) : 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "diff") == 0) return lp_cli_diff(argc - 1, argv + 1);
    cli c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(&c, argc, argv);
    if (rc < 0) rc = run(&c);
    free(c.columns_buf);
    return rc;
}

/* option_table.c: the option table (option_table.h) and the public introspection over it
 * (lp_options_key_count, lp_options_key). The rows are in the YAML file's order, which is also the
 * order --print-config writes and "expected one of" lists. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/out_size.h"
#include "base/labels.h"
#include "config/option_table.h"
#include "layerprof.h"
#include "report/columns.h"

#define OPT(f) offsetof(lp_options, f)
/* Stringified into the texts below, so the ceilings have one definition (option_table.h). */
#define STR_(x) #x
#define STR(x) STR_(x)

/* A default written once, for the field and for the text docs/config.md shows. */
#define DEF_INT(v) .def = (v), .default_text = #v
#define OFF .def = 0, .default_text = "false"

static const lp_opt table[] = {
    {"model", NULL, LP_OPT_STRING, LP_OPTF_NULLABLE | LP_OPTF_REQUIRED, OPT(model_path),
     .default_text = "none", .what = "the path of a TorchScript file",
     .help = "the TorchScript file, or AOTInductor package (.pt2, libtorch 2.x), to profile",
     .section = LP_SECTION_RUN},
    {"device", "device", LP_OPT_STRING, LP_OPTF_NULLABLE, OPT(device), .check = LP_CHECK_DEVICE,
     .def_str = "cpu", .default_text = "cpu", .what = "cpu, cuda or cuda:N", .value_name = "DEV",
     .help = "where the model runs: cpu, cuda or cuda:N", .section = LP_SECTION_RUN},
    {"mode", "mode", LP_OPT_ENUM, 0, OPT(mode), .names = &lp_cfg_modes, .def = LP_MODE_MARKERS,
     .default_text = "markers", .value_name = "hooks|markers",
     .help = "markers (the default): the optimised model, exact calls marked at each call "
             "site; hooks: optimizer off, each module call a real frame; graph: an alias of "
             "markers, kept for old scripts",
     .section = LP_SECTION_RUN},
    {"inputs", "input", LP_OPT_INPUTS, LP_OPTF_REPEATABLE, OPT(inputs), OPT(n_inputs),
     .max = LP_MAX_INPUTS, .default_text = "the inputs recorded in the model file",
     .what = "a list of inputs such as {shape: [1, 3, 224, 224]} or \"[3x320x320, 3x240x320]\"",
     .value_name = "SHAPE[:DTYPE][:FILL]",
     .help = "one forward argument, e.g. 1x3x224x224, 1x32:int64:0..1000, 2x8:float16:zeros "
             "(FILL: random, zeros, ones or LO..HI; random integers need a range); lists "
             "[3x320x320, 3x240x320], tuples (a, b), dicts {key: a}, int:5, float:0.5, bool:true, "
             "str:TEXT, none, nested freely; repeat for more arguments",
     .section = LP_SECTION_INPUTS},
    {"input_file", "input-file", LP_OPT_INPUT_FILE, LP_OPTF_NOT_YAML | LP_OPTF_REPEATABLE,
     OPT(inputs), OPT(n_inputs), .max = LP_MAX_INPUTS, .default_text = "none",
     .what = "FILE:SHAPE[:DTYPE]", .value_name = "FILE:SHAPE[:DTYPE]",
     .help = "one input read from raw little-endian data (added to the --input list)",
     .section = LP_SECTION_INPUTS},
    {"inputs_saved", "inputs", LP_OPT_INPUT_SAVED, LP_OPTF_NOT_YAML | LP_OPTF_REPEATABLE,
     OPT(inputs), OPT(n_inputs), .max = LP_MAX_INPUTS, .default_text = "none", .what = "FILE.pt",
     .value_name = "FILE.pt",
     .help = "the forward's arguments from torch.save((arg1, arg2), FILE.pt): a tuple is spread "
             "into positional arguments (added to the --input list; YAML: saved:FILE.pt)",
     .section = LP_SECTION_INPUTS},
    {"seed", "seed", LP_OPT_U64, 0, OPT(seed), DEF_INT(0), .value_name = "N",
     .help = "seed for random inputs", .section = LP_SECTION_INPUTS},
    {"warmup", "warmup", LP_OPT_INT, 0, OPT(warmup), .lo = 0, .hi = LP_MAX_ITERATIONS, DEF_INT(3),
     .value_name = "N",
     .help = "unprofiled forwards before measuring (TorchScript optimises during the first 3)",
     .section = LP_SECTION_RUN},
    {"iterations", "iterations", LP_OPT_INT, 0, OPT(iterations), .lo = 1, .hi = LP_MAX_ITERATIONS,
     DEF_INT(10), .value_name = "N", .help = "profiled forwards", .section = LP_SECTION_RUN},
    {"threads", "threads", LP_OPT_INT, 0, OPT(threads), .lo = 0, .hi = LP_MAX_INTRAOP_THREADS,
     .lo_note = "libtorch's default", DEF_INT(0), .value_name = "N",
     .help = "intra-op threads; 0 keeps libtorch's own", .section = LP_SECTION_RUN},
    {"schedule", "schedule", LP_OPT_SCHEDULE, 0, OPT(schedule), .default_text = "null",
     .what = "a mapping of wait, warmup, active and repeat, or a string such as "
             "\"wait=1,warmup=1,active=3,repeat=2\"",
     .value_name = "SPEC",
     .help = "record in cycles, as torch.profiler's schedule: wait=W,warmup=N,active=A,repeat=R "
             "(keys in any order, missing ones 0, active >= 1, repeat 0: no limit); an --output "
             "name with %d is written once per cycle",
     .section = LP_SECTION_RUN},
    {"schedule.wait", NULL, LP_OPT_INT, LP_OPTF_BY_PARENT, OPT(schedule.wait), .lo = 0,
     .hi = INT_MAX, DEF_INT(0), .help = "steps skipped at the start of each cycle"},
    {"schedule.warmup", NULL, LP_OPT_INT, LP_OPTF_BY_PARENT, OPT(schedule.warmup), .lo = 0,
     .hi = INT_MAX, DEF_INT(0), .help = "steps profiled but not kept"},
    {"schedule.active", NULL, LP_OPT_INT, LP_OPTF_BY_PARENT, OPT(schedule.active), .lo = 1,
     .hi = INT_MAX, .def = 0, .default_text = "required", .help = "steps recorded per cycle"},
    {"schedule.repeat", NULL, LP_OPT_INT, LP_OPTF_BY_PARENT, OPT(schedule.repeat), .lo = 0,
     .hi = INT_MAX, .lo_note = "no limit", DEF_INT(0), .help = "cycles in all; 0: no limit"},
    {"profile", NULL, LP_OPT_MAPPING, LP_OPTF_FLOW, .default_text = "all false",
     .help = "what to record besides time"},
    {"profile.memory", "memory", LP_OPT_BOOL, 0, OPT(memory), OFF,
     .help = "retained, peak and net memory per module", .section = LP_SECTION_RECORD},
    {"profile.events", "events", LP_OPT_BOOL, 0, OPT(events), OFF,
     .help = "each module's ops, nested under their callers", .section = LP_SECTION_RECORD},
    {"profile.shapes", "shapes", LP_OPT_BOOL, 0, OPT(shapes), OFF,
     .help = "group ops by input shapes (with --events)", .section = LP_SECTION_RECORD},
    {"profile.trace", "trace", LP_OPT_BOOL, 0, OPT(trace), OFF,
     .help = "record a timeline (module and op spans, memory over time) for trace and html "
             "outputs; a trace output turns it on",
     .section = LP_SECTION_RECORD},
    {"profile.trace_iterations", "trace-iterations", LP_OPT_INT, 0, OPT(trace_iterations), .lo = 0,
     .hi = LP_MAX_ITERATIONS, .lo_note = "the first 3", DEF_INT(0), .value_name = "N",
     .help = "profiled iterations on the timeline; 0: the first 3", .section = LP_SECTION_RECORD},
    {"profile.cuda_timing", "cuda-timing", LP_OPT_ENUM, 0, OPT(cuda_timing),
     .names = &lp_cfg_cuda_timings, .def = LP_CUDA_TIMING_AUTO, .default_text = "auto",
     .value_name = "auto|cupti|events|off",
     .help = "CUDA kernel time per module: CUPTI activity records, or CUDA events (auto: CUPTI "
             "when available)",
     .section = LP_SECTION_RUN},
    {"profile.nvtx", "nvtx", LP_OPT_BOOL, 0, OPT(nvtx), OFF,
     .help = "an NVTX range per module call (per op with --events), for Nsight Systems",
     .section = LP_SECTION_RUN},
    {"libraries", "load-library", LP_OPT_PATHS, LP_OPTF_REPEATABLE, OPT(libraries),
     OPT(n_libraries), .default_text = "none", .what = "a list of shared library paths",
     .value_name = "PATH",
     .help = "a custom-op library to load before the model (torchvision's _C.so, "
             "torchaudio's libtorchaudio.so, your own); repeatable",
     .section = LP_SECTION_RUN},
    {"paths", "path", LP_OPT_PATHS, LP_OPTF_REPEATABLE, OPT(paths), OPT(n_paths),
     .default_text = "all modules", .what = "a list of module paths", .value_name = "P",
     .help = "profile only these modules and their subtrees: dotted (features.3), torchprof "
             "tuples (AlexNet,features,3) or globs (features.*, **.conv1, layer?.0); repeatable",
     .section = LP_SECTION_RECORD},
    {"labels", "label", LP_OPT_PATHS, LP_OPTF_REPEATABLE, OPT(labels), OPT(n_labels),
     .max = LP_MAX_LABELS, .check = LP_CHECK_LABEL, .default_text = "none",
     .what = "a list of NAME=VALUE labels", .value_name = "NAME=VALUE",
     .help = "where the run comes from (host=a, rank=3): kept in the JSON report's run and added "
             "to every OpenMetrics series; Prometheus' label rules, at most " STR(
                 LP_MAX_LABELS) "; repeatable",
     .section = LP_SECTION_RUN},
    {"display", NULL, LP_OPT_MAPPING, 0, .default_text = "see below",
     .help = "how the report looks"},
    {"display.depth", "depth", LP_OPT_INT, 0, OPT(depth), .lo = -1, .hi = INT_MAX,
     .lo_note = "no limit", DEF_INT(-1), .value_name = "N",
     .help = "fold modules deeper than N into their ancestor; -1: no limit",
     .section = LP_SECTION_DISPLAY},
    {"display.sort", "sort", LP_OPT_STRING, LP_OPTF_NULLABLE, OPT(sort), .check = LP_CHECK_COLUMN,
     .default_text = "null", .what = "a column id, or null for model order", .value_name = "COLUMN",
     .help = "sort siblings by a column, descending (default: model order)",
     .section = LP_SECTION_DISPLAY},
    {"display.top", "top", LP_OPT_INT, 0, OPT(top), .lo = 0, .hi = INT_MAX, DEF_INT(0),
     .value_name = "K", .help = "list the K modules with the most self time under the tree",
     .section = LP_SECTION_DISPLAY},
    {"display.columns", "columns", LP_OPT_COLUMNS, 0, OPT(columns), OPT(n_columns),
     .check = LP_CHECK_COLUMN, .max = LP_MAX_COLUMNS, .default_text = "the default set",
     .what = "a list of column ids", .value_name = "A,B,...",
     .help = "pick and order columns: self_cpu, cpu_total, calls, mean, ... (docs/config.md)",
     .section = LP_SECTION_DISPLAY},
    {"display.units", "units", LP_OPT_ENUM, 0, OPT(units), .names = &lp_cfg_units,
     .def = LP_UNITS_AUTO, .default_text = "auto", .value_name = "auto|us|ms|s",
     .help = "time units; auto picks one per value, as torchprof does",
     .section = LP_SECTION_DISPLAY},
    {"display.ascii", "ascii", LP_OPT_BOOL, 0, OPT(ascii), OFF, .help = "ASCII tree glyphs",
     .section = LP_SECTION_DISPLAY},
    {"display.prune", "prune", LP_OPT_BOOL, 0, OPT(prune), OFF,
     .help = "leave out modules that were not profiled and hold none that was (with --path)",
     .section = LP_SECTION_DISPLAY},
    {"display.name_width", "name-width", LP_OPT_INT, 0, OPT(name_width), .lo = 0, .hi = 100000,
     DEF_INT(64), .value_name = "N",
     .help = "shorten op names longer than N characters in the tree and markdown (0: never)",
     .section = LP_SECTION_DISPLAY},
    {"outputs", NULL, LP_OPT_OUTPUTS, LP_OPTF_REPEATABLE, OPT(outputs), OPT(n_outputs),
     .default_text = "one tree on stdout",
     .what = "a list of outputs such as {format: tree, file: \"-\"}", .value_name = "FORMAT[:FILE]",
     .help = "one report: its format and file (none or \"-\": stdout)",
     .section = LP_SECTION_OUTPUTS},
    {"sample_every", "sample-every", LP_OPT_INT, 0, OPT(sample_every), .lo = 1, .hi = INT_MAX,
     DEF_INT(1), .value_name = "N",
     .help = "profile every Nth forward of a session that stays open (lp_session_forward, "
             "attached modules); the others run unprofiled",
     .section = LP_SECTION_RECORD},
    {"sample_probability", "sample-probability", LP_OPT_REAL, 0, OPT(sample_probability), .rlo = 0,
     .rhi = 1, .rlo_open = 1, .rdef = 1, .default_text = "1", .value_name = "P",
     .help = "profile each forward of a session that stays open with probability P, in (0, 1]",
     .section = LP_SECTION_RECORD},
    {"sample_budget", "sample-budget", LP_OPT_REAL, 0, OPT(sample_budget), .rlo = 0, .rhi = 0.5,
     .rdef = 0, .default_text = "0", .value_name = "F",
     .help = "the fraction of forward time profiling may cost (0.01: 1%), which sets the "
             "sampling rate from measured costs; 0: off",
     .section = LP_SECTION_RECORD},
    {"metrics_depth", "metrics-depth", LP_OPT_INT, 0, OPT(metrics_depth), .lo = -1, .hi = INT_MAX,
     .lo_note = "no limit", DEF_INT(1), .value_name = "D",
     .help = "openmetrics: fold modules deeper than D into their ancestor, bounding the series; "
             "-1: no limit",
     .section = LP_SECTION_OUTPUTS},
    {"summary", "summary", LP_OPT_BOOL, 0, OPT(summary), OFF,
     .help = "print torchtimer's markdown summary after the tree", .section = LP_SECTION_OUTPUTS},
    {"verbose", "verbose", LP_OPT_BOOL, 0, OPT(verbose), OFF,
     .help = "let libtorch's own log output through", .section = LP_SECTION_OTHER},
};
#define N_ROWS (sizeof table / sizeof table[0])

const lp_opt *lp_opt_all(size_t *n) {
    *n = N_ROWS;
    return table;
}

const lp_opt *lp_opt_find(const char *key) {
    for (size_t i = 0; key && i < N_ROWS; i++)
        if (strcmp(table[i].key, key) == 0) return &table[i];
    return NULL;
}

const char *lp_opt_leaf(const lp_opt *o) {
    const char *dot = strrchr(o->key, '.');
    return dot ? dot + 1 : o->key;
}

int lp_opt_in_mapping(const lp_opt *o, const char *parent) {
    const char *leaf = lp_opt_leaf(o);
    if (!parent) return leaf == o->key;
    size_t n = strlen(parent);
    return leaf == o->key + n + 1 && strncmp(o->key, parent, n) == 0;
}

/* "a, b and c" from the keys of mapping `parent` or the canonical names of an enum. */
static void join_words(const char *const *w, size_t n, const char *last_sep, char *buf,
                       size_t size) {
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && off < size; i++)
        off += (size_t)snprintf(buf + off, size - off, "%s%s",
                                i == 0       ? ""
                                : i + 1 == n ? last_sep
                                             : ", ",
                                w[i]);
}

const char *lp_opt_what(const lp_opt *o, char *buf, size_t size) {
    const char *w[32];
    size_t n = 0;
    switch (o->type) {
    case LP_OPT_BOOL:
        snprintf(buf, size, "true or false");
        return buf;
    case LP_OPT_U64:
        snprintf(buf, size, "an integer >= 0");
        return buf;
    case LP_OPT_REAL:
        snprintf(buf, size, "a number in %c%g, %g]", o->rlo_open ? '(' : '[', o->rlo, o->rhi);
        return buf;
    case LP_OPT_INT: {
        char note[64] = "";
        if (o->hi == INT_MAX) {
            if (o->lo_note) snprintf(note, sizeof note, " (%d: %s)", o->lo, o->lo_note);
            snprintf(buf, size, "an integer >= %d%s", o->lo, note);
        } else {
            if (o->lo_note) snprintf(note, sizeof note, " (%s)", o->lo_note);
            snprintf(buf, size, "an integer from %d%s to %d", o->lo, note, o->hi);
        }
        return buf;
    }
    case LP_OPT_ENUM:
        /* Canonical names only: the first spelling of each value. */
        for (size_t i = 0; i < o->names->n && n < 32; i++)
            if (lp_cfg_name_of(o->names, o->names->v[i].value) == o->names->v[i].name)
                w[n++] = o->names->v[i].name;
        join_words(w, n, " or ", buf, size);
        return buf;
    case LP_OPT_MAPPING: {
        size_t off = (size_t)snprintf(buf, size, "a mapping of ");
        for (size_t i = 0; i < N_ROWS && n < 32; i++)
            if (lp_opt_in_mapping(&table[i], o->key)) w[n++] = lp_opt_leaf(&table[i]);
        if (off < size) join_words(w, n, " and ", buf + off, size - off);
        return buf;
    }
    default:
        snprintf(buf, size, "%s", o->what ? o->what : "");
        return buf;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Introspection (layerprof.h): every row but the mappings, which hold no value                */

const char *lp_option_section_name(lp_option_section section) {
    static const char *const names[] = {"Inputs",  "Run",     "What to record",
                                        "Display", "Outputs", "Other"};
    return (unsigned)section < sizeof names / sizeof names[0] ? names[section] : NULL;
}

size_t lp_options_key_count(void) {
    size_t n = 0;
    for (size_t i = 0; i < N_ROWS; i++)
        n += table[i].type != LP_OPT_MAPPING;
    return n;
}

int lp_options_key_sized(size_t index, lp_option_info *out, size_t out_size) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_options_key: out is NULL");
    int rc = lp_out_size_check(out_size, LP_OPTION_INFO_SIZE_1, "lp_option_info", "lp_options_key");
    if (rc) return rc;
    for (size_t i = 0, at = 0; i < N_ROWS; i++) {
        const lp_opt *o = &table[i];
        if (o->type == LP_OPT_MAPPING || at++ != index) continue;
        lp_option_info full = {o->key,
                               o->flag,
                               o->value_name,
                               o->help,
                               o->default_text,
                               o->section,
                               o->type != LP_OPT_BOOL,
                               (o->flags & LP_OPTF_REPEATABLE) != 0,
                               (o->flags & LP_OPTF_NOT_YAML) == 0};
        lp_out_copy(out, out_size, &full, sizeof full);
        return LP_OK;
    }
    return lp_error_set(LP_ERR_INVALID, "lp_options_key: no option %zu (there are %zu)", index,
                        lp_options_key_count());
}

/* A mapping has no field: its keys are reset instead. */
void lp_opt_reset(const lp_opt *opt, lp_options *o) {
    switch (opt->type) {
    case LP_OPT_MAPPING: {
        size_t n;
        const lp_opt *all = lp_opt_all(&n);
        for (size_t i = 0; i < n; i++)
            if (lp_opt_in_mapping(&all[i], opt->key)) lp_opt_reset(&all[i], o);
        return;
    }
    case LP_OPT_BOOL:
    case LP_OPT_INT:
    case LP_OPT_ENUM:
        *LP_OPT_FIELD(o, opt, int) = opt->def;
        return;
    case LP_OPT_U64:
        *LP_OPT_FIELD(o, opt, uint64_t) = (uint64_t)opt->def;
        return;
    case LP_OPT_REAL:
        *LP_OPT_FIELD(o, opt, double) = opt->rdef;
        return;
    case LP_OPT_STRING:
        *LP_OPT_FIELD(o, opt, const char *) = opt->def_str;
        return;
    case LP_OPT_SCHEDULE:
        *LP_OPT_FIELD(o, opt, lp_schedule) = (lp_schedule){0, 0, 0, 0}; /* no schedule */
        return;
    case LP_OPT_COLUMNS:
    case LP_OPT_PATHS:
    case LP_OPT_INPUTS:
    case LP_OPT_INPUT_FILE:
    case LP_OPT_INPUT_SAVED:
    case LP_OPT_OUTPUTS:
        *LP_OPT_FIELD(o, opt, const void *) = NULL;
        *LP_OPT_COUNT(o, opt) = 0;
        return;
    }
}

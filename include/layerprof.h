/*
 * layerprof.h: profile a TorchScript model layer by layer, from C.
 *
 * Conventions (read these first):
 *  - Every public name starts with `lp_` (types, functions) or `LP_` (macros, enum values).
 *  - Naming: a function is lp_<object>_<action>[_<variant>].
 *    - <object> is the handle or struct its first argument points to, without `lp_`: every
 *      function taking an `lp_session *` first is lp_session_*, an `lp_report *` lp_report_*, an
 *      `lp_config *` lp_config_*, an `lp_options *` lp_options_* (and the table of its keys,
 *      lp_options_key*). A function without such an argument is named for the type it parses,
 *      formats or names (lp_input_spec_parse, lp_format_name, lp_status_name), or for the library
 *      itself (lp_version, lp_error_last).
 *    - <action> is a verb (open, close, run, render, parse, format, set, load, free), or, for a
 *      getter, the noun of what it hands out, the same on every object and never with `get_`:
 *      lp_<object>_<thing>_count, lp_<object>_<thing> (filling an lp_<thing>_info: lp_session_node
 *      and lp_report_node an lp_node_info, lp_report_meta() an lp_meta_info; lp_session_run_info
 *      fills an lp_run_info), lp_<object>_find. A getter that merges the session's recording
 *      first takes it non-const (lp_session_node_count). A predicate is a getter too: it is named
 * for the state, without `is_`, and writes 0 or 1 to an `int *out` (lp_session_frozen), so it
 *      returns a status like every other function. A part of the object may come first
 *      (lp_session_region_begin, lp_session_forward_end).
 *    - <variant> marks another form of the same action: _to (into an lp_write_fn), _in (in a
 *      named context), _file, _string, _yaml (another source or sink), _version, and _sized (the
 *      exported function behind a getter macro: see "Versioning"). A conversion from another
 *      type says so: lp_format_from_path.
 *  - Handles are typed and opaque (`lp_session *`). Each is created by one `*_open`/`*_create`
 *    function and released by one `*_close`/`*_free` function; release functions accept NULL.
 *  - Every function that can fail returns an int status: LP_OK (0) or a negative `lp_status`.
 *    On failure, `lp_error_last()` returns a one-line message describing the cause. The message is
 *    thread-local and valid until the next layerprof call on the same thread.
 *  - Ownership: a pointer handed back through an out parameter (`**out`) belongs to the caller and
 *    says which function frees it. A pointer returned directly is borrowed from its parent handle
 * and lives as long as that handle (or until the next call that says it invalidates it).
 *  - Strings passed in are borrowed for the duration of the call unless a comment says otherwise.
 *    `lp_options` is a plain struct of borrowed pointers: whatever it points to must outlive every
 *    call that is given the struct (lp_session_open copies what it keeps).
 *  - Times are integer nanoseconds and sizes integer bytes; only renderers format them.
 *  - No C++ exception ever crosses this API. Safe to include from C and C++.
 */
#ifndef LAYERPROF_H
#define LAYERPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks what liblayerprof.so exports; everything else in the library is hidden. */
#if defined(__GNUC__)
#define LP_API __attribute__((visibility("default")))
#else
#define LP_API
#endif

/* ------------------------------------------------------------------------------------------ */
/* Versioning                                                                                  */
/*
 * Three things carry a version, each for its own reason.
 *  - The library. LP_VERSION_* and LP_VERSION_NUMBER are the header a program was compiled
 *    against; lp_version() and lp_version_number() the library it runs against. The ABI follows
 *    the SONAME (docs/install.md): before 1.0 it is liblayerprof.so.MAJOR.MINOR, and a minor
 *    release (0.1 -> 0.2) may rename, remove or re-lay-out anything, each change listed in
 *    docs/api-changes.md; from 1.0 on the SONAME is the major version alone. A program never
 *    loads a library of another SONAME, so the two rules below hold within one SONAME.
 *  - Structs a program fills and the library reads: lp_options, with the lp_input_spec,
 *    lp_output_spec and lp_schedule it holds or points to. lp_options starts with `version`,
 *    which lp_options_init sets to LP_OPTIONS_VERSION. A field, not a size passed to each call,
 *    because the struct travels: it is copied, kept in an lp_config, and handed to
 *    lp_session_open, lp_options_validate, lp_options_set, lp_report_render and
 *    lp_options_write_yaml, which all need to know which fields it has, and lp_options_init
 *    must know which fields to write. A version names a set of fields, each version adding
 *    fields at the end (its entries' too). The library reads every version it knows
 *    (LP_OPTIONS_VERSION's comment): the fields a version lacks read as their defaults, and
 *    nothing is written past the caller's version; a newer version is refused.
 *  - Structs the library fills: lp_node_info, lp_op_info, lp_run_info, lp_meta_info and
 *    lp_option_info. Their getters are macros that pass the caller's sizeof to the exported
 *    _sized function, which copies out only that many bytes. A size, not a version, because the
 *    program has nothing to set: the compiler supplies it at each call. A program built against
 *    an older header gets the fields it knows; against a newer one, this library's fields. The
 *    struct a callback receives (lp_progress) grows the same way, read only as far as the
 *    program knows it.
 * Both rules only add fields at the end; a field is never moved or removed within one SONAME.
 */

/* The version of this header. LP_VERSION_NUMBER orders versions as
 * integers: major * 10000 + minor * 100 + patch (0.2.0 is 200, 1.2.3 is 10203). */
#define LP_VERSION_MAJOR 0
#define LP_VERSION_MINOR 2
#define LP_VERSION_PATCH 0
#define LP_VERSION_STRING "0.2.0"
#define LP_VERSION_NUMBER (LP_VERSION_MAJOR * 10000ul + LP_VERSION_MINOR * 100ul + LP_VERSION_PATCH)

/* ------------------------------------------------------------------------------------------ */
/* Status codes and errors                                                                     */

typedef enum lp_status {
    LP_OK = 0,
    LP_ERR_INVALID = -1,     /* a bad argument or option value (a usage error in the CLI) */
    LP_ERR_IO = -2,          /* a file could not be read or written */
    LP_ERR_MODEL = -3,       /* the model could not be loaded, or is not usable as asked */
    LP_ERR_RUNTIME = -4,     /* libtorch failed while running the model (wrong input, ...) */
    LP_ERR_NOMEM = -5,       /* out of memory, or a request larger than the memory available */
    LP_ERR_UNSUPPORTED = -6, /* a feature this build or this libtorch does not have */
    LP_ERR_BUSY = -7,        /* another profiler holds a slot layerprof needs */
    LP_ERR_NOT_FOUND = -8,   /* a named thing (module path, column, ...) does not exist */
    LP_ERR_STATE = -9        /* a call out of order (ending a region never begun, ...) */
} lp_status;

/* The message of the last failed call on this thread ("" if none). Borrowed, thread-local. */
LP_API const char *lp_error_last(void);

/* A short name for a status code ("invalid argument"). Static storage. */
LP_API const char *lp_status_name(int status);

/* The library version string, e.g. "0.2.0". Static storage. */
LP_API const char *lp_version(void);

/* The library's version as LP_VERSION_NUMBER spells it (200 for 0.2.0): what the program runs
 * against, where LP_VERSION_NUMBER is what it was compiled against. */
LP_API unsigned long lp_version_number(void);

/* The libtorch version the library was built against, e.g. "1.13" or "2.15". Static storage. */
LP_API const char *lp_torch_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Inputs                                                                                      */

#define LP_MAX_DIMS 8
#define LP_MAX_INPUTS 64 /* entries of lp_options.inputs: tensors, scalars and container heads */
#define LP_PATH_MAX 4096

typedef enum lp_dtype {
    LP_DTYPE_FLOAT32 = 0,
    LP_DTYPE_FLOAT64,
    LP_DTYPE_FLOAT16,
    LP_DTYPE_BFLOAT16,
    LP_DTYPE_INT64,
    LP_DTYPE_INT32,
    LP_DTYPE_INT16,
    LP_DTYPE_INT8,
    LP_DTYPE_UINT8,
    LP_DTYPE_BOOL
} lp_dtype;

typedef enum lp_fill {
    LP_FILL_RANDOM = 0, /* uniform in [low, high); float default [0, 1), integers need a range */
    LP_FILL_ZEROS,
    LP_FILL_ONES,
    LP_FILL_FILE /* raw little-endian data read from the file `file` */
} lp_fill;

/* What one entry of an input list is. Structured arguments (List[Tensor], tuples, dicts) are
 * written in prefix order: a container entry says how many items follow it, and each item is
 * itself one entry or a whole container. A dict's items are key/value pairs, the key an
 * LP_INPUT_STR or LP_INPUT_INT entry. So [1x3, (int:2, none)] is the four entries
 * LIST(2) TENSOR TUPLE(2) INT NONE, and one forward argument is one top-level value. */
typedef enum lp_input_kind {
    LP_INPUT_TENSOR = 0, /* the fields ndim .. file */
    LP_INPUT_INT,        /* `integer` */
    LP_INPUT_FLOAT,      /* `real` */
    LP_INPUT_BOOL,       /* `integer`, 0 or 1 */
    LP_INPUT_STR,        /* the text, in `file` */
    LP_INPUT_NONE,
    LP_INPUT_LIST,  /* `n_items` values follow */
    LP_INPUT_TUPLE, /* `n_items` values follow */
    LP_INPUT_DICT,  /* `n_items` key/value pairs follow */
    LP_INPUT_SAVED  /* the arguments torch.save stored in the file `file`: a tuple is spread into
                       positional arguments, anything else is one argument */
} lp_input_kind;

/* The options of a run (see "Options" below): the parsers of this section put the texts they
 * copy in them. */
typedef struct lp_options lp_options;

/* One input, or one entry of a structured input (above). Plain data but for `file`, which is
 * borrowed like every pointer of lp_options: a copy of the spec points to the same text. The
 * parsers below put it in the options they are given (`owner`). A zeroed spec is a tensor, as
 * before `kind` existed. */
typedef struct lp_input_spec {
    int ndim;
    int64_t shape[LP_MAX_DIMS];
    lp_dtype dtype;
    lp_fill fill;
    int has_range; /* 1 when low/high were given (required for random integer inputs) */
    double low, high;
    const char *file; /* LP_FILL_FILE's file; the text of LP_INPUT_STR; LP_INPUT_SAVED's file;
                         else NULL. At most LP_PATH_MAX - 1 bytes when a parser wrote it */
    lp_input_kind kind;
    int64_t integer; /* LP_INPUT_INT, LP_INPUT_BOOL */
    double real;     /* LP_INPUT_FLOAT */
    size_t n_items;  /* LP_INPUT_LIST, LP_INPUT_TUPLE: values; LP_INPUT_DICT: pairs */
} lp_input_spec;

/* Parses "SHAPE[:DTYPE][:FILL]", e.g. "1x3x224x224", "1x32:int64:0..1000", "2x8:float16:zeros".
 * FILL is random (default), zeros, ones, or a range LO..HI for random values. */
LP_API int lp_input_spec_parse(const char *text, lp_input_spec *out);

/* Parses one forward argument, which may be structured, into `max` entries at `out` (see
 * lp_input_kind); *n receives how many it used. Besides a tensor spec (as lp_input_spec_parse):
 * lists [a, b], tuples (a, b), dicts {key: a, int:3: b} (a key is a bare word or int:N), the
 * scalars int:5, float:0.5, bool:true, str:TEXT and none, and saved:FILE.pt (torch.save's
 * arguments), nested freely.
 * Ownership: the texts entries point to (str:, saved:, dict keys) are copied into owner->store,
 * as lp_options_set does, and live until lp_options_release(owner); pass the options the entries
 * are for. `owner` may be NULL when `text` holds no text (LP_ERR_INVALID when it does). */
LP_API int lp_input_parse(const char *text, lp_input_spec *out, size_t max, size_t *n,
                          lp_options *owner);

/* Writes the value that starts at entries[0] (of `n`) back in lp_input_parse's syntax. Returns the
 * length it needed (like snprintf), or a negative status when the entries do not hold one whole
 * value. */
LP_API int lp_input_format(const lp_input_spec *entries, size_t n, char *buf, size_t size);

/* The number of entries of the value that starts at entries[0] (of `n`): 1 for a tensor or a
 * scalar, more for a container. 0 when they do not hold one whole, well-formed value. */
LP_API size_t lp_input_value_size(const lp_input_spec *entries, size_t n);

/* Parses "FILE:SHAPE[:DTYPE]" (raw little-endian data). FILE may itself contain ':'. out->file
 * points to a copy of FILE in owner->store, as for lp_input_parse (`owner` is required). */
LP_API int lp_input_spec_parse_file(const char *text, lp_input_spec *out, lp_options *owner);

/* Writes the spec back in the syntax lp_input_spec_parse reads (files as "FILE:SHAPE:DTYPE"); a
 * scalar entry as lp_input_parse reads it. Returns the length it needed (like snprintf). */
LP_API int lp_input_spec_format(const lp_input_spec *spec, char *buf, size_t size);

/* Bytes the tensor needs (0 for an invalid spec, or an entry that is not a tensor). Saturates at
 * INT64_MAX instead of overflowing. */
LP_API int64_t lp_input_spec_bytes(const lp_input_spec *spec);

/* "float32", "int64", ... Static storage. */
LP_API const char *lp_dtype_name(lp_dtype dtype);

/* ------------------------------------------------------------------------------------------ */
/* Options                                                                                     */

typedef enum lp_mode {
    LP_MODE_HOOKS = 0, /* TorchScript optimizer off: true module entry/exit for every module */
    LP_MODE_GRAPH,     /* runs as LP_MODE_MARKERS: its calls, inferred from each op's inlined call
                        * stack, were wrong on common structures (kept so old programs build) */
    LP_MODE_MARKERS    /* the optimised model, enter/exit markers at every submodule call site */
} lp_mode;

typedef enum lp_units { LP_UNITS_AUTO = 0, LP_UNITS_US, LP_UNITS_MS, LP_UNITS_S } lp_units;

typedef enum lp_format {
    LP_FORMAT_TREE = 0, /* torchprof's box-drawn table */
    LP_FORMAT_JSON,     /* the whole report, integers only (docs/json-schema.md): lp_report_load */
    LP_FORMAT_CSV,      /* one row per module and op row, with full paths (RFC 4180) */
    LP_FORMAT_MARKDOWN, /* a GitHub pipe table, the tree shown by indentation */
    LP_FORMAT_TRACE,    /* Chrome Trace Event Format (Perfetto, chrome://tracing): a timeline */
    LP_FORMAT_HTML,     /* one self-contained page: icicle view of the tree, memory view */
    LP_FORMAT_SUMMARY,  /* torchtimer's pasteable markdown table, one per context of regions */
    /* Prometheus' text exposition, format 0.0.4 (serve it as "text/plain; version=0.0.4";
     * node_exporter's textfile collector and `promtool check metrics` read it): per
     * module histograms of self and total seconds per call, calls and sampled forwards as
     * counters, parameters and FLOPs as gauges; modules deeper than lp_options.metrics_depth are
     * folded into their ancestor (docs/sampling.md). Name "openmetrics", files *.prom. A session
     * renders it from any thread while forwards run on others (the /metrics handler of a
     * service); a report read back from JSON holds no per-call histograms: each histogram is
     * then its +Inf bucket, _sum and _count alone. */
    LP_FORMAT_OPENMETRICS
} lp_format;

/* The format's name: "tree", "json", "csv", "markdown", "trace", "html", "summary",
 * "openmetrics"; NULL when unknown.
 * Static storage. The YAML config and --format spell them the same way. */
LP_API const char *lp_format_name(lp_format format);

/* The i-th file name ending (from 0) that implies `format` (".json"; lp_format_from_path), NULL
 * past the last one or for an unknown format. Static storage. With lp_format_name, what lists of
 * the formats are made from (--help), so that none can miss one. */
LP_API const char *lp_format_extension(lp_format format, size_t i);

/* Parses a format name (lp_format_name's, or the aliases "md" and "chrome"). LP_ERR_INVALID names
 * the valid ones. */
LP_API int lp_format_parse(const char *name, lp_format *out);

/* The format a file name implies: *.trace.json and *.trace for trace, *.json, *.csv, *.md and
 * *.markdown, *.html and *.htm, *.prom (openmetrics); LP_ERR_NOT_FOUND for anything else (the
 * caller picks a default). */
LP_API int lp_format_from_path(const char *path, lp_format *out);

/* How CUDA kernel time per module is measured on a CUDA device (docs/cuda.md). */
typedef enum lp_cuda_timing {
    LP_CUDA_TIMING_AUTO = 0, /* CUPTI activity records when available, else CUDA events */
    LP_CUDA_TIMING_CUPTI,    /* CUPTI only: fail when it cannot be used */
    LP_CUDA_TIMING_EVENTS,   /* CUDA events around module calls on the current stream */
    LP_CUDA_TIMING_OFF       /* no CUDA time columns */
} lp_cuda_timing;

typedef struct lp_output_spec {
    lp_format format;
    const char *file; /* NULL or "-" for stdout */
} lp_output_spec;

/* Where a run is, for lp_options.progress. */
typedef enum lp_phase { LP_PHASE_WARMUP = 0, LP_PHASE_PROFILE, LP_PHASE_DONE } lp_phase;
typedef struct lp_progress {
    lp_phase phase;
    int done;  /* forwards of this phase completed */
    int total; /* forwards of this phase asked for */
} lp_progress;
typedef void (*lp_progress_fn)(const lp_progress *progress, void *payload);

/* torch.profiler's schedule, in steps (profiled iterations, or lp_session_step calls): `wait`
 * steps unprofiled, `warmup` steps profiled and discarded, `active` steps recorded; the cycle then
 * completes (lp_options.on_cycle, and outputs whose file name holds "%d") and starts again,
 * `repeat` times (0: until the end). All 0 (the default): every step is recorded, no cycles. */
typedef struct lp_schedule {
    int wait, warmup, active, repeat;
} lp_schedule;

/* Parses "wait=1,warmup=1,active=3,repeat=2" (keys in any order, each at most once; missing keys
 * are 0; active must be at least 1). */
LP_API int lp_schedule_parse(const char *text, lp_schedule *out);

/* Writes "wait=W,warmup=N,active=A,repeat=R", like snprintf: returns the length needed. */
LP_API int lp_schedule_format(const lp_schedule *schedule, char *buf, size_t size);

typedef struct lp_session lp_session;

/* Called on the driving thread when a schedule cycle completes (cycles count from 1). The session
 * then holds that cycle's figures: read or render them here. */
typedef void (*lp_cycle_fn)(lp_session *session, int cycle, void *payload);

/* The options' version (see "Versioning"). A program holds the version of the layerprof.h it was
 * built against (lp_options_init writes it), and the library reads every version from 2 on:
 * fields a version lacks read as their defaults, and nothing is written past its end. 2: every
 * field up to `store`, with the shorter lp_input_spec of that time (no `kind` and after). 3: adds
 * `libraries` and structured inputs. 4: adds the sampling fields and `metrics_depth`. 5: `prune`.
 * 6: `name_width`. 7: `labels`. Versions
 * name fields; the layout is this SONAME's (0.2 made lp_input_spec.file a pointer, in every
 * version). */
#define LP_OPTIONS_VERSION 7

/* Where lp_options_set makes the strings and arrays it sets point (opaque). */
typedef struct lp_options_store lp_options_store;

/* Everything a profiling run can be told. Initialise with lp_options_init; fields only grow at the
 * end. Pointers are borrowed (see the conventions above), except those lp_options_set made, which
 * point into `store`. Every field is an option of the table lp_options_key lists (its key is the
 * field's YAML key), except the callbacks, `version` and `store`. */
typedef struct lp_options {
    unsigned version; /* LP_OPTIONS_VERSION */

    /* A TorchScript file, or an AOTInductor package (a path ending in .pt2; libtorch 2.x builds,
     * else LP_ERR_UNSUPPORTED: docs/pt2.md) */
    const char *model_path;
    const char *device; /* "cpu" (default when NULL) */
    lp_mode mode;       /* default LP_MODE_MARKERS */

    const lp_input_spec *inputs; /* NULL/0: the inputs recorded in the model file */
    size_t n_inputs;
    uint64_t seed; /* for random inputs */

    int warmup; /* unprofiled forwards before measuring (default 3: TorchScript optimises during the
                   first 3) */
    int iterations; /* profiled forwards (default 10) */
    int threads;    /* intra-op threads; 0 keeps libtorch's default */

    int memory; /* per-module memory (retained, peak, net) */
    int events; /* per-op rows under each module */
    int shapes; /* group op rows by input shapes */

    const char *const *paths; /* modules to profile (dotted, tuple or glob); NULL/0: all */
    size_t n_paths;

    /* Display */
    int depth;        /* fold modules deeper than this into their ancestor; -1: no limit */
    const char *sort; /* column id to sort siblings by; NULL: model order */
    int top;          /* print the K modules with the most self time under the tree; 0: none */
    const char *const *columns; /* column ids, in order; NULL/0: the default set */
    size_t n_columns;
    lp_units units;
    int ascii; /* ASCII glyphs instead of box drawing */

    const lp_output_spec *outputs; /* NULL/0: one tree on stdout */
    size_t n_outputs;

    int verbose; /* let libtorch's own log output through */

    lp_cuda_timing cuda_timing; /* device cuda: how kernel time per module is measured */
    int nvtx; /* an NVTX range per module call (and per op with `events`), for Nsight Systems */

    /* Timeline: a span per module call (and per op with `events`) and memory over time, for the
     * trace output and the HTML memory view. Off by default; the only recording whose memory grows
     * with the iterations (capped per thread: the report notes it when the cap was reached). A
     * session with a trace output records it whether or not this is set. */
    int trace;
    int trace_iterations; /* the first N profiled iterations are recorded; 0: 3 */

    /* Progress: called on the calling thread before the first forward and after each one. NULL
     * (the default) keeps the library quiet; the CLI prints a line on a terminal. */
    lp_progress_fn progress;
    void *progress_payload;

    /* Steps recorded in cycles (see lp_schedule); all 0: no schedule. */
    lp_schedule schedule;
    lp_cycle_fn on_cycle; /* NULL: none */
    void *on_cycle_payload;

    int summary; /* the CLI prints LP_FORMAT_SUMMARY after the tree (lp_session_write_outputs) */

    /* What lp_options_set copied (created on its first need; NULL until then): free it with
     * lp_options_release. A copy of the struct shares the store: release exactly one copy, when
     * no copy is used any more. lp_options_init does not free it. */
    lp_options_store *store;

    /* Custom-op libraries loaded (RTLD_GLOBAL) before the model, in order: torchvision's
     * _C*.so, torchaudio's libtorchaudio.so, a program's own. They stay loaded for the life of
     * the process (their operators are registered with libtorch). Read during lp_session_open
     * only. NULL/0: none. */
    const char *const *libraries;
    size_t n_libraries;

    /* Sampling (version 4; docs/sampling.md): which forwards of a session that stays open are
     * profiled. A forward is profiled when all three say so; the rest run unprofiled and cost
     * what an unmarked model's do. Applies to lp_session_forward and to the program's own
     * forwards (lp_session_forward_begin/_end); lp_session_run profiles every iteration. */
    int sample_every;          /* every Nth forward (default 1: all); N >= 1 */
    double sample_probability; /* each forward with this probability, in (0, 1] (default 1) */
    /* The fraction of forward time profiling may cost (0.01: 1%), which then sets the rate by
     * itself from the measured cost of a profiled forward against an unprofiled one; in
     * [0, 0.5], 0 (the default): off. */
    double sample_budget;
    /* LP_FORMAT_OPENMETRICS: modules deeper than this are folded into their ancestor at this
     * depth (its self time then includes theirs), which bounds the series; -1: no limit. Default
     * 1: a resnet50 (or resnet18) gives 11 modules, 420 series (docs/sampling.md). */
    int metrics_depth;

    /* Version 5: the tree and markdown views leave out modules that were not profiled and hold
     * no profiled module (with paths selected: everything outside them but their ancestors).
     * Default 0: every module has its row. */
    int prune;

    /* Version 6: the tree and markdown views shorten op names (AOTInductor kernels, with what they
     * fused) longer than this many characters, keeping both ends around an ellipsis; the JSON,
     * CSV and the other formats keep the full name. 0: never; values under 16 are taken as 16.
     * Default 64. */
    int name_width;

    /* Version 7: where the run comes from, "NAME=VALUE" each ("host=a", "rank=3"): stored in the
     * JSON report's run object ("labels") and added to every series of LP_FORMAT_OPENMETRICS, so
     * the same words name the run offline (layerprof merge) and in Prometheus. Names follow
     * Prometheus' rules ([a-zA-Z_][a-zA-Z0-9_]*, not "__..."), none of model, module, class, le,
     * job, instance, each once; values valid UTF-8, not empty; at most 16. NULL/0: none. */
    const char *const *labels;
    size_t n_labels;
} lp_options;

/* Fills `opts` with the defaults (the table's: docs/config.md) as a struct of `version`, writing
 * none of the fields a later version added. LP_ERR_INVALID, with nothing written, for a version
 * this library does not know (older than 2, or newer than LP_OPTIONS_VERSION). */
LP_API int lp_options_init_version(lp_options *opts, unsigned version);

/* Fills `opts` with the defaults, as a struct of the version this header describes. */
#define lp_options_init(opts) ((void)lp_options_init_version((opts), LP_OPTIONS_VERSION))

/* Checks every value the option table knows, as lp_options_set and the YAML reader would: ranges,
 * enum values, the device, column ids (display.columns, display.sort), output formats, inputs,
 * the schedule; and counts without arrays. Fails with LP_ERR_INVALID and a message naming the
 * field. lp_session_open calls it first, so a bad value never starts a run. */
LP_API int lp_options_validate(const lp_options *opts);

/* Sets one option from text, for programs that hold their settings as strings (the CLI does).
 * `key` is the YAML config's key, dotted for nested mappings: "iterations", "display.sort",
 * "profile.memory", "schedule" (lp_options_key lists them all). `value` is what the CLI flag takes:
 * "10", "true" or "false" (also yes/no, on/off), "graph", "self_cpu,calls",
 * "wait=1,active=3". Lists:
 *  - "display.columns" replaces the whole list ("self_cpu,calls": ids separated by commas);
 *  - "paths", "inputs" ("SHAPE[:DTYPE][:FILL]"), "input_file" ("FILE:SHAPE[:DTYPE]", into the same
 *    list as "inputs") and "outputs" ("FORMAT[:FILE]"; no FILE, or "-": stdout) append one entry
 *    per call, since a torchprof path tuple holds commas and a file name may.
 * A NULL value restores the key's default (an empty list for the lists): to replace a list that
 * calls append to, reset it first.
 * Ownership: what the options then point to is copied into opts->store, created on first need;
 * free it with lp_options_release. Fields assigned by hand stay borrowed.
 * Errors leave the options unchanged: LP_ERR_INVALID for a bad value, with the message the CLI
 * and the YAML reader give; a message about one value starts with the option's name in quotes
 * ("'iterations' must be an integer from 1 to 10000000, got '0'"), which a caller may replace by
 * its own name for it (the CLI shows its flag). LP_ERR_NOT_FOUND for an unknown key, naming the
 * closest one. LP_ERR_NOMEM when out of memory. */
LP_API int lp_options_set(lp_options *opts, const char *key, const char *value);

/* Frees opts->store and re-initialises *opts (at its own version), so nothing in it dangles.
 * Copies made before it point into freed memory. NULL is allowed. */
LP_API void lp_options_release(lp_options *opts);

/* Where --help lists an option. */
typedef enum lp_option_section {
    LP_SECTION_INPUTS = 0,
    LP_SECTION_RUN,
    LP_SECTION_RECORD,
    LP_SECTION_DISPLAY,
    LP_SECTION_OUTPUTS,
    LP_SECTION_OTHER
} lp_option_section;

/* The section's title ("Inputs", "What to record"); NULL when unknown. Static storage. */
LP_API const char *lp_option_section_name(lp_option_section section);

/* One option of the table, for programs that build their own command line or help from it.
 * Strings have static storage. */
typedef struct lp_option_info {
    const char *key;          /* lp_options_set's key ("display.sort") */
    const char *flag;         /* the CLI's long flag without "--" ("sort"); NULL: none */
    const char *value_name;   /* what the flag takes, for help ("COLUMN"); NULL for a switch */
    const char *help;         /* one line */
    const char *default_text; /* the default, as docs/config.md shows it ("10", "cpu", "null") */
    lp_option_section section;
    int takes_value; /* 0: a switch, set with the value "true" */
    int repeatable;  /* 1: each lp_options_set appends (paths, inputs, outputs) */
    int in_yaml;     /* 1: `key` is a key of the YAML config; 0: lp_options_set only */
} lp_option_info;

/* The number of options lp_options_key lists. */
LP_API size_t lp_options_key_count(void);

/* Fills `out` for option `index` (0 to lp_options_key_count() - 1), in the YAML file's order.
 * A getter macro over lp_options_key_sized, like the report's (see "Versioning"). */
LP_API int lp_options_key_sized(size_t index, lp_option_info *out, size_t out_size);
#define lp_options_key(index, out) lp_options_key_sized((index), (out), sizeof *(out))

/* ------------------------------------------------------------------------------------------ */
/* Sessions                                                                                    */

/* Loads the model and prepares the inputs. The session copies everything it keeps from `opts`.
 * On success *out must be released with lp_session_close. */
LP_API int lp_session_open(lp_session **out, const lp_options *opts);

/* Runs the warm-up forwards, then the profiled iterations, aggregating into the module tree.
 * Calling it again adds more iterations to the same tree. */
LP_API int lp_session_run(lp_session *session);

/* Asks a running lp_session_run to stop: the forward in progress finishes, no other starts, and
 * the run returns LP_OK with what the completed iterations measured (lp_run_info.iterations) and
 * a note "interrupted: ..." in every report. Async-signal-safe (one atomic store): a SIGINT or
 * SIGTERM handler may call it, for a session that stays open meanwhile. The request holds for the
 * next lp_session_run too until that run has honoured it. NULL: LP_ERR_INVALID, no message. */
LP_API int lp_session_stop(lp_session *session);

/* Renders the report in the given format to `out`, using the session's display options. */
LP_API int lp_session_render(lp_session *session, lp_format format, FILE *out);

/* Where a rendered report goes when it is not a FILE: a log, a socket, a buffer the program owns.
 * Called on the rendering thread with consecutive pieces of the output (up to BUFSIZ bytes
 * each), in order; `data` is valid during the call only. Return 0 to go on; anything else stops
 * the output, and the render fails with LP_ERR_IO. */
typedef int (*lp_write_fn)(void *payload, const char *data, size_t size);

/* lp_session_render, its bytes handed to `write`.
 * LP_FORMAT_OPENMETRICS alone may be rendered from any thread while forwards run on others (a
 * service's /metrics handler): it reads the per-module histograms with atomic loads and takes no
 * lock the forwards take; every other format, and lp_session_render to a FILE of any format, wants
 * the forwards finished, as the getters do (docs/sampling.md). */
LP_API int lp_session_render_to(lp_session *session, lp_format format, lp_write_fn write,
                                void *payload);

/* Writes every output of the options (or the tree to stdout when there is none). */
LP_API int lp_session_write_outputs(lp_session *session);

/* Runs one forward on the session's inputs and copies its output's bytes (a tensor, or the
 * tensors of a tuple, list or dict's values in order, nested ones depth first, each contiguous,
 * on the CPU) into a buffer: for checking
 * that profiling changes nothing. `profiled` 0 runs it with no hook installed, like a warm-up;
 * 1 runs it as one more profiled iteration of lp_session_run (added to the tree), with everything
 * the options record. On success *bytes (never NULL, even when *size is 0) belongs to the caller:
 * release it with free(). */
LP_API int lp_session_forward_output(lp_session *session, int profiled, void **bytes, size_t *size);

/* Releases the session and everything borrowed from it. NULL is allowed. */
LP_API void lp_session_close(lp_session *session);

/* ------------------------------------------------------------------------------------------ */
/* A module the program holds (C++: layerprof.hpp; docs/attach.md)                            */

/* Opens a session on a torch::jit::Module the program already loaded, instead of loading
 * opts->model_path (which, when set, only names the model in the reports). `torch_module` points
 * to the program's torch::jit::Module and `torch_build` says which libtorch the program was built
 * against: layerprof.hpp passes both (layerprof::Session). Rules:
 *  - the program's libtorch must be the one layerprof was built against (version and C++ ABI),
 *    else LP_ERR_UNSUPPORTED naming both;
 *  - attach before the module's first forward: libtorch compiles forward at its first run, for
 *    the module's life, and a module that already ran optimised has no call sites left to mark
 *    (markers) or to hook (hooks). Such a module is refused with LP_ERR_STATE and the reason;
 *  - the module's parameters must be on opts->device (default "cpu");
 *  - one open session per module (LP_ERR_BUSY), and the module must outlive the session.
 * The session leaves the module as it found it when it closes (markers mode puts instructions
 * into its graphs and takes them out again), and each calling thread's TorchScript optimizer
 * setting as it was. Inputs in the options are optional: with them lp_session_run works as for a
 * file; without, the program runs its own forwards (lp_session_forward_begin). */
LP_API int lp_session_attach(lp_session **out, const lp_options *opts, void *torch_module,
                             const char *torch_build);

/* Opens a session on an AOTInductor package (.pt2) the program already loaded with
 * torch::inductor::AOTIModelPackageLoader (C++: layerprof_pt2.hpp; docs/attach.md). `loader`
 * points to that loader; opts->model_path must be the package it was loaded from: the session
 * reads layerprof's module map from it (python/layerprof_export.py writes it). Rules:
 *  - the same libtorch as layerprof's (LP_ERR_UNSUPPORTED naming both; a 1.x build refuses too);
 *  - the package has layerprof's map, and its compiled library is loaded in this process with
 *    kernel profiling (the exporter compiles with it), else LP_ERR_MODEL with the reason;
 *  - one open session per loader (LP_ERR_BUSY), and the loader outlives the session.
 * Nothing has to happen before the loader's first run: it may have run already. Forwards are
 * the program's own, between lp_session_forward_begin and _end; with inputs in the options,
 * lp_session_run runs the loader itself. */
LP_API int lp_session_attach_package(lp_session **out, const lp_options *opts, void *loader,
                                     const char *torch_build);

/* One input tensor of a forward, as lp_session_input_shapes_set takes it. */
typedef struct lp_tensor_shape {
    const int64_t *sizes; /* `rank` sizes, each >= 0, borrowed for the call (NULL for rank 0) */
    int rank;             /* 0 .. LP_MAX_DIMS */
    int dtype; /* an lp_dtype, or -1 for a dtype lp_dtype does not name (refused: a package's
                * inputs all have one) */
} lp_tensor_shape;

/* The shapes of the `n` input tensors (at most LP_MAX_INPUTS, in the loader's order) of the next
 * forward the program runs on an attached package, given before its lp_session_forward_begin
 * (layerprof::PackageSession::run passes them): the package's map works out that forward's FLOPs
 * and output shapes from them (the flops and out_shape columns), as for a package the session
 * loads itself (docs/pt2.md). Once per forward; nothing is allocated, and shapes equal to the
 * last ones are not worked out again. They count for the next forward only: a forward begun
 * without them records no FLOPs or output shapes; NULL `inputs` with `n` 0 says so (the shapes
 * given before are dropped), and so does any refused call.
 * LP_ERR_INVALID, with the input, the dimension and what the package allows, for shapes the
 * package was not compiled for (another count, rank or dtype, a fixed size that differs, a
 * dynamic one outside its range): the next forward records no figures, and the program should
 * not run the package on them (AOTInductor does not check its inputs: it reads past its
 * buffers). LP_ERR_INVALID for a NULL session, NULL `inputs` with `n` > 0, too many inputs, a
 * rank outside 0 .. LP_MAX_DIMS, NULL or negative sizes, or an unknown dtype; LP_ERR_STATE for a
 * session not attached to a package, or while a forward is open. */
LP_API int lp_session_input_shapes_set(lp_session *session, const lp_tensor_shape *inputs,
                                       size_t n);

/* Around a forward of the attached module that the program runs itself, on the calling thread:
 * begin installs what the options record (unless the session, its schedule or the innermost
 * region says not to record) and sets the thread's TorchScript optimizer as the mode needs; end
 * removes it all and puts the setting back. `completed` 0 says the forward failed (threw): what it
 * left open is dropped. Like lp_session_forward, it counts no iteration: lp_session_step does.
 * Both on one thread, in pairs; nothing else of the session in between. LP_ERR_STATE for a
 * session not attached, a begin inside an open forward, or an end without one.
 * Concurrent forwards (docs/sampling.md): a session that records module times only (markers mode,
 * no events, memory, flops or out_shape column, trace, NVTX, schedule or CUDA timing) is "live":
 * several threads may each run forwards between begin and end at once, lp_session_step may be
 * called from any of them, and LP_FORMAT_OPENMETRICS may be rendered meanwhile from yet another.
 * Whether each forward is profiled is the sampler's decision (lp_options.sample_*). Other
 * sessions keep the rule above: one forward at a time. */
LP_API int lp_session_forward_begin(lp_session *session);
LP_API int lp_session_forward_end(lp_session *session, int completed);

/* ------------------------------------------------------------------------------------------ */
/* Regions, contexts and steps: profiling a program's own loop (docs/regions.md)               */

/* Runs one profiled forward on the session's inputs, without warm-up, inside the regions open on
 * the calling thread: its modules appear under the innermost one. It does not count an
 * iteration: lp_session_step does. Unprofiled when the session or the region's context is
 * disabled, or the schedule is waiting. `output` NULL discards the output; otherwise *output
 * receives its bytes as lp_session_forward_output gives them (release with free()). */
LP_API int lp_session_forward(lp_session *session, void **output, size_t *output_size);

/* Copies plain data into input `index` (0-based, in the order of lp_options.inputs, whose
 * structured inputs count each entry: see lp_input_kind), which must be a tensor: `bytes` must
 * be exactly its size in its dtype, row-major. For feeding the program's own data. */
LP_API int lp_session_input_set(lp_session *session, size_t index, const void *data, size_t bytes);

/* Opens region `name` on the calling thread, inside the innermost open region, or at the top of
 * context "main" when none is open. Regions nest; each (parent, name) is one node of the tree.
 * Cheap: no allocation once the region was seen, no lock, no string built. */
LP_API int lp_session_region_begin(lp_session *session, const char *name);

/* The same, in `context` (torchtimer's create_context): a top-level group of regions. Inside an
 * open region it must name that region's context. */
LP_API int lp_session_region_begin_in(lp_session *session, const char *context, const char *name);

/* Closes the innermost region open on the calling thread, which must be `name` (NULL: whichever
 * it is). LP_ERR_STATE, with a message naming both, when none is open or the names differ. */
LP_API int lp_session_region_end(lp_session *session, const char *name);

/* Marks the end of one iteration of the program's loop: counts it, and moves the schedule on
 * (which may complete a cycle). lp_session_run counts its own forwards: do not mix the two. */
LP_API int lp_session_step(lp_session *session);

/* Turns recording on or off (torchtimer's enable/disable). Off, regions cost a push and a pop
 * and forwards run unprofiled. Regions already open keep their state until they end. */
LP_API int lp_session_enable(lp_session *session, int enabled);

/* The same for one context (torchtimer's enable_context/disable_context); the context need not
 * exist yet. */
LP_API int lp_session_context_enable(lp_session *session, const char *context, int enabled);

/* ------------------------------------------------------------------------------------------ */
/* Reading the report                                                                          */
/*
 * Lifetimes. Every string a getter below hands out (lp_node_info's path, name and class_name,
 * lp_op_info's name and shapes) belongs to the session and stays valid, unchanged, until
 * lp_session_close. Nothing in between invalidates it: not another read, not more runs, forwards,
 * regions or steps, not a schedule's new cycle, even though a session with regions rebuilds the
 * tree it reports after each of them (its strings are kept for the session's life, and equal
 * texts are one string). Node and op row *indices* are different: with regions they may change
 * when the tree is rebuilt, so look a node up again (lp_session_find) after more was recorded.
 * Numbers are copied into the structs and do not change after the call. The same holds for
 * reports (lp_report_node): their strings live until lp_report_free.
 */

/* Memory figures of one node on one device, per call, in bytes (see the README's "Memory"). */
typedef struct lp_node_mem {
    int recorded;         /* 1 when memory was profiled on this device */
    double retained;      /* mean: allocated in the call (children included), alive at exit */
    double self_retained; /* mean: the same, without what child modules allocated */
    double peak;          /* mean: most of the call's own allocations alive at once */
    double net;           /* mean: allocated minus freed during the call */
    int64_t retained_min, retained_max, peak_min, peak_max, net_min, net_max;
} lp_node_mem;

/* What a node of the tree is. Without regions every node is a module. With regions the root is
 * the session, its children the contexts, theirs the regions, and the modules of forwards run in
 * a region hang under it. */
typedef enum lp_node_kind {
    LP_NODE_MODULE = 0,
    LP_NODE_REGION,
    LP_NODE_CONTEXT,
    LP_NODE_SESSION
} lp_node_kind;

/* One node (module) of the finished tree. Strings are borrowed from the session (or report) and
 * valid until lp_session_close (lp_report_free): see "Lifetimes" above.
 * Times are per iteration (raw sum / iterations); raw sums are kept alongside. */
typedef struct lp_node_info {
    const char *path;       /* dotted path, "" for the root; valid until lp_session_close */
    const char *name;       /* last path segment, or the class name for the root; the same */
    const char *class_name; /* short class name ("Conv2d"); the same */
    int parent;             /* index of the parent node, -1 for the root */
    int depth;              /* 0 for the root */
    int selected;           /* 1 when measured (all nodes unless paths were given) */
    uint64_t raw_calls;     /* calls over all iterations */
    uint64_t raw_total_ns;  /* inclusive wall time over all iterations */
    uint64_t raw_self_ns;   /* total minus child modules' totals, over all iterations */
    uint64_t iterations;    /* iterations aggregated */
    double calls;           /* raw_calls / iterations */
    double total_ns;        /* raw_total_ns / iterations */
    double self_ns;         /* raw_self_ns / iterations */
    lp_node_mem cpu_mem;
    lp_node_mem cuda_mem;
    int cuda_recorded;          /* 1 when CUDA kernel time was measured (device cuda) */
    uint64_t raw_cuda_self_ns;  /* device time of work launched directly in the module, summed */
    uint64_t raw_cuda_total_ns; /* the same for its whole subtree */
    double cuda_self_ns;        /* raw_cuda_self_ns / iterations */
    double cuda_total_ns;       /* raw_cuda_total_ns / iterations */
    lp_node_kind kind;
    /* Per-call inclusive time over raw_calls calls, computed online (Welford): 0 without calls;
     * time_std_ns is the sample standard deviation, 0 with fewer than 2 calls. */
    double time_mean_ns, time_std_ns;
    uint64_t time_min_ns, time_max_ns;
    double share; /* total / the total of its context (the root's without regions), 0..1 */
    /* 1 for a module without forward (ModuleList, ModuleDict, or one whose methods others call):
     * never called, so raw_calls is 0; its total is its own methods' time (self) plus its
     * children's that ran outside it, so it is never smaller than theirs. */
    int container;
    /* What the module holds (modules only; 0 elsewhere, and in reports written before these):
     * parameters as elements, and the bytes of its parameters and buffers, its own and with its
     * submodules' (a tensor two modules share counts once in every total covering both). */
    int size_known;
    uint64_t params, self_params;
    uint64_t param_bytes, self_param_bytes;
    /* FLOPs (2 per multiply-add), recorded when a flops column was asked for (flops_known):
     * summed over raw_calls, over the subtree and over the module's own ops, and per call. */
    int flops_known;
    uint64_t raw_flops, raw_self_flops;
    double flops, self_flops;
    /* The shape of the first tensor the module's first call returned (the out_shape column,
     * markers mode): out_rank dimensions (-1: none recorded), and whether other calls returned
     * another shape. */
    int out_rank;
    int64_t out_shape[LP_MAX_DIMS];
    int out_shape_varies;
    /* A package's module with no kernel of its own whose work Inductor fused into kernels placed
     * in other modules (docs/pt2.md): the path of the module holding the kernel ("" the root) and
     * the kernel's name (of several, the one placed deepest), and how many more kernels took some
     * of its work; NULL and 0 otherwise. Its time is in that module's row, not this one's: this
     * says where it went. */
    const char *fused_into_module, *fused_into_kernel;
    unsigned fused_into_more;
} lp_node_info;

/* The number of nodes in the module tree (named_modules() order, root first). Like every getter
 * here that reads the tree, it first merges what was recorded since the last read, which is why
 * it takes the session non-const: merging on read, not after every forward, step and region,
 * is what keeps those calls cheap (docs/architecture.md). On the thread that drives the session,
 * with no forward running: on a live session, LP_ERR_STATE while a forward is open on any
 * thread (the merge would race it). */
LP_API int lp_session_node_count(lp_session *session, size_t *out);

/* Fills `out` for node `index`; its strings stay valid until lp_session_close.
 * The output structs' getters are macros that pass the caller's sizeof: a program built against
 * an older layerprof.h, whose struct is smaller, gets its fields and nothing is written past
 * them (fields are only added at the end). The _sized functions are what they call. */
LP_API int lp_session_node_sized(lp_session *session, size_t index, lp_node_info *out,
                                 size_t out_size);
#define lp_session_node(session, index, out)                                                       \
    lp_session_node_sized((session), (index), (out), sizeof *(out))

/* Finds a node by dotted path (`path` is borrowed for the call). *out receives its index, valid
 * until more is recorded (see "Lifetimes" above). */
LP_API int lp_session_find(lp_session *session, const char *path, size_t *out);

/* *out receives 1 when the model has no submodule frames to hook (frozen /
 * optimize_for_inference), else 0. */
LP_API int lp_session_frozen(const lp_session *session, int *out);

/* One op row of the finished tree (options.events): an op directly under a module, or under the
 * op that called it. Rows with the same (module, parent op, name, shapes) are one row; op calls
 * are counted in the module they ran in, never in its ancestors. Strings are borrowed from the
 * session and valid until lp_session_close. Times are per iteration, with the raw sums alongside,
 * as in lp_node_info. */
typedef struct lp_op_info {
    int module;            /* index of the module node the op ran in */
    int parent_op;         /* index of the op row that called it, -1 when called by the module */
    const char *name;      /* "aten::conv2d"; valid until lp_session_close */
    const char *shapes;    /* options.shapes: "[1, 3, 224, 224], [64, 3, 11, 11], [64], []" (one
                              entry per input, [] for non-tensors); NULL when not recorded; valid
                              until lp_session_close */
    uint64_t raw_calls;    /* calls over all iterations */
    uint64_t raw_total_ns; /* inclusive wall time over all iterations */
    uint64_t raw_self_ns;  /* total minus the ops it called, over all iterations */
    uint64_t iterations;   /* iterations aggregated */
    double calls;          /* raw_calls / iterations */
    double total_ns;       /* raw_total_ns / iterations */
    double self_ns;        /* raw_self_ns / iterations */
    lp_node_mem cpu_mem;
    lp_node_mem cuda_mem;
    /* Per-call inclusive time, as in lp_node_info. */
    double time_mean_ns, time_std_ns;
    uint64_t time_min_ns, time_max_ns;
    double share; /* total / the total of its module's context, 0..1 */
} lp_op_info;

/* The number of op rows (0 without options.events). A parent op row has a lower index than its
 * children. */
LP_API int lp_session_op_count(lp_session *session, size_t *out);

/* Fills `out` for op row `index`; its strings stay valid until lp_session_close. */
LP_API int lp_session_op_sized(lp_session *session, size_t index, lp_op_info *out, size_t out_size);
#define lp_session_op(session, index, out)                                                         \
    lp_session_op_sized((session), (index), (out), sizeof *(out))

/* What a run did, beyond the tree. */
typedef struct lp_run_info {
    uint64_t iterations; /* profiled forwards so far */
    uint64_t driver_ns;  /* the driver's own wall time of those forward calls, summed */
    uint64_t events;     /* events delivered to the core */
    uint64_t dropped;    /* events the core could not use (see the report's notes) */
    /* The same forwards until their device work was done, summed: on a GPU, the forward's true
     * time (the CPU columns and driver_ns end when the last kernel was launched). 0 for forwards
     * the program ran itself (attached sessions). */
    uint64_t synced_ns;
} lp_run_info;

LP_API int lp_session_run_info_sized(lp_session *session, lp_run_info *out, size_t out_size);
#define lp_session_run_info(session, out) lp_session_run_info_sized((session), (out), sizeof *(out))

/* ------------------------------------------------------------------------------------------ */
/* Reports read back from JSON files (LP_FORMAT_JSON), and compared                           */

/* A JSON report file: the run's metadata and the module tree, as written. */
typedef struct lp_report lp_report;

/* Reads a JSON report. On success *out belongs to the caller: free it with lp_report_free.
 * LP_ERR_IO when the file cannot be read, LP_ERR_INVALID when it is not a layerprof JSON report
 * (or has a schema_version this layerprof does not know); the message names the field. */
LP_API int lp_report_load(lp_report **out, const char *path);

/* Releases the report and everything borrowed from it. NULL is allowed. */
LP_API void lp_report_free(lp_report *report);

/* The run a report describes. Strings are borrowed from the report ("" when the file lacks one)
 * and valid until lp_report_free. */
typedef struct lp_meta_info {
    int schema_version;
    const char *model, *device, *mode, *libtorch_version, *layerprof_version, *date;
    uint64_t iterations; /* every raw_* sum is over these */
} lp_meta_info;

LP_API int lp_report_meta_sized(const lp_report *report, lp_meta_info *out, size_t out_size);
#define lp_report_meta(report, out) lp_report_meta_sized((report), (out), sizeof *(out))

/* The module tree, as lp_session_node_count / lp_session_node / lp_session_find do. A report never
 * changes: indices and strings are valid until lp_report_free. */
LP_API int lp_report_node_count(const lp_report *report, size_t *out);
LP_API int lp_report_node_sized(const lp_report *report, size_t index, lp_node_info *out,
                                size_t out_size);
#define lp_report_node(report, index, out)                                                         \
    lp_report_node_sized((report), (index), (out), sizeof *(out))
LP_API int lp_report_find(const lp_report *report, const char *path, size_t *out);

/* Renders the report in `format` to `out`, with a session's display options read from `display`
 * (NULL: the defaults): depth, sort, top, columns, units, ascii, and events (0 hides the op rows
 * a report holds). The rest of `display` is not read. Column ids and the sort key are checked
 * first: nothing is written when one is unknown. LP_FORMAT_JSON writes back the exact bytes
 * layerprof wrote. LP_ERR_UNSUPPORTED for LP_FORMAT_TRACE: files hold no timeline. */
LP_API int lp_report_render(const lp_report *report, lp_format format, const lp_options *display,
                            FILE *out);

/* lp_report_render, its bytes handed to `write` (see lp_write_fn). */
LP_API int lp_report_render_to(const lp_report *report, lp_format format, const lp_options *display,
                               lp_write_fn write, void *payload);

#define LP_DIFF_COLOR 1u /* ANSI colours: red slower, green faster (the caller checks the tty) */

/* Prints `after`'s module tree with each module's self and total time per iteration, `before`'s,
 * and the change (absolute and %), matching modules by path; modules only in one report are
 * marked added or removed. */
LP_API int lp_report_diff(const lp_report *before, const lp_report *after, unsigned flags,
                          FILE *out);

/* Many reports of one model merged (docs/merge.md): per module, the distribution across the
 * reports of the per-call self and total time (and CUDA time where recorded): min, median and p90
 * (nearest rank), max, the report that held the max and the skew (max / median). Add the reports
 * one at a time and free each after lp_merge_add: only per-module figures are kept. */
typedef struct lp_merge lp_merge;

#define LP_MERGE_FORCE                                                                             \
    1u /* merge reports run with other options (device, mode, threads, inputs)                     \
        */

LP_API int lp_merge_new(lp_merge **out, unsigned flags);

/* Adds `report`. `label` names it in the output ("rank=3"); NULL: its run's labels, else `file`
 * (which also names it in errors; NULL: "report N"). LP_ERR_INVALID, with the report not added,
 * for a report of another model or module tree than the first (the message names the first
 * difference), or, without LP_MERGE_FORCE, one run with other options (it names them). */
LP_API int lp_merge_add(lp_merge *merge, const lp_report *report, const char *label,
                        const char *file);

/* Prints the merge: the first report's module tree, or with `top` > 0 the `top` modules ranked
 * by `rank_by` (a column; NULL: "total_skew"), highest first. `columns`: column ids
 * (QUANTITY_FIGURE: self, total, cuda_self or cuda_total and min, median, p90, max, skew or
 * source; "reports"); NULL/0: the default set. Formats tree, json, csv and markdown, else
 * LP_ERR_UNSUPPORTED; an unknown column is LP_ERR_NOT_FOUND. */
LP_API int lp_merge_render(const lp_merge *merge, lp_format format, const char *const *columns,
                           size_t n_columns, int top, const char *rank_by, FILE *out);

LP_API void lp_merge_free(lp_merge *merge);

/* ------------------------------------------------------------------------------------------ */
/* Configuration files                                                                         */

/* A YAML configuration file (docs/config.md) read into lp_options. Owns every string and array
 * its options point to. */
typedef struct lp_config lp_config;

/* Reads the YAML file at `path`. Keys it leaves out keep lp_options_init's defaults.
 * On success *out belongs to the caller: free it with lp_config_free.
 * Fails with LP_ERR_IO when the file cannot be read and LP_ERR_INVALID when its content is wrong.
 * Unlike other errors, lp_error_last() may then hold three lines: "FILE:LINE:COLUMN: message"
 * (1-based), the offending line indented by two spaces, and a caret under the column. */
LP_API int lp_config_load(lp_config **out, const char *path);

/* The same for a NUL-terminated string; `name_for_errors` (NULL: "<string>") starts messages. */
LP_API int lp_config_parse_string(lp_config **out, const char *yaml_text,
                                  const char *name_for_errors);

/* The options the configuration describes. Borrowed: the struct and everything it points to live
 * until lp_config_free(cfg). To override some fields (CLI flags), copy the struct and assign. */
LP_API const lp_options *lp_config_options(const lp_config *cfg);

/* Releases the configuration and the options borrowed from it. NULL is allowed. */
LP_API void lp_config_free(lp_config *cfg);

/* Writes `opts` to `out` as a configuration file listing every key, defaults included, which
 * lp_config_parse_string reads back into identical options (the CLI's --print-config). Options
 * the parser would reject (an empty string, iterations 0, ...) are written as they are. Fails with
 * LP_ERR_INVALID, before writing anything, for what YAML cannot carry (an enum value out of range,
 * a count with a NULL array, a string that is not UTF-8) and with LP_ERR_IO when writing fails. */
LP_API int lp_options_write_yaml(const lp_options *opts, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* LAYERPROF_H */

// bench_sampling.cpp: what sampling costs a service's stream of forwards (docs/sampling.md),
// through layerprof.hpp as a service uses it: the program's module attached to a live session,
// each forward between lp_session_forward_begin and _end.
//
//   lp_bench_sampling stream MODEL.pt SPEC [--block B] [--rounds R]
//   lp_bench_sampling render MODEL.pt SPEC [--renders N]
//   lp_bench_sampling pairs MODEL.pt SPEC
//   lp_bench_sampling instructions MODEL.pt SPEC [--n N]   (under callgrind: bench/instructions.py)
//   lp_bench_sampling instructions PACKAGE.pt2 SPEC [--n N]   (libtorch 2.x)
//
// `stream`: five copies of the model loaded in one process, one intra-op thread, the input SPEC
// (lp_input_spec_parse's syntax: a float tensor, or an integer one with a range):
//   opt      the module as shipped: optimised, no markers, no session (the reference);
//   [A/A]    a second copy of the module as shipped, loaded separately: opt against itself, the
//            harness's own bias (should read 1.000); its spread widens every interval;
//   never    attached, sample_every INT_MAX: after the first, every forward unprofiled, so its
//            cost over `opt` per forward is what an unsampled forward costs (ns);
//   1/100    attached, sample_every 100;  1/10  attached, sample_every 10.
// Each copy warms up (3 forwards, unprofiled), then every round times one block of B forwards
// of each setting, in ROUND_SLICES slices: slice s of every setting, in an order that rotates
// each round, before slice s + 1 of any, so that every setting's forwards spread over the whole
// round and meet the same spells of the machine's other work (back to back, a spell of a second
// slowed one setting's block and not the reference's; bench/README.md, "The fast end"). A block's
// time is the sum of its slices'; the 1/100 setting's block still holds its B/100 profiled
// forwards, wherever they fall (the sampler counts the session's forwards, not the slices). x_opt
// is the median over rounds of block / opt's block in the same round (on the thread's CPU clock),
// with its interval as lp_bench_torch's (bench_ratio_interval: the order-statistic 95% interval of
// that median, widened each side by the [A/A] spread, at least BENCH_RATIO_FLOOR; bench/README.md,
// "Verdicts"). B is a multiple of 100, so each block of 1/100 holds exactly B/100 profiled
// forwards. The budget (1/100 <= 1.01x) is printed as a BUDGET line (bench_stats.h): PASS, MISS,
// UNSURE, or SUSPECT when a session's stream reads faster than `opt` beyond the noise (it runs
// the same forward plus layerprof's work: the harness is at fault); below 0.95 within the noise,
// UNSURE with the note "skewed".
//
// `render`: the exposition (LP_FORMAT_OPENMETRICS) of a live session after 20 profiled forwards,
// rendered N times into memory: the median time of one render, and its size.
//
// `instructions`: N unsampled forwards of a live session (sample_every INT_MAX, after the
// sampler's first, profiled, forward), counted alone by callgrind (collection toggled on around
// them, dumped as "unsampled"): what layerprof's entry points cost a forward it does not record;
// and before them N forwards of a copy as shipped (no session), dumped as "shipped". On a package
// (.pt2), the same through layerprof::PackageSession: a loader as shipped, then a second loader
// attached to a session sampled never; then a third attached to a session that profiles every
// forward (modules only), dumped as "profiled": what a recorded package forward costs.
//
// Output: `|`-separated lines for bench/run.sh: SAMPLING|model|setting|x_opt|noise|base_us|
// ns_per_forward|profiled|check (noise: the interval's larger half; check: `-`, SUSPECT or skewed),
// INFO|..., BUDGET|... and RENDER|model|median_us|bytes|series.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "layerprof.hpp"
#if TORCH_VERSION_MAJOR >= 2
#include "layerprof_pt2.hpp"
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif

extern "C" {
#include "bench_util.h"
}

using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
    return bench_median(v.data(), v.size());
}

static c10::IValue make_input(const char *spec_text) {
    lp_input_spec spec;
    if (lp_input_spec_parse(spec_text, &spec) != LP_OK) {
        std::fprintf(stderr, "bad input spec '%s': %s\n", spec_text, lp_error_last());
        std::exit(2);
    }
    std::vector<int64_t> shape(spec.shape, spec.shape + spec.ndim);
    torch::manual_seed(1);
    if (spec.dtype == LP_DTYPE_INT64)
        return torch::randint((int64_t)spec.low, (int64_t)spec.high, shape, torch::kLong);
    return torch::rand(shape);
}

struct Setting {
    const char *name;
    int every; // 0: no session (the reference and its [A/A] copy)
    torch::jit::Module module;
    std::unique_ptr<layerprof::Session> session;
    bench_samples block_ns{};
};

static uint64_t sampled_forwards(lp_session *s) {
    lp_run_info info;
    return lp_session_run_info(s, &info) == LP_OK ? info.iterations : 0;
}

// Runs n forwards of the setting: the thread's CPU time they took.
static double run_forwards(Setting &st, const std::vector<c10::IValue> &in, int n) {
    uint64_t t0 = bench_cpu_ns();
    for (int i = 0; i < n; i++) {
        if (!st.session) {
            st.module.forward(in);
            continue;
        }
        layerprof::Session::Forward scope(*st.session);
        st.module.forward(in);
        scope.end();
    }
    // The thread's CPU time: one intra-op thread runs the whole forward on this thread, and the CPU
    // clock does not count the time the machine's other work preempted it (bench/README.md).
    return (double)(bench_cpu_ns() - t0);
}

#define ROUND_SLICES 10

// One round: a block of `block` forwards of every setting, in slices interleaved (see the top).
static void run_round(std::vector<Setting> &settings, const std::vector<c10::IValue> &in, int block,
                      int round) {
    size_t n = settings.size();
    int slices = block < ROUND_SLICES ? block : ROUND_SLICES;
    std::vector<double> sum(n, 0.0);
    for (int s = 0; s < slices; s++) {
        int forwards = block / slices + (s < block % slices); // the slices add up to the block
        for (size_t k = 0; k < n; k++) {
            size_t i = (k + (size_t)round) % n;
            sum[i] += run_forwards(settings[i], in, forwards);
        }
    }
    for (size_t i = 0; i < n; i++)
        bench_samples_add(&settings[i].block_ns, sum[i]);
}

static int stream(const char *path, const char *spec, int block, int rounds, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    std::vector<Setting> settings;
    settings.push_back({"opt", 0, {}, nullptr, {}});
    settings.push_back({"[A/A]", 0, {}, nullptr, {}});
    settings.push_back({"never", INT_MAX, {}, nullptr, {}});
    settings.push_back({"1/100", 100, {}, nullptr, {}});
    settings.push_back({"1/10", 10, {}, nullptr, {}});
    for (auto &st : settings) {
        st.module = torch::jit::load(path);
        st.module.eval();
        if (st.every) {
            lp_options o;
            lp_options_init(&o);
            o.model_path = path;
            o.sample_every = st.every;
            st.session = std::make_unique<layerprof::Session>(st.module, o);
            st.session->warmup(in);
        } else {
            for (int i = 0; i < 3; i++)
                st.module.forward(in);
        }
    }
    // One untimed round: each copy's caches and the sampler's first (profiled) forward.
    run_round(settings, in, block, 0);
    for (auto &st : settings)
        st.block_ns.n = 0;
    for (int r = 0; r < rounds; r++)
        run_round(settings, in, block, r);
    const bench_samples &ref = settings[0].block_ns;
    double base_us = bench_median(ref.v, ref.n) / block / 1000;
    // The harness's own spread: how far the [A/A] copy strays from 1.000 in its interval; it
    // widens every other interval (at least BENCH_RATIO_FLOOR each side).
    double aa_dev = bench_aa_spread(&settings[1].block_ns, &ref);
    for (auto &st : settings) {
        int reference = &st == &settings[0];
        bench_interval x = {1, 1, 1};
        double cover = 0;
        if (!reference) x = bench_ratio_interval(&st.block_ns, &ref, st.every ? aa_dev : 0, &cover);
        std::vector<double> extra_ns;
        for (int r = 0; r < rounds; r++)
            extra_ns.push_back((st.block_ns.v[r] - ref.v[r]) / block);
        // Impossible: a session's stream runs the same forward plus layerprof's work, so reading
        // faster than the model as shipped beyond the noise is the harness (SUSPECT); by over 5%
        // within the noise, a skewed reference (UNSURE).
        bench_ratio_check check = st.every ? bench_ratio_check_of(x) : BENCH_RATIO_OK;
        uint64_t profiled = st.session ? sampled_forwards(st.session->get()) : 0;
        std::printf("SAMPLING|%s|%s|%.4f|%.4f|%.1f|%.0f|%llu|%s\n", name, st.name, x.mid,
                    reference ? 0.0 : bench_half_width(x), base_us, median(extra_ns),
                    (unsigned long long)profiled,
                    check == BENCH_RATIO_SUSPECT ? "SUSPECT"
                    : check                      ? "skewed"
                                                 : "-");
        if (st.every == 100) {
            char what[96], text[96], note[160];
            std::snprintf(what, sizeof what, "sampling 1/100: stream x_opt (%s)", name);
            std::snprintf(text, sizeof text, "%.4fx [%.4f, %.4f]", x.mid, x.lo, x.hi);
            bench_margin_note(note, sizeof note, 1.01 - x.mid, bench_half_width(x), 4, "");
            bench_verdict vd = bench_judge(x, 1.01, check, 0);
            if (check) {
                bench_check_note(note, sizeof note, check, "the model as shipped");
            } else if (cover < BENCH_MIN_COVERAGE) {
                vd = BENCH_UNSURE;
                std::snprintf(note, sizeof note, "%d rounds: the interval covers %.0f%% < 95%%",
                              rounds, cover * 100);
            }
            bench_budget_verdict(what, vd, text, "<= 1.01x", note);
        }
    }
    double cover = 0;
    bench_median_ci(ref.v, ref.n, &cover);
    std::printf("INFO|%s: each ± is the %.1f%% order-statistic interval of the median per-round "
                "ratio (%d rounds of %d forwards in %d slices), widened each side by the [A/A] "
                "spread %.4f (at "
                "least %.3f)\n",
                name, cover * 100, rounds, block, block < ROUND_SLICES ? block : ROUND_SLICES,
                aa_dev, BENCH_RATIO_FLOOR);
    for (auto &st : settings)
        bench_samples_free(&st.block_ns);
    return 0;
}

// `module` attached to a live session that samples its first forward and never another, warmed
// up, its first forward taken.
static std::unique_ptr<layerprof::Session>
never_sampled(torch::jit::Module &module, const char *path, const std::vector<c10::IValue> &in) {
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.sample_every = INT_MAX;
    auto session = std::make_unique<layerprof::Session>(module, o);
    session->warmup(in);
    layerprof::Session::Forward scope(*session); // the sampler's first decision profiles
    module.forward(in);
    scope.end();
    return session;
}

// `pairs`: lp_session_forward_begin + _end on a live session, sampled never, with no forward in
// between: what the API adds to an unsampled forward, apart from the markers in the graph.
static int pairs(const char *path, const char *spec, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    torch::jit::Module module = torch::jit::load(path);
    auto session = never_sampled(module, path, in);
    const int n = 200000;
    std::vector<double> ns;
    for (int r = 0; r < 5; r++) {
        uint64_t t0 = bench_cpu_ns();
        for (int i = 0; i < n; i++) {
            lp_session_forward_begin(session->get());
            lp_session_forward_end(session->get(), 1);
        }
        ns.push_back((double)(bench_cpu_ns() - t0) / n);
    }
    std::printf("PAIRS|%s|%.0f\n", name, median(ns));
    return 0;
}

// `instructions` (see the top): two cases, in instructions.py's format (UCASE|key|name|forwards|
// pairs|ops|memory events|check); an unsampled forward delivers no event.
static int instructions(const char *path, const char *spec, int n) {
#ifndef BENCH_HAVE_CALLGRIND
    (void)path, (void)spec, (void)n;
    std::fprintf(stderr, "lp_bench_sampling: built without valgrind/callgrind.h\n");
    return 2;
#else
    std::vector<c10::IValue> in{make_input(spec)};
    // The model as shipped first, for the forward's whole count beside it (INFO only: a total
    // moves by a few thousand instructions between two copies, layerprof's own do not).
    torch::jit::Module shipped = torch::jit::load(path);
    shipped.eval();
    for (int i = 0; i < 3; i++)
        shipped.forward(in);
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < n; i++)
        shipped.forward(in);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("shipped");
    std::printf("UCASE|shipped|shipped|%d|0|0|0|ok\n", n);

    torch::jit::Module module = torch::jit::load(path);
    auto session = never_sampled(module, path, in);
    for (int i = 0; i < 2; i++) { // two unsampled forwards before the counted ones
        layerprof::Session::Forward scope(*session);
        module.forward(in);
        scope.end();
    }
    uint64_t before = sampled_forwards(session->get());
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < n; i++) {
        layerprof::Session::Forward scope(*session);
        module.forward(in);
        scope.end();
    }
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("unsampled");
    const char *check =
        sampled_forwards(session->get()) == before ? "ok" : "a forward was sampled!";
    std::printf("UCASE|unsampled|unsampled|%d|0|0|0|%s\n", n, check);
    return 0;
#endif
}

#if defined(BENCH_HAVE_CALLGRIND) && TORCH_VERSION_MAJOR >= 2
// `instructions` on a package (see the top), in the same format.
static int instructions_package(const char *path, const char *spec, int n) {
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> in{make_input(spec).toTensor()};
    torch::inductor::AOTIModelPackageLoader shipped(path);
    for (int i = 0; i < 3; i++)
        shipped.run(in);
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < n; i++)
        shipped.run(in);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("shipped");
    std::printf("UCASE|shipped|shipped|%d|0|0|0|ok\n", n);

    torch::inductor::AOTIModelPackageLoader loader(path);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.sample_every = INT_MAX;
    layerprof::PackageSession session(loader, o);
    session.warmup(in, 3);
    session.run(in); // the sampler's first decision profiles
    for (int i = 0; i < 2; i++)
        session.run(in);
    uint64_t before = sampled_forwards(session.get());
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < n; i++)
        session.run(in);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("unsampled");
    const char *check = sampled_forwards(session.get()) == before ? "ok" : "a forward was sampled!";
    std::printf("UCASE|unsampled|unsampled|%d|0|0|0|%s\n", n, check);

    torch::inductor::AOTIModelPackageLoader recorded_loader(path);
    lp_options every;
    lp_options_init(&every);
    every.model_path = path;
    layerprof::PackageSession recorded(recorded_loader, every);
    recorded.warmup(in, 3);
    for (int i = 0; i < 2; i++) // the per-thread state is made on the first recorded forward
        recorded.run(in);
    before = sampled_forwards(recorded.get());
    CALLGRIND_TOGGLE_COLLECT;
    for (int i = 0; i < n; i++)
        recorded.run(in);
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT("profiled");
    check = sampled_forwards(recorded.get()) == before + static_cast<uint64_t>(n)
                ? "ok"
                : "a forward was not profiled!";
    std::printf("UCASE|profiled|profiled|%d|0|0|0|%s\n", n, check);
    return 0;
}
#else
static int instructions_package(const char *, const char *, int) {
    std::fprintf(stderr,
                 "lp_bench_sampling: packages need libtorch 2.x and valgrind/callgrind.h\n");
    return 2;
}
#endif

static bool is_package(const char *path) {
    size_t n = std::strlen(path);
    return n > 4 && !std::strcmp(path + n - 4, ".pt2");
}

static int append(void *payload, const char *data, size_t size) {
    static_cast<std::string *>(payload)->append(data, size);
    return 0;
}

static int render(const char *path, const char *spec, int renders, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    torch::jit::Module module = torch::jit::load(path);
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    layerprof::Session session(module, o);
    session.warmup(in);
    {
        for (int i = 0; i < 20; i++) {
            layerprof::Session::Forward scope(session);
            module.forward(in);
            scope.end();
        }
    }
    std::vector<double> us;
    std::string text;
    for (int i = 0; i < renders; i++) {
        text.clear();
        auto t0 = Clock::now();
        if (lp_session_render_to(session.get(), LP_FORMAT_OPENMETRICS, append, &text) != LP_OK) {
            std::fprintf(stderr, "render: %s\n", lp_error_last());
            return 1;
        }
        us.push_back((double)std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
                         .count() /
                     1000);
    }
    size_t series = 0;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (text[at] != '#') series++;
        at = end == std::string::npos ? text.size() : end + 1;
    }
    std::printf("RENDER|%s|%.1f|%zu|%zu\n", name, median(us), text.size(), series);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: lp_bench_sampling stream|render|pairs|instructions MODEL.pt "
                             "SPEC [--block B] [--rounds R] [--renders N] [--n N]\n");
        return 2;
    }
    int block = 100, rounds = 7, renders = 50, forwards = 20;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n")) forwards = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--block")) block = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--renders")) renders = std::atoi(argv[i + 1]);
    }
    if (block < 1 || rounds < 1 || renders < 1 || forwards < 1) {
        std::fprintf(stderr, "block, rounds, renders and n must be at least 1\n");
        return 2;
    }
    at::set_num_threads(1);
    // No autograd, for every copy and every forward, warm-up included: the graphs TorchScript
    // optimises then are the ones timed (mixing modes breaks lstm_cell's).
    torch::NoGradGuard no_grad;
    std::string name = argv[2];
    size_t slash = name.rfind('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0)
        name.resize(name.size() - 3);
    try {
        if (!std::strcmp(argv[1], "stream"))
            return stream(argv[2], argv[3], block, rounds, name.c_str());
        if (!std::strcmp(argv[1], "pairs")) return pairs(argv[2], argv[3], name.c_str());
        if (!std::strcmp(argv[1], "instructions"))
            return is_package(argv[2]) ? instructions_package(argv[2], argv[3], forwards)
                                       : instructions(argv[2], argv[3], forwards);
        if (!std::strcmp(argv[1], "render")) return render(argv[2], argv[3], renders, name.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "lp_bench_sampling: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "unknown command '%s'\n", argv[1]);
    return 2;
}

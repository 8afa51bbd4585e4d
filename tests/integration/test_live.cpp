// test_live.cpp: a live session under load (docs/sampling.md). Four threads run forwards of one
// attached module at once, every third one profiled, while a fifth renders the exposition every
// 10 ms. Every profiled call must be counted once: after the threads join, each module's
// histogram _count (self and total) and its calls counter equal the profiled forwards times its
// calls per forward (models/<name>.counts.json's, the same as lp_session_node's raw_calls), and
// the reader's figures only ever grow. The suite builds it under ThreadSanitizer as well
// (scripts/tsan.sh). C++ because it holds a torch::jit::Module.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/canonicalize.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "layerprof.hpp"
#include "lp_check.hpp"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

static const int kThreads = 4;
static const int kEvery = 3;

// "family{...module="m"...} value" lines of the exposition: (family, module) -> value, for the
// _count series and the calls counter.
using Figures = std::map<std::pair<std::string, std::string>, uint64_t>;

static Figures parse(const std::string &text) {
    Figures f;
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        if (line.empty() || line[0] == '#') continue;
        size_t brace = line.find('{'), close = line.rfind('}');
        if (brace == std::string::npos || close == std::string::npos) continue;
        std::string family = line.substr(0, brace);
        if (family.find("_count") == std::string::npos &&
            family.find("_total") == std::string::npos)
            continue;
        std::string labels = line.substr(brace, close - brace);
        std::string module;
        size_t m = labels.find("module=\"");
        if (m != std::string::npos) module = labels.substr(m + 8, labels.find('"', m + 8) - m - 8);
        f[std::make_pair(family, module)] = std::strtoull(line.c_str() + close + 1, nullptr, 10);
    }
    return f;
}

static uint64_t value_of(const Figures &f, const std::string &family, const std::string &module) {
    auto it = f.find({family, module});
    return it == f.end() ? 0 : it->second;
}

static int append(void *payload, const char *data, size_t size) {
    static_cast<std::string *>(payload)->append(data, size);
    return 0;
}

static std::string render(lp_session *s) {
    std::string text;
    int rc = lp_session_render_to(s, LP_FORMAT_OPENMETRICS, append, &text);
    LP_CHECK(rc == LP_OK, "render: %s", lp_error_last());
    return text;
}

// Calls per forward of each module, by path ("." for the root, as the exposition names it).
static std::map<std::string, uint64_t> calls_per_forward(lp_session *s, uint64_t forwards) {
    std::map<std::string, uint64_t> calls;
    size_t n = 0;
    lp_session_node_count(s, &n);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        if (lp_session_node(s, i, &info) != LP_OK || info.kind != LP_NODE_MODULE) continue;
        LP_CHECK(info.raw_calls % forwards == 0, "'%s': %" PRIu64 " calls in %" PRIu64 " forwards",
                 info.path, info.raw_calls, forwards);
        calls[*info.path ? info.path : "."] = info.raw_calls / forwards;
    }
    return calls;
}

static void stress(const char *name, std::vector<c10::IValue> inputs, int forwards_per_thread,
                   const std::map<std::string, uint64_t> &want_per_forward) {
    torch::jit::Module module = torch::jit::load(std::string(LP_MODELS_DIR) + "/" + name + ".pt");
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.sample_every = kEvery;
    o.metrics_depth = -1; // every module its own series: each _count is checked
    layerprof::Session session(module, o);
    session.warmup(inputs);

    std::atomic<bool> done{false};
    std::atomic<int> failed{0};
    std::atomic<int> renders{0};
    int shrinks = 0;
    std::thread reader([&] {
        Figures last;
        while (!done.load()) {
            Figures now = parse(render(session.get()));
            renders++;
            for (const auto &kv : last)
                if (now[kv.first] < kv.second) shrinks++;
            last = now;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; t++)
        workers.emplace_back([&] {
            c10::InferenceMode guard;
            for (int i = 0; i < forwards_per_thread; i++) {
                // A render among the forwards is what this test is for: the last forward waits
                // for the reader's first render rather than trusting the scheduler to run the
                // reader in time (a loaded machine may not). Bounded: a reader that never renders
                // fails the check below instead of hanging the test.
                if (i == forwards_per_thread - 1)
                    for (int w = 0; w < 60000 && renders.load() == 0; w++)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                try {
                    layerprof::Session::Forward scope(session);
                    module.forward(inputs);
                    scope.end();
                    session.step(); // any thread of a live session
                } catch (const std::exception &e) {
                    std::fprintf(stderr, "%s: forward failed: %s\n", name, e.what());
                    failed++;
                    return;
                }
            }
        });
    for (auto &w : workers)
        w.join();
    done = true;
    reader.join();
    LP_CHECK(failed == 0, "%s: %d threads failed", name, failed.load());
    LP_CHECK(renders.load() > 0, "%s: the reader never rendered", name);
    LP_CHECK(shrinks == 0, "%s: %d figures went down between two renders", name, shrinks);

    uint64_t decided = (uint64_t)kThreads * forwards_per_thread; // warm-up: disabled, not decided
    uint64_t sampled = (decided + kEvery - 1) / kEvery;
    Figures f = parse(render(session.get()));
    LP_CHECK(value_of(f, "layerprof_forwards_total", "") == decided + 3,
             "%s: %" PRIu64 " forwards, want %" PRIu64, name,
             value_of(f, "layerprof_forwards_total", ""), decided + 3);
    LP_CHECK(value_of(f, "layerprof_sampled_forwards_total", "") == sampled,
             "%s: %" PRIu64 " sampled forwards, want %" PRIu64, name,
             value_of(f, "layerprof_sampled_forwards_total", ""), sampled);
    auto per_forward = calls_per_forward(session.get(), sampled);
    LP_CHECK(per_forward == want_per_forward, "%s: calls per forward differ from counts.json",
             name);
    for (const auto &kv : want_per_forward) {
        uint64_t want = kv.second * sampled;
        for (const char *family :
             {"layerprof_module_self_seconds_count", "layerprof_module_total_seconds_count",
              "layerprof_module_calls_total"})
            LP_CHECK(value_of(f, family, kv.first) == want,
                     "%s: %s{module=\"%s\"} is %" PRIu64 ", want %" PRIu64, name, family,
                     kv.first.c_str(), value_of(f, family, kv.first), want);
    }
    lp_run_info run;
    LP_CHECK(lp_session_run_info(session.get(), &run) == LP_OK, "%s", lp_error_last());
    LP_CHECK(run.iterations == sampled, "%s: %" PRIu64 " iterations, want %" PRIu64, name,
             run.iterations, sampled);
    LP_CHECK(run.dropped == 0, "%s: %" PRIu64 " events dropped", name, run.dropped);
    std::printf("%s: %d threads x %d forwards, %" PRIu64 " profiled, %d renders meanwhile\n", name,
                kThreads, forwards_per_thread, sampled, renders.load());
}

// A live session's rules on one thread: no second forward open, an end needs a begin.
static void check_rules() {
    torch::jit::Module module = torch::jit::load(std::string(LP_MODELS_DIR) + "/nested.pt");
    lp_options o;
    lp_options_init(&o);
    lp_session *s = nullptr;
    LP_CHECK(lp_session_attach(&s, &o, &module, layerprof::torch_build()) == LP_OK, "%s",
             lp_error_last());
    LP_CHECK(lp_session_forward_end(s, 1) == LP_ERR_STATE, "an end without a begin");
    LP_CHECK(lp_session_forward_begin(s) == LP_OK, "%s", lp_error_last());
    LP_CHECK(lp_session_forward_begin(s) == LP_ERR_STATE, "a second begin on one thread");
    LP_CHECK(std::strstr(lp_error_last(), "already open on this thread"), "%s", lp_error_last());
    // A getter merges, which would race the open forward: refused, and fine once it ended.
    size_t n = 0;
    LP_CHECK(lp_session_node_count(s, &n) == LP_ERR_STATE, "a getter while a live forward is open");
    LP_CHECK(std::strstr(lp_error_last(), "lp_session_node_count: a live forward is open"), "%s",
             lp_error_last());
    LP_CHECK(lp_session_forward_end(s, 0) == LP_OK, "%s", lp_error_last());
    LP_CHECK(lp_session_node_count(s, &n) == LP_OK && n > 1, "%s", lp_error_last());
    lp_session_close(s);
}

// The budget mode on a live session: it profiles the first forward, leaves the next unprofiled to
// measure both, then samples at the rate the measured costs allow, at most every other forward
// (the rate itself is the unit test's: test_sampler.c). nested's profiled forward costs a few %
// more than a plain one, so a 1% budget profiles some forwards and leaves most.
static void check_budget() {
    torch::jit::Module module = torch::jit::load(std::string(LP_MODELS_DIR) + "/nested.pt");
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.sample_budget = 0.01;
    layerprof::Session session(module, o);
    std::vector<c10::IValue> inputs{torch::rand({1, 3, 16, 16})};
    session.warmup(inputs);
    c10::InferenceMode guard;
    const int n = 400;
    for (int i = 0; i < n; i++) {
        layerprof::Session::Forward scope(session);
        module.forward(inputs);
        scope.end();
    }
    lp_run_info run;
    LP_CHECK(lp_session_run_info(session.get(), &run) == LP_OK, "%s", lp_error_last());
    LP_CHECK(run.iterations >= 1 && run.iterations <= n * 6 / 10,
             "budget 1%%: %" PRIu64 " of %d forwards profiled", run.iterations, n);
    std::printf("budget 1%%: %" PRIu64 " of %d forwards profiled\n", run.iterations, n);
}

// layerprof's nodes (markers, the split's condition) in a block, its nested blocks and forked
// subgraphs included; `calls` counts the method calls left there.
static size_t count_layerprof(torch::jit::Block *b, size_t *calls = nullptr) {
    size_t n = 0;
    for (torch::jit::Node *node : b->nodes()) {
        n += std::strncmp(node->kind().toQualString(), "layerprof::", 11) == 0;
        if (calls) *calls += node->kind() == c10::prim::CallMethod;
        for (torch::jit::Block *sub : node->blocks())
            n += count_layerprof(sub, calls);
        if (node->hasAttribute(c10::attr::Subgraph))
            n += count_layerprof(node->g(c10::attr::Subgraph)->block(), calls);
    }
    return n;
}

static std::string canonical(const std::shared_ptr<torch::jit::Graph> &g) {
    return torch::jit::Canonicalize(g, false)->toString();
}

// A forward a session does not record runs the model as shipped: attaching splits forward's
// graph on layerprof::recording into the marked body and the body with every call inlined and no
// marker, and the plan the executor runs keeps both; closing the session puts the graph back.
static void check_split() {
    torch::jit::Module module = torch::jit::load(std::string(LP_MODELS_DIR) + "/nested.pt");
    module.eval();
    auto &fn = torch::jit::toGraphFunction(module.get_method("forward").function());
    std::string before = canonical(fn.graph());
    std::vector<c10::IValue> inputs{torch::rand({1, 3, 16, 16})};
    {
        lp_options o;
        lp_options_init(&o);
        o.sample_every = 2;
        layerprof::Session session(module, o);
        session.warmup(inputs);
        c10::InferenceMode guard;
        for (int i = 0; i < 4; i++) {
            layerprof::Session::Forward scope(session);
            module.forward(inputs);
            scope.end();
        }
        std::vector<c10::IValue> stack{module._ivalue()};
        stack.insert(stack.end(), inputs.begin(), inputs.end());
        torch::jit::GraphOptimizerEnabledGuard optimize(true);
        auto plan = fn.get_executor().getPlanFor(stack);
        torch::jit::Node *branch = nullptr;
        for (torch::jit::Node *node : plan.graph->nodes())
            if (node->kind() == c10::prim::If &&
                std::strcmp(node->input(0)->node()->kind().toQualString(),
                            "layerprof::recording") == 0)
                branch = node;
        LP_CHECK(branch && branch->blocks().size() == 2,
                 "the executed plan has no branch on layerprof::recording:\n%s",
                 plan.graph->toString().c_str());
        if (branch) {
            size_t calls = 0;
            LP_CHECK(count_layerprof(branch->blocks()[0]) > 0, "the recorded branch has no marker");
            size_t unmarked = count_layerprof(branch->blocks()[1], &calls);
            LP_CHECK(unmarked == 0 && calls == 0,
                     "the unrecorded branch has %zu layerprof nodes and %zu calls", unmarked,
                     calls);
        }
        lp_run_info run;
        LP_CHECK(lp_session_run_info(session.get(), &run) == LP_OK, "%s", lp_error_last());
        LP_CHECK(run.iterations == 2, "%" PRIu64 " forwards recorded of 4 at 1/2", run.iterations);
        // The recorded forwards took the marked branch: their calls were counted.
        size_t index = 0;
        lp_node_info info;
        LP_CHECK(lp_session_find(session.get(), "block.body.0", &index) == LP_OK &&
                     lp_session_node(session.get(), index, &info) == LP_OK,
                 "%s", lp_error_last());
        LP_CHECK(info.raw_calls == 4,
                 "block.body.0: %" PRIu64 " calls in 2 recorded forwards, want 4", info.raw_calls);
    }
    LP_CHECK(count_layerprof(fn.graph()->block()) == 0 && canonical(fn.graph()) == before,
             "closing the session left forward's graph changed:\n%s",
             fn.graph()->toString().c_str());
}

int main() {
    torch::manual_seed(1);
    check_rules();
    check_split();
    check_budget();
    std::map<std::string, uint64_t> nested = {{".", 1},
                                              {"stem", 1},
                                              {"block", 2},
                                              {"block.body", 2},
                                              {"block.body.0", 2},
                                              {"block.body.1", 2},
                                              {"block.body.2", 2},
                                              {"block.proj", 2},
                                              {"unused", 0},
                                              {"pool", 1},
                                              {"head", 1}};
    const char *scale = std::getenv("LP_LIVE_FORWARDS"); // fewer under ThreadSanitizer
    int n = scale ? std::atoi(scale) : 300;
    stress("nested", {torch::rand({1, 3, 16, 16})}, n, nested);
    return g_failures ? 1 : 0;
}

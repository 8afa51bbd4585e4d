// serve.cpp: layerprof-serve, an inference service in miniature that profiles a sample of its own
// forwards all the time and lets Prometheus scrape the figures (docs/production.md).
//
//   layerprof-serve MODEL.pt [--input SHAPE[:DTYPE][:FILL]]... [--sample-every N] [--port P] ...
//
// What a real service copies from here (the comments [1/3] to [3/3]): attach a sampling session to
// the module before its first forward, wrap each request's forward in a layerprof::Session::Forward
// scope, and answer GET /metrics with lp_session_render_to(LP_FORMAT_OPENMETRICS). The rest (the
// synthetic request loop, the flags) stands in for the service's own code.
//
// Exit status: 0 after SIGINT/SIGTERM; 2 for bad input (a flag, the model, inputs the model
// refuses); 1 for a failure at run time (the port cannot be bound, a forward fails later).
#include <torch/script.h>

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "layerprof.hpp"

namespace {

const char *const usage_text =
    "usage: layerprof-serve MODEL.pt [options]\n"
    "  --input SHAPE[:DTYPE][:FILL]  one tensor argument of forward, as the CLI's --input\n"
    "                                (repeat for several; default 1x3x224x224)\n"
    "  --sample-every N              profile every Nth forward (default 100 when no --sample-*\n"
    "                                is given)\n"
    "  --sample-probability P        profile each forward with probability P in (0, 1] instead\n"
    "  --sample-budget F             let profiling cost at most the fraction F of forward time\n"
    "                                (0.01: 1%), which sets the rate from measured costs\n"
    "  --metrics-depth D             export modules down to depth D, deeper ones folded in\n"
    "                                (default 1: the model's children; 0: the model alone)\n"
    "  --label NAME=VALUE            a label on every series (host=a, replica=2); repeatable,\n"
    "                                Prometheus' rules, at most 16\n"
    "  --port P                      serve /metrics on port P (default 9464)\n"
    "  --threads T                   request threads running forwards (default 2)\n"
    "  --rate R                      forwards per second, all threads together (default 20;\n"
    "                                0: as fast as they go)\n"
    "  --forwards N                  stop the forwards after N (default: never) and keep\n"
    "                                serving /metrics, whose figures then stay as they are\n"
    "  --help                        this text\n"
    "Exit status: 0 after SIGINT or SIGTERM, 2 for bad input, 1 for a failure at run time.\n";

struct Config {
    const char *model = nullptr;
    std::vector<lp_input_spec> inputs;
    lp_options options; // the session's: sampling and the exposition's depth
    long port = 9464, threads = 2, forwards = -1;
    double rate = 20;
};

[[noreturn]] void bad_input(const std::string &message) {
    std::fprintf(stderr, "layerprof-serve: %s\n", message.c_str());
    std::exit(2);
}

// A whole-string integer in [low, high], or a usage error naming the flag.
long parse_int(const char *flag, const char *text, long low, long high) {
    errno = 0;
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (errno || end == text || *end || value < low || value > high)
        bad_input(std::string(flag) + " must be an integer from " + std::to_string(low) + " to " +
                  std::to_string(high) + ", got '" + text + "'");
    return value;
}

// An option of the library's table, checked by the library (the CLI's messages), under our flag's
// name: "'sample_every' must be ..." becomes "--sample-every must be ...".
void set_option(lp_options &options, const char *key, const char *flag, const char *value) {
    if (lp_options_set(&options, key, value) == LP_OK) return;
    std::string message = lp_error_last(), quoted = std::string("'") + key + "'";
    if (message.compare(0, quoted.size(), quoted) == 0) message.replace(0, quoted.size(), flag);
    bad_input(message);
}

Config parse_args(int argc, char **argv) {
    Config config;
    lp_options_init(&config.options);
    bool sampling_given = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!std::strcmp(arg, "--help") || !std::strcmp(arg, "-h")) {
            std::fputs(usage_text, stdout);
            std::exit(0);
        }
        if (std::strncmp(arg, "--", 2) != 0) {
            if (config.model) bad_input(std::string("unexpected argument '") + arg + "'");
            config.model = arg;
            continue;
        }
        static const char *const flags[] = {
            "--input",         "--sample-every",  "--sample-probability",
            "--sample-budget", "--metrics-depth", "--port",
            "--threads",       "--rate",          "--forwards",
            "--label"};
        if (std::none_of(std::begin(flags), std::end(flags),
                         [&](const char *flag) { return !std::strcmp(arg, flag); }))
            bad_input(std::string("unknown option '") + arg + "' (see --help)");
        if (i + 1 >= argc) bad_input(std::string(arg) + " needs a value (see --help)");
        const char *value = argv[++i];
        if (!std::strncmp(arg, "--sample-", 9)) sampling_given = true;
        if (!std::strcmp(arg, "--input")) {
            lp_input_spec spec;
            if (lp_input_spec_parse(value, &spec) != LP_OK)
                bad_input(std::string("--input '") + value + "': " + lp_error_last());
            config.inputs.push_back(spec);
        } else if (!std::strcmp(arg, "--sample-every")) {
            set_option(config.options, "sample_every", arg, value);
        } else if (!std::strcmp(arg, "--sample-probability")) {
            set_option(config.options, "sample_probability", arg, value);
        } else if (!std::strcmp(arg, "--sample-budget")) {
            set_option(config.options, "sample_budget", arg, value);
        } else if (!std::strcmp(arg, "--metrics-depth")) {
            // The library's -1 (no limit) is left out here: a service's series stay bounded.
            parse_int(arg, value, 0, 1000000);
            set_option(config.options, "metrics_depth", arg, value);
        } else if (!std::strcmp(arg, "--label")) {
            set_option(config.options, "labels", arg, value);
        } else if (!std::strcmp(arg, "--port")) {
            config.port = parse_int(arg, value, 1, 65535);
        } else if (!std::strcmp(arg, "--threads")) {
            config.threads = parse_int(arg, value, 1, 256);
        } else if (!std::strcmp(arg, "--rate")) {
            char *end = nullptr;
            config.rate = std::strtod(value, &end);
            if (end == value || *end || !(config.rate >= 0 && config.rate < 1e9))
                bad_input(
                    std::string("--rate must be a number of forwards per second >= 0, got '") +
                    value + "'");
        } else { // --forwards
            config.forwards = parse_int(arg, value, 0, 1000000000000L);
        }
    }
    if (!config.model) bad_input("no model given (see --help)");
    // The library profiles every forward by default (a session that stays open for a while);
    // a service that never stops wants a sample: 1 forward in 100 unless told otherwise.
    if (!sampling_given) set_option(config.options, "sample_every", "--sample-every", "100");
    if (config.inputs.empty()) {
        lp_input_spec spec;
        lp_input_spec_parse("1x3x224x224", &spec);
        config.inputs.push_back(spec);
    }
    return config;
}

// The request's tensor. A real service has its own; these are made once, from the --input specs.
torch::Tensor make_tensor(const lp_input_spec &spec) {
    static const c10::ScalarType types[] = {
        torch::kFloat32, torch::kFloat64, torch::kFloat16, torch::kBFloat16, torch::kInt64,
        torch::kInt32,   torch::kInt16,   torch::kInt8,    torch::kUInt8,    torch::kBool};
    std::vector<int64_t> shape(spec.shape, spec.shape + spec.ndim);
    auto options = torch::TensorOptions().dtype(types[spec.dtype]);
    if (spec.fill == LP_FILL_ZEROS) return torch::zeros(shape, options);
    if (spec.fill == LP_FILL_ONES) return torch::ones(shape, options);
    // Random: in [low, high) when a range was given, else floats in [0, 1) and integers 0 or 1.
    double low = spec.has_range ? spec.low : 0;
    if (spec.dtype <= LP_DTYPE_BFLOAT16) {
        double high = spec.has_range ? spec.high : 1;
        return torch::rand(shape, options) * (high - low) + low;
    }
    double high = spec.has_range ? spec.high : 2;
    return torch::randint(static_cast<int64_t>(low), static_cast<int64_t>(high), shape, options);
}

// libtorch's messages run over many lines. A c10::Error says it in its first line, without its
// backtrace; the TorchScript interpreter's error ends with the Python-style line that says it
// ("RuntimeError: Given groups=1, ..."), after the model's source.
std::string one_line(const std::exception &e) {
    if (auto *c10_error = dynamic_cast<const c10::Error *>(&e)) {
        std::string text = c10_error->what_without_backtrace();
        return text.substr(0, text.find('\n'));
    }
    std::string text = e.what();
    while (!text.empty() && text.back() == '\n')
        text.pop_back();
    return text.substr(text.rfind('\n') + 1); // npos + 1 == 0: a single line whole
}

// Prometheus' text exposition format 0.0.4, which LP_FORMAT_OPENMETRICS renders: Prometheus picks
// its parser by this header.
const char *const metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

MHD_Result reply(MHD_Connection *connection, unsigned status, const std::string &body,
                 const char *content_type) {
    // The body is copied: the string is gone when this returns, MHD sends it later.
#if MHD_VERSION >= 0x00097701
    MHD_Response *response = MHD_create_response_from_buffer_copy(body.size(), body.data());
#else
    MHD_Response *response = MHD_create_response_from_buffer(
        body.size(), const_cast<char *>(body.data()), MHD_RESPMEM_MUST_COPY);
#endif
    if (!response) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

// libmicrohttpd calls this on its own thread, while the request threads run forwards: rendering
// reads the session's histograms without stopping them (docs/production.md).
MHD_Result handle_request(void *cls, MHD_Connection *connection, const char *url,
                          const char *method, const char *, const char *, size_t *, void **) {
    auto *session = static_cast<layerprof::Session *>(cls);
    if (std::strcmp(url, "/metrics") != 0)
        return reply(connection, MHD_HTTP_NOT_FOUND, "only /metrics is served here\n",
                     "text/plain");
    if (std::strcmp(method, "GET") != 0 && std::strcmp(method, "HEAD") != 0)
        return reply(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n", "text/plain");
    std::string body;
    try {
        // [3/3] The exposition, rendered per scrape (lp_session_render_to into a string).
        body = session->render(LP_FORMAT_OPENMETRICS);
    } catch (const std::exception &e) { // layerprof's error, or out of memory
        return reply(connection, MHD_HTTP_INTERNAL_SERVER_ERROR,
                     std::string("layerprof: ") + e.what() + "\n", "text/plain");
    }
    return reply(connection, MHD_HTTP_OK, body, metrics_content_type);
}

} // namespace

int main(int argc, char **argv) {
    Config config = parse_args(argc, argv);

    // SIGINT and SIGTERM are blocked in every thread (the ones started below inherit the mask)
    // and taken by main with sigwait: no handler runs in the middle of a forward or a render.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    torch::jit::Module module;
    std::vector<c10::IValue> inputs;
    try {
        module = torch::jit::load(config.model);
        module.eval();
        for (const lp_input_spec &spec : config.inputs)
            inputs.emplace_back(make_tensor(spec));
    } catch (const std::exception &e) {
        bad_input(std::string("cannot load '") + config.model + "': " + one_line(e));
    }

    lp_options &options = config.options;
    options.model_path = config.model; // the `model` label; nothing is loaded from it
    if (lp_options_validate(&options) != LP_OK) bad_input(lp_error_last());

    // [1/3] Attached before the module's first forward, which TorchScript compiles for the
    // module's life; the options say which forwards are sampled.
    std::unique_ptr<layerprof::Session> session;
    try {
        session = std::make_unique<layerprof::Session>(module, options);
        c10::InferenceMode no_autograd;
        // The first forwards are TorchScript's own warm-up (it optimises during them); they are
        // also where a model that refuses the inputs says so, before anything is served.
        session->warmup(inputs);
    } catch (const layerprof::Error &e) {
        bad_input(one_line(e));
    } catch (const std::exception &e) {
        bad_input("the model's forward failed on the inputs: " + one_line(e));
    }
    lp_options_release(&options); // what lp_options_set copied: the session keeps its own copy

    // Internal polling thread: libmicrohttpd runs the socket; /metrics is rendered there. Its
    // own error log is off: the one line below says what failed.
    errno = 0;
    MHD_Daemon *daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, static_cast<uint16_t>(config.port),
                         nullptr, nullptr, &handle_request, session.get(), MHD_OPTION_END);
    if (!daemon) {
        std::fprintf(stderr, "layerprof-serve: cannot serve on port %ld: %s\n", config.port,
                     errno ? std::strerror(errno) : "libmicrohttpd could not start");
        return 1;
    }
    std::fprintf(stderr, "layerprof-serve: http://localhost:%ld/metrics, %ld request threads\n",
                 config.port, config.threads);

    // The request loop: each thread takes the next request number, runs one forward, and
    // sleeps to hold the rate. A sampled forward is recorded by the scope; the others run as if
    // layerprof were absent.
    std::atomic<long> next_request{0}, done{0};
    std::atomic<bool> stopping{false}, failed{false};
    auto period = config.rate > 0 ? std::chrono::duration<double>(config.threads / config.rate)
                                  : std::chrono::duration<double>(0);
    auto worker = [&] {
        c10::InferenceMode no_autograd; // per thread, as the service would run it
        auto next = std::chrono::steady_clock::now();
        while (!stopping) {
            long request = next_request++;
            if (config.forwards >= 0 && request >= config.forwards) break;
            try {
                // [2/3] One request's forward: recorded when the sampler picks it.
                layerprof::Session::Forward scope(*session);
                module.forward(inputs);
                scope.end();
            } catch (const std::exception &e) {
                std::fprintf(stderr, "layerprof-serve: forward %ld failed: %s\n", request,
                             one_line(e).c_str());
                failed = true;
                kill(getpid(), SIGTERM); // to main's sigwait: the service stops, exit status 1
                break;
            }
            if (++done == config.forwards)
                std::fprintf(stderr, "layerprof-serve: %ld forwards done, serving /metrics\n",
                             config.forwards);
            next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(period);
            std::this_thread::sleep_until(next);
        }
    };
    if (config.forwards == 0)
        std::fprintf(stderr, "layerprof-serve: 0 forwards done, serving /metrics\n");
    std::vector<std::thread> workers;
    for (long t = 0; t < config.threads; t++)
        workers.emplace_back(worker);

    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    stopping = true;
    for (std::thread &t : workers)
        t.join();
    MHD_stop_daemon(daemon); // no render runs after this: the session may close
    session.reset();
    if (failed) return 1; // the forward's failure was said when it happened
    std::fprintf(stderr, "layerprof-serve: stopped by %s after %ld forwards\n",
                 signal_number == SIGINT ? "SIGINT" : "SIGTERM", done.load());
    return 0;
}

/* layerprof.hpp: profiling a torch::jit::Module that a C++ program already holds and runs.
 *
 * Inline C++ over the C API of layerprof.h; the program compiles it against its own libtorch,
 * which must be the one layerprof was built against (find_package(layerprof) sets
 * layerprof_TORCH_DIR to it). Errors are thrown as layerprof::Error, with the library's message.
 *
 *     torch::jit::Module module = torch::jit::load("model.pt");  // the program's own
 *     layerprof::Session session(module);                         // before its first forward
 *     std::vector<c10::IValue> inputs{torch::rand({1, 3, 224, 224})};
 *     session.warmup(inputs);                                     // TorchScript optimises here
 *     for (int i = 0; i < 10; i++) session.forward(inputs);       // one profiled iteration each
 *     session.render(LP_FORMAT_TREE, stdout);
 *
 * Rules (docs/attach.md): attach before the module's first forward (libtorch compiles forward at
 * its first run, for the module's life; a module that already ran is refused, with the reason);
 * the module outlives the session; one session per module; forwards on the thread that begins
 * them. Closing the session leaves the module, and each thread's TorchScript optimizer setting,
 * as they were. */
#ifndef LAYERPROF_HPP
#define LAYERPROF_HPP

#include <torch/script.h>
#include <torch/version.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "layerprof.h"

namespace layerprof {

/* A failed call: the status (lp_status) and lp_error_last()'s message. */
class Error : public std::runtime_error {
  public:
    Error(int status, const char *message)
        : std::runtime_error(message && *message ? message : lp_status_name(status)),
          status_(status) {}
    int status() const noexcept {
        return status_;
    }

  private:
    int status_;
};

inline void check(int status) {
    if (status != LP_OK) throw Error(status, lp_error_last());
}

/* Runs `body` with `session` disabled, so the forwards it runs are not recorded, and enables the
 * session again afterwards, also when `body` throws. */
template <typename Body> void unrecorded(lp_session *session, Body &&body) {
    check(lp_session_enable(session, 0));
    try {
        body();
    } catch (...) {
        lp_session_enable(session, 1);
        throw;
    }
    check(lp_session_enable(session, 1));
}

#define LAYERPROF_STR2(x) #x
#define LAYERPROF_STR(x) LAYERPROF_STR2(x)
#ifdef _GLIBCXX_USE_CXX11_ABI
#define LAYERPROF_CXX11_ABI LAYERPROF_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define LAYERPROF_CXX11_ABI "none"
#endif

/* The libtorch this program is compiled against, as lp_session_attach compares it with
 * layerprof's: "2.15/cxx11abi=1". */
inline const char *torch_build() noexcept {
    return LAYERPROF_STR(TORCH_VERSION_MAJOR) "." LAYERPROF_STR(
        TORCH_VERSION_MINOR) "/cxx11abi=" LAYERPROF_CXX11_ABI;
}

class Session {
  public:
    /* Attaches `module` with `options` (lp_options_init's defaults when omitted). The session
     * holds a handle to the same module object; the program keeps its own. */
    explicit Session(torch::jit::Module &module) : Session(module, defaults()) {}
    Session(torch::jit::Module &module, const lp_options &options) : module_(module) {
        check(lp_session_attach(&session_, &options, &module_, torch_build()));
    }
    ~Session() {
        lp_session_close(session_);
    }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    /* Everything the program runs on this thread while it lives is one forward of the session:
     * recorded when the session records. Its end, when an exception is unwinding, drops what
     * the failed forward left open. */
    class Forward {
      public:
        explicit Forward(Session &session) : Forward(session.session_) {}
        /* The same on any attached session's handle (a PackageSession's, layerprof_pt2.hpp). */
        explicit Forward(lp_session *session)
            : session_(session), unwinding_(std::uncaught_exceptions()) {
            check(lp_session_forward_begin(session_));
        }
        ~Forward() {
            if (session_)
                lp_session_forward_end(session_, std::uncaught_exceptions() == unwinding_);
        }
        /* Ends it now, reporting a failure as an Error. */
        void end() {
            lp_session *s = session_;
            session_ = nullptr;
            check(lp_session_forward_end(s, 1));
        }
        Forward(const Forward &) = delete;
        Forward &operator=(const Forward &) = delete;

      private:
        lp_session *session_;
        int unwinding_;
    };

    /* One forward of the module on `inputs`, profiled as one iteration (a step). */
    c10::IValue forward(std::vector<c10::IValue> inputs) {
        c10::IValue out;
        {
            Forward scope(*this);
            out = module_.forward(std::move(inputs));
            scope.end();
        }
        step();
        return out;
    }

    /* `n` forwards that are not recorded: TorchScript profiles and optimises the module during
     * its first 3, which would otherwise be measured. */
    void warmup(const std::vector<c10::IValue> &inputs, int n = 3) {
        unrecorded(session_, [&] {
            for (int i = 0; i < n; i++) {
                Forward scope(*this);
                module_.forward(inputs);
                scope.end();
            }
        });
    }

    /* Ends one iteration of the program's loop (lp_session_step), for forwards run in Forward
     * scopes; forward() steps by itself. */
    void step() {
        check(lp_session_step(session_));
    }

    void render(lp_format format, FILE *out) {
        check(lp_session_render(session_, format, out));
    }
    std::string render(lp_format format = LP_FORMAT_TREE) {
        std::string text;
        check(lp_session_render_to(session_, format, append, &text));
        return text;
    }
    /* Every output of the options (lp_session_write_outputs). */
    void write_outputs() {
        check(lp_session_write_outputs(session_));
    }

    /* The C handle, for the rest of layerprof.h (nodes, regions, schedules). Owned here. */
    lp_session *get() const noexcept {
        return session_;
    }

  private:
    static lp_options defaults() {
        lp_options options;
        lp_options_init(&options);
        return options;
    }
    static int append(void *payload, const char *data, size_t size) {
        try {
            static_cast<std::string *>(payload)->append(data, size);
            return 0;
        } catch (...) { // out of memory: the render fails, with no exception through C
            return 1;
        }
    }

    torch::jit::Module module_;
    lp_session *session_ = nullptr;
};

} // namespace layerprof

/* The helpers above are expanded where torch_build() is defined: they are not left defined in
 * the program that includes this header. */
#undef LAYERPROF_CXX11_ABI
#undef LAYERPROF_STR
#undef LAYERPROF_STR2

#endif

/* layerprof_pt2.hpp: profiling an AOTInductor package (.pt2) that a C++ program already loaded
 * with torch::inductor::AOTIModelPackageLoader, and the forwards it runs on it (libtorch 2.x).
 *
 * A sibling of layerprof.hpp (whose Error, check(), torch_build() and Session::Forward it uses),
 * so that a program of TorchScript modules only does not include AOTInductor's headers:
 *
 *     torch::inductor::AOTIModelPackageLoader loader("model.pt2");   // the program's own
 *     lp_options options;
 *     lp_options_init(&options);
 *     options.model_path = "model.pt2";           // where layerprof reads the package's map
 *     layerprof::PackageSession session(loader, options);
 *     std::vector<at::Tensor> inputs{torch::rand({1, 3, 224, 224})};
 *     for (int i = 0; i < 10; i++) session.run(inputs);             // one profiled iteration each
 *     session.render(LP_FORMAT_TREE, stdout);
 *
 * Rules (docs/attach.md): the package was exported by python/layerprof_export.py (its module map,
 * and kernel profiling compiled in), options.model_path is the file the loader was loaded from,
 * the loader outlives the session, one session per loader, forwards on the thread that begins
 * them. The loader may have run before: nothing of a package is compiled at its first run. */
#ifndef LAYERPROF_PT2_HPP
#define LAYERPROF_PT2_HPP

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdio>
#include <string>
#include <vector>

#include "layerprof.hpp"

namespace layerprof {

class PackageSession {
  public:
    /* Attaches `loader`, loaded from options.model_path. */
    PackageSession(torch::inductor::AOTIModelPackageLoader &loader, const lp_options &options)
        : loader_(loader) {
        check(lp_session_attach_package(&session_, &options, &loader_, torch_build()));
    }
    ~PackageSession() {
        lp_session_close(session_);
    }
    PackageSession(const PackageSession &) = delete;
    PackageSession &operator=(const PackageSession &) = delete;

    /* A forward the program runs its own way: layerprof::Session::Forward scope(session.get()),
     * then step() once per iteration. */

    /* One forward of the package on `inputs`, profiled as one iteration (a step). */
    std::vector<at::Tensor> run(const std::vector<at::Tensor> &inputs) {
        std::vector<at::Tensor> out;
        {
            Session::Forward scope(session_);
            out = loader_.run(inputs);
            scope.end();
        }
        step();
        return out;
    }

    /* `n` forwards that are not recorded (the first run of a package allocates its buffers). */
    void warmup(const std::vector<at::Tensor> &inputs, int n = 1) {
        unrecorded(session_, [&] {
            for (int i = 0; i < n; i++) {
                Session::Forward scope(session_);
                loader_.run(inputs);
                scope.end();
            }
        });
    }

    void step() {
        check(lp_session_step(session_));
    }
    void render(lp_format format, FILE *out) {
        check(lp_session_render(session_, format, out));
    }
    void write_outputs() {
        check(lp_session_write_outputs(session_));
    }
    /* The C handle, for the rest of layerprof.h. Owned here. */
    lp_session *get() const noexcept {
        return session_;
    }

  private:
    torch::inductor::AOTIModelPackageLoader &loader_;
    lp_session *session_ = nullptr;
};

} // namespace layerprof

#endif

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

    /* One forward of the package on `inputs`, profiled as one iteration (a step). Its FLOPs and
     * output shapes are worked out from the inputs' shapes (input_shapes); an Error, before the
     * package runs, for shapes it was not compiled for. */
    std::vector<at::Tensor> run(const std::vector<at::Tensor> &inputs) {
        input_shapes(inputs);
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
                input_shapes(inputs);
                Session::Forward scope(session_);
                loader_.run(inputs);
                scope.end();
            }
        });
    }

    /* Hands the shapes of `inputs` to the session for the next forward, the one a program that
     * runs its own (Session::Forward) calls first (lp_session_input_shapes_set): an Error for
     * shapes the package was not compiled for. Inputs the C API cannot describe (more than
     * LP_MAX_INPUTS, a rank over LP_MAX_DIMS, an undefined tensor) are not handed over: that
     * forward records no FLOPs or output shapes, and runs as before. */
    void input_shapes(const std::vector<at::Tensor> &inputs) {
        // Shapes it cannot describe: none for this forward (never those of an earlier one).
        if (inputs.size() > LP_MAX_INPUTS)
            return check(lp_session_input_shapes_set(session_, nullptr, 0));
        lp_tensor_shape shapes[LP_MAX_INPUTS]; // once per forward, on the stack
        for (size_t i = 0; i < inputs.size(); i++) {
            const at::Tensor &t = inputs[i];
            if (!t.defined() || t.dim() > LP_MAX_DIMS)
                return check(lp_session_input_shapes_set(session_, nullptr, 0));
            shapes[i] = lp_tensor_shape{t.sizes().data(), static_cast<int>(t.dim()),
                                        dtype_of(t.scalar_type())};
        }
        check(lp_session_input_shapes_set(session_, shapes, inputs.size()));
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
    /* lp_dtype's value for a tensor's dtype, -1 for one it does not name (refused: no package's
     * input has one). The shim's own table (shim/dtypes.cpp) is not public: this header is
     * compiled in the program, against the library's C API only. */
    static int dtype_of(at::ScalarType type) noexcept {
        switch (type) {
        case at::kFloat:
            return LP_DTYPE_FLOAT32;
        case at::kDouble:
            return LP_DTYPE_FLOAT64;
        case at::kHalf:
            return LP_DTYPE_FLOAT16;
        case at::kBFloat16:
            return LP_DTYPE_BFLOAT16;
        case at::kLong:
            return LP_DTYPE_INT64;
        case at::kInt:
            return LP_DTYPE_INT32;
        case at::kShort:
            return LP_DTYPE_INT16;
        case at::kChar:
            return LP_DTYPE_INT8;
        case at::kByte:
            return LP_DTYPE_UINT8;
        case at::kBool:
            return LP_DTYPE_BOOL;
        default:
            return -1;
        }
    }

    torch::inductor::AOTIModelPackageLoader &loader_;
    lp_session *session_ = nullptr;
};

} // namespace layerprof

#endif

// version.cpp: the libtorch this shim was built against, as a version ("2.15") and as the
// build a program's module must match to be attached (version and C++ ABI).
#include <torch/version.h>

#include <cstring>
#include <cstddef> // a standard header: it defines _GLIBCXX_USE_CXX11_ABI, which the build names

#include "shim_internal.hpp"

namespace {

#define LPS_STR2(x) #x
#define LPS_STR(x) LPS_STR2(x)
const char k_torch_version[] = LPS_STR(TORCH_VERSION_MAJOR) "." LPS_STR(TORCH_VERSION_MINOR);
#ifdef _GLIBCXX_USE_CXX11_ABI
#define LPS_CXX11_ABI LPS_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define LPS_CXX11_ABI "none"
#endif
// The version and C++ ABI a program's module must match (lps_model_attach): read as
// layerprof.hpp's layerprof::torch_build() does for the same libtorch and compiler flags.
const char k_torch_build[] =
    LPS_STR(TORCH_VERSION_MAJOR) "." LPS_STR(TORCH_VERSION_MINOR) "/cxx11abi=" LPS_CXX11_ABI;

} // namespace

extern "C" {

const char *lps_torch_version(void) noexcept {
    return k_torch_version;
}

const char *lps_torch_build(void) noexcept {
    return k_torch_build;
}

} // extern "C"

namespace lps {

int check_torch_build(const char *torch_build, const char *what) noexcept {
    if (std::strcmp(torch_build, k_torch_build) == 0) return LP_OK;
    return lp_error_set(LP_ERR_UNSUPPORTED,
                        "the program was built against libtorch %s, layerprof against %s: %s "
                        "can only be attached by a program built against the same libtorch "
                        "(version and C++ ABI)",
                        torch_build, k_torch_build, what);
}

} // namespace lps

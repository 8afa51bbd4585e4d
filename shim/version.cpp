// version.cpp: the libtorch this shim was built against, as a version ("2.15") and as the
// build a program's module must match to be attached (version and C++ ABI).
#include <torch/version.h>

#include <cstddef> // a standard header: it defines _GLIBCXX_USE_CXX11_ABI, which the build names

#include "lp_shim.h"

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

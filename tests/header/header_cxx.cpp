// header_cxx.cpp: include/layerprof.h compiles as C++17 with -Wall -Wextra -pedantic -Werror
// (CMake builds this with exactly those flags) and its functions link from C++: the extern "C"
// block is right.
#include "layerprof.h"
#include "layerprof.h" // include guard

#include <cstring>

int main() {
    lp_options opts;
    lp_options_init(&opts);
    lp_input_spec spec;
    lp_node_info node{};
    lp_run_info info{};
    (void)node;
    (void)info;
    int rc = lp_input_spec_parse("1x3", &spec);
    return rc == LP_OK && opts.version == LP_OPTIONS_VERSION && std::strlen(lp_version()) ? 0 : 1;
}

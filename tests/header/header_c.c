/* header_c.c: include/layerprof.h compiles as C11 with -Wall -Wextra -pedantic -Werror (CMake
 * builds this with exactly those flags, whatever LP_WERROR says) and links as C. */
#include "layerprof.h"
#include "layerprof.h" /* include guard */

int main(void) {
    lp_options opts;
    lp_options_init(&opts);
    lp_input_spec spec;
    lp_node_info node;
    lp_run_info info;
    (void)node;
    (void)info;
    int rc = lp_input_spec_parse("1x3", &spec);
    return rc == LP_OK && opts.version == LP_OPTIONS_VERSION && lp_version()[0] ? 0 : 1;
}

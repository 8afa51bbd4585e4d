/* version.c: the library's version, as a string and as a number. */
#include "layerprof.h"

const char *lp_version(void) {
    return LP_VERSION_STRING;
}

unsigned long lp_version_number(void) {
    return LP_VERSION_NUMBER;
}

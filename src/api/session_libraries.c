/* session_libraries.c: the custom-op libraries a model needs (torchvision's _C.so, torchaudio's
 * libtorchaudio.so, a program's own), loaded before the model.
 *
 * A library registers its operators with libtorch as it loads, so it must be loaded with
 * RTLD_GLOBAL before the model is, and it stays loaded for the life of the process: closing a
 * library whose operators are registered would leave the registry pointing into unmapped code. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "api/session_internal.h"
#include "base/error.h"

int session_load_libraries(const char *const *libs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *path = libs[i];
        if (!path || !*path) return lp_error_set(LP_ERR_INVALID, "library %zu: empty path", i + 1);
        dlerror();
        if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) continue; /* never closed: see above */
        const char *why = dlerror();
        if (!why) why = "unknown error";
        /* glibc's message starts with the path: say it once */
        size_t len = strlen(path);
        if (!strncmp(why, path, len) && !strncmp(why + len, ": ", 2)) why += len + 2;
        return lp_error_set(LP_ERR_IO, "cannot load library '%s': %s", path, why);
    }
    return LP_OK;
}

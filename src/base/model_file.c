/* model_file.c: one clear reason for a model path that cannot be a model (model_file.h). */
#include "base/model_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "layerprof.h"

int lp_model_file_check(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return lp_error_set(LP_ERR_NOT_FOUND, "model '%s' does not exist", path);
        return lp_error_set(LP_ERR_IO, "cannot read model '%s': %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode))
        return lp_error_set(LP_ERR_INVALID,
                            "model '%s' is a directory: give the model file (a TorchScript .pt or "
                            "an AOTInductor .pt2 package)",
                            path);
    if (!S_ISREG(st.st_mode))
        return lp_error_set(LP_ERR_INVALID, "model '%s' is not a regular file", path);
    if (st.st_size == 0) return lp_error_set(LP_ERR_MODEL, "model '%s' is empty (0 bytes)", path);
    FILE *f = fopen(path, "rb");
    if (!f) return lp_error_set(LP_ERR_IO, "cannot read model '%s': %s", path, strerror(errno));
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    /* "PK\3\4": every zip archive's first local header, which torch.jit.save and
     * torch._inductor's packages both write first. */
    if (got < 4 || memcmp(magic, "PK\3\4", 4) != 0)
        return lp_error_set(LP_ERR_MODEL,
                            "'%s' is not a model: TorchScript files and AOTInductor packages are "
                            "zip archives, and this file is none",
                            path);
    return LP_OK;
}

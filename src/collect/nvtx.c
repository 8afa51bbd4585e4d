/* nvtx.c: NVTX ranges per module and op call. See nvtx.h. */
#include "collect/nvtx.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

#if LP_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

struct lp_nvtx {
    nvtxDomainHandle_t domain;
    nvtxStringHandle_t *names; /* per module node, registered once at open */
    size_t n_names;
};

int lp_nvtx_open(lp_nvtx **out, const lp_tree *t) {
    *out = NULL;
    lp_nvtx *n = calloc(1, sizeof *n);
    if (!n) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    n->domain = nvtxDomainCreateA("layerprof");
    n->n_names = t ? t->n_nodes : 0;
    n->names = calloc(n->n_names ? n->n_names : 1, sizeof *n->names);
    if (!n->names) {
        free(n);
        return lp_error_set(LP_ERR_NOMEM, "out of memory");
    }
    /* Built once here, never on the hot path: the root by its class, the rest by dotted path. */
    for (size_t i = 0; i < n->n_names; i++) {
        const lp_tree_node *node = &t->nodes[i];
        n->names[i] =
            nvtxDomainRegisterStringA(n->domain, node->parent < 0 ? node->name : node->path);
    }
    *out = n;
    return LP_OK;
}

void lp_nvtx_close(lp_nvtx *n) {
    if (!n) return;
    free(n->names);
    free(n);
}

void lp_nvtx_push(lp_nvtx *n, int32_t module, const char *op_name) {
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    if (module >= 0 && (size_t)module < n->n_names) {
        a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
        a.message.registered = n->names[module];
    } else {
        a.messageType = NVTX_MESSAGE_TYPE_ASCII;
        a.message.ascii = op_name ? op_name : "?";
    }
    nvtxDomainRangePushEx(n->domain, &a);
}

void lp_nvtx_pop(lp_nvtx *n) {
    nvtxDomainRangePop(n->domain);
}

#else /* !LP_HAVE_NVTX: open refuses, so nothing below is reached */

int lp_nvtx_open(lp_nvtx **out, const lp_tree *t) {
    (void)t;
    *out = NULL;
    return lp_error_set(LP_ERR_UNSUPPORTED, "NVTX ranges are not available: this build did not "
                                            "find the CUDA Toolkit's NVTX headers");
}
void lp_nvtx_close(lp_nvtx *n) {
    (void)n;
}
void lp_nvtx_push(lp_nvtx *n, int32_t module, const char *op_name) {
    (void)n, (void)module, (void)op_name;
}
void lp_nvtx_pop(lp_nvtx *n) {
    (void)n;
}

#endif

/* fake_cupti.c: a libcupti for test_cupti.c, loaded by src/collect/cupti.c through
 * LAYERPROF_CUPTI as it loads the real one. It keeps the rules of real CUPTI that layerprof's
 * tagging depends on, as measured on an H200 (CUPTI 2025.3.1):
 *  - every runtime or driver call gets a new correlation id; a runtime launch calls the driver
 *    inside it (its own id), and the kernel's record carries the outermost call's id;
 *  - a subscriber's callback runs on entry to and exit from a call only where it was enabled for
 *    that (domain, callback id);
 *  - an EXTERNAL_CORRELATION record is written only beside an API record: for a call whose API
 *    kind (RUNTIME or DRIVER) or whose own function (cuptiActivityEnableRuntimeApi/DriverApi) is
 *    enabled, and only while an external id is pushed on the calling thread;
 *  - kernel, memcpy and memset records only while their kinds are enabled;
 *  - one subscriber per process.
 * So removing what makes the tags (an API kind, a callback) leaves the kernels unattributed, and
 * test_cupti.c fails without a GPU. The test drives it through fake_cupti_* (dlsym). */
#include <cupti.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- what a test sets up and reads ----------------------------------------------------------- */

enum { FAKE_RUNTIME_KERNEL, FAKE_DRIVER_KERNEL, FAKE_RUNTIME_MEMCPY, FAKE_RUNTIME_OTHER };

/* Callback ids as this fake numbers them (cuptiGetCallbackName gives their names). */
enum { RT_GET_DEVICE = 1, RT_LAUNCH_KERNEL, RT_MEMCPY_ASYNC, RT_MEMSET_ASYNC, RT_N };
enum { DRV_CTX_GET_CURRENT = 1, DRV_LAUNCH_KERNEL, DRV_LAUNCH_KERNEL_EX, DRV_N };
static const char *const k_rt_names[RT_N] = {NULL, "cudaGetDevice_v3020", "cudaLaunchKernel_v7000",
                                             "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020"};
static const char *const k_drv_names[DRV_N] = {NULL, "cuCtxGetCurrent", "cuLaunchKernel",
                                               "cuLaunchKernelEx"};

#define SLOT 512 /* one record per slot of a buffer: larger than any record written here */
#define MAX_PENDING 4096

typedef union record {
    CUpti_Activity head;
    CUpti_ActivityKernel10 kernel;
    CUpti_ActivityMemcpy6 memcpy;
    CUpti_ActivityExternalCorrelation ext;
    uint8_t bytes[SLOT];
} record;

static struct {
    int subscribed, other_tool;
    CUpti_CallbackFunc callback;
    void *userdata;
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    uint8_t kinds[64];
    uint8_t rt_callback[RT_N], drv_callback[DRV_N];
    uint8_t rt_api[RT_N], drv_api[DRV_N];
    uint32_t next_correlation;
    uint64_t ext_stack[8][16]; /* per external kind; the tests launch from one thread */
    int ext_depth[8];
    record *pending;
    size_t n_pending;
    uint64_t callbacks_made, callbacks_on_other_calls;
} f;

void fake_cupti_reset(int other_tool) {
    free(f.pending);
    memset(&f, 0, sizeof f);
    f.other_tool = other_tool;
}

uint64_t fake_cupti_callbacks_made(void) {
    return f.callbacks_made;
}
uint64_t fake_cupti_callbacks_on_other_calls(void) {
    return f.callbacks_on_other_calls;
}

/* ---- records --------------------------------------------------------------------------------- */

static void deliver(void) {
    size_t done = 0;
    while (done < f.n_pending && f.request && f.complete) {
        uint8_t *buf = NULL;
        size_t size = 0, max = 0;
        f.request(&buf, &size, &max);
        if (!buf || size < SLOT) return;
        size_t n = 0;
        for (; done < f.n_pending && (n + 1) * SLOT <= size; n++, done++)
            memcpy(buf + n * SLOT, &f.pending[done], SLOT);
        f.complete(NULL, 0, buf, size, n * SLOT);
    }
    f.n_pending = 0;
}

static record *add(CUpti_ActivityKind kind) {
    if (!f.pending) f.pending = calloc(MAX_PENDING, sizeof *f.pending);
    if (f.n_pending == MAX_PENDING) deliver(); /* as CUPTI completes full buffers by itself */
    record *r = &f.pending[f.n_pending++];
    memset(r, 0, sizeof *r);
    r->head.kind = kind;
    return r;
}

/* One runtime or driver call: its callbacks, its API record's external correlations. */
static uint32_t api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int launches) {
    uint32_t corr = ++f.next_correlation;
    int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    int callback = runtime ? f.rt_callback[cbid] : f.drv_callback[cbid];
    if (f.subscribed && callback && f.callback) {
        CUpti_CallbackData d = {0};
        d.correlationId = corr;
        d.functionName = runtime ? k_rt_names[cbid] : k_drv_names[cbid];
        d.callbackSite = CUPTI_API_ENTER;
        f.callback(f.userdata, domain, cbid, &d);
        d.callbackSite = CUPTI_API_EXIT;
        f.callback(f.userdata, domain, cbid, &d);
        f.callbacks_made++;
        if (!launches) f.callbacks_on_other_calls++;
    }
    int api_record = runtime ? f.kinds[CUPTI_ACTIVITY_KIND_RUNTIME] || f.rt_api[cbid]
                             : f.kinds[CUPTI_ACTIVITY_KIND_DRIVER] || f.drv_api[cbid];
    if (api_record && f.kinds[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
        for (int k = 0; k < 8; k++)
            if (f.ext_depth[k]) {
                record *r = add(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
                r->ext.externalKind = (CUpti_ExternalCorrelationKind)k;
                r->ext.externalId = f.ext_stack[k][f.ext_depth[k] - 1];
                r->ext.correlationId = corr;
            }
    return corr;
}

/* A launch of `what`, which runs on the device over [start, end). */
void fake_cupti_launch(int what, uint64_t start, uint64_t end) {
    uint32_t corr;
    switch (what) {
    case FAKE_RUNTIME_KERNEL:
        corr = api_call(CUPTI_CB_DOMAIN_RUNTIME_API, RT_LAUNCH_KERNEL, 1);
        api_call(CUPTI_CB_DOMAIN_DRIVER_API, DRV_LAUNCH_KERNEL, 1); /* inside the runtime's */
        break;
    case FAKE_DRIVER_KERNEL: /* Triton's kernels, AOTInductor's: the driver alone */
        corr = api_call(CUPTI_CB_DOMAIN_DRIVER_API, DRV_LAUNCH_KERNEL_EX, 1);
        break;
    case FAKE_RUNTIME_MEMCPY:
        corr = api_call(CUPTI_CB_DOMAIN_RUNTIME_API, RT_MEMCPY_ASYNC, 1);
        break;
    default: /* a call that puts nothing on the device */
        api_call(CUPTI_CB_DOMAIN_RUNTIME_API, RT_GET_DEVICE, 0);
        api_call(CUPTI_CB_DOMAIN_DRIVER_API, DRV_CTX_GET_CURRENT, 0);
        return;
    }
    if (what == FAKE_RUNTIME_MEMCPY) {
        if (!f.kinds[CUPTI_ACTIVITY_KIND_MEMCPY]) return;
        record *r = add(CUPTI_ACTIVITY_KIND_MEMCPY);
        r->memcpy.start = start, r->memcpy.end = end, r->memcpy.correlationId = corr;
        return;
    }
    if (!f.kinds[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) return;
    record *r = add(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    r->kernel.start = start, r->kernel.end = end, r->kernel.correlationId = corr;
}

/* ---- the CUPTI functions layerprof calls ----------------------------------------------------- */

CUptiResult cuptiGetVersion(uint32_t *v) {
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiGetResultString(CUptiResult r, const char **s) {
    *s = r == CUPTI_SUCCESS ? "success" : "fake CUPTI error";
    return CUPTI_SUCCESS;
}
CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *userdata) {
    if (f.subscribed || f.other_tool) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    f.subscribed = 1, f.callback = cb, f.userdata = userdata;
    *h = (CUpti_SubscriberHandle)&f;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h) {
    (void)h;
    f.subscribed = 0;
    memset(f.rt_callback, 0, sizeof f.rt_callback);
    memset(f.drv_callback, 0, sizeof f.drv_callback);
    return CUPTI_SUCCESS;
}
CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    if (!f.subscribed || h != (CUpti_SubscriberHandle)&f) return CUPTI_ERROR_INVALID_PARAMETER;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < RT_N && cbid)
        f.rt_callback[cbid] = (uint8_t)enable;
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < DRV_N && cbid)
        f.drv_callback[cbid] = (uint8_t)enable;
    else
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid && cbid < RT_N)
        *name = k_rt_names[cbid];
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid && cbid < DRV_N)
        *name = k_drv_names[cbid];
    else
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
    f.request = request, f.complete = complete;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
    if ((unsigned)kind >= sizeof f.kinds) return CUPTI_ERROR_INVALID_KIND;
    f.kinds[kind] = 1;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
    if ((unsigned)kind >= sizeof f.kinds) return CUPTI_ERROR_INVALID_KIND;
    f.kinds[kind] = 0;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
    if (!cbid || cbid >= RT_N) return CUPTI_ERROR_INVALID_PARAMETER;
    f.rt_api[cbid] = enable;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
    if (!cbid || cbid >= DRV_N) return CUPTI_ERROR_INVALID_PARAMETER;
    f.drv_api[cbid] = enable;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    (void)flag;
    deliver();
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **r) {
    uint8_t *next = *r ? (uint8_t *)*r + SLOT : buffer;
    if (next + SLOT > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *r = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped) {
    (void)ctx, (void)stream;
    *dropped = 0;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                   uint64_t id) {
    if ((unsigned)kind >= 8 || f.ext_depth[kind] == 16) return CUPTI_ERROR_INVALID_PARAMETER;
    f.ext_stack[kind][f.ext_depth[kind]++] = id;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                  uint64_t *id) {
    if ((unsigned)kind >= 8 || f.ext_depth[kind] == 0) return CUPTI_ERROR_QUEUE_EMPTY;
    *id = f.ext_stack[kind][--f.ext_depth[kind]];
    return CUPTI_SUCCESS;
}

// cuda.cpp: the shim's CUDA parts: whether a CUDA device can be used, waiting for it, and the
// CUDA-events timer (the fallback when CUPTI cannot be had).
//
// torch::cuda::{is_available, device_count, synchronize} exist in every libtorch (CPU builds say
// no), so the check and the synchronisation build everywhere. The events timer needs the CUDA
// runtime and c10_cuda's current stream: it is built only against a CUDA libtorch (LPS_HAVE_CUDA,
// set by cmake/LpShimCuda.cmake). Version differences: none so far; the calls used here exist in
// libtorch 1.13 and 2.x alike.
//
// The CUDA runtime is reached through dlsym on the copy libtorch_cuda already loaded, never linked:
// a libcudart on our own link line (the toolkit's) could be found first and replace the wheel's
// newer one under libtorch. So no cudart symbol may be referenced directly here, and headers whose
// inline code calls cudart (c10/cuda/CUDAGuard.h, CUDAFunctions.h) stay out.
#include <torch/cuda.h>
#include <torch/version.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "shim_internal.hpp"

#ifndef LPS_HAVE_CUDA
#define LPS_HAVE_CUDA 0
#endif

#if LPS_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#endif

#define LPS_STR2(x) #x
#define LPS_STR(x) LPS_STR2(x)

namespace {

// "cuda" -> 0 with *index -1, "cuda:2" -> 0 with *index 2, anything else -> 1 (not CUDA).
int cuda_index(const char *device, int *index) {
    *index = -1;
    if (!device || std::strncmp(device, "cuda", 4) != 0) return 1;
    const char *p = device + 4;
    if (*p == ':') *index = std::atoi(p + 1);
    return 0;
}

#if LPS_HAVE_CUDA

// The runtime functions used, looked up once in the process's global scope.
struct Cudart {
    decltype(&::cudaGetDeviceCount) get_device_count = nullptr;
    decltype(&::cudaGetDevice) get_device = nullptr;
    decltype(&::cudaSetDevice) set_device = nullptr;
    decltype(&::cudaGetErrorString) error_string = nullptr;
    decltype(&::cudaGetLastError) last_error = nullptr;
    decltype(&::cudaEventCreateWithFlags) event_create = nullptr;
    decltype(&::cudaEventRecord) event_record = nullptr;
    decltype(&::cudaEventElapsedTime) elapsed = nullptr;
    decltype(&::cudaEventDestroy) event_destroy = nullptr;
    std::string missing; // the first symbol not found, "" when all are there
};

template <typename F> void find(F &slot, const char *name, std::string &missing) {
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p && missing.empty()) missing = name;
    std::memcpy(&slot, &p, sizeof p);
}

const Cudart &cudart() {
    static const Cudart c = [] {
        Cudart r;
        find(r.get_device_count, "cudaGetDeviceCount", r.missing);
        find(r.get_device, "cudaGetDevice", r.missing);
        find(r.set_device, "cudaSetDevice", r.missing);
        find(r.error_string, "cudaGetErrorString", r.missing);
        find(r.last_error, "cudaGetLastError", r.missing);
        find(r.event_create, "cudaEventCreateWithFlags", r.missing);
        find(r.event_record, "cudaEventRecord", r.missing);
        find(r.elapsed, "cudaEventElapsedTime", r.missing);
        find(r.event_destroy, "cudaEventDestroy", r.missing);
        return r;
    }();
    return c;
}

// Makes `device` current for the scope (events are created on the current device).
struct DeviceScope {
    int previous = -1;
    explicit DeviceScope(int device) {
        const Cudart &rt = cudart();
        if (rt.get_device(&previous) != cudaSuccess || previous == device) {
            previous = -1;
            rt.last_error();
        } else {
            rt.set_device(device);
        }
    }
    ~DeviceScope() {
        if (previous >= 0) cudart().set_device(previous);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;
};

// One timer per process, like the profiled model (profile.cpp's g_profiled). The hot path touches
// only preallocated storage, on the thread that began it.
constexpr size_t k_first_spans = 4096;
constexpr size_t k_max_spans = 1u << 20;
constexpr int k_max_depth = 1024;

// A recorded call: the raw facts the core turns into self times (lps_cuda_events_collect).
struct Span {
    uint64_t scope;
    int32_t parent; // innermost enclosing recorded span in this forward, -1 at the top
    bool closed;    // its end event was recorded (a forward that threw leaves spans open)
};

struct EventTimer {
    int device = 0;
    std::vector<cudaEvent_t> events; // 2 per span: start, end
    std::vector<Span> spans;         // capacity events.size() / 2
    size_t used = 0;
    // Per open call: the innermost recorded span at or below it (what a nested call names as its
    // parent, so an unrecorded call in between is skipped), and whether it is the call's own.
    std::array<int32_t, k_max_depth> stack{};
    std::array<bool, k_max_depth> own{};
    int depth = 0;
    uint64_t lost = 0; // calls not recorded: pool full, nested too deep, no stream
    bool full = false;
    std::string error;
};

EventTimer *g_timer = nullptr;
LP_THREAD_LOCAL bool t_timed = false; // this thread began the timer
std::atomic<uint64_t> g_other_threads{0};

bool add_events(EventTimer &t, size_t spans) {
    const Cudart &rt = cudart();
    DeviceScope scope(t.device);
    while (t.events.size() < 2 * spans) {
        cudaEvent_t e;
        cudaError_t rc = rt.event_create(&e, cudaEventDefault);
        if (rc != cudaSuccess) {
            rt.last_error();
            t.error = std::string("cannot create a CUDA event: ") + rt.error_string(rc);
            return false;
        }
        t.events.push_back(e);
    }
    t.spans.resize(t.events.size() / 2);
    return true;
}

void destroy(EventTimer *t) noexcept {
    if (!t) return;
    for (auto e : t->events)
        cudart().event_destroy(e);
    delete t;
}

#endif

} // namespace

extern "C" {

int lps_cuda_built(void) noexcept {
    return LPS_HAVE_CUDA;
}

int lps_cuda_check(const char *device) noexcept {
    int index;
    if (cuda_index(device, &index)) return LP_OK;
#if !LPS_HAVE_CUDA
    return lp_error_set(LP_ERR_UNSUPPORTED,
                        "CUDA is not available: layerprof was built against libtorch %s "
                        "without CUDA support (build it against a CUDA libtorch, such as the "
                        "pip wheel's)",
                        lps_torch_version());
#else
    return lps::guard([&]() -> int {
        // libtorch decides; the runtime only explains a "no".
        int n = static_cast<int>(torch::cuda::device_count());
        if (n <= 0) {
            const Cudart &rt = cudart();
            int count = 0;
            cudaError_t rc = rt.missing.empty() ? rt.get_device_count(&count) : cudaSuccess;
            if (rc != cudaSuccess) {
                rt.last_error();
                return lp_error_set(LP_ERR_UNSUPPORTED, "CUDA is not available: %s",
                                    rt.error_string(rc));
            }
            return lp_error_set(LP_ERR_UNSUPPORTED,
                                "CUDA is not available: no CUDA device is visible to this "
                                "process");
        }
        if (index >= n) {
            std::string last = n == 1 ? "" : " to cuda:" + std::to_string(n - 1);
            return lp_error_set(LP_ERR_UNSUPPORTED,
                                "CUDA is not available: %s asked for, but only %d CUDA "
                                "device%s visible (cuda:0%s)",
                                device, n, n == 1 ? " is" : "s are", last.c_str());
        }
        return LP_OK;
    });
#endif
}

int lps_device_synchronize(lps_model *m) noexcept {
    if (!m) return lp_error_set(LP_ERR_INVALID, "lps_device_synchronize: NULL model");
    if (!m->device.is_cuda()) return LP_OK;
    return lps::guard([&]() -> int {
        torch::cuda::synchronize(m->device.has_index() ? m->device.index() : -1);
        return LP_OK;
    });
}

#if LPS_HAVE_CUDA

int lps_cuda_events_begin(void *ctx) noexcept {
    auto *m = static_cast<lps_model *>(ctx);
    if (!m || !m->device.is_cuda())
        return lp_error_set(LP_ERR_INVALID, "the model is not on a CUDA device");
    if (g_timer) return lp_error_set(LP_ERR_BUSY, "the timer is already in use");
    return lps::guard([&]() -> int {
        if (!cudart().missing.empty())
            return lp_error_set(LP_ERR_UNSUPPORTED, "the CUDA runtime has no %s",
                                cudart().missing.c_str());
        std::unique_ptr<EventTimer, void (*)(EventTimer *)> t(new EventTimer(), destroy);
        t->device = 0;
        if (m->device.has_index())
            t->device = m->device.index();
        else if (cudart().get_device(&t->device) != cudaSuccess)
            cudart().last_error();
        if (!add_events(*t, k_first_spans))
            return lp_error_set(LP_ERR_RUNTIME, "%s", t->error.c_str());
        g_timer = t.release();
        t_timed = true;
        return LP_OK;
    });
}

// The stream the next kernels of this thread go to, or false (an exception from c10_cuda: the
// call is then not timed rather than unwinding through the collector's C frames).
static bool current_stream(const EventTimer &t, cudaStream_t *out) noexcept {
    try {
        *out = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(t.device));
        return true;
    } catch (...) {
        return false;
    }
}

void lps_cuda_events_push(void *, uint64_t scope) noexcept {
    EventTimer *t = g_timer;
    if (!t) return;
    if (!t_timed) {
        g_other_threads.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    int d = t->depth++;
    if (d >= k_max_depth) {
        t->lost++;
        return;
    }
    int32_t parent = d > 0 ? t->stack[d - 1] : -1;
    cudaStream_t s;
    if (t->used == t->spans.size() || !current_stream(*t, &s)) {
        t->stack[d] = parent;
        t->own[d] = false;
        t->lost++;
        if (t->used == t->spans.size()) t->full = true;
        return;
    }
    int32_t i = static_cast<int32_t>(t->used++);
    t->spans[i] = {scope, parent, false};
    t->stack[d] = i;
    t->own[d] = true;
    // A failed record would stay the runtime's last error, where libtorch's own launch check
    // would find it and throw in the model: clear it (the span then reads as unreadable).
    if (cudart().event_record(t->events[2 * i], s) != cudaSuccess) cudart().last_error();
}

void lps_cuda_events_pop(void *, uint64_t) noexcept {
    EventTimer *t = g_timer;
    if (!t || !t_timed || t->depth == 0) return;
    int d = --t->depth;
    if (d >= k_max_depth || !t->own[d]) return;
    int32_t i = t->stack[d];
    cudaStream_t s;
    if (!current_stream(*t, &s)) return;
    if (cudart().event_record(t->events[2 * i + 1], s) == cudaSuccess)
        t->spans[i].closed = true;
    else
        cudart().last_error();
}

int lps_cuda_events_collect(void *, void (*span)(void *, uint64_t, int32_t, int64_t),
                            void *span_ctx, uint64_t *lost) noexcept {
    EventTimer *t = g_timer;
    *lost = 0;
    if (!t) return LP_OK;
    return lps::guard([&]() -> int {
        const Cudart &rt = cudart();
        DeviceScope scope(t->device);
        for (size_t i = 0; i < t->used; i++) {
            const Span &sp = t->spans[i];
            float ms = 0;
            int64_t ns = -1; // could not be read: the core counts it
            if (sp.closed) {
                cudaError_t rc = rt.elapsed(&ms, t->events[2 * i], t->events[2 * i + 1]);
                if (rc == cudaSuccess)
                    ns = ms > 0 ? static_cast<int64_t>(std::llround(ms * 1e6)) : 0;
                else
                    rt.last_error();
            }
            span(span_ctx, sp.scope, sp.parent, ns);
        }
        t->used = 0;
        t->depth = 0;
        *lost = t->lost + g_other_threads.exchange(0);
        t->lost = 0;
        // Grow between forwards, never on the hot path.
        if (t->full && t->spans.size() < k_max_spans) {
            t->full = false;
            if (!add_events(*t, std::min(k_max_spans, t->spans.size() * 2)))
                return lp_error_set(LP_ERR_RUNTIME, "%s", t->error.c_str());
        }
        return LP_OK;
    });
}

void lps_cuda_events_end(void *) noexcept {
    EventTimer *t = g_timer;
    g_timer = nullptr;
    t_timed = false;
    destroy(t);
}

#else // !LPS_HAVE_CUDA: the timer does not exist; lps_cuda_built() says so.

int lps_cuda_events_begin(void *) noexcept {
    return lp_error_set(LP_ERR_UNSUPPORTED, "libtorch " LPS_STR(TORCH_VERSION_MAJOR) "." LPS_STR(
                                                TORCH_VERSION_MINOR) " was built without CUDA");
}
void lps_cuda_events_push(void *, uint64_t) noexcept {}
void lps_cuda_events_pop(void *, uint64_t) noexcept {}
int lps_cuda_events_collect(void *, void (*)(void *, uint64_t, int32_t, int64_t), void *,
                            uint64_t *lost) noexcept {
    *lost = 0;
    return LP_OK;
}
void lps_cuda_events_end(void *) noexcept {}

#endif

} // extern "C"

namespace lps {

int attach_device(const char *device, c10::Device *out) noexcept {
    try {
        *out = c10::Device(device && *device ? device : "cpu");
    } catch (...) {
        return lp_error_set(LP_ERR_INVALID, "unknown device '%s'", device);
    }
    return LP_OK;
}

} // namespace lps

// aoti_rebind.cpp: a package's kernel boundaries seen without a RecordFunction callback
// (docs/pt2.md, "What profiling a package costs").
//
// A package compiled with cpp.enable_kernel_profile calls libtorch's C functions
// aoti_record_function_start and aoti_record_function_end (torch/csrc/inductor/aoti_torch/c/shim.h)
// around every kernel. Those build a RecordFunction in RecordScope::FUNCTION, the scope every ATen
// op is recorded in too, so a callback that sees the kernels also makes libtorch build a record
// for every op inside an extern kernel: most of what profiling a small package cost. Here instead
// the package library's own import slots for those two functions (its GOT entries, filled by the
// dynamic linker when libtorch loaded the library) are pointed at the two wrappers below. They call
// libtorch's functions as before and tell aoti.cpp where each kernel starts and ends. Nothing else
// changes: libtorch and every other library keep their own slots, and libtorch builds the same
// records, so another profiler still sees them. Where the slots cannot be found (another ELF
// platform, a package without kernel profiling), nothing is changed and aoti.cpp uses its callback.
#include "aoti_pt2.hpp"

#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2 && defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define LPS_REBIND 1
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#endif

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <set>
#include <string>
#include <vector>

namespace lps {

#ifdef LPS_REBIND

namespace {

#if defined(__x86_64__)
constexpr uint32_t k_jump_slot = R_X86_64_JUMP_SLOT, k_glob_dat = R_X86_64_GLOB_DAT;
#else
constexpr uint32_t k_jump_slot = R_AARCH64_JUMP_SLOT, k_glob_dat = R_AARCH64_GLOB_DAT;
#endif

// The wrappers call libtorch's functions by name, never what the slot held before: with lazy
// binding that is the package's own PLT stub, whose resolver would write libtorch's address over
// the wrapper. What the slot held is kept only to be put back (pt2_unbind).
// What the wrappers call besides libtorch's (pt2_imports_observe): nullptr while no package is
// profiled through its imports.
using StartHook = void (*)(const char *) noexcept;
using EndHook = void (*)() noexcept;
std::atomic<StartHook> g_on_start{nullptr};
std::atomic<EndHook> g_on_end{nullptr};

AOTITorchError start_wrapper(const char *name, IValueMapHandle kwargs,
                             const C10IValueHandle *inputs, const uint64_t n_inputs,
                             AtenRecordFunctionHandle *guard) {
    AOTITorchError rc = aoti_record_function_start(name, kwargs, inputs, n_inputs, guard);
    // After libtorch's own record: its cost is not the kernel's.
    if (StartHook f = g_on_start.load(std::memory_order_relaxed)) f(name);
    return rc;
}

AOTITorchError end_wrapper(AtenRecordFunctionHandle guard) {
    if (EndHook f = g_on_end.load(std::memory_order_relaxed)) f();
    return aoti_record_function_end(guard);
}

constexpr const char k_start[] = "aoti_record_function_start";
constexpr const char k_end[] = "aoti_record_function_end";

struct Scan {
    const RebindTarget *which;
    std::vector<void **> starts, ends;                   // the import slots found
    std::vector<std::pair<uintptr_t, uintptr_t>> relro;  // read-only after relocation
    std::vector<std::pair<uintptr_t, uintptr_t>> mapped; // loaded segments (pt2_unbind)
};

// The object's dynamic section entries are relocated in place by glibc's loader on these
// platforms; a value below the load address is still an offset.
uintptr_t dyn_ptr(const dl_phdr_info *info, ElfW(Addr) p) {
    return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

void scan_relocs(const dl_phdr_info *info, const ElfW(Rela) * rel, size_t bytes,
                 const ElfW(Sym) * symtab, const char *strtab, Scan &scan) {
    for (size_t i = 0; rel && i < bytes / sizeof(ElfW(Rela)); i++) {
        uint32_t type = ELF64_R_TYPE(rel[i].r_info);
        if (type != k_jump_slot && type != k_glob_dat) continue;
        const char *name = strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
        void **slot = reinterpret_cast<void **>(info->dlpi_addr + rel[i].r_offset);
        if (std::strcmp(name, k_start) == 0) scan.starts.push_back(slot);
        if (std::strcmp(name, k_end) == 0) scan.ends.push_back(slot);
    }
}

void visit(dl_phdr_info *info, Scan &scan) {
    if (!info->dlpi_name || !*info->dlpi_name || !scan.which->matches(info->dlpi_name)) return;
    const ElfW(Dyn) *dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_DYNAMIC)
            dyn = reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + ph.p_vaddr);
        if (ph.p_type == PT_GNU_RELRO)
            scan.relro.emplace_back(info->dlpi_addr + ph.p_vaddr,
                                    info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    if (!dyn) return;
    const ElfW(Sym) *symtab = nullptr;
    const char *strtab = nullptr;
    const ElfW(Rela) *jmprel = nullptr, *rela = nullptr;
    size_t jmprel_bytes = 0, rela_bytes = 0;
    bool pltrel_is_rela = true;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            symtab = reinterpret_cast<const ElfW(Sym) *>(dyn_ptr(info, d->d_un.d_ptr));
            break;
        case DT_STRTAB:
            strtab = reinterpret_cast<const char *>(dyn_ptr(info, d->d_un.d_ptr));
            break;
        case DT_JMPREL:
            jmprel = reinterpret_cast<const ElfW(Rela) *>(dyn_ptr(info, d->d_un.d_ptr));
            break;
        case DT_PLTRELSZ:
            jmprel_bytes = d->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel_is_rela = d->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            rela = reinterpret_cast<const ElfW(Rela) *>(dyn_ptr(info, d->d_un.d_ptr));
            break;
        case DT_RELASZ:
            rela_bytes = d->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab || !pltrel_is_rela) return;
    scan_relocs(info, jmprel, jmprel_bytes, symtab, strtab, scan);
    scan_relocs(info, rela, rela_bytes, symtab, strtab, scan);
}

void collect_segments(dl_phdr_info *info, Scan &scan) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        auto range =
            std::make_pair(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        if (ph.p_type == PT_GNU_RELRO) scan.relro.push_back(range);
        if (ph.p_type == PT_LOAD) scan.mapped.push_back(range);
    }
}

// Calls fn(info) for every loaded object. dl_iterate_phdr runs its callback inside glibc with the
// loader's lock held: an exception (the vectors' bad_alloc) must not unwind through it. The
// callback catches it and stops the walk, and it is thrown again here, outside glibc.
template <typename Fn> void for_each_object(Fn fn) {
    struct Walk {
        Fn *fn;
        std::exception_ptr error;
    } walk{&fn, nullptr};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) -> int {
            Walk &w = *static_cast<Walk *>(data);
            try {
                (*w.fn)(info);
                return 0;
            } catch (...) {
                w.error = std::current_exception();
                return 1;
            }
        },
        &walk);
    if (walk.error) std::rethrow_exception(walk.error);
}

// Writes `value` into `slot`, lifting RELRO's read-only protection around the write.
bool write_slot(void **slot, void *value, const Scan &scan) {
    uintptr_t at = reinterpret_cast<uintptr_t>(slot);
    bool read_only = false;
    for (const auto &r : scan.relro)
        read_only |= at >= r.first && at < r.second;
    if (!read_only) {
        *slot = value;
        return true;
    }
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    void *base = reinterpret_cast<void *>(at & ~(page - 1));
    if (mprotect(base, page, PROT_READ | PROT_WRITE) != 0) return false;
    *slot = value;
    mprotect(base, page, PROT_READ);
    return true;
}

} // namespace

bool RebindTarget::matches(const char *path) const {
    if (before) return before->count(path) == 0;
    size_t n = std::strlen(path);
    return !suffix.empty() && n > suffix.size() && path[n - suffix.size() - 1] == '/' &&
           std::strcmp(path + n - suffix.size(), suffix.c_str()) == 0;
}

std::set<std::string> loaded_objects() {
    std::set<std::string> names;
    for_each_object([&](dl_phdr_info *info) {
        if (info->dlpi_name) names.insert(info->dlpi_name);
    });
    return names;
}

int pt2_rebind(const RebindTarget &which, std::vector<ReboundSlot> *slots) {
    Scan scan{&which, {}, {}, {}, {}};
    for_each_object([&](dl_phdr_info *info) { visit(info, scan); });
    if (scan.starts.empty() || scan.ends.empty()) return 0; // no kernel profiling in it
    std::vector<ReboundSlot> done; // reserved: a slot written is always recorded, to be put back
    done.reserve(scan.starts.size() + scan.ends.size());
    bool ok = true;
    for (size_t i = 0; ok && i < scan.starts.size() + scan.ends.size(); i++) {
        bool start = i < scan.starts.size();
        void **slot = start ? scan.starts[i] : scan.ends[i - scan.starts.size()];
        void *wrapper = start ? reinterpret_cast<void *>(&start_wrapper)
                              : reinterpret_cast<void *>(&end_wrapper);
        void *found = *slot;
        if (found == wrapper) continue; // already ours (a second session on the same library)
        ok = write_slot(slot, wrapper, scan);
        if (ok) done.push_back({slot, found});
    }
    if (!ok) { // put back what was changed: the callbacks then see every kernel
        pt2_unbind(done);
        return 0;
    }
    int n = static_cast<int>(scan.starts.size() + scan.ends.size());
    if (slots) *slots = std::move(done);
    return n;
}

void pt2_unbind(const std::vector<ReboundSlot> &slots) noexcept {
    if (slots.empty()) return;
    Scan scan{nullptr, {}, {}, {}, {}};
    try {
        for_each_object([&](dl_phdr_info *info) { collect_segments(info, scan); });
    } catch (...) { // out of memory: the slots keep the wrappers, which only pass through
        return;
    }
    for (const ReboundSlot &s : slots) {
        // A library unloaded since (its loader destroyed before the session closed) is skipped.
        uintptr_t at = reinterpret_cast<uintptr_t>(s.slot);
        bool mapped = false;
        for (const auto &r : scan.mapped)
            mapped |= at >= r.first && at + sizeof(void *) <= r.second;
        if (!mapped) continue;
        // Only our own wrapper is replaced: a slot someone rebound after us stays theirs.
        void *now = *s.slot;
        if (now == reinterpret_cast<void *>(&start_wrapper) ||
            now == reinterpret_cast<void *>(&end_wrapper))
            write_slot(s.slot, s.found, scan);
    }
}

void pt2_imports_observe(void (*on_start)(const char *) noexcept,
                         void (*on_end)() noexcept) noexcept {
    // The end hook first on the way in and last on the way out: a kernel whose start was seen
    // always has its end seen.
    if (on_start) {
        g_on_end.store(on_end);
        g_on_start.store(on_start);
    } else {
        g_on_start.store(nullptr);
        g_on_end.store(nullptr);
    }
}

#else

void pt2_imports_observe(void (*)(const char *) noexcept, void (*)() noexcept) noexcept {}

bool RebindTarget::matches(const char *) const {
    return false;
}
std::set<std::string> loaded_objects() {
    return {};
}
int pt2_rebind(const RebindTarget &, std::vector<ReboundSlot> *) {
    return -1;
}
void pt2_unbind(const std::vector<ReboundSlot> &) noexcept {}

#endif

} // namespace lps

/* thread_local.h: how liblayerprof's thread-locals are declared (also used by the C++ shim).
 *
 * In a shared library a thread-local in the default ("general dynamic") model costs a call to
 * __tls_get_addr at every use: four to six per marked module call, 2.1% of the instructions of a
 * pat_loops forward through the CLI (bench/results/2026-11-28-thread-locals.md). The "initial-exec"
 * model reads it at a fixed offset from the thread pointer instead, and marks the library
 * STATIC_TLS: its whole thread-local segment is then placed in the static TLS block, also when a
 * program dlopens the library after start (a plugin, Python's ctypes), where glibc has only a small
 * surplus (about 1.5 KB, shared with every such library). So every thread-local of the library is
 * small, in this model, and anything bigger lives in a per-thread block on the heap
 * (thread_block.h). integration.dlopen checks the segment's size and the dlopen. */
#ifndef LP_THREAD_LOCAL_H
#define LP_THREAD_LOCAL_H

/* The size integration.dlopen holds the library's thread-local segment to. */
#define LP_TLS_SEGMENT_MAX 512

#if defined(__GNUC__)
#define LP_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define LP_TLS_MODEL
#endif

#ifdef __cplusplus
#define LP_THREAD_LOCAL thread_local LP_TLS_MODEL
#else
#define LP_THREAD_LOCAL _Thread_local LP_TLS_MODEL
#endif

#endif

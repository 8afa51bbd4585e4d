/* thread_block.h: a block of memory per thread, for per-thread state too big for the library's
 * thread-local segment (thread_local.h). Allocated zeroed on the thread's first ask and freed when
 * the thread exits (not the main thread's: exit() runs no key destructors, and the process ends).
 * The caller keeps the pointer in a small thread-local of its own, so the ask is made once per
 * thread; `forget` clears that pointer as the block is freed (on the exiting thread, after its C++
 * thread-local destructors), so nothing that runs later on it can reach the block. Something that
 * does ask again then (another library's key destructor calling in) gets a new block, freed in
 * glibc's next round of destructors, or never after its fourth. */
#ifndef LP_THREAD_BLOCK_H
#define LP_THREAD_BLOCK_H

#include <pthread.h>
#include <stddef.h>

#ifdef __cplusplus
#include <atomic>
typedef std::atomic<int> lp_thread_block_state;
extern "C" {
#else
#include <stdatomic.h>
typedef _Atomic int lp_thread_block_state;
#endif

/* One struct for both languages: the two atomics must be laid out as a plain int. */
#ifdef __cplusplus
static_assert(sizeof(lp_thread_block_state) == sizeof(int) &&
                  alignof(lp_thread_block_state) == alignof(int) &&
                  lp_thread_block_state::is_always_lock_free,
              "std::atomic<int> is not laid out as C's _Atomic int");
#else
_Static_assert(sizeof(lp_thread_block_state) == sizeof(int) &&
                   _Alignof(lp_thread_block_state) == _Alignof(int),
               "_Atomic int is not laid out as an int");
#endif

typedef struct lp_thread_block {
    size_t size;
    void (*forget)(void);
    lp_thread_block_state state; /* 0: no key yet, 1: being made, 2: made, 3: could not be made */
    pthread_key_t key;           /* its destructor frees the thread's block */
} lp_thread_block;

/* The calling thread's block of `b`, allocated on its first call; NULL when there is no memory
 * for it (the caller then does without, and may ask again), or when the process could make no
 * pthread key for `b` (its 1,024 are taken: then always NULL). */
void *lp_thread_block_get(lp_thread_block *b);

#ifdef __cplusplus
}
#endif

#endif

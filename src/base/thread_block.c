/* thread_block.c: per-thread heap blocks, freed by a pthread key's destructor at thread exit. */
#include "base/thread_block.h"

#include <sched.h>
#include <stdalign.h>
#include <stdlib.h>

/* Each block starts with its owner, for the destructor; the caller's part follows, aligned for
 * anything. */
typedef struct block_head {
    alignas(max_align_t) lp_thread_block *owner;
} block_head;

static void block_free(void *p) {
    block_head *h = p;
    if (h->owner->forget) h->owner->forget();
    free(h);
}

/* The key is made on the first ask of any thread: the others wait the few instructions it takes. */
static int key_ready(lp_thread_block *b) {
    int state = atomic_load_explicit(&b->state, memory_order_acquire);
    if (state == 2) return 1;
    if (state == 0 && atomic_compare_exchange_strong(&b->state, &state, 1)) {
        state = pthread_key_create(&b->key, block_free) == 0 ? 2 : 3;
        atomic_store_explicit(&b->state, state, memory_order_release);
        return state == 2;
    }
    while ((state = atomic_load_explicit(&b->state, memory_order_acquire)) == 1)
        sched_yield();
    return state == 2;
}

void *lp_thread_block_get(lp_thread_block *b) {
    if (!key_ready(b)) return NULL;
    block_head *h = pthread_getspecific(b->key);
    if (!h) {
        h = calloc(1, sizeof *h + b->size);
        if (!h) return NULL;
        h->owner = b;
        if (pthread_setspecific(b->key, h) != 0) {
            free(h);
            return NULL;
        }
    }
    return h + 1;
}

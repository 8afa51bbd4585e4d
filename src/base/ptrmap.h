/* ptrmap.h: live allocations, pointer -> who allocated it. Open addressing with linear probing and
 * backward-shift deletion (no tombstones), so lookups stay short however many frees happen. */
#ifndef LP_PTRMAP_H
#define LP_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct lp_alloc_rec {
    uintptr_t ptr; /* 0 = empty slot */
    int64_t bytes;
    uint64_t owner_serial;             /* frame (call) that allocated it */
    uint64_t module_serial;            /* nearest module frame at allocation */
    int16_t owner_depth, module_depth; /* frames whose self_live it raised, -1 none (< 512) */
    int32_t device;
    int32_t pkg_module;   /* a package's module it is charged to (collect/pkg_memory.h), -1 */
    uint32_t pkg_forward; /* the package forward that allocated it (lp_pkg_mem.forward), 0 */
} lp_alloc_rec;

typedef struct lp_ptrmap {
    lp_alloc_rec *slots;
    size_t cap; /* power of two */
    size_t count;
} lp_ptrmap;

int lp_ptrmap_init(lp_ptrmap *m, size_t initial_cap);
void lp_ptrmap_free(lp_ptrmap *m);
void lp_ptrmap_clear(lp_ptrmap *m);
/* Inserts or replaces. Grows (allocates) only when half full: rare once a run is warm. Returns -1
 * when out of memory or when rec->ptr is 0 (the empty-slot marker, never a key). */
int lp_ptrmap_put(lp_ptrmap *m, const lp_alloc_rec *rec);
/* Removes the record for `ptr` into *out. Returns 1 if it was there. */
int lp_ptrmap_take(lp_ptrmap *m, uintptr_t ptr, lp_alloc_rec *out);

#endif

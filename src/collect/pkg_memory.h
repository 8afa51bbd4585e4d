/* pkg_memory.h: memory per module for AOTInductor packages, one forward at a time.
 *
 * A package's modules have no calls the allocations could happen inside: its wrapper allocates a
 * buffer, runs the kernel that writes it, and frees the buffers whose last use has passed, all
 * between kernels; only extern kernels (ATen ops) allocate inside their own frame. The shim tells
 * the collector, at the start of a forward, at each kernel's start (its own module, for both) and
 * after each kernel, which module the wrapper's allocations go to now (the next kernel's: the
 * buffer's producer, from the package's module map) and which its frees go to (the kernel that
 * ran last). An
 * allocation or free inside a kernel is its module's. This table adds them up per module over the
 * whole forward, the union of the module's kernels standing for its call:
 *
 *   allocation of b by M: live, net and peak of M and each ancestor rise; M's self_live rises.
 *   free of b by F, allocated by O: net of F and each ancestor falls; live falls for those that
 *     are also O or above it (the block was allocated and freed inside their "call"); O's
 *     self_live falls when F is O or below it.
 *
 * So a module's live bytes are those allocated for its subtree's kernels and not freed by them:
 * a block another module's kernel frees stays in them even when that happens before the module's
 * last kernel (interleaved kernels), and retained and peak count it (docs/pt2.md). A block of an
 * earlier forward (lp_alloc_rec.pkg_forward) is foreign: its free lowers net only.
 *
 * The package's root is no entry here: it is a real call frame, with the frames' own accounting.
 * The arrays are made on the thread's first package forward (lp_ev_pkg_memory_to), never for a
 * TorchScript session, and nothing is allocated per event; that one allocation is timed in the
 * root of the first forward the thread profiles. */
#ifndef LP_PKG_MEMORY_H
#define LP_PKG_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "model/tree.h"

typedef struct lp_pkg_span {
    int64_t live, self_live, peak, net;
} lp_pkg_span;

typedef struct lp_pkg_mem {
    lp_pkg_span *span; /* n_nodes * LP_DEV_COUNT: this forward's figures, [node * DEV + dev] */
    uint64_t *calls;   /* per node: the calls the export gave for this forward (add_calls) */
    int32_t *touched;  /* nodes with figures in this forward, first touched first */
    uint8_t *is_touched;
    size_t n_nodes, n_touched;
    /* The package forward's root frame (0: none open), and where the wrapper's memory goes now. */
    uint64_t root_serial;
    uint32_t forward; /* counts the package forwards (never 0 once one began): a block's tag */
    int32_t root_depth, root_node;
    int32_t alloc_module, free_module; /* a module node, or the root's: the frames' accounting */
} lp_pkg_mem;

/* The arrays for `n_nodes` modules; 0, or -1 out of memory. */
int lp_pkg_mem_init(lp_pkg_mem *p, size_t n_nodes);
void lp_pkg_mem_release(lp_pkg_mem *p);
/* Forgets this forward's figures and ends it (root_serial 0): after a flush, or an abort. */
void lp_pkg_mem_clear(lp_pkg_mem *p);

/* `bytes` (> 0) allocated by `module` on `dev`. */
void lp_pkg_mem_alloc(lp_pkg_mem *p, const lp_tree *t, int32_t module, int64_t bytes, int dev);
/* `bytes` (> 0) freed by `module` on `dev`; `owner` the module that allocated them in this
 * forward, or -1 (allocated before it, by the root, or unseen). */
void lp_pkg_mem_free(lp_pkg_mem *p, const lp_tree *t, int32_t module, int32_t owner, int64_t bytes,
                     int dev);

/* `n` calls of `module` in this forward, as the export counted them: its figures are split between
 * them, and a module called with no memory of its own gets its samples of 0, as a call does. */
void lp_pkg_mem_calls(lp_pkg_mem *p, int32_t module, uint64_t n);
/* Adds this forward's figures of each touched module that is measured (it or an ancestor has
 * `measured_root` set) into figs[module]:
 * as many samples as the calls the export gave it (at least one), retained, self retained and net
 * split evenly between them (their sum is the forward's), the peak the forward's in each (the
 * calls of a package are not apart: docs/pt2.md). Then clears, ending the forward. */
void lp_pkg_mem_flush(lp_pkg_mem *p, const lp_tree *t, lp_figures *figs,
                      const uint8_t *measured_root, unsigned devices);

#endif

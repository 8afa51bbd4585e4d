/* callstack.h: the module an op of the optimised graph runs in, from its call stack (graph mode).
 *
 * With TorchScript's optimizer on, submodule calls are inlined: there are no frame events, but an
 * op knows the chain of calls that led to it (libtorch's currentModuleHierarchy(), see
 * docs/libtorch.md). The shim only turns that chain into plain frames, outermost first; the
 * decision of which module they name is made here, against the module tree, so it is plain C and
 * unit-tested. For "TOP(Net)::forward", "block(Block)::forward", "SELF(Block)::_mix",
 * "proj(Conv2d)::forward" the frames are
 *     {TOP, Net, forward} {block, Block, forward} {SELF, Block, _mix} {proj, Conv2d, forward}
 * and the module is "block.proj". A free function ("::relu") is a frame with no instance. */
#ifndef LP_CALLSTACK_H
#define LP_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "model/tree.h"

/* One frame, as text borrowed from the caller for the duration of the call; not NUL-terminated.
 * The class name is carried (but not used yet) for stacks whose instance names alone are
 * ambiguous: elements of two containers under one parent ("fpn.inner_blocks.0" and
 * "fpn.layer_blocks.0" are both "0(Conv2d)"). */
typedef struct lp_callstack_frame {
    const char *instance; /* the attribute the caller called it through ("block", "0"); "TOP" for
                             the root, "SELF" for a method of the module already on top, empty for
                             a free function */
    size_t instance_len;
    const char *class_name; /* short class name ("Block"); may be empty */
    size_t class_len;
    const char *method; /* "forward", "_mix", or "<forked function>" for a torch.jit.fork task */
    size_t method_len;
} lp_callstack_frame;

/* The method name of the first frame of a torch.jit.fork task's stack. */
#define LP_CALLSTACK_FORKED "<forked function>"

/* The module (a node of `t`) that the innermost frame of `frames` (outermost first) runs in.
 *
 * Walks down from the root one instance name at a time: TOP, SELF and free functions stay on the
 * module reached so far; any other name is a child of it, or, since compiled code indexes
 * containers (`getattr(self.layers, "0")`) and the stack names only the element, a child of one
 * of its children that has no forward (ModuleList, ModuleDict). A name that is neither stops the
 * walk at the closest enclosing module found.
 *
 * A fork task's stack starts at the forked function ("TOP(Branch)::<forked function>"), so its
 * names are relative to the module the task was forked on: `fork_base`, when the first frame is
 * such a function and `fork_base` is a node of `t`; otherwise (-1 included) the root. Returns 0
 * (the root) when nothing below it matches, -1 only for an empty tree. */
int32_t lp_callstack_resolve(const lp_tree *t, const lp_callstack_frame *frames, size_t n,
                             int32_t fork_base);

#endif

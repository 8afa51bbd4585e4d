// markers.cpp: the markers mode. Exact module calls on the optimised graph.
//
// TorchScript's optimizer inlines every submodule call into one graph, so a running optimised model
// has no module boundaries left to hook (docs/libtorch.md). Before the first run, this file puts
// two instructions around every submodule call site of every method graph:
//
//     layerprof::enter(%submodule)    (layerprof::method(%submodule) for a method other than
//     forward) %out = prim::CallMethod[name="forward"](%submodule, ...) layerprof::exit(%submodule)
//
// The optimizer then inlines the call between them. They are JIT operators, which the interpreter
// runs as plain instructions: no dispatcher, so no RecordFunction fires for them, and modules-only
// profiling needs no per-op callback at all.
//
// What the optimizer may do with them follows from their schema: each one *writes* its module
// object (`Any(a!) self`, FROM_SCHEMA alias analysis). That object is reachable from the graph's
// `self` input, so dead-code elimination keeps every marker; the module's own ops read its
// parameters through that object, so they stay between its enter and exit; and a module's markers
// keep their order. Ops that touch nothing of the module (a slice of an activation) remain free
// for CSE as in the plain optimised model. CONSERVATIVE alias analysis, tried first, made each
// marker a barrier for everything: CSE could not merge the loop-invariant slices and attribute
// reads of lstm_cell's unrolled loop (802 ops per forward against 770 unmarked, 1.068x unprofiled;
// with the write annotation 770 ops, 1.013x). integration.markers checks the census.
// The module is known from the object the instruction is given, as in hooks mode: TorchScript
// shares one compiled method between modules of the same type, so a call site names its callee
// only at run time.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "shim_internal.hpp"

namespace {

const c10::Symbol k_enter = c10::Symbol::fromQualString("layerprof::enter");
const c10::Symbol k_method = c10::Symbol::fromQualString("layerprof::method");
const c10::Symbol k_exit = c10::Symbol::fromQualString("layerprof::exit");
// An exit that also takes the call's output (the out_shape column): only then, since the output
// gains a use, which the plain markers do not give the optimizer.
const c10::Symbol k_exit_out = c10::Symbol::fromQualString("layerprof::exit_out");

// enter (call: a forward), method (another method) and exit: each takes its module object,
// which it is declared to write (see the top of this file), and pops it.
enum class Mark { call, method, exit, exit_out };
torch::jit::Operator marker_op(const char *schema, Mark mark) {
    return torch::jit::Operator(
        schema,
        [mark](torch::jit::Stack &stack) {
            if (mark == Mark::exit_out) {
                lps::marker_exit_out(stack.back());
                stack.pop_back();
            } else if (mark == Mark::exit) {
                lps::marker_exit();
            } else {
                lps::marker_enter(stack.back(), mark == Mark::call);
            }
            stack.pop_back();
        },
        c10::AliasAnalysisKind::FROM_SCHEMA);
}

// The marker instructions. Registered once per process, when the library is loaded; a model never
// carries them into a file (layerprof never saves one).
torch::jit::RegisterOperators g_marker_ops({
    marker_op("layerprof::enter(Any(a!) self) -> ()", Mark::call),
    marker_op("layerprof::method(Any(a!) self) -> ()", Mark::method),
    marker_op("layerprof::exit(Any(a!) self) -> ()", Mark::exit),
    marker_op("layerprof::exit_out(Any(a!) self, Any out) -> ()", Mark::exit_out),
});

// A call of another module's method: its target is a module (a class or a module interface) and
// not the graph's own `self` (a helper method of the same module is part of its call).
bool is_submodule_call(const torch::jit::Node *n, const torch::jit::Value *self) {
    if (n->kind() != c10::prim::CallMethod) return false;
    const torch::jit::Value *target = n->inputs()[0];
    if (target == self) return false;
    if (auto cls = target->type()->cast<c10::ClassType>()) return cls->is_module();
    if (auto iface = target->type()->cast<c10::InterfaceType>()) return iface->is_module();
    return false;
}

size_t mark_block(torch::jit::Block *b, const torch::jit::Value *self, bool outputs);

// A forked closure (torch.jit.fork) is a subgraph of its prim::fork node: its calls are marked
// inside it, and it runs on the fork's task.
size_t mark_subgraphs(torch::jit::Node *n, bool outputs) {
    size_t sites = 0;
    if (n->hasAttribute(c10::attr::Subgraph)) {
        auto g = n->g(c10::attr::Subgraph);
        sites += mark_block(g->block(), nullptr, outputs);
    }
    return sites;
}

size_t mark_block(torch::jit::Block *b, const torch::jit::Value *self, bool outputs) {
    size_t sites = 0;
    for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
        torch::jit::Node *n = *it;
        for (torch::jit::Block *sub : n->blocks()) // loops, conditionals
            sites += mark_block(sub, self, outputs);
        sites += mark_subgraphs(n, outputs);
        if (!is_submodule_call(n, self)) continue;
        torch::jit::Graph *g = n->owningGraph();
        bool call = lps::is_forward_name(n->s(c10::attr::name).c_str());
        torch::jit::Node *enter = g->create(call ? k_enter : k_method, {n->inputs()[0]}, 0);
        enter->insertBefore(n);
        bool with_out = outputs && n->outputs().size() == 1;
        torch::jit::Node *exit = with_out ? g->create(k_exit_out, {n->inputs()[0], n->output()}, 0)
                                          : g->create(k_exit, {n->inputs()[0]}, 0);
        exit->insertAfter(n);
        sites++;
    }
    return sites;
}

size_t count_markers(torch::jit::Block *b, c10::Symbol kind) {
    size_t n = 0;
    for (torch::jit::Node *node : b->nodes()) {
        if (node->kind() == kind || (kind == k_enter && node->kind() == k_method) ||
            (kind == k_exit && node->kind() == k_exit_out))
            n++;
        for (torch::jit::Block *sub : node->blocks())
            n += count_markers(sub, kind);
        if (node->hasAttribute(c10::attr::Subgraph))
            n += count_markers(node->g(c10::attr::Subgraph)->block(), kind);
    }
    return n;
}

// Enter markers per module type (the type of the `self` they carry): loop unrolling may copy a
// marker, so totals can grow; a type with fewer markers than before lost one.
void count_by_type(torch::jit::Block *b, std::unordered_map<std::string, size_t> &out) {
    for (torch::jit::Node *node : b->nodes()) {
        if (node->kind() == k_enter || node->kind() == k_method)
            out[node->input(0)->type()->str()]++;
        for (torch::jit::Block *sub : node->blocks())
            count_by_type(sub, out);
        if (node->hasAttribute(c10::attr::Subgraph))
            count_by_type(node->g(c10::attr::Subgraph)->block(), out);
    }
}

size_t count_calls(torch::jit::Block *b, const torch::jit::Value *self) {
    size_t n = 0;
    for (torch::jit::Node *node : b->nodes()) {
        n += is_submodule_call(node, self);
        for (torch::jit::Block *sub : node->blocks())
            n += count_calls(sub, self);
    }
    return n;
}

bool is_marker(const torch::jit::Node *n) {
    return n->kind() == k_enter || n->kind() == k_method || n->kind() == k_exit ||
           n->kind() == k_exit_out;
}

void unmark_block(torch::jit::Block *b) {
    for (auto it = b->nodes().begin(); it != b->nodes().end();) {
        torch::jit::Node *n = *it++; // the iterator moves on before the node goes
        for (torch::jit::Block *sub : n->blocks())
            unmark_block(sub);
        if (n->hasAttribute(c10::attr::Subgraph)) unmark_block(n->g(c10::attr::Subgraph)->block());
        if (is_marker(n)) n->destroy();
    }
}

// Each compiled method of `m`'s modules once: modules of one type share their methods' graphs.
template <typename F> void for_each_method_graph(lps_model *m, F &&visit) {
    std::unordered_set<const torch::jit::Function *> done;
    for (const auto &item : m->module.named_modules()) {
        for (const auto &method : item.value.get_methods()) {
            torch::jit::Function &fn = method.function();
            if (done.insert(&fn).second) visit(*torch::jit::toGraphFunction(fn).graph());
        }
    }
}

} // namespace

namespace lps {

size_t count_enter_markers(torch::jit::Graph &g) {
    return count_markers(g.block(), k_enter);
}

size_t count_submodule_calls(torch::jit::Graph &g) {
    return count_calls(g.block(), g.inputs()[0]);
}

void remove_markers(lps_model *m) {
    for_each_method_graph(m, [](torch::jit::Graph &g) { unmark_block(g.block()); });
}

size_t insert_markers(lps_model *m) {
    size_t sites = 0;
    for_each_method_graph(m, [&](torch::jit::Graph &g) {
        sites += mark_block(g.block(), g.inputs()[0], m->mark_outputs);
    });
    return sites;
}

} // namespace lps

extern "C" {

int lps_markers_census(lps_model *m, lps_inputs *in, lps_marker_census *out) noexcept {
    if (!m || !in || !out) return lp_error_set(LP_ERR_INVALID, "lps_markers_census: NULL argument");
    *out = lps_marker_census{m->marker_sites, 0, 0, 0, 0};
    if (!m->markers || m->pt2) return LP_OK;
    return lps::guard([&]() -> int {
        auto &fn = torch::jit::toGraphFunction(m->module.get_method("forward").function());
        // What the optimizer was given: the marked graph, every call inlined.
        auto inlined = fn.graph()->copy();
        torch::jit::Inline(*inlined);
        out->expected = count_markers(inlined->block(), k_enter);
        // What it made of it, for these inputs (the plan the executor runs; it exists once a
        // forward ran with the optimizer on, so asking for it optimises nothing anew).
        std::vector<c10::IValue> stack;
        stack.push_back(m->module._ivalue());
        stack.insert(stack.end(), in->values.begin(), in->values.end());
        torch::jit::GraphOptimizerEnabledGuard optimize(true);
        auto plan = fn.get_executor().getPlanFor(stack);
        out->enters = count_markers(plan.graph->block(), k_enter);
        out->exits = count_markers(plan.graph->block(), k_exit);
        std::unordered_map<std::string, size_t> before, after;
        count_by_type(inlined->block(), before);
        count_by_type(plan.graph->block(), after);
        for (const auto &kv : before)
            if (after[kv.first] < kv.second) out->lost += kv.second - after[kv.first];
        return LP_OK;
    });
}

} // extern "C"

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
// for CSE as in the plain optimised model. CONSERVATIVE alias analysis would make each marker a
// barrier for everything, and CSE could not merge the loop-invariant slices and attribute reads
// of an unrolled loop (docs/libtorch.md, "Two modes", has the census). integration.markers checks
// that no marker is lost and that site markers leave the attribute reads as unmarked.
// The module is known from the object the instruction is given, as in hooks mode: TorchScript
// shares one compiled method between modules of the same type, so a call site names its callee
// only at run time.
//
// Site markers, where the callee is fixed. Declaring that a marker writes its module has a price:
// a read of the module's attributes after it cannot be merged with one before it, so each
// unrolled iteration of a loop fetches the submodules and their weights again, which is most of
// what such markers cost an unprofiled forward (docs/libtorch.md has the figures). Most call sites
// call a submodule reached from the method's own `self` through attributes only (`self.cell`,
// `self.layers.0`): TorchScript does not let a forward reassign a submodule, so for each module
// running the method the callee is fixed at load. Such a site gets markers that take no value at
// all, `layerprof::enter_at[site=N, model=T]()` and `layerprof::leave[model=T]()`, registered
// CONSERVATIVE: an operator with side effects, so dead-code elimination keeps it and no pass moves
// a node across it (AliasDb refuses to reorder around side effects), while having no mutable
// input it writes nothing, and attribute reads merge as in the unmarked model. At run time the
// callee comes from (the module the thread is in, N), a table filled at load; the thread's
// module frames are kept by hooks.cpp. Other sites (a module passed as an argument, a module
// interface, a forked closure) and every site when exits take the call's output keep the object
// markers above.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "torchscript.hpp"

namespace {

using lps::TorchScript;

const c10::Symbol k_enter = c10::Symbol::fromQualString("layerprof::enter");
const c10::Symbol k_method = c10::Symbol::fromQualString("layerprof::method");
const c10::Symbol k_exit = c10::Symbol::fromQualString("layerprof::exit");
// An exit that also takes the call's output (the out_shape column): only then, since the output
// gains a use, which the plain markers do not give the optimizer.
const c10::Symbol k_exit_out = c10::Symbol::fromQualString("layerprof::exit_out");

// Site markers: their attributes (site number, model tag).
const c10::Symbol k_enter_at = c10::Symbol::fromQualString("layerprof::enter_at");
const c10::Symbol k_method_at = c10::Symbol::fromQualString("layerprof::method_at");
const c10::Symbol k_leave = c10::Symbol::fromQualString("layerprof::leave");
// The attached root's split (split_unsampled): whether this thread records the model's forward.
const c10::Symbol k_recording = c10::Symbol::fromQualString("layerprof::recording");
const c10::Symbol k_site = c10::Symbol::attr("site");
const c10::Symbol k_tag = c10::Symbol::attr("model");

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

// A site marker's instruction, made for its node by an OperationCreator: the site and model are
// read once, here. The operators are variadic (registered by symbol) because the interpreter
// shares one operation among all nodes of a non-variadic operator (the first node's), while a
// variadic one gets its own per node. Made by a creator, it is a plain OP instruction (OPN, which
// pushes an input count, is for variadic operators with a fixed operation): the stack is untouched.
torch::jit::Operation site_enter_operation(const torch::jit::Node *n) {
    uint64_t tag = (uint64_t)n->i(k_tag);
    uint32_t site = (uint32_t)n->i(k_site);
    bool call = n->kind() == k_enter_at;
    return [tag, site, call](torch::jit::Stack &) { lps::marker_enter_site(tag, site, call); };
}

torch::jit::Operation leave_operation(const torch::jit::Node *n) {
    uint64_t tag = (uint64_t)n->i(k_tag);
    return [tag](torch::jit::Stack &) { lps::marker_leave(tag); };
}

// The split's condition (split_unsampled): a bool, read per forward. CONSERVATIVE, as the site
// markers: a side effect, so it is neither folded, merged with another nor moved.
torch::jit::Operation recording_operation(const torch::jit::Node *n) {
    uint64_t tag = (uint64_t)n->i(k_tag);
    return [tag](torch::jit::Stack &stack) { stack.emplace_back(lps::marker_recording(tag)); };
}

// The marker instructions. Registered once per process, when the library is loaded; a model never
// carries them into a file (layerprof never saves one).
torch::jit::RegisterOperators g_marker_ops({
    marker_op("layerprof::enter(Any(a!) self) -> ()", Mark::call),
    marker_op("layerprof::method(Any(a!) self) -> ()", Mark::method),
    marker_op("layerprof::exit(Any(a!) self) -> ()", Mark::exit),
    marker_op("layerprof::exit_out(Any(a!) self, Any out) -> ()", Mark::exit_out),
    torch::jit::Operator(k_enter_at, site_enter_operation, c10::AliasAnalysisKind::CONSERVATIVE),
    torch::jit::Operator(k_method_at, site_enter_operation, c10::AliasAnalysisKind::CONSERVATIVE),
    torch::jit::Operator(k_leave, leave_operation, c10::AliasAnalysisKind::CONSERVATIVE),
    torch::jit::Operator(k_recording, recording_operation, c10::AliasAnalysisKind::CONSERVATIVE),
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

// The attribute names from a graph's `self` to a call's target when the target is a submodule
// reached through prim::GetAttr only (`self.layers.0`): a fixed module for each module running the
// graph. Empty otherwise.
std::vector<std::string> static_path(const torch::jit::Value *target,
                                     const torch::jit::Value *self) {
    std::vector<std::string> path;
    if (!self) return path;
    for (const torch::jit::Value *v = target; v != self;) {
        const torch::jit::Node *n = v->node();
        auto cls = v->type()->cast<c10::ClassType>();
        if (n->kind() != c10::prim::GetAttr || !cls || !cls->is_module()) return {};
        path.insert(path.begin(), n->s(c10::attr::name));
        v = n->input(0);
    }
    return path;
}

// What marking one graph gives insert_markers: its site markers' numbers and paths.
struct Marking {
    TorchScript *m;
    bool outputs; // exits take the call's output: object markers everywhere
    std::vector<std::pair<uint32_t, std::vector<std::string>>> sites;
};

size_t mark_block(torch::jit::Block *b, const torch::jit::Value *self, Marking &mk);

// A forked closure (torch.jit.fork) is a subgraph of its prim::fork node: its calls are marked
// inside it, and it runs on the fork's task (object markers: the closure has no `self`).
size_t mark_subgraphs(torch::jit::Node *n, Marking &mk) {
    size_t sites = 0;
    if (n->hasAttribute(c10::attr::Subgraph)) {
        auto g = n->g(c10::attr::Subgraph);
        sites += mark_block(g->block(), nullptr, mk);
    }
    return sites;
}

// Site markers around call `n` when its callee is fixed; false (nothing done) otherwise.
bool mark_site(torch::jit::Node *n, const torch::jit::Value *self, bool call, Marking &mk) {
    if (mk.outputs) return false;
    std::vector<std::string> path = static_path(n->inputs()[0], self);
    if (path.empty()) return false;
    torch::jit::Graph *g = n->owningGraph();
    auto site = (uint32_t)mk.m->site_types.size();
    mk.m->site_types.push_back(n->inputs()[0]->type()->str());
    mk.sites.emplace_back(site, std::move(path));
    torch::jit::Node *enter = g->create(call ? k_enter_at : k_method_at, {}, 0);
    auto tag = (int64_t)mk.m->marker_tag;
    enter->i_(k_site, site)->i_(k_tag, tag)->insertBefore(n);
    g->create(k_leave, {}, 0)->i_(k_tag, tag)->insertAfter(n);
    return true;
}

size_t mark_block(torch::jit::Block *b, const torch::jit::Value *self, Marking &mk) {
    size_t sites = 0;
    for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
        torch::jit::Node *n = *it;
        for (torch::jit::Block *sub : n->blocks()) // loops, conditionals
            sites += mark_block(sub, self, mk);
        sites += mark_subgraphs(n, mk);
        if (!is_submodule_call(n, self)) continue;
        sites++;
        bool call = lps::is_forward_name(n->s(c10::attr::name).c_str());
        if (mark_site(n, self, call, mk)) continue;
        torch::jit::Graph *g = n->owningGraph();
        torch::jit::Node *enter = g->create(call ? k_enter : k_method, {n->inputs()[0]}, 0);
        enter->insertBefore(n);
        bool with_out = mk.outputs && n->outputs().size() == 1;
        torch::jit::Node *exit = with_out ? g->create(k_exit_out, {n->inputs()[0], n->output()}, 0)
                                          : g->create(k_exit, {n->inputs()[0]}, 0);
        exit->insertAfter(n);
    }
    return sites;
}

// The module `path` names from `caller`, or -1 (an attribute that is not a listed module).
int32_t resolve_site(const TorchScript *m, const torch::jit::Module &caller,
                     const std::vector<std::string> &path) {
    c10::intrusive_ptr<c10::ivalue::Object> obj = caller._ivalue();
    for (const std::string &name : path) {
        if (!obj->type()->hasAttribute(name)) return -1;
        c10::IValue v = obj->getAttr(name);
        if (!v.isObject()) return -1;
        obj = v.toObject();
    }
    return m->self_to_module.find(obj.get());
}

bool is_enter(c10::Symbol k) {
    return k == k_enter || k == k_method || k == k_enter_at || k == k_method_at;
}

bool is_exit(c10::Symbol k) {
    return k == k_exit || k == k_exit_out || k == k_leave;
}

size_t count_markers(torch::jit::Block *b, c10::Symbol kind) {
    size_t n = 0;
    for (torch::jit::Node *node : b->nodes()) {
        if (kind == k_enter ? is_enter(node->kind()) : is_exit(node->kind())) n++;
        for (torch::jit::Block *sub : node->blocks())
            n += count_markers(sub, kind);
        if (node->hasAttribute(c10::attr::Subgraph))
            n += count_markers(node->g(c10::attr::Subgraph)->block(), kind);
    }
    return n;
}

// Enter markers per module type (the type of the `self` they carry): loop unrolling may copy a
// marker, so totals can grow; a type with fewer markers than before lost one.
void count_by_type(torch::jit::Block *b, const std::vector<std::string> &site_types,
                   std::unordered_map<std::string, size_t> &out) {
    for (torch::jit::Node *node : b->nodes()) {
        if (node->kind() == k_enter || node->kind() == k_method)
            out[node->input(0)->type()->str()]++;
        if (node->kind() == k_enter_at || node->kind() == k_method_at)
            out[site_types.at((size_t)node->i(k_site))]++;
        for (torch::jit::Block *sub : node->blocks())
            count_by_type(sub, site_types, out);
        if (node->hasAttribute(c10::attr::Subgraph))
            count_by_type(node->g(c10::attr::Subgraph)->block(), site_types, out);
    }
}

// Nodes of one kind in a graph's blocks and forked subgraphs.
size_t count_kind(torch::jit::Block *b, c10::Symbol kind) {
    size_t n = 0;
    for (torch::jit::Node *node : b->nodes()) {
        n += node->kind() == kind;
        for (torch::jit::Block *sub : node->blocks())
            n += count_kind(sub, kind);
        if (node->hasAttribute(c10::attr::Subgraph))
            n += count_kind(node->g(c10::attr::Subgraph)->block(), kind);
    }
    return n;
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
    return is_enter(n->kind()) || is_exit(n->kind());
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

// Replaces `g`'s body (its nodes and what it returns) by what `build` inserts at the insertion
// point it is given (before the return node) and returns: as many values as `g` returns. The old
// nodes go only once the new body is whole: when `build` throws, its nodes go and `g` is as it
// was (the program's forward is never left half built).
template <typename F> void swap_body(torch::jit::Graph &g, F &&build) {
    std::vector<torch::jit::Node *> old(g.nodes().begin(), g.nodes().end());
    try {
        torch::jit::WithInsertPoint at(g.return_node());
        std::vector<torch::jit::Value *> outs = build();
        TORCH_CHECK(outs.size() == g.outputs().size(), "layerprof: a body returns ", outs.size(),
                    " values where forward returns ", g.outputs().size());
        for (size_t i = 0; i < outs.size(); i++)
            g.return_node()->replaceInput(i, outs[i]);
    } catch (...) {
        // The new nodes follow the old ones: last first, up to the old body's last node.
        torch::jit::Node *stop = old.empty() ? nullptr : old.back();
        for (auto it = g.nodes().rbegin(); it != g.nodes().rend() && *it != stop;) {
            torch::jit::Node *n = *it;
            ++it;
            n->destroy();
        }
        throw;
    }
    // Last first: a node's users come after it, and a node takes its blocks with it.
    for (auto it = old.rbegin(); it != old.rend(); ++it)
        (*it)->destroy();
}

// Replaces `g`'s body by `body`'s, a graph with the same inputs.
void replace_body(torch::jit::Graph &g, torch::jit::Graph &body) {
    swap_body(g, [&] { return torch::jit::insertGraph(g, body, g.inputs()); });
}

torch::jit::Function &forward_function(TorchScript *m) {
    return m->module.get_method("forward").function();
}

// Each compiled method of `m`'s modules once: modules of one type share their methods' graphs.
template <typename F> void for_each_method_graph(TorchScript *m, F &&visit) {
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

void remove_markers(TorchScript *m) {
    if (m->unsplit_root) { // the root's forward as it was before split_unsampled
        replace_body(*torch::jit::toGraphFunction(forward_function(m)).graph(), *m->unsplit_root);
        m->unsplit_root.reset();
    }
    for_each_method_graph(m, [](torch::jit::Graph &g) { unmark_block(g.block()); });
}

void split_unsampled(TorchScript *m) {
    if (m->marker_sites == 0) return; // no marker anywhere: nothing to leave out
    torch::jit::Graph &g = *torch::jit::toGraphFunction(forward_function(m)).graph();
    std::shared_ptr<torch::jit::Graph> marked = g.copy();
    // The unmarked body: every call inlined (from the callees' graphs, which carry markers, as
    // the optimizer would inline them), then every marker taken out. The optimizer is on, as the
    // markers mode runs: the callees' inlined graphs are made (and kept) as its first run would.
    std::shared_ptr<torch::jit::Graph> plain = g.copy();
    {
        torch::jit::GraphOptimizerEnabledGuard optimize(true);
        torch::jit::Inline(*plain);
    }
    unmark_block(plain->block());
    swap_body(g, [&] {
        torch::jit::Node *rec = g.insertNode(g.create(k_recording, {}, 1));
        rec->i_(k_tag, (int64_t)m->marker_tag);
        rec->output()->setType(c10::BoolType::get());
        torch::jit::Node *branch =
            g.insertNode(g.create(c10::prim::If, {rec->output()}, marked->outputs().size()));
        for (torch::jit::Graph *body : {marked.get(), plain.get()}) {
            torch::jit::Block *b = branch->addBlock();
            torch::jit::WithInsertPoint in(b->return_node());
            for (torch::jit::Value *v : torch::jit::insertGraph(g, *body, g.inputs()))
                b->registerOutput(v);
        }
        for (size_t i = 0; i < branch->outputs().size(); i++)
            branch->output(i)->setType(marked->outputs()[i]->type());
        return branch->outputs().vec();
    });
    m->unsplit_root = marked;
}

size_t insert_markers(TorchScript *m) {
    // The tag is the root module object: a module attached again after a session (its executor
    // still runs the markers compiled the first time) gets the same tag and, marked in the same
    // order, the same site numbers; two models alive at once never share one.
    m->marker_tag = (uint64_t)(uintptr_t)m->module._ivalue().get();
    m->site_types.assign(1, std::string()); // sites are numbered from 1 (a key is never 0)
    // Each method graph is marked once (modules of one type share it); its site markers are
    // resolved for every module running it, in index_modules' order.
    using Sites = std::vector<std::pair<uint32_t, std::vector<std::string>>>;
    std::unordered_map<const torch::jit::Function *, Sites> sites_of;
    std::vector<std::pair<uint64_t, int32_t>> callees;
    size_t sites = 0;
    int32_t caller = 0;
    for (const auto &item : m->module.named_modules()) {
        for (const auto &method : item.value.get_methods()) {
            torch::jit::Function &fn = method.function();
            auto it = sites_of.find(&fn);
            if (it == sites_of.end()) {
                Marking mk{m, m->mark_outputs, {}};
                torch::jit::Graph &g = *torch::jit::toGraphFunction(fn).graph();
                sites += mark_block(g.block(), g.inputs()[0], mk);
                it = sites_of.emplace(&fn, std::move(mk.sites)).first;
            }
            for (const auto &site : it->second) {
                int32_t callee = resolve_site(m, item.value, site.second);
                if (callee >= 0) callees.emplace_back(site_key(caller, site.first), callee);
            }
        }
        caller++;
    }
    m->site_callee.reserve(callees.size());
    for (const auto &kv : callees)
        m->site_callee.add(kv.first, kv.second);
    return sites;
}

} // namespace lps

extern "C" {

int lps_markers_census(lps_model *model, lps_inputs *in, lps_marker_census *out) noexcept {
    if (!model || !in || !out)
        return lp_error_set(LP_ERR_INVALID, "lps_markers_census: NULL argument");
    TorchScript *m = lps::torchscript(model); // a package's graph is compiled: nothing to count
    *out = lps_marker_census{m ? m->marker_sites : 0, 0, 0, 0, 0, 0, 0};
    if (!m || !m->optimize) return LP_OK;
    return lps::guard([&]() -> int {
        auto &fn = torch::jit::toGraphFunction(m->module.get_method("forward").function());
        // What the optimizer made of forward for these inputs (the plan the executor runs; it
        // exists once a forward ran with the optimizer on, so asking for it optimises nothing).
        std::vector<c10::IValue> stack;
        stack.push_back(m->module._ivalue());
        stack.insert(stack.end(), in->values.begin(), in->values.end());
        torch::jit::GraphOptimizerEnabledGuard optimize(true);
        auto plan = fn.get_executor().getPlanFor(stack);
        out->attr_reads = count_kind(plan.graph->block(), c10::prim::GetAttr);
        if (!m->markers) return LP_OK;
        out->object_sites = m->marker_sites - (m->site_types.size() - 1);
        // What the optimizer was given: the marked graph, every call inlined.
        auto inlined = fn.graph()->copy();
        torch::jit::Inline(*inlined);
        out->expected = count_markers(inlined->block(), k_enter);
        out->enters = count_markers(plan.graph->block(), k_enter);
        out->exits = count_markers(plan.graph->block(), k_exit);
        std::unordered_map<std::string, size_t> before, after;
        count_by_type(inlined->block(), m->site_types, before);
        count_by_type(plan.graph->block(), m->site_types, after);
        for (const auto &kv : before)
            if (after[kv.first] < kv.second) out->lost += kv.second - after[kv.first];
        return LP_OK;
    });
}

} // extern "C"

"""What an exported program says of shapes, for layerprof's map (layerprof_export.py uses it).

- The package's input constraints: each input's dims, fixed or a symbol of the exported program,
  with each symbol's range (range_constraints). A symbol the user named with torch.export.Dim keeps
  that name ("batch"); equal symbols across inputs share one name.
- FLOPs per forward of each module, from the exported graph's nodes (their nn_module_stack and the
  fake tensors in meta['val']), with the formulas of layerprof's TorchScript path (shim/flops.cpp,
  docs/model-figures.md: 2 per multiply-add). With dynamic shapes a figure is an expression in the
  symbols, which layerprof evaluates with the shapes of the inputs it runs.
- The output shape of each module call, the same way.

An expression is written in a small grammar layerprof's core parses (src/collect/pt2_shapes.c):
integers, symbol names, + - * // % with parentheses, max(a, b) and min(a, b). A fixed figure is a
plain integer.
"""

import inspect
import os
import re

import sympy

# Operator name (as RecordFunction names it in TorchScript) -> formula: shim/flops_table.def, the
# table shim/flops.cpp compiles in, read here as text so that the two cannot drift.
_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shim", "flops_table.def")
_ROW = re.compile(r'^LP_FLOPS\((\w+), "([^"]*)"\)$')


def _read_formulas(path):
    """{"aten::name": formula} from the table; RuntimeError when it is missing or a line is not
    a comment, blank or a row."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RuntimeError(f"the FLOPs table {path} cannot be read ({e.strerror}): run the export "
                           "from a layerprof checkout (python/ beside shim/)") from None
    formulas = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("//"):
            continue
        m = _ROW.match(line)
        if not m:
            raise RuntimeError(f"{path}:{n}: not LP_FLOPS(formula, \"names\"): {line}")
        for name in m.group(2).split():
            formulas["aten::" + name] = m.group(1)
    return formulas


_FORMULAS = _read_formulas(_TABLE)
# Graph nodes that are no op of the model: symbolic size reads, asserts on shapes.
_NOT_OPS = {"aten::sym_size", "aten::sym_numel", "aten::sym_stride", "aten::_assert_scalar",
            "aten::sym_constrain_range_for_size", "aten::_assert_tensor_metadata"}


def _expr(v):
    """A dim (int or SymInt) as a sympy expression."""
    node = getattr(v, "node", None)
    if node is not None and hasattr(node, "expr"):
        return node.expr
    return sympy.Integer(int(v))


class Printer:
    """sympy expressions in the shim's grammar, symbols renamed (s23 -> batch)."""

    def __init__(self, names):
        self.names = names  # sympy.Symbol -> name

    def __call__(self, e):
        """An int for a constant, the expression's text otherwise; ValueError for what the
        grammar cannot say."""
        e = sympy.expand(e) if not isinstance(e, int) else sympy.Integer(e)
        if e.is_Integer:
            return int(e)
        text = self._p(e)
        return text[1:-1] if text.startswith("(") and self._closes_at_end(text) else text

    @staticmethod
    def _closes_at_end(text):
        depth = 0
        for i, c in enumerate(text):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(text) - 1:
                return False
        return True

    def _p(self, e):
        from torch.utils._sympy import functions as F
        if e.is_Integer:
            return str(int(e)) if e >= 0 else f"(0 - {-int(e)})"
        if e.is_Symbol:
            if e not in self.names:
                raise ValueError(f"symbol {e} is not an input's dimension")
            return self.names[e]
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self._p(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + "*".join(self._p(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
            return "(" + "*".join([self._p(e.base)] * int(e.exp)) + ")"
        if isinstance(e, F.FloorDiv):
            return f"({self._p(e.args[0])}//{self._p(e.args[1])})"
        if isinstance(e, F.CeilDiv):
            a, b = self._p(e.args[0]), self._p(e.args[1])
            return f"(({a} + {b} - 1)//{b})"
        if isinstance(e, (F.Mod, F.PythonMod, sympy.Mod)):
            return f"({self._p(e.args[0])}%{self._p(e.args[1])})"
        if isinstance(e, (F.Max, sympy.Max, F.Min, sympy.Min)):
            fn = "max" if isinstance(e, (F.Max, sympy.Max)) else "min"
            text = self._p(e.args[0])
            for a in e.args[1:]:
                text = f"{fn}({text}, {self._p(a)})"
            return text
        raise ValueError(f"no way to write {type(e).__name__} ({e})")


def _user_input_nodes(ep):
    names = list(ep.graph_signature.user_inputs)
    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    return [by_name[n] for n in names if n in by_name]


def _dim_names(model, example_args, dynamic_shapes):
    """(input index, dim) -> the torch.export.Dim name the user gave it, for tensors in
    example_args' flattened order. Cosmetic: anything unexpected gives no names."""
    if dynamic_shapes is None:
        return {}
    try:
        if isinstance(dynamic_shapes, dict):
            params = list(inspect.signature(model.forward).parameters)
            specs = [dynamic_shapes.get(p) for p in params[:len(example_args)]]
        else:
            specs = list(dynamic_shapes)
        names, flat = {}, [0]

        def walk(arg, spec):
            import torch
            if isinstance(arg, torch.Tensor):
                i = flat[0]
                flat[0] += 1
                items = spec.items() if isinstance(spec, dict) else enumerate(spec or ())
                for d, dim in items:
                    n = getattr(dim, "__name__", None)
                    if isinstance(n, str) and n.isidentifier():
                        names[(i, d)] = n
            elif isinstance(arg, (list, tuple)):
                for j, a in enumerate(arg):
                    walk(a, spec[j] if spec is not None else None)
            elif isinstance(arg, dict):
                for k, a in arg.items():
                    walk(a, spec.get(k) if spec is not None else None)
        for arg, spec in zip(example_args, specs):
            walk(arg, spec)
        return names
    except Exception:  # noqa: BLE001  (names are only for reading)
        return {}


def input_constraints(model, ep, example_args, dynamic_shapes):
    """(symbols, input_dims, printer, binding): the map's "symbols" ({name: {"min", "max"}}, max
    None when unbounded), each input's dims (an int, or an expression), the printer that names
    the symbols, and each symbol's value at the example inputs."""
    import torch
    flat = [t for t in _flatten(example_args) if isinstance(t, torch.Tensor)]
    user = _user_input_nodes(ep)
    given = _dim_names(model, example_args, dynamic_shapes)
    names, binding, used = {}, {}, set()
    for i, node in enumerate(user):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for d, size in enumerate(val.shape):
            e = _expr(size)
            if e.is_Symbol and e not in names:
                name = given.get((i, d)) or str(e)
                while name in used:
                    name += "_"
                names[e] = name
                used.add(name)
                if i < len(flat):
                    binding[e] = int(flat[i].shape[d])
    printer = Printer(names)
    symbols = {}
    for sym, name in names.items():
        vr = ep.range_constraints.get(sym)
        lo = _bound(vr.lower) if vr is not None else None
        hi = _bound(vr.upper) if vr is not None else None
        symbols[name] = {"min": lo if lo is not None else 0, "max": hi}
    dims = []
    for node in user:
        val = node.meta.get("val")
        dims.append([printer(_expr(s)) for s in val.shape] if isinstance(val, torch.Tensor)
                    else [])
    return symbols, dims, printer, binding


def _bound(x):
    """A range's end as an int, None for an unbounded one (torch's int_oo, sympy's oo)."""
    try:
        return int(x) if getattr(x, "is_number", True) and str(x).lstrip("-") not in (
            "oo", "int_oo") else None
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for e in v:
            yield from _flatten(e)
    elif isinstance(v, dict):
        for e in v.values():
            yield from _flatten(e)
    else:
        yield v


def _arg(node, i, name):
    """Argument i (schema name `name`) of a node: positional, keyword, or the schema's default."""
    if i < len(node.args):
        return node.args[i]
    if name in node.kwargs:
        return node.kwargs[name]
    for a in node.target._schema.arguments:
        if a.name == name and a.has_default_value():
            return a.default_value
    return None


def _shape(v):
    import torch
    if hasattr(v, "meta"):
        v = v.meta.get("val")
    return [_expr(s) for s in v.shape] if isinstance(v, torch.Tensor) else None


def _numel(shape):
    n = sympy.Integer(1)
    for s in shape or ():
        n *= s
    return n if shape is not None else sympy.Integer(0)


def _int_at(v, d, fallback):
    if isinstance(v, int):
        return v
    if isinstance(v, (list, tuple)) and v:
        return int(v[d] if d < len(v) else v[-1])
    return fallback


def _matmul(a, b):
    if a is None or b is None or not a or not b:
        return sympy.Integer(0)
    k = a[-1]
    n = a[-2] if len(a) >= 2 else 1
    m = b[-1] if len(b) >= 2 else 1
    batch = sympy.Integer(1)
    if len(a) > 2 or len(b) > 2:
        da, db = a[:-2], b[:-2]
        for i in range(max(len(da), len(db))):
            sa = da[len(da) - 1 - i] if i < len(da) else 1
            sb = db[len(db) - 1 - i] if i < len(db) else 1
            batch *= sa if sb == 1 else sb if sa == 1 else sympy.Max(sa, sb)
    return 2 * batch * n * k * m


def node_flops(node, formula, name):
    """FLOPs of one graph node as a sympy expression, shim/flops.cpp's formula for its op."""
    args = node.target._schema.arguments
    arg_names = [a.name for a in args]

    def tensor(i):
        return _shape(_arg(node, i, arg_names[i])) if i < len(args) else None
    if formula == "conv":
        x, w = tensor(0), tensor(1)
        if x is None or w is None or len(x) < 3 or len(w) != len(x):
            return sympy.Integer(0)
        general = "convolution" in name
        transposed = (bool(_arg(node, 6, arg_names[6])) if general and len(args) > 6
                      else "transpose" in name)
        kernel = _numel(w[2:])
        if transposed:
            positions = _numel(x[2:])
        else:
            positions = _numel(_shape(node)[2:])  # the output's spatial size
        return 2 * x[0] * w[0] * w[1] * kernel * positions
    if formula == "linear":
        x, w = tensor(0), tensor(1)
        if x is None or w is None or len(w) != 2:
            return sympy.Integer(0)
        return 2 * _numel(x) * w[0]
    if formula == "matmul":
        return _matmul(tensor(0), tensor(1))
    if formula == "addmm":
        return _matmul(tensor(1), tensor(2))
    if formula == "attention":
        q, k, v = tensor(0), tensor(1), tensor(2)
        if None in (q, k, v) or min(len(q), len(k), len(v)) < 2:
            return sympy.Integer(0)
        batch = _numel(q[:-2])
        return 2 * batch * q[-2] * k[-2] * (q[-1] + v[-1])
    if formula == "norm2":
        return 2 * _numel(tensor(0))
    if formula == "norm5":
        return 5 * _numel(tensor(0))
    if formula == "pool":
        return _numel(tensor(0))
    if formula == "softmax":
        return 3 * _numel(tensor(0))
    if formula == "eltwise":  # the largest tensor argument
        sizes = []
        for i in range(len(node.args)):
            s = _shape(node.args[i]) if hasattr(node.args[i], "meta") else None
            if s is not None:
                sizes.append(_numel(s))
        if not sizes:
            return sympy.Integer(0)
        return sympy.Max(*sizes) if len(sizes) > 1 else sizes[0]
    return sympy.Integer(0)


def module_flops(ep, innermost):
    """{module path: sympy FLOPs per forward of its own ops}, and the ops with no formula."""
    import torch
    flops, unknown = {}, []
    for node in ep.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        name = node.target._schema.name
        if name in _NOT_OPS:
            continue
        formula = _FORMULAS.get(name)
        if formula is None:
            if name not in unknown:
                unknown.append(name)
            continue
        if formula == "zero":
            continue
        path = innermost.get(node.name, "")
        flops[path] = flops.get(path, 0) + node_flops(node, formula, name)
    return flops, unknown


def _call_outputs(ep):
    """{call key: (path, [output nodes])}: the nodes of each module call (those with the key on
    their nn_module_stack) whose value is used outside the call, in graph order."""
    members, path_of, order = {}, {}, []
    for node in ep.graph.nodes:
        stack = node.meta.get("nn_module_stack") or {}
        for key, value in stack.items():
            if key not in members:
                members[key] = []
                order.append(key)
                path_of[key] = value[0] if isinstance(value, (tuple, list)) else ""
            members[key].append(node)
    out = {}
    for key in order:
        inside = set(members[key])
        outs = [n for n in members[key]
                if any(u not in inside for u in n.users) and _shape(n) is not None]
        out[key] = (path_of[key], outs)
    return out


def eager_out_shapes(model, example_args):
    """{id(module): [shape of the first tensor each call returned, in call order]} (the out_shape
    column's definition: the tensor, or the first of what it returned, depth first)."""
    import torch
    shapes, handles = {}, []

    def first_tensor(v):
        for t in _flatten(v):
            if isinstance(t, torch.Tensor):
                return list(t.shape)
        return None

    def pre(mod, _i):
        shapes.setdefault(id(mod), []).append(None)
        pending.setdefault(id(mod), []).append(len(shapes[id(mod)]) - 1)

    def post(mod, _i, out):
        slot = pending[id(mod)].pop()
        shapes[id(mod)][slot] = first_tensor(out)
    pending = {}
    for _, mod in model.named_modules():
        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))
    try:
        with torch.no_grad():
            model(*example_args)
    finally:
        for h in handles:
            h.remove()
    return shapes


def module_out_shapes(model, eager, ep, alias, printer, binding, dynamic):
    """{module path: [each call's output shape, dims as ints or expressions, or None]}: eager's
    shapes at the example (`eager`, from eager_out_shapes), written in the symbols where the graph
    has a call output of that shape (a static package: eager's shapes as they are)."""
    by_path = {}
    for key, (path, outs) in _call_outputs(ep).items():
        by_path.setdefault(alias.get(path, path), []).append(outs)
    result = {}
    for path, mod in model.named_modules():
        calls = eager.get(id(mod))
        if not calls:
            continue
        graph_calls = by_path.get(path, [])
        shapes = []
        for i, concrete in enumerate(calls):
            if concrete is None:
                shapes.append(None)
                continue
            if not dynamic:
                shapes.append(concrete)
                continue
            found = None
            tries = ([graph_calls[i]] if i < len(graph_calls) else []) + graph_calls
            for outs in tries:
                for n in outs:
                    s = _shape(n)
                    try:
                        hinted = [int(e.subs(binding)) for e in s]
                    except (TypeError, ValueError):
                        continue
                    if hinted == concrete:
                        try:
                            found = [printer(e) for e in s]
                        except ValueError:
                            continue
                        break
                if found is not None:
                    break
            shapes.append(found)
        result[path] = shapes
    return result


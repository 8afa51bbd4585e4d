#!/usr/bin/env python3
"""Export a PyTorch model to an AOTInductor package (.pt2) that layerprof can place in modules.

Run with a Python whose torch is 2.x (PyPI's wheel); layerprof built against that libtorch reads
the package:

    from layerprof_export import export_pt2
    export_pt2(model, (torch.randn(1, 3, 224, 224),), "resnet18.pt2", torchscript=True)

    python3 layerprof_export.py torchvision.models:resnet18 --input 1x3x224x224 \
        -o resnet18.pt2 --torchscript

What it does (docs/pt2.md says why each step is needed):

1. torch.export.export(model, example_args): the exported program's nodes carry nn_module_stack,
   the module path of every node, with one key per call of a module ("fc", "fc@1").
2. AOTInductor compiles it with cpp.enable_kernel_profile (every kernel call is a RecordFunction
   layerprof times) and trace.provenance_tracking_level = 1 (the package then holds
   data/aotinductor/model/kernel_information.json: each kernel's pre-grad nodes).
3. It writes data/layerprof/modules.json into the package: the model's modules (path, class,
   calls per forward as forward hooks count them at the example inputs, parameters, FLOPs per forward and each call's output shape, worked out from
   the exported graph by layerprof_shapes.py), each kernel in the order the package runs them
   with the module it is placed in, the modules it fused and which call of each module it ran
   in, the example inputs, and the inputs' constraints: each dim fixed, or a symbol with its
   range (dynamic_shapes).

Dynamic shapes: export_pt2(..., dynamic_shapes=...) passes torch.export's dynamic_shapes through;
the command line says it with --dynamic INPUT:DIM=MIN..MAX[:NAME] (docs/pt2.md).

Placement rule: a kernel whose nodes all come from one module belongs to that module; a kernel
that fused nodes of several modules belongs to their lowest common ancestor, and lists the
modules it fused. Nodes outside every submodule (code in the root's forward) belong to the root.
"""

import argparse
import importlib
import inspect
import json
import os
import re
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layerprof_shapes  # noqa: E402

MAP_RECORD = "data/layerprof/modules.json"
MAP_FORMAT = "layerprof-pt2-map"
# 2: input constraints, FLOPs and output shapes. Each kernel's "call_keys" came later within 2:
# a layerprof that does not read them, or a map without them, keeps the frames of modules called
# once per forward only.
MAP_VERSION = 2

_DTYPES = {  # torch dtype -> layerprof's input spec name
    "torch.float32": "float32", "torch.float64": "float64", "torch.float16": "float16",
    "torch.bfloat16": "bfloat16", "torch.int64": "int64", "torch.int32": "int32",
    "torch.int16": "int16", "torch.int8": "int8", "torch.uint8": "uint8", "torch.bool": "bool",
}


def _torch():
    try:
        import torch
    except ImportError:
        sys.exit(f"layerprof_export: {sys.executable} cannot import torch; use a Python with "
                 "torch 2.x (PyPI's wheel)")
    if int(torch.__version__.split(".")[0]) < 2:
        sys.exit(f"layerprof_export: torch {torch.__version__} has no AOTInductor; use torch 2.x")
    return torch


def _lca(paths):
    """The lowest common ancestor of dotted module paths ("" is the root)."""
    split = [p.split(".") if p else [] for p in paths]
    common = []
    for parts in zip(*split):
        if any(x != parts[0] for x in parts):
            break
        common.append(parts[0])
    return ".".join(common)


def _module_sizes(model):
    """Parameters (elements) and bytes of parameters and buffers per module path, its own and
    with its submodules, a tensor counted once in every total that covers it."""
    sizes = {}
    for path, mod in model.named_modules():
        own_p = own_b = 0
        seen = set()
        for p in mod.parameters(recurse=False):
            if id(p) not in seen:
                seen.add(id(p))
                own_p += p.numel()
                own_b += p.numel() * p.element_size()
        for b in mod.buffers(recurse=False):
            if id(b) not in seen:
                seen.add(id(b))
                own_b += b.numel() * b.element_size()
        tot_p = tot_b = 0
        seen = set()
        for p in mod.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                tot_p += p.numel()
                tot_b += p.numel() * p.element_size()
        for b in mod.buffers():
            if id(b) not in seen:
                seen.add(id(b))
                tot_b += b.numel() * b.element_size()
        sizes[path] = (own_p, tot_p, own_b, tot_b)
    return sizes


def _node_modules(ep):
    """For every call_function node of the exported program: its innermost module path, and its
    module stack as (call key, path) pairs; and every (call key, path) of the program."""
    innermost, stacks, calls = {}, {}, set()
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        stack = node.meta.get("nn_module_stack") or {}
        path = ""
        stacks[node.name] = []
        for key, value in stack.items():
            p = value[0] if isinstance(value, (tuple, list)) else ""
            calls.add((key, p))
            stacks[node.name].append((key, p))
            path = p
        innermost[node.name] = path
    return innermost, stacks, calls


def _call_keys(nodes, stacks, alias, placed, known, index):
    """Which call of each module from below the root down to `placed` a kernel ran in: {path:
    call key}. torch.export gives every call of a module its own key in each node's
    nn_module_stack ("cell", "cell@1", ...): two kernels with one key for a module ran inside one
    call of it, and layerprof keeps that module's frame open between them (docs/pt2.md, "Self
    and total"). A module on the chain without one key shared by all the kernel's nodes (nodes of
    two calls fused into one kernel; a shared module reached through its second path, whose first
    path's parents are not on the stack; a ModuleList, never called) gets a key of this kernel's
    own, "!INDEX" (its index in the map), which matches no other kernel's: that frame is never
    kept open for this kernel."""
    common = None
    for node in nodes:
        keys = {alias.get(p, p): k for k, p in stacks.get(node, [])}
        common = keys if common is None else {
            p: k for p, k in common.items() if keys.get(p) == k}
    common = common or {}
    parts = placed.split(".") if placed else []
    chain = [".".join(parts[:i + 1]) for i in range(len(parts))]
    return {p: common.get(p, f"!{index}") for p in chain if p in known}


def _kernel_order(info):
    """kernel_information.json's kernels in the order the package runs them (their debug
    handles count up in that order)."""
    kernels = []
    for key, value in info.items():
        name, _, handle = key.rpartition(":")
        if not name or not handle.isdigit():
            name, handle = key, "0"
        kernels.append((int(handle), name, value))
    kernels.sort(key=lambda k: k[0])
    return kernels


def _input_specs(torch, args):
    flat = []

    def walk(v):
        if isinstance(v, torch.Tensor):
            dtype = _DTYPES.get(str(v.dtype))
            if dtype is None:
                raise ValueError(f"layerprof_export: input dtype {v.dtype} has no input spec")
            shape = "x".join(str(d) for d in v.shape) if v.dim() else "scalar"
            spec = shape if dtype == "float32" else f"{shape}:{dtype}"
            if not v.is_floating_point() and dtype != "bool" and v.numel():
                # Integers need a range to be drawn from (indices into an embedding): the
                # example's own (LO..HI excludes HI, as torch.randint), so that the default run
                # stays valid.
                spec += f":{int(v.min())}..{int(v.max()) + 1}"
            flat.append(spec)
        elif isinstance(v, (list, tuple)):
            for e in v:
                walk(e)
        elif isinstance(v, dict):
            for e in v.values():
                walk(e)
        else:
            raise ValueError(f"layerprof_export: only tensor inputs can be given to a .pt2 "
                             f"from C (got {type(v).__name__})")
    walk(args)
    return flat


def build_map(model, ep, kernel_info, example_args, dynamic_shapes=None):
    """The layerprof map of a compiled model (see the module docstring)."""
    torch = _torch()
    innermost, stacks, stack_calls = _node_modules(ep)
    symbols, input_dims, printer, binding = layerprof_shapes.input_constraints(
        model, ep, example_args, dynamic_shapes)
    # A module held under two paths (a shared submodule) is one module: named_modules() lists it
    # under its first path, and the export names each call by the path it was reached through.
    first, alias = {}, {}
    for path, mod in model.named_modules(remove_duplicate=False):
        alias[path] = first.setdefault(id(mod), path)
    innermost = {node: alias.get(path, path) for node, path in innermost.items()}
    graph_calls = {}
    for _key, path in stack_calls:
        path = alias.get(path, path)
        graph_calls[path] = graph_calls.get(path, 0) + 1
    # One eager forward at the example, hooked: each call's output shape, and the calls.
    eager = layerprof_shapes.eager_out_shapes(model, example_args)
    calls, without_nodes = _module_calls(model, eager, graph_calls)
    sizes = _module_sizes(model)
    known = {path for path, _ in model.named_modules()}
    flops, no_formula = layerprof_shapes.module_flops(ep, {
        node: _known_path(path, known) for node, path in innermost.items()})
    out_shapes = layerprof_shapes.module_out_shapes(model, eager, ep, alias, printer, binding,
                                                    bool(symbols))
    modules = []
    for path, mod in model.named_modules():
        sp, tp, sb, tb = sizes[path]
        has_forward = type(mod).forward is not torch.nn.Module.forward  # ModuleList: none
        modules.append({"path": path, "class": type(mod).__name__, "calls": calls.get(path, 0),
                        "graph_calls": graph_calls.get(path, 0) if path else 1,
                        "has_forward": has_forward,
                        "self_params": sp, "params": tp, "self_bytes": sb, "bytes": tb,
                        "flops": _written(printer, flops.get(path, 0)),
                        "out_shapes": out_shapes.get(path, [])})
    kernels = []
    for index, (handle, name, value) in enumerate(_kernel_order(kernel_info)):
        paths = []
        for node in value.get("pre_grad_nodes") or []:
            p = _known_path(innermost.get(node, ""), known)
            if p not in paths:
                paths.append(p)
        if not paths:
            paths = [""]
        placed = _lca(paths)
        kernels.append({"name": name, "handle": handle, "module": placed,
                        "fused": sorted(paths) if len(paths) > 1 else [],
                        "call_keys": _call_keys(value.get("pre_grad_nodes") or [], stacks, alias,
                                                placed, known, index)})
    return {"format": MAP_FORMAT, "version": MAP_VERSION, "torch": torch.__version__,
            "inputs": _input_specs(torch, example_args), "input_dims": input_dims,
            "symbols": symbols, "no_formula": no_formula, "calls_from": "forward hooks",
            "calls_without_nodes": without_nodes, "modules": modules, "kernels": kernels}


def _module_calls(model, eager, graph_calls):
    """Each module's calls per forward, and the modules called without a node in the graph.

    The graph's count (one nn_module_stack key per call) misses a module whose forward leaves no
    node: nn.Identity, StochasticDepth or Dropout in eval mode return their input, so the export
    has nothing of theirs. Eager forward hooks at the example count every call; the package's
    graph is fixed for the whole of each dynamic range, so these counts hold at every size it
    accepts. Where the graph counts more (a forward reached without __call__, which hooks do not
    see), the graph's count stands. A module held under two paths is counted under its first."""
    calls, without_nodes = {"": 1}, []
    for path, mod in model.named_modules():
        if not path:
            continue
        hooked = len(eager.get(id(mod), []))
        calls[path] = max(hooked, graph_calls.get(path, 0))
        if hooked and not graph_calls.get(path, 0):
            without_nodes.append(path)
    return calls, without_nodes


def _known_path(p, known):
    """The module path named_modules() lists for a node's path (its nearest listed ancestor)."""
    while p and p not in known:
        p = p.rpartition(".")[0]
    return p


def _written(printer, e):
    """A figure as the map writes it: an int, an expression in the symbols, or None when the
    expression has what the shim's grammar cannot say."""
    try:
        return printer(e)
    except ValueError:
        return None


def _archive_prefix(zf):
    names = zf.namelist()
    for n in names:
        if n.endswith("data/aotinductor/model/kernel_information.json"):
            return n[: -len("data/aotinductor/model/kernel_information.json")]
    return None


def export_pt2(model, example_args, path, torchscript=False, dynamic_shapes=None):
    """Compiles `model` with `example_args` (a tuple, as torch.export takes them) to the
    AOTInductor package `path`, with layerprof's module map in it. `dynamic_shapes` is
    torch.export's: the dims it makes dynamic may take any size in their range when layerprof
    runs the package (the example inputs stay its default inputs). With `torchscript`, also
    writes the same model as TorchScript beside it (path with .pt), for `layerprof diff`.
    Returns the package path."""
    torch = _torch()
    if not isinstance(example_args, tuple):
        raise TypeError("layerprof_export: example_args must be a tuple, as torch.export takes")
    model = model.eval()
    check_dynamic_examples(model, example_args, dynamic_shapes)
    with torch.no_grad():
        ep = torch.export.export(model, example_args, dynamic_shapes=dynamic_shapes)
        configs = {"cpp.enable_kernel_profile": True, "trace.provenance_tracking_level": 1}
        pkg = torch._inductor.aoti_compile_and_package(ep, package_path=path,
                                                       inductor_configs=configs)
    with zipfile.ZipFile(pkg) as zf:
        prefix = _archive_prefix(zf)
        if prefix is None:
            raise RuntimeError("layerprof_export: the package has no kernel_information.json: "
                               "this torch does not record kernel provenance")
        info = json.loads(zf.read(prefix + "data/aotinductor/model/kernel_information.json"))
    lp_map = build_map(model, ep, info, example_args, dynamic_shapes)
    with zipfile.ZipFile(pkg, "a", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(prefix + MAP_RECORD, json.dumps(lp_map, indent=1))
    if torchscript:
        ts_path = re.sub(r"\.pt2$", "", path) + ".pt"
        with torch.no_grad():
            try:
                ts = torch.jit.script(model)
            except Exception:  # noqa: BLE001  (not scriptable: trace the same example)
                ts = torch.jit.trace(model, example_args)
        extra = {"layerprof.inputs": "\n".join(lp_map["inputs"])}
        torch.jit.save(ts, ts_path, _extra_files=extra)
    return pkg


def _per_input(model, example_args, dynamic_shapes):
    """torch.export's dynamic_shapes, one entry per example argument (a tuple or list of them,
    or a dict by the forward's parameter names)."""
    if isinstance(dynamic_shapes, dict):
        names = list(inspect.signature(model.forward).parameters)
        return [dynamic_shapes.get(n) for n in names[:len(example_args)]]
    return list(dynamic_shapes) + [None] * (len(example_args) - len(dynamic_shapes))


def _is_dynamic(dim):
    """A dim spec torch.export must keep symbolic: a Dim, or Dim.DYNAMIC; not None, an int,
    Dim.STATIC, or Dim.AUTO (which lets torch.export specialise the dim without complaint)."""
    text = repr(dim)
    return (dim is not None and not isinstance(dim, int) and "STATIC" not in text
            and "AUTO" not in text)


def check_dynamic_examples(model, example_args, dynamic_shapes):
    """torch.export specialises a dimension whose example size is 0 or 1 to that constant, so a
    dynamic spec on it fails after tracing with "Constraints violated ... specialized it to be a
    constant (1)". Said here, before any work, naming the input and the dimension."""
    if not dynamic_shapes:
        return
    for i, (arg, spec) in enumerate(zip(example_args, _per_input(model, example_args,
                                                                  dynamic_shapes))):
        if spec is None or not hasattr(arg, "shape"):
            continue
        dims = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for d, dim in dims:
            if _is_dynamic(dim) and d < len(arg.shape) and arg.shape[d] in (0, 1):
                raise ValueError(
                    f"layerprof_export: input {i} dimension {d} is dynamic ({dim}) but its "
                    f"example size is {arg.shape[d]}: torch.export fixes sizes 0 and 1 to "
                    "constants, so the export would fail. Give an example of size 2 or more "
                    "there: the package still accepts every size of the dynamic range, 1 "
                    "included")


def _parse_shape(spec, torch):
    shape, _, dtype = spec.partition(":")
    dims = [] if shape == "scalar" else [int(d) for d in shape.split("x")]
    dt = getattr(torch, dtype or "float32", None)
    if not isinstance(dt, torch.dtype):
        raise SystemExit(f"layerprof_export: unknown dtype '{dtype}' in --input {spec}")
    if dt.is_floating_point:
        return torch.randn(dims, dtype=dt)
    return torch.zeros(dims, dtype=dt)


def parse_dynamic(specs, n_inputs, torch):
    """--dynamic INPUT:DIM=MIN..MAX[:NAME] (MIN or MAX may be left out) -> torch.export's
    dynamic_shapes, one dict per input. Dims given one NAME are one symbol: they must have equal
    sizes in every run."""
    if not specs:
        return None
    shapes = [None] * n_inputs
    dims = {}
    for spec in specs:
        m = re.fullmatch(r"(\d+):(\d+)=(\d*)\.\.(\d*)(?::([A-Za-z_]\w*))?", spec)
        if not m:
            raise SystemExit(f"layerprof_export: --dynamic {spec}: expected "
                             "INPUT:DIM=MIN..MAX[:NAME], e.g. 0:1=2..512:seq")
        i, d = int(m[1]), int(m[2])
        if i >= n_inputs:
            raise SystemExit(f"layerprof_export: --dynamic {spec}: there are {n_inputs} inputs")
        lo = int(m[3]) if m[3] else None
        hi = int(m[4]) if m[4] else None
        name = m[5] or f"input{i}_dim{d}"
        kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
        if name in dims and dims[name][1] != kw:
            raise SystemExit(f"layerprof_export: --dynamic {spec}: {name} was given another range")
        if name not in dims:
            dims[name] = (torch.export.Dim(name, **kw), kw)
        shapes[i] = shapes[i] or {}
        shapes[i][d] = dims[name][0]
    return tuple(shapes)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Export a model to an AOTInductor .pt2 package layerprof can profile.")
    ap.add_argument("factory", help="MODULE:CALLABLE that returns the nn.Module, e.g. "
                    "torchvision.models:resnet18")
    ap.add_argument("--input", action="append", required=True,
                    help="an example input SHAPE[:DTYPE] (e.g. 1x3x224x224), once per argument")
    ap.add_argument("-o", "--output", required=True, help="the .pt2 to write")
    ap.add_argument("--torchscript", action="store_true",
                    help="also write the TorchScript .pt of the same model beside it")
    ap.add_argument("--dynamic", action="append", metavar="INPUT:DIM=MIN..MAX[:NAME]",
                    help="make dimension DIM of input INPUT dynamic, from MIN to MAX (either may "
                    "be left out); dims with one NAME share one size (e.g. 0:0=1..64:batch)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch = _torch()
    mod_name, _, attr = args.factory.partition(":")
    if not attr:
        ap.error("factory must be MODULE:CALLABLE")
    sys.path.insert(0, os.getcwd())
    factory = getattr(importlib.import_module(mod_name), attr)
    torch.manual_seed(args.seed)
    model = factory()
    example = tuple(_parse_shape(s, torch) for s in args.input)
    dynamic = parse_dynamic(args.dynamic, len(example), torch)
    try:
        pkg = export_pt2(model, example, args.output, torchscript=args.torchscript,
                         dynamic_shapes=dynamic)
    except ValueError as e:  # what the helper itself checks: the message says what to change
        print(e, file=sys.stderr)
        return 2
    print(f"layerprof_export: wrote {pkg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares layerprof's per-module CUDA totals with torch.profiler's, for one TorchScript model.

    cuda_compare.py --layerprof BUILD/layerprof [--model models/resnet18.pt] [--iterations 20]
                    [--warmup 5] [--timing cupti|events|auto] [--tolerance 0.05]
                    [--total-tolerance 0.02] [--device cuda] [--unoptimized]

Runs on a machine with a GPU and a Python whose torch has CUDA (the pip wheel). Both sides run
the same TorchScript file, with the same input shape (the one recorded in the file, or --input),
with the TorchScript optimizer on, as the model runs in production (layerprof's default markers
mode keeps it on; --unoptimized turns it off on both sides and runs layerprof in hooks mode).

layerprof side: the CLI with `--format json` (docs/json-schema.md: cuda_total_ns per module, summed
over the iterations); a CLI without --format is read from its ASCII tree instead.

torch.profiler side: a profile with CUDA activity and `with_modules=True`, exported as a Chrome
trace. Every kernel, memcpy and memset is joined to the CPU op that launched it through their
"External id", and that op's "Module Hierarchy" (TOP(ResNet)::forward.layer1(Sequential)::forward.
0(BasicBlock)::forward.conv1(Conv2d)::forward.) gives the module path. A module's CUDA total is
the device time of everything launched inside it or its submodules, per forward.

Prints one row per module: both totals in microseconds per forward and their difference. Exits 1
when a module holding at least 1% of the model's CUDA time differs by more than --tolerance
(relative), or the model's totals by more than --total-tolerance.

Also prints what each costs, per forward until the device is idle: layerprof's run.forward_ns
(JSON), and torch.profiler's profiled forwards against the same model's unprofiled ones in this
process (the anchor for bench/bench_cuda.c's figures).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DTYPES = {
    "float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "bfloat16",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
    "bool": "bool",
}


# ---- layerprof -----------------------------------------------------------------------------------

def run_layerprof(args):
    """{path: cuda_total_us per forward} from the CLI, the notes it printed, and its container
    modules' paths (ModuleList, ModuleDict: the JSON report's `container`)."""
    base = [args.layerprof, args.model, "--device", args.device, "--warmup", str(args.warmup),
            "--iterations", str(args.iterations), "--cuda-timing", args.timing]
    if args.unoptimized:
        base += ["--mode", "hooks"]
    for spec in args.input or []:
        base += ["--input", spec]
    p = subprocess.run(base + ["--format", "json"], capture_output=True, text=True)
    if p.returncode == 0:
        doc = json.loads(p.stdout)
        its = doc["iterations"] or 1
        out, containers = {}, set()
        for m in doc["modules"]:
            if "cuda_total_ns" in m:
                out[m["path"]] = m["cuda_total_ns"] / its / 1e3
            if m.get("container"):
                containers.add(m["path"])
        run = doc.get("run", {})
        out_notes = run.get("notes", [])
        if run.get("forward_ns"):
            out_notes = out_notes + [f"forward until the device is idle: "
                                     f"{run['forward_ns'] / 1e3:.1f} us"]
        return out, out_notes, containers
    if "format" not in p.stderr:
        sys.exit(f"layerprof failed ({p.returncode}):\n{p.stderr}")
    # An older CLI: read the ASCII tree.
    p = subprocess.run(base + ["--ascii", "--units", "us", "--columns", "cuda_total"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"layerprof failed ({p.returncode}):\n{p.stderr}")
    rows, notes = parse_tree(p.stdout)
    return rows, notes, set()  # the tree does not say which modules are containers


def parse_tree(text):
    """The ASCII tree view with one column (cuda_total, us): {path: us}, notes.

    A row's label is its tree glyphs then its name; a module at depth d >= 1 has d + 3 glyph
    characters ending in "-- " ("|-- a", "|`-- a1", "| `-- x"). The label column is as wide as
    the header's first cell."""
    rows, notes, stack = {}, [], []
    width, section = None, 0
    for line in text.splitlines():
        if width is None:
            if " | " in line:
                width = line.index(" | ")
            continue
        if re.match(r"^-+\|", line):  # the rule under the header, then the one above Total
            section += 1
            continue
        if section == 1:
            label, value = line[:width].rstrip(), line[width + 3:].strip()
            k = label.find("-- ")  # depth d: d + 3 glyph characters, so "-- " starts at d
            depth, name = (0, label.strip()) if k < 0 else (k, label[k + 3:].strip())
            del stack[depth:]
            stack.append(name)
            if value:
                rows[".".join(stack[1:])] = float(value.replace("us", ""))
        elif section >= 2 and line.strip() and not line.startswith("Total"):
            notes.append(line.strip())
    return rows, notes


# ---- torch.profiler ------------------------------------------------------------------------------

ENTRY = re.compile(r"([A-Za-z0-9_]*)\(([^)]*)\)::([A-Za-z0-9_]+)\.")


def module_path(hierarchy):
    """'TOP(Net)::forward.a(Block)::forward.SELF(Block)::helper.' -> 'a'."""
    names = [inst for inst, _cls, _fn in ENTRY.findall(hierarchy) if inst not in ("TOP", "SELF", "")]
    return ".".join(names)


def make_inputs(torch, model_path, args, device):
    specs = args.input
    if not specs:
        extra = {"layerprof.inputs": ""}
        torch.jit.load(model_path, map_location="cpu", _extra_files=extra)
        text = extra["layerprof.inputs"]
        text = text.decode() if isinstance(text, bytes) else text
        specs = [s for s in text.splitlines() if s.strip()]
    if not specs:
        sys.exit(f"{model_path} records no input shape: pass --input SHAPE[:DTYPE]")
    out = []
    for spec in specs:
        parts = spec.split(":")
        shape = [int(v) for v in parts[0].split("x")]
        dtype = getattr(torch, DTYPES.get(parts[1] if len(parts) > 1 else "float32", "float32"))
        fill = parts[2] if len(parts) > 2 else "random"
        if dtype.is_floating_point:
            t = torch.ones(shape) if fill == "ones" else torch.zeros(shape) if fill == "zeros" \
                else torch.rand(shape)
        else:
            lo, hi = (0, 2)
            if ".." in fill:
                lo, hi = [int(float(v)) for v in fill.split("..")]
            t = torch.randint(lo, hi, shape)
        out.append(t.to(dtype).to(device))
    return out


def without_containers(lp_paths, containers):
    """{torch.profiler's name: layerprof's path} for the modules inside a container.

    torch.profiler's "Module Hierarchy" names a ModuleList's item from the forward that iterates
    the list, without the list: torch 2.11 on the H200 gave `encoder.0` where the module is
    `encoder.layers.0` (30.8 us on both sides). A short name two modules share (two lists under
    one parent, both with an item 0) is ambiguous there, since torch.profiler's row holds both:
    it is left unmatched rather than compared with one of them."""
    alias, taken = {}, set()
    for p in lp_paths:
        parts = p.split(".") if p else []
        kept = [s for k, s in enumerate(parts) if ".".join(parts[:k + 1]) not in containers]
        short = ".".join(kept)
        if short == p or short in lp_paths:
            continue
        if short in alias or short in taken:
            alias.pop(short, None)
            taken.add(short)
        else:
            alias[short] = p
    return alias


def self_test():
    lp = ["", "embed", "encoder", "encoder.layers", "encoder.layers.0", "encoder.layers.0.linear1",
          "blocks", "blocks.a"]
    alias = without_containers(lp, {"encoder.layers", "blocks"})
    want = {"encoder.0": "encoder.layers.0", "encoder.0.linear1": "encoder.layers.0.linear1",
            "a": "blocks.a"}
    if alias != want:
        sys.exit(f"self-test: without_containers gave {alias}, expected {want}")
    # A short name that is itself a module is never taken over.
    if without_containers(["", "x", "x.0", "0"], {"x"}) != {}:
        sys.exit("self-test: a short name that is a module was aliased")
    # Two lists under one parent, and three items sharing a name: ambiguous, never matched.
    two = ["", "enc", "enc.a", "enc.a.0", "enc.b", "enc.b.0", "enc.a.1"]
    if without_containers(two, {"enc.a", "enc.b"}) != {"enc.1": "enc.a.1"}:
        sys.exit(f"self-test: ambiguous names gave {without_containers(two, {'enc.a', 'enc.b'})}")
    three = ["", "l", "l.0", "l.0.1", "l.1", "l.1.1", "l.2", "l.2.1"]
    if "1" in without_containers(three, {"l", "l.0", "l.1", "l.2"}):
        sys.exit("self-test: a name three modules share was matched")
    print("self-test: ok")
    return 0


def subtree_totals(per_path, iterations):
    """Per forward, each module's own time plus everything below it (the root is "")."""
    totals = {}
    for path, us in per_path.items():
        parts = path.split(".") if path else []
        for k in range(len(parts) + 1):
            p = ".".join(parts[:k])
            totals[p] = totals.get(p, 0.0) + us
    return {p: us / iterations for p, us in totals.items()}


def run_torch_profiler(args):
    """{path: cuda_total_us per forward} from torch.profiler on the same TorchScript file."""
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)  # torch.jit, with_modules
    warnings.filterwarnings("ignore", message=".*NumPy.*")
    import torch
    from torch.profiler import ProfilerActivity, profile

    import time

    torch._C._set_graph_executor_optimize(not args.unoptimized)
    device = torch.device(args.device)
    model = torch.jit.load(args.model, map_location=device).eval()
    inputs = make_inputs(torch, args.model, args, device)
    cuda = device.type == "cuda"
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(*inputs)
        if cuda:
            torch.cuda.synchronize()
        def timed_forward():
            t0 = time.perf_counter_ns()
            model(*inputs)
            if cuda:
                torch.cuda.synchronize()
            return time.perf_counter_ns() - t0

        plain = sorted(timed_forward() for _ in range(args.iterations))
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=acts, with_modules=True) as prof:
            profiled = sorted(timed_forward() for _ in range(args.iterations))
    cost = (plain[len(plain) // 2] / 1e3, profiled[len(profiled) // 2] / 1e3)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc

    op_path = {}  # External id of a CPU op -> module path
    for e in events:
        a = e.get("args") or {}
        if e.get("cat") == "cpu_op" and "Module Hierarchy" in a and "External id" in a:
            op_path[a["External id"]] = module_path(a["Module Hierarchy"])
    per_path, unattributed, device_total = {}, 0.0, 0.0
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        dur = float(e.get("dur", 0.0))  # us
        device_total += dur
        path = op_path.get((e.get("args") or {}).get("External id"))
        if path is None:
            unattributed += dur
            continue
        per_path[path] = per_path.get(path, 0.0) + dur
    totals = subtree_totals(per_path, args.iterations)
    n = args.iterations
    return totals, unattributed / n, device_total / n, len(op_path), cost


# ---- report --------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layerprof", required=True, help="the layerprof binary")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--model", default=os.path.join(here, "..", "models", "resnet18.pt"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--input", action="append", help="SHAPE[:DTYPE[:FILL]], as layerprof reads")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--timing", default="auto", choices=["auto", "cupti", "events"])
    ap.add_argument("--unoptimized", action="store_true",
                    help="TorchScript's optimizer off on both sides (layerprof in hooks mode)")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--total-tolerance", type=float, default=0.02)
    ap.add_argument("--self-test", action="store_true", help="check the name matching and exit")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not os.path.exists(args.model):
        sys.exit(f"no model at {args.model}")

    lp, notes, containers = run_layerprof(args)
    tp, tp_unattributed, tp_device, n_ops, (plain_us, profiled_us) = run_torch_profiler(args)
    for note in notes:
        print(f"layerprof: {note}")
    print(f"torch.profiler: {n_ops} ops with a module hierarchy; device time per forward "
          f"{tp_device:.1f} us, {tp_unattributed:.1f} us of it outside any module")
    print(f"torch.profiler: forward until the device is idle {profiled_us:.1f} us profiled, "
          f"{plain_us:.1f} us unprofiled (x{profiled_us / max(plain_us, 1e-9):.3f}, medians)")
    if not lp:
        print("layerprof recorded no CUDA time (CPU device, or --cuda-timing off?)")
    if not tp:
        print("torch.profiler recorded no device time joined to a module")
    if not lp or not tp:
        return 0 if args.device == "cpu" else 1

    alias = without_containers(set(lp), containers)
    renamed = [q for q in tp if q in alias]
    tp = {alias.get(q, q): us for q, us in tp.items()}
    if renamed:
        print(f"torch.profiler: {len(renamed)} module(s) named without their container "
              f"({renamed[0]} is {alias[renamed[0]]}): matched to layerprof's paths")
    root = max(lp.get("", 0.0), tp.get("", 0.0)) or 1.0
    paths = sorted(set(lp) | set(tp), key=lambda p: (p.count(".") if p else -1, p))
    # Model order: the JSON is in named_modules() order; keep it.
    order = list(lp) + [p for p in paths if p not in lp]
    w = max(len(p or "(model)") for p in order)
    print(f"\n{'module':<{w}}  {'layerprof us':>13}  {'torch us':>10}  {'diff':>7}")
    print(f"{'-' * w}  {'-' * 13}  {'-' * 10}  {'-' * 7}")
    bad, unseen = [], 0
    for p in order:
        a, b = lp.get(p), tp.get(p)
        if a is None and b is None:
            continue
        big = max(a or 0.0, b or 0.0) >= 0.01 * root
        tol = args.total_tolerance if p == "" else args.tolerance
        if a is not None and b is not None and max(a, b) > 0:
            d = (a - b) / max(b, 1e-9)
            ds = f"{100 * d:+6.1f}%"
            if big and abs(d) > tol:
                bad.append(p)
                ds += " !"
        elif b is None:
            # torch.profiler's "Module Hierarchy" has no row for some modules (a ModuleList,
            # never called; its items are matched by without_containers): not a difference.
            ds = "   n/a"
            unseen += 1
        else:
            ds = "   -"
            if big:
                bad.append(p)
        sa = f"{a:13.1f}" if a is not None else f"{'-':>13}"
        sb = f"{b:10.1f}" if b is not None else f"{'-':>10}"
        print(f"{p or '(model)':<{w}}  {sa}  {sb}  {ds}")
    if unseen:
        print(f"\n{unseen} module(s) have no row in torch.profiler's module hierarchy (n/a): "
              "their kernels are in an ancestor's row there")
    if bad:
        print(f"\nDIFFERS: {len(bad)} module(s) with >= 1% of the CUDA time differ by more than "
              f"{100 * args.tolerance:.0f}% (the model's total: {100 * args.total_tolerance:.0f}%): "
              f"{', '.join(p or '(model)' for p in bad)}")
        return 1
    print(f"\nAGREES: every module with >= 1% of the CUDA time within {100 * args.tolerance:.0f}%, "
          f"the model's total within {100 * args.total_tolerance:.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

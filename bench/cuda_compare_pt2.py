#!/usr/bin/env python3
"""A CUDA AOTInductor package's per-module CUDA time, layerprof's against torch.profiler's on the
same model run eagerly. Run on a GPU for resnet18 (H200, torch 2.11, 2026-11-27); the transformer
failed to export there, fixed since (ExportableTransformer) and traced on the CPU only.

    cuda_compare_pt2.py --layerprof BUILD/layerprof --model resnet18|transformer --out DIR
                        [--iterations 20] [--warmup 5] [--trace-only]

Runs on a GPU machine with a Python whose torch has CUDA (bench/cuda_check.sh's step 5b calls it).

1. Exports the model for CUDA with python/layerprof_export.py's export_pt2 (model and example
   inputs on the GPU), to DIR/NAME.cuda.pt2.
2. layerprof side: the CLI on the package, `--device cuda --format json`: cuda_total_ns per module.
   Its rule (docs/pt2.md): a kernel's device time goes to the module the map places the kernel in;
   a kernel that fused several modules' nodes, to their lowest common ancestor.
3. torch.profiler side: the eager model on the same inputs, each module's forward wrapped in a
   record_function range "lp::PATH" (forward pre/post hooks). Every kernel, memcpy and memset is
   joined through its correlation id to the runtime/driver call that launched it, and that call to
   the innermost "lp::" range around it on its thread: a module's CUDA total is everything
   launched inside it or its submodules, per forward.

Prints one row per module: both totals (us per forward) and their difference. Reported, never
judged: the package runs other kernels than eager PyTorch (fused, other algorithms), and a fused
kernel counts in the ancestor on layerprof's side and in each module on eager's, so per-module
totals are expected to differ where Inductor fused across modules. Exits 0 when both sides
recorded device time, 1 otherwise (2: bad arguments).
"""
import argparse
import bisect
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_compare import subtree_totals  # noqa: E402 (bench/ beside this file)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def exportable_transformer(torch, tiny_transformer):
    """TinyTransformer with its causal mask declared (is_causal=True): the same modules and the
    same result, but torch.export can trace it. Given a mask alone, nn.TransformerEncoder compares
    it with a causal one (torch.equal), a data-dependent branch that torch.export refuses
    ("Could not guard on data-dependent expression Eq(u0, 1)", torch 2.11 and 2.15)."""

    class ExportableTransformer(tiny_transformer):
        def forward(self, ids):
            x = self.embed(ids)
            mask = torch.nn.Transformer.generate_square_subsequent_mask(ids.size(1),
                                                                        device=x.device)
            x = self.encoder(x, mask=mask, is_causal=True)
            return self.head(x.mean(dim=1))

    return ExportableTransformer


def build_model(torch, name, device):
    """(model, example args) on `device`."""
    if name == "resnet18":
        import torchvision

        model = torchvision.models.resnet18(weights=None)
        args = (torch.randn(1, 3, 224, 224),)
    elif name == "transformer":  # the bench's TinyTransformer (models/export.py)
        models = os.path.join(ROOT, "models")
        sys.path.insert(0, models)  # export.py imports patterns.py beside it
        spec = importlib.util.spec_from_file_location("lp_models", os.path.join(models, "export.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        model = exportable_transformer(torch, mod.TinyTransformer)()
        args = (torch.randint(0, 1000, (1, 16), dtype=torch.int64),)
    else:
        sys.exit(f"cuda_compare_pt2: unknown model '{name}' (resnet18, transformer)")
    model = model.eval().to(device)
    return model, tuple(a.to(device) for a in args)


def export(torch, model, args, path):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from layerprof_export import export_pt2

    export_pt2(model, args, path)
    return path


def run_layerprof(args, package):
    cmd = [args.layerprof, package, "--device", "cuda", "--warmup", str(args.warmup),
           "--iterations", str(args.iterations), "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"layerprof failed ({p.returncode}):\n{p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    its = doc["iterations"] or 1
    out = {m["path"]: m["cuda_total_ns"] / its / 1e3 for m in doc["modules"]
           if "cuda_total_ns" in m}
    return out, doc.get("run", {}).get("notes", [])


def run_eager(torch, model, inputs, args):
    from torch.profiler import ProfilerActivity, profile, record_function

    ranges = {}

    def pre(path):
        def hook(_module, _args):
            r = record_function("lp::" + path)
            r.__enter__()
            ranges.setdefault(path, []).append(r)
        return hook

    def post(path):
        def hook(_module, _args, _out):
            ranges[path].pop().__exit__(None, None, None)
        return hook

    handles = []
    for path, m in model.named_modules():
        handles.append(m.register_forward_pre_hook(pre(path)))
        handles.append(m.register_forward_hook(post(path)))
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(*inputs)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(args.iterations):
                model(*inputs)
            torch.cuda.synchronize()
    for h in handles:
        h.remove()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc

    # The "lp::" ranges per thread, sorted by start; the launches by correlation id.
    spans = {}
    launches = {}
    for e in events:
        a = e.get("args") or {}
        if e.get("ph") != "X":
            continue
        if e.get("name", "").startswith("lp::"):
            spans.setdefault(e.get("tid"), []).append(
                (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), e["name"][4:]))
        elif e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in a:
            launches[a["correlation"]] = (e.get("tid"), float(e["ts"]))
    for v in spans.values():
        v.sort()
    per_path, device_total, unattributed = {}, 0.0, 0.0
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        dur = float(e.get("dur", 0.0))
        device_total += dur
        launch = launches.get((e.get("args") or {}).get("correlation"))
        path = None
        if launch:
            tid, ts = launch
            thread_spans = spans.get(tid, [])
            # The innermost range around the launch: the latest-starting one that contains it.
            i = bisect.bisect_right(thread_spans, (ts, float("inf"), ""))
            for start, end, p in reversed(thread_spans[:i]):
                if start <= ts <= end:
                    path = p
                    break
        if path is None:
            unattributed += dur
            continue
        per_path[path] = per_path.get(path, 0.0) + dur
    n = args.iterations
    return subtree_totals(per_path, n), device_total / n, unattributed / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layerprof", required=True)
    ap.add_argument("--model", required=True, choices=["resnet18", "transformer"])
    ap.add_argument("--out", required=True, help="where the package is written")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--trace-only", action="store_true",
                    help="on the CPU: build the model and trace it with torch.export, nothing "
                    "else (CI's check that what the GPU step exports can be exported)")
    args = ap.parse_args()
    import torch

    if args.trace_only:
        model, inputs = build_model(torch, args.model, torch.device("cpu"))
        torch.export.export(model, inputs)
        print(f"cuda_compare_pt2: {args.model} traced by torch.export {torch.__version__}")
        return 0
    if not torch.cuda.is_available():
        print("cuda_compare_pt2: no GPU: nothing compared")
        return 1
    os.makedirs(args.out, exist_ok=True)
    device = torch.device("cuda")
    model, inputs = build_model(torch, args.model, device)
    package = export(torch, model, inputs, os.path.join(args.out, f"{args.model}.cuda.pt2"))
    lp, notes = run_layerprof(args, package)
    tp, tp_device, tp_unattributed = run_eager(torch, model, inputs, args)
    for note in notes:
        print(f"layerprof: {note}")
    print(f"torch.profiler (eager): device time per forward {tp_device:.1f} us, "
          f"{tp_unattributed:.1f} us of it outside any module")
    if not lp or not tp:
        print("one side recorded no CUDA time joined to a module: "
              f"layerprof {len(lp)} rows, torch.profiler {len(tp)} rows")
        return 1
    order = list(lp) + [p for p in tp if p not in lp]
    w = max(len(p or "(model)") for p in order)
    print(f"\n{'module':<{w}}  {'package us':>11}  {'eager us':>9}  {'diff':>7}")
    for p in order:
        a, b = lp.get(p), tp.get(p)
        d = f"{100 * (a - b) / b:+6.1f}%" if a is not None and b else "     -"
        sa = f"{a:11.1f}" if a is not None else f"{'-':>11}"
        sb = f"{b:9.1f}" if b is not None else f"{'-':>9}"
        print(f"{p or '(model)':<{w}}  {sa}  {sb}  {d}")
    a, b = lp.get("", 0.0), tp.get("", 0.0)
    print(f"\nREPORTED: model {a:.1f} us (package) vs {b:.1f} us (eager); per-module rows differ "
          "where Inductor fused across modules (docs/pt2.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Export layerprof's test and benchmark models as TorchScript files.

Run with Debian's interpreter, which has python3-torch 1.13 and python3-torchvision 0.14:

    /usr/bin/python3 models/export.py --out DIR [--only NAME[,NAME...]] [--jobs N]

For every model NAME this writes:

  DIR/NAME.pt           torch.jit.script'ed module (eval mode, weights from torch.manual_seed(0)),
                        saved with the extra file 'layerprof.inputs' = default input spec, one line
                        per input: SHAPE[:DTYPE][:FILL], e.g. "1x3x224x224:float32:random",
                        "1x16:int64:0..999".
  DIR/NAME.counts.json  true per-module call counts for ONE forward, recorded on the eager
                        nn.Module (before scripting) with forward hooks on every named_modules()
                        entry: {"model", "inputs", "order", "calls", "classes"}; root path is "".
                        A module held by two parents is in "order" under both paths, each call
                        counted under the path of the parent that made it; "aliases" maps each
                        later path to the first.
  DIR/memory_known.expected.json
                        expected allocated/freed/retained/peak bytes per module of memory_known.

After saving, each file is loaded back with torch.jit.load and run on its default input, and
the scripted module's named_modules() paths and short class names are checked against the eager
ones.

Every model is exported in its own fresh interpreter process: TorchScript mangles class names
(___torch_mangle_N) with a process-wide counter, so exporting in one process would make a
model's file depend on which models were exported before it (and on --only). The child
processes run with PYTHONHASHSEED=0, as the order of a class's constants in the saved code
follows Python's (otherwise randomised) set order.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

try:
    import torch
except ImportError:
    sys.exit(f"export.py: {sys.executable} cannot import torch; run it with /usr/bin/python3 "
             "(Debian's python3-torch 1.13 and python3-torchvision 0.14)")
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from typing import List, Tuple

from patterns import PATTERNS

# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------


class Cell(nn.Module):
    """LSTM cell written out with two Linear layers and pointwise ops (not nn.LSTM/LSTMCell,
    which TorchScript runs as one aten::lstm / lstm_cell op)."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden)
        self.hh = nn.Linear(hidden, 4 * hidden)

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> Tuple[Tensor, Tensor]:
        gates = self.ih(x) + self.hh(h)
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        return h, c


class LSTMCellLoop(nn.Module):
    """Op-bound model: the cell runs once per time step inside forward (16 steps)."""

    def __init__(self, input_size: int = 16, hidden: int = 32, classes: int = 10):
        super().__init__()
        self.hidden = hidden
        self.cell = Cell(input_size, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: Tensor) -> Tensor:  # x: batch x steps x features
        h = x.new_zeros([x.size(0), self.hidden])
        c = x.new_zeros([x.size(0), self.hidden])
        for t in range(x.size(1)):
            h, c = self.cell(x[:, t], h, c)
        return self.head(h)


class TinyTransformer(nn.Module):
    """Embedding + 2-layer causal TransformerEncoder + mean-pool + Linear head.

    The causal src_mask keeps the encoder layers off PyTorch's inference fast path
    (torch._transformer_encoder_layer_fwd, one op per layer, taken only when no mask is given and
    grad is off). So the submodules (self_attn, linear1, norm1, ...) are really called, in eager
    and scripted runs alike, whatever the grad mode. self_attn.out_proj is never called as a
    module (MultiheadAttention uses its weight directly): 0 calls."""

    def __init__(self, vocab: int = 1000, d_model: int = 64, classes: int = 10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=4, dim_feedforward=128,
                                           dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids: Tensor) -> Tensor:  # ids: batch x seq, int64
        x = self.embed(ids)
        s = ids.size(1)
        mask = torch.triu(torch.full([s, s], float("-inf"), device=x.device), diagonal=1)
        x = self.encoder(x, mask=mask)
        return self.head(x.mean(dim=1))


class Block(nn.Module):
    """Custom block holding an nn.Sequential, plus a helper method that calls a child."""

    def __init__(self, ch: int):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(ch, ch, 3, padding=1, bias=False),
            nn.BatchNorm2d(ch),
            nn.ReLU(),
        )
        self.proj = nn.Conv2d(ch, ch, 1)

    def _mix(self, a: Tensor, x: Tensor) -> Tensor:
        # helper method (not forward) calling a child: self.proj runs inside it
        return a + self.proj(x)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self._mix(self.body(x), x))


class Nested(nn.Module):
    """Tree-shape test model.
    (a) self.block is ONE instance called twice per forward (so block, block.body, block.body.0,
        ... block.proj: 2 calls each);
    (b) Block holds an nn.Sequential (block.body) and calls a child from a helper method;
    (c) functional ops (torch.relu, torch.flatten) and a residual add in the root's forward;
    (d) self.unused is defined but never called: 0 calls."""

    def __init__(self, ch: int = 8, classes: int = 10):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.block = Block(ch)
        self.unused = nn.Linear(ch, ch)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(ch, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = torch.relu(self.stem(x))
        y = self.block(x)
        y = self.block(y) + x  # same instance again, then a residual add
        y = torch.flatten(self.pool(y), 1)
        return self.head(y)


class MakeBig(nn.Module):
    """Returns a fresh 1000x1000 float32 tensor: one allocation of exactly 4,000,000 bytes,
    alive after the call (it is the output). Uses x so nothing can be constant-folded."""

    def forward(self, x: Tensor) -> Tensor:
        return x.new_ones([1000, 1000])


class TempBig(nn.Module):
    """Allocates a temporary 1000x1000 float32 (4,000,000 B, freed inside the call) and returns
    a 1-element copy of it (4 B).
    - new_full, not new_ones: with the graph optimizer on, submodules are inlined and CSE would
      merge two identical x.new_ones([1000, 1000]) calls into one allocation.
    - a copy of one element, not .sum(): a parallel sum over 1e6 elements allocates a small
      per-thread buffer (8 B with 2 threads), so its bytes would depend on the thread count."""

    def forward(self, x: Tensor) -> Tensor:
        t = x.new_full([1000, 1000], 0.5)
        return t[0, :1].clone()


class MemoryKnown(nn.Module):
    """Memory test model, input 1x1 float32. Expected bytes on the CPU allocator, per call
    (see MEMORY_EXPECTED; 'retained' = allocated inside the call and still alive at its exit,
    'peak' = highest live bytes allocated inside the call, relative to its entry):
      make_big: allocated 4,000,000  freed 0          retained 4,000,000  peak 4,000,000
      temp_big: allocated 4,000,004  freed 4,000,000  retained 4          peak 4,000,004
      root:     allocated 12,000,004 freed 8,000,004  retained 4,000,000  peak 8,000,004
    root timeline: big 4M | temp 4M (8M) | copy 4 B (8M+4) | temp freed | big+small 4M (8M+4) |
    big and small freed -> the 4,000,000 B output remains."""

    def __init__(self):
        super().__init__()
        self.make_big = MakeBig()
        self.temp_big = TempBig()

    def forward(self, x: Tensor) -> Tensor:
        big = self.make_big(x)
        small = self.temp_big(x)
        return big + small


MEMORY_EXPECTED = {
    "model": "memory_known",
    "units": "bytes",
    "device": "cpu",
    "definitions": {
        "allocated": "bytes allocated inside the call (children included)",
        "freed": "bytes freed inside the call (children included)",
        "retained": "bytes allocated inside the call (children included) still alive at its exit",
        "peak": "maximum of live bytes allocated inside the call, relative to its entry",
    },
    "modules": {
        "make_big": {"calls": 1, "allocations": 1, "allocated": 4000000, "freed": 0,
                     "retained": 4000000, "peak": 4000000},
        "temp_big": {"calls": 1, "allocations": 2, "allocated": 4000004, "freed": 4000000,
                     "retained": 4, "peak": 4000004},
        "": {"calls": 1, "allocations": 4, "allocated": 12000004, "freed": 8000004,
             "retained": 4000000, "peak": 8000004},
    },
    "notes": "Exact for a TorchScript run on the CPU allocator, graph optimizer on or off, any "
             "thread count (the interpreter frees values after their last use). The input tensor "
             "(1x1) is allocated before the forward and is not counted. Allocation order: "
             "make_big 4000000; temp_big 4000000, 4, free 4000000; root add 4000000, "
             "free 4000000 (big), free 4 (small).",
}


class Branch(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class Forked(nn.Module):
    """torch.jit.fork of a submodule (branch_a) and of a helper method that calls a submodule
    (_run_b -> branch_b), while the calling thread runs trunk; then torch.jit.wait on both."""

    def __init__(self, d: int = 64, classes: int = 10):
        super().__init__()
        self.branch_a = Branch(d)
        self.branch_b = Branch(d)
        self.trunk = Branch(d)
        self.head = nn.Linear(d, classes)

    def _run_b(self, x: Tensor) -> Tensor:
        return torch.tanh(self.branch_b(x))

    def forward(self, x: Tensor) -> Tensor:
        fa = torch.jit.fork(self.branch_a, x)
        fb = torch.jit.fork(self._run_b, x)
        t = self.trunk(x)
        a = torch.jit.wait(fa)
        b = torch.jit.wait(fb)
        return self.head(t + a + b)


def _tv(name):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return build


# name -> (builder, default input spec lines)
MODELS = {
    "alexnet": (_tv("alexnet"), ["1x3x224x224:float32:random"]),
    "resnet18": (_tv("resnet18"), ["1x3x224x224:float32:random"]),
    "mobilenet_v2": (_tv("mobilenet_v2"), ["1x3x224x224:float32:random"]),
    "transformer": (TinyTransformer, ["1x16:int64:0..999"]),
    "lstm_cell": (LSTMCellLoop, ["1x16x16:float32:random"]),
    "nested": (Nested, ["1x3x16x16:float32:random"]),
    "memory_known": (MemoryKnown, ["1x1:float32:ones"]),
    "forked": (Forked, ["4x64:float32:random"]),
}
# The structures that can trip module boundaries (patterns.py); some are traced.
MODELS.update({name: (builder, spec) for name, (builder, spec, _) in PATTERNS.items()})
TRACED = {name for name, (_, _, how) in PATTERNS.items() if how == "trace"}

# ---------------------------------------------------------------------------------------------
# Input specs (layerprof syntax: SHAPE[:DTYPE][:FILL], and structured arguments)
# ---------------------------------------------------------------------------------------------

DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
          "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}


def make_input(line: str, gen: torch.Generator):
    """One forward argument from its --input text: a tensor spec, or the structured syntax
    (lists, tuples, dicts, int:/float:/bool:/str: scalars, none) that layerprof parses."""
    value, rest = parse_value(line.strip(), gen, top=True)
    if rest.strip():
        raise ValueError(f"unexpected {rest!r} in {line!r}")
    return value


def parse_value(text: str, gen: torch.Generator, top: bool = False):
    """(value, rest of text): the grammar of layerprof's src/config/input_parse.c."""
    text = text.lstrip()
    closers = {"[": "]", "(": ")", "{": "}"}
    if text[:1] in closers:
        close, items, keys = closers[text[0]], [], []
        text = text[1:].lstrip()
        while not text.startswith(close):
            if close == "}":
                key, text = text.split(":", 1) if not text.startswith("int:") else \
                    ("int:" + text[4:].split(":", 1)[0], text[4:].split(":", 1)[1])
                keys.append(int(key[4:]) if key.startswith("int:") else key.strip())
            item, text = parse_value(text, gen)
            items.append(item)
            text = text.lstrip()
            if text.startswith(","):
                text = text[1:].lstrip()
        text = text[1:]
        if close == "]":
            return items, text
        if close == ")":
            return tuple(items), text
        return dict(zip(keys, items)), text
    end = len(text) if top else min([i for i in (text.find(c) for c in ",)]}") if i >= 0],
                                    default=len(text))
    atom, rest = text[:end].strip(), text[end:]
    if atom == "none":
        return None, rest
    for prefix, kind in (("int:", int), ("float:", float), ("str:", str)):
        if atom.startswith(prefix):
            return kind(atom[len(prefix):]), rest
    if atom.startswith("bool:"):
        return atom == "bool:true", rest
    return make_tensor(atom, gen), rest


def make_tensor(line: str, gen: torch.Generator) -> Tensor:
    parts = line.strip().split(":")
    shape = [int(s) for s in parts[0].split("x")]
    dtype, fill = torch.float32, "random"
    for p in parts[1:]:
        if p in DTYPES:
            dtype = DTYPES[p]
        else:
            fill = p
    if fill == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if fill == "ones":
        return torch.ones(shape, dtype=dtype)
    if ".." in fill:
        lo, hi = (int(v) for v in fill.split(".."))
        return torch.randint(lo, hi + 1, shape, generator=gen).to(dtype)
    if fill != "random":
        raise ValueError(f"bad fill {fill!r} in {line!r}")
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    raise ValueError(f"integer dtype needs a LO..HI fill: {line!r}")


# ---------------------------------------------------------------------------------------------
# Export of one model (runs in its own process)
# ---------------------------------------------------------------------------------------------


def count_calls(model: nn.Module, inputs: List[Tensor]):
    """Eager calls per module path, in the order TorchScript lists the modules. A module held by
    two parents is listed under both paths (eager's named_modules() lists it once), and TorchScript
    makes it two module objects (sharing their parameters): each call is counted under the path
    of the parent that made it, found from the stack of modules running at the time. "aliases"
    maps each later path of such a module to its first."""
    order = [path for path, _ in model.named_modules(remove_duplicate=False)]
    first = {}
    aliases = {}
    for path, mod in model.named_modules(remove_duplicate=False):
        if id(mod) in first:
            aliases[path] = first[id(mod)]
        else:
            first[id(mod)] = path
    modules = dict(model.named_modules(remove_duplicate=False))
    calls = {path: 0 for path in order}
    running = []  # paths of the modules whose forward is running, innermost last

    def path_of(mod):
        if not running:
            return ""
        top = running[-1]
        for name, child in modules[top].named_children():
            if child is mod:
                return f"{top}.{name}" if top else name
        return first[id(mod)]  # called by a module that does not hold it

    def pre_hook(mod, _i):
        path = path_of(mod)
        calls[path] += 1
        running.append(path)

    def hook(_m, _i, _o):
        running.pop()

    handles = []
    for _, mod in model.named_modules():
        handles.append(mod.register_forward_pre_hook(pre_hook))
        handles.append(mod.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    classes = {path: type(mod).__name__
               for path, mod in model.named_modules(remove_duplicate=False)}
    return order, calls, classes, aliases


def script_type_name(sm) -> str:
    # short class name as the C++ side sees it: type()->name()->name()
    qn = sm._c._type().qualified_name()
    return qn.rsplit(".", 1)[-1]


def export_one(name: str, out: str) -> dict:
    builder, spec_lines = MODELS[name]
    spec = "\n".join(spec_lines) + "\n"
    t0 = time.perf_counter()

    torch.manual_seed(0)
    model = builder().eval()
    gen = torch.Generator().manual_seed(1234)
    inputs = [make_input(l, gen) for l in spec_lines]

    order, calls, classes, aliases = count_calls(model, inputs)
    order2, calls2, _, _ = count_calls(model, inputs)
    if calls2 != calls or order2 != order:
        raise SystemExit(f"{name}: eager call counts differ between two forwards")
    with torch.no_grad():
        eager_out = model(*inputs)

    method = "trace" if name in TRACED else "script"
    try:
        sm = torch.jit.script(model) if method == "script" else torch.jit.trace(model, tuple(inputs))
    except Exception as e:  # only where scripting is impossible
        print(f"{name}: torch.jit.script failed ({type(e).__name__}: {str(e).splitlines()[0]}); "
              f"falling back to torch.jit.trace", file=sys.stderr)
        method = "trace"
        sm = torch.jit.trace(model, tuple(inputs))
    sm.eval()

    path = os.path.join(out, name + ".pt")
    torch.jit.save(sm, path, _extra_files={"layerprof.inputs": spec})

    # --- check: load back, run, compare tree and output ---
    extra = {"layerprof.inputs": ""}
    loaded = torch.jit.load(path, map_location="cpu", _extra_files=extra)
    got_spec = extra["layerprof.inputs"]
    if isinstance(got_spec, bytes):
        got_spec = got_spec.decode()
    errors = []
    if got_spec != spec:
        errors.append(f"extra file layerprof.inputs reads back {got_spec!r}, expected {spec!r}")
    s_paths = [p for p, _ in loaded.named_modules()]
    if s_paths != order:
        errors.append("scripted named_modules() paths differ from eager:\n"
                      f"  eager only:    {[p for p in order if p not in s_paths]}\n"
                      f"  scripted only: {[p for p in s_paths if p not in order]}\n"
                      f"  (same set, different order)" * (set(s_paths) == set(order)))
    else:
        s_classes = {p: script_type_name(m) for p, m in loaded.named_modules()}
        bad = [f"{p!r}: eager {classes[p]} scripted {s_classes[p]}"
               for p in order if s_classes[p] != classes[p]]
        if bad:
            errors.append("short class names differ: " + "; ".join(bad))
    with torch.no_grad():
        for _ in range(2):  # optimizer on: first runs are the profiling executor's
            out_s = loaded(*inputs)
    # A dict output (pat_structured) is compared value by value.
    pairs = ([(out_s[k], eager_out[k]) for k in eager_out] if isinstance(eager_out, dict)
             else [(out_s, eager_out)])
    for got, want in pairs:
        # atol scaled: untrained mobilenet_v2's logits are ~1e-9
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-5 * want.abs().max().item()):
            errors.append(f"scripted output differs from eager: max abs diff "
                          f"{(got - want).abs().max().item()}")
    if errors:
        raise SystemExit(f"ERROR {name}:\n  " + "\n  ".join(errors))

    counts = {"model": name, "inputs": spec_lines, "export": method,
              "order": order, "calls": calls, "classes": classes}
    if aliases:
        counts["aliases"] = aliases
    with open(os.path.join(out, name + ".counts.json"), "w") as f:
        json.dump(counts, f, indent=1)
        f.write("\n")
    if name == "memory_known":
        with open(os.path.join(out, "memory_known.expected.json"), "w") as f:
            json.dump(MEMORY_EXPECTED, f, indent=1)
            f.write("\n")

    return {"name": name, "seconds": round(time.perf_counter() - t0, 2), "method": method,
            "modules": len(order), "called": sum(1 for p in order if calls[p] > 0),
            "calls": sum(calls.values()), "bytes": os.path.getsize(path)}


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--only", help="comma-separated model names (default: all): "
                    + ",".join(MODELS))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="models exported in parallel, one process each (default: %(default)s)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: export one model in-process
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    if args.one:
        # harmless 1.13 warning from scripting nn.TransformerEncoderLayer
        warnings.filterwarnings("ignore", message="'batch_first' was found in ScriptModule constants")
        torch.set_num_threads(1)
        print("RESULT " + json.dumps(export_one(args.one, args.out)), flush=True)
        return

    names = list(MODELS) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; known: {','.join(MODELS)}")

    t0 = time.perf_counter()
    print(f"torch {torch.__version__}, exporting {len(names)} model(s) to {args.out}")
    # TorchScript writes a class's Final constants in set order: fix str hashing so the files are
    # byte-identical from run to run.
    env = dict(os.environ, PYTHONHASHSEED="0")
    pending = list(names)
    running = []
    failed = []
    results = {}
    while pending or running:
        while pending and len(running) < max(1, args.jobs):
            n = pending.pop(0)
            p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--out", args.out,
                                  "--one", n], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, env=env)
            running.append((n, p))
        n, p = running.pop(0)
        text, _ = p.communicate()
        res = None
        for line in text.splitlines():
            if line.startswith("RESULT "):
                res = json.loads(line[7:])
            elif line.strip():
                print(f"  [{n}] {line}")
        if p.returncode != 0 or res is None:
            failed.append(n)
            print(f"FAILED {n} (exit {p.returncode})")
            continue
        results[n] = res
        print(f"{n:14s} {res['seconds']:6.2f} s  {res['method']:6s} modules {res['modules']:3d} "
              f"(called {res['called']}, calls {res['calls']})  {res['bytes'] / 1e6:7.1f} MB")
    print(f"total {time.perf_counter() - t0:.1f} s")
    if failed:
        print(f"ERROR: failed: {','.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

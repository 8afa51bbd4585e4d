#!/usr/bin/env python3
"""Exports the AOTInductor packages the .pt2 tests run, with the wheel's Python (torch 2.x):

    .deps/torch2/bin/python tests/integration/pt2_models.py OUT_DIR

For each model NAME below, through python/layerprof_export.py (the helper users run): export_pt2,
or for pat_loops its command line:

  OUT_DIR/NAME.pt2          the package, with layerprof's module map
  OUT_DIR/NAME.counts.json  eager forward-hook calls per module path for one forward (the same
                            recorder as models/export.py), {"calls": {path: n}, "aliases": {...}}
  OUT_DIR/NAME.pt           (resnet18, lstm_cell, memory_stages) the same model as TorchScript,
                            for `layerprof diff` and the memory checks

and OUT_DIR/nested_nomap.pt2: the nested model compiled by AOTInductor directly, without
layerprof's map (its kernels go to the root, with a note). The models are models/'s own builders
with the same default inputs; a model torch.export cannot take is a failure, not a skip.

memory_stages (MemoryStages below: relu then matmul, twice) has activations known to the byte,
for check_pt2_memory.py's --memory checks, with its TorchScript file beside it.

transformer_dyn (DynTransformer below) is the one package with dynamic shapes: exported through
the helper's command line with a dynamic batch (1..64) and sequence length (2..512), and as
TorchScript beside it, so that the FLOPs the package's map works out for other shapes can be
compared with the TorchScript path's at those shapes.
"""

import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "models"), os.path.join(ROOT, "python")]

import torch  # noqa: E402
from torch import nn  # noqa: E402

from export import MODELS, count_calls, make_input  # noqa: E402
import layerprof_export  # noqa: E402
from layerprof_export import export_pt2  # noqa: E402

# resnet18 and lstm_cell: a convolutional model and an op-heavy one (pointwise ops in a loop); then the module patterns
# torch.export can trace (pat_branches branches on data and pat_structured takes non-tensor
# arguments: AOTInductor packages take tensors, in a fixed graph).
NAMES = ["resnet18", "lstm_cell", "nested", "pat_loops", "pat_lists", "pat_shared",
         "pat_traced", "pat_state", "pat_identity", "transformer_dyn", "memory_stages"]
WITH_TORCHSCRIPT = {"resnet18", "lstm_cell", "transformer_dyn", "memory_stages"}
THROUGH_COMMAND_LINE = {"pat_loops", "transformer_dyn"}  # the command line's --input SHAPE[:DTYPE]
# The dynamic dims, as the command line's --dynamic says them (docs/pt2.md).
DYNAMIC = {"transformer_dyn": ["0:0=1..64:batch", "0:1=2..512:seq"]}


class DynTransformer(nn.Module):
    """Embedding + nn.TransformerEncoderLayer + mean-pool + Linear head, for dynamic batch and
    sequence length. Three heads: an odd count keeps the layer off PyTorch's fused inference
    path (torch._transformer_encoder_layer_fwd), so eager, TorchScript and the export all run its
    submodules (self_attn, linear1, norm1, ...)."""

    def __init__(self, vocab: int = 1000, d_model: int = 48, classes: int = 10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.layer = nn.TransformerEncoderLayer(d_model=d_model, nhead=3, dim_feedforward=96,
                                                dropout=0.1, batch_first=True)
        self.head = nn.Linear(d_model, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids: batch x seq, int64
        return self.head(self.layer(self.embed(ids)).mean(dim=1))


MODELS["transformer_dyn"] = (DynTransformer, ["2x16:int64:0..999"])


class MemoryStage(nn.Module):
    """relu, then a matmul by an (i x o) weight: the matmul is an extern kernel whose output
    buffer Inductor cannot fuse away, so each stage's activations are known to the byte."""

    def __init__(self, i: int, o: int):
        super().__init__()
        self.w = nn.Parameter(torch.randn(i, o))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) @ self.w


class MemoryStages(nn.Module):
    """The known-activation package of check_pt2_memory.py, input 8x64 float32: s1 = relu (8x64,
    2048 B) then matmul to 8x128 (4096 B); s2 = relu (8x128, 4096 B) then matmul to 8x32
    (1024 B). The package runs s2's relu in place on s1's output; TorchScript allocates it."""

    def __init__(self):
        super().__init__()
        self.s1 = MemoryStage(64, 128)
        self.s2 = MemoryStage(128, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.s2(self.s1(x))


MODELS["memory_stages"] = (MemoryStages, ["8x64"])


class SkipInEval(nn.Module):
    """torchvision's StochasticDepth in shape: in training it drops each sample's input with
    probability p; in eval mode it returns its input, so an export holds no node of it."""

    def __init__(self, p: float = 0.2):
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty(x.shape[0], 1, device=x.device).bernoulli_(1 - self.p)
        return x * keep / (1 - self.p)


class IdentityBlocks(nn.Module):
    """Modules that leave no node in an exported graph (nn.Identity, StochasticDepth and Dropout
    in eval mode), called once, twice and inside a Sequential: a package must still count their
    calls as eager does (efficientnet_b0, swin_t, convnext_tiny and maxvit_t hold such modules)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.skip = nn.Identity()
        self.depth = SkipInEval()
        self.dropout = nn.Dropout(0.1)
        self.blocks = nn.Sequential(nn.Identity(), nn.ReLU(), SkipInEval())
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.skip(self.fc1(x))
        x = x + self.depth(x)
        x = self.blocks(self.dropout(x))
        return self.fc2(self.skip(x))


MODELS["pat_identity"] = (IdentityBlocks, ["2x8"])


def export_one(name, out):
    builder, spec = MODELS[name]
    torch.manual_seed(0)
    model = builder().eval()
    gen = torch.Generator().manual_seed(0)
    inputs = [make_input(line, gen) for line in spec]
    _order, calls, _classes, aliases = count_calls(model, inputs)
    path = os.path.join(out, name + ".pt2")
    if name in THROUGH_COMMAND_LINE:  # the helper's command line, as a user types it
        shapes = [":".join(line.split(":")[:2]) for line in spec]  # SHAPE:DTYPE, no fill
        # By name: run as a script, this file's classes are __main__'s, not pt2_models'.
        module = "pt2_models" if builder.__name__ == "DynTransformer" else "patterns"
        args = [f"{module}:{builder.__name__}", "-o", path]
        for shape in shapes:
            args += ["--input", shape]
        for dim in DYNAMIC.get(name, []):
            args += ["--dynamic", dim]
        if name in WITH_TORCHSCRIPT:
            args.append("--torchscript")
        if layerprof_export.main(args) != 0:
            raise SystemExit(f"pt2_models: layerprof_export.py {' '.join(args)} failed")
    else:
        export_pt2(model, tuple(inputs), path, torchscript=name in WITH_TORCHSCRIPT)
    with open(os.path.join(out, name + ".counts.json"), "w") as f:
        json.dump({"model": name, "calls": calls, "aliases": aliases}, f, indent=1)


def export_without_map(out):
    builder, spec = MODELS["nested"]
    torch.manual_seed(0)
    model = builder().eval()
    gen = torch.Generator().manual_seed(0)
    args = tuple(make_input(line, gen) for line in spec)
    with torch.no_grad():
        ep = torch.export.export(model, args)
        torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(out, "nested_nomap.pt2"),
            inductor_configs={"cpp.enable_kernel_profile": True})


def check_size_one_refused(out):
    """A dynamic dim whose example size is 1 is refused before torch.export runs (which would
    fail late: "specialized it to be a constant (1)"), naming the input and the dimension: from
    export_pt2 and from the command line (exit 2)."""
    batch = torch.export.Dim("batch", min=1, max=64)
    ids = torch.zeros(1, 16, dtype=torch.int64)
    try:
        export_pt2(DynTransformer().eval(), (ids,), os.path.join(out, "never.pt2"),
                   dynamic_shapes=({0: batch},))
        raise SystemExit("pt2_models: a dynamic batch with an example of size 1 was not refused")
    except ValueError as e:
        if "input 0 dimension 0 is dynamic" not in str(e) or "size is 1" not in str(e):
            raise SystemExit(f"pt2_models: the size-1 refusal does not say where: {e}")
    # nn.Identity: a factory with no arguments whose import changes nothing here (importing
    # pt2_models again would put its own DynTransformer in MODELS).
    rc = layerprof_export.main(["torch.nn:Identity", "-o", os.path.join(out, "never.pt2"),
                                "--input", "1x16", "--dynamic", "0:0=1..64:batch"])
    if rc != 2 or os.path.exists(os.path.join(out, "never.pt2")):
        raise SystemExit(f"pt2_models: the command line took a size-1 dynamic example (exit {rc})")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    warnings.filterwarnings("ignore")
    only = sys.argv[2].split(",") if len(sys.argv) > 2 else NAMES + ["nested_nomap"]
    check_size_one_refused(out)
    for name in only:
        print(f"pt2_models: exporting {name}", flush=True)
        if name == "nested_nomap":
            export_without_map(out)
        else:
            export_one(name, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Small models, one per structure that can trip module boundaries on an optimised graph.

Each is exported by export.py like the other models (scripted, or traced where named), with its
eager forward-hook call counts: every mode that claims exact calls must reproduce them. They come
from real models: torchvision's FPN (two ModuleLists indexed through helper methods),
torchaudio's emformer (a list comprehension calling a module), tacotron2 (a module whose one op
the caller's optimizer can merge), DenseNet (a loop over a ModuleDict-like list; a layer whose
forward is overloaded with @torch.jit._overload_method) and detection heads (a module shared by
two parents). pat_structured takes the argument kinds detection and NLP models take (List[Tensor], tuples, dicts, scalars, strings, Optional) and returns a dict.
"""

from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
from torch import Tensor


class Scale(nn.Module):
    """One pointwise op: after inlining, two calls on the same input are one CSE candidate."""

    def forward(self, x: Tensor) -> Tensor:
        return x * 2.0


class Loops(nn.Module):
    """A loop calling one module, back-to-back calls of one module, and a one-op module called
    twice on the same input (the optimizer's CSE may merge its two ops into one)."""

    def __init__(self, d: int = 32):
        super().__init__()
        self.step = nn.Linear(d, d)
        self.twice = nn.Linear(d, d)
        self.scale = Scale()

    def forward(self, x: Tensor) -> Tensor:
        for _ in range(3):
            x = torch.relu(self.step(x))
        x = self.twice(self.twice(x))
        return self.scale(x) + self.scale(x)


class Pyramid(nn.Module):
    """No forward: its parent calls its methods, as RAFT's corr_block (build_pyramid once,
    index_pyramid per iteration). Eager hooks count 0 calls; its child counts its own."""

    def __init__(self, d: int = 32):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def build(self, x: Tensor) -> Tensor:
        return self.fc(x)

    def index(self, x: Tensor) -> Tensor:
        return x[:, :4]


class Branches(nn.Module):
    """if/else on data, a helper method called twice that calls a submodule, a module only
    reached through the branch that is not taken, and a module without forward whose methods
    its parent calls."""

    def __init__(self, d: int = 32):
        super().__init__()
        self.pos = nn.Linear(d, d)
        self.neg = nn.Linear(d, d)
        self.helped = nn.Linear(d, d)
        self.drop = nn.Dropout(0.5)
        self.pyramid = Pyramid(d)

    def _helper(self, x: Tensor) -> Tensor:
        return torch.tanh(self.helped(x))

    def forward(self, x: Tensor) -> Tensor:
        if bool(x.sum() > -1e9):
            x = self.pos(x)
        else:
            x = self.neg(x)
        x = self._helper(x) + self._helper(x)
        x = self.pyramid.build(x)
        x = x + self.pyramid.index(x).sum()
        return self.drop(x)


class Lists(nn.Module):
    """ModuleList iteration, len(), indexing through enumerate, two ModuleLists under one parent
    whose elements share their names ("0", "1"), and a list comprehension calling a module, as
    torchvision's FPN and torchaudio's emformer do."""

    def __init__(self, d: int = 16, n: int = 3):
        super().__init__()
        self.inner = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        self.outer = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        self.each = nn.Linear(d, d)

    def _inner_at(self, x: Tensor, idx: int) -> Tensor:
        out = x
        for i, m in enumerate(self.inner):
            if i == idx:
                out = m(x)
        return out

    def _outer_at(self, x: Tensor, idx: int) -> Tensor:
        out = x
        for i, m in enumerate(self.outer):
            if i == idx:
                out = m(x)
        return out

    def forward(self, x: Tensor) -> Tensor:
        ys: List[Tensor] = []
        for i in range(len(self.inner)):
            ys.append(self._outer_at(self._inner_at(x, i), i))
        for m in self.inner:
            x = m(x)
        parts = [self.each(t) for t in torch.unbind(x, 0)]
        return torch.stack(parts, 0) + ys[0] + ys[len(ys) - 1]


class Leaf(nn.Module):
    def __init__(self, shared: nn.Module, d: int = 16):
        super().__init__()
        self.shared = shared
        self.own = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        return self.own(self.shared(x))


class Shared(nn.Module):
    """One module held by two parents (and called through both)."""

    def __init__(self, d: int = 16):
        super().__init__()
        common = nn.Linear(d, d)
        self.a = Leaf(common, d)
        self.b = Leaf(common, d)

    def forward(self, x: Tensor) -> Tensor:
        return self.b(self.a(x))


class Traced(nn.Module):
    """Exported with torch.jit.trace: loops unrolled, a ModuleList and a nested Sequential."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.ReLU()) for _ in range(3)])
        self.head = nn.Linear(d, 4)

    def forward(self, x: Tensor) -> Tensor:
        for b in self.blocks:
            x = b(x)
        x = self.blocks[0](x)
        return self.head(x)


class State(nn.Module):
    """Keeps its last output in a buffer, as streaming models keep their state: each forward
    frees the tensor the previous one stored, which a memory profile that began in between
    never saw allocated (libtorch logs a warning about it: layerprof must keep it quiet)."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.register_buffer("last", torch.zeros(2, d))

    def forward(self, x: Tensor) -> Tensor:
        y = self.fc(x)
        self.last = y * 1.0
        return y


class CustomOp(nn.Module):
    """Calls an operator of torchvision's op library (roi_align), as detection models do: a C
    process must load that library before the model (layerprof --load-library)."""

    def __init__(self):
        super().__init__()
        import torchvision  # noqa: F401  registers torch.ops.torchvision
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        boxes = torch.tensor([[0.0, 0.0, 0.0, 4.0, 4.0]], dtype=x.dtype)
        return torch.ops.torchvision.roi_align(self.conv(x), boxes, 1.0, 2, 2, -1, False)


class Structured(nn.Module):
    """A list of images of different sizes (as torchvision's detection models take), a tuple
    holding a loop count, a dict, scalars, a string, an optional tensor; a dict comes out."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.mix = nn.Linear(8, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, images: List[Tensor], pair: Tuple[Tensor, int], extra: Dict[str, Tensor],
                scale: float, flag: bool, mode: str,
                bias: Optional[Tensor]) -> Dict[str, Tensor]:
        feats = [self.stem(im.unsqueeze(0)).mean(dim=[2, 3]) for im in images]
        x = torch.cat(feats, 0) * scale
        t, repeats = pair
        for _ in range(repeats):
            x = x + self.mix(t)
        if flag:
            x = x + extra["shift"]
        if bias is not None:
            x = x + bias
        if mode == "double":
            x = x * 2
        out: Dict[str, Tensor] = {}
        out["scores"] = self.head(x)
        out["features"] = x
        return out


class Overload(nn.Module):
    """A forward declared with @torch.jit._overload_method, as torchvision's DenseNet layer and
    torchaudio's RNNs declare theirs: TorchScript compiles one method per signature (forward__0,
    forward__1) and none named forward, yet its parent calls it like any module."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.fc = nn.Linear(d, d)

    @torch.jit._overload_method  # noqa: F811
    def forward(self, x: Tensor) -> Tensor:
        pass

    @torch.jit._overload_method  # noqa: F811
    def forward(self, x: List[Tensor]) -> Tensor:
        pass

    def forward(self, x):  # noqa: F811
        if isinstance(x, Tensor):
            parts = [x]
        else:
            parts = x
        return self.fc(torch.stack(parts, 0).sum(0))


class Overloads(nn.Module):
    """Calls an overloaded module once with each signature: a tensor, then a list (DenseNet's
    _DenseLayer takes both)."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.layer = Overload(d)
        self.head = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        y = self.layer(x)
        return self.head(self.layer([x, y]))


# name -> (builder, default input spec lines, export method)
PATTERNS = {
    "pat_loops": (Loops, ["2x32:float32:random"], "script"),
    "pat_branches": (Branches, ["2x32:float32:random"], "script"),
    "pat_lists": (Lists, ["2x16:float32:random"], "script"),
    "pat_shared": (Shared, ["2x16:float32:random"], "script"),
    "pat_traced": (Traced, ["2x16:float32:random"], "trace"),
    "pat_state": (State, ["2x16:float32:random"], "script"),
    "pat_overload": (Overloads, ["2x16:float32:random"], "script"),
    "pat_customop": (CustomOp, ["1x3x8x8:float32:random"], "script"),
    "pat_structured": (Structured, ["[3x8x8, 3x6x10]", "(2x8, int:2)", "{shift: 2x4}",
                                    "float:0.5", "bool:true", "str:double", "none"], "script"),
}

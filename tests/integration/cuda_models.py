#!/usr/bin/env python3
"""Exports the TorchScript models of the gpu-labelled tests (tests/integration/test_cuda_gpu.c).

    cuda_models.py --out DIR

Exporting needs no GPU: the models have no parameters (the input drives everything) and are loaded
onto the device by layerprof. Written at build time by cmake/LpCudaTests.cmake with LP_PYTHON.

cuda_matmul.pt (input 4096x4096 float32, recorded in the file):
    big    torch.mm(x, x)          2 * 4096^3 = 137 GFLOP: milliseconds on any GPU
    small  torch.mm of a 16x16 slice of x: a few microseconds
    root   adds one element of each: one tiny kernel
so `big` holds nearly all of the model's CUDA total.
"""
import argparse
import os
import sys

import torch
from torch import Tensor, nn


class Big(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return torch.mm(x, x)


class Small(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        s = x[:16, :16]
        return torch.mm(s, s)


class CudaMatmul(nn.Module):
    def __init__(self):
        super().__init__()
        self.big = Big()
        self.small = Small()

    def forward(self, x: Tensor) -> Tensor:
        return self.big(x)[:1, :1] + self.small(x)[:1, :1]


MODELS = {"cuda_matmul": (CudaMatmul, "4096x4096:float32")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, (cls, spec) in MODELS.items():
        path = os.path.join(args.out, name + ".pt")
        sm = torch.jit.script(cls().eval())
        tmp = path + ".tmp"
        torch.jit.save(sm, tmp, _extra_files={"layerprof.inputs": spec})
        # Check it loads and runs (small input: the real one is for the GPU).
        loaded = torch.jit.load(tmp, map_location="cpu")
        out = loaded(torch.ones(32, 32))
        if tuple(out.shape) != (1, 1):
            print(f"{name}: unexpected output shape {tuple(out.shape)}", file=sys.stderr)
            return 1
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Scripts the GPU bench's torchvision models with this machine's torch (bench/cuda_check.sh).

    cuda_bench_models.py --out DIR

Writes DIR/resnet50.pt (input 32x3x224x224: a batch where the GPU is busy) and
DIR/deeplabv3.pt (deeplabv3_mobilenet_v3_large, input 4x3x320x320, a dict output: segmentation),
random weights, each with its input recorded as models/export.py records it ('layerprof.inputs').
resnet18 and the transformer come from models/ (exported by Debian's torch 1.13, which every 2.x
loads). Exported on the GPU machine itself: a file 2.x writes may not load in an older libtorch.
"""
import argparse
import os
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
import torchvision  # noqa: E402

MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), "32x3x224x224"),
    "deeplabv3": (lambda: torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False), "4x3x320x320"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    for name, (make, spec) in MODELS.items():
        path = os.path.join(args.out, name + ".pt")
        if os.path.exists(path):
            continue
        model = torch.jit.script(make().eval())
        torch.jit.save(model, path, _extra_files={"layerprof.inputs": spec})
        print(f"cuda_bench_models: {path} ({spec})")


if __name__ == "__main__":
    main()

"""Exports torchvision's model NAME (random weights, eval, one 1x3x224x224 input) as an
AOTInductor package with layerprof's module map, for bench/run.sh's packages.

    python export_package.py NAME OUT.pt2

Run it with a Python whose torch is 2.x and matches the libtorch the bench links (the wheel's
venv that scripts/setup.sh makes); the package's kernels are compiled for this machine."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: export_package.py NAME OUT.pt2")
    name, out = sys.argv[1], sys.argv[2]
    import torch
    import torchvision
    from layerprof_export import export_pt2

    if name not in torchvision.models.list_models(torchvision.models):
        sys.exit(f"export_package.py: torchvision has no classification model '{name}'")
    torch.manual_seed(0)
    model = torchvision.models.get_model(name, weights=None).eval()
    tmp = out + ".tmp.pt2"  # a half-written package is never taken for a finished one
    try:
        export_pt2(model, (torch.randn(1, 3, 224, 224),), tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


if __name__ == "__main__":
    main()

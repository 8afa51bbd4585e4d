"""Real models as users have them: torchvision's and torchaudio's (classification, segmentation,
video, optical flow, detection, speech), scripted with random weights by this Python's torch,
profiled by the layerprof CLI in its default mode with the very arguments the eager run had
(saved with torch.save and given with --inputs), and checked against eager forward-pre-hook call
counts, module by module. Run by ctest (integration.real_models):

    /usr/bin/python3 real_models.py LAYERPROF MODELS_DIR WORKDIR [NAME...]

Detection models need torchvision's op library (nms, roi_align), given with --load-library; it is
built for Debian's libtorch 1.13, so against another libtorch those models are skipped, saying so.
"""

import json
import os
import re
import subprocess
import sys
import time

import torch
import torchvision

sys.path.insert(0, sys.argv[2])
from export import count_calls  # noqa: E402  models/export.py: eager calls per module path


def vision(name, **kw):
    def build():
        return torchvision.models.get_model(name, weights=None, **kw)
    return build


def detection(name, **kw):
    def build():
        return torchvision.models.get_model(name, weights=None, weights_backbone=None, **kw)
    return build


def wav2vec2_small():
    import torchaudio
    # The wav2vec2 architecture at a test's size (the base model is 95M parameters).
    return torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=None, extractor_conv_bias=False,
        encoder_embed_dim=64, encoder_projection_dropout=0.0, encoder_pos_conv_kernel=16,
        encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=4,
        encoder_attention_dropout=0.0, encoder_ff_interm_features=128,
        encoder_ff_interm_dropout=0.0, encoder_dropout=0.0, encoder_layer_norm_first=False,
        encoder_layer_drop=0.0, aux_num_out=32)


def conv_tasnet_small():
    import torchaudio
    return torchaudio.models.ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=64,
                                        msk_kernel_size=3, msk_num_feats=32,
                                        msk_num_hidden_feats=64, msk_num_layers=2,
                                        msk_num_stacks=1)


def image(*shape):
    return lambda: (torch.rand(*shape),)


# name -> (builder, arguments, needs torchvision's op library)
CASES = {
    "mobilenet_v3_small": (vision("mobilenet_v3_small"), image(1, 3, 64, 64), False),
    "densenet121": (vision("densenet121"), image(1, 3, 64, 64), False),  # forward overloads
    "shufflenet_v2_x0_5": (vision("shufflenet_v2_x0_5"), image(1, 3, 64, 64), False),
    "efficientnet_b0": (vision("efficientnet_b0"), image(1, 3, 64, 64), False),
    "squeezenet1_1": (vision("squeezenet1_1"), image(1, 3, 64, 64), False),
    "lraspp_mobilenet_v3_large": (  # segmentation: a dict comes out
        detection("lraspp_mobilenet_v3_large"), image(1, 3, 64, 64), False),
    "r3d_18": (vision("r3d_18"), image(1, 3, 4, 32, 32), False),  # video
    "raft_small": (vision("raft_small"),  # optical flow: two frames and the update count
                   lambda: (torch.rand(1, 3, 64, 64), torch.rand(1, 3, 64, 64), 3), False),
    "fasterrcnn_mobilenet_v3_large_320_fpn": (  # detection: List[Tensor] of two sizes
        detection("fasterrcnn_mobilenet_v3_large_320_fpn"),
        lambda: ([torch.rand(3, 160, 160), torch.rand(3, 120, 160)],), True),
    "ssdlite320_mobilenet_v3_large": (  # (not one image: 1.13 cannot read a one-item list)
        detection("ssdlite320_mobilenet_v3_large"),
        lambda: ([torch.rand(3, 160, 160), torch.rand(3, 160, 120)],), True),
    "wav2vec2": (wav2vec2_small, lambda: (torch.rand(1, 4000),), False),  # speech
    "conv_tasnet": (conv_tasnet_small, lambda: (torch.rand(1, 1, 800),), False),
}


def op_library():
    d = os.path.dirname(torchvision.__file__)
    libs = sorted(f for f in os.listdir(d) if re.match(r"_C.*\.so$", f))
    return os.path.join(d, libs[0]) if libs else None


def check(name, layerprof, work, same_torch):
    builder, make_args, needs_ops = CASES[name]
    if needs_ops and not same_torch:
        return "skip", "torchvision's op library is built for another libtorch"
    torch.manual_seed(0)
    model = builder().eval()
    args = make_args()
    order, calls, _, _ = count_calls(model, list(args))
    path = os.path.join(work, name + ".pt")
    saved = os.path.join(work, name + ".args.pt")
    torch.jit.script(model).save(path)
    torch.save(args, saved)
    report = os.path.join(work, name + ".json")
    cmd = [layerprof, path, "--inputs", saved, "--warmup", "1", "--iterations", "1",
           "--format", "json", "--output", report]
    if needs_ops:
        cmd += ["--load-library", op_library()]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return "fail", f"exit {run.returncode}: {run.stderr.strip()}"
    got = {m["path"]: m["calls"] for m in json.load(open(report))["modules"]
           if m.get("kind", "module") == "module"}
    wrong = [f"{p or '<root>'}: {got.get(p)} (eager {calls[p]})" for p in order
             if got.get(p, 0) != calls[p]]
    if wrong:
        return "fail", f"{len(wrong)} of {len(order)} modules: " + "; ".join(wrong[:8])
    called = sum(1 for p in order if calls[p])
    return "ok", f"{len(order)} modules ({called} called, {sum(calls.values())} calls) match eager"


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    layerprof, _, work = sys.argv[1:4]
    names = sys.argv[4:] or list(CASES)
    os.makedirs(work, exist_ok=True)
    version = subprocess.run([layerprof, "--version"], capture_output=True, text=True).stdout
    built = re.search(r"libtorch (\d+\.\d+)", version)
    same_torch = bool(built) and torch.__version__.startswith(built.group(1))
    failures = skipped = 0
    for name in names:
        t0 = time.monotonic()
        try:
            status, what = check(name, layerprof, work, same_torch)
        except Exception as e:  # scripting or saving failed: a finding too
            status, what = "fail", f"{type(e).__name__}: {str(e).splitlines()[0]}"
        failures += status == "fail"
        skipped += status == "skip"
        print(f"{status:4}  {name:40} {time.monotonic() - t0:5.1f} s  {what}", flush=True)
        for f in os.listdir(work):  # the models are large: keep the work directory small
            if f.startswith(name + "."):
                os.remove(os.path.join(work, f))
    print(f"{len(names) - failures - skipped} of {len(names)} real models pass, {failures} fail, "
          f"{skipped} skipped")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

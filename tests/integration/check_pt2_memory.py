#!/usr/bin/python3
"""--memory on AOTInductor packages, per module, through the real CLI (docs/pt2.md, "Memory").

    check_pt2_memory.py LAYERPROF PT2_DIR

PT2_DIR holds what pt2_models.py exported. memory_stages.pt2 (pt2_models.py's MemoryStages, input
8x64 float32) has activations known to the byte; its generated wrapper runs, for each forward:

    buf0 = empty(8x64)   2048 B   cpp_fused_relu_0        (s1)
    buf1 = empty(8x128)  4096 B   aoti_torch_cpu_mm_out   (s1)   buf0 freed
                                  cpp_fused_relu_1 on buf1 in place (s2)
    buf3 = empty(8x32)   1024 B   aoti_torch_cpu_mm_out   (s2)   buf3 returned, buf1 freed

A buffer is the module of the kernel that runs next (its producer), a free the module of the
kernel that ran last (here its last consumer), so per call (calls 1, 3 forwards, min = max), with the
kernels seen through the package's rebound imports and through the callback (--events):

    module  retained  self  peak  net
    s1      4096      4096  6144  4096    buf0 + buf1 at once; buf0 freed after s1's matmul
    s2      1024      1024  1024  -3072   buf3; frees buf1 (s1's output, its input)
    root    1024      0     6144  1024    all of it, none its own; the output stays alive

memory_stages.pt, the same model as TorchScript, agrees except where the memory plans differ:
TorchScript allocates s2's relu (4096 B, the package writes it over buf1), so s2's peak is
4096 + 1024 and the root's 4096 (s1's output) + 4096; every other figure is equal.

resnet18.pt2 against resnet18.pt: the root retains the output (1x1000 float32) and has that net
in both, each convolution and fc retain their output in both (an extern kernel allocates its
output itself), a batch norm (folded, fused) has nothing in the package; what else differs (the
weight layouts the package writes in every forward, buffers reused or written in place) is in
docs/pt2.md. The note under the table says how memory is attributed and
no longer that it is the root's."""

import json
import os
import subprocess
import sys
import tempfile

failures = []

FIELDS = ("retained", "self_retained", "peak", "net")
# Per call, from the wrapper (above): retained, self retained, peak, net.
PACKAGE = {"": (1024, 0, 6144, 1024), "s1": (4096, 4096, 6144, 4096),
           "s2": (1024, 1024, 1024, -3072)}
# The TorchScript file: s2's relu is a buffer of its own (4096 B).
TORCHSCRIPT = {"": (1024, 0, 8192, 1024), "s1": (4096, 4096, 6144, 4096),
               "s2": (1024, 1024, 5120, -3072)}
ITERATIONS = 3


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def report(lp, model, tmp, extra=()):
    out = os.path.join(tmp, os.path.basename(model) + ".json")
    p = subprocess.run([lp, model, "--memory", "--iterations", str(ITERATIONS), "--warmup", "1",
                        *extra, "--format", "json", "--output", out, "--format", "tree"],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"{model}: exit {p.returncode}: {(p.stdout + p.stderr)[-400:]}")
    if p.returncode:
        return {}, ""
    with open(out) as f:
        data = json.load(f)
    return {m["path"]: m for m in data["modules"]}, p.stdout + p.stderr


def per_call(mod, field):
    """The mean per call, and whether every call had the same figure; (None, False, 0) when the
    module has no CPU memory figures (a FAIL line names it where it matters)."""
    s = (((mod or {}).get("memory") or {}).get("cpu") or {}).get(field)
    if not s:
        return None, False, 0
    return s["sum"] / s["n"] if s["n"] else None, s["min"] == s["max"], s["n"]


def check_exact(label, mods, want):
    for path, figures in want.items():
        mod = mods.get(path)
        check(mod is not None, f"{label}: no module '{path}'")
        if mod is None:
            continue
        for field, value in zip(FIELDS, figures):
            mean, same, n = per_call(mod, field)
            check(n == ITERATIONS and same and mean == value,
                  f"{label} '{path}' {field}: {mean} per call over {n} samples "
                  f"(all equal: {same}), expected {value} in each of {ITERATIONS}")


def check_resnet18(lp, d, tmp):
    pkg, _ = report(lp, os.path.join(d, "resnet18.pt2"), tmp)
    ts, _ = report(lp, os.path.join(d, "resnet18.pt"), tmp)
    if not pkg or not ts:
        return
    # Equal: what the root, each convolution (an extern kernel allocating its output) and fc
    # retain, and the root's net. Batch norms are folded or fused: nothing of their own.
    same = [p for p, m in ts.items() if p == "" or m["class"] in ("Conv2d", "Linear")]
    check(len(same) == 22, f"resnet18: {len(same)} modules compared, expected 22")
    for path in same:
        check(path in pkg, f"resnet18: no module '{path}' in the package's report")
        a, b = per_call(pkg.get(path), "retained")[0], per_call(ts[path], "retained")[0]
        check(a == b, f"resnet18 '{path}' retained: package {a}, TorchScript {b}")
        if path:  # its output, alive at once at least: the package's peak holds it
            peak = per_call(pkg.get(path), "peak")[0]
            check(a is not None and a > 0 and peak is not None and peak >= a,
                  f"resnet18 '{path}': package retained {a}, peak {peak}, expected 0 < retained"
                  " <= peak")
    for field in ("retained", "net"):
        a, b = per_call(pkg.get(""), field)[0], per_call(ts.get(""), field)[0]
        check(a == b == 4000, f"resnet18 root {field}: package {a}, TorchScript {b}, expected 4000")
    for path, m in pkg.items():
        if m["class"] == "BatchNorm2d":
            check(per_call(m, "peak")[0] == 0, f"resnet18 '{path}': memory in a folded batch norm")


def main():
    lp, d = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        mods, text = report(lp, os.path.join(d, "memory_stages.pt2"), tmp)
        if mods:
            check_exact("memory_stages.pt2", mods, PACKAGE)
            check("memory is the root's" not in text and "its producer" in text,
                  f"memory_stages.pt2: the note under the table: {text[-600:]}")
        # --events: the kernels come through the RecordFunction callback, ATen ops inside them.
        mods, _ = report(lp, os.path.join(d, "memory_stages.pt2"), tmp, ["--events"])
        if mods:
            check_exact("memory_stages.pt2 --events", mods, PACKAGE)
        mods, _ = report(lp, os.path.join(d, "memory_stages.pt"), tmp)
        if mods:
            check_exact("memory_stages.pt", mods, TORCHSCRIPT)
        check_resnet18(lp, d, tmp)
    if failures:
        print(f"check_pt2_memory: {len(failures)} failure(s)")
        return 1
    print("check_pt2_memory: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The .pt2 tests: AOTInductor packages through the real CLI and the wheel's real libtorch.

    check_pt2.py LAYERPROF PT2_DIR [MODEL...]

PT2_DIR holds what pt2_models.py exported. For every model package (JSON report, 3 forwards), its kernels
seen both ways (the package's rebound imports, and the RecordFunction callback):
  - every module has the calls eager forward hooks counted (a module held under two paths: the
    sum over its paths), those that leave no node in the graph included (pat_identity: identity
    modules, with a note saying how many), and every module with kernels of its own has calls;
    the root is called once per forward;
  - times add up: no child's total exceeds its parent's, and the self times of all modules add up
    to the root's total exactly;
  - every kernel was placed: no warning that kernel calls left the map's order; a module has time
    of its own exactly when the package's map places kernels in it; each of resnet18's Conv2d
    layers has a kernel of its own.
Then the CLI's answers to what users get wrong: a package without layerprof's map (every kernel in
the root, with a note saying how to export), a corrupt and a truncated package, and a map of
another version (clear errors, exit 1, never a crash), inputs the package was not compiled for
(exit 2, naming the input, the dimension and what the package allows), and `layerprof diff` of
the TorchScript and the .pt2 reports of the same model.

The figures the export worked out (FLOPs, out_shape): each module's FLOPs and output shape in
resnet18.pt2 equal resnet18.pt's (one model, the TorchScript path's op-by-op FLOPs at run time);
conv1 is 2*64*3*7*7*112*112 and the whole model 3.64 GFLOPs.

Dynamic shapes (transformer_dyn.pt2: batch 1..64, sequence 2..512): the checks above at two
batch sizes and two sequence lengths (one pair the example, run as the default inputs), FLOPs and output shapes equal the TorchScript file's at each
shape, and a size outside a range exits 2 with the range in the message.
"""

import json
import os
import subprocess
import sys
import tempfile
import zipfile

failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout + p.stderr


FIGURES = ["--columns", "self_cpu,cpu_total,flops,self_flops,out_shape"]


def report(lp, model, tmp, extra=(), tag="", env=None):
    out = os.path.join(tmp, os.path.basename(model) + tag + ".json")
    rc, text = run([lp, model, "--iterations", "3", "--warmup", "1", "--format", "json",
                    "--output", out, *extra], env)
    check(rc == 0, f"{model}: exit {rc}: {text.strip()[-400:]}")
    if rc:
        return None, text
    with open(out) as f:
        return json.load(f), text


def gap_owners(the_map):
    """The modules the wrapper's code between two consecutive kernels is timed in, worked out
    from the map on its own (the shim's rule, docs/pt2.md "Self and total"): the innermost module
    both kernels' placements are in and both ran inside one call of (their call keys for it
    agree; without a key for it in either, it is called exactly once per forward), taken from
    the top down while they are shared (the root's, left out, when there is none)."""
    calls = {m["path"]: m.get("calls", 0) for m in the_map["modules"]}

    def one_call(before, after, path):
        a = before.get("call_keys", {}).get(path)
        b = after.get("call_keys", {}).get(path)
        return a == b if a is not None and b is not None else calls.get(path, 0) == 1

    def chain(path):
        parts = path.split(".") if path else []
        return [".".join(parts[:i + 1]) for i in range(len(parts))]

    owners = set()
    kernels = the_map["kernels"]
    for before, after in zip(kernels, kernels[1:]):
        a, b = chain(before["module"]), chain(after["module"])
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        while common and not one_call(before, after, b[common - 1]):
            common -= 1
        if common:
            owners.add(b[common - 1])
    return owners


def check_call_keys(name, the_map):
    """The export's call key per kernel and module (which call of the module the kernel ran in):
    every kernel placed in a module that has a forward has one for it (no test package fuses
    nodes of two calls), and a module has at most as many distinct keys as calls per forward. In
    pat_traced, blocks.0 (called twice, no kernel of its own) has two, which gap_owners then
    makes the owner of the code between its children's kernels in each call."""
    calls = {m["path"]: m.get("calls", 0) for m in the_map["modules"]}
    called = {m["path"] for m in the_map["modules"] if m.get("has_forward") and m["path"]}
    seen = {}
    for k in the_map["kernels"]:
        keys = k.get("call_keys")
        check(keys is not None, f"{name}: kernel {k['name']} has no call keys in the map")
        keys = keys or {}
        check(k["module"] not in called or k["module"] in keys,
              f"{name}: kernel {k['name']} has no call key for its module {k['module']}")
        for path, key in keys.items():
            if not key.startswith("!"):  # "!INDEX": the kernel's own, one call of no other's
                seen.setdefault(path, set()).add(key)
    for path, keys in seen.items():
        check(len(keys) <= max(calls.get(path, 0), 1),
              f"{name}: {path}: {len(keys)} call keys, {calls.get(path, 0)} calls per forward")
    if name.startswith("pat_traced"):
        check(len(seen.get("blocks.0", ())) == 2,
              f"{name}: blocks.0 (called twice) has call keys {seen.get('blocks.0')}")


NO_KEYS = "_nokeys"


def without_call_keys(d, name, out):
    """A copy of package `name` in `out` whose map has no call keys, as a package exported before
    them: layerprof must keep only the frames of modules called once per forward there, which
    check_model's gap_owners works out from that map (pat_traced's blocks.0, called twice, then
    holds no time). Returns the copy's name."""
    copy = name + NO_KEYS
    with zipfile.ZipFile(os.path.join(d, name + ".pt2")) as zin, \
            zipfile.ZipFile(os.path.join(out, copy + ".pt2"), "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename.endswith("data/layerprof/modules.json"):
                the_map = json.loads(data)
                for k in the_map["kernels"]:
                    k.pop("call_keys", None)
                data = json.dumps(the_map).encode()
            zout.writestr(info, data)
    with open(os.path.join(d, name + ".counts.json")) as src, \
            open(os.path.join(out, copy + ".counts.json"), "w") as dst:
        dst.write(src.read())
    return copy


def check_model(lp, d, name, tmp, extra=(), tag="", how=None):
    """`how`: the kernels seen through the package's rebound imports (the default without
    --events) or through the RecordFunction callback (--events uses it); None: the default."""
    env = {"LAYERPROF_PT2_KERNELS": how} if how else None
    data, _ = report(lp, os.path.join(d, name + ".pt2"), tmp, extra, tag, env)
    if data is None:
        return
    # the files' name, and the checks' label
    model, name = name, name + tag + (f" ({how})" if how else "")
    with open(os.path.join(d, model + ".counts.json")) as f:
        counts = json.load(f)
    eager = {}
    for path, n in counts["calls"].items():  # a shared module's calls, under its first path
        first = counts["aliases"].get(path, path)
        eager[first] = eager.get(first, 0) + n
    with zipfile.ZipFile(os.path.join(d, model + ".pt2")) as z:
        record = next(n for n in z.namelist() if n.endswith("data/layerprof/modules.json"))
        the_map = json.loads(z.read(record))
        kernels = the_map["kernels"]
        placed = {k["module"] for k in kernels}
    gaps = gap_owners(the_map)
    iters = data["iterations"]
    mods = data["modules"]
    check(mods[0]["calls"] == iters, f"{name}: root calls {mods[0]['calls']} for {iters} forwards")
    compared = 0
    for m in mods[1:]:
        if m.get("kind") != "module":
            continue
        path, calls = m["path"], m["calls"]
        # Every module, those that leave no node in the graph included (identity modules).
        if calls or eager.get(path, 0):
            compared += 1
            check(calls == iters * eager.get(path, 0),
                  f"{name}: {path}: {calls} calls in {iters} forwards, eager {eager.get(path, 0)}"
                  " per forward")
        if m["self_ns"] > 0:
            check(calls > 0, f"{name}: {path} has kernels but no calls")
        # The kernels the map places in a module are timed there; a module with none of its own
        # has time exactly when two consecutive kernels leave the wrapper's code between them to
        # it (gap_owners).
        if path in placed:
            check(m["self_ns"] > 0, f"{name}: {path} has kernels in the map but no time")
        elif path in gaps:
            check(m["self_ns"] > 0, f"{name}: {path} holds the wrapper's code between two of "
                                    "its kernels but has no time")
        elif m["self_ns"] > 0:
            check(False, f"{name}: {path} has time but no kernel in the map, nor the wrapper's "
                         "code between two kernels")
        # On the CPU AOTInductor runs each convolution as an extern kernel of its own: resnet18's
        # Conv2d layers must each have one (the export helper's placement, checked).
        if model == "resnet18" and m["class"] == "Conv2d":
            check(path in placed, f"{name}: {path} (Conv2d) has no kernel of its own")
    check(compared > 0, f"{name}: no module had calls")
    if model.endswith(NO_KEYS):
        check(all("call_keys" not in k for k in kernels), f"{name}: the keys were not removed")
    else:
        check_call_keys(name, the_map)
    check_fused_rows(name, mods, kernels)
    by_parent = {}
    for i, m in enumerate(mods):
        if m.get("kind") == "module" and m["parent"] >= 0:
            by_parent.setdefault(m["parent"], []).append(i)
    for parent, kids in by_parent.items():
        total = sum(mods[k]["total_ns"] for k in kids)
        check(total <= mods[parent]["total_ns"],
              f"{name}: children of '{mods[parent]['path']}' total {total} ns > its "
              f"{mods[parent]['total_ns']} ns")
    self_sum = sum(m["self_ns"] for m in mods if m.get("kind") == "module")
    check(self_sum == mods[0]["total_ns"],
          f"{name}: self times add up to {self_sum} ns, the root's total is "
          f"{mods[0]['total_ns']} ns")
    notes = " ".join(data.get("run", {}).get("notes", []))
    check("did not follow" not in notes, f"{name}: kernels left the map's order: {notes}")
    check("calls as forward hooks counted them at export" in notes,
          f"{name}: the notes do not say where the calls come from: {notes}")
    if model == "pat_identity":  # skip (twice), depth, blocks.0, blocks.2 (dropout leaves a node)
        check("4 modules were called at export without leaving a node" in notes,
              f"{name}: no note on the modules that left no node: {notes}")
    return data


def fused_into(kernels):
    """Per module path, where the map says its work went when kernels placed in other modules
    fused it and none is placed in it: {"module": the placement of the kernel placed deepest (the
    first of equals), "kernel": its name, "more_kernels": how many other kernels fused it}."""
    into, depth = {}, {}
    for k in kernels:
        d = k["module"].count(".") + 1 if k["module"] else 0
        for path in k.get("fused", []):
            if path == k["module"]:
                continue
            if path in into:
                into[path]["more_kernels"] += 1
                if d <= depth[path]:
                    continue
            else:
                into[path] = {"more_kernels": 0}
            into[path].update(module=k["module"], kernel=k["name"])
            depth[path] = d
    for k in kernels:  # a module with a kernel of its own has its own time on its row
        into.pop(k["module"], None)
    return into


def check_fused_rows(name, mods, kernels):
    """Every module whose work a kernel placed elsewhere fused says so in the JSON, naming that
    module and kernel (the map's first), and no other module does."""
    want = fused_into(kernels)
    for m in mods:
        if m.get("kind") == "module":
            check(m.get("fused_into") == want.get(m["path"]),
                  f"{name}: {m['path'] or '(root)'}: fused_into {m.get('fused_into')}, the map "
                  f"says {want.get(m['path'])}")


def check_fused_text(lp, d, tmp):
    """resnet18's tree: layer1.0's batch norm and ReLU were fused into layer1.0's kernels, and
    maxpool into a kernel of the root (docs/pt2.md); their rows name where their time went, in
    the tree and in JSON, and keep no time of their own."""
    model = os.path.join(d, "resnet18.pt2")
    rc, text = run([lp, model, "--iterations", "2", "--warmup", "1", "--name-width", "0"])
    check(rc == 0, f"resnet18 tree: exit {rc}: {text[-300:]}")
    with zipfile.ZipFile(model) as z:
        record = next(n for n in z.namelist() if n.endswith("data/layerprof/modules.json"))
        want = fused_into(json.loads(z.read(record))["kernels"])
    bn1, relu, pool = want.get("layer1.0.bn1"), want.get("layer1.0.relu"), want.get("maxpool")
    check(bn1 and bn1["module"] == "layer1.0" and "batch_norm" in bn1["kernel"],
          f"resnet18: the map fused layer1.0.bn1 as {bn1}")
    check(relu and relu["module"] == "layer1.0" and relu["more_kernels"] >= 1,
          f"resnet18: the map fused layer1.0.relu (called twice) as {relu}")
    check(pool and pool["module"] == "", f"resnet18: the map fused maxpool as {pool}")
    if not (bn1 and relu and pool):
        return
    for short, f, into in (("bn1", bn1, "layer1.0"), ("relu", relu, "layer1.0"),
                           ("maxpool", pool, "ResNet")):
        marker = f"{short} [fused into {into}: {f['kernel']}" + (
            f" + {f['more_kernels']} more]" if f["more_kernels"] else "]")
        line = next((line for line in text.splitlines() if marker in line), None)
        check(line is not None, f"resnet18 tree: no row '{marker}' in:\n{text[:3000]}")
        if line:
            check(line.split("|")[1].strip() == "0.000us",
                  f"resnet18 tree: {short}'s row has time of its own: {line}")
    # conv1 has a kernel of its own (its time is on its row), though the root's first kernel
    # holds some of its nodes: no marker.
    check("conv1 [fused" not in text, f"resnet18 tree: a Conv2d row with a marker:\n{text[:2000]}")


def compare_figures(name, ts, pt2):
    """FLOPs (per call, own and with submodules) and output shapes, module by module: the
    package's map against the TorchScript path's counting at run time."""
    if ts is None or pt2 is None:
        return
    for data, what in ((ts, "TorchScript"), (pt2, "package")):
        rec = data.get("recorded", {})
        check(rec.get("flops") and rec.get("out_shape"), f"{name}: {what} recorded {rec}")
    ts_mods = {m["path"]: m for m in ts["modules"] if m.get("kind") == "module"}
    compared = 0
    for m in pt2["modules"]:
        if m.get("kind") != "module" or m["path"] not in ts_mods:
            continue
        t = ts_mods[m["path"]]
        if not t.get("calls"):
            continue  # a module TorchScript never calls (self_attn.out_proj) has no figures
        compared += 1
        for key in ("flops", "self_flops", "flops_sum", "self_flops_sum"):
            check(m.get(key) == t.get(key),
                  f"{name}: {m['path'] or '(root)'}: {key} {m.get(key)} in the package, "
                  f"{t.get(key)} in TorchScript")
        check(m.get("out_shape") == t.get("out_shape"),
              f"{name}: {m['path'] or '(root)'}: out_shape {m.get('out_shape')} in the package, "
              f"{t.get('out_shape')} in TorchScript")
    check(compared > 5, f"{name}: only {compared} modules compared")


def expect_error(what, rc_text, code, needle):
    rc, text = rc_text
    check(rc == code, f"{what}: exit {rc}, not {code}: {text.strip()[-300:]}")
    check(needle in text, f"{what}: '{needle}' not in: {text.strip()[-300:]}")
    lines = [line for line in text.splitlines() if line.startswith("layerprof: error:")]
    check(len(lines) == 1, f"{what}: {len(lines)} error lines")


def main():
    lp, d = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or sorted(f[:-4] for f in os.listdir(d)
                                   if f.endswith(".pt2") and not f.endswith("_nomap.pt2"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name == "transformer_dyn":
                continue  # at several shapes, below
            # Every check holds for both ways of seeing the kernels.
            check_model(lp, d, name, tmp, how="imports")
            check_model(lp, d, name, tmp, tag=".callback", how="callback")

        # A package whose map has no call keys (exported before them) keeps the old rule.
        if "pat_traced" in names:
            check_model(lp, tmp, without_call_keys(d, "pat_traced", tmp), tmp)

        # A fused module's row names where its time went (the JSON above, the tree here).
        if "resnet18" in names:
            check_fused_text(lp, d, tmp)

        # FLOPs and output shapes: the package's map against the TorchScript file of one model.
        if "resnet18" in names:
            pt2 = check_model(lp, d, "resnet18", tmp, FIGURES, ".figures")
            ts, _ = report(lp, os.path.join(d, "resnet18.pt"), tmp, FIGURES, ".figures")
            compare_figures("resnet18", ts, pt2)
            if pt2:
                by_path = {m["path"]: m for m in pt2["modules"] if m.get("kind") == "module"}
                check(by_path["conv1"].get("flops") == 2 * 64 * 3 * 7 * 7 * 112 * 112,
                      f"resnet18: conv1 {by_path['conv1'].get('flops')} FLOPs")
                total = by_path[""].get("flops", 0)
                check(round(total / 1e9, 2) == 3.64, f"resnet18: {total} FLOPs per forward")

        # Dynamic shapes: two batch sizes and two sequence lengths, each against TorchScript.
        if "transformer_dyn" in names:
            for shape in ("2x16", "2x40", "5x16", "5x40"):
                # 2x16 is the example: the package's default inputs, with no --input.
                given = ["--input", f"{shape}:int64:0..999"] if shape != "2x16" else []
                tag = "." + shape
                pt2 = check_model(lp, d, "transformer_dyn", tmp, FIGURES + given, tag)
                ts, _ = report(lp, os.path.join(d, "transformer_dyn.pt"), tmp,
                               FIGURES + given, tag)
                compare_figures("transformer_dyn" + tag, ts, pt2)
                if pt2:
                    root = pt2["modules"][0]
                    batch = int(shape.split("x")[0])
                    check(root.get("out_shape") == [batch, 10],
                          f"transformer_dyn{tag}: root out_shape {root.get('out_shape')}")
            dyn = os.path.join(d, "transformer_dyn.pt2")
            expect_error("sequence over its range",
                         run([lp, dyn, "--input", "2x600:int64:0..999"]), 2,
                         "input 0 dimension 1 is 600, outside the package's range 2..512")
            expect_error("batch over its range",
                         run([lp, dyn, "--input", "65x16:int64:0..999"]), 2,
                         "input 0 dimension 0 is 65, outside the package's range 1..64")
            expect_error("sequence under its range",
                         run([lp, dyn, "--input", "2x1:int64:0..999"]), 2,
                         "outside the package's range 2..512")
            expect_error("dynamic package, wrong dtype",
                         run([lp, dyn, "--input", "2x16"]), 2,
                         "input 0 is float32, the package was compiled for int64")

        # Without layerprof's map: every kernel in the root, and the note says what to do.
        rc, text = run([lp, os.path.join(d, "nested_nomap.pt2"), "--input", "1x3x16x16",
                        "--iterations", "1", "--events"])
        check(rc == 0, f"nested_nomap: exit {rc}: {text[-300:]}")
        check("holds no layerprof module map" in text and "layerprof_export.py" in text,
              f"nested_nomap: no note on the missing map: {text[-500:]}")
        check("AOTInductor kernel (no module map)" in text, "nested_nomap: no kernel rows")

        # Broken packages and wrong inputs: one clear line, exit 1.
        bad = os.path.join(tmp, "corrupt.pt2")
        with open(bad, "wb") as f:
            f.write(b"PK\x03\x04 not really a zip")
        expect_error("corrupt .pt2", run([lp, bad]), 1, "cannot load")
        with open(os.path.join(d, "nested.pt2"), "rb") as f:
            head = f.read(4096)
        cut = os.path.join(tmp, "truncated.pt2")
        with open(cut, "wb") as f:
            f.write(head)
        expect_error("truncated .pt2", run([lp, cut]), 1, "cannot load")
        expect_error("wrong input shape",
                     run([lp, os.path.join(d, "nested.pt2"), "--input", "1x3x8x8"]), 2,
                     "input 0 dimension 2 is 8, the package was compiled for 16 (fixed at export)")
        expect_error("two inputs for one",
                     run([lp, os.path.join(d, "nested.pt2"), "--input", "1x3x16x16",
                          "--input", "2"]), 2, "the package takes 1 input (1x3x16x16 at export)")
        # A map another version of layerprof_export.py wrote: the clear error, not a guess.
        old = os.path.join(tmp, "old_map.pt2")
        with zipfile.ZipFile(os.path.join(d, "nested.pt2")) as src, \
                zipfile.ZipFile(old, "w", zipfile.ZIP_STORED) as dst:
            for item in src.infolist():
                data = src.read(item)
                if item.filename.endswith("data/layerprof/modules.json"):
                    lp_map = json.loads(data)
                    lp_map["version"] = 1
                    data = json.dumps(lp_map).encode()
                dst.writestr(item, data)
        expect_error("old map", run([lp, old]), 1, "not one this layerprof reads")

        # What compiling did, module by module: the TorchScript and the .pt2 of one model.
        for name in ("resnet18", "lstm_cell"):
            if name not in names:
                continue
            ts, _ = report(lp, os.path.join(d, name + ".pt"), tmp)
            rc, text = run([lp, "diff", os.path.join(tmp, name + ".pt.json"),
                            os.path.join(tmp, name + ".pt2.json")])
            check(rc == 0, f"diff {name}: exit {rc}: {text[-300:]}")
            probe = "layer4" if name == "resnet18" else "cell"
            check(probe in text, f"diff {name}: no row for {probe}: {text[:600]}")
    print(f"{checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

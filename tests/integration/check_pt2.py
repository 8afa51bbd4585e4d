#!/usr/bin/python3
"""The .pt2 tests: AOTInductor packages through the real CLI and the wheel's real libtorch.

    check_pt2.py LAYERPROF PT2_DIR [MODEL...]

PT2_DIR holds what pt2_models.py exported. For every model package (JSON report, 3 forwards), its kernels
seen both ways (the package's rebound imports, and the RecordFunction callback):
  - every module the package gives calls has the calls eager forward hooks counted (a module
    held under two paths: the sum over its paths), and every module with kernels of its own has
    calls; the root is called once per forward;
  - times add up: no child's total exceeds its parent's, and the self times of all modules add up
    to the root's total exactly;
  - every kernel was placed: no warning that kernel calls left the map's order; a module has time
    of its own exactly when the package's map places kernels in it; each of resnet18's Conv2d
    layers has a kernel of its own.
Then the CLI's answers to what users get wrong: a package without layerprof's map (every kernel in
the root, with a note saying how to export), a corrupt and a truncated package, inputs the package
was not compiled for (clear errors, exit 1, never a crash), and `layerprof diff` of the TorchScript
and the .pt2 reports of the same model.
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


def report(lp, model, tmp, extra=(), env=None):
    out = os.path.join(tmp, os.path.basename(model) + ".json")
    rc, text = run([lp, model, "--iterations", "3", "--warmup", "1", "--format", "json",
                    "--output", out, *extra], env)
    check(rc == 0, f"{model}: exit {rc}: {text.strip()[-400:]}")
    if rc:
        return None, text
    with open(out) as f:
        return json.load(f), text


def check_model(lp, d, name, tmp):
    # The kernels seen through the package's rebound imports (the default without --events), and
    # through the RecordFunction callback (--events uses it): every check holds for both.
    for how in ("imports", "callback"):
        check_report(lp, d, name, tmp, how)


def check_report(lp, d, name, tmp, how):
    data, _ = report(lp, os.path.join(d, name + ".pt2"), tmp,
                     env={"LAYERPROF_PT2_KERNELS": how})
    if data is None:
        return
    name_how = f"{name} ({how})"
    with open(os.path.join(d, name + ".counts.json")) as f:
        counts = json.load(f)
    eager = {}
    for path, n in counts["calls"].items():  # a shared module's calls, under its first path
        first = counts["aliases"].get(path, path)
        eager[first] = eager.get(first, 0) + n
    with zipfile.ZipFile(os.path.join(d, name + ".pt2")) as z:
        record = next(n for n in z.namelist() if n.endswith("data/layerprof/modules.json"))
        placed = {k["module"] for k in json.loads(z.read(record))["kernels"]}
    iters = data["iterations"]
    mods = data["modules"]
    check(mods[0]["calls"] == iters, f"{name_how}: root calls {mods[0]['calls']} for {iters} forwards")
    compared = 0
    for m in mods[1:]:
        if m.get("kind") != "module":
            continue
        path, calls = m["path"], m["calls"]
        if calls:
            compared += 1
            check(calls == iters * eager.get(path, 0),
                  f"{name_how}: {path}: {calls} calls in {iters} forwards, eager {eager.get(path, 0)}"
                  " per forward")
        if m["self_ns"] > 0:
            check(calls > 0, f"{name_how}: {path} has kernels but no calls")
        # The kernels the map places in a module are timed there, and only there.
        if path in placed:
            check(m["self_ns"] > 0, f"{name_how}: {path} has kernels in the map but no time")
        elif m["self_ns"] > 0:
            check(False, f"{name_how}: {path} has time but no kernel in the map")
        # On the CPU AOTInductor runs each convolution as an extern kernel of its own: resnet18's
        # Conv2d layers must each have one (the export helper's placement, checked).
        if name == "resnet18" and m["class"] == "Conv2d":
            check(path in placed, f"{name_how}: {path} (Conv2d) has no kernel of its own")
    check(compared > 0, f"{name_how}: no module had calls")
    by_parent = {}
    for i, m in enumerate(mods):
        if m.get("kind") == "module" and m["parent"] >= 0:
            by_parent.setdefault(m["parent"], []).append(i)
    for parent, kids in by_parent.items():
        total = sum(mods[k]["total_ns"] for k in kids)
        check(total <= mods[parent]["total_ns"],
              f"{name_how}: children of '{mods[parent]['path']}' total {total} ns > its "
              f"{mods[parent]['total_ns']} ns")
    self_sum = sum(m["self_ns"] for m in mods if m.get("kind") == "module")
    check(self_sum == mods[0]["total_ns"],
          f"{name_how}: self times add up to {self_sum} ns, the root's total is "
          f"{mods[0]['total_ns']} ns")
    notes = " ".join(data.get("run", {}).get("notes", []))
    check("did not follow" not in notes, f"{name_how}: kernels left the map's order: {notes}")


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
            check_model(lp, d, name, tmp)

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
                     run([lp, os.path.join(d, "nested.pt2"), "--input", "1x3x8x8"]), 1,
                     "compiled for inputs 1x3x16x16")
        expect_error("two inputs for one",
                     run([lp, os.path.join(d, "nested.pt2"), "--input", "1x3x16x16",
                          "--input", "2"]), 1, "compiled for inputs")

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

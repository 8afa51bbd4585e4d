#!/usr/bin/env python3
"""The hot path's instructions, counted by callgrind and judged against budgets.

Time ratios cannot gate the hot path on shared machines (bench/README.md); instructions do not
move with the machine's load. This runs `lp_bench_core instructions` under callgrind, which plays
the collector's events of a resnet-sized model's forward in each mode and dumps the counts of
its forwards alone, and derives what each event costs:

  pair_modules         instructions per module call pair (entry + exit), modules only
  op_pair_events       per op pair (start + end) with op rows (events), over modules only
  event_memory         per event added by memory (op starts and ends without rows, memory
                       events), over modules only
  event_all            per event of any kind, op rows and memory both on

With --torch-bench and --model, the same four on a real TorchScript forward in markers mode
(`lp_bench_torch instructions`), over the model's unprofiled forward, so that the shim's share
(markers, callbacks, clock reads) is counted with the core's; their names start with "torch_"
and carry the libtorch (major.minor: "torch_pair_modules@1.13"), which has budgets of its own
(a libtorch with none is measured and printed, not judged). They count layerprof's own
instructions: the inclusive cost of its entry points (the marker instructions, the RecordFunction
callbacks, the memory reporter), which repeats across processes. The forward's total does not:
it moves by ~2,500 instructions per forward of nested.pt between two environments (pointer-keyed
tables probe differently), which made a total-based pair figure read 346.9 and 542.6 on the same
binary. What libtorch spends calling the callbacks is therefore not in these figures.

With --sampling-bench too (`lp_bench_sampling instructions`, the program's module attached to
a live session that never samples after its first forward), one more:

  torch_unsampled_forward  layerprof's own instructions per forward it does not record: the
                           public begin and end around it, and whatever of layerprof's the
                           forward itself runs (the branch's condition; a marker, were one left
                           in the executed branch)

With --sampling-package PKG.pt2 too (the same model as a package, a loader attached to a session
that never samples after its first forward):

  torch_unsampled_package  layerprof's own instructions per package forward it does not record:
                           the public begin and end, and any hook the kernels' rebound imports
                           call (none: the hooks are set only while a package is profiled)
  torch_profiled_package   the same per forward of a session that records every one, modules
                           only: the begin and end, and each kernel's hooks (its module frames,
                           its row, the clock reads)

    instructions.py --bench BUILD/bench/lp_bench_core [--torch-bench BUILD/bench/lp_bench_torch
                    --model MODEL.pt [--sampling-bench BUILD/bench/lp_bench_sampling
                    [--sampling-package PKG.pt2]]]
                    [--budgets FILE] [--valgrind PATH]

With --budgets, exits 1 when a figure exceeds its budget (FILE: lines "name budget", # comments),
2 when the figures cannot be measured, and 77 (ctest's skip) when valgrind is missing.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run_callgrind(valgrind, args, out_dir, tag="CASE", expect=4):
    """Runs `args` under callgrind; {key: case} from its `tag` lines, each with "ir", the
    instructions of that case's counted forwards."""
    # A folder of its own: runs go side by side (main), and each finds its dumps by globbing.
    out = os.path.join(tempfile.mkdtemp(dir=out_dir), tag + ".cg.out")
    cmd = [valgrind, "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}"]
    cmd += args
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"instructions.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    cases = {}
    for line in p.stdout.splitlines():
        if line.startswith(tag + "|"):
            _, key, name, its, pairs, ops, mem, ok = line.split("|")
            if ok != "ok":
                sys.exit(f"instructions.py: {name}: {ok}")
            cases[key] = dict(name=name, iterations=int(its), pairs=int(pairs), ops=int(ops),
                              mem=int(mem))
    for path in glob.glob(out + "*"):
        text = open(path).read()
        m = re.search(r"^desc: Trigger: Client Request: (\S+)", text, re.M)
        t = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
        if m and t and m.group(1) in cases:
            cases[m.group(1)]["ir"] = int(t.group(1))
            cases[m.group(1)]["dump"] = path
    missing = [k for k, c in cases.items() if "ir" not in c]
    if len(cases) != expect or missing:
        sys.exit(f"instructions.py: no counts for {missing or 'the cases'} in {out_dir}")
    return cases


# layerprof's entry points on a real forward: what the marker instructions, the RecordFunction
# callbacks and the memory reporter call. Their inclusive costs (the sink, the collector and the
# clock reads below them) are layerprof's own instructions, which repeat across processes where
# the forward's total does not.
ENTRY_POINTS = re.compile(
    r"(lps::marker_enter_site|lps::marker_leave|lps::marker_enter|lps::marker_exit|lps::markers_root"
    r"|::on_frame_start|::on_frame_end|::on_op_start|::on_op_end"
    r"|MemoryReporter::reportMemoryUsage|lps::marker_recording"
    r"|lps::pt2_import_start|lps::pt2_import_end)\(")
# The public C entry points of a forward the program runs (no parameter list in callgrind's names).
C_ENTRY_POINTS = re.compile(r"(lp_session_forward_begin|lp_session_forward_end)$")


def own_instructions(valgrind, dump):
    """The inclusive instructions of ENTRY_POINTS in one callgrind dump. callgrind_annotate lists
    a function once per source file its code came from: under the file of its entry, with its
    object ("[/path/lib.so]"), and again under each other file inlined into it, without one.
    The entry's line holds the whole inclusive cost, calls made from inlined code included; the
    other lines repeat parts of it (an inlined atomic load at a function's start put its entry in
    atomic_base.h and listed the calls of its body twice), so only lines with an object count.
    It runs from / so that every file name is absolute and none is listed twice (from elsewhere
    it lists some both relative and absolute)."""
    annotate = os.path.join(os.path.dirname(valgrind), "callgrind_annotate")
    if not os.path.exists(annotate):
        annotate = shutil.which("callgrind_annotate") or "callgrind_annotate"
    p = subprocess.run([annotate, "--inclusive=yes", "--auto=no", "--threshold=100",
                        os.path.abspath(dump)], capture_output=True, text=True, cwd="/")
    if p.returncode != 0:
        sys.exit(f"instructions.py: callgrind_annotate {dump} failed:\n{p.stderr[-2000:]}")
    total, seen = 0, set()
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(/\S*?):(.*?) \[(/[^\]]*)\]$", line)
        e = (ENTRY_POINTS.search(m.group(3)) or C_ENTRY_POINTS.match(m.group(3))) if m else None
        if e:
            total += int(m.group(1).replace(",", ""))
            seen.add(e.group(1).split("::")[-1])
    return total, seen


# What each profiled setting must have run (settings 1-4: modules, memory, events, both): a gate
# whose entry points were renamed, or whose dump lost them, would count nothing and pass.
REQUIRED = {
    "setting1": {"marker_enter_site", "marker_leave"},
    "setting2": {"marker_enter_site", "reportMemoryUsage"},
    "setting3": {"marker_enter_site", "on_op_start", "on_op_end"},
    "setting4": {"marker_enter_site", "reportMemoryUsage", "on_op_start", "on_op_end"},
}


def check_entry_points(cases):
    """Fails (exit 1), naming the entry points a setting should have run and did not."""
    for key, need in REQUIRED.items():
        missing = need - cases[key]["seen"]
        if missing:
            sys.exit(f"instructions.py: {cases[key]['name']}: no instructions counted in "
                     f"{', '.join(sorted(missing))} (renamed? see ENTRY_POINTS)")


def torch_figures(cases):
    """The same four figures on a real forward, from layerprof's own instructions (ENTRY_POINTS):
    settings 0-4 are baseline, modules, memory, events, mem+events; each over the unprofiled
    forward."""
    fwd = {k: c["own"] / c["iterations"] for k, c in cases.items()}
    c = cases["setting0"]
    pairs, ops, mem = c["pairs"], c["ops"], c["mem"]
    base = fwd["setting0"]
    if not pairs or not ops:
        sys.exit("instructions.py: the model delivered no module calls or no ops")
    return {
        "torch_pair_modules": (fwd["setting1"] - base) / pairs,
        "torch_event_memory": (fwd["setting2"] - fwd["setting1"]) / mem if mem else 0.0,
        "torch_op_pair_events": (fwd["setting3"] - fwd["setting1"]) / ops,
        "torch_event_all": (fwd["setting4"] - base) / (2 * pairs + 2 * ops + mem),
    }, fwd


def unsampled_figure(valgrind, sampling_bench, model, forwards, out_dir, run=None):
    """layerprof's own instructions per unsampled forward of a session sampled never on `run`
    (default: `model`; a package of the same model otherwise), its input from `model`'s
    counts.json, as bench/run.sh takes it. For a package, also those per forward of a session
    that profiles every one (None for a model)."""
    counts = os.path.splitext(model)[0] + ".counts.json"
    spec = json.load(open(counts))["inputs"][0]
    cases = run_callgrind(valgrind, [sampling_bench, "instructions", run or model, spec, "--n",
                                     str(forwards)], out_dir, tag="UCASE", expect=3 if run else 2)
    profiled = None
    if run:
        p = cases["profiled"]
        own, seen = own_instructions(valgrind, p["dump"])
        if not any("pt2_import" in e or "frame_start" in e for e in seen):
            sys.exit(f"instructions.py: profiled package: no kernel hook counted (only "
                     f"{', '.join(sorted(seen))}): renamed? see ENTRY_POINTS")
        profiled = own / p["iterations"]
    c = cases["unsampled"]
    own, seen = own_instructions(valgrind, c["dump"])
    missing = {"lp_session_forward_begin", "lp_session_forward_end"} - seen
    if missing:
        sys.exit(f"instructions.py: unsampled: no instructions counted in "
                 f"{', '.join(sorted(missing))} (renamed? see C_ENTRY_POINTS)")
    total = (c["ir"] / c["iterations"], cases["shipped"]["ir"] / cases["shipped"]["iterations"])
    return own / c["iterations"], sorted(seen), total, profiled


def torch_version(torch_bench):
    """libtorch's major.minor, as the bench was built against ("1.13", "2.15")."""
    p = subprocess.run([torch_bench, "version"], capture_output=True, text=True)
    m = re.match(r"(\d+\.\d+)", p.stdout.strip())
    if p.returncode != 0 or not m:
        sys.exit(f"instructions.py: {torch_bench} version: {p.stdout.strip()} {p.stderr.strip()}")
    return m.group(1)


def figures(cases):
    fwd = {k: c["ir"] / c["iterations"] for k, c in cases.items()}
    mods, ev, mem, every = cases["case0"], cases["case1"], cases["case2"], cases["case3"]
    return {
        "pair_modules": fwd["case0"] / mods["pairs"],
        "op_pair_events": (fwd["case1"] - fwd["case0"]) / ev["ops"],
        "event_memory": (fwd["case2"] - fwd["case0"]) / (2 * mem["ops"] + mem["mem"]),
        "event_all": fwd["case3"] / (2 * every["pairs"] + 2 * every["ops"] + every["mem"]),
    }, fwd


def read_budgets(path):
    budgets = {}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            name, value = line.split()
            budgets[name] = float(value)
    return budgets


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--budgets")
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--torch-bench")
    ap.add_argument("--model")
    ap.add_argument("--torch-forwards", type=int, default=20)
    ap.add_argument("--sampling-bench")
    ap.add_argument("--sampling-package")
    a = ap.parse_args()
    if a.sampling_package and not a.sampling_bench:
        ap.error("--sampling-package needs --sampling-bench")
    if bool(a.torch_bench) != bool(a.model):
        ap.error("--torch-bench and --model go together")
    if a.sampling_bench and not a.torch_bench:
        ap.error("--sampling-bench needs --torch-bench and --model")
    valgrind = shutil.which(a.valgrind)
    if not valgrind:
        print(f"instructions.py: SKIPPED: '{a.valgrind}' not found (scripts/setup.sh --test "
              "installs valgrind)")
        return 77
    def torch_cases(d):
        tcases = run_callgrind(valgrind, [a.torch_bench, "instructions", a.model, "--n",
                                          str(a.torch_forwards)], d, tag="TCASE", expect=5)
        for c in tcases.values():
            c["own"], c["seen"] = own_instructions(valgrind, c["dump"])
        check_entry_points(tcases)
        return tcases

    # callgrind runs one thread at a time, so the programs run side by side, one per core: the
    # counts are the same (each program's own instructions), the gate takes half the time.
    with tempfile.TemporaryDirectory() as d, \
            concurrent.futures.ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        core = pool.submit(run_callgrind, valgrind,
                           [a.bench, "instructions", "--iterations", str(a.iterations)], d)
        tcases = pool.submit(torch_cases, d) if a.torch_bench else None
        if a.sampling_bench:
            unsampled = pool.submit(unsampled_figure, valgrind, a.sampling_bench, a.model,
                                    a.torch_forwards, d)
        if a.sampling_package:
            unsampled_pkg = pool.submit(unsampled_figure, valgrind, a.sampling_bench, a.model,
                                        a.torch_forwards, d, run=a.sampling_package)
        cases = core.result()
        tcases = tcases.result() if tcases else None
        if a.sampling_bench:
            unsampled = unsampled.result()
        if a.sampling_package:
            unsampled_pkg = unsampled_pkg.result()
    figs, fwd = figures(cases)
    for k in sorted(cases):
        c = cases[k]
        print(f"INFO|{c['name']}: {fwd[k]:.0f} instructions per forward ({c['pairs']} module "
              f"pairs, {c['ops']} op pairs, {c['mem']} memory events)")
    budgets = read_budgets(a.budgets) if a.budgets else {}
    if tcases:
        version = torch_version(a.torch_bench)
        tfigs, tfwd = torch_figures(tcases)
        c0 = tcases["setting0"]
        print(f"INFO|{os.path.basename(a.model)} (markers, libtorch {version}): {c0['pairs']} "
              f"module pairs, {c0['ops']} op pairs, {c0['mem']} memory events per forward")
        for k in sorted(tcases):
            c = tcases[k]
            print(f"INFO|{os.path.basename(a.model)} {c['name']}: {tfwd[k]:.0f} of layerprof's "
                  f"own instructions per forward ({c['ir'] / c['iterations']:.0f} in all)")
        if a.sampling_bench:
            tfigs["torch_unsampled_forward"] = unsampled[0]
            print(f"INFO|{os.path.basename(a.model)} unsampled (a live session's forward it does "
                  f"not record): {unsampled[0]:.0f} of layerprof's own instructions per forward, "
                  f"in {', '.join(unsampled[1])}; {unsampled[2][0]:.0f} in all, against "
                  f"{unsampled[2][1]:.0f} for a copy as shipped")
        if a.sampling_package:
            tfigs["torch_unsampled_package"] = unsampled_pkg[0]
            print(f"INFO|{os.path.basename(a.sampling_package)} unsampled (an attached package's "
                  f"forward a session sampled never does not record): {unsampled_pkg[0]:.0f} of "
                  f"layerprof's own instructions per forward, in {', '.join(unsampled_pkg[1])}; "
                  f"{unsampled_pkg[2][0]:.0f} in all, against {unsampled_pkg[2][1]:.0f} for a "
                  f"loader as shipped")
            tfigs["torch_profiled_package"] = unsampled_pkg[3]
            print(f"INFO|{os.path.basename(a.sampling_package)} profiled (every forward recorded, "
                  f"modules only): {unsampled_pkg[3]:.0f} of layerprof's own instructions per "
                  f"forward")
        for name, value in tfigs.items():
            key = f"{name}@{version}"
            if key in budgets:
                figs[key] = value
            else:
                print(f"INSTR|{key}|{value:.1f}|no budget for libtorch {version}: not judged")
    over = 0
    for name, value in figs.items():
        b = budgets.get(name)
        if b is None:
            print(f"INSTR|{name}|{value:.1f}|no budget")
            if a.budgets:
                over += 1  # a figure without a budget is a gate with a hole
            continue
        verdict = "PASS" if value <= b else "MISS"
        over += verdict == "MISS"
        print(f"INSTR|{name}|{value:.1f}|budget {b:g}|{verdict}")
    for name in budgets:
        if "@" in name:
            continue  # a real forward's, per libtorch: judged above when this one's was measured
        if name not in figs:
            print(f"INSTR|{name}|unknown figure in {a.budgets}")
            over += 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

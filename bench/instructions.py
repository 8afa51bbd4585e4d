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

    instructions.py --bench BUILD/bench/lp_bench_core [--budgets FILE] [--valgrind PATH]

With --budgets, exits 1 when a figure exceeds its budget (FILE: lines "name budget", # comments),
2 when the figures cannot be measured, and 77 (ctest's skip) when valgrind is missing.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run_callgrind(valgrind, bench, iterations, out_dir):
    out = os.path.join(out_dir, "cg.out")
    cmd = [valgrind, "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}",
           bench, "instructions", "--iterations", str(iterations)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"instructions.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    cases = {}
    for line in p.stdout.splitlines():
        if line.startswith("CASE|"):
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
    missing = [k for k, c in cases.items() if "ir" not in c]
    if len(cases) != 4 or missing:
        sys.exit(f"instructions.py: no counts for {missing or 'the cases'} in {out_dir}")
    return cases


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
    a = ap.parse_args()
    valgrind = shutil.which(a.valgrind)
    if not valgrind:
        print(f"instructions.py: SKIPPED: '{a.valgrind}' not found (scripts/setup.sh --test "
              "installs valgrind)")
        return 77
    with tempfile.TemporaryDirectory() as d:
        cases = run_callgrind(valgrind, a.bench, a.iterations, d)
    figs, fwd = figures(cases)
    for k in sorted(cases):
        c = cases[k]
        print(f"INFO|{c['name']}: {fwd[k]:.0f} instructions per forward ({c['pairs']} module "
              f"pairs, {c['ops']} op pairs, {c['mem']} memory events)")
    budgets = read_budgets(a.budgets) if a.budgets else {}
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
        if name not in figs:
            print(f"INSTR|{name}|unknown figure in {a.budgets}")
            over += 1
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""merge_many.py: what `layerprof merge` costs on many reports.

    merge_many.py LAYERPROF REPORT.json [--n 1000] [--dir DIR]

Writes N variants of one real JSON report (each module's times scaled by a factor drawn around 1,
one report in 50 with a slower module, and labelled rank=I), then times
`layerprof merge --top 10` on all of them under /usr/bin/time -v and prints the wall time and the
maximum resident set size. The variants keep the report's module tree and options, so merge reads
every one of them whole.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile


def scaled(fig, k):
    for key in ("total_ns", "self_ns", "cuda_total_ns", "cuda_self_ns"):
        if key in fig:
            fig[key] = int(fig[key] * k)
    t = fig.get("time")
    if t:
        for key in ("mean_ns", "std_ns"):
            if t.get(key) is not None:
                t[key] = t[key] * k
        t["min_ns"] = int(t["min_ns"] * k)
        t["max_ns"] = max(int(t["max_ns"] * k), t["min_ns"])
    for op in fig.get("ops", []):
        scaled(op, k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("layerprof")
    ap.add_argument("report")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--dir")
    a = ap.parse_args()
    base = json.load(open(a.report))
    out = a.dir or tempfile.mkdtemp(prefix="lp_merge_many.")
    rng = random.Random(1)
    files = []
    for i in range(a.n):
        doc = json.loads(json.dumps(base))
        doc["run"]["labels"] = {"rank": str(i)}
        slow = rng.randrange(len(doc["modules"])) if i % 50 == 7 else -1
        for j, m in enumerate(doc["modules"]):
            scaled(m, rng.lognormvariate(0, 0.05) * (3.0 if j == slow else 1.0))
        path = os.path.join(out, "rank%04d.json" % i)
        with open(path, "w") as f:
            json.dump(doc, f, indent=2)
        files.append(path)
    size = sum(os.path.getsize(p) for p in files)
    cmd = ["/usr/bin/time", "-v", a.layerprof, "merge", "--top", "10"] + files
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("merge failed: " + r.stderr[-2000:])
    wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", r.stderr).group(1)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    print(r.stdout)
    print("%d reports, %d modules each, %.1f MB of JSON: merge took %s (wall), max RSS %.1f MB"
          % (a.n, len(base["modules"]), size / 1e6, wall, rss / 1024.0))


if __name__ == "__main__":
    main()

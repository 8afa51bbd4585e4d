#!/usr/bin/env python3
"""Checks that source files call each other one way: no ring of files each using a function or
variable another defines.

Reads the object files of a build with nm (what each defines, what each leaves undefined), makes
the graph "file A uses a symbol file B defines", and prints every strongly connected component
of more than one file: a ring, which makes the files one job split in several places. A file
that calls another must sit above it; the other never calls back.

    check_calls.py BUILD_DIR [FOLDER ...]

Only object files whose source is under one of the FOLDERs (relative to the repository, e.g.
src/api) are checked; with none, every object of src/ and cli/. Exits 1 on a ring, 0 otherwise.
"""
import os
import subprocess
import sys


def objects(build_dir):
    """Yields (source path relative to the repository, object path) for every object file."""
    for dirpath, _, files in os.walk(build_dir):
        marker = ".dir" + os.sep
        if marker not in dirpath + os.sep:
            continue
        for name in files:
            if not name.endswith((".c.o", ".cpp.o")):
                continue
            full = os.path.join(dirpath, name)
            # CMake keeps the source's path below the target's folder: <target>.dir/src/api/x.c.o
            rel = full.split(marker, 1)[1][: -len(".o")]
            yield rel, full


def symbols(path):
    out = subprocess.run(["nm", "-g", path], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("U", "w"):
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w"):
            defined.add(parts[2])
    return defined, undefined


def rings(graph):
    """Tarjan's strongly connected components with more than one node, each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build_dir = sys.argv[1]
    folders = [f.rstrip("/") + "/" for f in sys.argv[2:]] or ["src/", "cli/"]
    files = {}
    for rel, path in objects(build_dir):
        if any(rel.startswith(f) for f in folders):
            files.setdefault(rel, path)  # one object per source (a library and its tests share)
    if not files:
        sys.exit(f"check_calls: no object files of {', '.join(folders)} under {build_dir}")
    defs, uses = {}, {}
    for rel, path in files.items():
        d, u = symbols(path)
        uses[rel] = u
        for sym in d:
            defs.setdefault(sym, rel)
    graph = {rel: {defs[s] for s in u if s in defs and defs[s] != rel} for rel, u in uses.items()}
    found = rings(graph)
    for comp in found:
        why = []
        for a in comp:
            for b in comp:
                if b in graph[a]:
                    syms = sorted(s for s in uses[a] if defs.get(s) == b)
                    why.append(f"    {a} -> {b}: {', '.join(syms[:4])}{' ...' if len(syms) > 4 else ''}")
        print("check_calls: ring of files calling each other: " + ", ".join(comp))
        print("\n".join(why))
    if not found:
        print(f"check_calls: ok ({len(files)} files of {', '.join(folders)} call one way)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

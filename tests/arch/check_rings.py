#!/usr/bin/env python3
"""Fails on files that call each other in a ring (docs/architecture.md, "Files call one way").

The include check (check_layers.py) sees only #include lines; two files of one layer can still
use each other's functions through one shared header. This check reads what the compiler made:
for each object file of src/, cli/, shim/ and bench/, `nm` lists the global symbols it defines and the
ones it uses. File A depends on file B when A uses a symbol that B defines. A strongly connected
component of more than one file is a ring: no file of it can be read, tested or replaced without
the others.

    check_rings.py [--nm NM] OBJECT...

Object files are named after their source by CMake (CMakeFiles/<target>.dir/src/x/y.c.o); the
source path is the part after "<target>.dir/" (for shim/ and bench/, the folder and the part
after it; a source of another folder compiled into a bench target, "__/src/...", is left out: its
own object is read). A
symbol that several objects define (a C++ inline function or template instance) is no file's.
Prints each ring with one edge that closes it, and exits 1 if there is any ring, 0 otherwise.
"""
import os
import re
import subprocess
import sys

NM = "nm"
DEFINED = set("TDBRVWGSCi")  # nm's letters for a symbol an object defines (text, data, bss, ...)


def source_of(obj):
    path = obj.replace(os.sep, "/")
    m = re.search(r"\.dir/((?:src|cli)/.+?)\.o(?:bj)?$", path)
    if m:
        return m.group(1)
    # The shim's objects are named after their source relative to shim/ (lp_shim.dir/model.cpp.o).
    m = re.search(r"(?:^|/)(shim|bench)/CMakeFiles/[^/]+\.dir/([^/]+?)\.o(?:bj)?$", path)
    return m.group(1) + "/" + m.group(2) if m else None


def symbols(obj):
    out = subprocess.run([NM, "-g", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3 and line.split()[-2] in DEFINED}
    out = subprocess.run([NM, "-g", "--undefined-only", obj], capture_output=True, text=True, check=True).stdout
    used = {line.split()[-1] for line in out.splitlines() if line.split()}
    return defined, used


def components(graph):
    """Tarjan's strongly connected components, iterative (no recursion limit to think about)."""
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on_stack.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                result.append(sorted(comp))
    return result


def main():
    global NM
    args = sys.argv[1:]
    if args[:1] == ["--nm"]:
        NM, args = args[1], args[2:]
    if not args:
        sys.exit("usage: check_rings.py [--nm NM] OBJECT...")
    # $<TARGET_OBJECTS:...> arrives from ctest as one argument, its paths separated by ';'.
    objects = [o for a in args for o in a.split(";") if o]
    defs, uses = {}, {}
    for obj in objects:
        src = source_of(obj)
        if src is None:
            continue  # not a file of src/, cli/, shim/ or bench/ (a CUDA stub, a test)
        defs[src], uses[src] = symbols(obj)
    # A symbol defined in more than one object (a C++ inline function or template instance,
    # emitted weak wherever it is used) belongs to no file: it is the header's.
    definers = {}
    for src, names in defs.items():
        for name in names:
            definers.setdefault(name, []).append(src)
    owner = {name: files[0] for name, files in definers.items() if len(files) == 1}
    graph = {src: set() for src in defs}
    why = {}
    for src, names in uses.items():
        for name in sorted(names):
            dst = owner.get(name)
            if dst and dst != src:
                graph[src].add(dst)
                why.setdefault((src, dst), name)
    errors = []
    for comp in components(graph):
        if len(comp) < 2:
            continue
        members = set(comp)
        edges = [f"{a} -> {b} ({why[(a, b)]})" for a in comp for b in sorted(graph[a] & members)]
        errors.append("ring of " + ", ".join(comp) + ":\n    " + "\n    ".join(edges))
    for e in errors:
        print("check_rings: " + e)
    if not errors:
        print(f"check_rings: ok ({len(graph)} files of src/, cli/ and shim/, no ring)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

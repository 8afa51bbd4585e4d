#!/usr/bin/env python3
"""Checks that the code's includes follow docs/architecture.md.

- src/ is in folders, one per layer. The order, lowest first, is read from the line of
  docs/architecture.md that starts with "Layers, lowest first:", so the document and this check
  cannot drift apart. A file includes only headers of its own layer or of lower ones.
- Inside one layer, the headers must not include each other in a circle.
- shim/ (the only C++) may include the public header, its own headers, src/base/ (the clock and
  the error channel), src/collect/event_sink.h (the events it delivers, which the collector
  fills) and src/collect/pt2_shapes.h (a package's shapes, delivered to that sink):
  docs/architecture.md says why; nothing else of the core.
- cli/ and examples/ use the public API only: include/layerprof.h and their own headers.
- bench/ drives the product as it is: the public headers, the shim's C interface (lp_shim.h),
  the core's headers by layer, and of src/api/ only session_setup.h and session_config.h, what
  the session builds itself with; never the session's internals (a session assembled by hand would be
  measured instead of the one users run).
- No C or C++ source file of src/, shim/, cli/ or bench/ is longer than 600 lines unless its first 40
  lines say why ("Longer than 600 lines: ...").

Prints every violation and exits 1 if there is any, 0 otherwise.
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
MAX_LINES = 600
# The core's headers above base/ that the shim may include: the event sink it calls, which
# collect/ defines and fills so that events reach the collector with no frame between, and a
# package's shapes, which the shim checks its inputs against and delivers to that sink.
SHIM_CORE_HEADERS = ("collect/event_sink.h", "collect/pt2_shapes.h")
LONG_REASON = "Longer than 600 lines:"
# What bench/ may include of src/api/: the session's own setup (the tree, inputs, hooks and
# collector configuration it builds itself with), so that the bench measures what users run.
BENCH_API_HEADERS = ("api/session_setup.h", "api/session_config.h")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def layer_order():
    doc = read(os.path.join(ROOT, "docs", "architecture.md"))
    for line in doc.splitlines():
        if line.startswith("Layers, lowest first:"):
            names = re.findall(r"`([a-z]+)/?`", line)
            if names:
                return names
    sys.exit("check_layers: docs/architecture.md has no line 'Layers, lowest first: `a` → `b` ...'")


def sources(folder):
    for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
        for name in sorted(files):
            if name.endswith((".c", ".h", ".cpp", ".hpp")):
                yield os.path.join(dirpath, name)


def rel(path):
    return os.path.relpath(path, ROOT)


def main():
    errors = []
    layers = layer_order()
    rank = {name: i for i, name in enumerate(layers)}
    on_disk = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
    for d in on_disk:
        if d not in rank:
            errors.append(f"src/{d}/ is not a layer of docs/architecture.md ({', '.join(layers)})")
    for name in layers:
        if name not in on_disk:
            errors.append(f"docs/architecture.md names layer '{name}', but src/{name}/ does not exist")
    stray = [f for f in os.listdir(os.path.join(ROOT, "src")) if os.path.isfile(os.path.join(ROOT, "src", f))]
    for f in stray:
        errors.append(f"src/{f} is outside every layer: move it into the folder of its layer")

    # Within-layer graph of header includes, for the circle check.
    graph = {}
    for path in sources("src"):
        r = rel(path)
        layer = r.split(os.sep)[1]
        if layer not in rank:
            continue
        for inc in INCLUDE.findall(read(path)):
            if inc == "layerprof.h":
                continue
            if inc == "lp_shim.h":
                if layer != "api":
                    errors.append(f"{r}: includes lp_shim.h; only src/api/ talks to the shim")
                continue
            target = inc.split("/")[0]
            if "/" not in inc or target not in rank:
                errors.append(f"{r}: includes \"{inc}\"; core headers are named by layer (\"base/error.h\")")
                continue
            if not os.path.exists(os.path.join(ROOT, "src", inc)):
                errors.append(f"{r}: includes \"{inc}\", which does not exist")
                continue
            if rank[target] > rank[layer]:
                errors.append(f"{r}: {layer}/ includes \"{inc}\" from the higher layer {target}/")
            if target == layer:
                graph.setdefault(r, set()).add(os.path.join("src", inc))

    # Circles among headers of one layer (a .c file can sit in no circle).
    state = {}

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                errors.append("include circle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif not state.get(nxt):
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [])

    for path in sources("shim"):
        for inc in INCLUDE.findall(read(path)):
            own = os.path.exists(os.path.join(ROOT, "shim", inc))
            if not (own or inc == "layerprof.h" or inc.startswith("base/") or inc in SHIM_CORE_HEADERS):
                errors.append(
                    f"{rel(path)}: includes \"{inc}\"; the shim may use only base/ and {', '.join(SHIM_CORE_HEADERS)} of the core"
                )
    for folder in ("cli", "examples"):
        for path in sources(folder):
            for inc in INCLUDE.findall(read(path)):
                own = os.path.exists(os.path.join(os.path.dirname(path), inc))
                if not (own or inc in ("layerprof.h", "layerprof.hpp", "layerprof_pt2.hpp")):
                    errors.append(f"{rel(path)}: includes \"{inc}\"; {folder}/ uses the public API only")

    # The bench's own headers, the public ones, the shim's C interface, the core by layer.
    for path in sources("bench"):
        for inc in INCLUDE.findall(read(path)):
            own = os.path.exists(os.path.join(ROOT, "bench", inc))
            public = os.path.exists(os.path.join(ROOT, "include", inc))
            layer = inc.split("/")[0] if "/" in inc else None
            core = layer in rank and layer != "api" and os.path.exists(os.path.join(ROOT, "src", inc))
            if not (own or public or inc == "lp_shim.h" or core or inc in BENCH_API_HEADERS):
                errors.append(
                    f"{rel(path)}: includes \"{inc}\"; bench/ uses the public API, lp_shim.h, the core's "
                    f"layers and of src/api/ only {', '.join(BENCH_API_HEADERS)}"
                )

    for folder in ("src", "shim", "cli", "bench"):
        for path in sources(folder):
            text = read(path)
            n = text.count("\n")
            head = "\n".join(text.splitlines()[:40])
            if n > MAX_LINES and LONG_REASON not in head:
                errors.append(f"{rel(path)}: {n} lines; split it, or say why at its top ('{LONG_REASON} ...')")

    for e in errors:
        print("check_layers: " + e)
    if not errors:
        print(f"check_layers: ok ({' -> '.join(layers)}; shim, cli, examples and bench clean)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

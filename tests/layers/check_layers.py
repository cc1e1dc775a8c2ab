#!/usr/bin/env python3
"""Checks that cpp/ is a stack of layers (docs/ARCHITECTURE.md, "Layers").

Each top folder of cpp/ is a layer or a leaf library. A file may include
headers of its own layer and of the layers below it, never above; no two
folders may include each other (directly or round a longer cycle); and no
include climbs out with "..". CMake enforces the layer order at compile time
(each layer has its own include root); this check also covers the folders
inside a layer, which share one root, and explains a failure file by file.

Usage: check_layers.py [CPP_DIR]   (default: the cpp/ beside this repo's tests/)
Exit status 0 when the tree is clean, 1 with one line per violation.
"""
import os
import re
import sys

# Bottom to top. A layer may include the layers at or before its position.
LAYERS = ["base", "linkinfo", "device", "package", "runner"]
# Leaf libraries beside the stack: what each may include (besides itself).
# sdk/ is compiled into packages and sees only the package ABI; shim/ (aotrun's
# own AOTInductor shim, a separate shared library) may use base/ at most.
LEAVES = {"sdk": set(), "shim": {"base"}}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCES = (".hpp", ".cpp", ".h", ".cc")


def allowed(layer):
    if layer in LEAVES:
        return LEAVES[layer] | {layer}
    return set(LAYERS[: LAYERS.index(layer) + 1])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "cpp"))
    known = set(LAYERS) | set(LEAVES)
    problems = []
    edges = {}  # (from folder, to folder) -> first file that makes the edge
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            top = rel.split(os.sep)[0]
            if top not in known:
                if os.sep in rel:
                    problems.append(f"{rel}: folder '{top}' is in no layer (add it to LAYERS or LEAVES)")
                continue
            folder = os.path.dirname(rel)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if ".." in inc.split("/"):
                    problems.append(f"{rel}: includes \"{inc}\": no include may climb with '..'")
                    continue
                # A quoted include resolves beside the file first, then at a layer root.
                if os.path.exists(os.path.join(root, folder, inc)):
                    target = os.path.normpath(os.path.join(folder, inc))
                elif inc.split("/")[0] in known and os.path.exists(os.path.join(root, inc)):
                    target = inc
                else:
                    continue  # not aotrun's (aotrun/package_abi.h, a system header)
                to_layer = target.split("/")[0]
                if to_layer not in allowed(top):
                    problems.append(f"{rel}: includes \"{inc}\": layer '{top}' may not include layer '{to_layer}'")
                to_folder = os.path.dirname(target)
                if to_folder != folder:
                    edges.setdefault((folder, to_folder), rel)
    # Folders that include each other: any cycle in the folder graph.
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    for cycle in cycles(graph):
        steps = [f"{a} -> {b} ({edges[(a, b)]})" for a, b in zip(cycle, cycle[1:] + cycle[:1])]
        problems.append("folders include each other: " + "; ".join(steps))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s) in {root}")
        return 1
    print(f"check_layers: {root} is a clean stack ({' -> '.join(LAYERS)}; leaves: {', '.join(sorted(LEAVES))})")
    return 0


def cycles(graph):
    """One cycle (as a list of folders) per strongly connected component of size > 1."""
    index, low, stack, on, out = {}, {}, [], set(), []
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
                out.append(path_in(graph, set(comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph, comp):
    """A cycle through the component's smallest folder, found breadth first."""
    start = min(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w not in comp:
                continue
            if w == start:
                cycle = [v]
                while prev[cycle[-1]] is not None:
                    cycle.append(prev[cycle[-1]])
                return list(reversed(cycle))
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return sorted(comp)


if __name__ == "__main__":
    sys.exit(main())

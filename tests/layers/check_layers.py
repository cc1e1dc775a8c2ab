#!/usr/bin/env python3
"""Checks that cpp/ is a stack of layers and that every binary sits on it
(docs/ARCHITECTURE.md, "Layers").

Each top folder of cpp/ is a layer or a leaf library. A file may include
headers of its own layer and of the layers below it, never above; no two
folders may include each other (directly or round a longer cycle); and no
include climbs out with "..". CMake enforces the layer order at compile time
(each layer has its own include root); this check also covers the folders
inside a layer, which share one root, and explains a failure file by file.

The binaries built over the stack are placed on it too (BINARIES): c_api/
(libaotrun) may include any layer but nothing of the .pt2 package kind
(package/pt2/), which it reaches through Package only; its public headers
(c_api/include) include nothing of cpp/. tools/ (the CLI) and each backend
under backends/ are clients: they may include aotrun's public API
(c_api/include: aotrun.h, aotrun.hpp) and, of cpp/, only the internal
readers named for them (READERS), each a header with a reason.

Usage: check_layers.py [REPO_DIR]   (default: the repository of this script;
the tree checked is REPO_DIR/cpp plus the binaries' folders)
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

# The binaries over the stack, by source folder (relative to the repository),
# and what each may include of cpp/:
#   ("stack", [prefixes]) every layer, but no header under those prefixes;
#   ("none", [])          nothing;
#   ("readers", [])       only the headers READERS names for the folder.
# A "readers" folder is a client of libaotrun: of aotrun's own headers it may
# include the public API (c_api/include) only.
BINARIES = {
    # libaotrun: the .pt2 kind is reached through Package; an option it
    # checks is declared beside the options (package/package_options.hpp).
    "c_api/src": ("stack", ["package/pt2/"]),
    # The public headers: self-contained, nothing internal.
    "c_api/include": ("none", []),
    "tools/src": ("readers", []),
    "backends/triton/src": ("readers", []),
}
# Internal headers a client may include, each for a reason: code the C API
# does not offer, linked statically from the layer that owns it.
READERS = {
    "tools/src": {
        "linkinfo/link_findings.hpp": "the checks before dlopen, shown for packages open refuses",
        "package/pt2/archive/pt2_archive.hpp": "the .pt2 reader: the archive and its model, by open's rules",
        "package/pt2/archive/model_metadata.hpp": "a .pt2 model's metadata, as open reads it",
        "package/pt2/archive/model_sources.hpp": "a .pt2 model's sources, as open reads them",
        "package/pt2/archive/archive_records.hpp": "a .pt2's version records",
        "package/pt2/archive/extern_nodes.hpp": "the ops a .pt2 model calls through the proxy executor",
        "package/pt2/specs/wrapper_specs.hpp": "what a .pt2 model's sources say of its inputs",
        "package/pt2/specs/input_layout.hpp": "the layouts a .pt2 model's inputs were compiled for",
        "package/pt2/specs/symbolic_shapes.hpp": "a .pt2 model's dims tied by a size symbol",
        "package/pt2/specs/index_bounds.hpp": "a .pt2 model's index checks",
        "package/pt2/specs/output_dims.hpp": "what a .pt2 model's wrapper states of its outputs' dims",
        "base/safetensors_dtype.hpp": "the one table of safetensors dtypes",
        "base/strings.hpp": "the one suffix test (header-only)",
    },
    "backends/triton/src": {},
}
PUBLIC_INCLUDE = "c_api/include"  # aotrun.h, aotrun.hpp

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
SOURCES = (".hpp", ".cpp", ".h", ".cc", ".c")


def allowed(layer):
    if layer in LEAVES:
        return LEAVES[layer] | {layer}
    return set(LAYERS[: LAYERS.index(layer) + 1])


def sources(root):
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if name.endswith(SOURCES):
                yield os.path.join(dirpath, name)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", ".."))
    root = os.path.join(repo, "cpp")
    problems = check_stack(root) + check_binaries(repo, root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} violation(s) in {repo}")
        return 1
    print(f"check_layers: {repo} is a clean stack ({' -> '.join(LAYERS)}; leaves: {', '.join(sorted(LEAVES))}; "
          f"over it: {', '.join(sorted(BINARIES))})")
    return 0


def check_stack(root):
    """cpp/: every include within the layer order, no folder cycles."""
    known = set(LAYERS) | set(LEAVES)
    problems = []
    edges = {}  # (from folder, to folder) -> first file that makes the edge
    for path in sources(root):
        rel = os.path.relpath(path, root)
        top = rel.split(os.sep)[0]
        if top not in known:
            if os.sep in rel:
                problems.append(f"{rel}: folder '{top}' is in no layer (add it to LAYERS or LEAVES)")
            continue
        folder = os.path.dirname(rel)
        for inc in INCLUDE.findall(read(path)):
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
    return problems


def check_binaries(repo, root):
    """c_api/, tools/, backends/: each include placed against BINARIES."""
    known = set(LAYERS) | set(LEAVES)
    problems = []
    backends = os.path.join(repo, "backends")
    if os.path.isdir(backends):
        for name in sorted(os.listdir(backends)):
            if os.path.isdir(os.path.join(backends, name)) and not any(
                    b.startswith(f"backends/{name}/") for b in BINARIES):
                problems.append(f"backends/{name}: a binary in no place (add its sources to BINARIES)")
    for binary, (rule, excluded) in sorted(BINARIES.items()):
        base = os.path.join(repo, binary)
        readers = READERS.get(binary, {})
        for path in sources(base):
            rel = os.path.relpath(path, repo)
            folder = os.path.dirname(path)
            for quote, inc in ANY_INCLUDE.findall(read(path)):
                if ".." in inc.split("/"):
                    problems.append(f"{rel}: includes \"{inc}\": no include may climb with '..'")
                    continue
                if quote == '"' and os.path.exists(os.path.join(folder, inc)):
                    continue  # the binary's own
                if inc.split("/")[0] in known and os.path.exists(os.path.join(root, inc)):
                    if rule == "none":
                        problems.append(f"{rel}: includes \"{inc}\": {binary} may include nothing of cpp/")
                    elif rule == "stack" and any(inc.startswith(x) for x in excluded):
                        problems.append(f"{rel}: includes \"{inc}\": {binary} may not include "
                                        f"{' or '.join(excluded)} (reach it through the layer's interface)")
                    elif rule == "readers" and inc not in readers:
                        problems.append(f"{rel}: includes \"{inc}\": {binary} may include of cpp/ only the "
                                        f"readers named for it in READERS (the public API otherwise)")
                elif (rule == "readers" and inc.startswith("aotrun/") and
                      not os.path.exists(os.path.join(repo, PUBLIC_INCLUDE, inc))):
                    problems.append(f"{rel}: includes \"{inc}\": {binary} may include of aotrun's headers only "
                                    f"the public API ({PUBLIC_INCLUDE})")
    return problems


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

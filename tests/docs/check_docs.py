#!/usr/bin/env python3
"""Checks that the docs say what the tree is: paths that exist, versions that agree.

Read: every Markdown file of the tree (docs/*.md, the README.md files,
abi/ABI.md; not build trees or the vendored fixtures), the comments of the public
headers (c_api/include, cpp/shim/include, cpp/shim/cuda/include, cpp/sdk) and
of .clang-format. Three kinds of problem fail the check, each listed as
FILE:LINE: what is wrong.

1. Paths. A repository path named there must exist. A repository path is a
   token that starts with a top folder of the repository (cpp/, docs/,
   tests/, ...: TOP_DIRS plus whatever folders the root holds) or a
   top-level file (TOP_FILES), or, inside `backticks`, with a layer of cpp/
   (`shim/src/...`, read under cpp/). A token preceded by '/', '$', '>' or a
   word character is not one (a URL, build/tests/..., $OUT/tests/...,
   <build>/cpp/...). Trailing punctuation, a ":LINE" suffix and a "#anchor"
   are dropped. Forms that name several files are globs and must match at
   least one path: `*` and `**`, `<anything>`, `...` and `…`, `{a,b}` (each
   alternative must exist; a brace with "…" inside is `*`), and the
   placeholder words of PLACEHOLDERS (X.Y.Z, NAME, OP, ...) when the
   literal path does not exist. A path with no extension also counts as
   existing when a source of that name does (the program built from
   tests/shim/shim_measure.cpp is tests/shim/shim_measure). In a file below
   the root outside docs/ (a README), a path may also be relative to its
   folder. A path that starts with "../" is read from its file's folder: it
   may not leave the repository (no reader has what lies outside it), and
   inside it is checked like any other.

2. Versions of aotrun. The project's version is CMake's
   (`project(aotrun VERSION x.y.z)`); aotrun.h's AOTRUN_VERSION_*, the Rust
   workspace's version, each crate's, the `=x.y.z` pins between the crates
   and Cargo.lock's entries for them must equal it, and the package ABI's
   is abi/include/aotrun/package_abi.h's. In the text:
   - a claim of the current version must equal it: "x.y.z today",
     "x.y (this release)", "the library's (x.y.z)", "current version ...
     x.y.z", also across a line break. Whose version a claim states is
     read from the words before it in its sentence: "package ABI" or
     "aotrun_pkg_abi_version" the package ABI's, "shim" the shim's,
     anything else aotrun's;
   - a mention of a version that something appeared in ("since 1.3",
     "C API 1.3", "host API 1.2", "crate 1.3", "aotrun 1.3.0",
     "API table 1.0") may not name a 1.x above the current version: docs
     describe what exists, not what is planned. (Other majors, such as
     torch's 2.x, are not aotrun's and are skipped.)

3. Versions of the shim (libaotrun_shim.so.1). AOTRUN_SHIM_VERSION_* in
   cpp/shim/include/aotrun_shim/shim.h is the shim's version; the VERSION
   of cpp/shim/CMakeLists.txt and cpp/shim/cuda/CMakeLists.txt and the
   string aotrun_shim_version() returns (cpp/shim/src/error.cpp: a literal
   "aotrun-shim x.y.z" or one built from the macros) must equal it, and no
   "since (aotrun-)shim x.y" anywhere above may name a later one.

Usage: check_docs.py [ROOT]        exit 0 when clean, 1 listing every problem
       check_docs.py --self-test   plants a stale path and wrong versions in a
                                   copy and checks that each is reported
"""
import bisect
import glob
import os
import re
import shutil
import sys
import tempfile

TOP_DIRS = ["cpp", "docs", "tests", "scripts", "tools", "c_api", "rust", "bench", "backends",
            "compat", "examples", "abi", "cmake", ".ci"]
TOP_FILES = ["CMakeLists.txt", "CMakePresets.json", "README.md", ".clang-format", ".gitignore"]
CPP_LAYERS = ["base", "linkinfo", "device", "package", "runner", "shim", "sdk"]
HEADER_DIRS = ["c_api/include", "cpp/shim/include", "cpp/shim/cuda/include", "cpp/sdk"]
HEADER_EXTS = (".h", ".hpp")
# Words that stand for a name in a path ("compat/aoti/fixtures/torch-X.Y.Z/").
PLACEHOLDERS = {"X", "Y", "Z", "N", "NAME", "OP", "DEV", "DEVICE", "LAYER", "TARGET", "VERSION",
                "MODEL", "PROVIDER", "RELEASE", "ARCH", "CMD", "COMMAND", "YYYY", "MM", "DD"}
# Never read: build trees and what the tree vendors or generates.
SKIP_DIRS = re.compile(r"^(build[^/]*|\.git|compat/aoti/fixtures|rust/target|.*/node_modules)(/|$)")
SOURCE_EXTS = (".cpp", ".cc", ".c", ".cu", ".rs", ".sh", ".py")

VER = r"(\d+\.\d+(?:\.\d+)?)"
# A claim of the current version; group 1 is the version.
CURRENT_CLAIMS = [
    re.compile(VER + r"\s+today\b"),
    re.compile(VER + r"\s*\(this\s+release\)"),
    re.compile(r"\bthis\s+release\s+\(" + VER + r"\)"),
    re.compile(r"\blibrary's\s+\(" + VER + r"\)"),
    re.compile(r"\bcurrent\s+version\b[^0-9]{0,40}?" + VER),
]
# A version something appeared in; may not be above the current one.
SINCE_HOST = re.compile(r"\b(?:[Ss]ince|C\s+API|[Hh]ost\s+API|crate|API\s+table)\s+v?" + VER + r"\b"
                        r"|\baotrun\s+(\d+\.\d+\.\d+)\b")
SINCE_SHIM = re.compile(r"\b(?:aotrun-shim|aotrun\s+shim|shim)\s+(\d+\.\d+(?:\.\d+)?)\b")
SINCE_ABI = re.compile(r"\b(?:package\s+ABI|ABI)\s+(\d+\.\d+)\b")


def vtuple(text):
    return tuple(int(x) for x in text.split("."))


def same(claimed, actual):
    """'1.3' claims 1.3.x; '1.3.0' claims exactly 1.3.0."""
    c = vtuple(claimed)
    return c == actual[: len(c)]


def above(mentioned, actual):
    m = vtuple(mentioned)
    return m[0] == actual[0] and m > actual[: len(m)]


def vstr(v):
    return ".".join(str(x) for x in v)


class Checker:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.problems = []
        self.tops = set(TOP_DIRS)
        for name in os.listdir(self.root):
            if os.path.isdir(os.path.join(self.root, name)) and not SKIP_DIRS.match(name):
                self.tops.add(name)
        tops = "|".join(re.escape(t) for t in sorted(self.tops, key=len, reverse=True))
        files = "|".join(re.escape(t) for t in TOP_FILES)
        body = r"(?:\{[^}\n]{0,60}\}|[\w.\-/*<>…+~@=])*"
        self.path_re = re.compile(r"(?<![\w./$>}\-])((?:(?:%s)/%s)|(?:%s)(?![\w.\-/]))" % (tops, body, files))
        layers = "|".join(CPP_LAYERS)
        self.up_re = re.compile(r"(?<![\w./$>}\-])((?:\.\./)+[\w.\-]%s)" % body)
        self.layer_re = re.compile(r"`((?:%s)/%s)`" % (layers, body))

    # -- helpers -------------------------------------------------------------
    def rel(self, path):
        return os.path.relpath(path, self.root)

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def problem(self, where, msg):
        self.problems.append(f"{where}: {msg}")

    def walk(self):
        for dirpath, dirnames, names in os.walk(self.root):
            reldir = os.path.relpath(dirpath, self.root)
            reldir = "" if reldir == "." else reldir
            dirnames[:] = sorted(d for d in dirnames if not SKIP_DIRS.match(os.path.join(reldir, d)))
            for name in sorted(names):
                yield os.path.join(reldir, name)

    # -- what is read ----------------------------------------------------------
    def texts(self):
        """(file, [(line number, text)]) for every file read: markdown whole, code comments only."""
        all_files = list(self.walk())
        out = []
        for rel in all_files:
            if rel.endswith(".md"):
                out.append((rel, list(enumerate(self.read(rel).split("\n"), 1))))
        for rel in all_files:
            if rel.endswith(HEADER_EXTS) and any(rel.startswith(d + os.sep) for d in HEADER_DIRS):
                out.append((rel, c_comments(self.read(rel))))
        if os.path.exists(os.path.join(self.root, ".clang-format")):
            lines = self.read(".clang-format").split("\n")
            out.append((".clang-format", [(i, l[l.index("#"):]) for i, l in enumerate(lines, 1) if "#" in l]))
        return out

    # -- 1. paths ----------------------------------------------------------------
    def exists(self, path, base_dirs):
        for base in base_dirs:
            if self.exists_in(os.path.join(base, path) if base else path):
                return True
        return False

    def exists_in(self, path):
        full = os.path.join(self.root, path)
        if os.path.exists(full):
            return True
        pattern = globbed(path)
        candidates = [pattern] if re.search(r"[*?\[{]", pattern) else []
        literal_words = re.sub(r"(?<![A-Za-z])(%s)(?![A-Za-z])" % "|".join(PLACEHOLDERS), "*", pattern)
        if literal_words != pattern:
            candidates.append(literal_words)
        for pat in candidates:  # each alternative of a {a,b} must match
            if all(glob.glob(os.path.join(glob.escape(self.root), alt), recursive=True) for alt in braces(pat)):
                return True
        if "." not in os.path.basename(path.rstrip("/")) and not path.endswith("/"):
            return any(os.path.exists(full + ext) for ext in SOURCE_EXTS)
        return False

    def check_paths(self, rel, lines):
        base_dirs = [""]
        if os.path.dirname(rel) and not rel.startswith("docs" + os.sep):
            base_dirs.append(os.path.dirname(rel))
        for lineno, text in lines:
            found = [(m.group(1), base_dirs) for m in self.path_re.finditer(text)]
            found += [(m.group(1), ["cpp"]) for m in self.layer_re.finditer(text)]
            for m in self.up_re.finditer(text):
                target = os.path.normpath(os.path.join(self.root, os.path.dirname(rel), clean(m.group(1))))
                inside = os.path.relpath(target, self.root)
                if inside.startswith(".."):
                    self.problem(f"{rel}:{lineno}", f"path '{clean(m.group(1))}' leaves the repository"
                                 " (a reader's clone has nothing there)")
                elif inside.split(os.sep)[0] in self.tops and not self.exists_in(inside):
                    self.problem(f"{rel}:{lineno}", f"path '{clean(m.group(1))}' ({inside}) does not exist")
            for token, bases in found:
                path = clean(token)
                if not path or SKIP_DIRS.match(path):
                    continue
                if not self.exists(path, bases):
                    where = "" if bases == base_dirs else " (under cpp/)"
                    self.problem(f"{rel}:{lineno}", f"path '{path}'{where} does not exist")

    # -- 2 and 3. versions ---------------------------------------------------------
    def sources_of_truth(self):
        v = {}
        m = re.search(r"project\(\s*aotrun\s+VERSION\s+(\d+\.\d+\.\d+)", self.read("CMakeLists.txt"))
        if not m:
            self.problem("CMakeLists.txt", "no project(aotrun VERSION x.y.z)")
            return None
        v["host"] = vtuple(m.group(1))
        project = m.group(1)

        def macro(text, name):
            mm = re.search(r"#\s*define\s+%s\s+(\d+)\b" % name, text)
            return int(mm.group(1)) if mm else None

        h = "c_api/include/aotrun/aotrun.h"
        text = self.read(h)
        hv = tuple(macro(text, "AOTRUN_VERSION_" + p) for p in ("MAJOR", "MINOR", "PATCH"))
        if hv != v["host"]:
            self.problem(h, f"AOTRUN_VERSION_* say {'.'.join(map(str, hv))}, CMakeLists.txt says {project}")

        a = "abi/include/aotrun/package_abi.h"
        text = self.read(a)
        v["abi"] = (macro(text, "AOTRUN_PKG_ABI_MAJOR"), macro(text, "AOTRUN_PKG_ABI_MINOR"))
        if None in v["abi"]:
            self.problem(a, "no AOTRUN_PKG_ABI_MAJOR / AOTRUN_PKG_ABI_MINOR")

        self.cargo_versions(project)

        s = "cpp/shim/include/aotrun_shim/shim.h"
        text = self.read(s)
        sv = tuple(macro(text, "AOTRUN_SHIM_VERSION_" + p) for p in ("MAJOR", "MINOR", "PATCH"))
        if None in sv:
            self.problem(s, "no AOTRUN_SHIM_VERSION_MAJOR / _MINOR / _PATCH")
            v["shim"] = None
        else:
            v["shim"] = sv
            self.shim_versions(sv)
        return v

    def cargo_versions(self, project):
        ws = "rust/Cargo.toml"
        if not os.path.exists(os.path.join(self.root, ws)):
            return
        text = self.read(ws)
        m = re.search(r"\[workspace\.package\][^\[]*?^version\s*=\s*\"([^\"]+)\"", text, re.M | re.S)
        if m and m.group(1) != project:
            self.problem(ws, f"workspace version {m.group(1)}, CMakeLists.txt says {project}")
        crates = []
        for toml in sorted(glob.glob(os.path.join(self.root, "rust", "*", "Cargo.toml"))):
            rel = self.rel(toml)
            text = self.read(rel)
            name = re.search(r"^name\s*=\s*\"([^\"]+)\"", text, re.M)
            crates.append(name.group(1) if name else None)
            own = re.search(r"^\[package\][^\[]*?^version\s*=\s*\"([^\"]+)\"", text, re.M | re.S)
            if own and own.group(1) != project:
                self.problem(rel, f"version {own.group(1)}, CMakeLists.txt says {project}")
            for dep, pin in re.findall(r"^(aotrun[\w-]*)\s*=\s*\{[^}]*version\s*=\s*\"=?([^\"]+)\"", text, re.M):
                if pin != project:
                    self.problem(rel, f"pins {dep} to {pin}, CMakeLists.txt says {project}")
        lock = "rust/Cargo.lock"
        if os.path.exists(os.path.join(self.root, lock)):
            for name, ver in re.findall(r"name = \"([^\"]+)\"\nversion = \"([^\"]+)\"", self.read(lock)):
                if name in crates and ver != project:
                    self.problem(lock, f"{name} {ver}, CMakeLists.txt says {project}")

    def shim_versions(self, sv):
        want = vstr(sv)
        for cm in ("cpp/shim/CMakeLists.txt", "cpp/shim/cuda/CMakeLists.txt"):
            if not os.path.exists(os.path.join(self.root, cm)):
                continue
            for m in re.finditer(r"^\s*VERSION\s+(\d+\.\d+\.\d+)", self.read(cm), re.M):
                if m.group(1) != want:
                    self.problem(cm, f"VERSION {m.group(1)}, shim.h's AOTRUN_SHIM_VERSION_* say {want}")
        e = "cpp/shim/src/error.cpp"
        text = self.read(e)
        lit = re.search(r"\"aotrun-shim (\d+\.\d+\.\d+)\"", text)
        if lit:
            if lit.group(1) != want:
                self.problem(e, f"aotrun_shim_version() says {lit.group(1)}, shim.h says {want}")
        elif not all(f"AOTRUN_SHIM_VERSION_{p}" in text for p in ("MAJOR", "MINOR", "PATCH")):
            self.problem(e, "aotrun_shim_version() returns neither \"aotrun-shim x.y.z\" nor a string "
                            "built from the AOTRUN_SHIM_VERSION_* macros")

    def check_versions(self, rel, lines, v):
        # Over the whole text, lines joined: a claim may wrap ("1.2 (this\nrelease)").
        text = "\n".join(t for _, t in lines)
        starts, at = [], 0
        for _, t in lines:
            starts.append(at)
            at += len(t) + 1

        def where(offset):
            i = max(0, bisect.bisect_right(starts, offset) - 1)
            return f"{rel}:{lines[i][0]}"

        def said(m):
            return " ".join(m.group(0).split())

        for pat in CURRENT_CLAIMS:
            for m in pat.finditer(text):
                kind = claim_kind(text[: m.start()])
                actual = v.get(kind)
                if actual and None not in actual and not same(m.group(1), actual):
                    self.problem(where(m.start()), f"says {said(m)!r}: the current {NAMES[kind]} is {vstr(actual)}")
        for m in SINCE_HOST.finditer(text):
            ver = m.group(1) or m.group(2)
            if above(ver, v["host"]):
                self.problem(where(m.start()), f"says {said(m)!r}, above aotrun's version {vstr(v['host'])}")
        for m in SINCE_SHIM.finditer(text):
            if v["shim"] and above(m.group(1), v["shim"]):
                self.problem(where(m.start()), f"says {said(m)!r}, above the shim's version {vstr(v['shim'])}")
        for m in SINCE_ABI.finditer(text):
            if None not in v["abi"] and above(m.group(1), v["abi"]):
                self.problem(where(m.start()), f"says {said(m)!r}, above the package ABI's version {vstr(v['abi'])}")

    def run(self):
        v = self.sources_of_truth()
        for rel, lines in self.texts():
            self.check_paths(rel, lines)
            if v:
                self.check_versions(rel, lines, v)
        return self.problems


NAMES = {"host": "aotrun version (CMakeLists.txt)", "abi": "package ABI version (package_abi.h)",
         "shim": "shim version (shim.h)"}


def claim_kind(before):
    """Whose version a claim states, from the words before it in its sentence."""
    sentence = re.split(r"[.;:]\s|\n\n", before)[-1][-200:]
    best, kind = -1, "host"
    for word, k in (("package ABI", "abi"), ("aotrun_pkg_abi_version", "abi"), ("shim", "shim"),
                    ("aotrun_version", "host"), ("host", "host"), ("library's", "host"), ("C API", "host")):
        at = sentence.rfind(word)
        if at > best:
            best, kind = at, k
    return kind


def c_comments(text):
    """(line number, comment text) of each line of a C/C++ file."""
    out, in_block = [], False
    for lineno, line in enumerate(text.split("\n"), 1):
        parts, i = [], 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                parts.append(line[i:] if end < 0 else line[i:end])
                if end < 0:
                    break
                in_block, i = False, end + 2
            else:
                block, slash = line.find("/*", i), line.find("//", i)
                if slash >= 0 and (block < 0 or slash < block):
                    parts.append(line[slash + 2:])
                    break
                if block < 0:
                    break
                in_block, i = True, block + 2
        if parts:
            out.append((lineno, " ".join(parts)))
    return out


def clean(token):
    token = token.split("#")[0]
    while True:
        before = token
        ellipsis = token.endswith("...")
        token = token.rstrip(".,:;!?'\"=") + ("..." if ellipsis else "")
        token = re.sub(r":\d+(-\d+)?$", "", token)
        if token.endswith(")") and token.count("(") < token.count(")"):
            token = token[:-1]
        if token == before:
            return token


def globbed(path):
    path = re.sub(r"<[^>/]*>", "*", path)
    path = re.sub(r"\{[^}]*(?:…|\.\.\.)[^}]*\}", "*", path)
    path = path.replace("…", "*").replace("...", "*")
    return re.sub(r"\*{3,}", "**", path)


def braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += braces(path[: m.start()] + alt.strip() + path[m.end():])
    return out


# -- self-test ------------------------------------------------------------------------
def self_test():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", ".."))
    failures = []
    with tempfile.TemporaryDirectory(prefix="check_docs_") as tmp:
        # A copy of what the check reads (and a few folders paths point into).
        def copy(rel):
            src, dst = os.path.join(root, rel), os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)

        for rel in ["CMakeLists.txt", "README.md", ".clang-format", "docs", "c_api", "abi/include",
                    "cpp", "rust/Cargo.toml", "rust/Cargo.lock", "rust/aotrun/Cargo.toml",
                    "rust/aotrun-sys/Cargo.toml", "rust/aotrun-package/Cargo.toml"]:
            copy(rel)
        for top in os.listdir(root):  # empty top folders: the path syntax knows them
            if os.path.isdir(os.path.join(root, top)) and not SKIP_DIRS.match(top):
                os.makedirs(os.path.join(tmp, top), exist_ok=True)

        def check():
            return Checker(tmp).run()

        def expect(what, needle, problems):
            hits = [p for p in problems if needle in p]
            if not hits:
                failures.append(f"{what}: not reported (wanted a problem containing {needle!r}); got:\n  "
                                + "\n  ".join(problems or ["(nothing)"]))
            else:
                print(f"ok: {what}: {hits[0]}")

        # The copy is clean except for what the other folders' absence breaks.
        baseline = set(check())

        def planted(rel, edit):
            """The problems check() adds to the baseline while `edit` (old text -> new) is applied to rel."""
            path = os.path.join(tmp, rel)
            with open(path, encoding="utf-8") as f:
                old = f.read()
            new = edit(old)
            if new == old:
                failures.append(f"self-test cannot plant into {rel}: the text to replace is not there")
                return []
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            try:
                return [p for p in check() if p not in baseline]
            finally:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(old)

        # Versions that are wrong whatever the current ones are: the next minors.
        v = Checker(tmp).sources_of_truth()
        if not v or not v.get("shim"):
            print("check_docs self-test: the tree's own versions cannot be read (run check_docs.py)")
            return 1
        future = f"{v['host'][0]}.{v['host'][1] + 1}"
        wrong = future + ".0"
        shim_future = f"{v['shim'][0]}.{v['shim'][1] + 1}"
        cases = [
            ("stale path in docs", "docs/ARCHITECTURE.md", "\nSee `cpp/loader/library.cpp`.\n",
             "'cpp/loader/library.cpp' does not exist"),
            ("stale path in plain text", "docs/SHIM.md", "\nThe graph lives in cpp/graph/cuda_graph_device.cpp.\n",
             "'cpp/graph/cuda_graph_device.cpp' does not exist"),
            ("stale glob", "docs/CUDA.md", "\nAll of `cpp/graph/...` moved.\n", "'cpp/graph/...' does not exist"),
            ("stale layer-relative path", "docs/PT2.md", "\nIn `package/pt2/loader/zip.cpp`.\n",
             "'package/pt2/loader/zip.cpp' (under cpp/) does not exist"),
            ("stale path in README", "README.md", "\nRun `scripts/check-format.sh`.\n",
             "'scripts/check-format.sh' does not exist"),
            ("stale path in a header comment", "c_api/include/aotrun/aotrun.h", "\n/* See docs/NOPE.md. */\n",
             "'docs/NOPE.md' does not exist"),
            ("wrong current version", "docs/RUST.md", f"\nThe library is {wrong} today.\n",
             f"says '{wrong} today'"),
            ("version from the future", "docs/API.md", f"\nSince {future} there is more.\n",
             f"says 'Since {future}'"),
            ("wrong current version across a line break", "docs/ARCHITECTURE.md",
             f"\nHost API 1.1 and {future} (this\nrelease) have no frozen copy.\n", f"says '{future} (this release)'"),
            ("wrong current shim version", "docs/SHIM.md", f"\nThe shim is {shim_future}.0 today.\n",
             "the current shim version (shim.h)"),
            ("path outside the repository", "README.md", "\nMeasured with `../shared/tools/fresh-ci`.\n",
             "'../shared/tools/fresh-ci' leaves the repository"),
            ("shim version from the future", "cpp/shim/cuda/include/aotrun_shim/cuda.h",
             f"\n/* Since aotrun-shim {shim_future}. */\n", f"says 'aotrun-shim {shim_future}'"),
        ]
        for what, rel, text, needle in cases:
            expect(what, needle, planted(rel, lambda old: old + text))

        def swap(pattern, new):
            return lambda old: re.sub(pattern, new, old, count=1, flags=re.M)

        swaps = [
            ("aotrun.h disagrees with CMake", "c_api/include/aotrun/aotrun.h",
             swap(r"(#define AOTRUN_VERSION_MINOR )\d+", r"\g<1>77"), "AOTRUN_VERSION_* say"),
            ("Cargo disagrees with CMake", "rust/Cargo.toml", swap(r'^version = "', 'version = "0.'),
             "workspace version 0."),
            ("shim CMake disagrees with shim.h", "cpp/shim/CMakeLists.txt", swap(r"^(\s*VERSION )", r"\g<1>9"),
             "VERSION 9"),
            ("aotrun_shim_version() disagrees with shim.h", "cpp/shim/src/error.cpp",
             lambda old: 'const char* aotrun_shim_version(void) { return "aotrun-shim 0.0.1"; }\n',
             "aotrun_shim_version() says 0.0.1"),
            ("shim.h has no version macro", "cpp/shim/include/aotrun_shim/shim.h",
             swap(r"AOTRUN_SHIM_VERSION_MAJOR", "AOTRUN_SHIM_VERSION_MAJOR_GONE"), "no AOTRUN_SHIM_VERSION_MAJOR"),
        ]
        for what, rel, edit, needle in swaps:
            expect(what, needle, planted(rel, edit))
        # And the untouched copy raised nothing of the kinds planted.
        if any("says" in p for p in baseline):
            failures.append("the unplanted copy already has version problems:\n  " + "\n  ".join(sorted(baseline)))
    if failures:
        print("check_docs self-test FAILED:\n" + "\n".join(failures))
        return 1
    print("check_docs self-test: every planted problem was reported")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    here = os.path.dirname(os.path.abspath(__file__))
    root = argv[1] if len(argv) > 1 else os.path.join(here, "..", "..")
    problems = Checker(root).run()
    if problems:
        print(f"check_docs: {len(problems)} problem(s) (tests/docs/check_docs.py says what is checked):")
        for p in problems:
            print("  " + p)
        return 1
    print("check_docs: paths and versions in the docs agree with the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Refuses gtest_discover_tests() calls whose arguments CMake would drop.

gtest_discover_tests parses its arguments with cmake_parse_arguments: a word
that follows a one-value keyword's value (DISCOVERY_TIMEOUT 60 ENVIRONMENT
...) belongs to no keyword and is dropped without a word, and a quoted
property value with a ';' ("A=1;B=2") reaches set_tests_properties as
several words, so the second becomes a property name. Both happened here:
the shim's isa_avx2/isa_scalar kernel tests ran for weeks without the
environment that capped their vector paths (issue #41). List-valued
properties go through aotrun_discovered_tests_property
(cmake/AotrunDiscoveredTests.cmake).

Usage: check_discovered_properties.py [REPO_DIR]   (exit 1 with one line per
problem); --self-test checks the checker on known good and bad calls.
"""
import os
import re
import sys

ONE_VALUE = {"TEST_PREFIX", "TEST_SUFFIX", "TEST_FILTER", "TEST_LIST", "DISCOVERY_TIMEOUT", "DISCOVERY_MODE",
             "WORKING_DIRECTORY", "XML_OUTPUT_DIR"}
MULTI_VALUE = {"EXTRA_ARGS", "PROPERTIES"}
FLAGS = {"NO_PRETTY_TYPES", "NO_PRETTY_VALUES"}
KEYWORDS = ONE_VALUE | MULTI_VALUE | FLAGS
SKIP_DIRS = {".git", "target", "node_modules"}


def calls(text):
    """(line, argument text) of each gtest_discover_tests( ... ) call."""
    for m in re.finditer(r"^[ \t]*gtest_discover_tests\s*\(", text, re.M):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text.count("\n", 0, m.start()) + 1, text[m.end():i - 1]


def words(args):
    """The call's words: quoted strings kept whole (with their quotes), comments dropped."""
    args = re.sub(r"#[^\n]*", "", args)
    return re.findall(r'"(?:[^"\\]|\\.)*"|[^\s"]+', args)


def problems(args):
    out = []
    ws = words(args)[1:]  # the first word is the target
    mode, expect_value = None, False
    for w in ws:
        if w in KEYWORDS:
            mode, expect_value = w, w in ONE_VALUE
            continue
        if expect_value:
            expect_value = False
            continue
        if mode in MULTI_VALUE:
            if mode == "PROPERTIES" and w.startswith('"') and ";" in w:
                out.append("property value %s has a ';': it reaches set_tests_properties as several words "
                           "(use aotrun_discovered_tests_property)" % w)
            continue
        out.append("'%s' follows %s's value and belongs to no keyword: CMake drops it (put PROPERTIES last; "
                   "list values through aotrun_discovered_tests_property)" % (w, mode or "the target"))
    return out


def check(repo):
    bad = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for f in files:
            if f != "CMakeLists.txt" and not f.endswith(".cmake"):
                continue
            path = os.path.join(root, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for line, args in calls(text):
                for p in problems(args):
                    bad.append("%s:%d: %s" % (os.path.relpath(path, repo), line, p))
    return bad


def self_test():
    good = 'gtest_discover_tests(t TEST_PREFIX p. DISCOVERY_TIMEOUT 60 TEST_LIST L PROPERTIES LABELS shim TIMEOUT 9)'
    dropped = 'gtest_discover_tests(t PROPERTIES LABELS shim DISCOVERY_TIMEOUT 60\n  ENVIRONMENT "A=1")'
    split = 'gtest_discover_tests(t PROPERTIES LABELS shim ENVIRONMENT "A=1;B=2")'
    results = [list(problems(a)) for _, a in calls(good + "\n" + dropped + "\n" + split + "\n")]
    ok = len(results) == 3 and not results[0] and len(results[1]) == 2 and len(results[2]) == 1
    print("self-test %s: %s" % ("passed" if ok else "FAILED", results))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    bad = check(os.path.abspath(repo))
    for b in bad:
        print(b)
    if bad:
        return 1
    print("gtest_discover_tests: every argument reaches a keyword")
    return 0


if __name__ == "__main__":
    sys.exit(main())

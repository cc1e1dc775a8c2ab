#!/usr/bin/env python3
"""Regenerates the tables of docs/PERFORMANCE.md from a bench/run_all.sh run.

Each table sits between `<!-- BEGIN bench:<name> -->` and
`<!-- END bench:<name> -->` in the document; everything outside the markers
(the prose) is left as it is. Figures are medians over the repetitions of a
run, with the range of the ratio beside them.

usage: report.py --results DIR --doc docs/PERFORMANCE.md
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path


def load_runs(path):
    """name -> list of per-repetition result dicts (iterations only)."""
    data = json.loads(Path(path).read_text())
    runs = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred"):
            raise SystemExit(f"{path}: {b['name']} failed: {b.get('error_message')}")
        runs.setdefault(b.get("run_name", b["name"]), []).append(b)
    return runs


def med(reps, key):
    return statistics.median(r[key] for r in reps)


def rng(reps, key):
    vals = [r[key] for r in reps]
    return f"{statistics.median(vals):.2f} ({min(vals):.2f}–{max(vals):.2f})"


def find(runs, prefix):
    for name, reps in runs.items():
        if name == prefix or name.startswith(prefix + "/"):
            return reps
    raise SystemExit(f"no results for {prefix}")


def verdict(ok):
    return "yes" if ok else "**no**"


def overhead_table(runs):
    rows = [
        ("noop/direct_run", "direct `run` (A/A: floor vs itself)", "direct `run`", None),
        ("noop/direct_single_threaded", "direct `run_single_threaded` (A/A)", "direct `run_single_threaded`", None),
        ("noop/threaded", "runner, threaded, num_models 1", "direct `run`", ("overhead_ns", 1000.0, "+≤ 1000 ns")),
        ("noop/single_threaded", "runner, single_threaded", "direct `run_single_threaded`",
         ("overhead_ns", 100.0, "+≤ 100 ns")),
        ("noop/graph", "runner, graph (replay)", "direct `run_single_threaded`", None),
        ("noop/graph_vs_single_threaded", "runner, graph (replay)", "runner, single_threaded",
         ("ratio", 1.0, "ratio ≤ 1")),
        ("noop_abi10/single_threaded_fallback", "runner, single_threaded on ABI 1.0 (falls back to `run`)",
         "direct `run`", None),
    ]
    out = ["| path | reference (floor) | ns/call | floor ns/call | overhead ns | ratio (range) | target | met |",
           "|---|---|---:|---:|---:|---:|---|---|"]
    for name, what, ref, target in rows:
        reps = find(runs, name)
        t, met = "—", "—"
        if target:
            key, limit, t = target
            met = verdict(med(reps, key) <= limit)
        out.append(f"| {what} | {ref} | {med(reps, 'call_ns'):.0f} | {med(reps, 'floor_ns'):.0f} | "
                   f"{med(reps, 'overhead_ns'):.0f} | {rng(reps, 'ratio')} | {t} | {met} |")
    return "\n".join(out)


def mlp_table(runs):
    out = ["| batch | path | µs/call | floor µs/call | overhead µs | ratio (range) | samples/s |",
           "|---:|---|---:|---:|---:|---:|---:|"]
    paths = [("direct", "direct `run_single_threaded` (A/A)"), ("threaded", "runner, threaded (floor: direct `run`)"),
             ("single_threaded", "runner, single_threaded"), ("graph", "runner, graph (replay)")]
    for batch in (1, 16, 64):
        for key, what in paths:
            reps = find(runs, f"BM_Mlp/{key}/batch:{batch}")
            out.append(f"| {batch} | {what} | {med(reps, 'call_us'):.1f} | {med(reps, 'floor_us'):.1f} | "
                       f"{med(reps, 'overhead_us'):.1f} | {rng(reps, 'ratio')} | "
                       f"{med(reps, 'items_per_second'):,.0f} |")
    return "\n".join(out)


def async_tables(runs):
    out = ["| num_models | max_inflight | runs/s | model busy | peak in flight | blocked µs/submission |",
           "|---:|---:|---:|---:|---:|---:|"]
    for models in (1, 2):
        for inflight in (1, 2, 4, 32, 65536):
            reps = find(runs, f"async/throughput/models:{models}/inflight:{inflight}")
            label = "65536 (unbounded)" if inflight == 65536 else str(inflight)
            out.append(f"| {models} | {label} | {med(reps, 'runs_per_s'):,.0f} | {med(reps, 'model_busy'):.2f} | "
                       f"{med(reps, 'peak_inflight'):.0f} | {med(reps, 'blocked_us'):.1f} |")
    out += ["", "| num_models | window 4 runs/s | unbounded runs/s | ratio (range) | target | met |",
            "|---:|---:|---:|---:|---|---|"]
    for models in (1, 2):
        reps = find(runs, f"async/window_ratio/models:{models}")
        out.append(f"| {models} | {med(reps, 'w4_runs_per_s'):,.0f} | {med(reps, 'unbounded_runs_per_s'):,.0f} | "
                   f"{rng(reps, 'ratio')} | ≥ 0.95 | {verdict(med(reps, 'ratio') >= 0.95)} |")
    return "\n".join(out)


def machine_table(path):
    out = ["| | |", "|---|---|"]
    for line in Path(path).read_text().splitlines():
        key, _, value = line.partition(":")
        out.append(f"| {key.strip().replace('_', ' ')} | {value.strip()} |")
    return "\n".join(out)


def replace_section(doc, name, body):
    pattern = re.compile(rf"(<!-- BEGIN bench:{name} -->\n).*?(<!-- END bench:{name} -->)", re.S)
    if not pattern.search(doc):
        raise SystemExit(f"the document has no bench:{name} markers")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), doc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, type=Path)
    ap.add_argument("--doc", required=True, type=Path)
    a = ap.parse_args()
    doc = a.doc.read_text()
    doc = replace_section(doc, "machine", machine_table(a.results / "machine.txt"))
    doc = replace_section(doc, "overhead", overhead_table(load_runs(a.results / "overhead.json")))
    doc = replace_section(doc, "mlp", mlp_table(load_runs(a.results / "mlp.json")))
    doc = replace_section(doc, "async", async_tables(load_runs(a.results / "async.json")))
    doc = replace_section(doc, "async_rss", (a.results / "async_rss.md").read_text())
    a.doc.write_text(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The AOTInductor compatibility matrix: every fixture of the corpus
(compat/aoti/fixtures/torch-*/, every model and input set of its manifest)
run by aotrun in every mode against each libtorch release named, each cell in
its own process (build/tests/pt2/aoti_matrix_driver) with a timeout, so a
crash is a cell and not the end of the run. Writes docs/COMPAT_MATRIX.md and
refreshes the per-release quirks table in compat/aoti/README.md (between its
<!-- quirks:begin --> / <!-- quirks:end --> markers), both from the manifests
and the runs; nothing in them is typed by hand.

    cmake --build build -j2 --target aoti_matrix_driver
    python3 compat/aoti/matrix.py --libtorch 2.15.0 --libtorch 2.11.0

--libtorch takes a release (fetched with scripts/fetch-libtorch.sh, cached)
or a directory holding libtorch_cpu.so, each run with AOTRUN_PROVIDER=libtorch;
--libtorch shim is the column of aotrun's own shim (AOTRUN_PROVIDER=shim, no
libtorch). Only the Python standard library is
needed. --json FILE also writes every cell.

Cell results: ok; ok, but through the fallback (the release lacks
RunSingleThreaded); refused (the aotrun status code, and where: open, runner
or run); mismatch (max |diff| against eager PyTorch, beyond the manifest's
tolerance: float32 rtol=1.3e-6 atol=1e-5, int64/bool exact); crash (the
signal); timeout.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "compat" / "aoti" / "fixtures"
MODES = ("threaded", "single_threaded", "graph")


def vkey(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


SHIM = "aotrun shim"


def fetch_libtorch(spec: str) -> tuple[str, str]:
    """(release label, lib dir); "shim" is aotrun's own shim (no libtorch)."""
    if spec == "shim":
        return SHIM, "shim"
    p = Path(spec)
    if p.is_dir() or p.is_file():
        m = re.search(r"libtorch-(\d+\.\d+\.\d+)", str(p.resolve()))
        return (m.group(1) if m else str(p)), str(p)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "fetch-libtorch.sh"), spec],
                         capture_output=True, text=True, check=True).stdout
    return spec, out.strip().splitlines()[-1]


def corpus() -> list[dict]:
    cells = []
    for d in sorted(FIXTURES.glob("torch-*/manifest.json"), key=lambda p: vkey(p.parent.name)):
        m = json.loads(d.read_text())
        release = d.parent.name[len("torch-"):]
        tol = m.get("tolerance", {}).get("float32", {"rtol": 1.3e-6, "atol": 1e-5})
        for model, info in sorted(m["models"].items()):
            for set_name, files in info["sets"].items():
                cells.append(dict(release=release, dir=str(d.parent), model=model, set=set_name,
                                  inputs=[f["file"] for f in files["inputs"]],
                                  outputs=[f["file"] for f in files["outputs"]], tol=tol))
    return cells


def run_cell(driver: str, lib: str, case: dict, mode: str, timeout: float) -> dict:
    cmd = [driver, "--pkg", f"{case['dir']}/{case['model']}.pt2", "--mode", mode, "--runs", "3",
           "--rtol", repr(case["tol"]["rtol"]), "--atol", repr(case["tol"]["atol"])]
    for f in case["inputs"]:
        cmd += ["--in", f"{case['dir']}/{f}"]
    for f in case["outputs"]:
        cmd += ["--want", f"{case['dir']}/{f}"]
    # The column's provider, whatever the caller's environment says
    # (AOTRUN_PROVIDER is read before AOTRUN_LIBTORCH: docs/PT2.md).
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if lib == "shim":
        env.pop("AOTRUN_LIBTORCH", None)
        env["AOTRUN_PROVIDER"] = "shim"
    else:
        env.update(AOTRUN_LIBTORCH=lib, AOTRUN_PROVIDER="libtorch")
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"result": "timeout", "message": f"no result in {timeout:.0f} s"}
    res: dict = {}
    line = next((l for l in reversed(p.stdout.splitlines()) if l.startswith("{")), None)
    if line:
        try:
            res = json.loads(line)
        except json.JSONDecodeError:
            res = {}
    if p.returncode < 0:
        sig = -p.returncode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        tail = " | ".join(l for l in p.stderr.strip().splitlines()[-3:])
        res = {"result": "crash", "signal": name, "message": tail}
    elif not res:
        res = {"result": "error", "message": f"exit {p.returncode}: " + " | ".join(p.stderr.strip().splitlines()[-3:])}
    res["seconds"] = round(time.monotonic() - t0, 2)
    warn = [l for l in p.stderr.splitlines() if "warn" in l.lower()]
    if warn:
        res["warnings"] = warn[:3]
    # The shim's own reason, which a model without AOTInductorGetLastError
    # (2.6) can only print to stderr.
    said = [l for l in p.stderr.splitlines() if l.startswith("aotrun-shim:")]
    if said and res["result"] != "ok":
        res["stderr"] = said[:2]
    return res


def short(r: dict) -> str:
    k = r["result"]
    if k == "ok":
        return "fb" if r.get("fallback") else "ok"
    if k == "refused":
        return f"R:{r['code']}"
    if k == "mismatch":
        return f"≠{r['max_abs_diff']:.2g}"
    if k == "crash":
        return f"✗{r['signal']}"
    return k


def detail(r: dict) -> str:
    k = r["result"]
    if k == "refused":
        said = "".join(f"; stderr: {l}" for l in r.get("stderr", []))
        return f"refused at {r['stage']}: {r['code']}: {r['message']}{said}"
    if k == "mismatch":
        return f"mismatch, max |diff| {r['max_abs_diff']:.3g}: {r['first']}"
    if k == "crash":
        return f"crash ({r['signal']}): {r.get('message', '')}"
    return f"{k}: {r.get('message', '')}"


def md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- quirks table

def quirks_rows() -> list[list[str]]:
    rows = []
    prev_shims = None
    for d in sorted(FIXTURES.glob("torch-*/manifest.json"), key=lambda p: vkey(p.parent.name)):
        m = json.loads(d.read_text())
        facts = [i.get("facts", {}) for i in m["models"].values()]
        f = next((x for x in facts if "entry_points" in x), {})
        eps = f.get("entry_points", [])
        short_ep = [e.replace("AOTInductorModelContainer", "").replace("AOTInductor", "") for e in eps]
        checks = {x.get("input_checks_in_wrapper") for x in facts}
        guarded = {x.get("input_checks_guarded_by") for x in facts} - {None}
        layout = f.get("layout", {})
        prefix = "`<stem>/`" if layout.get("prefix") else "none"
        so_files = sorted({fn for fn in layout.get("files", []) if fn.startswith("data/aotinductor/")})
        names = ", ".join(f"`{fn.split('/')[-1]}`" for fn in so_files)
        sizes = [x.get("so_size", 0) for x in facts]
        pt2 = [i["size"] for i in m["models"].values()]
        isa = {x.get("metadata", {}).get("AOTI_CPU_ISA") for x in facts} - {None}
        failed = sorted(m.get("export_failures", {}))
        mk = {n: i["facts"]["mkldnn_constants"] for n, i in sorted(m["models"].items())
              if "mkldnn_constants" in i.get("facts", {})}
        mk_text = "; ".join(f"{n}: {x['count']} (metadata " + ", ".join(f"{b} B" for b in x["opaque_metadata_sizes"]) + ")"
                            for n, x in mk.items()) or "-"
        shims = set().union(*[set(x.get("shim_functions", [])) for x in facts]) if facts else set()
        new_shims = sorted(shims - prev_shims) if prev_shims is not None and shims else []
        gone_shims = sorted(prev_shims - shims) if prev_shims is not None and shims else []
        if shims:
            prev_shims = shims
        shim_text = str(len(shims)) if shims else "-"
        if new_shims:
            shim_text += "; new: " + ", ".join(f"`{n}`" for n in new_shims)
        if gone_shims:
            shim_text += "; no longer: " + ", ".join(f"`{n}`" for n in gone_shims)
        rows.append([
            d.parent.name[6:],
            ", ".join(short_ep),
            ("yes" if checks == {True} else "no" if checks == {False} else "some")
            + (f" (they run only if {', '.join(sorted(guarded))} is set)" if guarded else ""),
            prefix + ("" if not layout.get("compressed") else ", deflated") + "; " + names,
            f.get("cxx11_abi", "?").split(" ")[0] + (" (torch: " + ("new" if m.get("torch_cxx11_abi") else "old") + ")"),
            ", ".join(sorted(isa)) or "not recorded",
            "yes" if any(x.get("exec_stack") for x in facts) else "no",
            "yes" if any(x.get("debug_line") for x in facts) else "no",
            m.get("march_method", "?"),
            f"{min(pt2) // 1024}-{max(pt2) // 1024} KB" if pt2 else "-",
            shim_text,
            mk_text,
            ", ".join(failed) or "-",
        ])
    return rows


QUIRKS_HEAD = ["torch", "model .so entry points (AOTInductor[ModelContainer]...)", "input checks in wrapper",
               "archive layout (prefix; model files)", "C++ string ABI of the .so", "AOTI_CPU_ISA", "exec stack",
               "line tables", "-march pinned by", ".pt2 sizes",
               "aoti_* shim functions used (all models; new vs the release above)",
               "mkldnn-layout constants (frozen models; opaque metadata size)", "export failed"]


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(md_escape(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def quirks_markdown() -> str:
    return table(QUIRKS_HEAD, quirks_rows())


def corpus_status_markdown() -> str:
    p = ROOT / "compat" / "aoti" / "corpus.json"
    if not p.exists():
        return ""
    st = json.loads(p.read_text())
    rows = []
    for v, s in sorted(st.items(), key=lambda kv: vkey(kv[0])):
        if "status" in s:
            rows.append([v, s["status"], s.get("numpy", ""), md_escape(s.get("message", "") or "")[:300]])
        # Models added later with export_fixtures.py --only (EXPORT_ARGS).
        for models, o in s.get("only", {}).items():
            rows.append([v, f"{o['status']} (`--only {models}`)", o.get("numpy", ""),
                         md_escape(o.get("message", "") or "")[:300]])
    return table(["torch", "corpus build", "numpy", "message"], rows)


def update_readme(readme: Path) -> None:
    text = readme.read_text()
    block = ("<!-- quirks:begin (generated by compat/aoti/matrix.py --quirks-only; do not edit) -->\n"
             + quirks_markdown() + "\n<!-- quirks:end -->")
    new = re.sub(r"<!-- quirks:begin.*?<!-- quirks:end -->", lambda _: block, text, flags=re.S)
    if new == text and "<!-- quirks:begin" not in text:
        raise SystemExit(f"{readme}: no <!-- quirks:begin --> marker")
    readme.write_text(new)


# ---------------------------------------------------------------- the matrix

def write_matrix(path: Path, libs: list[tuple[str, str]], cells: list[dict], results: dict, argv: list[str]) -> None:
    releases = sorted({c["release"] for c in cells}, key=vkey)
    rows_of = {}
    for c in cells:
        rows_of.setdefault(c["release"], []).append(c)
    lines = [
        "# AOTInductor compatibility matrix",
        "",
        "<!-- Generated by compat/aoti/matrix.py; do not edit. -->",
        "Generated by `compat/aoti/matrix.py` from the corpus in `compat/aoti/fixtures/` "
        "(built by `scripts/build-aoti-corpus.sh`, see `compat/aoti/README.md`). Regenerate with:",
        "",
        "```sh",
        "cmake --build build -j2 --target aoti_matrix_driver",
        "python3 compat/aoti/matrix.py " + " ".join(argv),
        "```",
        "",
        "Each cell is one process (`build/tests/pt2/aoti_matrix_driver`): open the `.pt2` with aotrun's C API "
        "(`AOTRUN_LIBTORCH` = the libtorch release of the column, from `scripts/fetch-libtorch.sh`, with "
        "`AOTRUN_PROVIDER=libtorch`; the `aotrun shim` column: `AOTRUN_PROVIDER=shim` and no libtorch), "
        "create a runner in the mode, run the reference inputs 3 times (graph: warm-up, capture, replay) "
        "and compare each run with the eager PyTorch outputs saved at export, within the manifest's tolerance "
        "(float32: `rtol=1.3e-6, atol=1e-5`; int64 and bool: exact).",
        "",
        "Legend: `ok`; `fb` ok through the fallback (the package lacks `RunSingleThreaded`; run by `Run`); "
        "`R:CODE` refused with that aotrun status code; `≠D` outputs off by max |diff| D; `✗SIG` the process died "
        "of that signal; `timeout`. A cell lists threaded / single_threaded / graph; models with variant input "
        "sets (other sizes of their dynamic dims) show the worst set, details below.",
        "",
        "## Summary",
        "",
    ]
    head = ["package \\ libtorch"] + [l for l, _ in libs]
    rows = []
    for rel in releases:
        row = [rel]
        for lt, _ in libs:
            rs = [results[(rel, c["model"], c["set"], lt, m)] for c in rows_of[rel] for m in MODES]
            ok = sum(r["result"] == "ok" for r in rs)
            bad = {}
            for r in rs:
                if r["result"] != "ok":
                    bad[short(r)] = bad.get(short(r), 0) + 1
            row.append(f"{ok}/{len(rs)} ok" + ("" if not bad else " (" + ", ".join(f"{v}× {k}" for k, v in sorted(bad.items())) + ")"))
        rows.append(row)
    lines += [table(head, rows), ""]
    models = sorted({c["model"] for c in cells})
    # Models the release's export failed on (the manifest's export_failures).
    failed_of = {d.parent.name[len("torch-"):]: json.loads(d.read_text()).get("export_failures", {})
                 for d in FIXTURES.glob("torch-*/manifest.json")}
    order = {"ok": 0, "fb": 1}
    for lt, lib in libs:
        if lib == "shim":
            lines += [f"## {SHIM}", "", "`AOTRUN_PROVIDER=shim`, no libtorch anywhere (docs/SHIM.md)", ""]
        else:
            lines += [f"## libtorch {lt}", "",
                      f"`AOTRUN_PROVIDER=libtorch AOTRUN_LIBTORCH={lib.replace(str(Path.home()), '~')}`", ""]
        rows = []
        for rel in releases:
            row = [rel]
            for model in models:
                sets = [c for c in rows_of[rel] if c["model"] == model]
                if not sets:
                    row.append("export failed" if model in failed_of.get(rel, {}) else "not exported")
                    continue
                per_mode = []
                for m in MODES:
                    worst = max((short(results[(rel, model, c["set"], lt, m)]) for c in sets),
                                key=lambda s: order.get(s, 2))
                    per_mode.append(worst)
                row.append(" / ".join(per_mode))
            rows.append(row)
        lines += [table(["package"] + models, rows), ""]
    lines += ["## Every cell that is not ok", "",
              "Cells of one package release with the same message (the model's name in it "
              "replaced by `<model>`, the libtorch path by `<libtorch>`) are one row; "
              "`--json` has every cell.", ""]
    grouped: dict = {}
    for c in cells:
        for lt, lib in libs:
            for m in MODES:
                r = results[(c["release"], c["model"], c["set"], lt, m)]
                if r["result"] != "ok":
                    msg = detail(r).replace(f"'{c['model']}'", "'<model>'")
                    if lib != "shim":
                        msg = msg.replace(lib, "<libtorch>")
                    msg = msg[:800]
                    g = grouped.setdefault((c["release"], msg), {"models": [], "where": []})
                    name = c["model"] + ("" if c["set"] == "default" else f" ({c['set']})")
                    if name not in g["models"]:
                        g["models"].append(name)
                    if f"{lt} {m}" not in g["where"]:
                        g["where"].append(f"{lt} {m}")
    all_models = {}
    for c in cells:
        all_models.setdefault(c["release"], []).append(c["model"] + ("" if c["set"] == "default" else f" ({c['set']})"))

    def where_text(where: list[str]) -> str:
        out = []
        for lt, _ in libs:
            # "<column> <mode>"; a column's name may hold a space ("aotrun shim").
            ms = [w.rsplit(" ", 1)[1] for w in where if w.rsplit(" ", 1)[0] == lt]
            if ms:
                out.append(lt + ("" if len(ms) == len(MODES) else " (" + ", ".join(ms) + ")"))
        return ", ".join(out)

    bad_rows = [[rel, "all" if sorted(g["models"]) == sorted(all_models[rel]) else ", ".join(g["models"]),
                 where_text(g["where"]), msg] for (rel, msg), g in grouped.items()]
    lines += [table(["package", "models (sets)", "libtorch (modes; all three if none named)", "result"], bad_rows)
              if bad_rows else "none", ""]
    fb = sorted({(c["release"], lt) for c in cells for lt, _ in libs for m in MODES
                 if results[(c["release"], c["model"], c["set"], lt, m)].get("fallback")})
    if fb:
        lines += ["Fallback (ok, through `Run`): " + ", ".join(f"torch {r} packages on libtorch {l}" for r, l in fb)
                  + ": " + next(results[(c["release"], c["model"], c["set"], lt, m)].get("reason", "")
                                .replace(f"'{c['model']}'", "'<model>'")
                                for c in cells for lt, _ in libs for m in MODES
                                if results[(c["release"], c["model"], c["set"], lt, m)].get("fallback")), ""]
    lines += ["## Packages per torch release", "",
              "From each manifest's `facts` (read with `nm -D`, `readelf`, `objdump` at export).", "",
              quirks_markdown(), ""]
    cs = corpus_status_markdown()
    if cs:
        lines += ["## Corpus build (`compat/aoti/corpus.json`)", "", cs, ""]
    path.write_text("\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--libtorch", action="append", default=[], help="release (fetched) or lib dir; repeat")
    ap.add_argument("--driver", default=str(ROOT / "build" / "tests" / "pt2" / "aoti_matrix_driver"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "COMPAT_MATRIX.md")
    ap.add_argument("--readme", type=Path, default=ROOT / "compat" / "aoti" / "README.md")
    ap.add_argument("--json", type=Path, help="also write every cell here")
    ap.add_argument("--release", action="append", help="only these package releases (no docs written)")
    ap.add_argument("--quirks-only", action="store_true", help="only refresh the README's quirks table")
    ap.add_argument("--from-json", type=Path, help="render the docs from a --json file of an earlier run, running nothing")
    args = ap.parse_args()

    if args.quirks_only:
        update_readme(args.readme)
        print(f"updated {args.readme}")
        return 0
    libs = [fetch_libtorch(s) for s in (args.libtorch or ["2.15.0", "2.11.0"])]
    libs.sort(key=lambda l: vkey(l[0]), reverse=True)
    cells = corpus()
    if args.release:
        cells = [c for c in cells if c["release"] in args.release]
    jobs = [(c, lt, lib, m) for c in cells for lt, lib in libs for m in MODES]
    print(f"{len(jobs)} cells: {len(cells)} cases x {len(libs)} libtorch x {len(MODES)} modes, {args.jobs} at a time",
          file=sys.stderr)
    results = {}
    if args.from_json:
        for r in json.loads(args.from_json.read_text()):
            key = (r.pop("release"), r.pop("model"), r.pop("set"), r.pop("libtorch"), r.pop("mode"))
            results[key] = r
        jobs = []
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(run_cell, args.driver, lib, c, m, args.timeout): (c, lt, m) for c, lt, lib, m in jobs}
        for i, f in enumerate(cf.as_completed(futs), 1):
            c, lt, m = futs[f]
            r = f.result()
            results[(c["release"], c["model"], c["set"], lt, m)] = r
            if r["result"] != "ok":
                print(f"[{i}/{len(jobs)}] torch {c['release']} {c['model']}/{c['set']} libtorch {lt} {m}: {detail(r)[:300]}",
                      file=sys.stderr)
    if args.json and not args.from_json:
        args.json.write_text(json.dumps([dict(release=k[0], model=k[1], set=k[2], libtorch=k[3], mode=k[4], **v)
                                         for k, v in sorted(results.items())], indent=1) + "\n")
    if not args.release:
        argv = [f"--libtorch {'shim' if lib == 'shim' else l}" for l, lib in libs]
        write_matrix(args.out, libs, cells, results, argv)
        update_readme(args.readme)
        print(f"wrote {args.out}, updated {args.readme}", file=sys.stderr)
    n_ok = sum(r["result"] == "ok" for r in results.values())
    print(f"{n_ok}/{len(results)} ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

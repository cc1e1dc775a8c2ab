//! A crate outside the workspace, as a new user makes one: a path dependency
//! on `aotrun`, built offline (the same Debian directory source), every
//! ```rust snippet of README.md, docs/GETTING_STARTED.md and docs/RUST.md as
//! one of its binaries — compiled, and run from a directory where
//! `build/packages` is the packages directory, with no environment variable
//! (no LD_LIBRARY_PATH, no AOTRUN_*), in both linking modes:
//!
//! * default features (`load-dynamic`): no rpath, no build.rs;
//! * feature `link`, with the three-line build.rs docs/RUST.md shows.
//!
//! A snippet fence `rust,no_run` is compiled only. Prints how long the first
//! inference took from an empty crate (the "one command after the build").
//!
//! The build tree is the one ctest runs from (`AOTRUN_BUILD_DIR`, set by
//! rust/CMakeLists.txt). One in `<repo>/build*/` is found with no variable;
//! one elsewhere (`cmake -B /elsewhere/build`) the documented way: the user
//! sets `AOTRUN_BUILD_DIR`, and so does this test, for the builds only (the
//! binaries still run with an empty environment). Independently of where
//! ctest's tree is, a copy of the library in a folder outside `<repo>/build*/`
//! is found through `AOTRUN_BUILD_DIR` alone, and a wrong `AOTRUN_BUILD_DIR`
//! stops the build naming it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

struct Snippet {
    name: String,
    code: String,
    run: bool,
}

/// The ```rust blocks of `file` (rust, rust,no_run; anything else is not Rust).
fn snippets(file: &str) -> Vec<Snippet> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```rust") else { continue };
        let run = !info.contains("no_run");
        let mut code = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            code.push_str(l);
            code.push('\n');
        }
        let stem = file.rsplit('/').next().unwrap().trim_end_matches(".md").to_lowercase().replace('_', "-");
        out.push(Snippet { name: format!("{stem}-{}", n + 1), code, run });
    }
    out
}

/// A snippet that is not a whole program runs inside `main` with the
/// context docs/RUST.md states: `package` is the example MLP.
fn program(code: &str) -> String {
    if code.contains("fn main") {
        return code.to_string();
    }
    format!(
        "#![allow(unused)]\nfn main() -> Result<(), Box<dyn std::error::Error>> {{\n    \
         let package = aotrun::Package::open(\"build/packages/mlp\")?;\n{code}\n    Ok(())\n}}\n"
    )
}

/// The build tree ctest runs from (`AOTRUN_BUILD_DIR`), when it is not one
/// the build script finds on its own (`<repo>/build*/`): what a user's shell
/// must then name in `AOTRUN_BUILD_DIR` (docs/RUST.md).
fn out_of_tree_build_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AOTRUN_BUILD_DIR").filter(|d| !d.is_empty())?;
    let dir = PathBuf::from(dir).canonicalize().expect("AOTRUN_BUILD_DIR names no directory");
    let in_repo = dir.parent() == Some(repo().as_path())
        && dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("build"));
    (!in_repo).then_some(dir)
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    // What a new user's shell has: none of what ctest or cargo set for us.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("AOTRUN_") || k.starts_with("CARGO_") || k.starts_with("RUST") || k.starts_with("DEP_") {
            c.env_remove(&k);
        }
    }
    c.env_remove("LD_LIBRARY_PATH").env_remove("PKG_CONFIG_PATH");
    // A build tree outside the source tree: the one variable a user sets.
    if let Some(dir) = out_of_tree_build_dir() {
        c.env("AOTRUN_BUILD_DIR", dir);
    }
    c
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_crate_outside_the_workspace_runs_every_doc_snippet_with_no_environment() {
    let packages = PathBuf::from(std::env::var_os("AOTRUN_PACKAGES_DIR").unwrap()).canonicalize().unwrap();
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("outside-crate");
    let _ = std::fs::remove_dir_all(&tmp);
    let krate = tmp.join("user-crate");
    std::fs::create_dir_all(krate.join("src/bin")).unwrap();
    std::fs::create_dir_all(krate.join(".cargo")).unwrap();
    let aotrun = Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"user-crate\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [features]\ndefault = [\"aotrun/load-dynamic\"]\nlink = [\"aotrun/link\"]\n\n\
             [dependencies]\naotrun = {{ path = \"{}\", default-features = false }}\n\
             tokio = {{ version = \"1\", default-features = false, features = [\"rt\"] }}\n\n[workspace]\n",
            aotrun.display()
        ),
    )
    .unwrap();
    std::fs::copy(repo().join("rust/.cargo/config.toml"), krate.join(".cargo/config.toml")).unwrap();
    // docs/RUST.md's build.rs for link mode; inert in load-dynamic mode, so
    // that binary gets no rpath at all.
    std::fs::write(
        krate.join("build.rs"),
        "fn main() {\n    if std::env::var_os(\"CARGO_FEATURE_LINK\").is_none() {\n        return;\n    }\n    \
         if let Ok(dir) = std::env::var(\"DEP_AOTRUN_RUST_LIB_DIR\") {\n        \
         println!(\"cargo:rustc-link-arg=-Wl,-rpath,{dir}\");\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/bin/where.rs"), "fn main() {\n    println!(\"{}\", aotrun::init().unwrap());\n}\n")
        .unwrap();
    let mut all = Vec::new();
    for file in ["README.md", "docs/GETTING_STARTED.md", "docs/RUST.md"] {
        all.extend(snippets(file));
    }
    assert!(all.len() >= 5, "found only {} Rust snippets", all.len());
    for s in &all {
        std::fs::write(krate.join(format!("src/bin/{}.rs", s.name)), program(&s.code)).unwrap();
    }
    // Where the snippets run: `build/packages` is this build's packages.
    let cwd = tmp.join("cwd");
    std::fs::create_dir_all(cwd.join("build")).unwrap();
    std::os::unix::fs::symlink(&packages, cwd.join("build/packages")).unwrap();

    match out_of_tree_build_dir() {
        Some(dir) => {
            println!("build tree outside the source tree: the crate is built with AOTRUN_BUILD_DIR={}", dir.display())
        }
        None => println!("build tree in <repo>/build*/: the crate is built with no variable"),
    }

    let first =
        &all.iter().find(|s| s.run && s.name.starts_with("getting-started")).expect("a GETTING_STARTED snippet").name;
    for (mode, flags, want) in [
        ("load-dynamic", &[][..], "loaded from"),
        ("link", &["--no-default-features", "--features", "link"][..], "linked"),
    ] {
        let target = tmp.join(format!("target-{mode}"));
        let start = Instant::now();
        // The first inference: build the crate and run the GETTING_STARTED snippet.
        let st = cargo()
            .args(["build", "--offline", "--quiet", "-j2", "--bin", first])
            .args(flags)
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&krate)
            .status()
            .unwrap();
        assert!(st.success(), "{mode}: cargo build of {first} failed");
        let exe = |name: &str| target.join("debug").join(name);
        let out = Command::new(exe(first)).env_clear().env("PATH", "/usr/bin:/bin").current_dir(&cwd).output().unwrap();
        assert!(out.status.success(), "{mode}: {first}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        println!("{mode}: fresh crate to first inference: {:.1} s", start.elapsed().as_secs_f64());

        let st = cargo()
            .args(["build", "--offline", "--quiet", "-j2", "--bins"])
            .args(flags)
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&krate)
            .status()
            .unwrap();
        assert!(st.success(), "{mode}: cargo build of the snippets failed");
        // load-dynamic: no DT_NEEDED on libaotrun and no rpath (when readelf is there).
        if let Ok(elf) = Command::new("readelf").arg("-d").arg(exe(first)).output() {
            let elf = String::from_utf8_lossy(&elf.stdout);
            let linked = elf.contains("libaotrun.so.1") || elf.contains("RUNPATH") || elf.contains("RPATH");
            assert_eq!(linked, mode == "link", "{mode}: dynamic section:\n{elf}");
        }
        let out = Command::new(exe("where")).env_clear().current_dir(&cwd).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(want),
            "{mode}: where: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for s in all.iter().filter(|s| s.run) {
            let out =
                Command::new(exe(&s.name)).env_clear().env("PATH", "/usr/bin:/bin").current_dir(&cwd).output().unwrap();
            assert!(
                out.status.success(),
                "{mode}: snippet {} failed: {}\n--- code\n{}\n--- stdout\n{}\n--- stderr\n{}",
                s.name,
                out.status,
                s.code,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        println!("{mode}: {} snippets compiled, {} run", all.len(), all.iter().filter(|s| s.run).count());
    }

    // A build tree the default search cannot see (not <repo>/build*/): a
    // folder holding this build's library, named by AOTRUN_BUILD_DIR only.
    let lib_dir = PathBuf::from(aotrun::sys::loader::BUILD_LIB_DIR.expect("this crate was built against a libaotrun"));
    let elsewhere = tmp.join("elsewhere-build");
    std::fs::create_dir_all(elsewhere.join("c_api")).unwrap();
    for f in ["libaotrun.so", "libaotrun.so.1"] {
        std::os::unix::fs::symlink(lib_dir.join(f).canonicalize().unwrap(), elsewhere.join("c_api").join(f)).unwrap();
    }
    let elsewhere = elsewhere.canonicalize().unwrap();
    let target = tmp.join("target-load-dynamic");
    let st = cargo()
        .args(["build", "--offline", "--quiet", "-j2", "--bin", "where"])
        .env("AOTRUN_BUILD_DIR", &elsewhere)
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&krate)
        .status()
        .unwrap();
    assert!(st.success(), "cargo build with AOTRUN_BUILD_DIR={} failed", elsewhere.display());
    let out = Command::new(target.join("debug/where")).env_clear().current_dir(&cwd).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!("loaded from {}", elsewhere.join("c_api/libaotrun.so.1").display());
    assert!(
        out.status.success() && text.contains(&want),
        "AOTRUN_BUILD_DIR elsewhere: want {want:?}, got {text:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("AOTRUN_BUILD_DIR outside <repo>/build*/: {}", text.trim());

    // A wrong AOTRUN_BUILD_DIR stops the build, naming it (never another library).
    let empty = tmp.join("empty-build");
    std::fs::create_dir_all(&empty).unwrap();
    let out = cargo()
        .args(["build", "--offline", "--quiet", "-j2", "--bin", "where"])
        .env("AOTRUN_BUILD_DIR", &empty)
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&krate)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains(&format!("AOTRUN_BUILD_DIR={} holds no libaotrun.so", empty.display())),
        "a wrong AOTRUN_BUILD_DIR: {}\n{err}",
        out.status
    );
}

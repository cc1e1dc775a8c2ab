//! Finds libaotrun and tells cargo how to link it.
//!
//! Search order (the first that yields a directory holding `libaotrun.so`):
//!   1. `AOTRUN_LIB_DIR` (and `AOTRUN_INCLUDE_DIR` for the header),
//!   2. `pkg-config aotrun` (the `pkg-config` binary; no crate). With
//!      `PKG_CONFIG_PATH=<build>/c_api`, pkg-config itself prefers the build
//!      tree's `aotrun-uninstalled.pc`,
//!   3. a CMake build tree: `AOTRUN_BUILD_DIR` (the way to name a build tree
//!      outside the source tree; holding no library is an error), else
//!      `<repo>/build*/`, in its `c_api/`, `lib/` or top folder (the newest
//!      library wins),
//!   4. the system library directories (`/usr/local/lib`, `/usr/lib/<triple>`,
//!      `/usr/lib`).
//!
//! Feature `link`: links the library (not finding it is an error naming every
//! place tried). Feature `load-dynamic` alone: nothing is linked; a directory
//! found is embedded (`AOTRUN_SYS_BUILD_LIB_DIR`) as the last place the
//! run-time loader tries, so a binary built here runs with no variable set.
//!
//! The directory is exported to dependent build scripts as
//! `DEP_AOTRUN_LIB_DIR` (`links = "aotrun"`), because `rustc-link-arg` (the
//! rpath) only reaches this package's own targets; the `aotrun` crate re-emits
//! it so its tests and examples run without LD_LIBRARY_PATH.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const LIB_FILE: &str = "libaotrun.so";

fn main() {
    for var in [
        "AOTRUN_LIB_DIR",
        "AOTRUN_INCLUDE_DIR",
        "AOTRUN_BUILD_DIR",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.join("../..");
    let mut tried: Vec<String> = Vec::new();

    let link = env::var_os("CARGO_FEATURE_LINK").is_some();
    let found = from_env(&mut tried)
        .or_else(|| from_pkg_config(&mut tried))
        .or_else(|| from_build_tree(&repo, &mut tried))
        .or_else(|| from_system(&mut tried));

    let (lib_dir, include_dir) = match found {
        Some(f) => f,
        None if !link => {
            // load-dynamic only: the run-time search decides.
            println!(
                "cargo:warning=aotrun-sys: no {LIB_FILE} found at build time; it is loaded at run time \
                 (AOTRUN_DYLIB_PATH or the dynamic linker's search)"
            );
            return;
        }
        None => {
            // A build script panic is the clearest failure cargo offers.
            panic!(
                "\n\naotrun-sys: cannot find {LIB_FILE}. Looked in:\n  {}\n\
                 Set AOTRUN_LIB_DIR to the directory holding {LIB_FILE} (e.g. <build>/c_api),\n\
                 install aotrun with its aotrun.pc, or build the CMake target `aotrun` in\n\
                 <repo>/build*/ or AOTRUN_BUILD_DIR.\n",
                tried.join("\n  ")
            );
        }
    };
    let include_dir = include_dir.unwrap_or_else(|| repo.join("c_api/include"));

    // The run-time loader's last resort (loader::BUILD_LIB_DIR).
    println!("cargo:rustc-env=AOTRUN_SYS_BUILD_LIB_DIR={}", lib_dir.display());
    if link {
        println!("cargo:rustc-link-search=native={}", lib_dir.display());
        println!("cargo:rustc-link-lib=dylib=aotrun");
        // This package's own tests (the bindgen layout tests) find the .so too.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    }
    // Metadata for dependents: DEP_AOTRUN_LIB_DIR / DEP_AOTRUN_INCLUDE.
    println!("cargo:lib_dir={}", lib_dir.display());
    println!("cargo:include={}", include_dir.display());
    println!("cargo:rerun-if-changed={}", lib_dir.join(LIB_FILE).display());
}

fn from_env(tried: &mut Vec<String>) -> Option<(PathBuf, Option<PathBuf>)> {
    let Some(dir) = env::var_os("AOTRUN_LIB_DIR") else {
        tried.push("AOTRUN_LIB_DIR (unset)".to_string());
        return None;
    };
    let dir = PathBuf::from(dir);
    let include = env::var_os("AOTRUN_INCLUDE_DIR").map(PathBuf::from);
    if dir.join(LIB_FILE).exists() {
        return Some((canonical(&dir), include));
    }
    // An explicit setting that is wrong must not silently fall through to
    // some other library.
    panic!("aotrun-sys: AOTRUN_LIB_DIR={} does not contain {LIB_FILE}", dir.display());
}

fn from_pkg_config(tried: &mut Vec<String>) -> Option<(PathBuf, Option<PathBuf>)> {
    let pkg_config = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".to_string());
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new(&pkg_config).args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8(out.stdout).ok()
    };
    let libs = match run(&["--libs-only-L", "aotrun"]) {
        Some(s) => s,
        None => {
            tried.push(format!("`{pkg_config} aotrun` (not found or failed)"));
            return None;
        }
    };
    let mut dirs: Vec<PathBuf> = flags(&libs, "-L");
    if let Some(libdir) = run(&["--variable=libdir", "aotrun"]) {
        let libdir = libdir.trim();
        if !libdir.is_empty() {
            dirs.push(PathBuf::from(libdir));
        }
    }
    let include = run(&["--cflags-only-I", "aotrun"])
        .and_then(|s| flags(&s, "-I").into_iter().find(|d| d.join("aotrun/aotrun.h").exists()));
    for d in &dirs {
        if d.join(LIB_FILE).exists() {
            return Some((canonical(d), include));
        }
    }
    tried.push(format!("`{pkg_config} aotrun` gave {dirs:?}, none holds {LIB_FILE}"));
    None
}

fn from_build_tree(repo: &Path, tried: &mut Vec<String>) -> Option<(PathBuf, Option<PathBuf>)> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(dir) = build_dir_var() {
        roots.push(dir);
    } else if let Ok(entries) = std::fs::read_dir(repo) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("build") && e.path().is_dir() {
                roots.push(e.path());
            }
        }
        roots.sort();
    }
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for root in &roots {
        // A sanitizer build's library needs its runtime loaded first: a
        // program of the user's cannot load it. Only an explicit
        // AOTRUN_BUILD_DIR may name one.
        if build_dir_var().is_none() && sanitized(root) {
            tried.push(format!("{} (a sanitizer build, skipped)", root.display()));
            continue;
        }
        for sub in ["c_api", "lib", ""] {
            let dir = if sub.is_empty() { root.clone() } else { root.join(sub) };
            let lib = dir.join(LIB_FILE);
            tried.push(lib.display().to_string());
            if let Ok(meta) = std::fs::metadata(&lib) {
                let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if best.as_ref().map_or(true, |(t, _)| mtime > *t) {
                    best = Some((mtime, dir));
                }
            }
        }
    }
    if roots.is_empty() {
        tried.push(format!("{}/build*/ (no build tree)", repo.display()));
    }
    // An explicit AOTRUN_BUILD_DIR (e.g. a build tree outside the source
    // tree) that holds no library is an error, like a wrong AOTRUN_LIB_DIR:
    // never a silent fall-through to another library.
    if best.is_none() {
        if let Some(dir) = build_dir_var() {
            panic!(
                "aotrun-sys: AOTRUN_BUILD_DIR={} holds no {LIB_FILE} in c_api/, lib/ or its top folder \
                 (build the CMake target `aotrun` there first)",
                dir.display()
            );
        }
    }
    best.map(|(_, dir)| (canonical(&dir), None))
}

// AOTRUN_BUILD_DIR, unless unset or empty.
fn build_dir_var() -> Option<PathBuf> {
    env::var_os("AOTRUN_BUILD_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
}

// Whether the CMake build tree at `root` was configured with AOTRUN_SANITIZE.
fn sanitized(root: &Path) -> bool {
    std::fs::read_to_string(root.join("CMakeCache.txt")).map_or(false, |cache| {
        cache.lines().any(|l| l.starts_with("AOTRUN_SANITIZE:") && !l.ends_with('=') && !l.ends_with("=OFF"))
    })
}

fn from_system(tried: &mut Vec<String>) -> Option<(PathBuf, Option<PathBuf>)> {
    let mut dirs = vec![PathBuf::from("/usr/local/lib")];
    if let (Ok(arch), Ok(os), Ok(abi)) =
        (env::var("CARGO_CFG_TARGET_ARCH"), env::var("CARGO_CFG_TARGET_OS"), env::var("CARGO_CFG_TARGET_ENV"))
    {
        dirs.push(PathBuf::from(format!("/usr/lib/{arch}-{os}-{abi}")));
    }
    dirs.push(PathBuf::from("/usr/lib"));
    for d in dirs {
        if d.join(LIB_FILE).exists() {
            return Some((d, None));
        }
        tried.push(d.join(LIB_FILE).display().to_string());
    }
    None
}

/// Values of `prefix` flags in a pkg-config output line ("-L/a -L/b").
fn flags(s: &str, prefix: &str) -> Vec<PathBuf> {
    s.split_whitespace().filter_map(|f| f.strip_prefix(prefix)).map(PathBuf::from).collect()
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

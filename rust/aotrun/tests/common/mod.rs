//! Shared by the integration tests: where the test packages are.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod safetensors;

/// `AOTRUN_PACKAGES_DIR` (set by ctest to <build>/packages). Tests that call
/// this are `#[cfg_attr(not(aotrun_packages), ignore = ..)]`: build.rs sets
/// the cfg when the variable is set, so without it they show as ignored,
/// and with a wrong value they fail; they never pass without running.
pub fn packages_dir() -> PathBuf {
    let d = std::env::var_os("AOTRUN_PACKAGES_DIR")
        .filter(|d| !d.is_empty())
        .expect("AOTRUN_PACKAGES_DIR is not set although this test was built with it (cfg aotrun_packages)");
    let d = PathBuf::from(d);
    assert!(d.is_dir(), "AOTRUN_PACKAGES_DIR={} is not a directory", d.display());
    d
}

/// A package named `name` under `dir`: the directory `<dir>/<name>`.
pub fn package_dir(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    assert!(p.is_dir(), "test package {} was not built (target aotrun_packages)", p.display());
    p
}

/// A bare-.so package named `name` under `dir`: the first of
/// `<dir>/<name>.so`, `<dir>/lib<name>.so`, `<dir>/<name>/lib<name>.so`,
/// `<dir>/<name>/<name>.so` that exists.
pub fn package_so(dir: &Path, name: &str) -> PathBuf {
    let candidates = [
        dir.join(format!("{name}.so")),
        dir.join(format!("lib{name}.so")),
        dir.join(name).join(format!("lib{name}.so")),
        dir.join(name).join(format!("{name}.so")),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| panic!("test package {name} (bare .so) not found; looked for {candidates:?}"))
}

/// The Rust-written package (crate aotrun-package), built by cargo as a
/// dev-dependency of this crate: next to this test binary (target/*/deps)
/// or one level up (target/*).
pub fn rust_package() -> PathBuf {
    const FILE: &str = "libaotrun_rust_affine.so";
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a directory");
    for dir in [deps, deps.parent().unwrap_or(deps)] {
        let p = dir.join(FILE);
        if p.is_file() {
            return p;
        }
    }
    panic!("{FILE} not found next to {} (cargo builds it as a dev-dependency)", exe.display());
}

/// y = 2x + 1, the Rust package's model.
pub fn affine(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v * 2.0 + 1.0).collect()
}

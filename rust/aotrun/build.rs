//! 1. Lets this crate's tests, examples and benches find libaotrun.so without
//!    LD_LIBRARY_PATH when it is linked (feature `link`): aotrun-sys exports
//!    the directory it linked against (DEP_AOTRUN_LIB_DIR, from
//!    `links = "aotrun"`), and an rpath is added here because `rustc-link-arg`
//!    from aotrun-sys does not reach this package. (The default,
//!    `load-dynamic`, needs no rpath: see docs/RUST.md.)
//! 2. Tests that need the CMake-built packages or the .pt2 fixtures are
//!    ignored unless the variables naming them are set: cfg `aotrun_packages`
//!    (AOTRUN_PACKAGES_DIR), `aotrun_pt2` (AOTRUN_PT2_FIXTURES and
//!    AOTRUN_LIBTORCH) and `aotrun_pt2_fixtures` (AOTRUN_PT2_FIXTURES alone:
//!    the fixtures on aotrun's own shim, no libtorch). A test that cannot
//!    run shows as ignored, never as passed.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_AOTRUN_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_AOTRUN_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // For build scripts of crates depending on this one (link mode):
        // DEP_AOTRUN_RUST_LIB_DIR.
        println!("cargo:lib_dir={dir}");
    }
    println!("cargo:rustc-check-cfg=cfg(aotrun_packages)");
    println!("cargo:rustc-check-cfg=cfg(aotrun_pt2)");
    println!("cargo:rustc-check-cfg=cfg(aotrun_pt2_fixtures)");
    let set = |v: &str| {
        println!("cargo:rerun-if-env-changed={v}");
        std::env::var_os(v).is_some_and(|s| !s.is_empty())
    };
    if set("AOTRUN_PACKAGES_DIR") {
        println!("cargo:rustc-cfg=aotrun_packages");
    }
    if set("AOTRUN_PT2_FIXTURES") {
        println!("cargo:rustc-cfg=aotrun_pt2_fixtures");
    }
    if set("AOTRUN_PT2_FIXTURES") & set("AOTRUN_LIBTORCH") {
        println!("cargo:rustc-cfg=aotrun_pt2");
    }
}

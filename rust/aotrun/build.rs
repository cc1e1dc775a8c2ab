//! Lets this crate's tests, examples and benches find libaotrun.so without
//! LD_LIBRARY_PATH: aotrun-sys exports the directory it linked against
//! (DEP_AOTRUN_LIB_DIR, from `links = "aotrun"`), and an rpath is added here
//! because `rustc-link-arg` from aotrun-sys does not reach this package.
//! Applications depending on `aotrun` do the same in their own build.rs, or
//! use LD_LIBRARY_PATH / an installed library (docs/RUST.md).
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_AOTRUN_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_AOTRUN_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}

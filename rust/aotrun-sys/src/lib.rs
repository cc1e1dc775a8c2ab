//! Raw FFI declarations of libaotrun (`libaotrun.so.1`), generated from
//! `c_api/include/aotrun/aotrun.h` by bindgen 0.60 (see `regen.sh`) and
//! committed in `bindings.rs`. `check_bindings.sh` fails when the header and
//! the committed file disagree.
//!
//! Everything here is `unsafe` and follows the C header's rules: statuses are
//! owned by the caller and freed with [`aotrun_status_free`], handles are freed
//! by their `*_free` / `*_close` / `*_destroy`, `struct_size` is set before a
//! struct crosses. The safe API is the `aotrun` crate.
//!
//! Enums are plain integer constants (never Rust enums): a newer library may
//! return a value this crate does not know, which must not be undefined
//! behaviour.
//!
//! Linking and loading (docs/RUST.md has the table):
//! * feature `link` (default): `build.rs` looks for `libaotrun.so` in
//!   `AOTRUN_LIB_DIR`, then via `pkg-config aotrun` (an uninstalled build
//!   tree's `aotrun-uninstalled.pc` included), then in a CMake build tree,
//!   then in the system library directories, links it, and exports the
//!   directory as `DEP_AOTRUN_LIB_DIR` to dependent build scripts (which may
//!   add it as an rpath). The `extern "C"` functions below need this feature.
//! * feature `load-dynamic`: nothing is linked; [`api`] / [`load_from`]
//!   `dlopen` the library at run time and return its function table
//!   (`aotrun_get_api`); see [`loader`]. The safe crate calls everything
//!   through this table, in both modes.

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]
#![allow(clippy::all)]

include!("bindings.rs");

pub mod loader;
#[cfg(feature = "load-dynamic")]
pub use loader::load_from;
pub use loader::{api, api_or_panic, LoadError};

/// `AOTRUN_MAKE_VERSION(major, minor, patch)` (a function-like macro, which
/// bindgen does not translate).
pub const fn aotrun_make_version(major: u32, minor: u32, patch: u32) -> u32 {
    (major << 16) | (minor << 8) | patch
}

/// `AOTRUN_VERSION`: the version of the header these declarations come from.
pub const AOTRUN_VERSION: u32 = aotrun_make_version(AOTRUN_VERSION_MAJOR, AOTRUN_VERSION_MINOR, AOTRUN_VERSION_PATCH);

/// `AOTRUN_API_VERSION_1_0`.
pub const AOTRUN_API_VERSION_1_0: u32 = aotrun_make_version(1, 0, 0);
/// `AOTRUN_API_VERSION_1_1`.
pub const AOTRUN_API_VERSION_1_1: u32 = aotrun_make_version(1, 1, 0);
/// `AOTRUN_API_VERSION_1_2`.
pub const AOTRUN_API_VERSION_1_2: u32 = aotrun_make_version(1, 2, 0);
/// `AOTRUN_API_VERSION_1_3`.
pub const AOTRUN_API_VERSION_1_3: u32 = aotrun_make_version(1, 3, 0);
/// `AOTRUN_API_VERSION`: the function table version this header declares
/// (its last slot is `package_get_provider`).
pub const AOTRUN_API_VERSION: u32 = AOTRUN_API_VERSION_1_3;

#[cfg(test)]
mod tests {
    use super::*;

    // Struct layouts are checked by bindgen's generated layout tests
    // (bindgen_test_layout_*), which compare against clang's view of the
    // header; the header's static asserts pin that view.

    /// One source of truth for versions: the crates' version (the workspace's
    /// `version`) is the version of the header they were generated from
    /// (`rust_bindgen_diff` pins bindings.rs to aotrun.h, and aotrun.h's
    /// `AOTRUN_VERSION_*` to the CMake project version through the library).
    #[test]
    fn crate_version_is_the_header_version() {
        let header = format!("{AOTRUN_VERSION_MAJOR}.{AOTRUN_VERSION_MINOR}.{AOTRUN_VERSION_PATCH}");
        assert_eq!(env!("CARGO_PKG_VERSION"), header, "rust/Cargo.toml [workspace.package] version != aotrun.h");
    }

    #[test]
    fn loaded_library_is_the_header_version() {
        let api = super::api().expect("libaotrun loads");
        let v = unsafe { (api.version_number.unwrap())() };
        assert_eq!(v, AOTRUN_VERSION, "the library's version differs from the header's (rebuild the crates)");
        let s = unsafe { std::ffi::CStr::from_ptr((api.version_string.unwrap())()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }

    #[cfg(feature = "link")]
    #[test]
    fn linked_library_speaks_this_major() {
        let v = unsafe { aotrun_version() };
        assert_eq!(v >> 16, AOTRUN_VERSION_MAJOR, "libaotrun major differs from the header");
        let api = unsafe { aotrun_get_api(AOTRUN_API_VERSION) };
        assert!(!api.is_null(), "aotrun_get_api(1.0) returned NULL");
        let api = unsafe { &*api };
        assert!(api.version >= AOTRUN_API_VERSION);
        assert!(api.version_number.is_some() && api.runner_run.is_some());
    }
}

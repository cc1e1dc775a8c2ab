//! `libaotrun_rust_affine.so`: an aotrun model package written in Rust.
//!
//! It implements the package ABI (`abi/include/aotrun/package_abi.h`, version
//! 1.1) with `#[no_mangle] extern "C"` functions, the way the C++ SDK does for
//! C++ packages:
//!
//! * model: `y = 2 * x + 1`, `x` and `y` float32 of shape `[-1, 4]`;
//! * container: N model instances, a pool guarded by a mutex and a condition
//!   variable, one host event per instance marking its last run;
//! * `run` (thread-safe: takes a free instance, waits for its event, launches
//!   the forward onto the caller's stream through the host's `launch`,
//!   records the event) and `run_single_threaded` (instance 0, no locks, no
//!   events, so it is legal under stream capture);
//! * no panic crosses the boundary: every entry point and every launched
//!   function runs under `catch_unwind`, and failures become a status plus a
//!   thread-local message for `aotrun_pkg_get_last_error`.
//!
//! The crate must be built with `panic = "unwind"` (the default): with
//! `panic = "abort"` a bug would abort the host process instead of becoming
//! `AOTRUN_PKG_ERR_INTERNAL`.
//!
//! Generated files: `src/abi.rs` (bindgen, from package_abi.h) and
//! `include/aotrun/rust_affine.h` (cbindgen, from `exports`); `regen.sh`
//! rewrites both, `check.sh` fails when either is stale.

#![deny(unsafe_op_in_unsafe_fn)]

/// Declarations of the package ABI, generated from package_abi.h.
#[allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]
#[allow(clippy::all)]
#[rustfmt::skip]
pub mod abi;

mod container;
mod exports;
mod guard;
mod host;
mod model;
mod tensor;

pub use exports::*;

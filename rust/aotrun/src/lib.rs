//! Safe Rust API of aotrun: load ahead-of-time compiled model packages and
//! run them on CPU or CUDA, threaded, single-threaded or as replayed graphs.
//!
//! Built on the C API of `libaotrun.so.1` through [`aotrun_sys`] (declarations
//! generated from `aotrun.h`). Every C object has an owner with `Drop`;
//! every status becomes an [`Error`] with an [`ErrorCode`] and the library's
//! message; `Send`/`Sync` are implemented exactly where the C header promises
//! thread safety (see [`runner`] for the one deliberate tightening).
//! Asynchronous runs happen inside a [`Scope`] (`runner.scope(|s| ..)`),
//! which keeps their tensors borrowed and waits for them before it returns
//! (see [`scope`]); caller streams and captured graphs are in [`stream`].
//!
//! ```no_run
//! use aotrun::{Package, TensorMut, TensorRef};
//!
//! # fn main() -> aotrun::Result<()> {
//! let package = Package::open("build/packages/mlp")?;
//! let runner = package.runner().num_models(2).threaded()?;
//!
//! let x = vec![0.5f32; 8];
//! let x_shape = [2, 4];
//! let inputs = [TensorRef::new(&x, &x_shape)?];
//! let y_shape = runner.output_shapes(&inputs)?.remove(0);
//! let mut y = vec![0.0f32; y_shape.iter().product::<i64>() as usize];
//! runner.run(&inputs, &mut [TensorMut::new(&mut y, &y_shape)?])?;
//! # Ok(()) }
//! ```
//!
//! Linking: see `docs/RUST.md` (`AOTRUN_LIB_DIR`, `pkg-config aotrun`, or a
//! CMake build tree).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations)]

pub use aotrun_sys as sys;

mod dtype;
mod error;
pub mod log;
mod package;
pub mod runner;
pub mod scope;
pub mod stream;
mod tensor;

pub use dtype::{DataType, Device, DeviceType, Element};
pub use error::{Error, ErrorCode, Result};
pub use log::{clear_log_handler, log_level, set_log_handler, set_log_level, Level, LevelFilter};
pub use package::{OpenOptions, Package, PackageInfo, SymbolInfo, TensorInfo};
pub use runner::{Mode, RunnerBuilder, RunnerStats, SerialRunner, ThreadedRunner};
pub use scope::{AsyncOutputs, Event, Scope};
pub use stream::{Capture, CaptureMode, CaptureRunner, Graph, Stream};
pub use tensor::{OwnedTensor, TensorMut, TensorRef};

/// Version of the loaded libaotrun as (major, minor, patch).
pub fn version() -> (u32, u32, u32) {
    let v = unsafe { sys::aotrun_version() };
    (v >> 16, (v >> 8) & 0xFF, v & 0xFF)
}

/// The loaded library's version string, e.g. `"1.0.0"`.
pub fn version_string() -> &'static str {
    let s = unsafe { sys::aotrun_version_string() };
    if s.is_null() {
        return "";
    }
    // A static string in the library (aotrun.h).
    unsafe { std::ffi::CStr::from_ptr(s) }.to_str().unwrap_or("")
}

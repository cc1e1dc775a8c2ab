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
//! let package = Package::open("build/packages/mlp")?; // takes [batch, 256] float32
//! let runner = package.runner().num_models(2).threaded()?;
//!
//! // The one-input, one-output float32 case in one call:
//! let y = runner.run_f32(&[0.5; 256], [1, 256])?;
//! assert_eq!(y.shape(), &[1, 64]);
//!
//! // The general form, with views over your own buffers:
//! let x = vec![0.5f32; 2 * 256];
//! let x_shape = [2, 256];
//! let inputs = [TensorRef::new(&x, &x_shape)?];
//! let y_shape = runner.output_shapes(&inputs)?.remove(0); // [2, 64]
//! let mut y = vec![0.0f32; y_shape.iter().product::<i64>() as usize];
//! runner.run(&inputs, &mut [TensorMut::new(&mut y, &y_shape)?])?;
//! # Ok(()) }
//! ```
//!
//! Linking and loading: by default (feature `load-dynamic`) the library is
//! loaded at run time, from `AOTRUN_DYLIB_PATH`, the dynamic linker's search,
//! or the directory the build script found it in, so binaries need no
//! environment variable or rpath; feature `link` links it at build time. See
//! [`init`] and `docs/RUST.md`. Owned runs as futures: [`future`].

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_debug_implementations)]

pub use aotrun_sys as sys;

/// The function table slot `$f`: every call into libaotrun goes through the
/// table, linked or loaded at run time (see [`init`]).
macro_rules! ffi {
    ($f:ident) => {
        match $crate::sys::api_or_panic().$f {
            Some(f) => f,
            // The loader refuses a table with an empty slot.
            None => $crate::empty_slot(),
        }
    };
}

#[doc(hidden)]
#[inline(always)]
pub fn empty_slot() -> ! {
    // SAFETY: sys::loader installs only tables whose slots are all set.
    unsafe { std::hint::unreachable_unchecked() }
}

mod constant_info;
pub mod constants;
mod dtype;
mod error;
pub mod future;
pub mod log;
mod owned;
mod package;
pub mod runner;
pub mod scope;
pub mod stream;
mod tensor;

pub use constant_info::ConstantInfo;
pub use constants::{ConstantsControl, ConstantsState, Staged, Swapped, Update};
pub use dtype::{DataType, Device, DeviceType, Element};
pub use error::{Error, ErrorCode, Result};
pub use future::{block_on, RunBuffers, RunError, RunFuture};
pub use log::{clear_log_handler, log_level, set_log_handler, set_log_level, Level, LevelFilter};
pub use owned::{Shape, Tensor};
pub use package::{OpenOptions, Package, PackageInfo, Provider, ProviderPreview, SymbolInfo, TensorInfo};
pub use runner::{Mode, RunnerBuilder, RunnerStats, SerialRunner, ThreadedRunner};
pub use scope::{AsyncOutputs, Event, Refused, Scope};
pub use stream::{BoundGraph, Capture, CaptureMode, CaptureRunner, Graph, Stream};
pub use tensor::{OwnedTensor, TensorMut, TensorRef};

/// Makes sure libaotrun is available, loading it if needed, and says from
/// where: `"linked at build time"` or `"loaded from <file>"`.
///
/// Optional: the first call that needs the library does the same (opening a
/// package reports a failure as [`ErrorCode::LoadFailed`]; functions without
/// a `Result`, such as [`version`] and the log setters, panic with it). The
/// error names every place that was tried. See docs/RUST.md for the search.
pub fn init() -> Result<String> {
    sys::api().map_err(Error::from)?;
    Ok(sys::loader::source().map(|s| s.to_string()).unwrap_or_default())
}

/// Feature `load-dynamic`: uses the libaotrun at `path` (a file, or a
/// directory holding `libaotrun.so.1`) for this process. Must come before
/// any other call into aotrun; calling it again with the same file is fine.
/// Errors: LoadFailed (names the file and `dlerror()`, or says which library
/// is already in use).
#[cfg(feature = "load-dynamic")]
pub fn init_from(path: impl AsRef<std::path::Path>) -> Result<String> {
    sys::load_from(path).map_err(Error::from)?;
    Ok(sys::loader::source().map(|s| s.to_string()).unwrap_or_default())
}

/// Version of the loaded libaotrun as (major, minor, patch).
pub fn version() -> (u32, u32, u32) {
    let v = unsafe { ffi!(version_number)() };
    (v >> 16, (v >> 8) & 0xFF, v & 0xFF)
}

/// The loaded library's version string, e.g. `"1.0.0"`.
pub fn version_string() -> &'static str {
    let s = unsafe { ffi!(version_string)() };
    if s.is_null() {
        return "";
    }
    // A static string in the library (aotrun.h).
    unsafe { std::ffi::CStr::from_ptr(s) }.to_str().unwrap_or("")
}

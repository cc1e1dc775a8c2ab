//! The exported entry points of the package ABI. Each one is a thin shell:
//! check the handle, run the body under `guard` (no panic crosses), return
//! the status. cbindgen writes include/aotrun/rust_affine.h from this file.

use std::ffi::{c_char, CStr};
use std::mem::{offset_of, size_of};

use crate::abi::{
    aotrun_pkg_container, aotrun_pkg_create_args, aotrun_pkg_run_args, aotrun_pkg_shape_args, aotrun_pkg_tensor_spec,
    AOTRUN_PKG_ABI_MAJOR, AOTRUN_PKG_ABI_MINOR,
};
use crate::container::Container;
use crate::guard::{guard, last_error, PkgError, PkgResult};
use crate::model;

fn container<'a>(c: *mut aotrun_pkg_container) -> PkgResult<&'a Container> {
    if c.is_null() {
        return Err(PkgError::invalid("container is NULL"));
    }
    // Every non-NULL container handle was made by aotrun_pkg_container_create.
    Ok(unsafe { &*(c as *const Container) })
}

/// The package ABI version this package was built against: 1.1.
#[no_mangle]
pub extern "C" fn aotrun_pkg_abi_version() -> u32 {
    (AOTRUN_PKG_ABI_MAJOR << 16) | AOTRUN_PKG_ABI_MINOR
}

/// Message of the last failure on the calling thread ("" if none); valid
/// until the next failing call on this thread.
#[no_mangle]
pub extern "C" fn aotrun_pkg_get_last_error() -> *const c_char {
    last_error()
}

/// Creates a container of `args->num_models` instances (0: metadata only).
/// CPU only; the model takes no constants.
///
/// # Safety
/// `out` is writable; `args` follows the package ABI.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_create(
    out: *mut *mut aotrun_pkg_container,
    args: *const aotrun_pkg_create_args,
) -> i32 {
    guard(|| {
        if out.is_null() {
            return Err(PkgError::invalid("out is NULL"));
        }
        let c = unsafe { Container::create(args) }?;
        unsafe { out.write(Box::into_raw(c) as *mut aotrun_pkg_container) };
        Ok(())
    })
}

/// Destroys a container made by aotrun_pkg_container_create. NULL is a no-op.
///
/// # Safety
/// `c` is NULL or a live container; no call on it overlaps or follows this.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_destroy(c: *mut aotrun_pkg_container) -> i32 {
    guard(|| {
        if !c.is_null() {
            drop(unsafe { Box::from_raw(c as *mut Container) });
        }
        Ok(())
    })
}

/// Writes the number of inputs (1).
///
/// # Safety
/// `c` is a live container; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_get_num_inputs(c: *mut aotrun_pkg_container, out: *mut usize) -> i32 {
    guard(|| write_count(c, out))
}

/// Writes the number of outputs (1).
///
/// # Safety
/// `c` is a live container; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_get_num_outputs(c: *mut aotrun_pkg_container, out: *mut usize) -> i32 {
    guard(|| write_count(c, out))
}

fn write_count(c: *mut aotrun_pkg_container, out: *mut usize) -> PkgResult<()> {
    container(c)?;
    if out.is_null() {
        return Err(PkgError::invalid("out is NULL"));
    }
    unsafe { out.write(1) };
    Ok(())
}

/// Describes input `index` (0: "x", float32 [-1, 4]).
///
/// # Safety
/// `c` is a live container; `out` is a zeroed spec whose struct_size is its
/// capacity in bytes.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_get_input_spec(
    c: *mut aotrun_pkg_container,
    index: usize,
    out: *mut aotrun_pkg_tensor_spec,
) -> i32 {
    guard(|| write_spec(c, index, out, model::INPUT_NAME, "input"))
}

/// Describes output `index` (0: "y", float32 [-1, 4]).
///
/// # Safety
/// As for aotrun_pkg_container_get_input_spec.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_get_output_spec(
    c: *mut aotrun_pkg_container,
    index: usize,
    out: *mut aotrun_pkg_tensor_spec,
) -> i32 {
    guard(|| write_spec(c, index, out, model::OUTPUT_NAME, "output"))
}

/// `AOTRUN_PKG_TENSOR_SPEC_STRUCT_SIZE_1_0`.
const SPEC_SIZE_1_0: usize = offset_of!(aotrun_pkg_tensor_spec, shape) + size_of::<*const i64>();

/// Out-struct rule of the ABI: write at most struct_size bytes (the caller's
/// capacity) and store back how many were filled.
fn write_spec(
    c: *mut aotrun_pkg_container,
    index: usize,
    out: *mut aotrun_pkg_tensor_spec,
    name: &'static CStr,
    what: &str,
) -> PkgResult<()> {
    container(c)?;
    if index != 0 {
        return Err(PkgError::invalid(format!("{what} index {index} out of range (the model has 1 {what})")));
    }
    if out.is_null() {
        return Err(PkgError::invalid("out is NULL"));
    }
    let capacity = unsafe { (*out).struct_size };
    if capacity < size_of::<usize>() {
        return Err(PkgError::invalid(format!("{what} spec struct_size {capacity} is too small")));
    }
    let spec = aotrun_pkg_tensor_spec {
        struct_size: SPEC_SIZE_1_0,
        name: name.as_ptr(),
        dtype: model::DTYPE,
        ndim: model::SPEC_SHAPE.len() as i32,
        shape: model::SPEC_SHAPE.as_ptr(),
    };
    let n = capacity.min(SPEC_SIZE_1_0);
    unsafe {
        std::ptr::copy_nonoverlapping(&spec as *const _ as *const u8, out as *mut u8, n);
        (*out).struct_size = n;
    }
    Ok(())
}

/// Output shapes for the given input shapes (y has the shape of x).
///
/// # Safety
/// `c` is a live container; `args` follows the package ABI.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_get_output_shapes(
    c: *mut aotrun_pkg_container,
    args: *const aotrun_pkg_shape_args,
) -> i32 {
    guard(|| unsafe { container(c)?.output_shapes(args) })
}

/// Thread-safe run: any number of threads may call it concurrently. Uses
/// the host's event query/synchronize, so it is not legal under capture.
///
/// # Safety
/// `c` is a live container; `args` follows the package ABI and its buffers
/// stay valid until the work launched on `args->stream` has completed.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_run(
    c: *mut aotrun_pkg_container,
    args: *const aotrun_pkg_run_args,
) -> i32 {
    guard(|| unsafe { container(c)?.run(args) })
}

/// Single-threaded run on instance 0: no locks, no events; the caller
/// serialises calls. Legal under stream capture. (ABI 1.1)
///
/// # Safety
/// As for aotrun_pkg_container_run, and calls on `c` do not overlap.
#[no_mangle]
pub unsafe extern "C" fn aotrun_pkg_container_run_single_threaded(
    c: *mut aotrun_pkg_container,
    args: *const aotrun_pkg_run_args,
) -> i32 {
    guard(|| unsafe { container(c)?.run_single_threaded(args) })
}

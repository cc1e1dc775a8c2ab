//! Checks of the DLTensors the host passes in, with messages that name the
//! tensor and what is wrong with it.

use crate::abi::{kDLCPU, DLDataType, DLTensor};
use crate::guard::{PkgError, PkgResult};
use crate::model::{DTYPE, FEATURES};

fn dtype_name(t: DLDataType) -> String {
    let code = match t.code as u32 {
        0 => "int",
        1 => "uint",
        2 => "float",
        4 => "bfloat",
        5 => "complex",
        _ => "code",
    };
    if t.lanes == 1 {
        format!("{code}{}", t.bits)
    } else {
        format!("{code}{}x{}", t.bits, t.lanes)
    }
}

/// The shape of `t` as a slice (empty for ndim 0).
///
/// # Safety
/// `t.shape` holds `t.ndim` entries when ndim > 0.
unsafe fn shape_of(t: &DLTensor) -> &[i64] {
    if t.ndim <= 0 || t.shape.is_null() {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }
}

/// Checks dtype and shape `[batch, 4]` of `t` (named `what`); returns batch.
/// Reads only ndim, shape and dtype (data may be NULL: shape queries).
///
/// # Safety
/// As for [`shape_of`].
pub unsafe fn check_spec(t: &DLTensor, what: &str) -> PkgResult<i64> {
    if t.dtype.code != DTYPE.code || t.dtype.bits != DTYPE.bits || t.dtype.lanes != DTYPE.lanes {
        return Err(PkgError::invalid(format!("{what}: dtype {} but the model takes float32", dtype_name(t.dtype))));
    }
    let shape = unsafe { shape_of(t) };
    if t.ndim != 2 || shape.len() != 2 {
        return Err(PkgError::invalid(format!(
            "{what}: rank {} but the model takes rank 2 [batch, {FEATURES}]",
            t.ndim
        )));
    }
    if shape[0] < 0 || shape[1] != FEATURES {
        return Err(PkgError::invalid(format!("{what}: shape {shape:?} but the model takes [batch >= 0, {FEATURES}]")));
    }
    Ok(shape[0])
}

/// Full check of a run tensor: spec, CPU device, compact row-major, aligned
/// data. Returns (first element, element count).
///
/// # Safety
/// `t` is a valid DLTensor as the ABI describes (shape/strides of ndim).
pub unsafe fn check_run(t: &DLTensor, what: &str) -> PkgResult<(*mut f32, usize)> {
    let batch = unsafe { check_spec(t, what) }?;
    if t.device.device_type != kDLCPU {
        return Err(PkgError::invalid(format!(
            "{what}: device type {} but this package runs on CPU ({kDLCPU})",
            t.device.device_type
        )));
    }
    if !t.strides.is_null() {
        let strides = unsafe { std::slice::from_raw_parts(t.strides, 2) };
        // A stride of a dimension of extent 1 is irrelevant for compactness.
        let ok = strides[1] == 1 && (strides[0] == FEATURES || batch <= 1);
        if !ok {
            return Err(PkgError::invalid(format!(
                "{what}: strides {strides:?} are not compact row-major [{FEATURES}, 1]"
            )));
        }
    }
    let n = (batch * FEATURES) as usize;
    let data = (t.data as *mut u8).wrapping_add(t.byte_offset as usize) as *mut f32;
    if n > 0 && t.data.is_null() {
        return Err(PkgError::invalid(format!("{what}: data is NULL")));
    }
    if (data as usize) % std::mem::align_of::<f32>() != 0 {
        return Err(PkgError::invalid(format!("{what}: data {data:p} is not 4-byte aligned")));
    }
    Ok((data, n))
}

//! Tensor views over Rust memory (DLPack `DLTensor` underneath) and tensors
//! that aotrun allocated (`DLManagedTensor`).
//!
//! A view borrows its data and its shape for `'a`, so it cannot outlive
//! either; the borrow checker enforces what the C API only documents ("the
//! caller owns inputs and outputs for the duration of the call"). Views are
//! `#[repr(transparent)]` over `DLTensor`: a `&[TensorRef]` is passed to C
//! as the `const DLTensor*` array itself, with no copy and no allocation.
//!
//! ```compile_fail,E0597
//! use aotrun::TensorRef;
//! let view;
//! {
//!     let data = vec![0.0f32; 8];
//!     view = TensorRef::new(&data, &[2, 4]).unwrap();
//! } // `data` dropped here while `view` still borrows it: does not compile
//! println!("{:?}", view.shape());
//! ```
//!
//! The same with the buffer outliving the view compiles:
//!
//! ```
//! use aotrun::TensorRef;
//! let data = vec![0.0f32; 8];
//! let view = TensorRef::new(&data, &[2, 4]).unwrap();
//! assert_eq!(view.shape(), &[2, 4]);
//! ```

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use aotrun_sys as sys;

use crate::dtype::{DataType, Device, Element};
use crate::error::{Error, Result};

/// Elements of `shape`, checking that no dimension is negative and that the
/// product does not overflow.
fn numel(shape: &[i64]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        if d < 0 {
            return Err(Error::invalid(format!("shape {shape:?} has a negative dimension")));
        }
        acc.checked_mul(d as usize)
            .ok_or_else(|| Error::invalid(format!("shape {shape:?} overflows the address space")))
    })
}

fn raw_tensor(data: *mut c_void, dtype: DataType, shape: &[i64], device: Device) -> Result<sys::DLTensor> {
    let ndim = i32::try_from(shape.len()).map_err(|_| Error::invalid("too many dimensions"))?;
    Ok(sys::DLTensor {
        data,
        device: device.to_raw(),
        ndim,
        dtype: dtype.to_raw(),
        // The C API reads shapes, never writes them.
        shape: shape.as_ptr() as *mut i64,
        strides: std::ptr::null_mut(), // compact row-major
        byte_offset: 0,
    })
}

fn check_len(len: usize, shape: &[i64], what: &str) -> Result<()> {
    let n = numel(shape)?;
    if n != len {
        return Err(Error::invalid(format!("{what} has {len} elements but shape {shape:?} needs {n}")));
    }
    Ok(())
}

fn shape_of<'a>(t: &sys::DLTensor) -> &'a [i64] {
    if t.ndim <= 0 || t.shape.is_null() {
        &[]
    } else {
        // Points at the `&'a [i64]` the view was built from (or, for
        // OwnedTensor, at memory the tensor owns).
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }
}

/// A read-only tensor over borrowed memory: an input.
///
/// `Send` and `Sync` like the `&'a [T]` it stands for.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct TensorRef<'a> {
    raw: sys::DLTensor,
    _borrow: PhantomData<&'a [u8]>,
}

// A shared borrow of plain data.
unsafe impl Send for TensorRef<'_> {}
unsafe impl Sync for TensorRef<'_> {}

impl<'a> TensorRef<'a> {
    /// A CPU tensor over `data` with `shape` (compact row-major).
    /// Errors: InvalidArgument if `data.len()` is not the product of `shape`.
    pub fn new<T: Element>(data: &'a [T], shape: &'a [i64]) -> Result<Self> {
        check_len(data.len(), shape, "tensor data")?;
        let raw = raw_tensor(data.as_ptr() as *mut c_void, T::DTYPE, shape, Device::cpu())?;
        Ok(TensorRef { raw, _borrow: PhantomData })
    }

    /// A CPU tensor of `dtype` over raw bytes (e.g. a file read into memory).
    /// Errors: InvalidArgument if the size does not match, or the bytes are
    /// not aligned for the element type.
    pub fn from_bytes(data: &'a [u8], dtype: DataType, shape: &'a [i64]) -> Result<Self> {
        check_bytes(data.len(), data.as_ptr() as usize, dtype, shape)?;
        let raw = raw_tensor(data.as_ptr() as *mut c_void, dtype, shape, Device::cpu())?;
        Ok(TensorRef { raw, _borrow: PhantomData })
    }

    /// A view over memory described by a raw pointer, e.g. on a GPU.
    ///
    /// # Safety
    /// `data` points to a compact row-major tensor of `dtype` and `shape` on
    /// `device` that stays valid and unmodified for `'a`.
    pub unsafe fn from_raw_parts(
        data: *const c_void,
        dtype: DataType,
        shape: &'a [i64],
        device: Device,
    ) -> Result<Self> {
        numel(shape)?;
        let raw = raw_tensor(data as *mut c_void, dtype, shape, device)?;
        Ok(TensorRef { raw, _borrow: PhantomData })
    }

    pub fn shape(&self) -> &'a [i64] {
        shape_of(&self.raw)
    }

    pub fn dtype(&self) -> DataType {
        DataType::from_raw(self.raw.dtype)
    }

    pub fn device(&self) -> Device {
        Device::from_raw(self.raw.device)
    }

    /// The DLTensor handed to C (valid for `'a`).
    pub fn as_raw(&self) -> &sys::DLTensor {
        &self.raw
    }
}

/// A writable tensor over borrowed memory: an output.
///
/// `Send` and `Sync` like the `&'a mut [T]` it stands for.
#[repr(transparent)]
pub struct TensorMut<'a> {
    raw: sys::DLTensor,
    _borrow: PhantomData<&'a mut [u8]>,
}

// An exclusive borrow of plain data.
unsafe impl Send for TensorMut<'_> {}
unsafe impl Sync for TensorMut<'_> {}

impl<'a> TensorMut<'a> {
    /// A CPU tensor over `data` with `shape` (compact row-major).
    /// Errors: InvalidArgument if `data.len()` is not the product of `shape`.
    pub fn new<T: Element>(data: &'a mut [T], shape: &'a [i64]) -> Result<Self> {
        check_len(data.len(), shape, "tensor data")?;
        let raw = raw_tensor(data.as_mut_ptr() as *mut c_void, T::DTYPE, shape, Device::cpu())?;
        Ok(TensorMut { raw, _borrow: PhantomData })
    }

    /// A CPU tensor of `dtype` over raw bytes. Errors as [`TensorRef::from_bytes`].
    pub fn from_bytes(data: &'a mut [u8], dtype: DataType, shape: &'a [i64]) -> Result<Self> {
        check_bytes(data.len(), data.as_ptr() as usize, dtype, shape)?;
        let raw = raw_tensor(data.as_mut_ptr() as *mut c_void, dtype, shape, Device::cpu())?;
        Ok(TensorMut { raw, _borrow: PhantomData })
    }

    /// A writable view over memory described by a raw pointer.
    ///
    /// # Safety
    /// `data` points to a compact row-major tensor of `dtype` and `shape` on
    /// `device`, valid for writes and not accessed otherwise for `'a`.
    pub unsafe fn from_raw_parts(data: *mut c_void, dtype: DataType, shape: &'a [i64], device: Device) -> Result<Self> {
        numel(shape)?;
        let raw = raw_tensor(data, dtype, shape, device)?;
        Ok(TensorMut { raw, _borrow: PhantomData })
    }

    pub fn shape(&self) -> &'a [i64] {
        shape_of(&self.raw)
    }

    pub fn dtype(&self) -> DataType {
        DataType::from_raw(self.raw.dtype)
    }

    pub fn device(&self) -> Device {
        Device::from_raw(self.raw.device)
    }

    /// The elements, if `T` is this tensor's type and it is on the CPU.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let n = typed_len::<T>(&self.raw)?;
        Ok(unsafe { std::slice::from_raw_parts(self.raw.data as *const T, n) })
    }

    pub fn as_raw(&self) -> &sys::DLTensor {
        &self.raw
    }
}

fn check_bytes(len: usize, addr: usize, dtype: DataType, shape: &[i64]) -> Result<()> {
    let n = numel(shape)?;
    let need = n
        .checked_mul(dtype.size_bytes())
        .ok_or_else(|| Error::invalid(format!("shape {shape:?} of {dtype} overflows")))?;
    if len != need {
        return Err(Error::invalid(format!("{len} bytes given but {dtype} {shape:?} needs {need}")));
    }
    let align = dtype.size_bytes().next_power_of_two().clamp(1, 16);
    if addr % align != 0 {
        return Err(Error::invalid(format!("data at {addr:#x} is not {align}-byte aligned for {dtype}")));
    }
    Ok(())
}

/// Element count of `t` when read as `T` on the CPU.
fn typed_len<T: Element>(t: &sys::DLTensor) -> Result<usize> {
    let dtype = DataType::from_raw(t.dtype);
    if dtype != T::DTYPE {
        return Err(Error::invalid(format!("tensor is {dtype}, not {}", T::DTYPE)));
    }
    let device = Device::from_raw(t.device);
    if device != Device::cpu() {
        return Err(Error::invalid(format!("tensor is on {device}, not readable from the CPU")));
    }
    if !t.strides.is_null() {
        return Err(Error::invalid("tensor has explicit strides; only compact tensors can be sliced"));
    }
    numel(shape_of(t))
}

/// A tensor that aotrun allocated (`aotrun_runner_run_alloc`): it owns a
/// `DLManagedTensor` and calls its deleter on drop.
///
/// Not `Send`/`Sync`: the C API does not say from which threads the deleter
/// may run. Copy the data out (e.g. [`OwnedTensor::to_vec`]) to move it.
pub struct OwnedTensor {
    raw: NonNull<sys::DLManagedTensor>,
}

impl OwnedTensor {
    /// # Safety
    /// `raw` is a live DLManagedTensor whose ownership passes to the result.
    pub(crate) unsafe fn from_raw(raw: NonNull<sys::DLManagedTensor>) -> OwnedTensor {
        OwnedTensor { raw }
    }

    fn tensor(&self) -> &sys::DLTensor {
        unsafe { &self.raw.as_ref().dl_tensor }
    }

    pub fn shape(&self) -> &[i64] {
        shape_of(self.tensor())
    }

    pub fn dtype(&self) -> DataType {
        DataType::from_raw(self.tensor().dtype)
    }

    pub fn device(&self) -> Device {
        Device::from_raw(self.tensor().device)
    }

    /// The elements, if `T` is the tensor's type and it is compact on the CPU.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let t = self.tensor();
        let n = typed_len::<T>(t)?;
        if n == 0 {
            return Ok(&[]);
        }
        let p = (t.data as *const u8).wrapping_add(t.byte_offset as usize) as *const T;
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }

    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice().map(<[T]>::to_vec)
    }

    pub fn as_raw(&self) -> &sys::DLTensor {
        self.tensor()
    }
}

impl Drop for OwnedTensor {
    fn drop(&mut self) {
        let m = self.raw.as_ptr();
        if let Some(deleter) = unsafe { (*m).deleter } {
            unsafe { deleter(m) };
        }
    }
}

impl fmt::Debug for TensorRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorRef({} {:?} on {})", self.dtype(), self.shape(), self.device())
    }
}

impl fmt::Debug for TensorMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorMut({} {:?} on {})", self.dtype(), self.shape(), self.device())
    }
}

impl fmt::Debug for OwnedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OwnedTensor({} {:?} on {})", self.dtype(), self.shape(), self.device())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn views_describe_their_data() {
        let x = vec![1.0f32; 8];
        let t = TensorRef::new(&x, &[2, 4]).unwrap();
        assert_eq!(t.shape(), &[2, 4]);
        assert_eq!(t.dtype(), DataType::F32);
        assert_eq!(t.as_raw().data as *const f32, x.as_ptr());
        assert!(t.as_raw().strides.is_null());

        let mut y = vec![0i64; 3];
        let m = TensorMut::new(&mut y, &[3]).unwrap();
        assert_eq!(m.dtype(), DataType::I64);
        assert_eq!(m.as_slice::<i64>().unwrap(), &[0, 0, 0]);
        assert_eq!(m.as_slice::<f32>().unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn scalars_have_rank_zero() {
        let s = [3.5f64];
        let t = TensorRef::new(&s, &[]).unwrap();
        assert_eq!(t.as_raw().ndim, 0);
        assert!(t.shape().is_empty());
    }

    #[test]
    fn mismatches_are_invalid_argument() {
        let x = vec![1.0f32; 7];
        let e = TensorRef::new(&x, &[2, 4]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("7 elements") && e.message().contains("[2, 4]"), "{e}");
        assert_eq!(TensorRef::new(&x, &[-1, 7]).unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(TensorRef::new(&x, &[i64::MAX, i64::MAX]).unwrap_err().code(), ErrorCode::InvalidArgument);
        // Bytes with f32 alignment: accepted; off by one byte: refused.
        let words = [0u32; 4];
        let bytes: &[u8] = unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, 16) };
        assert!(TensorRef::from_bytes(&bytes[..12], DataType::F32, &[3]).is_ok());
        assert_eq!(
            TensorRef::from_bytes(&bytes[..12], DataType::F32, &[4]).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let e = TensorRef::from_bytes(&bytes[1..9], DataType::F32, &[2]).unwrap_err();
        assert!(e.message().contains("aligned"), "{e}");
    }

    #[test]
    fn views_are_transparent_dltensors() {
        assert_eq!(std::mem::size_of::<TensorRef>(), std::mem::size_of::<sys::DLTensor>());
        assert_eq!(std::mem::size_of::<TensorMut>(), std::mem::size_of::<sys::DLTensor>());
    }
}

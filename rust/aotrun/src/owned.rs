//! [`Tensor`]: a CPU tensor that owns its data and its shape, for runs that
//! own their buffers ([`RunFuture`](crate::RunFuture), [`BoundGraph`](crate::BoundGraph))
//! and for code that would rather not keep a shape array alive beside a view.
//!
//! Shapes are given as `usize` (`[2, 256]`, `&[usize]`, `Vec<usize>`) or as
//! the `i64` shapes the package reports (`&[i64]`, `Vec<i64>`), see [`Shape`].
//!
//! ```
//! use aotrun::Tensor;
//! let mut x = Tensor::from_vec(vec![0.5f32; 512], [2, 256]).unwrap();
//! x.as_mut_slice::<f32>().unwrap()[0] = 1.0;
//! assert_eq!(x.shape(), &[2, 256]);
//! assert_eq!(x.dims(), vec![2, 256]);
//! let back: Vec<f32> = x.into_vec().unwrap();
//! assert_eq!(back[0], 1.0);
//! ```

use std::any::TypeId;
use std::ffi::c_void;
use std::fmt;

use crate::dtype::{DataType, Device, Element};
use crate::error::{Error, Result};
use crate::tensor::{TensorMut, TensorRef};

/// A tensor shape: what [`Tensor`] constructors and the convenience runs
/// accept. From `[usize; N]`, `&[usize]`, `Vec<usize>`, `&[i64]`, `Vec<i64>`
/// (negative `i64` dimensions are refused when the tensor is made).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape(Vec<i64>);

impl Shape {
    pub(crate) fn checked(self) -> Result<Box<[i64]>> {
        numel(&self.0)?;
        Ok(self.0.into_boxed_slice())
    }
}

fn from_usize(dims: &[usize]) -> Vec<i64> {
    // usize > i64::MAX becomes negative and is refused by `checked`.
    dims.iter().map(|&d| i64::try_from(d).unwrap_or(-1)).collect()
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(d: [usize; N]) -> Shape {
        Shape(from_usize(&d))
    }
}
impl From<&[usize]> for Shape {
    fn from(d: &[usize]) -> Shape {
        Shape(from_usize(d))
    }
}
impl From<Vec<usize>> for Shape {
    fn from(d: Vec<usize>) -> Shape {
        Shape(from_usize(&d))
    }
}
impl From<&[i64]> for Shape {
    fn from(d: &[i64]) -> Shape {
        Shape(d.to_vec())
    }
}
impl From<Vec<i64>> for Shape {
    fn from(d: Vec<i64>) -> Shape {
        Shape(d)
    }
}

pub(crate) fn numel(shape: &[i64]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        if d < 0 {
            return Err(Error::invalid(format!("shape {shape:?} has a negative dimension")));
        }
        acc.checked_mul(d as usize)
            .ok_or_else(|| Error::invalid(format!("shape {shape:?} overflows the address space")))
    })
}

/// A `Vec<T>` with its type erased (it is rebuilt to be dropped).
struct Storage {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    type_id: TypeId,
    drop: unsafe fn(*mut u8, usize, usize),
}

unsafe fn drop_vec<T>(ptr: *mut u8, len: usize, cap: usize) {
    drop(unsafe { Vec::from_raw_parts(ptr as *mut T, len, cap) });
}

impl Storage {
    fn new<T: Element>(v: Vec<T>) -> Storage {
        let mut v = std::mem::ManuallyDrop::new(v);
        Storage {
            ptr: v.as_mut_ptr() as *mut u8,
            len: v.len(),
            cap: v.capacity(),
            type_id: TypeId::of::<T>(),
            drop: drop_vec::<T>,
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        unsafe { (self.drop)(self.ptr, self.len, self.cap) };
    }
}

/// A CPU tensor owning its elements (a `Vec<T>`, not copied) and its shape.
///
/// `Send + Sync` like the `Vec<T>` it holds. Its data never moves while it
/// lives, so views of it and runs that own it can point into it.
pub struct Tensor {
    storage: Storage,
    dtype: DataType,
    shape: Box<[i64]>,
}

// Plain data owned exclusively (Element types are Send + Sync primitives).
unsafe impl Send for Tensor {}
unsafe impl Sync for Tensor {}

impl Tensor {
    /// Takes `data` (no copy) as a tensor of `shape`. Errors: InvalidArgument
    /// if the length is not the product of the shape.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into().checked()?;
        let n = numel(&shape)?;
        if n != data.len() {
            return Err(Error::invalid(format!(
                "tensor data has {} elements but shape {shape:?} needs {n}",
                data.len()
            )));
        }
        Ok(Tensor { storage: Storage::new(data), dtype: T::DTYPE, shape })
    }

    /// A tensor of `shape` filled with `T::default()` (zero).
    pub fn zeros<T: Element + Default>(shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into().checked()?;
        let n = numel(&shape)?;
        Ok(Tensor { storage: Storage::new(vec![T::default(); n]), dtype: T::DTYPE, shape })
    }

    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The shape as `usize`.
    pub fn dims(&self) -> Vec<usize> {
        self.shape.iter().map(|&d| d as usize).collect()
    }

    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    pub fn len(&self) -> usize {
        self.storage.len
    }

    pub fn is_empty(&self) -> bool {
        self.storage.len == 0
    }

    fn check<T: Element>(&self) -> Result<()> {
        if self.storage.type_id != TypeId::of::<T>() {
            return Err(Error::invalid(format!("tensor is {}, not {}", self.dtype, T::DTYPE)));
        }
        Ok(())
    }

    /// The elements, if `T` is the element type it was made with.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.check::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts(self.storage.ptr as *const T, self.storage.len) })
    }

    /// The elements, writable (e.g. to refill an input before the next run).
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts_mut(self.storage.ptr as *mut T, self.storage.len) })
    }

    /// The `Vec` back (no copy). Errors: InvalidArgument if `T` is not the
    /// element type (the tensor is dropped then; check [`dtype`](Self::dtype)).
    pub fn into_vec<T: Element>(self) -> Result<Vec<T>> {
        self.check::<T>()?;
        let this = std::mem::ManuallyDrop::new(self);
        let s = &this.storage;
        let v = unsafe { Vec::from_raw_parts(s.ptr as *mut T, s.len, s.cap) };
        // The shape is the only other owner of memory.
        drop(unsafe { std::ptr::read(&this.shape) });
        Ok(v)
    }

    /// A read-only view (for `run`, `scope`, ...).
    pub fn view(&self) -> TensorRef<'_> {
        // Checked at construction: the length matches the shape.
        unsafe { TensorRef::from_raw_parts(self.storage.ptr as *const c_void, self.dtype, &self.shape, Device::cpu()) }
            .expect("a Tensor's shape was checked when it was made")
    }

    /// A writable view (an output).
    pub fn view_mut(&mut self) -> TensorMut<'_> {
        unsafe { TensorMut::from_raw_parts(self.storage.ptr as *mut c_void, self.dtype, &self.shape, Device::cpu()) }
            .expect("a Tensor's shape was checked when it was made")
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor({} {:?})", self.dtype, self.shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn shapes_from_usize_and_i64() {
        let t = Tensor::from_vec(vec![1i64; 6], [2, 3]).unwrap();
        assert_eq!(t.shape(), &[2, 3]);
        let t = Tensor::from_vec(vec![1u8; 6], vec![6i64]).unwrap();
        assert_eq!(t.dims(), vec![6]);
        let e = Tensor::from_vec(vec![1.0f32; 5], [2, 3]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(Tensor::zeros::<f32>(vec![-1i64, 3]).unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(Tensor::zeros::<f32>([usize::MAX, 2]).unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn typed_access_is_checked() {
        let mut t = Tensor::zeros::<f32>([4]).unwrap();
        t.as_mut_slice::<f32>().unwrap()[3] = 2.0;
        assert!(t.as_slice::<u32>().is_err());
        assert_eq!(t.view().shape(), &[4]);
        assert_eq!(t.view_mut().as_slice::<f32>().unwrap()[3], 2.0);
        assert!(Tensor::zeros::<u32>([1]).unwrap().into_vec::<f32>().is_err());
        assert_eq!(t.into_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 2.0]);
    }
}

//! A package's constants (its weights), as the package describes them.

use std::ffi::{c_char, CStr};
use std::marker::PhantomData;

use aotrun_sys as sys;

use crate::dtype::DataType;
use crate::error::{check, Error, ErrorCode, Result};
use crate::package::Package;

/// One constant of a package (`aotrun_constant_info`), borrowed from it:
/// the strings and the shape are the package's own, valid while it is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConstantInfo<'p> {
    name: &'p str,
    original_name: &'p str,
    dtype: DataType,
    shape: Option<&'p [i64]>,
    nbytes: Option<u64>,
    folded: bool,
    _package: PhantomData<&'p Package>,
}

impl<'p> ConstantInfo<'p> {
    /// The name updates use ([`ConstantsControl::stage_constants`](crate::ConstantsControl::stage_constants)).
    pub fn name(&self) -> &'p str {
        self.name
    }

    /// The model's own name for it (a `.pt2`'s parameter or buffer name);
    /// the same as [`name`](Self::name) when the package has no other.
    pub fn original_name(&self) -> &'p str {
        self.original_name
    }

    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// `None` when the package does not state the shape.
    pub fn shape(&self) -> Option<&'p [i64]> {
        self.shape
    }

    /// Bytes the package keeps for it: its shape's, or more (a `.pt2` rounds
    /// each up to 64); `None` when the package cannot say.
    pub fn nbytes(&self) -> Option<u64> {
        self.nbytes
    }

    /// Computed from other constants when a container is created (a `.pt2`'s
    /// constant folding): it cannot be updated; updating its sources
    /// recomputes it.
    pub fn folded(&self) -> bool {
        self.folded
    }
}

/// A package-owned C string as `&'p str`; the package outlives `'p`.
fn package_str<'p>(s: *const c_char, what: &str, index: usize) -> Result<&'p str> {
    if s.is_null() {
        return Err(Error::new(ErrorCode::Internal, format!("constant {index}: the library gave no {what}")));
    }
    unsafe { CStr::from_ptr(s) }
        .to_str()
        .map_err(|_| Error::new(ErrorCode::BadPackage, format!("constant {index}: its {what} is not UTF-8")))
}

impl Package {
    /// Constant `index` (< `info().num_constants`).
    /// Errors: InvalidArgument (out of range); BadPackage (a name that is not
    /// UTF-8).
    pub fn constant(&self, index: usize) -> Result<ConstantInfo<'_>> {
        let mut c: sys::aotrun_constant_info = unsafe { std::mem::zeroed() };
        c.struct_size = std::mem::size_of::<sys::aotrun_constant_info>();
        check(unsafe { ffi!(package_get_constant)(self.as_ptr(), index, &mut c) })?;
        let shape = match c.ndim {
            n if n < 0 => None,
            0 => Some(&[][..]),
            // Owned by the package, which `self` keeps open for `'_`.
            n if !c.shape.is_null() => Some(unsafe { std::slice::from_raw_parts(c.shape, n as usize) }),
            _ => {
                return Err(Error::new(
                    ErrorCode::Internal,
                    format!("constant {index}: ndim {} without a shape", c.ndim),
                ))
            }
        };
        Ok(ConstantInfo {
            name: package_str(c.name, "name", index)?,
            original_name: package_str(c.original_name, "original name", index)?,
            dtype: DataType::from_raw(c.dtype),
            shape,
            nbytes: (c.nbytes != 0).then_some(c.nbytes),
            folded: c.folded != 0,
            _package: PhantomData,
        })
    }

    /// Every constant, in the package's order.
    ///
    /// ```no_run
    /// # fn f(package: &aotrun::Package) -> aotrun::Result<()> {
    /// for c in package.constants()? {
    ///     println!("{} {} {:?} {:?}", c.name(), c.dtype(), c.shape(), c.nbytes());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn constants(&self) -> Result<Vec<ConstantInfo<'_>>> {
        (0..self.info()?.num_constants).map(|i| self.constant(i)).collect()
    }
}

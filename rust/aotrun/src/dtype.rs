//! Element types (DLPack `DLDataType`) and devices (`DLDevice`).

use std::fmt;

use aotrun_sys as sys;

/// A DLPack data type: type code, bits per lane, lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

impl DataType {
    pub const F16: DataType = DataType::new(sys::kDLFloat, 16);
    pub const F32: DataType = DataType::new(sys::kDLFloat, 32);
    pub const F64: DataType = DataType::new(sys::kDLFloat, 64);
    pub const BF16: DataType = DataType::new(sys::kDLBfloat, 16);
    pub const I8: DataType = DataType::new(sys::kDLInt, 8);
    pub const I16: DataType = DataType::new(sys::kDLInt, 16);
    pub const I32: DataType = DataType::new(sys::kDLInt, 32);
    pub const I64: DataType = DataType::new(sys::kDLInt, 64);
    pub const U8: DataType = DataType::new(sys::kDLUInt, 8);
    pub const U16: DataType = DataType::new(sys::kDLUInt, 16);
    pub const U32: DataType = DataType::new(sys::kDLUInt, 32);
    pub const U64: DataType = DataType::new(sys::kDLUInt, 64);
    /// Complex numbers as interleaved (real, imaginary) `f32` / `f64` pairs
    /// (`.pt2` complex64 / complex128 tensors).
    pub const C64: DataType = DataType::new(sys::kDLComplex, 64);
    pub const C128: DataType = DataType::new(sys::kDLComplex, 128);

    const fn new(code: sys::DLDataTypeCode, bits: u8) -> DataType {
        DataType { code: code as u8, bits, lanes: 1 }
    }

    /// Bytes of one element (all lanes), rounded up to whole bytes.
    pub fn size_bytes(self) -> usize {
        (self.bits as usize * self.lanes as usize).div_ceil(8)
    }

    pub fn to_raw(self) -> sys::DLDataType {
        sys::DLDataType { code: self.code, bits: self.bits, lanes: self.lanes }
    }

    pub fn from_raw(t: sys::DLDataType) -> DataType {
        DataType { code: t.code, bits: t.bits, lanes: t.lanes }
    }
}

impl fmt::Display for DataType {
    /// `float32`, `int64`, `bfloat16`, `float32x4` (lanes > 1).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code as u32 {
            sys::kDLInt => "int",
            sys::kDLUInt => "uint",
            sys::kDLFloat => "float",
            sys::kDLBfloat => "bfloat",
            sys::kDLComplex => "complex",
            sys::kDLOpaqueHandle => "handle",
            _ => return write!(f, "dtype(code={}, bits={}, lanes={})", self.code, self.bits, self.lanes),
        };
        write!(f, "{name}{}", self.bits)?;
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

/// Rust element types with a DLPack data type. Sealed: the mapping must be
/// exact for the views in [`crate::TensorRef`] to be sound.
pub trait Element: sealed::Sealed + Copy + 'static {
    const DTYPE: DataType;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DataType = DataType::$d; }
    )*};
}
element!(f32 => F32, f64 => F64, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
         u8 => U8, u16 => U16, u32 => U32, u64 => U64);
// Feature `half`: float16 and bfloat16 (both are 2-byte `repr(transparent)`
// wrappers of u16 in the half crate).
#[cfg(feature = "half")]
element!(half::f16 => F16, half::bf16 => BF16);

/// Kind of a [`Device`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceType {
    Cpu,
    Cuda,
    CudaHost,
    /// Another DLPack device type, by number.
    Other(u32),
}

/// A DLPack device: type and ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    pub device_type: DeviceType,
    pub id: i32,
}

impl Device {
    pub const fn cpu() -> Device {
        Device { device_type: DeviceType::Cpu, id: 0 }
    }

    pub const fn cuda(id: i32) -> Device {
        Device { device_type: DeviceType::Cuda, id }
    }

    pub fn to_raw(self) -> sys::DLDevice {
        let t = match self.device_type {
            DeviceType::Cpu => sys::kDLCPU,
            DeviceType::Cuda => sys::kDLCUDA,
            DeviceType::CudaHost => sys::kDLCUDAHost,
            DeviceType::Other(n) => n,
        };
        sys::DLDevice { device_type: t, device_id: self.id }
    }

    pub fn from_raw(d: sys::DLDevice) -> Device {
        let device_type = match d.device_type {
            sys::kDLCPU => DeviceType::Cpu,
            sys::kDLCUDA => DeviceType::Cuda,
            sys::kDLCUDAHost => DeviceType::CudaHost,
            n => DeviceType::Other(n),
        };
        Device { device_type, id: d.device_id }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.device_type {
            DeviceType::Cpu => write!(f, "cpu:{}", self.id),
            DeviceType::Cuda => write!(f, "cuda:{}", self.id),
            DeviceType::CudaHost => write!(f, "cuda_host:{}", self.id),
            DeviceType::Other(n) => write!(f, "device{n}:{}", self.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes() {
        assert_eq!(DataType::F32.to_string(), "float32");
        assert_eq!(DataType::U8.to_string(), "uint8");
        assert_eq!(DataType { lanes: 4, ..DataType::F32 }.to_string(), "float32x4");
        assert_eq!(<i64 as Element>::DTYPE.size_bytes(), 8);
        assert_eq!(Device::from_raw(Device::cuda(1).to_raw()), Device::cuda(1));
        assert_eq!(Device::cpu().to_string(), "cpu:0");
    }

    #[cfg(feature = "half")]
    #[test]
    fn half_precision_elements() {
        assert_eq!(<half::f16 as Element>::DTYPE.to_string(), "float16");
        assert_eq!(<half::bf16 as Element>::DTYPE.to_string(), "bfloat16");
        assert_eq!(std::mem::size_of::<half::bf16>(), DataType::BF16.size_bytes());
        let t = crate::Tensor::from_vec(vec![half::f16::from_f32(1.5); 4], [2, 2]).unwrap();
        assert_eq!(t.as_slice::<half::f16>().unwrap()[3].to_f32(), 1.5);
        assert!(t.as_slice::<half::bf16>().is_err());
    }
}

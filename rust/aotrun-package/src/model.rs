//! The model itself: y = 2 * x + 1 over float32 [-1, 4].

use std::ffi::CStr;

use crate::abi::{kDLFloat, DLDataType};

pub const INPUT_NAME: &CStr = c"x";
pub const OUTPUT_NAME: &CStr = c"y";
pub const FEATURES: i64 = 4;
/// Spec shape of both x and y; -1 marks the dynamic batch dimension.
/// A static, so spec pointers handed to the host never dangle.
pub static SPEC_SHAPE: [i64; 2] = [-1, FEATURES];
pub const DTYPE: DLDataType = DLDataType { code: kDLFloat as u8, bits: 32, lanes: 1 };

pub const SCALE: f32 = 2.0;
pub const BIAS: f32 = 1.0;

/// The forward pass over `n` elements. Raw pointers, not slices: x and y may
/// be the same buffer (an in-place run), which `&`/`&mut` slices may not.
///
/// # Safety
/// `x` is readable and `y` writable for `n` f32 elements (they may alias).
pub unsafe fn forward(x: *const f32, y: *mut f32, n: usize) {
    for i in 0..n {
        unsafe { y.add(i).write(x.add(i).read() * SCALE + BIAS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_is_affine_and_allows_in_place() {
        let x = [0.0f32, 1.0, -2.5, 10.0];
        let mut y = [0.0f32; 4];
        unsafe { forward(x.as_ptr(), y.as_mut_ptr(), 4) };
        assert_eq!(y, [1.0, 3.0, -4.0, 21.0]);
        unsafe { forward(y.as_ptr(), y.as_mut_ptr(), 4) };
        assert_eq!(y, [3.0, 7.0, -7.0, 43.0]);
    }
}

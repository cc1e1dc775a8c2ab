//! The boundary: status codes, the thread-local last error, and the
//! `catch_unwind` wrapper every exported or launched function runs under.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi;

/// A failure inside the package: the status returned to the host and the
/// message `aotrun_pkg_get_last_error` hands out.
#[derive(Debug)]
pub struct PkgError {
    pub status: i32,
    pub message: String,
}

pub type PkgResult<T> = Result<T, PkgError>;

impl PkgError {
    pub fn new(status: u32, message: impl Into<String>) -> Self {
        PkgError { status: status as i32, message: message.into() }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(abi::AOTRUN_PKG_ERR_INVALID_ARGUMENT, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(abi::AOTRUN_PKG_ERR_UNSUPPORTED, message)
    }
}

thread_local! {
    // Valid until the next failure on this thread, as the ABI allows.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    let full = format!("aotrun_rust_affine: {message}");
    // Interior NULs cannot cross as a C string; replace rather than lose it.
    let c = CString::new(full.replace('\0', "\u{FFFD}")).unwrap_or_default();
    // try_with: during thread teardown the slot may be gone; the status
    // still tells the host something failed.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = c);
}

/// Pointer to this thread's last message ("" if none).
pub fn last_error() -> *const c_char {
    LAST_ERROR.try_with(|slot| slot.borrow().as_ptr()).unwrap_or(c"aotrun_rust_affine: thread is exiting".as_ptr())
}

/// Runs `f`, turning an error into its status and a panic into
/// AOTRUN_PKG_ERR_INTERNAL, each with the last-error message set. The
/// success path touches no thread-local storage.
pub fn guard(f: impl FnOnce() -> PkgResult<()>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => abi::AOTRUN_PKG_OK as i32,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            // Dropping a payload can itself panic; forget it instead of
            // risking an unwind here, outside catch_unwind.
            std::mem::forget(payload);
            set_last_error(&format!("internal error (panic caught at the ABI boundary): {what}"));
            abi::AOTRUN_PKG_ERR_INTERNAL as i32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        unsafe { CStr::from_ptr(last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn ok_is_zero() {
        assert_eq!(guard(|| Ok(())), 0);
    }

    #[test]
    fn error_sets_status_and_message() {
        assert_eq!(guard(|| Err(PkgError::invalid("bad input 'x'"))), 1);
        assert_eq!(last(), "aotrun_rust_affine: bad input 'x'");
    }

    #[test]
    fn panic_becomes_internal() {
        let st = guard(|| panic!("boom {}", 7));
        assert_eq!(st, abi::AOTRUN_PKG_ERR_INTERNAL as i32);
        assert!(last().contains("(panic caught at the ABI boundary): boom 7"), "{}", last());
    }
}

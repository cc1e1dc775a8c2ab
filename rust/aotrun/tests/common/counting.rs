//! The extra exports of the `counting` test package
//! (tests/packages/counting_api.h), resolved with dlopen/dlsym. The crate has
//! no dependencies, so the two libc functions are declared here.
#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}

const RTLD_NOW: c_int = 2;

/// The package's process-wide counters. Opening the same file as the
/// package loader did yields the same loaded object (glibc matches it), so
/// these are the counters the runs update.
pub struct Counting {
    max_inflight: extern "C" fn() -> i64,
    completed: extern "C" fn() -> i64,
    reset: extern "C" fn(),
}

fn last_dl_error() -> String {
    let e = unsafe { dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Counting {
    /// Opens `so` (never closed: the handle stays valid for the process).
    pub fn open(so: &Path) -> Counting {
        let c = CString::new(so.as_os_str().to_str().expect("UTF-8 path")).unwrap();
        let h = unsafe { dlopen(c.as_ptr(), RTLD_NOW) };
        assert!(!h.is_null(), "dlopen {}: {}", so.display(), last_dl_error());
        let sym = |name: &str| {
            let n = CString::new(name).unwrap();
            let p = unsafe { dlsym(h, n.as_ptr()) };
            assert!(!p.is_null(), "dlsym {name} in {}: {}", so.display(), last_dl_error());
            p
        };
        // Signatures from counting_api.h.
        unsafe {
            Counting {
                max_inflight: std::mem::transmute::<*mut c_void, extern "C" fn() -> i64>(sym(
                    "aotrun_test_counting_max_inflight",
                )),
                completed: std::mem::transmute::<*mut c_void, extern "C" fn() -> i64>(sym(
                    "aotrun_test_counting_completed",
                )),
                reset: std::mem::transmute::<*mut c_void, extern "C" fn()>(sym("aotrun_test_counting_reset")),
            }
        }
    }

    /// Most executions that overlapped since the last reset.
    pub fn max_inflight(&self) -> i64 {
        (self.max_inflight)()
    }

    /// Executions finished since the last reset.
    pub fn completed(&self) -> i64 {
        (self.completed)()
    }

    /// Zeroes both; only while nothing runs.
    pub fn reset(&self) {
        (self.reset)()
    }
}

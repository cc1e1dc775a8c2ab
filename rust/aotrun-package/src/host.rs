//! The host services table (`aotrun_pkg_host`), copied at container creation
//! and wrapped so that every call checks its status.

use std::ffi::{c_void, CString};
use std::mem::{offset_of, size_of, MaybeUninit};

use crate::abi::{self, aotrun_pkg_event, aotrun_pkg_host, aotrun_pkg_stream};
use crate::guard::{PkgError, PkgResult};

/// `AOTRUN_PKG_HOST_STRUCT_SIZE_1_0`: the last 1.0 field ends the 1.0 table.
const HOST_SIZE_1_0: usize = offset_of!(aotrun_pkg_host, stream_is_capturing) + size_of::<*const ()>();

pub struct Host {
    table: aotrun_pkg_host,
}

// The ABI promises: "Every function may be called from any thread", and
// host_ctx stays valid until the container is destroyed.
unsafe impl Send for Host {}
unsafe impl Sync for Host {}

/// A launched function and the destructor of its context.
pub type HostFn = unsafe extern "C" fn(*mut c_void) -> i32;
pub type CtxDestroy = unsafe extern "C" fn(*mut c_void);

impl Host {
    /// Copies `*ptr`, reading only what the host declared in struct_size.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a host table valid for `struct_size` bytes.
    pub unsafe fn copy_from(ptr: *const aotrun_pkg_host) -> PkgResult<Host> {
        if ptr.is_null() {
            return Err(PkgError::invalid("create_args.host is NULL"));
        }
        let declared = unsafe { (*ptr).struct_size };
        if declared < HOST_SIZE_1_0 {
            return Err(PkgError::invalid(format!(
                "host services table too small: struct_size {declared} < {HOST_SIZE_1_0} (ABI 1.0)"
            )));
        }
        let mut table = MaybeUninit::<aotrun_pkg_host>::zeroed();
        unsafe {
            std::ptr::copy_nonoverlapping(ptr as *const u8, table.as_mut_ptr() as *mut u8, HOST_SIZE_1_0);
        }
        let table = unsafe { table.assume_init() };
        let missing: Vec<&str> = [
            ("log_enabled", table.log_enabled.is_none()),
            ("log", table.log.is_none()),
            ("launch", table.launch.is_none()),
            ("event_create", table.event_create.is_none()),
            ("event_destroy", table.event_destroy.is_none()),
            ("event_record", table.event_record.is_none()),
            ("event_query", table.event_query.is_none()),
            ("event_synchronize", table.event_synchronize.is_none()),
        ]
        .iter()
        .filter(|(_, absent)| *absent)
        .map(|(name, _)| *name)
        .collect();
        if !missing.is_empty() {
            return Err(PkgError::invalid(format!("host services table lacks: {}", missing.join(", "))));
        }
        Ok(Host { table })
    }

    fn ctx(&self) -> *mut c_void {
        self.table.host_ctx
    }

    pub fn log(&self, level: u32, message: impl FnOnce() -> String) {
        // Checked above; formatting only happens when the level is on.
        let (enabled, log) = (self.table.log_enabled.unwrap(), self.table.log.unwrap());
        if unsafe { enabled(self.ctx(), level as i32) } != 0 {
            if let Ok(c) = CString::new(message()) {
                unsafe { log(self.ctx(), level as i32, c.as_ptr()) };
            }
        }
    }

    /// Enqueues `f(ctx)` on `stream`. On failure the context is NOT
    /// destroyed by the host (ABI rule); the caller still owns it.
    pub fn launch(&self, stream: aotrun_pkg_stream, f: HostFn, ctx: *mut c_void, destroy: CtxDestroy) -> PkgResult<()> {
        let launch = self.table.launch.unwrap();
        let st = unsafe { launch(self.ctx(), stream, Some(f), ctx, Some(destroy)) };
        check(st, "launch")
    }

    pub fn event_create(&self) -> PkgResult<aotrun_pkg_event> {
        let mut ev: aotrun_pkg_event = std::ptr::null_mut();
        let st = unsafe { self.table.event_create.unwrap()(self.ctx(), &mut ev) };
        check(st, "event_create")?;
        Ok(ev)
    }

    pub fn event_destroy(&self, ev: aotrun_pkg_event) {
        // Nothing useful to do with a failure during teardown.
        let _ = unsafe { self.table.event_destroy.unwrap()(self.ctx(), ev) };
    }

    pub fn event_record(&self, ev: aotrun_pkg_event, stream: aotrun_pkg_stream) -> PkgResult<()> {
        let st = unsafe { self.table.event_record.unwrap()(self.ctx(), ev, stream) };
        check(st, "event_record")
    }

    /// Ok(true) when the event's work is complete.
    pub fn event_query(&self, ev: aotrun_pkg_event) -> PkgResult<bool> {
        let st = unsafe { self.table.event_query.unwrap()(self.ctx(), ev) };
        if st == abi::AOTRUN_PKG_NOT_READY as i32 {
            return Ok(false);
        }
        check(st, "event_query").map(|_| true)
    }

    pub fn event_synchronize(&self, ev: aotrun_pkg_event) -> PkgResult<()> {
        let st = unsafe { self.table.event_synchronize.unwrap()(self.ctx(), ev) };
        check(st, "event_synchronize")
    }
}

/// A host status as a package error. The capture codes keep their numbers,
/// so the host maps them to CAPTURE_UNSUPPORTED / CAPTURE_INVALIDATED.
fn check(status: i32, what: &str) -> PkgResult<()> {
    if status == abi::AOTRUN_PKG_OK as i32 {
        return Ok(());
    }
    let why = match status as u32 {
        abi::AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED => " (operation not permitted when stream is capturing)",
        abi::AOTRUN_PKG_ERR_CAPTURE_INVALIDATED => " (stream capture was invalidated)",
        abi::AOTRUN_PKG_ERR_OUT_OF_MEMORY => " (out of memory)",
        _ => "",
    };
    Err(PkgError { status, message: format!("host service {what} failed with status {status}{why}") })
}

//! The log bridge: aotrun's process-wide log callback routed to a Rust
//! closure.
//!
//! Messages (e.g. the warning when a package is too old for a mode and aotrun
//! falls back) go to stderr by default. [`set_log_handler`] sends them to a
//! closure instead:
//!
//! ```no_run
//! aotrun::set_log_handler(Box::new(|level, msg| eprintln!("[aotrun {level}] {msg}")));
//! ```
//!
//! The C library may call the handler from any thread, including its own
//! worker threads, and concurrently; hence `Fn + Send + Sync`. A panic in the
//! handler is caught before it reaches C (unwinding across `extern "C"` would
//! abort the process) and reported on stderr. The handler may replace or
//! clear itself ([`set_log_handler`] / [`clear_log_handler`] from inside the
//! handler take effect at once; the running handler is dropped when it
//! returns). Messages aotrun emits while the handler runs on the same thread
//! go to stderr: the handler is never re-entered.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, PoisonError};

use aotrun_sys as sys;

/// Severity of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Error,
    Warn,
    Info,
    Debug,
}

impl Level {
    /// Unknown (newer) levels count as the nearest known one.
    fn from_raw(l: sys::aotrun_log_level) -> Level {
        match l {
            i32::MIN..=0 => Level::Error,
            1 => Level::Warn,
            2 => Level::Info,
            _ => Level::Debug,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warn => "warn",
            Level::Info => "info",
            Level::Debug => "debug",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The most verbose level that is emitted ([`set_log_level`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LevelFilter {
    Off,
    Error,
    Warn,
    Info,
    Debug,
}

impl LevelFilter {
    fn to_raw(self) -> sys::aotrun_log_level {
        match self {
            LevelFilter::Off => sys::AOTRUN_LOG_OFF,
            LevelFilter::Error => sys::AOTRUN_LOG_ERROR,
            LevelFilter::Warn => sys::AOTRUN_LOG_WARN,
            LevelFilter::Info => sys::AOTRUN_LOG_INFO,
            LevelFilter::Debug => sys::AOTRUN_LOG_DEBUG,
        }
    }

    fn from_raw(l: sys::aotrun_log_level) -> LevelFilter {
        match l {
            i32::MIN..=-1 => LevelFilter::Off,
            0 => LevelFilter::Error,
            1 => LevelFilter::Warn,
            2 => LevelFilter::Info,
            _ => LevelFilter::Debug,
        }
    }
}

/// A log handler: called with each message's level and text.
pub type LogHandler = Box<dyn Fn(Level, &str) + Send + Sync + 'static>;

/// The installed handler, boxed twice so C gets a thin pointer.
struct Installed(*mut LogHandler);
// Only ever read through `&LogHandler`, which is Sync.
unsafe impl Send for Installed {}

/// Serialises installs; the trampoline never takes it.
static INSTALLED: Mutex<Option<Installed>> = Mutex::new(None);

thread_local! {
    /// This thread is running the handler.
    static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
    /// Handlers replaced from inside the running handler: dropped when it
    /// returns, never while it runs.
    static RETIRED: RefCell<Vec<Installed>> = const { RefCell::new(Vec::new()) };
}

/// Routes aotrun's log messages to `handler`, process-wide, replacing any
/// previous handler (which is dropped: the C API guarantees the previous
/// callback is never called once the replacement returns).
///
/// The handler may run on any thread, concurrently, and must not call into
/// aotrun. Panics inside it are caught.
pub fn set_log_handler(handler: LogHandler) {
    let raw = Box::into_raw(Box::new(handler));
    install(Some(trampoline), raw as *mut c_void, Some(Installed(raw)));
}

/// Restores aotrun's default (stderr) logging and drops the handler.
pub fn clear_log_handler() {
    install(None, std::ptr::null_mut(), None);
}

fn install(f: sys::aotrun_log_fn, user_data: *mut c_void, new: Option<Installed>) {
    let mut slot = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
    unsafe { ffi!(set_log_callback)(f, user_data) };
    if let Some(old) = std::mem::replace(&mut *slot, new) {
        if IN_HANDLER.with(Cell::get) {
            // This thread is inside a handler, perhaps `old` itself: C no
            // longer calls it, but this call is still running.
            RETIRED.with(|r| r.borrow_mut().push(old));
        } else {
            // No longer reachable from C (see above), so no call is in flight.
            drop(unsafe { Box::from_raw(old.0) });
        }
    }
}

/// Sets the most verbose level aotrun emits (process-wide; the initial value
/// comes from the `AOTRUN_LOG` environment variable, default warn).
pub fn set_log_level(level: LevelFilter) {
    unsafe { ffi!(set_log_level)(level.to_raw()) };
}

pub fn log_level() -> LevelFilter {
    LevelFilter::from_raw(unsafe { ffi!(get_log_level)() })
}

unsafe extern "C" fn trampoline(user_data: *mut c_void, level: sys::aotrun_log_level, message: *const c_char) {
    let result = catch_unwind(AssertUnwindSafe(|| {
        if user_data.is_null() {
            return;
        }
        let handler = unsafe { &*(user_data as *const LogHandler) };
        let text = if message.is_null() {
            std::borrow::Cow::Borrowed("")
        } else {
            // Borrowed when the message is UTF-8 (it always is in practice).
            unsafe { CStr::from_ptr(message) }.to_string_lossy()
        };
        IN_HANDLER.with(|h| h.set(true));
        handler(Level::from_raw(level), &text);
    }));
    IN_HANDLER.with(|h| h.set(false));
    let retired = RETIRED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    if !retired.is_empty() {
        // A closure's drop may panic too; it must not unwind into C.
        let dropped = catch_unwind(AssertUnwindSafe(|| {
            for old in retired {
                drop(unsafe { Box::from_raw(old.0) });
            }
        }));
        if let Err(payload) = dropped {
            std::mem::forget(payload);
        }
    }
    if let Err(payload) = result {
        // Dropping the payload could panic again; leak it instead.
        std::mem::forget(payload);
        let _ = writeln!(std::io::stderr(), "aotrun: the Rust log handler panicked; message dropped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn call(handler: &LogHandler, level: sys::aotrun_log_level, msg: &CStr) {
        unsafe { trampoline(handler as *const LogHandler as *mut c_void, level, msg.as_ptr()) };
    }

    #[test]
    fn a_panicking_handler_does_not_unwind_into_c() {
        let h: LogHandler = Box::new(|_, _| panic!("handler bug"));
        // Returns normally: the panic stops at the trampoline.
        call(&h, sys::AOTRUN_LOG_WARN, c"boom");
        unsafe { trampoline(std::ptr::null_mut(), sys::AOTRUN_LOG_WARN, std::ptr::null()) };
    }

    #[test]
    fn concurrent_calls_from_many_threads_reach_the_handler() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let h: LogHandler = Box::new(|level, msg| {
            assert_eq!((level, msg), (Level::Info, "from a worker"));
            COUNT.fetch_add(1, Ordering::Relaxed);
        });
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..1000).for_each(|_| call(&h, sys::AOTRUN_LOG_INFO, c"from a worker")));
            }
        });
        assert_eq!(COUNT.load(Ordering::Relaxed), 8000);
    }

    #[test]
    fn levels_map_from_c_including_unknown_values() {
        assert_eq!(Level::from_raw(sys::AOTRUN_LOG_ERROR), Level::Error);
        assert_eq!(Level::from_raw(sys::AOTRUN_LOG_DEBUG), Level::Debug);
        assert_eq!(Level::from_raw(7), Level::Debug);
        for f in [LevelFilter::Off, LevelFilter::Error, LevelFilter::Warn, LevelFilter::Info, LevelFilter::Debug] {
            assert_eq!(LevelFilter::from_raw(f.to_raw()), f);
        }
    }
}

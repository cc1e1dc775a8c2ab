//! Errors: a code for every status of `aotrun.h` plus the library's message.

use std::ffi::CStr;
use std::fmt;

use aotrun_sys as sys;

/// The code of an [`Error`], one per `aotrun_code` of the C API.
///
/// `#[non_exhaustive]`: later library versions add codes. A code this crate
/// does not know yet arrives as [`ErrorCode::Unknown`] with its number.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// NULL pointer, bad count, dtype, shape, device or option.
    InvalidArgument,
    /// A path that does not exist.
    NotFound,
    /// Not an ELF shared object, dlopen failed, unreadable file.
    LoadFailed,
    /// The package was built for another ABI major version.
    AbiMismatch,
    /// Required package entry points are absent (all of them are listed).
    MissingSymbol,
    /// A file's sha256 differs from the manifest.
    Integrity,
    /// Malformed manifest, weights missing or malformed.
    BadPackage,
    /// Mode or feature unavailable (e.g. `strict` instead of a fallback).
    Unsupported,
    /// The package's own code returned an error.
    Package,
    OutOfMemory,
    /// Try-variant: the in-flight window is full.
    WouldBlock,
    Timeout,
    /// Operation not permitted when the stream is capturing.
    CaptureUnsupported,
    /// A capture was invalidated by an illegal operation.
    CaptureInvalidated,
    /// Device or driver failure, no device present.
    Device,
    /// A bug in aotrun.
    Internal,
    /// A code newer than this crate.
    Unknown(u32),
}

impl ErrorCode {
    /// Maps a C `aotrun_code`. `AOTRUN_OK` is not an error and maps to
    /// `Unknown(0)`; callers never pass it.
    pub fn from_raw(code: sys::aotrun_code) -> ErrorCode {
        use ErrorCode::*;
        match code {
            sys::AOTRUN_ERR_INVALID_ARGUMENT => InvalidArgument,
            sys::AOTRUN_ERR_NOT_FOUND => NotFound,
            sys::AOTRUN_ERR_LOAD_FAILED => LoadFailed,
            sys::AOTRUN_ERR_ABI_MISMATCH => AbiMismatch,
            sys::AOTRUN_ERR_MISSING_SYMBOL => MissingSymbol,
            sys::AOTRUN_ERR_INTEGRITY => Integrity,
            sys::AOTRUN_ERR_BAD_PACKAGE => BadPackage,
            sys::AOTRUN_ERR_UNSUPPORTED => Unsupported,
            sys::AOTRUN_ERR_PACKAGE => Package,
            sys::AOTRUN_ERR_OUT_OF_MEMORY => OutOfMemory,
            sys::AOTRUN_ERR_WOULD_BLOCK => WouldBlock,
            sys::AOTRUN_ERR_TIMEOUT => Timeout,
            sys::AOTRUN_ERR_CAPTURE_UNSUPPORTED => CaptureUnsupported,
            sys::AOTRUN_ERR_CAPTURE_INVALIDATED => CaptureInvalidated,
            sys::AOTRUN_ERR_DEVICE => Device,
            sys::AOTRUN_ERR_INTERNAL => Internal,
            other => Unknown(other),
        }
    }

    /// The C `aotrun_code` value.
    pub fn raw(self) -> sys::aotrun_code {
        use ErrorCode::*;
        match self {
            InvalidArgument => sys::AOTRUN_ERR_INVALID_ARGUMENT,
            NotFound => sys::AOTRUN_ERR_NOT_FOUND,
            LoadFailed => sys::AOTRUN_ERR_LOAD_FAILED,
            AbiMismatch => sys::AOTRUN_ERR_ABI_MISMATCH,
            MissingSymbol => sys::AOTRUN_ERR_MISSING_SYMBOL,
            Integrity => sys::AOTRUN_ERR_INTEGRITY,
            BadPackage => sys::AOTRUN_ERR_BAD_PACKAGE,
            Unsupported => sys::AOTRUN_ERR_UNSUPPORTED,
            Package => sys::AOTRUN_ERR_PACKAGE,
            OutOfMemory => sys::AOTRUN_ERR_OUT_OF_MEMORY,
            WouldBlock => sys::AOTRUN_ERR_WOULD_BLOCK,
            Timeout => sys::AOTRUN_ERR_TIMEOUT,
            CaptureUnsupported => sys::AOTRUN_ERR_CAPTURE_UNSUPPORTED,
            CaptureInvalidated => sys::AOTRUN_ERR_CAPTURE_INVALIDATED,
            Device => sys::AOTRUN_ERR_DEVICE,
            Internal => sys::AOTRUN_ERR_INTERNAL,
            Unknown(code) => code,
        }
    }

    /// The stable name the C API uses (`aotrun_code_name`), e.g.
    /// `"INVALID_ARGUMENT"`; `"UNKNOWN"` for codes this crate does not know.
    pub fn name(self) -> &'static str {
        use ErrorCode::*;
        match self {
            InvalidArgument => "INVALID_ARGUMENT",
            NotFound => "NOT_FOUND",
            LoadFailed => "LOAD_FAILED",
            AbiMismatch => "ABI_MISMATCH",
            MissingSymbol => "MISSING_SYMBOL",
            Integrity => "INTEGRITY",
            BadPackage => "BAD_PACKAGE",
            Unsupported => "UNSUPPORTED",
            Package => "PACKAGE",
            OutOfMemory => "OUT_OF_MEMORY",
            WouldBlock => "WOULD_BLOCK",
            Timeout => "TIMEOUT",
            CaptureUnsupported => "CAPTURE_UNSUPPORTED",
            CaptureInvalidated => "CAPTURE_INVALIDATED",
            Device => "DEVICE",
            Internal => "INTERNAL",
            Unknown(_) => "UNKNOWN",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorCode::Unknown(c) => write!(f, "UNKNOWN({c})"),
            other => f.write_str(other.name()),
        }
    }
}

/// An error of the aotrun library (or of this crate's argument checks): a
/// code and a message naming what failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

/// `Result<T, aotrun::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error raised on the Rust side (before anything reaches C).
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// Takes ownership of a non-NULL status: copies code and message, frees it.
    ///
    /// # Safety
    /// `status` is a non-NULL status returned by the library and not freed.
    #[cold]
    pub(crate) unsafe fn from_status(status: *mut sys::aotrun_status) -> Error {
        let (code, msg) = unsafe {
            let code = ffi!(status_code)(status);
            let msg = ffi!(status_message)(status);
            let msg = if msg.is_null() { String::new() } else { CStr::from_ptr(msg).to_string_lossy().into_owned() };
            ffi!(status_free)(status);
            (code, msg)
        };
        Error { code: ErrorCode::from_raw(code), message: msg }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<sys::LoadError> for Error {
    fn from(e: sys::LoadError) -> Error {
        Error::new(ErrorCode::LoadFailed, e.to_string())
    }
}

/// Obtains the function table (loading the library if needed), as an error
/// instead of a panic. Called by the constructors that start from nothing.
pub(crate) fn loaded() -> Result<()> {
    sys::api().map(|_| ()).map_err(Error::from)
}

/// NULL status → Ok; otherwise the error (status freed). The success path is
/// one comparison, so it sits on every call's hot path.
#[inline(always)]
pub(crate) fn check(status: *mut sys::aotrun_status) -> Result<()> {
    if status.is_null() {
        Ok(())
    } else {
        Err(unsafe { Error::from_status(status) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_c_code_round_trips_and_matches_the_c_name() {
        for raw in 1..=sys::AOTRUN_ERR_INTERNAL {
            let code = ErrorCode::from_raw(raw);
            assert!(!matches!(code, ErrorCode::Unknown(_)), "code {raw} not mapped");
            assert_eq!(code.raw(), raw);
            let c_name = unsafe { CStr::from_ptr(ffi!(code_name)(raw)) };
            assert_eq!(code.name(), c_name.to_str().unwrap(), "code {raw}");
        }
        assert_eq!(ErrorCode::from_raw(4242), ErrorCode::Unknown(4242));
        assert_eq!(ErrorCode::Unknown(4242).raw(), 4242);
        assert_eq!(ErrorCode::Unknown(4242).to_string(), "UNKNOWN(4242)");
    }

    #[test]
    fn display_has_code_and_message() {
        let e = Error::new(ErrorCode::NotFound, "no such package: /x");
        assert_eq!(e.to_string(), "NOT_FOUND: no such package: /x");
    }
}

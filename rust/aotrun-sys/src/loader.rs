//! How the function table (`aotrun_api`) is obtained: linked at build time
//! (feature `link`) or loaded at run time with `dlopen` (feature
//! `load-dynamic`). The safe crate makes every call through this table, so
//! both modes share one code path.
//!
//! Resolution, decided once per process by the first of:
//!   * [`load_from`] (feature `load-dynamic`): `dlopen` of that file;
//!   * the first call to [`api`]:
//!       - with `link`: the linked `aotrun_get_api` (the library was loaded
//!         by the dynamic linker at start-up);
//!       - otherwise the default search, in order: `AOTRUN_DYLIB_PATH` (a
//!         file or a directory holding `libaotrun.so.1`), the dynamic
//!         linker's own search for `libaotrun.so.1` (`LD_LIBRARY_PATH`, the
//!         executable's rpath, `/etc/ld.so.cache`, `/usr/lib`), then the
//!         directory the build script found the library in (embedded at
//!         build time, so a `cargo run` works with no variable set).
//!
//! A failure is a [`LoadError`] that names every place tried and why each
//! failed (`dlerror()`).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::{aotrun_api, AOTRUN_API_VERSION};

/// The file name the dynamic linker is asked for.
pub const LIBRARY_SONAME: &str = "libaotrun.so.1";

/// The environment variable the default search reads first.
pub const DYLIB_PATH_VAR: &str = "AOTRUN_DYLIB_PATH";

/// The directory `build.rs` found `libaotrun.so` in, if any.
pub const BUILD_LIB_DIR: Option<&str> = option_env!("AOTRUN_SYS_BUILD_LIB_DIR");

/// Number of function slots in a table of [`AOTRUN_API_VERSION`] (the
/// header pins the offset of the last one).
const SLOTS: usize = 77;

static TABLE: AtomicPtr<aotrun_api> = AtomicPtr::new(std::ptr::null_mut());
/// Where the installed table came from; also serialises installation.
static SOURCE: Mutex<Option<Source>> = Mutex::new(None);

/// Where the function table came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Linked at build time (feature `link`).
    Linked,
    /// `dlopen` of this file (as given, or as found by the search).
    Loaded(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Linked => f.write_str("linked at build time"),
            Source::Loaded(p) => write!(f, "loaded from {}", p.display()),
        }
    }
}

/// The library could not be loaded or does not provide the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// One line per place tried: what, and why it failed.
    pub tried: Vec<String>,
    /// Set when a table was installed already (by another path).
    pub already: Option<Source>,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.already {
            return write!(
                f,
                "libaotrun is already in use ({s}); load_from must come before any other aotrun call, \
                 and only one library can be used per process"
            );
        }
        write!(
            f,
            "cannot load {LIBRARY_SONAME} (aotrun API {}.{}). Tried:",
            AOTRUN_API_VERSION >> 16,
            (AOTRUN_API_VERSION >> 8) & 0xFF
        )?;
        for t in &self.tried {
            write!(f, "\n  {t}")?;
        }
        write!(
            f,
            "\nSet {DYLIB_PATH_VAR} to libaotrun.so.1 or its directory, install aotrun, or build it \
             (cmake --build build --target aotrun) before building this crate."
        )
    }
}

impl std::error::Error for LoadError {}

/// The function table, obtaining it first if needed (see the module docs).
pub fn api() -> Result<&'static aotrun_api, LoadError> {
    let p = TABLE.load(Ordering::Acquire);
    if !p.is_null() {
        return Ok(unsafe { &*p });
    }
    init(None)
}

/// The table when it is known to be installed (an object of the library
/// exists), else obtains it like [`api`] and panics with the [`LoadError`].
#[inline(always)]
pub fn api_or_panic() -> &'static aotrun_api {
    let p = TABLE.load(Ordering::Acquire);
    if !p.is_null() {
        return unsafe { &*p };
    }
    cold_api()
}

#[cold]
#[inline(never)]
fn cold_api() -> &'static aotrun_api {
    match api() {
        Ok(t) => t,
        Err(e) => panic!("aotrun: {e}"),
    }
}

/// Where the installed table came from; `None` before the first call.
pub fn source() -> Option<Source> {
    SOURCE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Loads the library from `path` (a file, or a directory holding
/// `libaotrun.so.1`) and uses it for the rest of the process. Must come
/// before any other call; calling it again with the same file is a no-op.
#[cfg(feature = "load-dynamic")]
pub fn load_from(path: impl AsRef<Path>) -> Result<&'static aotrun_api, LoadError> {
    init(Some(path.as_ref()))
}

fn init(explicit: Option<&Path>) -> Result<&'static aotrun_api, LoadError> {
    let mut source = SOURCE.lock().unwrap_or_else(|p| p.into_inner());
    let p = TABLE.load(Ordering::Acquire);
    if !p.is_null() {
        if let Some(path) = explicit {
            let same = matches!(&*source, Some(Source::Loaded(q)) if canonical(&file_in(path)) == canonical(q));
            if !same {
                return Err(LoadError { tried: Vec::new(), already: source.clone() });
            }
        }
        return Ok(unsafe { &*p });
    }
    let mut tried = Vec::new();
    let (table, src) = match explicit {
        Some(path) => {
            let file = file_in(path);
            match open(&file, &mut tried) {
                Some(t) => (t, Source::Loaded(file)),
                None => return Err(LoadError { tried, already: None }),
            }
        }
        None => match default_table(&mut tried) {
            Some(found) => found,
            None => return Err(LoadError { tried, already: None }),
        },
    };
    TABLE.store(table as *const aotrun_api as *mut aotrun_api, Ordering::Release);
    *source = Some(src);
    Ok(table)
}

#[cfg(feature = "link")]
fn default_table(tried: &mut Vec<String>) -> Option<(&'static aotrun_api, Source)> {
    let t = unsafe { crate::aotrun_get_api(AOTRUN_API_VERSION) };
    checked(t, "the linked libaotrun", tried).map(|t| (t, Source::Linked))
}

#[cfg(not(feature = "link"))]
fn default_table(tried: &mut Vec<String>) -> Option<(&'static aotrun_api, Source)> {
    if let Some(v) = std::env::var_os(DYLIB_PATH_VAR).filter(|v| !v.is_empty()) {
        let file = file_in(Path::new(&v));
        tried.push(format!("{DYLIB_PATH_VAR}={}:", Path::new(&v).display()));
        // An explicit setting that is wrong must not fall through to another library.
        return open(&file, tried).map(|t| (t, Source::Loaded(file)));
    }
    tried.push(format!("{DYLIB_PATH_VAR}: not set"));
    if let Some(t) = open(Path::new(LIBRARY_SONAME), tried) {
        return Some((t, Source::Loaded(PathBuf::from(LIBRARY_SONAME))));
    }
    match BUILD_LIB_DIR {
        Some(dir) => {
            let file = Path::new(dir).join(LIBRARY_SONAME);
            open(&file, tried).map(|t| (t, Source::Loaded(file)))
        }
        None => {
            tried.push("the build script's directory: none (it found no libaotrun.so)".to_string());
            None
        }
    }
}

/// `path` itself, or `path/libaotrun.so.1` when it is a directory.
fn file_in(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(LIBRARY_SONAME)
    } else {
        path.to_path_buf()
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;

fn last_dl_error() -> String {
    let e = unsafe { dlerror() };
    if e.is_null() {
        "unknown error".to_string()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

type GetApi = unsafe extern "C" fn(u32) -> *const aotrun_api;

/// dlopen + dlsym + aotrun_get_api. The handle is never closed: the table
/// and every object stay valid for the life of the process.
fn open(file: &Path, tried: &mut Vec<String>) -> Option<&'static aotrun_api> {
    use std::os::unix::ffi::OsStrExt;
    let what = file.display().to_string();
    let Ok(c) = CString::new(file.as_os_str().as_bytes()) else {
        tried.push(format!("{what}: path contains a NUL byte"));
        return None;
    };
    let handle = unsafe { dlopen(c.as_ptr(), RTLD_NOW | RTLD_LOCAL) };
    if handle.is_null() {
        tried.push(format!("{what}: {}", last_dl_error()));
        return None;
    }
    let sym = unsafe { dlsym(handle, c"aotrun_get_api".as_ptr()) };
    if sym.is_null() {
        tried.push(format!("{what}: no aotrun_get_api ({})", last_dl_error()));
        return None;
    }
    let get: GetApi = unsafe { std::mem::transmute::<*mut c_void, GetApi>(sym) };
    checked(unsafe { get(AOTRUN_API_VERSION) }, &what, tried)
}

/// Accepts a table of at least [`AOTRUN_API_VERSION`] whose slots are all set.
fn checked(t: *const aotrun_api, what: &str, tried: &mut Vec<String>) -> Option<&'static aotrun_api> {
    if t.is_null() {
        tried.push(format!(
            "{what}: aotrun_get_api({}.{}) returned NULL (the library is older than this crate's header)",
            AOTRUN_API_VERSION >> 16,
            (AOTRUN_API_VERSION >> 8) & 0xFF
        ));
        return None;
    }
    let table = unsafe { &*t };
    if table.version < AOTRUN_API_VERSION {
        tried.push(format!("{what}: table version {:#x} < {AOTRUN_API_VERSION:#x}", table.version));
        return None;
    }
    // The slots after the version field are function pointers.
    let slots = unsafe {
        std::slice::from_raw_parts((t as *const u8).add(std::mem::size_of::<*const ()>()) as *const *const (), SLOTS)
    };
    if let Some(i) = slots.iter().position(|s| s.is_null()) {
        tried.push(format!("{what}: function table slot {i} is NULL"));
        return None;
    }
    Some(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_the_slots_the_header_pins() {
        // version (padded to a pointer) + SLOTS function pointers.
        assert_eq!(std::mem::size_of::<aotrun_api>(), (SLOTS + 1) * std::mem::size_of::<*const ()>());
    }

    #[test]
    fn a_load_error_names_every_place_tried() {
        let mut tried = Vec::new();
        assert!(open(Path::new("/nonexistent/dir/libaotrun.so.1"), &mut tried).is_none());
        let e = LoadError { tried, already: None };
        let text = e.to_string();
        assert!(text.contains("/nonexistent/dir/libaotrun.so.1"), "{text}");
        assert!(text.contains(DYLIB_PATH_VAR), "{text}");
    }

    #[test]
    fn api_installs_one_table_for_the_process() {
        let a = api().expect("the library loads") as *const aotrun_api;
        let b = api_or_panic() as *const aotrun_api;
        assert_eq!(a, b);
        assert!(source().is_some());
        assert!(unsafe { (*a).version } >= AOTRUN_API_VERSION);
    }
}

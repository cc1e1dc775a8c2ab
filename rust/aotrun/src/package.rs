//! Packages: open, inspect, make runners.

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use aotrun_sys as sys;

use crate::dtype::{DataType, Device};
use crate::error::{check, Error, Result};
use crate::runner::{Mode, RunnerBuilder};

/// An opened model package (`aotrun_package`).
///
/// `Send + Sync`: every C function that reads a package is documented "any
/// thread", including `aotrun_runner_create`. Closing needs exclusive access,
/// which `Drop` has. Runners keep the package loaded, so a `Package` may be
/// dropped while its runners live on.
pub struct Package {
    raw: NonNull<sys::aotrun_package>,
}

unsafe impl Send for Package {}
unsafe impl Sync for Package {}

/// Options for [`Package::open_with`] (`aotrun_package_options`).
#[derive(Debug, Clone)]
pub struct OpenOptions {
    verify_hashes: bool,
    expected_sha256: Option<String>,
    allow_untrusted_files: bool,
    pt2_model: Option<String>,
    libtorch: Option<PathBuf>,
    provider: Option<String>,
    pt2_pad_batch: bool,
    pt2_above_compiled_max: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            verify_hashes: true,
            expected_sha256: None,
            allow_untrusted_files: false,
            pt2_model: None,
            libtorch: None,
            provider: None,
            pt2_pad_batch: false,
            pt2_above_compiled_max: false,
        }
    }
}

impl OpenOptions {
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Check each file's sha256 against the manifest before loading it
    /// (default true).
    pub fn verify_hashes(mut self, verify: bool) -> OpenOptions {
        self.verify_hashes = verify;
        self
    }

    /// Pins the package's identity: hex sha256 of the bare `.so`, or of
    /// `manifest.json` for a directory (which pins every file, verified
    /// whatever `verify_hashes` says). Checked before any package code is
    /// loaded; a mismatch is [`ErrorCode::Integrity`](crate::ErrorCode),
    /// a malformed digest InvalidArgument (at open).
    pub fn expected_sha256(mut self, sha256_hex: impl Into<String>) -> OpenOptions {
        self.expected_sha256 = Some(sha256_hex.into());
        self
    }

    /// Loading a package runs its code, so by default files (and the
    /// package directory) writable by group or others, or owned by another
    /// user than the caller or root, are refused with Integrity. `true`
    /// allows them.
    pub fn allow_untrusted_files(mut self, allow: bool) -> OpenOptions {
        self.allow_untrusted_files = allow;
        self
    }

    /// For a `.pt2` archive (PyTorch AOTInductor): which model of it to
    /// open (default `"model"`). A name the archive lacks is NotFound at
    /// open; an empty name or one with `/` is InvalidArgument.
    pub fn pt2_model(mut self, name: impl Into<String>) -> OpenOptions {
        self.pt2_model = Some(name.into());
        self
    }

    /// For a `.pt2` archive: `libtorch_cpu.so` or the directory holding it,
    /// or `"shim"` for aotrun's own shim (default: the `AOTRUN_LIBTORCH`
    /// environment variable). A path forces that libtorch unless
    /// [`provider`](Self::provider) is `"auto"`, which makes it the fallback.
    /// The first `.pt2` opened loads its provider for the life of the process.
    pub fn libtorch(mut self, path: impl Into<PathBuf>) -> OpenOptions {
        self.libtorch = Some(path.into());
        self
    }

    /// For a `.pt2` archive: which C shim provider runs it, `"auto"`,
    /// `"shim"` or `"libtorch"` (default: the `AOTRUN_PROVIDER` environment
    /// variable, else what [`libtorch`](Self::libtorch) implies, else auto:
    /// aotrun's shim when it implements every function the model imports,
    /// else the configured libtorch). Another word is InvalidArgument at
    /// open. See [`Package::provider`]. Since 1.3.
    pub fn provider(mut self, provider: impl Into<String>) -> OpenOptions {
        self.provider = Some(provider.into());
        self
    }

    /// For a `.pt2` archive: dim 0 of every input is a batch of independent
    /// rows (default false). A model exported with a dynamic batch is
    /// compiled for 2 rows and up whatever minimum the export declared;
    /// with this set, a request with fewer rows runs padded to the compiled
    /// minimum and the outputs keep the request's rows. Never for a model
    /// that mixes rows. A package whose inputs or outputs do not all have
    /// that batch in dim 0 is Unsupported at open. Since 1.3.
    pub fn pt2_pad_batch(mut self, pad: bool) -> OpenOptions {
        self.pt2_pad_batch = pad;
        self
    }

    /// For a `.pt2` archive: run sizes above a dynamic dim's compiled
    /// maximum (default false: InvalidArgument naming the input and the
    /// range). torch can narrow a size's range below what the export
    /// declared for decisions the compiled code does not depend on (a
    /// convolution's oneDNN choice caps a batch at 15 when the example batch
    /// is below 16); setting this states the model computes right above it.
    /// Lower bounds, tied dims and index checks still apply. Since 1.3.
    pub fn pt2_above_compiled_max(mut self, allow: bool) -> OpenOptions {
        self.pt2_above_compiled_max = allow;
        self
    }

    /// Opens `path` with these options.
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Package> {
        Package::open_with(path, self)
    }
}

/// Owns an `aotrun_package_options` for the duration of an open.
struct RawOpenOptions(*mut sys::aotrun_package_options);

impl Drop for RawOpenOptions {
    fn drop(&mut self) {
        unsafe { ffi!(package_options_free)(self.0) };
    }
}

pub(crate) fn path_cstring(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::invalid(format!("path {} contains a NUL byte", path.display())))
}

/// Copies a library-owned C string (NULL → "").
pub(crate) fn owned(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }
}

/// What [`Package::info`] reports (`aotrun_package_info`), copied out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackageInfo {
    pub name: String,
    pub path: PathBuf,
    /// `"aotrun-dir"` or `"aotrun-so"`.
    pub format: String,
    /// The package's ABI version as (major, minor).
    pub abi_version: (u32, u32),
    pub device: Device,
    pub num_inputs: usize,
    pub num_outputs: usize,
    pub num_constants: usize,
    pub constant_bytes: u64,
    pub num_symbols: usize,
    pub hashes_verified: bool,
    /// Load-phase timings in nanoseconds.
    pub open_ns: u64,
    pub verify_ns: u64,
    pub dlopen_ns: u64,
    pub weights_ns: u64,
    pub metadata_ns: u64,
}

/// An input or output of a package (`aotrun_tensor_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: DataType,
    /// -1 marks a dynamic dimension.
    pub shape: Vec<i64>,
    /// False when the package does not state this tensor's dtype and rank (a
    /// `.pt2` archive without input checks); `dtype` and `shape` are then
    /// meaningless.
    pub known: bool,
}

/// A package entry point the loader looked for (`aotrun_symbol_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolInfo {
    pub name: String,
    pub required: bool,
    pub found: bool,
    /// ABI version that introduced it, (major, minor).
    pub since: (u32, u32),
}

/// Which C shim provider serves a `.pt2` package, and why
/// ([`Package::provider`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// `"shim"` (aotrun's own) or `"libtorch"`.
    pub name: String,
    /// One sentence: what decided it.
    pub reason: String,
}

/// Which C shim provider opening a package would choose, asked before open
/// ([`Package::preview_provider`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderPreview {
    /// `"shim"` or `"libtorch"`; `None` when open would refuse for want of a
    /// provider, and for packages that call no C shim (aotrun's own).
    pub name: Option<String>,
    /// The library whose exports the model would bind to (aotrun's
    /// `libaotrun_shim.so.1`, or a `libtorch_cpu.so`); `None` when none.
    pub library: Option<PathBuf>,
    /// One sentence: why, or the refusal open would give ("" for packages
    /// that call no C shim).
    pub reason: String,
}

fn abi_pair(v: u32) -> (u32, u32) {
    (v >> 16, v & 0xFFFF)
}

impl Package {
    /// Opens the package at `path` (a package directory or a bare `.so`)
    /// with default options.
    ///
    /// Errors: NotFound, LoadFailed, AbiMismatch, MissingSymbol, Integrity,
    /// BadPackage, Package, InvalidArgument (path with a NUL byte).
    pub fn open(path: impl AsRef<Path>) -> Result<Package> {
        crate::error::loaded()?;
        let path = path_cstring(path.as_ref())?;
        Self::open_raw(&path, ptr::null())
    }

    /// Opens with `options`; errors as [`Package::open`].
    pub fn open_with(path: impl AsRef<Path>, options: &OpenOptions) -> Result<Package> {
        crate::error::loaded()?;
        let path = path_cstring(path.as_ref())?;
        let raw = raw_options(options)?;
        Self::open_raw(&path, raw.0)
    }

    /// Which C shim provider [`Package::open_with`]`(path, options)` would
    /// choose now, without opening the package: nothing is loaded or run (a
    /// `.pt2`'s model library is extracted and its imports read). For
    /// diagnosis before open, also of a package open refuses. A later open
    /// decides again, and differs if a provider is loaded in between.
    ///
    /// Errors: what [`Package::open`] gives for a path it cannot read as a
    /// package (NotFound, BadPackage, Unsupported), InvalidArgument (a bad
    /// provider setting). A provider open would refuse is an answer
    /// ([`ProviderPreview::name`] `None`, the refusal in `reason`). Since 1.3.
    pub fn preview_provider(path: impl AsRef<Path>, options: &OpenOptions) -> Result<ProviderPreview> {
        crate::error::loaded()?;
        let path = path_cstring(path.as_ref())?;
        let raw = raw_options(options)?;
        let mut name: *const c_char = ptr::null();
        let mut library: *const c_char = ptr::null();
        let mut reason: *const c_char = ptr::null();
        check(unsafe { ffi!(package_preview_provider)(path.as_ptr(), raw.0, &mut name, &mut library, &mut reason) })?;
        // Copied before `raw` (which owns the strings) is freed.
        let (name, library, reason) = (owned(name), owned(library), owned(reason));
        Ok(ProviderPreview {
            name: if name.is_empty() { None } else { Some(name) },
            library: if library.is_empty() { None } else { Some(PathBuf::from(library)) },
            reason,
        })
    }
}

// The C options object for `options`; freed when the returned value drops.
fn raw_options(options: &OpenOptions) -> Result<RawOpenOptions> {
    let mut raw = ptr::null_mut();
    check(unsafe { ffi!(package_options_create)(&mut raw) })?;
    let raw = RawOpenOptions(raw);
    check(unsafe { ffi!(package_options_set_verify_hashes)(raw.0, options.verify_hashes as i32) })?;
    if let Some(pin) = &options.expected_sha256 {
        let pin = CString::new(pin.as_str()).map_err(|_| Error::invalid("expected_sha256 contains a NUL byte"))?;
        check(unsafe { ffi!(package_options_set_expected_sha256)(raw.0, pin.as_ptr()) })?;
    }
    if options.allow_untrusted_files {
        check(unsafe { ffi!(package_options_set_allow_untrusted_files)(raw.0, 1) })?;
    }
    if let Some(model) = &options.pt2_model {
        let model = CString::new(model.as_str()).map_err(|_| Error::invalid("pt2_model contains a NUL byte"))?;
        check(unsafe { ffi!(package_options_set_pt2_model)(raw.0, model.as_ptr()) })?;
    }
    if let Some(lib) = &options.libtorch {
        let lib = path_cstring(lib)?;
        check(unsafe { ffi!(package_options_set_libtorch)(raw.0, lib.as_ptr()) })?;
    }
    if let Some(provider) = &options.provider {
        let provider = CString::new(provider.as_str()).map_err(|_| Error::invalid("provider contains a NUL byte"))?;
        check(unsafe { ffi!(package_options_set_provider)(raw.0, provider.as_ptr()) })?;
    }
    if options.pt2_above_compiled_max {
        check(unsafe { ffi!(package_options_set_pt2_above_compiled_max)(raw.0, 1) })?;
    }
    if options.pt2_pad_batch {
        check(unsafe { ffi!(package_options_set_pt2_pad_batch)(raw.0, 1) })?;
    }
    Ok(raw)
}

impl Package {
    fn open_raw(path: &CStr, options: *const sys::aotrun_package_options) -> Result<Package> {
        let mut out = ptr::null_mut();
        check(unsafe { ffi!(package_open)(path.as_ptr(), options, &mut out) })?;
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(crate::ErrorCode::Internal, "aotrun_package_open succeeded without a package"))?;
        Ok(Package { raw })
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::aotrun_package {
        self.raw.as_ptr()
    }

    /// Name, path, format, ABI version, device, counts and load timings.
    pub fn info(&self) -> Result<PackageInfo> {
        let mut i: sys::aotrun_package_info = unsafe { std::mem::zeroed() };
        i.struct_size = std::mem::size_of::<sys::aotrun_package_info>();
        check(unsafe { ffi!(package_get_info)(self.as_ptr(), &mut i) })?;
        Ok(PackageInfo {
            name: owned(i.name),
            path: PathBuf::from(owned(i.path)),
            format: owned(i.format),
            abi_version: abi_pair(i.abi_version),
            device: Device::from_raw(i.device),
            num_inputs: i.num_inputs,
            num_outputs: i.num_outputs,
            num_constants: i.num_constants,
            constant_bytes: i.constant_bytes,
            num_symbols: i.num_symbols,
            hashes_verified: i.hashes_verified != 0,
            open_ns: i.open_ns,
            verify_ns: i.verify_ns,
            dlopen_ns: i.dlopen_ns,
            weights_ns: i.weights_ns,
            metadata_ns: i.metadata_ns,
        })
    }

    /// The package's name (manifest name, or the file name without extension).
    pub fn name(&self) -> Result<String> {
        self.info().map(|i| i.name)
    }

    /// Input `index`. Errors: InvalidArgument (out of range).
    pub fn input(&self, index: usize) -> Result<TensorInfo> {
        self.tensor_info(index, ffi!(package_get_input))
    }

    /// Output `index`. Errors: InvalidArgument (out of range).
    pub fn output(&self, index: usize) -> Result<TensorInfo> {
        self.tensor_info(index, ffi!(package_get_output))
    }

    pub fn inputs(&self) -> Result<Vec<TensorInfo>> {
        (0..self.info()?.num_inputs).map(|i| self.input(i)).collect()
    }

    pub fn outputs(&self) -> Result<Vec<TensorInfo>> {
        (0..self.info()?.num_outputs).map(|i| self.output(i)).collect()
    }

    fn tensor_info(
        &self,
        index: usize,
        f: unsafe extern "C" fn(
            *const sys::aotrun_package,
            usize,
            *mut sys::aotrun_tensor_info,
        ) -> *mut sys::aotrun_status,
    ) -> Result<TensorInfo> {
        let mut t: sys::aotrun_tensor_info = unsafe { std::mem::zeroed() };
        t.struct_size = std::mem::size_of::<sys::aotrun_tensor_info>();
        check(unsafe { f(self.as_ptr(), index, &mut t) })?;
        let shape = if t.ndim > 0 && !t.shape.is_null() {
            unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }.to_vec()
        } else {
            Vec::new()
        };
        Ok(TensorInfo { name: owned(t.name), dtype: DataType::from_raw(t.dtype), shape, known: t.ndim >= 0 })
    }

    /// The entry points the loader looked for, found or not.
    pub fn symbols(&self) -> Result<Vec<SymbolInfo>> {
        (0..self.info()?.num_symbols)
            .map(|i| {
                let mut s: sys::aotrun_symbol_info = unsafe { std::mem::zeroed() };
                s.struct_size = std::mem::size_of::<sys::aotrun_symbol_info>();
                check(unsafe { ffi!(package_get_symbol)(self.as_ptr(), i, &mut s) })?;
                Ok(SymbolInfo {
                    name: owned(s.name),
                    required: s.required != 0,
                    found: s.found != 0,
                    since: abi_pair(s.since),
                })
            })
            .collect()
    }

    /// `Ok(())` if `mode` runs natively with this package; otherwise the
    /// library's sentence saying why it would fall back.
    pub fn mode_available(&self, mode: Mode) -> std::result::Result<(), String> {
        let mut reason: *const c_char = ptr::null();
        let ok = unsafe { ffi!(package_mode_available)(self.as_ptr(), mode.to_raw(), &mut reason) };
        if ok != 0 {
            Ok(())
        } else {
            Err(owned(reason))
        }
    }

    /// Which C shim provider serves this package and why; `None` for a
    /// package that calls none (aotrun's own packages). Since 1.3.
    pub fn provider(&self) -> Result<Option<Provider>> {
        let mut name: *const c_char = ptr::null();
        let mut reason: *const c_char = ptr::null();
        check(unsafe { ffi!(package_get_provider)(self.as_ptr(), &mut name, &mut reason) })?;
        let name = owned(name);
        Ok(if name.is_empty() { None } else { Some(Provider { name, reason: owned(reason) }) })
    }

    /// The model's own name for input `index`: a `.pt2`'s keyword argument
    /// as its archive's call signature records it (`"input_ids"`, nested as
    /// `"extra.mask"`), else the input's [`TensorInfo::name`] (aotrun
    /// packages; positional arguments, whose names torch does not record).
    /// Errors: InvalidArgument (out of range). Since 1.3.
    pub fn input_model_name(&self, index: usize) -> Result<String> {
        let mut name: *const c_char = ptr::null();
        check(unsafe { ffi!(package_get_input_model_name)(self.as_ptr(), index, &mut name) })?;
        Ok(owned(name))
    }

    /// The model's own name for output `index`: a `.pt2`'s output key
    /// (`"last_hidden_state"`, `"logits"`), else the output's
    /// [`TensorInfo::name`] (a plain tensor or tuple output). Errors:
    /// InvalidArgument (out of range). Since 1.3.
    pub fn output_model_name(&self, index: usize) -> Result<String> {
        let mut name: *const c_char = ptr::null();
        check(unsafe { ffi!(package_get_output_model_name)(self.as_ptr(), index, &mut name) })?;
        Ok(owned(name))
    }

    /// Starts building a runner (mode, number of model instances, ...).
    pub fn runner(&self) -> RunnerBuilder<'_> {
        RunnerBuilder::new(self)
    }
}

impl Drop for Package {
    fn drop(&mut self) {
        unsafe { ffi!(package_close)(self.raw.as_ptr()) };
    }
}

impl std::fmt::Debug for Package {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.info() {
            Ok(i) => write!(f, "Package({} from {})", i.name, i.path.display()),
            Err(_) => write!(f, "Package({:p})", self.raw),
        }
    }
}

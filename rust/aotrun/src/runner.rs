//! Runners: a container of a package's model instances run in one mode.
//!
//! # Thread safety, and why there are two runner types
//!
//! The C API (`aotrun_runner_run`) says: in threaded mode any thread may run
//! concurrently (up to `num_models` at once, the others wait for a free
//! instance); in single_threaded and graph modes any thread may run, and the
//! runner serialises the calls.
//!
//! * [`ThreadedRunner`] is `Send + Sync` and runs through `&self`: share it
//!   (by reference, or in an `Arc`) between threads — that is what the mode
//!   is for.
//! * [`SerialRunner`] (single_threaded and graph modes) is `Send` but not
//!   `Sync`, and runs through `&mut self`. Sharing one would be memory-safe
//!   (the C runner serialises), but it would only ever queue threads behind
//!   one lock and one model instance; in Rust that exclusivity is stated in
//!   the type instead, so a program that wants parallelism is pushed to a
//!   threaded runner (or one serial runner per thread) at compile time.
//!   Moving it to another thread is fine: the C API allows any thread.
//!
//! ```compile_fail,E0277
//! # fn serve(package: &aotrun::Package) -> aotrun::Result<()> {
//! let runner = package.runner().single_threaded()?;
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         // error: `SerialRunner` cannot be shared between threads safely
//!         s.spawn(|| runner.stats());
//!     }
//! });
//! # Ok(()) }
//! ```
//!
//! The same program with a threaded runner compiles:
//!
//! ```no_run
//! # fn serve(package: &aotrun::Package) -> aotrun::Result<()> {
//! let runner = package.runner().threaded()?;
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| runner.stats());
//!     }
//! });
//! # Ok(()) }
//! ```
//!
//! Destroying a runner must not overlap other calls on it; `Drop` takes it by
//! value, so the borrow checker guarantees that.
//!
//! Asynchronous runs (`aotrun_runner_run_async`, bounded by `max_inflight`)
//! happen inside a scope, [`ThreadedRunner::scope`] / [`SerialRunner::scope`],
//! which keeps the tensors borrowed and waits for its runs when it ends (see
//! [`crate::scope`]). Runs on a caller's stream and captures of them are in
//! [`crate::stream`].

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use aotrun_sys as sys;

use crate::constants::{state_of, ConstantsControl, ConstantsState};
use crate::dtype::Device;
use crate::error::{check, Error, ErrorCode, Result};
use crate::future::{RunFuture, SlotWaiters};
use crate::owned::{Shape, Tensor};
use crate::package::{owned, Package};
use crate::scope::{run_scope, Scope};
use crate::stream::Stream;
use crate::tensor::{OwnedTensor, TensorMut, TensorRef};

/// How a runner executes the package.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// The package's thread-safe `run`; concurrent callers share N instances.
    Threaded,
    /// The package's `run_single_threaded` (no locks, no events); falls back
    /// to `run` with a warning for packages older than ABI 1.1.
    SingleThreaded,
    /// Captured per input shape and replayed.
    Graph,
    /// A mode this crate does not know (from a newer library).
    Unknown(u32),
}

impl Mode {
    pub fn to_raw(self) -> sys::aotrun_mode {
        match self {
            Mode::Threaded => sys::AOTRUN_MODE_THREADED,
            Mode::SingleThreaded => sys::AOTRUN_MODE_SINGLE_THREADED,
            Mode::Graph => sys::AOTRUN_MODE_GRAPH,
            Mode::Unknown(n) => n,
        }
    }

    pub fn from_raw(m: sys::aotrun_mode) -> Mode {
        match m {
            sys::AOTRUN_MODE_THREADED => Mode::Threaded,
            sys::AOTRUN_MODE_SINGLE_THREADED => Mode::SingleThreaded,
            sys::AOTRUN_MODE_GRAPH => Mode::Graph,
            n => Mode::Unknown(n),
        }
    }

    /// `"threaded"`, `"single_threaded"`, `"graph"` (as the C API names them).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Threaded => "threaded",
            Mode::SingleThreaded => "single_threaded",
            Mode::Graph => "graph",
            Mode::Unknown(_) => "unknown",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Counters of a runner (`aotrun_runner_stats`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunnerStats {
    pub requested_mode: Mode,
    pub effective_mode: Mode,
    pub num_models: i32,
    pub max_inflight: i32,
    /// Empty when the requested mode runs natively.
    pub fallback_reason: String,
    /// Completed successfully.
    pub runs: u64,
    /// Failed in the package (argument errors are not counted).
    pub failures: u64,
    /// Executed through a fallback entry point.
    pub fallback_runs: u64,
    /// Graph mode: captures, replays, eager warm-ups before a capture.
    pub graph_captures: u64,
    pub graph_replays: u64,
    pub graph_warmups: u64,
    pub graph_capture_ns: u64,
    /// Static buffers plus memory held by graphs.
    pub graph_pool_bytes: u64,
    pub graphs_cached: u64,
    /// Eager runs in graph mode, by reason: cache limit reached, frozen and
    /// shape not captured, this shape's capture failed, caller capturing.
    pub eager_cache_full: u64,
    pub eager_frozen: u64,
    pub eager_capture_failed: u64,
    pub eager_caller_capturing: u64,
    /// Asynchronous runs ([`ThreadedRunner::scope`], [`SerialRunner::scope`]):
    /// queued or executing now, most at once, submitted, completed
    /// successfully, failed, time submitters waited for a slot (ns), and
    /// `try_run_async` calls refused.
    pub inflight: u64,
    pub peak_inflight: u64,
    pub async_submitted: u64,
    pub async_completed: u64,
    pub async_failed: u64,
    pub submit_blocked_ns: u64,
    pub would_block: u64,
}

/// Configures and creates a runner; from [`Package::runner`].
///
/// ```no_run
/// # fn f() -> aotrun::Result<()> {
/// let package = aotrun::Package::open("packages/mlp")?;
/// let shared = package.runner().num_models(4).threaded()?;
/// let mut serial = package.runner().strict(true).single_threaded()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RunnerBuilder<'p> {
    package: &'p Package,
    num_models: Option<i32>,
    strict: bool,
    device: Option<Device>,
    graph_warmup_runs: Option<i32>,
    graph_cache_limit: Option<i32>,
    graph_frozen: bool,
    capture_shapes: Vec<Vec<Vec<i64>>>,
    max_inflight: Option<i32>,
}

/// Owns an `aotrun_runner_options` while a runner is created.
struct RawOptions(*mut sys::aotrun_runner_options);

impl Drop for RawOptions {
    fn drop(&mut self) {
        unsafe { ffi!(runner_options_free)(self.0) };
    }
}

impl<'p> RunnerBuilder<'p> {
    pub(crate) fn new(package: &'p Package) -> Self {
        RunnerBuilder {
            package,
            num_models: None,
            strict: false,
            device: None,
            graph_warmup_runs: None,
            graph_cache_limit: None,
            graph_frozen: false,
            capture_shapes: Vec::new(),
            max_inflight: None,
        }
    }

    /// Model instances in the container, 1..=1024 (default 1). Concurrency
    /// of a threaded runner; serial modes use one.
    pub fn num_models(mut self, n: i32) -> Self {
        self.num_models = Some(n);
        self
    }

    /// `true`: a mode the package cannot run natively fails with
    /// [`ErrorCode::Unsupported`] instead of falling back with a warning.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Device to run on (default: the package's).
    pub fn device(mut self, device: Device) -> Self {
        self.device = Some(device);
        self
    }

    /// Graph mode: eager runs of each new input-shape set before it is
    /// captured (default 1, 0..=1000).
    pub fn graph_warmup_runs(mut self, runs: i32) -> Self {
        self.graph_warmup_runs = Some(runs);
        self
    }

    /// Graph mode: most input-shape sets kept captured (default 16,
    /// 1..=4096); further shapes run eagerly (`stats().eager_cache_full`).
    pub fn graph_cache_limit(mut self, limit: i32) -> Self {
        self.graph_cache_limit = Some(limit);
        self
    }

    /// Graph mode, for production: capture only the shape sets given with
    /// [`capture_shapes`](Self::capture_shapes), at creation; never later.
    pub fn graph_frozen(mut self, frozen: bool) -> Self {
        self.graph_frozen = frozen;
        self
    }

    /// Graph mode: one input-shape set (a shape per input) to warm up and
    /// capture when the runner is created. Call once per set.
    pub fn capture_shapes(mut self, shapes: &[&[i64]]) -> Self {
        self.capture_shapes.push(shapes.iter().map(|s| s.to_vec()).collect());
        self
    }

    /// Asynchronous runs: most runs queued or executing at once, 1..=65536
    /// (default 2 x `num_models` on CPU). A full window blocks
    /// [`Scope::run_async`], fails [`Scope::try_run_async`] with
    /// [`ErrorCode::WouldBlock`].
    pub fn max_inflight(mut self, n: i32) -> Self {
        self.max_inflight = Some(n);
        self
    }

    /// A runner in threaded mode, shareable across threads.
    pub fn threaded(&self) -> Result<ThreadedRunner> {
        Ok(ThreadedRunner { inner: Arc::new(self.build(Mode::Threaded)?) })
    }

    /// A runner in single_threaded mode (`&mut self` runs).
    pub fn single_threaded(&self) -> Result<SerialRunner> {
        self.serial(Mode::SingleThreaded)
    }

    /// A runner in graph mode (`&mut self` runs).
    pub fn graph(&self) -> Result<SerialRunner> {
        self.serial(Mode::Graph)
    }

    /// A threaded runner and the one [`ConstantsControl`] that updates its
    /// constants while it serves (see [`crate::constants`] for why the right
    /// to update is a separate value).
    pub fn threaded_with_constants(&self) -> Result<(ThreadedRunner, ConstantsControl)> {
        let runner = self.threaded()?;
        let control = ConstantsControl::new(runner.inner.clone());
        Ok((runner, control))
    }

    /// A single_threaded runner and its [`ConstantsControl`]; see
    /// [`threaded_with_constants`](Self::threaded_with_constants).
    pub fn single_threaded_with_constants(&self) -> Result<(SerialRunner, ConstantsControl)> {
        self.serial_with_constants(Mode::SingleThreaded)
    }

    /// A graph-mode runner and its [`ConstantsControl`]; each constant set
    /// captures its own graphs (aotrun.h).
    pub fn graph_with_constants(&self) -> Result<(SerialRunner, ConstantsControl)> {
        self.serial_with_constants(Mode::Graph)
    }

    fn serial(&self, mode: Mode) -> Result<SerialRunner> {
        Ok(SerialRunner { inner: Arc::new(self.build(mode)?), _not_sync: PhantomData })
    }

    fn serial_with_constants(&self, mode: Mode) -> Result<(SerialRunner, ConstantsControl)> {
        let runner = self.serial(mode)?;
        let control = ConstantsControl::new(runner.inner.clone());
        Ok((runner, control))
    }

    fn build(&self, mode: Mode) -> Result<RawRunner> {
        let mut opts = ptr::null_mut();
        check(unsafe { ffi!(runner_options_create)(&mut opts) })?;
        let opts = RawOptions(opts);
        check(unsafe { ffi!(runner_options_set_mode)(opts.0, mode.to_raw()) })?;
        if let Some(n) = self.num_models {
            check(unsafe { ffi!(runner_options_set_num_models)(opts.0, n) })?;
        }
        check(unsafe { ffi!(runner_options_set_strict)(opts.0, self.strict as i32) })?;
        if let Some(d) = self.device {
            check(unsafe { ffi!(runner_options_set_device)(opts.0, d.to_raw()) })?;
        }
        if let Some(n) = self.graph_warmup_runs {
            check(unsafe { ffi!(runner_options_set_graph_warmup_runs)(opts.0, n) })?;
        }
        if let Some(n) = self.graph_cache_limit {
            check(unsafe { ffi!(runner_options_set_graph_cache_limit)(opts.0, n) })?;
        }
        if self.graph_frozen {
            check(unsafe { ffi!(runner_options_set_graph_frozen)(opts.0, 1) })?;
        }
        if let Some(n) = self.max_inflight {
            check(unsafe { ffi!(runner_options_set_max_inflight)(opts.0, n) })?;
        }
        for set in &self.capture_shapes {
            let ndims = set
                .iter()
                .map(|s| i32::try_from(s.len()).map_err(|_| Error::invalid("capture shape rank too large")))
                .collect::<Result<Vec<i32>>>()?;
            let dims: Vec<i64> = set.concat();
            check(unsafe {
                ffi!(runner_options_add_capture_shapes)(opts.0, ndims.as_ptr(), ndims.len(), dims.as_ptr())
            })?;
        }
        // Output ranks, for output_shapes(); read once, not per call.
        let output_ndims = self.package.outputs()?.iter().map(|o| o.shape.len()).collect();
        let mut out = ptr::null_mut();
        check(unsafe { ffi!(runner_create)(self.package.as_ptr(), opts.0, &mut out) })?;
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "aotrun_runner_create succeeded without a runner"))?;
        let mut runner = RawRunner { raw, output_ndims, waiters: Arc::new(SlotWaiters::new(usize::MAX)) };
        let window = usize::try_from(runner.stats()?.max_inflight).unwrap_or(1).max(1);
        runner.waiters = Arc::new(SlotWaiters::new(window));
        Ok(runner)
    }
}

/// The runner handle and what the safe types share.
pub(crate) struct RawRunner {
    raw: NonNull<sys::aotrun_runner>,
    output_ndims: Box<[usize]>,
    /// Owned runs ([`RunFuture`]) in flight and futures waiting for a slot.
    pub(crate) waiters: Arc<SlotWaiters>,
}

// Shared through an Arc by ThreadedRunner (any thread, concurrently), its
// RunFutures (which only submit runs: any thread) and a ConstantsControl
// (update, swap, free: any thread, concurrently with runs). A SerialRunner
// shares it only with its ConstantsControl. Destroyed by the last owner, so
// no call overlaps the destroy.
unsafe impl Send for RawRunner {}
unsafe impl Sync for RawRunner {}

impl RawRunner {
    #[inline(always)]
    fn run(&self, inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) -> Result<()> {
        // Views are repr(transparent) DLTensors: the slices are the arrays.
        check(unsafe {
            ffi!(runner_run)(
                self.raw.as_ptr(),
                inputs.as_ptr() as *const sys::DLTensor,
                inputs.len(),
                outputs.as_mut_ptr() as *mut sys::DLTensor,
                outputs.len(),
            )
        })
    }

    fn run_alloc(&self, inputs: &[TensorRef<'_>]) -> Result<Vec<OwnedTensor>> {
        let n = self.output_ndims.len();
        let mut raw: Vec<*mut sys::DLManagedTensor> = vec![ptr::null_mut(); n];
        check(unsafe {
            ffi!(runner_run_alloc)(
                self.raw.as_ptr(),
                inputs.as_ptr() as *const sys::DLTensor,
                inputs.len(),
                raw.as_mut_ptr(),
                n,
            )
        })?;
        // Wrap every pointer first, so all are released even if one is NULL.
        let owned: Vec<Option<OwnedTensor>> =
            raw.into_iter().map(|p| NonNull::new(p).map(|p| unsafe { OwnedTensor::from_raw(p) })).collect();
        if let Some(i) = owned.iter().position(Option::is_none) {
            return Err(Error::new(ErrorCode::Internal, format!("aotrun_runner_run_alloc left output {i} NULL")));
        }
        Ok(owned.into_iter().flatten().collect())
    }

    fn run_f32(&self, input: &[f32], shape: Shape) -> Result<Tensor> {
        let dims = shape.checked()?;
        let inputs = [TensorRef::new(input, &dims)?];
        if self.output_ndims.len() != 1 {
            return Err(Error::invalid(format!("run_f32: the package has {} outputs, not 1", self.output_ndims.len())));
        }
        let out_shape = self.output_shapes(&inputs)?.remove(0);
        let mut y = Tensor::zeros::<f32>(out_shape)?;
        self.run(&inputs, &mut [y.view_mut()])?;
        Ok(y)
    }

    fn output_shapes(&self, inputs: &[TensorRef<'_>]) -> Result<Vec<Vec<i64>>> {
        let total: usize = self.output_ndims.iter().sum();
        let mut flat = vec![0i64; total];
        check(unsafe {
            ffi!(runner_get_output_shapes)(
                self.raw.as_ptr(),
                inputs.as_ptr() as *const sys::DLTensor,
                inputs.len(),
                flat.as_mut_ptr(),
                total,
            )
        })?;
        let mut rest = &flat[..];
        Ok(self
            .output_ndims
            .iter()
            .map(|&nd| {
                let (head, tail) = rest.split_at(nd);
                rest = tail;
                head.to_vec()
            })
            .collect())
    }

    fn mode(&self) -> Mode {
        Mode::from_raw(unsafe { ffi!(runner_mode)(self.raw.as_ptr()) })
    }

    fn stats(&self) -> Result<RunnerStats> {
        let mut s: sys::aotrun_runner_stats = unsafe { std::mem::zeroed() };
        s.struct_size = std::mem::size_of::<sys::aotrun_runner_stats>();
        check(unsafe { ffi!(runner_get_stats)(self.raw.as_ptr(), &mut s) })?;
        Ok(RunnerStats {
            requested_mode: Mode::from_raw(s.requested_mode),
            effective_mode: Mode::from_raw(s.effective_mode),
            num_models: s.num_models,
            max_inflight: s.max_inflight,
            fallback_reason: owned(s.fallback_reason),
            runs: s.runs,
            failures: s.failures,
            fallback_runs: s.fallback_runs,
            graph_captures: s.graph_captures,
            graph_replays: s.graph_replays,
            graph_warmups: s.graph_warmups,
            graph_capture_ns: s.graph_capture_ns,
            graph_pool_bytes: s.graph_pool_bytes,
            graphs_cached: s.graphs_cached,
            eager_cache_full: s.eager_cache_full,
            eager_frozen: s.eager_frozen,
            eager_capture_failed: s.eager_capture_failed,
            eager_caller_capturing: s.eager_caller_capturing,
            inflight: s.inflight,
            peak_inflight: s.peak_inflight,
            async_submitted: s.async_submitted,
            async_completed: s.async_completed,
            async_failed: s.async_failed,
            submit_blocked_ns: s.submit_blocked_ns,
            would_block: s.would_block,
        })
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::aotrun_runner {
        self.raw.as_ptr()
    }
}

impl Drop for RawRunner {
    fn drop(&mut self) {
        // Synchronous runs have all completed: each one returned; every
        // scope waited for its asynchronous runs before releasing the borrow.
        unsafe { ffi!(runner_destroy)(self.raw.as_ptr()) };
    }
}

/// A runner in threaded mode: `Send + Sync`, runs through `&self` from any
/// number of threads at once (C: "any thread, concurrently").
pub struct ThreadedRunner {
    inner: Arc<RawRunner>,
}

// aotrun.h: threaded mode `run` — any thread, concurrently; mode, stats and
// output shapes — any thread.
unsafe impl Send for ThreadedRunner {}
unsafe impl Sync for ThreadedRunner {}

/// A runner in single_threaded or graph mode: `Send`, not `Sync`; runs
/// through `&mut self`. See the [module docs](self) for why.
pub struct SerialRunner {
    // An Arc only so that its ConstantsControl can keep the C runner alive.
    inner: Arc<RawRunner>,
    _not_sync: PhantomData<Cell<()>>,
}

// aotrun.h: single_threaded/graph `run` — any thread (serialised). Moving the
// runner between threads is allowed; sharing is ruled out by the type.
unsafe impl Send for SerialRunner {}

macro_rules! common_runner_methods {
    () => {
        /// Output shapes for `inputs` (only their dtype and shape are read),
        /// one `Vec` per output. Errors: InvalidArgument, Package.
        pub fn output_shapes(&self, inputs: &[TensorRef<'_>]) -> Result<Vec<Vec<i64>>> {
            self.inner.output_shapes(inputs)
        }

        /// The mode the runner actually uses, after any fallback.
        pub fn mode(&self) -> Mode {
            self.inner.mode()
        }

        /// Snapshot of the counters, including why a fallback happened.
        pub fn stats(&self) -> Result<RunnerStats> {
            self.inner.stats()
        }

        /// Which constant sets the runner has (updated through its
        /// [`ConstantsControl`]); never waits.
        pub fn constants_state(&self) -> Result<ConstantsState> {
            state_of(&self.inner)
        }

        /// The C handle, for calls this crate does not wrap. It stays owned by
        /// `self`; never destroy it.
        pub fn as_raw(&self) -> *mut sys::aotrun_runner {
            self.inner.as_ptr()
        }

        pub(crate) fn raw_nonnull(&self) -> NonNull<sys::aotrun_runner> {
            self.inner.raw
        }

        /// The package's input shapes with every dynamic dimension (-1) set
        /// to `batch`, as `usize` (e.g. `[batch, 256]`).
        pub fn input_dims(&self, package: &Package, batch: usize) -> Result<Vec<Vec<usize>>> {
            Ok(package
                .inputs()?
                .iter()
                .map(|i| i.shape.iter().map(|&d| if d < 0 { batch } else { d as usize }).collect())
                .collect())
        }
    };
}

impl ThreadedRunner {
    /// Runs synchronously: when it returns, `outputs` hold the results.
    /// Outputs must have the shapes [`output_shapes`](Self::output_shapes)
    /// reports.
    ///
    /// Errors: InvalidArgument (count, dtype, rank, shape, device),
    /// Package (the model failed; the runner stays usable), Device.
    #[inline]
    pub fn run(&self, inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) -> Result<()> {
        self.inner.run(inputs, outputs)
    }

    /// Runs with outputs allocated by aotrun on the runner's device (host
    /// memory on the CPU; device memory on CUDA, since 1.3: read it with
    /// CUDA, [`OwnedTensor::as_slice`] refuses it). Errors as
    /// [`run`](Self::run), plus OutOfMemory.
    pub fn run_alloc(&self, inputs: &[TensorRef<'_>]) -> Result<Vec<OwnedTensor>> {
        self.inner.run_alloc(inputs)
    }

    /// The common case in one call: a package with one float32 input and one
    /// float32 output. `shape` is the input's shape (`[1, 256]`, usize);
    /// the output is allocated with the shape the runner reports.
    ///
    /// ```no_run
    /// # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
    /// let y = runner.run_f32(&[0.5; 256], [1, 256])?;
    /// println!("{:?} {:?}", y.shape(), &y.as_slice::<f32>()?[..4]);
    /// # Ok(()) }
    /// ```
    pub fn run_f32(&self, input: &[f32], shape: impl Into<Shape>) -> Result<Tensor> {
        self.inner.run_f32(input, shape.into())
    }

    /// An asynchronous run that owns its buffers and completes as a
    /// [`Future`](std::future::Future) (std only: works with tokio or
    /// [`block_on`](crate::block_on)). Submitted when first polled; the
    /// buffers come back when it completes, also on failure. See
    /// [`crate::future`] for the window and for dropping it early.
    pub fn run_owned(&self, inputs: Vec<Tensor>, outputs: Vec<Tensor>) -> RunFuture {
        RunFuture::new(self.inner.clone(), inputs, outputs)
    }

    /// Runs `f` with a [`Scope`] for asynchronous runs and returns what it
    /// returns, after every run started in the scope has completed (also
    /// when `f` panics, and for forgotten events). Tensors given to a run
    /// stay borrowed until then.
    ///
    /// `&self`: several threads may each hold a scope of one runner, and run
    /// synchronously meanwhile; a scope waits for its own runs only. All
    /// scopes share the runner's in-flight window (`max_inflight`).
    ///
    /// ```no_run
    /// # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
    /// use aotrun::{TensorMut, TensorRef};
    /// let shape = [1i64, 4];
    /// let xs = vec![vec![0.5f32; 4]; 8];
    /// let mut ys = vec![vec![0.0f32; 4]; 8];
    /// runner.scope(|s| {
    ///     let events = xs
    ///         .iter()
    ///         .zip(ys.iter_mut())
    ///         .map(|(x, y)| s.run_async(&[TensorRef::new(x, &shape)?], [TensorMut::new(y, &shape)?]))
    ///         .collect::<aotrun::Result<Vec<_>>>()?;
    ///     events.iter().try_for_each(|e| e.wait())
    /// })?;
    /// // every ys[i] holds its result here
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, F, T>(&'env self, f: F) -> T
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
    {
        run_scope(self.inner.raw, f)
    }

    /// Runs on the caller's inline `stream` (synchronous, like
    /// [`run`](Self::run)); the package's work is launched on that stream.
    /// Errors as `run`; CaptureUnsupported if the stream was left capturing.
    pub fn run_on_stream(
        &self,
        stream: &mut Stream,
        inputs: &[TensorRef<'_>],
        outputs: &mut [TensorMut<'_>],
    ) -> Result<()> {
        stream.run_on(self.inner.raw, inputs, outputs)
    }

    common_runner_methods!();
}

impl SerialRunner {
    /// Runs synchronously; see [`ThreadedRunner::run`]. `&mut self`: one
    /// call at a time, checked at compile time.
    #[inline]
    pub fn run(&mut self, inputs: &[TensorRef<'_>], outputs: &mut [TensorMut<'_>]) -> Result<()> {
        self.inner.run(inputs, outputs)
    }

    /// Runs with outputs allocated by aotrun; see [`ThreadedRunner::run_alloc`].
    pub fn run_alloc(&mut self, inputs: &[TensorRef<'_>]) -> Result<Vec<OwnedTensor>> {
        self.inner.run_alloc(inputs)
    }

    /// One float32 input, one float32 output; see [`ThreadedRunner::run_f32`].
    pub fn run_f32(&mut self, input: &[f32], shape: impl Into<Shape>) -> Result<Tensor> {
        self.inner.run_f32(input, shape.into())
    }

    /// Asynchronous runs in a [`Scope`]; see [`ThreadedRunner::scope`].
    /// `&mut self`: no synchronous run overlaps the scope. The runner
    /// executes its asynchronous runs one at a time, in order, on one worker.
    pub fn scope<'env, F, T>(&'env mut self, f: F) -> T
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
    {
        run_scope(self.inner.raw, f)
    }

    /// Runs on the caller's inline `stream`; see
    /// [`ThreadedRunner::run_on_stream`].
    pub fn run_on_stream(
        &mut self,
        stream: &mut Stream,
        inputs: &[TensorRef<'_>],
        outputs: &mut [TensorMut<'_>],
    ) -> Result<()> {
        stream.run_on(self.inner.raw, inputs, outputs)
    }

    /// Graph mode: drops every captured graph and its buffers; later runs
    /// warm up and capture again. No-op in single_threaded mode.
    pub fn evict_graphs(&mut self) -> Result<()> {
        check(unsafe { ffi!(runner_evict_graphs)(self.inner.as_ptr()) })
    }

    /// Graph mode: from now on nothing is captured; shapes without a graph
    /// run eagerly (`stats().eager_frozen`). No-op in single_threaded mode.
    pub fn freeze_graphs(&mut self) -> Result<()> {
        check(unsafe { ffi!(runner_freeze_graphs)(self.inner.as_ptr()) })
    }

    common_runner_methods!();
}

impl std::fmt::Debug for ThreadedRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ThreadedRunner({})", self.mode())
    }
}

impl std::fmt::Debug for SerialRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SerialRunner({})", self.mode())
    }
}

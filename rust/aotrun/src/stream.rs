//! Caller streams and caller-driven capture (`aotrun_stream_*`,
//! `aotrun_graph_*`, `aotrun_runner_run_on_stream`).
//!
//! Only *inline* CPU streams are wrapped: work launched on one runs on the
//! calling thread before the call returns, so a run on a stream, and a graph
//! replay, are synchronous and plain borrows suffice. (A worker stream would
//! let work outlive the call, which needs the scope treatment of
//! [`crate::scope`]; use `aotrun_sys` for it.)
//!
//! Capture records a runner's work instead of executing it; the resulting
//! [`Graph`] replays it with the buffers fixed at capture. So a graph keeps
//! borrowed — for its whole life — the runner it recorded (exclusively: a
//! replay uses the runner's model instance without its locks) and every
//! tensor a recorded run read or wrote:
//!
//! ```no_run
//! # fn f(package: &aotrun::Package) -> aotrun::Result<()> {
//! use aotrun::{CaptureMode, Stream, TensorMut, TensorRef};
//! let mut runner = package.runner().single_threaded()?;
//! let (x, shape) = (vec![1.0f32; 8], [2i64, 4]);
//! let mut y = vec![0.0f32; 8];
//! let mut stream = Stream::new()?;
//! {
//!     let mut capture = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal)?;
//!     capture.run(&[TensorRef::new(&x, &shape)?], &mut [TensorMut::new(&mut y, &shape)?])?;
//!     let graph = capture.end()?;      // nothing has run yet
//!     graph.launch(&mut stream)?;      // now y is written
//! }
//! println!("{:?}", y);
//! # Ok(()) }
//! ```
//!
//! A [`Capture`] that is dropped without [`end`](Capture::end) is ended and
//! its graph discarded. One that is forgotten leaves its stream capturing:
//! the recorded work can then never run (`run_on_stream` refuses a capturing
//! stream, a new capture fails, and freeing the stream discards it).

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use aotrun_sys as sys;

use crate::dtype::Element;
use crate::error::{check, Error, ErrorCode, Result};
use crate::owned::Tensor;
use crate::runner::{SerialRunner, ThreadedRunner};
use crate::tensor::{TensorMut, TensorRef};

/// Which calls a capture prohibits (they fail with
/// [`ErrorCode::CaptureUnsupported`] and invalidate it), as CUDA's
/// `cudaStreamCaptureMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureMode {
    /// Prohibited calls fail on every thread of the process.
    Global,
    /// Prohibited calls fail on the capturing thread only.
    ThreadLocal,
    /// Nothing is prohibited.
    Relaxed,
}

impl CaptureMode {
    fn to_raw(self) -> sys::aotrun_capture_mode {
        match self {
            CaptureMode::Global => sys::AOTRUN_CAPTURE_GLOBAL,
            CaptureMode::ThreadLocal => sys::AOTRUN_CAPTURE_THREAD_LOCAL,
            CaptureMode::Relaxed => sys::AOTRUN_CAPTURE_RELAXED,
        }
    }
}

/// An inline CPU stream (`AOTRUN_STREAM_INLINE`).
///
/// Neither `Send` nor `Sync`: `aotrun.h` promises any-thread use for
/// `aotrun_stream_is_capturing` only, and a capture must end on the thread
/// that began it.
pub struct Stream {
    raw: NonNull<sys::aotrun_stream>,
    _not_send: PhantomData<*const ()>,
}

impl Stream {
    /// A new inline stream. Errors: InvalidArgument, OutOfMemory.
    pub fn new() -> Result<Stream> {
        crate::error::loaded()?;
        let mut out = ptr::null_mut();
        check(unsafe { ffi!(stream_create)(sys::AOTRUN_STREAM_INLINE, &mut out) })?;
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "aotrun_stream_create succeeded without a stream"))?;
        Ok(Stream { raw, _not_send: PhantomData })
    }

    /// Returns the first failure of work on the stream since the last call
    /// (work on an inline stream has already finished).
    pub fn synchronize(&mut self) -> Result<()> {
        check(unsafe { ffi!(stream_synchronize)(self.raw.as_ptr()) })
    }

    /// Whether a capture is open (only after a [`Capture`] was forgotten,
    /// since an open one borrows the stream).
    pub fn is_capturing(&self) -> bool {
        unsafe { ffi!(stream_is_capturing)(self.raw.as_ptr()) != 0 }
    }

    /// Begins recording the work of `runner` on this stream. The runner and
    /// every tensor of a recorded run stay borrowed for `'t`, the life of the
    /// resulting [`Graph`]. Errors: InvalidArgument (already capturing).
    pub fn begin_capture<'s, 't, R: CaptureRunner>(
        &'s mut self,
        runner: &'t mut R,
        mode: CaptureMode,
    ) -> Result<Capture<'s, 't>> {
        check(unsafe { ffi!(stream_begin_capture)(self.raw.as_ptr(), mode.to_raw()) })?;
        Ok(Capture { stream: self, runner: runner.raw_runner(), ended: false, _borrow: PhantomData })
    }

    /// Captures one run of `runner` over buffers the resulting graph owns:
    /// the shape for replay-read-refill loops. Refill an input with
    /// [`BoundGraph::input_mut`], [`launch`](BoundGraph::launch), read an
    /// output with [`BoundGraph::output`]; the borrow checker keeps reads and
    /// refills between launches (launches on an inline stream complete before
    /// they return). Nothing executes during the capture.
    ///
    /// ```no_run
    /// # fn f(package: &aotrun::Package) -> aotrun::Result<()> {
    /// use aotrun::{CaptureMode, Stream, Tensor};
    /// let mut runner = package.runner().single_threaded()?;
    /// let mut stream = Stream::new()?;
    /// let x = Tensor::zeros::<f32>([1, 256])?;
    /// let y = Tensor::zeros::<f32>([1, 64])?;
    /// let mut graph = stream.capture_owned(&mut runner, CaptureMode::ThreadLocal, vec![x], vec![y])?;
    /// for step in 0..3 {
    ///     graph.input_mut::<f32>(0)?.fill(step as f32); // refill
    ///     graph.launch(&mut stream)?;                   // replay
    ///     println!("{}", graph.output::<f32>(0)?[0]);   // read
    /// }
    /// let (_inputs, _outputs) = graph.into_buffers();
    /// # Ok(()) }
    /// ```
    ///
    /// Holding an output across a launch does not compile:
    ///
    /// ```compile_fail,E0502
    /// # fn f(package: &aotrun::Package) -> aotrun::Result<()> {
    /// # use aotrun::{CaptureMode, Stream, Tensor};
    /// # let mut runner = package.runner().single_threaded()?;
    /// # let mut stream = Stream::new()?;
    /// # let (x, y) = (Tensor::zeros::<f32>([1, 256])?, Tensor::zeros::<f32>([1, 64])?);
    /// let mut graph = stream.capture_owned(&mut runner, CaptureMode::ThreadLocal, vec![x], vec![y])?;
    /// let y0 = graph.output::<f32>(0)?;
    /// graph.launch(&mut stream)?; // error: `graph` is borrowed by `y0`
    /// println!("{}", y0[0]);
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: as [`begin_capture`](Self::begin_capture), [`Capture::run`]
    /// and [`Capture::end`] (the buffers are dropped).
    pub fn capture_owned<'r, R: CaptureRunner>(
        &mut self,
        runner: &'r mut R,
        mode: CaptureMode,
        inputs: Vec<Tensor>,
        mut outputs: Vec<Tensor>,
    ) -> Result<BoundGraph<'r>> {
        let graph = {
            let capture = self.begin_capture(runner, mode)?;
            let ins: Vec<TensorRef<'_>> = inputs.iter().map(Tensor::view).collect();
            let mut outs: Vec<TensorMut<'_>> = outputs.iter_mut().map(Tensor::view_mut).collect();
            // The data lives in the tensors' heap buffers, which move with
            // the Vecs into the BoundGraph and stay put until it is dropped.
            unsafe { run_on_stream(capture.runner, capture.stream.raw, &ins, &mut outs) }?;
            let g = capture.end()?;
            let raw = g.raw;
            std::mem::forget(g);
            raw
        };
        Ok(BoundGraph { raw: graph, inputs, outputs, _runner: PhantomData, _not_send: PhantomData })
    }

    /// Runs `runner` on this stream: synchronous, like the runner's `run`.
    pub(crate) fn run_on(
        &mut self,
        runner: NonNull<sys::aotrun_runner>,
        inputs: &[TensorRef<'_>],
        outputs: &mut [TensorMut<'_>],
    ) -> Result<()> {
        if self.is_capturing() {
            // Only reachable after a Capture was forgotten: recording here
            // would silently leave the outputs unwritten.
            return Err(Error::new(
                ErrorCode::CaptureUnsupported,
                "the stream is still capturing (a Capture was forgotten); runs on it are refused",
            ));
        }
        unsafe { run_on_stream(runner, self.raw, inputs, outputs) }
    }

    /// The C handle; it stays owned by `self`.
    pub fn as_raw(&self) -> *mut sys::aotrun_stream {
        self.raw.as_ptr()
    }
}

/// # Safety
/// The tensors' data stays valid until the recorded or executed work is
/// over (for an inline stream: until it returns, unless capturing).
unsafe fn run_on_stream(
    runner: NonNull<sys::aotrun_runner>,
    stream: NonNull<sys::aotrun_stream>,
    inputs: &[TensorRef<'_>],
    outputs: &mut [TensorMut<'_>],
) -> Result<()> {
    check(unsafe {
        ffi!(runner_run_on_stream)(
            runner.as_ptr(),
            stream.as_ptr(),
            inputs.as_ptr() as *const sys::DLTensor,
            inputs.len(),
            outputs.as_mut_ptr() as *mut sys::DLTensor,
            outputs.len(),
        )
    })
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Discards a capture still open (a forgotten Capture).
        unsafe { ffi!(stream_free)(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("capturing", &self.is_capturing()).finish()
    }
}

/// A runner whose work can be captured: [`ThreadedRunner`] or
/// [`SerialRunner`]. Sealed.
pub trait CaptureRunner: sealed::Sealed {
    #[doc(hidden)]
    fn raw_runner(&self) -> NonNull<sys::aotrun_runner>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ThreadedRunner {}
    impl Sealed for super::SerialRunner {}
}

impl CaptureRunner for ThreadedRunner {
    fn raw_runner(&self) -> NonNull<sys::aotrun_runner> {
        self.raw_nonnull()
    }
}

impl CaptureRunner for SerialRunner {
    fn raw_runner(&self) -> NonNull<sys::aotrun_runner> {
        self.raw_nonnull()
    }
}

/// An open capture on a [`Stream`], recording one runner's runs.
pub struct Capture<'s, 't> {
    stream: &'s mut Stream,
    runner: NonNull<sys::aotrun_runner>,
    ended: bool,
    // The runner and the recorded tensors, borrowed until the graph is gone.
    _borrow: PhantomData<&'t mut ()>,
}

impl<'s, 't> Capture<'s, 't> {
    /// Records a run of the runner (nothing executes now; the outputs are
    /// written when the graph is launched). Mode rules of the C API: a
    /// threaded runner fails with [`ErrorCode::CaptureUnsupported`] as soon
    /// as it must query an instance's event (its second run with one model
    /// instance) and the capture is invalidated; single_threaded runs are
    /// legal; a graph-mode runner records its eager run.
    pub fn run<'u: 't>(&mut self, inputs: &[TensorRef<'u>], outputs: &mut [TensorMut<'u>]) -> Result<()> {
        // The data is borrowed for 't, which the resulting Graph keeps.
        unsafe { run_on_stream(self.runner, self.stream.raw, inputs, outputs) }
    }

    /// Ends the capture and returns the graph. Errors: CaptureInvalidated (a
    /// prohibited call happened while capturing; the message names it).
    pub fn end(mut self) -> Result<Graph<'t>> {
        self.ended = true;
        let mut g = ptr::null_mut();
        check(unsafe { ffi!(stream_end_capture)(self.stream.raw.as_ptr(), &mut g) })?;
        let raw = NonNull::new(g)
            .ok_or_else(|| Error::new(ErrorCode::Internal, "aotrun_stream_end_capture succeeded without a graph"))?;
        Ok(Graph { raw, _borrow: PhantomData, _not_send: PhantomData })
    }
}

impl Drop for Capture<'_, '_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // Dropped without end(): end it and discard what was recorded.
        let mut g = ptr::null_mut();
        let st = unsafe { ffi!(stream_end_capture)(self.stream.raw.as_ptr(), &mut g) };
        unsafe {
            if !st.is_null() {
                ffi!(status_free)(st);
            }
            ffi!(graph_free)(g);
        }
    }
}

impl fmt::Debug for Capture<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture").finish_non_exhaustive()
    }
}

/// Recorded work, replayed by [`launch`](Self::launch) with the buffers
/// fixed at capture. Borrows the runner and those buffers for `'t`.
///
/// Neither `Send` nor `Sync`: a replay uses the runner's instance without
/// locks, so two replays must never overlap.
pub struct Graph<'t> {
    raw: NonNull<sys::aotrun_graph>,
    _borrow: PhantomData<&'t mut ()>,
    _not_send: PhantomData<*const ()>,
}

impl Graph<'_> {
    /// Replays the graph on `stream` (inline: done when this returns).
    /// Errors: CaptureUnsupported (the stream is capturing), Package (a
    /// recorded step failed).
    pub fn launch(&self, stream: &mut Stream) -> Result<()> {
        check(unsafe { ffi!(graph_launch)(self.raw.as_ptr(), stream.raw.as_ptr()) })
    }

    /// Number of recorded operations.
    pub fn num_nodes(&self) -> usize {
        unsafe { ffi!(graph_num_nodes)(self.raw.as_ptr()) }
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        // Launches are synchronous (inline streams), so none is pending.
        unsafe { ffi!(graph_free)(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").field("num_nodes", &self.num_nodes()).finish()
    }
}

/// A captured graph that owns its input and output [`Tensor`]s (from
/// [`Stream::capture_owned`]): refill, [`launch`](Self::launch), read, in a
/// loop. Borrows the runner exclusively for `'r`, like [`Graph`].
///
/// Tensors are reached by element slices only, never as `&mut Tensor`: a
/// replaced tensor would leave the graph pointing at freed memory.
pub struct BoundGraph<'r> {
    raw: NonNull<sys::aotrun_graph>,
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
    _runner: PhantomData<&'r mut ()>,
    _not_send: PhantomData<*const ()>,
}

impl BoundGraph<'_> {
    /// Replays the graph on `stream` (inline: done when this returns), reading
    /// the inputs and writing the outputs this graph owns.
    pub fn launch(&mut self, stream: &mut Stream) -> Result<()> {
        check(unsafe { ffi!(graph_launch)(self.raw.as_ptr(), stream.raw.as_ptr()) })
    }

    /// Input `i`'s elements, to refill before the next launch.
    pub fn input_mut<T: Element>(&mut self, i: usize) -> Result<&mut [T]> {
        let n = self.inputs.len();
        self.inputs.get_mut(i).ok_or_else(|| Error::invalid(format!("input {i} of {n}")))?.as_mut_slice()
    }

    /// Output `i`'s elements, as the last launch wrote them.
    pub fn output<T: Element>(&self, i: usize) -> Result<&[T]> {
        let n = self.outputs.len();
        self.outputs.get(i).ok_or_else(|| Error::invalid(format!("output {i} of {n}")))?.as_slice()
    }

    pub fn inputs(&self) -> &[Tensor] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[Tensor] {
        &self.outputs
    }

    /// Number of recorded operations.
    pub fn num_nodes(&self) -> usize {
        unsafe { ffi!(graph_num_nodes)(self.raw.as_ptr()) }
    }

    /// Frees the graph and gives the buffers back (inputs, outputs).
    pub fn into_buffers(mut self) -> (Vec<Tensor>, Vec<Tensor>) {
        let bufs = (std::mem::take(&mut self.inputs), std::mem::take(&mut self.outputs));
        drop(self); // frees the graph (the Vecs are empty now)
        bufs
    }
}

impl Drop for BoundGraph<'_> {
    fn drop(&mut self) {
        // Before the tensors (fields drop after this): launches are
        // synchronous, so nothing is pending.
        unsafe { ffi!(graph_free)(self.raw.as_ptr()) };
    }
}

impl fmt::Debug for BoundGraph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundGraph")
            .field("num_nodes", &self.num_nodes())
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish()
    }
}

//! Runs that own their buffers and complete as a [`Future`]:
//! [`ThreadedRunner::run_owned`](crate::ThreadedRunner::run_owned).
//!
//! Std only: the future's [`Waker`] is woken from the run's completion
//! callback (`aotrun_event_set_callback`), so it works with tokio, with any
//! other executor, and with a plain `block_on`; nothing depends on a runtime.
//!
//! * **Buffers.** The future owns the input and output [`Tensor`]s and gives
//!   all of them back when it completes, on success ([`RunBuffers`]) and on
//!   failure ([`RunError::buffers`]), so a service reuses them for the next
//!   request.
//! * **Submission** happens on the first poll: `try_run_async`. A full
//!   in-flight window (`max_inflight`) does not block the executor while
//!   other owned runs of the runner are in flight: the future waits to be
//!   woken by one of their completions. Only when none is (the window is held
//!   by [`Scope`](crate::Scope) runs) does the poll block for a slot, like
//!   `run_async`.
//! * **Dropping the future** before it completes does not cancel the run: it
//!   still completes, its buffers stay alive until then (the completion
//!   callback holds them) and are freed afterwards; nothing is written to
//!   freed memory. `mem::forget` leaks the buffers, nothing else. The runner
//!   itself is kept alive by the future; `aotrun_runner_destroy` waits for
//!   runs in flight.
//!
//! ```no_run
//! # async fn serve(runner: std::sync::Arc<aotrun::ThreadedRunner>) -> aotrun::Result<()> {
//! use aotrun::Tensor;
//! let x = Tensor::from_vec(vec![0.5f32; 256], [1, 256])?;
//! let y = Tensor::zeros::<f32>([1, 64])?;
//! let done = runner.run_owned(vec![x], vec![y]).await?;
//! println!("{:?}", &done.outputs[0].as_slice::<f32>()?[..4]);
//! // done.inputs / done.outputs can be refilled and sent again.
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use aotrun_sys as sys;

use crate::error::{check, Error, ErrorCode};
use crate::owned::Tensor;
use crate::runner::RawRunner;

/// The buffers of a completed run, given back.
#[derive(Debug)]
pub struct RunBuffers {
    pub inputs: Vec<Tensor>,
    pub outputs: Vec<Tensor>,
}

/// A failed owned run: the error, and the buffers given back.
#[derive(Debug)]
pub struct RunError {
    pub error: Error,
    pub buffers: RunBuffers,
}

impl RunError {
    pub fn code(&self) -> ErrorCode {
        self.error.code()
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for RunError {}

/// `?` in a function returning [`crate::Result`] (the buffers are dropped).
impl From<RunError> for Error {
    fn from(e: RunError) -> Error {
        e.error
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No user code runs under these locks.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Per runner: owned runs in flight, and futures waiting for a slot.
pub(crate) struct SlotWaiters {
    in_flight: AtomicUsize,
    /// Completions of owned runs so far (a generation for lost wake-ups).
    completions: AtomicU64,
    /// The runner's max_inflight.
    window: usize,
    queue: Mutex<VecDeque<Waker>>,
}

impl SlotWaiters {
    pub(crate) fn new(window: usize) -> SlotWaiters {
        SlotWaiters { in_flight: AtomicUsize::new(0), completions: AtomicU64::new(0), window, queue: Mutex::default() }
    }
}

impl SlotWaiters {
    fn wake_one(&self) {
        let w = lock(&self.queue).pop_front();
        if let Some(w) = w {
            w.wake();
        }
    }
}

/// What the completion callback and the future share. The callback holds
/// one reference (through `user_data`) until it has run, so the buffers
/// outlive the run whatever happens to the future.
struct Flight {
    state: Mutex<FlightState>,
    waiters: Arc<SlotWaiters>,
}

struct FlightState {
    outcome: Option<Result<(), Error>>,
    waker: Option<Waker>,
    buffers: Option<RunBuffers>,
    /// The DLTensors given to C (they point into `buffers`).
    _views: Vec<sys::DLTensor>,
}

// The raw DLTensors point into the Tensors the state owns (Send + Sync data).
unsafe impl Send for FlightState {}

enum State {
    Idle { buffers: RunBuffers, queued: bool },
    InFlight { flight: Arc<Flight>, event: NonNull<sys::aotrun_event> },
    Done,
}

/// An owned run; see the [module docs](self). `Send`, `'static`.
#[must_use = "a RunFuture does nothing until polled (awaited)"]
pub struct RunFuture {
    runner: Arc<RawRunner>,
    state: State,
}

// The event handle is any-thread (aotrun.h); the rest is Send.
unsafe impl Send for RunFuture {}

impl RunFuture {
    pub(crate) fn new(runner: Arc<RawRunner>, inputs: Vec<Tensor>, outputs: Vec<Tensor>) -> RunFuture {
        RunFuture { runner, state: State::Idle { buffers: RunBuffers { inputs, outputs }, queued: false } }
    }
}

enum How {
    Try,
    Timeout(u64),
    Block,
}

/// Submits `buffers`; on success the callback owns a reference to the flight.
fn submit(
    runner: &RawRunner,
    buffers: RunBuffers,
    how: How,
) -> Result<(Arc<Flight>, NonNull<sys::aotrun_event>), (Error, RunBuffers)> {
    let mut views: Vec<sys::DLTensor> = Vec::with_capacity(buffers.inputs.len() + buffers.outputs.len());
    views.extend(buffers.inputs.iter().map(|t| *t.view().as_raw()));
    let n_in = views.len();
    // Outputs are written through these pointers; `buffers` is not touched
    // until the run completed.
    views.extend(buffers.outputs.iter().map(|t| *t.view().as_raw()));
    let n_out = views.len() - n_in;
    let (ins, outs) = views.split_at_mut(n_in);
    let r = runner.as_ptr();
    let mut ev = ptr::null_mut();
    let st = unsafe {
        match how {
            How::Try => ffi!(runner_try_run_async)(r, ins.as_ptr(), n_in, outs.as_mut_ptr(), n_out, &mut ev),
            How::Timeout(ns) => {
                ffi!(runner_run_async_timeout)(r, ins.as_ptr(), n_in, outs.as_mut_ptr(), n_out, ns, &mut ev)
            }
            How::Block => ffi!(runner_run_async)(r, ins.as_ptr(), n_in, outs.as_mut_ptr(), n_out, &mut ev),
        }
    };
    if let Err(e) = check(st) {
        return Err((e, buffers));
    }
    let Some(event) = NonNull::new(ev) else {
        return Err((Error::new(ErrorCode::Internal, "aotrun_runner_run_async succeeded without an event"), buffers));
    };
    let waiters = runner.waiters.clone();
    waiters.in_flight.fetch_add(1, Ordering::AcqRel);
    let flight = Arc::new(Flight {
        state: Mutex::new(FlightState { outcome: None, waker: None, buffers: Some(buffers), _views: views }),
        waiters,
    });
    let user = Arc::into_raw(flight.clone()) as *mut c_void;
    let st = unsafe { ffi!(event_set_callback)(event.as_ptr(), Some(on_complete), user) };
    if let Err(e) = check(st) {
        // Not registered (cannot happen for a fresh event): wait here, so the
        // buffers are never released while the run may write them.
        unsafe {
            let w = ffi!(event_wait)(event.as_ptr());
            let outcome = check(w);
            let flight = Arc::from_raw(user as *const Flight);
            finish(&flight, Err(outcome.err().unwrap_or(e)));
        }
    }
    Ok((flight, event))
}

/// Records the outcome and wakes the future and one slot waiter.
fn finish(flight: &Flight, outcome: Result<(), Error>) {
    let waker = {
        let mut s = lock(&flight.state);
        s.outcome = Some(outcome);
        s.waker.take()
    };
    flight.waiters.in_flight.fetch_sub(1, Ordering::AcqRel);
    flight.waiters.completions.fetch_add(1, Ordering::AcqRel);
    if let Some(w) = waker {
        w.wake();
    }
    flight.waiters.wake_one();
}

/// The event callback (an aotrun worker thread). Never unwinds into C.
unsafe extern "C" fn on_complete(user: *mut c_void, code: sys::aotrun_code, message: *const c_char) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        // Takes back the reference given to C; dropping it may free the
        // buffers of a dropped future (the run is over).
        let flight = unsafe { Arc::from_raw(user as *const Flight) };
        let outcome = if code == sys::AOTRUN_OK {
            Ok(())
        } else {
            let msg = if message.is_null() {
                String::new()
            } else {
                unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
            };
            Err(Error::new(ErrorCode::from_raw(code), msg))
        };
        finish(&flight, outcome);
    }));
    if let Err(payload) = r {
        std::mem::forget(payload);
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"aotrun: a waker panicked in a completion\n");
    }
}

impl Future for RunFuture {
    type Output = Result<RunBuffers, RunError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match std::mem::replace(&mut this.state, State::Done) {
                State::Idle { buffers, queued } => {
                    let waiters = this.runner.waiters.clone();
                    let seen = waiters.completions.load(Ordering::Acquire);
                    let in_flight = waiters.in_flight.load(Ordering::Acquire);
                    // Woken by a completion: its slot is released as soon as
                    // the completing run retires (just after its callback),
                    // so wait for it briefly. Otherwise try only when our own
                    // runs leave room (a refusal costs a status and a message).
                    let attempt = if queued {
                        Some(How::Timeout(1_000_000))
                    } else if in_flight < waiters.window {
                        Some(How::Try)
                    } else {
                        None
                    };
                    let buffers = match attempt {
                        None => buffers,
                        Some(how) => match submit(&this.runner, buffers, how) {
                            Ok((flight, event)) => {
                                this.state = State::InFlight { flight, event };
                                continue;
                            }
                            Err((e, buffers)) if matches!(e.code(), ErrorCode::WouldBlock | ErrorCode::Timeout) => {
                                buffers
                            }
                            Err((error, buffers)) => return Poll::Ready(Err(RunError { error, buffers })),
                        },
                    };
                    if waiters.in_flight.load(Ordering::Acquire) == 0 {
                        // The window is held by runs that will not wake us
                        // (a Scope's): wait for a slot like run_async.
                        match submit(&this.runner, buffers, How::Block) {
                            Ok((flight, event)) => this.state = State::InFlight { flight, event },
                            Err((error, buffers)) => return Poll::Ready(Err(RunError { error, buffers })),
                        }
                        continue;
                    }
                    lock(&waiters.queue).push_back(cx.waker().clone());
                    if waiters.completions.load(Ordering::Acquire) != seen {
                        // A completion since we looked woke somebody else:
                        // look again rather than miss it.
                        this.state = State::Idle { buffers, queued: false };
                        continue;
                    }
                    this.state = State::Idle { buffers, queued: true };
                    return Poll::Pending;
                }
                State::InFlight { flight, event } => {
                    let mut s = lock(&flight.state);
                    match s.outcome.take() {
                        Some(outcome) => {
                            let buffers = s.buffers.take().expect("buffers are taken once");
                            drop(s);
                            unsafe { ffi!(event_free)(event.as_ptr()) };
                            return Poll::Ready(match outcome {
                                Ok(()) => Ok(buffers),
                                Err(error) => Err(RunError { error, buffers }),
                            });
                        }
                        None => {
                            match &s.waker {
                                Some(w) if w.will_wake(cx.waker()) => {}
                                _ => s.waker = Some(cx.waker().clone()),
                            }
                            drop(s);
                            this.state = State::InFlight { flight, event };
                            return Poll::Pending;
                        }
                    }
                }
                State::Done => panic!("RunFuture polled after it completed"),
            }
        }
    }
}

impl Drop for RunFuture {
    fn drop(&mut self) {
        match std::mem::replace(&mut self.state, State::Done) {
            // Freeing the event does not cancel the run; the callback still
            // fires and releases the buffers after the run.
            State::InFlight { event, .. } => unsafe { ffi!(event_free)(event.as_ptr()) },
            // Queued for a slot: pass a wake-up on, in case it was meant for us.
            State::Idle { queued: true, .. } => self.runner.waiters.wake_one(),
            _ => {}
        }
    }
}

impl fmt::Debug for RunFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            State::Idle { .. } => "idle",
            State::InFlight { .. } => "in flight",
            State::Done => "done",
        };
        f.debug_struct("RunFuture").field("state", &state).finish()
    }
}

/// A minimal executor for code without a runtime: runs `fut` to completion
/// on this thread, parking between wake-ups.
///
/// ```no_run
/// # fn f(runner: &aotrun::ThreadedRunner, x: aotrun::Tensor, y: aotrun::Tensor) -> aotrun::Result<()> {
/// let done = aotrun::block_on(runner.run_owned(vec![x], vec![y]))?;
/// # Ok(()) }
/// ```
pub fn block_on<F: Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park_timeout(Duration::from_secs(1));
    }
}

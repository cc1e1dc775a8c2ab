//! Asynchronous runs, made safe by a scope.
//!
//! `aotrun_runner_run_async` returns at once; the run reads its inputs and
//! writes its outputs later, on an aotrun worker thread, until its event
//! completes. A free-standing `Event<'a>` that waits in `Drop` would not be
//! sound: `mem::forget` is safe, so a forgotten event would end the borrow of
//! the buffers while the run still writes them. Instead, as
//! [`std::thread::scope`] does for threads, runs are started inside
//! [`ThreadedRunner::scope`](crate::ThreadedRunner::scope) /
//! [`SerialRunner::scope`](crate::SerialRunner::scope): the tensors are
//! borrowed for the whole scope, and the scope itself (not the events)
//! owns the C event handles and waits for every run it started before it
//! returns — also when the closure panics, and when an [`Event`] was
//! forgotten. The scope waits for its own runs only, so several threads may
//! each hold a scope of one threaded runner without waiting for each other.
//!
//! Outputs stay borrowed until the scope ends, even after their event
//! completed — reading one inside the scope does not compile:
//!
//! ```compile_fail,E0502
//! # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
//! use aotrun::{TensorMut, TensorRef};
//! let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
//! let mut y = vec![0.0f32; 4];
//! runner.scope(|s| -> aotrun::Result<()> {
//!     let ev = s.run_async(&[TensorRef::new(&x, &shape)?], [TensorMut::new(&mut y, &shape)?])?;
//!     ev.wait()?;
//!     // error: `y` is borrowed mutably by the scope's run
//!     println!("{}", y[0]);
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//!
//! Read it after the scope instead:
//!
//! ```no_run
//! # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
//! use aotrun::{TensorMut, TensorRef};
//! let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
//! let mut y = vec![0.0f32; 4];
//! runner.scope(|s| -> aotrun::Result<()> {
//!     let ev = s.run_async(&[TensorRef::new(&x, &shape)?], [TensorMut::new(&mut y, &shape)?])?;
//!     ev.wait()
//! })?;
//! println!("{}", y[0]);
//! # Ok(()) }
//! ```
//!
//! Outputs are passed by value (an array or `Vec` of [`TensorMut`], or one
//! view): a view handed to a run cannot be handed to a second run of the
//! same scope, so two runs never write one buffer at the same time:
//!
//! ```compile_fail,E0382
//! # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
//! # use aotrun::{TensorMut, TensorRef};
//! # let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
//! let mut y = vec![0.0f32; 4];
//! let out = TensorMut::new(&mut y, &shape)?;
//! runner.scope(|s| -> aotrun::Result<()> {
//!     s.run_async(&[TensorRef::new(&x, &shape)?], [out])?;
//!     s.run_async(&[TensorRef::new(&x, &shape)?], [out])?; // error: use of moved value
//!     Ok(())
//! })
//! # }
//! ```
//!
//! Buffers must come from outside the scope: one created inside could be
//! freed while its run still writes it (for instance after `mem::forget` of
//! the event), so the borrow checker refuses it:
//!
//! ```compile_fail,E0597
//! # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
//! # use aotrun::{TensorMut, TensorRef};
//! # let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
//! runner.scope(|s| -> aotrun::Result<()> {
//!     let mut y = vec![0.0f32; 4];
//!     // error: `y` does not live long enough
//!     let ev = s.run_async(&[TensorRef::new(&x, &shape)?], [TensorMut::new(&mut y, &shape)?])?;
//!     std::mem::forget(ev);
//!     Ok(())
//! })
//! # }
//! ```
//!
//! Nor can an [`Event`] leave its scope:
//!
//! ```compile_fail,E0521
//! # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
//! # use aotrun::{TensorMut, TensorRef};
//! # let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
//! # let mut y = vec![0.0f32; 4];
//! let mut kept = None;
//! runner.scope(|s| -> aotrun::Result<()> {
//!     // error: borrowed data escapes outside of closure
//!     kept = Some(s.run_async(&[TensorRef::new(&x, &shape)?], [TensorMut::new(&mut y, &shape)?])?);
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use aotrun_sys as sys;

use crate::error::{check, Error, ErrorCode, Result};
use crate::tensor::{TensorMut, TensorRef};

/// The output views of one asynchronous run, passed by value so that a view
/// cannot be given to two runs: `[TensorMut; N]`, `Vec<TensorMut>`, or a
/// single `TensorMut`. Sealed.
pub trait AsyncOutputs<'t>: sealed::Sealed {
    #[doc(hidden)]
    fn views(&mut self) -> &mut [TensorMut<'t>];
}

mod sealed {
    pub trait Sealed {}
    impl<const N: usize> Sealed for [super::TensorMut<'_>; N] {}
    impl Sealed for Vec<super::TensorMut<'_>> {}
    impl Sealed for super::TensorMut<'_> {}
}

impl<'t, const N: usize> AsyncOutputs<'t> for [TensorMut<'t>; N] {
    fn views(&mut self) -> &mut [TensorMut<'t>] {
        self
    }
}

impl<'t> AsyncOutputs<'t> for Vec<TensorMut<'t>> {
    fn views(&mut self) -> &mut [TensorMut<'t>] {
        self
    }
}

impl<'t> AsyncOutputs<'t> for TensorMut<'t> {
    fn views(&mut self) -> &mut [TensorMut<'t>] {
        std::slice::from_mut(self)
    }
}

/// A submission that was refused ([`ErrorCode::WouldBlock`],
/// [`ErrorCode::Timeout`], or an argument error): the error and the output
/// views, given back unused. Returned by
/// [`Scope::try_run_async_or_refused`] and
/// [`Scope::run_async_timeout_or_refused`].
pub struct Refused<O> {
    pub error: Error,
    pub outputs: O,
}

impl<O> Refused<O> {
    pub fn code(&self) -> ErrorCode {
        self.error.code()
    }

    pub fn message(&self) -> &str {
        self.error.message()
    }
}

impl<O> fmt::Debug for Refused<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refused").field("error", &self.error).finish_non_exhaustive()
    }
}

impl<O> fmt::Display for Refused<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<O> std::error::Error for Refused<O> {}

/// `?` in a function returning [`crate::Result`].
impl<O> From<Refused<O>> for Error {
    fn from(r: Refused<O>) -> Error {
        r.error
    }
}

/// How a submission treats a full in-flight window.
#[derive(Clone, Copy)]
enum Submit {
    Block,
    Try,
    Timeout(u64),
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The C event handles of one scope. Every handle is freed here — by the
/// [`Event`] that names it when it is dropped after completion, otherwise
/// when the scope ends — never while a run may still use it.
struct Slots {
    /// Index = the `Event`'s slot; `None` = free.
    events: Vec<Option<NonNull<sys::aotrun_event>>>,
    free: Vec<usize>,
    /// Slots whose `Event` was dropped before its run completed.
    orphans: Vec<usize>,
}

impl Slots {
    fn insert(&mut self, ev: NonNull<sys::aotrun_event>) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.events[i] = Some(ev);
                i
            }
            None => {
                self.events.push(Some(ev));
                self.events.len() - 1
            }
        }
    }

    fn release(&mut self, i: usize) {
        if let Some(ev) = self.events[i].take() {
            unsafe { ffi!(event_free)(ev.as_ptr()) };
            self.free.push(i);
        }
    }

    /// Frees orphans whose run has completed; bounded by the runs in flight.
    fn sweep(&mut self) {
        let mut k = 0;
        while k < self.orphans.len() {
            let i = self.orphans[k];
            let ready = self.events[i].map_or(true, |ev| unsafe { ffi!(event_is_ready)(ev.as_ptr()) } != 0);
            if ready {
                self.orphans.swap_remove(k);
                self.release(i);
            } else {
                k += 1;
            }
        }
    }
}

/// What the scope owns; waits for and frees every remaining event on drop.
/// Kept apart from [`Scope`] so that it has no lifetimes (the scope is
/// borrowed for `'scope` by the closure, so it cannot have a `Drop` of its
/// own that names `'scope`).
struct Tracker {
    runner: NonNull<sys::aotrun_runner>,
    slots: Mutex<Slots>,
}

// aotrun.h: run_async, try_run_async, run_async_timeout — any thread,
// concurrently; aotrun_event_* — any thread. The handles are only freed under
// the mutex, or at the end when no `Event` is left.
unsafe impl Send for Tracker {}
unsafe impl Sync for Tracker {}

impl Tracker {
    fn lock(&self) -> MutexGuard<'_, Slots> {
        // No user code runs under the lock, so a poisoned one is consistent.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        let slots = self.slots.get_mut().unwrap_or_else(|p| p.into_inner());
        for ev in slots.events.drain(..).flatten() {
            // The outcome belongs to the event's owner, who dropped or
            // forgot it; the run only has to be over before the borrows end.
            unsafe {
                let st = ffi!(event_wait)(ev.as_ptr());
                if !st.is_null() {
                    ffi!(status_free)(st);
                }
                ffi!(event_free)(ev.as_ptr());
            }
        }
    }
}

/// A scope for asynchronous runs of one runner; see the [module](self) docs.
///
/// `'scope` is the scope itself; `'env` is what the scope borrows (the
/// runner, and every tensor handed to a run). `Send + Sync`: runs may be
/// started from threads spawned inside it (e.g. with `std::thread::scope`).
pub struct Scope<'scope, 'env: 'scope> {
    tracker: Tracker,
    // Invariant in both, as std::thread::Scope: neither may be shortened or
    // lengthened, so nothing borrowed by a run can end before the scope.
    scope: PhantomData<&'scope mut &'scope ()>,
    env: PhantomData<&'env mut &'env ()>,
}

/// Runs `f` with a scope over `runner` and waits for every run it started
/// before returning (or unwinding).
pub(crate) fn run_scope<'env, F, T>(runner: NonNull<sys::aotrun_runner>, f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let scope = Scope {
        tracker: Tracker {
            runner,
            slots: Mutex::new(Slots { events: Vec::new(), free: Vec::new(), orphans: Vec::new() }),
        },
        scope: PhantomData,
        env: PhantomData,
    };
    // `scope` is dropped after `f` returns or unwinds; its Tracker waits.
    f(&scope)
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// Starts a run and returns its [`Event`]; blocks while the runner's
    /// in-flight window (`max_inflight`) is full.
    ///
    /// `inputs` and `outputs` are borrowed until the scope ends; the view
    /// arrays themselves are copied by the C library. Errors (no run is
    /// started): InvalidArgument (count, dtype, rank, shape, device) and
    /// the other argument errors of `run`. The run's own failure (e.g.
    /// Package) is reported by its event's [`wait`](Event::wait).
    pub fn run_async<'t, O>(&'scope self, inputs: &[TensorRef<'t>], outputs: O) -> Result<Event<'scope>>
    where
        't: 'scope,
        O: AsyncOutputs<'t>,
    {
        self.submit(inputs, outputs, Submit::Block).map_err(|(e, _)| e)
    }

    /// Like [`run_async`](Self::run_async), but never blocks: fails with
    /// [`ErrorCode::WouldBlock`] when the window is full (and with the
    /// argument errors of `run_async`). The output views are consumed either
    /// way; to get them back from a refusal and retry inside the scope, use
    /// [`try_run_async_or_refused`](Self::try_run_async_or_refused).
    ///
    /// The signature of crate 1.1, kept for 1.x: it has the same type as
    /// [`run_async`](Self::run_async), so code may pick either in one `if`.
    pub fn try_run_async<'t, O>(&'scope self, inputs: &[TensorRef<'t>], outputs: O) -> Result<Event<'scope>>
    where
        't: 'scope,
        O: AsyncOutputs<'t>,
    {
        self.submit(inputs, outputs, Submit::Try).map_err(|(e, _)| e)
    }

    /// Like [`run_async`](Self::run_async), but waits at most `timeout` for
    /// a slot: [`ErrorCode::Timeout`] after. The outputs are consumed; see
    /// [`run_async_timeout_or_refused`](Self::run_async_timeout_or_refused)
    /// to get them back.
    pub fn run_async_timeout<'t, O>(
        &'scope self,
        inputs: &[TensorRef<'t>],
        outputs: O,
        timeout: Duration,
    ) -> Result<Event<'scope>>
    where
        't: 'scope,
        O: AsyncOutputs<'t>,
    {
        self.submit(inputs, outputs, Submit::Timeout(nanos(timeout))).map_err(|(e, _)| e)
    }

    /// [`try_run_async`](Self::try_run_async) that gives the output views
    /// back when the submission is refused ([`Refused::outputs`]), so the
    /// caller can retry inside the scope; `?` turns the [`Refused`] into an
    /// [`Error`].
    ///
    /// ```no_run
    /// # fn f(runner: &aotrun::ThreadedRunner) -> aotrun::Result<()> {
    /// use aotrun::{ErrorCode, TensorMut, TensorRef};
    /// let (x, shape) = (vec![0.0f32; 4], [1i64, 4]);
    /// let mut y = vec![0.0f32; 4];
    /// runner.scope(|s| -> aotrun::Result<()> {
    ///     let mut out = TensorMut::new(&mut y, &shape)?;
    ///     let event = loop {
    ///         match s.try_run_async_or_refused(&[TensorRef::new(&x, &shape)?], out) {
    ///             Ok(event) => break event,
    ///             Err(refused) if refused.code() == ErrorCode::WouldBlock => {
    ///                 out = refused.outputs; // not lost: retry later
    ///                 std::thread::yield_now();
    ///             }
    ///             Err(refused) => return Err(refused.into()),
    ///         }
    ///     };
    ///     event.wait()
    /// })
    /// # }
    /// ```
    pub fn try_run_async_or_refused<'t, O>(
        &'scope self,
        inputs: &[TensorRef<'t>],
        outputs: O,
    ) -> Result<Event<'scope>, Refused<O>>
    where
        't: 'scope,
        O: AsyncOutputs<'t>,
    {
        self.submit(inputs, outputs, Submit::Try).map_err(|(error, outputs)| Refused { error, outputs })
    }

    /// [`run_async_timeout`](Self::run_async_timeout) that gives the output
    /// views back when no slot frees in time ([`ErrorCode::Timeout`]) or the
    /// submission is refused otherwise, as
    /// [`try_run_async_or_refused`](Self::try_run_async_or_refused) does.
    pub fn run_async_timeout_or_refused<'t, O>(
        &'scope self,
        inputs: &[TensorRef<'t>],
        outputs: O,
        timeout: Duration,
    ) -> Result<Event<'scope>, Refused<O>>
    where
        't: 'scope,
        O: AsyncOutputs<'t>,
    {
        self.submit(inputs, outputs, Submit::Timeout(nanos(timeout)))
            .map_err(|(error, outputs)| Refused { error, outputs })
    }

    fn submit<'t, O: AsyncOutputs<'t>>(
        &'scope self,
        inputs: &[TensorRef<'t>],
        mut outputs: O,
        how: Submit,
    ) -> Result<Event<'scope>, (Error, O)> {
        let runner = self.tracker.runner.as_ptr();
        let outs = outputs.views();
        // Views are repr(transparent) DLTensors: the slices are the arrays.
        let (in_ptr, n_in) = (inputs.as_ptr() as *const sys::DLTensor, inputs.len());
        let (out_ptr, n_out) = (outs.as_mut_ptr() as *mut sys::DLTensor, outs.len());
        let mut ev = ptr::null_mut();
        // Not under the lock: run_async may block for a slot.
        let st = check(unsafe {
            match how {
                Submit::Block => ffi!(runner_run_async)(runner, in_ptr, n_in, out_ptr, n_out, &mut ev),
                Submit::Try => ffi!(runner_try_run_async)(runner, in_ptr, n_in, out_ptr, n_out, &mut ev),
                Submit::Timeout(ns) => {
                    ffi!(runner_run_async_timeout)(runner, in_ptr, n_in, out_ptr, n_out, ns, &mut ev)
                }
            }
        });
        if let Err(e) = st {
            // Refused: no run holds the views; they go back to the caller.
            return Err((e, outputs));
        }
        let Some(raw) = NonNull::new(ev) else {
            return Err((
                Error::new(ErrorCode::Internal, "aotrun_runner_run_async succeeded without an event"),
                outputs,
            ));
        };
        // The run holds the views now (plain DLTensors, nothing to drop); the
        // scope's borrow keeps their memory.
        drop(outputs);
        let slot = {
            let mut slots = self.tracker.lock();
            slots.sweep();
            slots.insert(raw)
        };
        Ok(Event { tracker: &self.tracker, raw, slot, _scope: PhantomData })
    }

    /// Runs started in this scope whose handles are still held (not yet
    /// freed): in flight, or completed with their [`Event`] still alive.
    pub fn pending(&self) -> usize {
        let slots = self.tracker.lock();
        slots.events.iter().filter(|e| e.is_some()).count()
    }
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").field("pending", &self.pending()).finish()
    }
}

/// The completion of one asynchronous run (an `aotrun_event`).
///
/// `Send + Sync` (the C event functions are "any thread"). Dropping it does
/// not cancel or wait for the run — the [`Scope`] waits for it at its end —
/// and discards the outcome if it was never waited for (the runner's
/// `stats().async_failed` still counts a failure). Forgetting it is safe.
pub struct Event<'scope> {
    tracker: &'scope Tracker,
    raw: NonNull<sys::aotrun_event>,
    slot: usize,
    _scope: PhantomData<&'scope mut &'scope ()>,
}

// See Tracker: the C event functions are any-thread; the handle stays valid
// while this Event lives (only its own Drop, or the scope after every Event
// is gone, frees it).
unsafe impl Send for Event<'_> {}
unsafe impl Sync for Event<'_> {}

impl Event<'_> {
    /// Waits for the run and returns its outcome: `Ok` when it succeeded,
    /// else its error (e.g. [`ErrorCode::Package`] with the package's
    /// message). May be called any number of times, from any thread.
    pub fn wait(&self) -> Result<()> {
        check(unsafe { ffi!(event_wait)(self.raw.as_ptr()) })
    }

    /// Like [`wait`](Self::wait), but waits at most `timeout`:
    /// [`ErrorCode::Timeout`] if the run is still going.
    pub fn wait_timeout(&self, timeout: Duration) -> Result<()> {
        check(unsafe { ffi!(event_wait_timeout)(self.raw.as_ptr(), nanos(timeout)) })
    }

    /// Whether the run has completed (successfully or not).
    pub fn is_ready(&self) -> bool {
        unsafe { ffi!(event_is_ready)(self.raw.as_ptr()) != 0 }
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        let mut slots = self.tracker.lock();
        if self.is_ready() {
            slots.release(self.slot);
        } else {
            // Still running: the scope frees it once it completes.
            slots.orphans.push(self.slot);
        }
    }
}

impl fmt::Debug for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event").field("ready", &self.is_ready()).finish()
    }
}

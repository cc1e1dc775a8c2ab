//! Updating a runner's constants (weights) while it serves.
//!
//! A C runner has an active set of constants, which runs use, and one
//! inactive slot. An update builds a new set into the slot (replacing what
//! was there), a swap exchanges the two, a free empties the slot. Runs go on
//! during all of it, and each run uses one set from start to end (aotrun.h,
//! "Constants (weights)").
//!
//! # Design: who may touch the inactive slot
//!
//! The dangerous misuses are two updates in flight at once (the second
//! silently replaces the first, so its swap applies weights nobody meant)
//! and swapping one update twice (the second swap rolls it back). Both are
//! made compile errors:
//!
//! * The right to update is a value, [`ConstantsControl`], created together
//!   with the runner ([`RunnerBuilder::threaded_with_constants`] and its
//!   serial siblings), once per runner and not `Clone`. It is a separate
//!   value from the runner, like the two halves of a channel, so runs keep
//!   their own borrow rules: a [`ThreadedRunner`] still runs through `&self`
//!   from any number of threads while another thread holds the control and
//!   updates (the C API allows runs concurrently with updates and swaps),
//!   and a [`SerialRunner`] still runs through `&mut self`. Borrowing the
//!   runner itself mutably for an update would stop every run for its
//!   duration; a runtime "staging" flag would turn the misuse into an error
//!   at run time instead of a compile error.
//! * [`ConstantsControl::stage_constants`] takes `&mut self` and returns a
//!   [`Staged`] that keeps that borrow: a second `Staged` (or a `Swapped`
//!   next to a `Staged`) cannot exist at the same time.
//! * [`Staged::swap`] consumes the `Staged` and returns a [`Swapped`], which
//!   keeps the borrow: the previous set is in the slot, and the only ways on
//!   are [`Swapped::rollback`] (consumes it; the rolled-back set is staged
//!   again) or [`Swapped::release_previous`] (consumes it), or dropping it.
//!
//! Dropping a `Staged` discards the set it built (nothing was applied);
//! dropping a `Swapped` keeps the previous set in memory as the inactive one
//! (dropping must not block on runs still using it): free it with
//! [`ConstantsControl::release_inactive`], or let the next update replace it.
//!
//! ```no_run
//! use aotrun::{Package, TensorRef, Update};
//!
//! # fn f() -> aotrun::Result<()> {
//! let package = Package::open("build/packages/weight_id")?;
//! let (runner, mut control) = package.runner().num_models(4).threaded_with_constants()?;
//! // ... `runner` serves from other threads (it is Send + Sync) ...
//! let shape = [4096i64];
//! let w = vec![1.0f32; 4096];
//! let staged = control.stage_constants(&[("w", TensorRef::new(&w, &shape)?)], Update::Partial)?;
//! let swapped = staged.swap()?; // runs starting from now use the new w
//! swapped.release_previous()?; // or swapped.rollback()?
//! # drop(runner); Ok(()) }
//! ```
//!
//! A swapped update cannot be swapped again:
//!
//! ```compile_fail,E0382
//! # fn f(control: &mut aotrun::ConstantsControl) -> aotrun::Result<()> {
//! let staged = control.stage_constants_from_file("new.safetensors", aotrun::Update::Full)?;
//! let swapped = staged.swap()?;
//! staged.swap()?; // error[E0382]: use of moved value: `staged`
//! # Ok(()) }
//! ```
//!
//! nor used in any way after its swap:
//!
//! ```compile_fail,E0382
//! # fn f(control: &mut aotrun::ConstantsControl) -> aotrun::Result<()> {
//! let staged = control.stage_constants_from_file("new.safetensors", aotrun::Update::Full)?;
//! let swapped = staged.swap()?;
//! staged.discard()?; // error[E0382]: use of moved value: `staged`
//! # Ok(()) }
//! ```
//!
//! Two staged updates of one runner cannot coexist:
//!
//! ```compile_fail,E0499
//! # fn f(control: &mut aotrun::ConstantsControl) -> aotrun::Result<()> {
//! let a = control.stage_constants_from_file("a.safetensors", aotrun::Update::Full)?;
//! // error[E0499]: cannot borrow `*control` as mutable more than once at a time
//! let b = control.stage_constants_from_file("b.safetensors", aotrun::Update::Full)?;
//! a.swap()?;
//! # Ok(()) }
//! ```
//!
//! and neither can a new update and the rollback of the last one:
//!
//! ```compile_fail,E0499
//! # fn f(control: &mut aotrun::ConstantsControl) -> aotrun::Result<()> {
//! let swapped = control.stage_constants_from_file("a.safetensors", aotrun::Update::Full)?.swap()?;
//! let next = control.stage_constants_from_file("b.safetensors", aotrun::Update::Full)?;
//! swapped.rollback()?;
//! # Ok(()) }
//! ```
//!
//! [`RunnerBuilder::threaded_with_constants`]: crate::RunnerBuilder::threaded_with_constants
//! [`ThreadedRunner`]: crate::ThreadedRunner
//! [`SerialRunner`]: crate::SerialRunner

use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

use aotrun_sys as sys;

use crate::error::{check, Error, Result};
use crate::package::path_cstring;
use crate::runner::RawRunner;
use crate::tensor::TensorRef;

/// Which constants an update must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Update {
    /// Every constant that can be updated (all but folded ones): a constant
    /// left out is InvalidArgument, naming it. For replacing a whole model's
    /// weights, where forgetting one is a bug.
    Full,
    /// Only the constants named; the others are shared with the active set.
    Partial,
}

impl Update {
    fn flags(self) -> u32 {
        match self {
            Update::Full => sys::AOTRUN_CONSTANTS_FULL_UPDATE,
            Update::Partial => 0,
        }
    }
}

/// Which constant sets a runner has (`aotrun_constants_state`). Sets are
/// numbered by generation: 0 is the package's own, then 1, 2, ... in the
/// order the runner's updates built them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConstantsState {
    /// The set runs use now.
    pub active_generation: u64,
    /// The set a swap would make active, if any.
    pub inactive_generation: Option<u64>,
    /// Successful updates and swaps so far.
    pub updates: u64,
    pub swaps: u64,
    /// Graph mode: graphs captured for sets made by updates (each set
    /// captures its own; no replay reads another set's weights).
    pub graph_recaptures: u64,
}

/// A snapshot of `runner`'s constant sets; never waits.
pub(crate) fn state_of(runner: &RawRunner) -> Result<ConstantsState> {
    let mut s: sys::aotrun_constants_state = unsafe { std::mem::zeroed() };
    s.struct_size = std::mem::size_of::<sys::aotrun_constants_state>();
    check(unsafe { ffi!(runner_get_constants_state)(runner.as_ptr(), &mut s) })?;
    Ok(ConstantsState {
        active_generation: s.active_generation,
        inactive_generation: (s.has_inactive != 0).then_some(s.inactive_generation),
        updates: s.updates,
        swaps: s.swaps,
        graph_recaptures: s.graph_recaptures,
    })
}

/// The one right to update a runner's constants; see the [module
/// docs](self). Made with the runner
/// ([`RunnerBuilder::threaded_with_constants`](crate::RunnerBuilder::threaded_with_constants),
/// [`single_threaded_with_constants`](crate::RunnerBuilder::single_threaded_with_constants),
/// [`graph_with_constants`](crate::RunnerBuilder::graph_with_constants)).
///
/// `Send + Sync`: the C update calls are allowed from any thread, also while
/// the runner runs on others. It keeps the C runner alive: a runner dropped
/// before its control is destroyed when the control is dropped.
pub struct ConstantsControl {
    runner: Arc<RawRunner>,
}

impl ConstantsControl {
    pub(crate) fn new(runner: Arc<RawRunner>) -> ConstantsControl {
        ConstantsControl { runner }
    }

    /// Builds a new set from the active one with `tensors` in place of the
    /// constants they name (copied: the buffers may be reused when this
    /// returns), and keeps it inactive until [`Staged::swap`]. Runs go on
    /// using the active set meanwhile. Waits only for runs still executing on
    /// the inactive set it replaces.
    ///
    /// Tensors: host memory, contiguous, of the constant's dtype and shape.
    /// Errors: InvalidArgument naming the constant (unknown, folded, given
    /// twice, wrong dtype or shape, not host memory; with [`Update::Full`] the
    /// ones left out; a name with a NUL byte), OutOfMemory, Package (the
    /// package could not create a container with them; nothing changed).
    pub fn stage_constants(&mut self, tensors: &[(&str, TensorRef<'_>)], update: Update) -> Result<Staged<'_>> {
        let names = tensors
            .iter()
            .map(|(n, _)| {
                CString::new(*n).map_err(|_| Error::invalid(format!("constant name {n:?} contains a NUL byte")))
            })
            .collect::<Result<Vec<_>>>()?;
        let named: Vec<sys::aotrun_named_tensor> = names
            .iter()
            .zip(tensors)
            .map(|(name, (_, t))| sys::aotrun_named_tensor { name: name.as_ptr(), tensor: *t.as_raw() })
            .collect();
        // `tensors` borrow their data for the call; the library copies it.
        check(unsafe {
            ffi!(runner_update_constants)(self.runner.as_ptr(), named.as_ptr(), named.len(), update.flags())
        })?;
        Ok(Staged::new(self))
    }

    /// As [`stage_constants`](Self::stage_constants) with every tensor of the
    /// `.safetensors` file at `path` as new values. The file is mapped, not
    /// copied. Errors: as `stage_constants` (messages name the file), and
    /// NotFound (no such file), LoadFailed (unreadable), InvalidArgument (not
    /// a valid .safetensors file).
    pub fn stage_constants_from_file(&mut self, path: impl AsRef<Path>, update: Update) -> Result<Staged<'_>> {
        let path = path_cstring(path.as_ref())?;
        check(unsafe { ffi!(runner_update_constants_from_file)(self.runner.as_ptr(), path.as_ptr(), update.flags()) })?;
        Ok(Staged::new(self))
    }

    /// Frees the inactive set a dropped [`Swapped`] left behind, once the
    /// runs still executing on it have finished. Ok when there is none.
    pub fn release_inactive(&mut self) -> Result<()> {
        self.free_inactive()
    }

    /// Which sets the runner has; never waits.
    pub fn state(&self) -> Result<ConstantsState> {
        state_of(&self.runner)
    }

    fn swap(&mut self) -> Result<()> {
        check(unsafe { ffi!(runner_swap_constants)(self.runner.as_ptr()) })
    }

    fn free_inactive(&mut self) -> Result<()> {
        check(unsafe { ffi!(runner_free_inactive_constants)(self.runner.as_ptr()) })
    }

    fn inactive_generation(&self) -> u64 {
        // Only this control changes the sets, and it is borrowed: exact.
        self.state().ok().and_then(|s| s.inactive_generation).unwrap_or(0)
    }
}

impl std::fmt::Debug for ConstantsControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.state() {
            Ok(s) => {
                write!(f, "ConstantsControl(active {}, inactive {:?})", s.active_generation, s.inactive_generation)
            }
            Err(_) => f.write_str("ConstantsControl"),
        }
    }
}

/// A set of constants built and waiting, inactive: [`swap`](Self::swap) it
/// in or [`discard`](Self::discard) it. Dropping it discards it.
#[must_use = "a staged update does nothing until swapped; dropping it discards it"]
#[derive(Debug)]
pub struct Staged<'c> {
    /// `None` once consumed, so Drop does not discard a swapped set.
    control: Option<&'c mut ConstantsControl>,
    generation: u64,
}

impl<'c> Staged<'c> {
    fn new(control: &'c mut ConstantsControl) -> Staged<'c> {
        let generation = control.inactive_generation();
        Staged { control: Some(control), generation }
    }

    /// The generation number of the staged set ([`ConstantsState`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Makes the staged set active for every run that starts from now on;
    /// runs in flight finish on the previous set, which becomes the inactive
    /// one (see [`Swapped`]). Does not wait. On error the staged set is
    /// discarded.
    pub fn swap(mut self) -> Result<Swapped<'c>> {
        let control = self.control.take().expect("a Staged is consumed only once");
        if let Err(e) = control.swap() {
            let _ = control.free_inactive();
            return Err(e);
        }
        let previous = control.inactive_generation();
        Ok(Swapped { control, generation: self.generation, previous })
    }

    /// Frees the staged set; the active one is untouched.
    pub fn discard(mut self) -> Result<()> {
        self.control.take().expect("a Staged is consumed only once").free_inactive()
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if let Some(control) = self.control.take() {
            // Never active, so no run waits on it: this does not block.
            let _ = control.free_inactive();
        }
    }
}

/// A swapped update: the new set is active, the previous one is kept
/// inactive so that [`rollback`](Self::rollback) is instant. Decide with
/// `rollback` or [`release_previous`](Self::release_previous); dropping it
/// keeps the previous set in memory (see the [module docs](self)).
#[must_use = "the previous constants stay in memory until released"]
#[derive(Debug)]
pub struct Swapped<'c> {
    control: &'c mut ConstantsControl,
    generation: u64,
    previous: u64,
}

impl<'c> Swapped<'c> {
    /// The generation now active.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The generation it replaced (inactive now).
    pub fn previous_generation(&self) -> u64 {
        self.previous
    }

    /// Swaps back: runs that start from now on use the previous set again.
    /// The rolled-back set becomes inactive, and is returned staged (swap
    /// it to apply it again, drop it to free it).
    pub fn rollback(self) -> Result<Staged<'c>> {
        self.control.swap()?;
        Ok(Staged { control: Some(self.control), generation: self.generation })
    }

    /// Frees the previous set, waiting for the runs still executing on it.
    pub fn release_previous(self) -> Result<()> {
        self.control.free_inactive()
    }
}

/// Checked at compile time: the control, and an update in progress, may be
/// used from another thread than the runner's.
#[allow(dead_code)]
fn assert_thread_safety() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<ConstantsControl>();
    send_sync::<Staged<'static>>();
    send_sync::<Swapped<'static>>();
}

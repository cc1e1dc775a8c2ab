//! The model container: N instances, their pool and completion events, and
//! the two run paths.

use std::ffi::c_char;
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::abi::{
    self, aotrun_pkg_create_args, aotrun_pkg_event, aotrun_pkg_run_args, aotrun_pkg_shape_args, kDLCPU, DLTensor,
};
use crate::guard::{guard, PkgError, PkgResult};
use crate::host::Host;
use crate::model::{self, FEATURES};
use crate::tensor;

/// One model instance. This model has no per-instance state beyond the event
/// that marks its last run; a real model would own scratch buffers here.
struct Instance {
    event: aotrun_pkg_event,
}

/// Test hook: `AOTRUN_RUST_AFFINE_FAULT=panic|error` (read when a container
/// with instances is created) makes every run panic or fail, to prove that
/// neither crosses the ABI as anything but a status and a message.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    Panic,
    Error,
}

impl Fault {
    fn from_env() -> Fault {
        match std::env::var("AOTRUN_RUST_AFFINE_FAULT").as_deref() {
            Ok("panic") => Fault::Panic,
            Ok("error") => Fault::Error,
            _ => Fault::None,
        }
    }

    fn trip(self) -> PkgResult<()> {
        match self {
            Fault::None => Ok(()),
            Fault::Panic => panic!("injected fault (AOTRUN_RUST_AFFINE_FAULT=panic)"),
            Fault::Error => {
                Err(PkgError::new(abi::AOTRUN_PKG_ERR_RUNTIME, "injected fault (AOTRUN_RUST_AFFINE_FAULT=error)"))
            }
        }
    }
}

pub struct Container {
    /// Absent for a metadata-only container (num_models = 0).
    host: Option<Host>,
    fault: Fault,
    instances: Vec<Instance>,
    /// Indices of instances not in use by a run.
    free: Mutex<Vec<usize>>,
    freed: Condvar,
}

// Events are host handles usable from any thread (ABI: every host function
// may be called from any thread); the pool is behind the mutex.
unsafe impl Send for Container {}
unsafe impl Sync for Container {}

// The 1.0 sizes, by the header's formulas (the last 1.0 field ends them);
// they stay fixed when fields are appended.
const CREATE_ARGS_SIZE_1_0: usize = offset_of!(aotrun_pkg_create_args, package_dir) + size_of::<*const c_char>();
const SHAPE_ARGS_SIZE_1_0: usize = offset_of!(aotrun_pkg_shape_args, output_shapes_capacity) + size_of::<usize>();
const RUN_ARGS_SIZE_1_0: usize = offset_of!(aotrun_pkg_run_args, stream) + size_of::<abi::aotrun_pkg_stream>();

/// Reads a struct_size-versioned args struct: at most its own size, the rest
/// zeroed, and at least the 1.0 size (a smaller one is a broken caller).
///
/// # Safety
/// `ptr` is NULL or readable for its declared struct_size bytes.
pub unsafe fn read_args<T>(ptr: *const T, size_1_0: usize, what: &str) -> PkgResult<T> {
    if ptr.is_null() {
        return Err(PkgError::invalid(format!("{what} is NULL")));
    }
    let declared = unsafe { *(ptr as *const usize) };
    if declared < size_1_0 {
        return Err(PkgError::invalid(format!("{what}.struct_size is {declared}, below the ABI 1.0 size {size_1_0}")));
    }
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    let n = declared.min(size_of::<T>());
    unsafe {
        std::ptr::copy_nonoverlapping(ptr as *const u8, out.as_mut_ptr() as *mut u8, n);
        Ok(out.assume_init())
    }
}

impl Container {
    /// # Safety
    /// `args` follows the ABI (valid host table, constants array).
    pub unsafe fn create(args: *const aotrun_pkg_create_args) -> PkgResult<Box<Container>> {
        let args = unsafe { read_args(args, CREATE_ARGS_SIZE_1_0, "create_args") }?;
        if args.num_models < 0 {
            return Err(PkgError::invalid(format!("num_models is {} (must be >= 0)", args.num_models)));
        }
        if args.device.device_type != kDLCPU {
            return Err(PkgError::unsupported(format!(
                "device type {} requested, but this package is built for CPU only",
                args.device.device_type
            )));
        }
        // The model has no weights: any constant is a packaging mistake.
        if args.num_constants > 0 && !args.constants.is_null() {
            let first = unsafe { &*args.constants };
            let name = if first.name.is_null() {
                "<unnamed>".into()
            } else {
                unsafe { std::ffi::CStr::from_ptr(first.name) }.to_string_lossy()
            };
            return Err(PkgError::invalid(format!(
                "unexpected constant '{name}' ({} given): this model has no constants",
                args.num_constants
            )));
        }
        if args.num_models == 0 {
            // Metadata only: no device resources, host may be absent.
            return Ok(Box::new(Container {
                host: None,
                fault: Fault::None,
                instances: Vec::new(),
                free: Mutex::new(Vec::new()),
                freed: Condvar::new(),
            }));
        }
        let host = unsafe { Host::copy_from(args.host) }?;
        let n = args.num_models as usize;
        let mut instances = Vec::with_capacity(n);
        for _ in 0..n {
            match host.event_create() {
                Ok(event) => instances.push(Instance { event }),
                Err(e) => {
                    for inst in &instances {
                        host.event_destroy(inst.event);
                    }
                    return Err(e);
                }
            }
        }
        host.log(abi::AOTRUN_PKG_LOG_DEBUG, || format!("aotrun_rust_affine: container with {n} instance(s)"));
        Ok(Box::new(Container {
            host: Some(host),
            fault: Fault::from_env(),
            instances,
            free: Mutex::new((0..n).rev().collect()),
            freed: Condvar::new(),
        }))
    }

    /// Output shapes for given input shapes: y has x's shape.
    ///
    /// # Safety
    /// `args` follows the ABI.
    pub unsafe fn output_shapes(&self, args: *const aotrun_pkg_shape_args) -> PkgResult<()> {
        let args = unsafe { read_args(args, SHAPE_ARGS_SIZE_1_0, "shape_args") }?;
        let inputs = unsafe { inputs_of(args.inputs, args.num_inputs) }?;
        let batch = unsafe { tensor::check_spec(&inputs[0], "input 0 'x'") }?;
        if args.output_shapes.is_null() || args.output_shapes_capacity < 2 {
            return Err(PkgError::invalid(format!(
                "output_shapes capacity {} (need 2 for output 'y' of rank 2)",
                args.output_shapes_capacity
            )));
        }
        unsafe {
            args.output_shapes.write(batch);
            args.output_shapes.add(1).write(FEATURES);
        }
        Ok(())
    }

    /// Thread-safe run: take a free instance (waiting for one if all are
    /// busy), wait for its previous run's event, launch, record the event.
    ///
    /// # Safety
    /// `args` follows the ABI; its buffers live until the work completes.
    pub unsafe fn run(&self, args: *const aotrun_pkg_run_args) -> PkgResult<()> {
        let (host, args) = unsafe { self.prepare(args) }?;
        let job = unsafe { Job::from_args(&args) }?;
        self.fault.trip()?;
        let slot = self.acquire();
        let inst = &self.instances[slot.index];
        // Query before synchronize, like a pending list: both are illegal
        // while the stream is capturing, which is the point of this path.
        if !host.event_query(inst.event)? {
            host.event_synchronize(inst.event)?;
        }
        job.launch(host, args.stream)?;
        host.event_record(inst.event, args.stream)
    }

    /// Single-threaded run: instance 0, no lock, no event. The caller
    /// serialises calls; legal under stream capture.
    ///
    /// # Safety
    /// As for [`Container::run`].
    pub unsafe fn run_single_threaded(&self, args: *const aotrun_pkg_run_args) -> PkgResult<()> {
        let (host, args) = unsafe { self.prepare(args) }?;
        let job = unsafe { Job::from_args(&args) }?;
        self.fault.trip()?;
        job.launch(host, args.stream)
    }

    unsafe fn prepare(&self, args: *const aotrun_pkg_run_args) -> PkgResult<(&Host, aotrun_pkg_run_args)> {
        let args = unsafe { read_args(args, RUN_ARGS_SIZE_1_0, "run_args") }?;
        match &self.host {
            Some(h) => Ok((h, args)),
            None => Err(PkgError::invalid("this container is metadata-only (num_models = 0) and cannot run")),
        }
    }

    fn acquire(&self) -> Slot<'_> {
        let mut free = lock(&self.free);
        loop {
            if let Some(index) = free.pop() {
                return Slot { container: self, index };
            }
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if let Some(host) = &self.host {
            for inst in &self.instances {
                // The host destroys a container only after its work is done;
                // waiting once more costs nothing and keeps events valid.
                let _ = host.event_synchronize(inst.event);
                host.event_destroy(inst.event);
            }
        }
    }
}

/// A borrowed instance, returned to the pool on drop (also on error).
struct Slot<'a> {
    container: &'a Container,
    index: usize,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        lock(&self.container.free).push(self.index);
        self.container.freed.notify_one();
    }
}

/// A poisoned pool only means another run panicked (and was caught); the
/// index list itself is always consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Validates the input count and returns the inputs.
unsafe fn inputs_of<'a>(ptr: *const DLTensor, n: usize) -> PkgResult<&'a [DLTensor]> {
    if n != 1 {
        return Err(PkgError::invalid(format!("{n} inputs given, the model takes 1 ('x')")));
    }
    if ptr.is_null() {
        return Err(PkgError::invalid("inputs is NULL"));
    }
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// The work of one run, launched onto the host's stream. Buffers are the
/// caller's and stay valid until the stream has run it (ABI contract).
struct Job {
    x: *const f32,
    y: *mut f32,
    n: usize,
}

impl Job {
    unsafe fn from_args(args: &aotrun_pkg_run_args) -> PkgResult<Job> {
        let inputs = unsafe { inputs_of(args.inputs, args.num_inputs) }?;
        if args.num_outputs != 1 {
            return Err(PkgError::invalid(format!("{} outputs given, the model has 1 ('y')", args.num_outputs)));
        }
        if args.outputs.is_null() {
            return Err(PkgError::invalid("outputs is NULL"));
        }
        let (x, n) = unsafe { tensor::check_run(&inputs[0], "input 0 'x'") }?;
        let (y, m) = unsafe { tensor::check_run(&*args.outputs, "output 0 'y'") }?;
        if n != m {
            // check_run fixed the second dimension, so only batch can differ.
            return Err(PkgError::invalid(format!(
                "output 0 'y' has batch {} but input 0 'x' has batch {}",
                m / FEATURES as usize,
                n / FEATURES as usize
            )));
        }
        Ok(Job { x, y, n })
    }

    fn launch(self, host: &Host, stream: abi::aotrun_pkg_stream) -> PkgResult<()> {
        let ctx = Box::into_raw(Box::new(self)) as *mut c_void;
        let r = host.launch(stream, run_job, ctx, drop_job);
        if r.is_err() {
            // The host does not call destroy when launch fails.
            unsafe { drop_job(ctx) };
        }
        r
    }
}

unsafe extern "C" fn run_job(ctx: *mut c_void) -> i32 {
    guard(|| {
        let job = unsafe { &*(ctx as *const Job) };
        unsafe { model::forward(job.x, job.y, job.n) };
        Ok(())
    })
}

unsafe extern "C" fn drop_job(ctx: *mut c_void) {
    // Freeing a Box cannot panic; no guard needed.
    drop(unsafe { Box::from_raw(ctx as *mut Job) });
}

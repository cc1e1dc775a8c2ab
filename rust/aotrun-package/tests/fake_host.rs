//! Drives the package's entry points directly, with a host written here: no
//! libaotrun involved. The host follows the ABI's CPU rules: launch runs at
//! once on an inline stream; while "capturing", launches are recorded and
//! event query/synchronize fail with AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED.
//! (The same package is loaded by the real libaotrun in the `aotrun` crate's
//! tests.)

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use aotrun_rust_affine::abi::*;
use aotrun_rust_affine::*;

type Recorded = (aotrun_pkg_host_fn, usize, aotrun_pkg_ctx_destroy_fn);

#[derive(Default)]
struct FakeHost {
    capturing: AtomicBool,
    recorded: Mutex<Vec<Recorded>>,
    launches: AtomicUsize,
    events_live: AtomicUsize,
}

fn me(ctx: *mut c_void) -> &'static FakeHost {
    unsafe { &*(ctx as *const FakeHost) }
}

unsafe extern "C" fn log_enabled(_: *mut c_void, _: i32) -> i32 {
    1
}
unsafe extern "C" fn log(_: *mut c_void, _: i32, msg: *const std::ffi::c_char) {
    assert!(!msg.is_null());
}
unsafe extern "C" fn alloc(_: *mut c_void, _: usize, _: aotrun_pkg_stream, _: *mut *mut c_void) -> i32 {
    AOTRUN_PKG_ERR_UNSUPPORTED as i32
}
unsafe extern "C" fn free(_: *mut c_void, _: *mut c_void, _: aotrun_pkg_stream) -> i32 {
    AOTRUN_PKG_ERR_UNSUPPORTED as i32
}
unsafe extern "C" fn launch(
    ctx: *mut c_void,
    _stream: aotrun_pkg_stream,
    f: aotrun_pkg_host_fn,
    fctx: *mut c_void,
    destroy: aotrun_pkg_ctx_destroy_fn,
) -> i32 {
    let h = me(ctx);
    h.launches.fetch_add(1, Ordering::SeqCst);
    if h.capturing.load(Ordering::SeqCst) {
        h.recorded.lock().unwrap().push((f, fctx as usize, destroy));
        return 0;
    }
    let st = unsafe { f.unwrap()(fctx) };
    if let Some(d) = destroy {
        unsafe { d(fctx) };
    }
    st
}
unsafe extern "C" fn event_create(ctx: *mut c_void, out: *mut aotrun_pkg_event) -> i32 {
    me(ctx).events_live.fetch_add(1, Ordering::SeqCst);
    unsafe { *out = Box::into_raw(Box::new(0u8)) as aotrun_pkg_event };
    0
}
unsafe extern "C" fn event_destroy(ctx: *mut c_void, ev: aotrun_pkg_event) -> i32 {
    me(ctx).events_live.fetch_sub(1, Ordering::SeqCst);
    drop(unsafe { Box::from_raw(ev as *mut u8) });
    0
}
unsafe extern "C" fn event_record(_: *mut c_void, _: aotrun_pkg_event, _: aotrun_pkg_stream) -> i32 {
    0
}
unsafe extern "C" fn event_wait(ctx: *mut c_void, _: aotrun_pkg_event) -> i32 {
    if me(ctx).capturing.load(Ordering::SeqCst) {
        AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED as i32
    } else {
        0
    }
}
unsafe extern "C" fn stream_sync(ctx: *mut c_void, _: aotrun_pkg_stream) -> i32 {
    unsafe { event_wait(ctx, ptr::null_mut()) }
}
unsafe extern "C" fn is_capturing(ctx: *mut c_void, _: aotrun_pkg_stream, out: *mut i32) -> i32 {
    unsafe { *out = me(ctx).capturing.load(Ordering::SeqCst) as i32 };
    0
}

impl FakeHost {
    fn leak() -> &'static FakeHost {
        Box::leak(Box::default())
    }

    fn table(&'static self) -> aotrun_pkg_host {
        aotrun_pkg_host {
            struct_size: std::mem::size_of::<aotrun_pkg_host>(),
            host_ctx: self as *const FakeHost as *mut c_void,
            log_enabled: Some(log_enabled),
            log: Some(log),
            alloc: Some(alloc),
            free: Some(free),
            launch: Some(launch),
            event_create: Some(event_create),
            event_destroy: Some(event_destroy),
            event_record: Some(event_record),
            event_query: Some(event_wait),
            event_synchronize: Some(event_wait),
            stream_synchronize: Some(stream_sync),
            stream_is_capturing: Some(is_capturing),
        }
    }

    /// Runs the recorded work in order (a graph launch).
    fn replay(&self) -> i32 {
        for &(f, ctx, _) in self.recorded.lock().unwrap().iter() {
            let st = unsafe { f.unwrap()(ctx as *mut c_void) };
            if st != 0 {
                return st;
            }
        }
        0
    }

    fn drop_graph(&self) {
        for (_, ctx, d) in self.recorded.lock().unwrap().drain(..) {
            if let Some(d) = d {
                unsafe { d(ctx as *mut c_void) };
            }
        }
    }
}

fn cpu() -> DLDevice {
    DLDevice { device_type: kDLCPU, device_id: 0 }
}

fn create(host: &aotrun_pkg_host, num_models: i32) -> Result<*mut aotrun_pkg_container, (i32, String)> {
    let args = aotrun_pkg_create_args {
        struct_size: std::mem::size_of::<aotrun_pkg_create_args>(),
        num_models,
        device: cpu(),
        host,
        constants: ptr::null(),
        num_constants: 0,
        package_dir: ptr::null(),
    };
    let mut c = ptr::null_mut();
    match unsafe { aotrun_pkg_container_create(&mut c, &args) } {
        0 => Ok(c),
        st => Err((st, last_error())),
    }
}

fn last_error() -> String {
    unsafe { CStr::from_ptr(aotrun_pkg_get_last_error()) }.to_string_lossy().into_owned()
}

fn f32_tensor(data: *mut f32, shape: &mut [i64]) -> DLTensor {
    DLTensor {
        data: data as *mut c_void,
        device: cpu(),
        ndim: shape.len() as i32,
        dtype: DLDataType { code: kDLFloat as u8, bits: 32, lanes: 1 },
        shape: shape.as_mut_ptr(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    }
}

type RunFn = unsafe extern "C" fn(*mut aotrun_pkg_container, *const aotrun_pkg_run_args) -> i32;

fn run(c: *mut aotrun_pkg_container, f: RunFn, x: &mut [f32], y: &mut [f32]) -> i32 {
    let mut xs = [x.len() as i64 / 4, 4];
    let mut ys = [y.len() as i64 / 4, 4];
    let xt = f32_tensor(x.as_mut_ptr(), &mut xs);
    let mut yt = f32_tensor(y.as_mut_ptr(), &mut ys);
    let args = aotrun_pkg_run_args {
        struct_size: std::mem::size_of::<aotrun_pkg_run_args>(),
        inputs: &xt,
        num_inputs: 1,
        outputs: &mut yt,
        num_outputs: 1,
        stream: ptr::null_mut(),
    };
    unsafe { f(c, &args) }
}

#[test]
fn reports_version_and_specs() {
    assert_eq!(aotrun_pkg_abi_version(), (1 << 16) | 1);
    let host = FakeHost::leak().table();
    let c = create(&host, 0).unwrap(); // metadata only, as the host does at open
    let mut n = 0usize;
    assert_eq!(unsafe { aotrun_pkg_container_get_num_inputs(c, &mut n) }, 0);
    assert_eq!(n, 1);
    assert_eq!(unsafe { aotrun_pkg_container_get_num_outputs(c, &mut n) }, 0);
    assert_eq!(n, 1);

    let mut spec: aotrun_pkg_tensor_spec = unsafe { std::mem::zeroed() };
    spec.struct_size = std::mem::size_of::<aotrun_pkg_tensor_spec>();
    assert_eq!(unsafe { aotrun_pkg_container_get_output_spec(c, 0, &mut spec) }, 0);
    assert_eq!(spec.struct_size, std::mem::size_of::<aotrun_pkg_tensor_spec>());
    assert_eq!(unsafe { CStr::from_ptr(spec.name) }.to_str().unwrap(), "y");
    assert_eq!((spec.dtype.code as u32, spec.dtype.bits, spec.dtype.lanes), (kDLFloat, 32, 1));
    assert_eq!(unsafe { std::slice::from_raw_parts(spec.shape, spec.ndim as usize) }, &[-1, 4]);

    // An older, smaller caller struct: only its bytes are written.
    let mut small: aotrun_pkg_tensor_spec = unsafe { std::mem::zeroed() };
    small.struct_size = 16;
    assert_eq!(unsafe { aotrun_pkg_container_get_input_spec(c, 0, &mut small) }, 0);
    assert_eq!(small.struct_size, 16);
    assert!(!small.name.is_null());
    assert_eq!(small.ndim, 0, "bytes past the caller's struct_size were written");

    assert_eq!(unsafe { aotrun_pkg_container_get_input_spec(c, 1, &mut spec) }, 1);
    assert!(last_error().contains("input index 1 out of range"), "{}", last_error());

    // A metadata-only container cannot run.
    let (mut x, mut y) = (vec![0.0f32; 4], vec![0.0f32; 4]);
    assert_eq!(run(c, aotrun_pkg_container_run, &mut x, &mut y), 1);
    assert!(last_error().contains("metadata-only"), "{}", last_error());
    assert_eq!(unsafe { aotrun_pkg_container_destroy(c) }, 0);
}

#[test]
fn output_shapes_follow_the_input() {
    let host = FakeHost::leak().table();
    let c = create(&host, 1).unwrap();
    let mut shape = [3i64, 4];
    let x = f32_tensor(ptr::null_mut(), &mut shape);
    let mut out = [0i64; 2];
    let mut args = aotrun_pkg_shape_args {
        struct_size: std::mem::size_of::<aotrun_pkg_shape_args>(),
        inputs: &x,
        num_inputs: 1,
        output_shapes: out.as_mut_ptr(),
        output_shapes_capacity: 2,
    };
    assert_eq!(unsafe { aotrun_pkg_container_get_output_shapes(c, &args) }, 0);
    assert_eq!(out, [3, 4]);
    args.output_shapes_capacity = 1;
    assert_eq!(unsafe { aotrun_pkg_container_get_output_shapes(c, &args) }, 1);
    assert!(last_error().contains("capacity 1"), "{}", last_error());

    let mut bad_shape = [3i64, 5];
    let bad = f32_tensor(ptr::null_mut(), &mut bad_shape);
    args.inputs = &bad;
    args.output_shapes_capacity = 2;
    assert_eq!(unsafe { aotrun_pkg_container_get_output_shapes(c, &args) }, 1);
    assert!(last_error().contains("input 0 'x': shape [3, 5]"), "{}", last_error());
    unsafe { aotrun_pkg_container_destroy(c) };
}

#[test]
fn both_run_paths_compute_2x_plus_1_through_launch() {
    let fake = FakeHost::leak();
    let host = fake.table();
    let c = create(&host, 2).unwrap();
    assert_eq!(fake.events_live.load(Ordering::SeqCst), 2, "one event per instance");
    let mut x: Vec<f32> = (0..8).map(|i| i as f32 - 3.0).collect();
    let want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    for f in [aotrun_pkg_container_run as RunFn, aotrun_pkg_container_run_single_threaded] {
        let mut y = vec![0.0f32; 8];
        let before = fake.launches.load(Ordering::SeqCst);
        assert_eq!(run(c, f, &mut x, &mut y), 0, "{}", last_error());
        assert_eq!(y, want);
        assert_eq!(fake.launches.load(Ordering::SeqCst), before + 1, "work goes through launch");
    }
    unsafe { aotrun_pkg_container_destroy(c) };
    assert_eq!(fake.events_live.load(Ordering::SeqCst), 0, "events released");
}

#[test]
fn capture_rejects_threaded_run_and_records_single_threaded() {
    let fake = FakeHost::leak();
    let host = fake.table();
    let c = create(&host, 1).unwrap();
    let mut x = vec![1.0f32, 2.0, 3.0, 4.0];
    let mut y = vec![0.0f32; 4];
    fake.capturing.store(true, Ordering::SeqCst);
    assert_eq!(run(c, aotrun_pkg_container_run, &mut x, &mut y), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED as i32);
    assert!(last_error().contains("not permitted when stream is capturing"), "{}", last_error());
    assert_eq!(run(c, aotrun_pkg_container_run_single_threaded, &mut x, &mut y), 0);
    fake.capturing.store(false, Ordering::SeqCst);
    assert_eq!(y, [0.0; 4], "recorded, not executed");
    assert_eq!(fake.replay(), 0);
    assert_eq!(y, [3.0, 5.0, 7.0, 9.0]);
    x[0] = 10.0; // a replay reads the captured buffers again
    assert_eq!(fake.replay(), 0);
    assert_eq!(y[0], 21.0);
    fake.drop_graph();
    unsafe { aotrun_pkg_container_destroy(c) };
}

#[test]
fn bad_arguments_are_statuses_with_messages() {
    let host = FakeHost::leak().table();
    let c = create(&host, 1).unwrap();
    let mut x = vec![0.0f32; 8];
    let mut y = vec![0.0f32; 4];
    assert_eq!(run(c, aotrun_pkg_container_run, &mut x, &mut y), 1);
    assert!(last_error().contains("output 0 'y' has batch 1 but input 0 'x' has batch 2"), "{}", last_error());
    assert_eq!(run(ptr::null_mut(), aotrun_pkg_container_run, &mut x, &mut y), 1);
    assert!(last_error().contains("container is NULL"));
    unsafe { aotrun_pkg_container_destroy(c) };

    // Non-CPU device: UNSUPPORTED, naming the device type.
    let mut args = aotrun_pkg_create_args {
        struct_size: std::mem::size_of::<aotrun_pkg_create_args>(),
        num_models: 1,
        device: DLDevice { device_type: kDLCUDA, device_id: 0 },
        host: &host,
        constants: ptr::null(),
        num_constants: 0,
        package_dir: ptr::null(),
    };
    let mut out = ptr::null_mut();
    assert_eq!(unsafe { aotrun_pkg_container_create(&mut out, &args) }, AOTRUN_PKG_ERR_UNSUPPORTED as i32);
    assert!(last_error().contains("device type 2"), "{}", last_error());

    // Unexpected constants are named.
    let mut shape = [1i64];
    let mut w = [0.0f32];
    let constant = aotrun_pkg_constant { name: c"w0".as_ptr(), tensor: f32_tensor(w.as_mut_ptr(), &mut shape) };
    args.device = cpu();
    args.constants = &constant;
    args.num_constants = 1;
    assert_eq!(unsafe { aotrun_pkg_container_create(&mut out, &args) }, 1);
    assert!(last_error().contains("unexpected constant 'w0'"), "{}", last_error());

    // A struct_size below 1.0 is refused rather than over-read.
    args.struct_size = 8;
    assert_eq!(unsafe { aotrun_pkg_container_create(&mut out, &args) }, 1);
    assert!(out.is_null(), "out untouched on failure");
}

#[test]
fn threaded_run_from_many_threads() {
    let host = FakeHost::leak().table();
    let c = create(&host, 2).unwrap() as usize;
    std::thread::scope(|s| {
        for t in 0..8 {
            s.spawn(move || {
                for i in 0..200 {
                    let v = (t * 1000 + i) as f32;
                    let mut x = vec![v; 12];
                    let mut y = vec![0.0f32; 12];
                    let st = run(c as *mut _, aotrun_pkg_container_run, &mut x, &mut y);
                    assert_eq!(st, 0, "{}", last_error());
                    assert!(y.iter().all(|&o| o == v * 2.0 + 1.0));
                }
            });
        }
    });
    unsafe { aotrun_pkg_container_destroy(c as *mut _) };
}

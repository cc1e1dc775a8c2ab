//! Frozen client of the aotrun crate 1.2 (written against 1.2.0 as of
//! commit 23d9897, with what was added to 1.2 before its release: the
//! constants API and the `_or_refused` scope methods; frozen from the
//! release on — compat/rust/README.md).
//!
//! This file is the compile-time half: every public item of crate 1.2 —
//! types, fields, variants, functions, methods, constants, traits and the
//! trait implementations a user can rely on (including Send/Sync) — named
//! with the types 1.2 gave it. It must compile against every later 1.x
//! crate. The runtime half is in tests/.

#![allow(clippy::type_complexity)]

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::time::Duration;

use aotrun::log::LogHandler;
use aotrun::{
    AsyncOutputs, BoundGraph, Capture, CaptureMode, CaptureRunner, ConstantInfo, ConstantsControl, ConstantsState,
    DataType, Device, DeviceType, Element, Error, ErrorCode, Event, Graph, Level, LevelFilter, Mode, OpenOptions,
    OwnedTensor, Package, PackageInfo, Refused, RunBuffers, RunError, RunFuture, RunnerBuilder, RunnerStats, Scope,
    SerialRunner, Shape, Staged, Stream, Swapped, SymbolInfo, Tensor, TensorInfo, TensorMut, TensorRef, ThreadedRunner,
    Update,
};

/// The packages directory of the build under test (ctest sets
/// `AOTRUN_PACKAGES_DIR`). A client that cannot find its packages fails; it
/// never skips.
pub fn packages_dir() -> PathBuf {
    let dir = std::env::var_os("AOTRUN_PACKAGES_DIR")
        .filter(|d| !d.is_empty())
        .expect("AOTRUN_PACKAGES_DIR must name <build>/packages (ctest rust_compat_* sets it)");
    let dir = PathBuf::from(dir);
    assert!(dir.join("mlp").is_dir(), "{} holds no mlp package", dir.display());
    dir
}

fn is_send<T: Send>() {}
fn is_sync<T: Sync>() {}
fn is_value<T: Debug + Clone + PartialEq + Eq>() {}
fn is_key<T: Debug + Clone + Copy + PartialEq + Eq + Hash>() {}
fn is_error<T: std::error::Error + Display + Send + Sync + 'static>() {}
fn is_element<T: Element>() -> DataType {
    T::DTYPE
}
fn is_capture_runner<R: CaptureRunner>() {}
fn is_async_outputs<'t, O: AsyncOutputs<'t>>() {}

/// Traits and auto traits of 1.2's types.
pub fn traits() {
    is_key::<DataType>();
    is_key::<Device>();
    is_key::<DeviceType>();
    is_key::<ErrorCode>();
    is_key::<Mode>();
    is_key::<CaptureMode>();
    is_key::<Level>();
    is_key::<LevelFilter>();
    fn ordered<T: Ord + PartialOrd>() {}
    ordered::<Level>();
    fn displayed<T: Display>() {}
    displayed::<DataType>();
    displayed::<Device>();
    displayed::<ErrorCode>();
    displayed::<Mode>();
    displayed::<Level>();
    is_value::<Error>();
    is_error::<Error>();
    is_value::<PackageInfo>();
    is_value::<TensorInfo>();
    is_value::<SymbolInfo>();
    is_value::<RunnerStats>();
    fn options<T: Debug + Clone + Default + Send + Sync>() {}
    options::<OpenOptions>();
    fn builder<T: Debug + Clone + Send + Sync>() {}
    builder::<RunnerBuilder<'static>>();
    fn from_load_error<T: From<aotrun::sys::LoadError>>() {}
    from_load_error::<Error>();

    is_send::<Package>();
    is_sync::<Package>();
    is_send::<ThreadedRunner>();
    is_sync::<ThreadedRunner>();
    is_send::<SerialRunner>();
    is_send::<TensorRef<'static>>();
    is_sync::<TensorRef<'static>>();
    fn copied<T: Copy + Clone + Debug>() {}
    copied::<TensorRef<'static>>();
    is_send::<TensorMut<'static>>();
    is_sync::<TensorMut<'static>>();
    is_send::<Event<'static>>();
    is_sync::<Event<'static>>();
    is_send::<Scope<'static, 'static>>();
    is_sync::<Scope<'static, 'static>>();
    fn debug<T: Debug>() {}
    debug::<RunFuture>();
    debug::<Package>();
    debug::<ThreadedRunner>();
    debug::<SerialRunner>();
    debug::<TensorMut<'static>>();
    debug::<OwnedTensor>();
    debug::<Event<'static>>();
    debug::<Scope<'static, 'static>>();
    debug::<Stream>();
    debug::<Capture<'static, 'static>>();
    debug::<Graph<'static>>();

    // New in 1.2.
    is_error::<Refused<[TensorMut<'static>; 1]>>();
    is_error::<Refused<Vec<TensorMut<'static>>>>();
    fn into_error<T: Into<Error>>() {}
    into_error::<Refused<TensorMut<'static>>>();
    into_error::<RunError>();
    is_error::<RunError>();
    debug::<RunBuffers>();
    is_send::<RunBuffers>();
    is_sync::<RunBuffers>();
    is_send::<RunError>();
    fn future<F: std::future::Future<Output = Result<RunBuffers, RunError>> + Send + Unpin + Debug + 'static>() {}
    future::<RunFuture>();
    future::<aotrun::future::RunFuture>();
    is_send::<Tensor>();
    is_sync::<Tensor>();
    debug::<Tensor>();
    fn shape<T: Debug + Clone + PartialEq + Eq + Hash>() {}
    shape::<Shape>();
    fn into_shape<T: Into<Shape>>() {}
    into_shape::<[usize; 2]>();
    into_shape::<&[usize]>();
    into_shape::<Vec<usize>>();
    into_shape::<&[i64]>();
    into_shape::<Vec<i64>>();
    debug::<BoundGraph<'static>>();
    let halves: [DataType; 2] = [is_element::<half::f16>(), is_element::<half::bf16>()];
    let _ = halves;

    // Constants (added to 1.2 before its release): the control and an
    // update in progress may move to and be shared with other threads.
    is_key::<Update>();
    is_key::<aotrun::constants::Update>();
    fn snapshot<T: Debug + Clone + Copy + PartialEq + Eq + Send + Sync>() {}
    snapshot::<ConstantsState>();
    snapshot::<aotrun::constants::ConstantsState>();
    snapshot::<ConstantInfo<'static>>();
    is_send::<ConstantsControl>();
    is_sync::<ConstantsControl>();
    debug::<ConstantsControl>();
    is_send::<Staged<'static>>();
    is_sync::<Staged<'static>>();
    debug::<Staged<'static>>();
    is_send::<Swapped<'static>>();
    is_sync::<Swapped<'static>>();
    debug::<Swapped<'static>>();
    debug::<aotrun::constants::ConstantsControl>();
    debug::<aotrun::constants::Staged<'static>>();
    debug::<aotrun::constants::Swapped<'static>>();

    is_capture_runner::<ThreadedRunner>();
    is_capture_runner::<SerialRunner>();
    is_async_outputs::<TensorMut<'static>>();
    is_async_outputs::<[TensorMut<'static>; 2]>();
    is_async_outputs::<Vec<TensorMut<'static>>>();

    let all: [DataType; 10] = [
        is_element::<f32>(),
        is_element::<f64>(),
        is_element::<i8>(),
        is_element::<i16>(),
        is_element::<i32>(),
        is_element::<i64>(),
        is_element::<u8>(),
        is_element::<u16>(),
        is_element::<u32>(),
        is_element::<u64>(),
    ];
    let _ = all;
}

/// Constants, fields and variants, with 1.2's types.
pub fn values() {
    let dtypes: [DataType; 12] = [
        DataType::F16,
        DataType::F32,
        DataType::F64,
        DataType::BF16,
        DataType::I8,
        DataType::I16,
        DataType::I32,
        DataType::I64,
        DataType::U8,
        DataType::U16,
        DataType::U32,
        DataType::U64,
    ];
    for d in dtypes {
        let DataType { code, bits, lanes }: DataType = d;
        let _: (u8, u8, u16) = (code, bits, lanes);
        let _: usize = d.size_bytes();
        let raw: aotrun::sys::DLDataType = d.to_raw();
        let _: DataType = DataType::from_raw(raw);
    }
    // A struct literal: DataType's fields are all public in 1.2.
    let _ = DataType { code: 2, bits: 32, lanes: 1 };

    const CPU: Device = Device::cpu();
    const CUDA: Device = Device::cuda(0);
    let Device { device_type, id }: Device = CPU;
    let _: (DeviceType, i32) = (device_type, id);
    let _ = Device { device_type: DeviceType::Cuda, id: 1 };
    let raw: aotrun::sys::DLDevice = CUDA.to_raw();
    let _: Device = Device::from_raw(raw);
    for t in [DeviceType::Cpu, DeviceType::Cuda, DeviceType::CudaHost, DeviceType::Other(7u32)] {
        // #[non_exhaustive]: a wildcard arm is required.
        let _: &str = match t {
            DeviceType::Cpu => "cpu",
            DeviceType::Cuda => "cuda",
            DeviceType::CudaHost => "cuda_host",
            DeviceType::Other(n) => {
                let _: u32 = n;
                "other"
            }
            _ => "newer",
        };
    }

    let codes = [
        ErrorCode::InvalidArgument,
        ErrorCode::NotFound,
        ErrorCode::LoadFailed,
        ErrorCode::AbiMismatch,
        ErrorCode::MissingSymbol,
        ErrorCode::Integrity,
        ErrorCode::BadPackage,
        ErrorCode::Unsupported,
        ErrorCode::Package,
        ErrorCode::OutOfMemory,
        ErrorCode::WouldBlock,
        ErrorCode::Timeout,
        ErrorCode::CaptureUnsupported,
        ErrorCode::CaptureInvalidated,
        ErrorCode::Device,
        ErrorCode::Internal,
        ErrorCode::Unknown(999u32),
    ];
    for c in codes {
        let raw: aotrun::sys::aotrun_code = c.raw();
        let _: ErrorCode = ErrorCode::from_raw(raw);
        let _: &'static str = c.name();
        let e: Error = Error::new(c, "message");
        let e2: Error = Error::new(c, String::from("message"));
        let _: ErrorCode = e.code();
        let _: &str = e.message();
        let _: bool = e == e2;
    }
    let _: aotrun::Result<()> = Ok(());
    let _: aotrun::Result<(), String> = Err(String::new());

    for m in [Mode::Threaded, Mode::SingleThreaded, Mode::Graph, Mode::Unknown(9u32)] {
        let raw: aotrun::sys::aotrun_mode = m.to_raw();
        let _: Mode = Mode::from_raw(raw);
        let _: &'static str = m.name();
        let _: &str = match m {
            Mode::Threaded | Mode::SingleThreaded | Mode::Graph => "known",
            Mode::Unknown(n) => {
                let _: u32 = n;
                "unknown"
            }
            _ => "newer",
        };
    }
    let _: [aotrun::runner::Mode; 1] = [aotrun::runner::Mode::Graph];
    for c in [CaptureMode::Global, CaptureMode::ThreadLocal, CaptureMode::Relaxed] {
        let _: aotrun::stream::CaptureMode = c;
    }
    for l in [Level::Error, Level::Warn, Level::Info, Level::Debug] {
        let _: &'static str = l.name();
        let _: aotrun::log::Level = l;
    }
    let _: [aotrun::log::LevelFilter; 5] =
        [LevelFilter::Off, LevelFilter::Error, LevelFilter::Warn, LevelFilter::Info, LevelFilter::Debug];
    for u in [Update::Full, aotrun::constants::Update::Partial] {
        // Update is exhaustive in 1.2: a match needs no wildcard arm.
        let _: &str = match u {
            Update::Full => "full",
            Update::Partial => "partial",
        };
    }
}

/// Every field of `ConstantsState` (added to 1.2 before its release), with
/// 1.2's types. `#[non_exhaustive]`: a pattern needs `..`, no literal.
pub fn constants_state_fields(state: &ConstantsState) -> (u64, Option<u64>) {
    let aotrun::constants::ConstantsState {
        active_generation,
        inactive_generation,
        updates,
        swaps,
        graph_recaptures,
        ..
    } = state;
    let _: (&u64, &Option<u64>, &u64, &u64, &u64) =
        (active_generation, inactive_generation, updates, swaps, graph_recaptures);
    let ConstantsState { active_generation, inactive_generation, .. } = *state;
    (active_generation, inactive_generation)
}

/// Every field of the info structs, with 1.2's types.
pub fn fields(info: &PackageInfo, t: &TensorInfo, s: &SymbolInfo, st: &RunnerStats) {
    let PackageInfo {
        name,
        path,
        format,
        abi_version,
        device,
        num_inputs,
        num_outputs,
        num_constants,
        constant_bytes,
        num_symbols,
        hashes_verified,
        open_ns,
        verify_ns,
        dlopen_ns,
        weights_ns,
        metadata_ns,
        ..
    } = info;
    let _: (&String, &PathBuf, &String, &(u32, u32), &Device) = (name, path, format, abi_version, device);
    let _: (&usize, &usize, &usize, &u64, &usize, &bool) =
        (num_inputs, num_outputs, num_constants, constant_bytes, num_symbols, hashes_verified);
    let _: [&u64; 5] = [open_ns, verify_ns, dlopen_ns, weights_ns, metadata_ns];

    // TensorInfo and SymbolInfo are exhaustive in 1.2: literals compile.
    let _ = TensorInfo { name: String::new(), dtype: DataType::F32, shape: vec![-1, 256], known: true };
    let _ = SymbolInfo { name: String::new(), required: true, found: true, since: (1, 0) };
    let TensorInfo { name, dtype, shape, known, .. } = t;
    let _: (&String, &DataType, &Vec<i64>, &bool) = (name, dtype, shape, known);

    let SymbolInfo { name, required, found, since, .. } = s;
    let _: (&String, &bool, &bool, &(u32, u32)) = (name, required, found, since);

    let aotrun::runner::RunnerStats {
        requested_mode,
        effective_mode,
        num_models,
        max_inflight,
        fallback_reason,
        runs,
        failures,
        fallback_runs,
        graph_captures,
        graph_replays,
        graph_warmups,
        graph_capture_ns,
        graph_pool_bytes,
        graphs_cached,
        eager_cache_full,
        eager_frozen,
        eager_capture_failed,
        eager_caller_capturing,
        inflight,
        peak_inflight,
        async_submitted,
        async_completed,
        async_failed,
        submit_blocked_ns,
        would_block,
        ..
    } = st;
    let _: (&Mode, &Mode, &i32, &i32, &String) =
        (requested_mode, effective_mode, num_models, max_inflight, fallback_reason);
    let _: [&u64; 20] = [
        runs,
        failures,
        fallback_runs,
        graph_captures,
        graph_replays,
        graph_warmups,
        graph_capture_ns,
        graph_pool_bytes,
        graphs_cached,
        eager_cache_full,
        eager_frozen,
        eager_capture_failed,
        eager_caller_capturing,
        inflight,
        peak_inflight,
        async_submitted,
        async_completed,
        async_failed,
        submit_blocked_ns,
        would_block,
    ];
}

/// Every function and method of 1.2, called with the argument types 1.2
/// takes and bound to the result types 1.2 returns. Not run (tests/ runs
/// them); it has to compile.
pub fn signatures(package: &Package, threaded: &ThreadedRunner, serial: &mut SerialRunner) -> aotrun::Result<()> {
    let _: aotrun::Result<String> = aotrun::init();
    #[cfg(feature = "load-dynamic")]
    let _: aotrun::Result<String> = aotrun::init_from("libaotrun.so.1");
    #[cfg(feature = "load-dynamic")]
    let _: aotrun::Result<String> = aotrun::init_from(PathBuf::from("/usr/lib"));
    let _: (u32, u32, u32) = aotrun::version();
    let _: &'static str = aotrun::version_string();
    let handler: LogHandler = Box::new(|level: Level, msg: &str| eprintln!("{level} {msg}"));
    aotrun::set_log_handler(handler);
    aotrun::log::set_log_handler(Box::new(|_, _| {}));
    aotrun::clear_log_handler();
    aotrun::log::clear_log_handler();
    aotrun::set_log_level(LevelFilter::Warn);
    aotrun::log::set_log_level(aotrun::log::LevelFilter::Info);
    let _: LevelFilter = aotrun::log_level();
    let _: LevelFilter = aotrun::log::log_level();

    let _: aotrun::Result<Package> = Package::open("build/packages/mlp");
    let _: aotrun::Result<Package> = Package::open(PathBuf::from("x"));
    let options: OpenOptions = OpenOptions::new()
        .verify_hashes(true)
        .expected_sha256("00")
        .expected_sha256(String::from("00"))
        .allow_untrusted_files(false)
        .pt2_model("model")
        .pt2_model(String::from("model"))
        .libtorch("/opt/libtorch")
        .libtorch(PathBuf::from("/opt/libtorch"));
    let _: OpenOptions = OpenOptions::default();
    let _: aotrun::Result<Package> = options.open("x");
    let _: aotrun::Result<Package> = Package::open_with("x", &options);
    let _: aotrun::Result<PackageInfo> = package.info();
    let _: aotrun::Result<String> = package.name();
    let _: aotrun::Result<TensorInfo> = package.input(0);
    let _: aotrun::Result<TensorInfo> = package.output(0);
    let _: aotrun::Result<Vec<TensorInfo>> = package.inputs();
    let _: aotrun::Result<Vec<TensorInfo>> = package.outputs();
    let _: aotrun::Result<Vec<SymbolInfo>> = package.symbols();
    let _: Result<(), String> = package.mode_available(Mode::Graph);
    let shapes: [&[i64]; 1] = [&[1, 256]];
    let builder: RunnerBuilder<'_> = package
        .runner()
        .num_models(2)
        .strict(false)
        .device(Device::cpu())
        .graph_warmup_runs(1)
        .graph_cache_limit(4)
        .graph_frozen(false)
        .capture_shapes(&shapes)
        .max_inflight(4);
    let _: aotrun::runner::RunnerBuilder<'_> = builder.clone();
    let _: aotrun::Result<ThreadedRunner> = builder.threaded();
    let _: aotrun::Result<SerialRunner> = builder.single_threaded();
    let _: aotrun::Result<aotrun::runner::SerialRunner> = builder.graph();

    let x = vec![0.0f32; 256];
    let mut y = vec![0.0f32; 64];
    let shape = [1i64, 256];
    let out_shape = [1i64, 64];
    let bytes = [0u8; 1024];
    let mut out_bytes = [0u8; 256];
    let input: TensorRef<'_> = TensorRef::new(&x, &shape)?;
    let _: aotrun::Result<TensorRef<'_>> = TensorRef::from_bytes(&bytes, DataType::F32, &shape);
    let _: aotrun::Result<TensorRef<'_>> = unsafe {
        TensorRef::from_raw_parts(x.as_ptr().cast::<std::ffi::c_void>(), DataType::F32, &shape, Device::cpu())
    };
    let _: &[i64] = input.shape();
    let _: DataType = input.dtype();
    let _: Device = input.device();
    let _: &aotrun::sys::DLTensor = input.as_raw();
    {
        let out: TensorMut<'_> = TensorMut::new(&mut y, &out_shape)?;
        let _: &[i64] = out.shape();
        let _: DataType = out.dtype();
        let _: Device = out.device();
        let _: aotrun::Result<&[f32]> = out.as_slice::<f32>();
        let _: &aotrun::sys::DLTensor = out.as_raw();
    }
    let _: aotrun::Result<TensorMut<'_>> = TensorMut::from_bytes(&mut out_bytes, DataType::F32, &out_shape);
    let _: aotrun::Result<TensorMut<'_>> = unsafe {
        TensorMut::from_raw_parts(y.as_mut_ptr().cast::<std::ffi::c_void>(), DataType::F32, &out_shape, Device::cpu())
    };

    let inputs = [input];
    let _: aotrun::Result<Vec<Vec<i64>>> = threaded.output_shapes(&inputs);
    let _: Mode = threaded.mode();
    let _: aotrun::Result<RunnerStats> = threaded.stats();
    let _: *mut aotrun::sys::aotrun_runner = threaded.as_raw();
    let _: aotrun::Result<()> = threaded.run(&inputs, &mut [TensorMut::new(&mut y, &out_shape)?]);
    let owned: aotrun::Result<Vec<OwnedTensor>> = threaded.run_alloc(&inputs);
    if let Ok(owned) = owned {
        for t in &owned {
            let _: &[i64] = t.shape();
            let _: DataType = t.dtype();
            let _: Device = t.device();
            let _: aotrun::Result<&[f32]> = t.as_slice::<f32>();
            let _: aotrun::Result<Vec<f32>> = t.to_vec::<f32>();
            let _: &aotrun::sys::DLTensor = t.as_raw();
        }
    }
    let _: Mode = serial.mode();
    let _: aotrun::Result<RunnerStats> = serial.stats();
    let _: *mut aotrun::sys::aotrun_runner = serial.as_raw();
    let _: aotrun::Result<Vec<Vec<i64>>> = serial.output_shapes(&inputs);
    let _: aotrun::Result<()> = serial.run(&inputs, &mut [TensorMut::new(&mut y, &out_shape)?]);
    let _: aotrun::Result<Vec<OwnedTensor>> = serial.run_alloc(&inputs);
    let _: aotrun::Result<()> = serial.evict_graphs();
    let _: aotrun::Result<()> = serial.freeze_graphs();

    // New in 1.2: owned tensors, the one-call float32 run, owned runs as
    // futures, input_dims.
    let t: aotrun::Result<Tensor> = Tensor::from_vec(vec![0.0f32; 256], [1usize, 256]);
    let _: aotrun::Result<Tensor> = Tensor::from_vec(vec![0i64; 4], vec![2i64, 2]);
    let _: aotrun::Result<Tensor> = Tensor::from_vec(vec![0u8; 4], &[4usize][..]);
    let _: aotrun::Result<Tensor> = Tensor::zeros::<f32>(vec![1usize, 64]);
    let _: aotrun::Result<Tensor> = Tensor::zeros::<half::f16>(&[1i64, 64][..]);
    if let Ok(mut t) = t {
        let _: &[i64] = t.shape();
        let _: Vec<usize> = t.dims();
        let _: DataType = t.dtype();
        let _: usize = t.len();
        let _: bool = t.is_empty();
        let _: aotrun::Result<&[f32]> = t.as_slice::<f32>();
        let _: aotrun::Result<&mut [f32]> = t.as_mut_slice::<f32>();
        let _: TensorRef<'_> = t.view();
        let _: TensorMut<'_> = t.view_mut();
        let _: aotrun::Result<Vec<f32>> = t.into_vec::<f32>();
    }
    let _: aotrun::Result<Tensor> = threaded.run_f32(&x, [1usize, 256]);
    let _: aotrun::Result<Tensor> = serial.run_f32(&x, vec![1usize, 256]);
    let _: aotrun::Result<Vec<Vec<usize>>> = threaded.input_dims(package, 4);
    let _: aotrun::Result<Vec<Vec<usize>>> = serial.input_dims(package, 4);
    let fut: RunFuture = threaded.run_owned(vec![], vec![]);
    let done: Result<RunBuffers, RunError> = aotrun::block_on(fut);
    match done {
        Ok(RunBuffers { inputs, outputs }) => {
            let _: (Vec<Tensor>, Vec<Tensor>) = (inputs, outputs);
        }
        Err(e) => {
            let _: ErrorCode = e.code();
            let RunError { error, buffers } = e;
            let _: (Error, RunBuffers) = (error, buffers);
        }
    }
    let _: Result<RunBuffers, RunError> = aotrun::future::block_on(threaded.run_owned(vec![], vec![]));
    let _: u32 = aotrun::block_on(async { 1u32 });

    let mut stream: Stream = Stream::new()?;
    let _: aotrun::Result<()> = stream.synchronize();
    let _: bool = stream.is_capturing();
    let _: *mut aotrun::sys::aotrun_stream = stream.as_raw();
    let _: aotrun::Result<()> =
        threaded.run_on_stream(&mut stream, &inputs, &mut [TensorMut::new(&mut y, &out_shape)?]);
    let _: aotrun::Result<()> = serial.run_on_stream(&mut stream, &inputs, &mut [TensorMut::new(&mut y, &out_shape)?]);
    {
        let mut capture: Capture<'_, '_> = stream.begin_capture(serial, CaptureMode::ThreadLocal)?;
        let _: aotrun::Result<()> = capture.run(&inputs, &mut [TensorMut::new(&mut y, &out_shape)?]);
        let graph: aotrun::Result<Graph<'_>> = capture.end();
        let _ = graph;
    }
    // New in 1.2: a captured graph that owns its buffers.
    let ins: Vec<Tensor> = vec![Tensor::zeros::<f32>([1usize, 256])?];
    let outs: Vec<Tensor> = vec![Tensor::zeros::<f32>([1usize, 64])?];
    let bound: aotrun::Result<BoundGraph<'_>> = stream.capture_owned(serial, CaptureMode::ThreadLocal, ins, outs);
    if let Ok(mut g) = bound {
        let _: aotrun::Result<&mut [f32]> = g.input_mut::<f32>(0);
        let _: aotrun::Result<()> = g.launch(&mut stream);
        let _: aotrun::Result<&[f32]> = g.output::<f32>(0);
        let _: &[Tensor] = g.inputs();
        let _: &[Tensor] = g.outputs();
        let _: usize = g.num_nodes();
        let _: (Vec<Tensor>, Vec<Tensor>) = g.into_buffers();
    }
    let _: Option<aotrun::stream::BoundGraph<'static>> = None;
    Ok(())
}

/// The asynchronous API of 1.2. `try_run_async` and `run_async_timeout`
/// are used the way 1.2's users can keep using them (`?`, `.code()` on the
/// error): 1.2.0 made them return `Refused<O>`, which broke 1.1's callers
/// and was reverted (compat/rust/README.md); code that read
/// `Refused::outputs` from them moves to the `_or_refused` methods, used here
/// with their `Refused<O>` results (outputs given back and retried).
/// `Refused` itself, new in 1.2, is used in full.
pub fn scopes(threaded: &ThreadedRunner, serial: &mut SerialRunner, block: bool) -> aotrun::Result<usize> {
    let x = vec![0.0f32; 256];
    let shape = [1i64, 256];
    let out_shape = [1i64, 64];
    let mut ys = vec![vec![0.0f32; 64]; 7];
    let [a, b, c, d, e, f, g] = &mut ys[..] else { unreachable!() };
    let n: aotrun::Result<usize> = threaded.scope(|s: &Scope<'_, '_>| -> aotrun::Result<usize> {
        let input = [TensorRef::new(&x, &shape)?];
        let event: Event<'_> = if block {
            s.run_async(&input, [TensorMut::new(a, &out_shape)?])?
        } else {
            s.try_run_async(&input, [TensorMut::new(a, &out_shape)?])?
        };
        let timed: Event<'_> =
            s.run_async_timeout(&input, vec![TensorMut::new(b, &out_shape)?], Duration::from_secs(10))?;
        match s.try_run_async(&input, TensorMut::new(c, &out_shape)?) {
            Ok(e) => e.wait()?,
            Err(refused) if refused.code() == ErrorCode::WouldBlock => {}
            Err(refused) => return Err(refused.into()),
        }
        let r = s.try_run_async(&input, [TensorMut::new(d, &out_shape)?]).map_err(Error::from);
        let _: aotrun::Result<Event<'_>> = r;
        // The outputs-back forms: a refusal hands the views back for a retry.
        let tried: Result<Event<'_>, Refused<[TensorMut<'_>; 1]>> =
            s.try_run_async_or_refused(&input, [TensorMut::new(f, &out_shape)?]);
        let retried: Event<'_> = match tried {
            Ok(event) => event,
            Err(Refused { error, outputs }) => {
                let _: Error = error;
                s.run_async(&input, outputs)?
            }
        };
        let timed_out: Result<Event<'_>, Refused<Vec<TensorMut<'_>>>> =
            s.run_async_timeout_or_refused(&input, vec![TensorMut::new(g, &out_shape)?], Duration::from_secs(10));
        let timed_out: Event<'_> = match timed_out {
            Ok(event) => event,
            Err(refused) if refused.code() == ErrorCode::Timeout => s.run_async(&input, refused.outputs)?,
            Err(refused) => return Err(Error::from(refused)),
        };
        retried.wait()?;
        timed_out.wait()?;
        let _: aotrun::Result<()> = event.wait();
        let _: aotrun::Result<()> = timed.wait_timeout(Duration::from_secs(1));
        let _: bool = event.is_ready();
        Ok(s.pending())
    });
    let m: usize = serial.scope(|s: &aotrun::scope::Scope<'_, '_>| {
        let r: Result<aotrun::scope::Event<'_>, Error> = s.run_async(&[], [TensorMut::new(e, &out_shape).unwrap()]);
        let _ = r;
        s.pending()
    });
    Ok(n? + m)
}

/// `Refused` (new in 1.2): fields, methods, traits. Gives the view back.
pub fn refused(out: TensorMut<'_>) -> TensorMut<'_> {
    let r: Refused<TensorMut<'_>> = Refused { error: Error::new(ErrorCode::WouldBlock, "full"), outputs: out };
    assert_eq!(r.code(), ErrorCode::WouldBlock);
    assert_eq!(r.message(), "full");
    assert!(r.to_string().contains("full"));
    assert!(format!("{r:?}").contains("Refused"));
    let Refused { error, outputs } = r;
    let e: Error = Error::from(aotrun::scope::Refused { error: error.clone(), outputs: () });
    let e2: Error = Refused { error, outputs: [(); 0] }.into();
    assert_eq!(e, e2);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(Refused { error: e, outputs: () });
    drop(boxed);
    outputs
}

/// The constants API (added to 1.2 before its release): a package's
/// constants listed, a runner's updated, swapped, rolled back and freed
/// while it serves, every call with 1.2's argument and result types. Run by
/// tests/constants.rs against the `weight_id` package (float32 constants,
/// none folded); `file` is a `.safetensors` file with a full set for it.
/// Returns the threaded runner's state at the end, read through its control
/// after the runner was dropped (the control keeps the C runner alive).
pub fn constants(package: &Package, file: &Path) -> aotrun::Result<ConstantsState> {
    let num: usize = package.info()?.num_constants;
    let first: aotrun::Result<ConstantInfo<'_>> = package.constant(0);
    let all: aotrun::Result<Vec<ConstantInfo<'_>>> = package.constants();
    let all: Vec<ConstantInfo<'_>> = all?;
    assert_eq!((all.len(), first?), (num, all[0]));
    // The strings and the shape borrow the package, not the ConstantInfo.
    let names: Vec<&str> = package.constants()?.into_iter().map(|c| c.name()).collect();
    let shapes: Vec<&[i64]> = all.iter().map(|c| c.shape().unwrap_or(&[])).collect();
    for c in all.iter().copied() {
        let c: aotrun::ConstantInfo<'_> = c;
        let _: &str = c.original_name();
        let _: DataType = c.dtype();
        let _: Option<&[i64]> = c.shape();
        let _: Option<u64> = c.nbytes();
        let _: bool = c.folded();
    }
    let values: Vec<Vec<f32>> = shapes.iter().map(|s| vec![1.0f32; s.iter().product::<i64>() as usize]).collect();
    let named: Vec<(&str, TensorRef<'_>)> = names
        .iter()
        .zip(&values)
        .zip(&shapes)
        .map(|((name, v), shape)| Ok((*name, TensorRef::new(v, shape)?)))
        .collect::<aotrun::Result<_>>()?;

    let builder: RunnerBuilder<'_> = package.runner().num_models(2);
    let made: aotrun::Result<(ThreadedRunner, ConstantsControl)> = builder.threaded_with_constants();
    let (runner, mut control) = made?;
    let _: aotrun::Result<ConstantsState> = runner.constants_state();
    let staged: aotrun::Result<Staged<'_>> = control.stage_constants(&named, Update::Full);
    let staged: Staged<'_> = staged?;
    let _: u64 = staged.generation();
    let swapped: aotrun::Result<Swapped<'_>> = staged.swap();
    let swapped: Swapped<'_> = swapped?;
    let _: (u64, u64) = (swapped.generation(), swapped.previous_generation());
    let back: aotrun::Result<Staged<'_>> = swapped.rollback();
    let discarded: aotrun::Result<()> = back?.discard();
    discarded?;
    let partial: aotrun::constants::Staged<'_> = control.stage_constants(&named[..1], Update::Partial)?;
    let swapped: aotrun::constants::Swapped<'_> = partial.swap()?;
    let released: aotrun::Result<()> = swapped.release_previous();
    released?;
    // The file as any AsRef<Path>: &Path, PathBuf, &str.
    let from_file: aotrun::Result<Staged<'_>> = control.stage_constants_from_file(file, Update::Full);
    drop(from_file?); // discarded
    drop(control.stage_constants_from_file(file.to_path_buf(), Update::Full)?);
    let file_str: &str = file.to_str().expect("a UTF-8 path");
    let swapped: Swapped<'_> = control.stage_constants_from_file(file_str, Update::Full)?.swap()?;
    drop(swapped); // the previous set stays, inactive
    let released: aotrun::Result<()> = control.release_inactive();
    released?;
    let state: aotrun::Result<ConstantsState> = control.state();
    assert_eq!(runner.constants_state()?, state?);
    let _: String = format!("{control:?}");

    for made in [builder.single_threaded_with_constants(), builder.graph_with_constants()] {
        let made: aotrun::Result<(SerialRunner, ConstantsControl)> = made;
        let (mut serial, mut control) = made?;
        let staged = control.stage_constants(&named, Update::Full)?;
        let _: String = format!("{staged:?}");
        let swapped = staged.swap()?;
        let _: String = format!("{swapped:?}");
        let inputs: Vec<Tensor> =
            serial.input_dims(package, 2)?.into_iter().map(Tensor::zeros::<f32>).collect::<aotrun::Result<_>>()?;
        let views: Vec<TensorRef<'_>> = inputs.iter().map(Tensor::view).collect();
        serial.run_alloc(&views)?;
        swapped.release_previous()?;
        let _: aotrun::Result<ConstantsState> = serial.constants_state();
    }
    let _: aotrun::Result<(aotrun::runner::SerialRunner, aotrun::constants::ConstantsControl)> =
        package.runner().graph_with_constants();

    drop(runner);
    control.state()
}

/// What 1.2 re-exports as `aotrun::sys` (the aotrun-sys crate) that a user
/// of the safe crate reaches for: the loader and the version constants. The
/// generated declarations of aotrun.h are the C ABI's (its own gate:
/// compat/, abi/, rust_bindgen_diff).
pub fn sys() {
    use aotrun::sys;
    let _: u32 = sys::AOTRUN_VERSION;
    let _: u32 = sys::AOTRUN_VERSION_MAJOR;
    let _: u32 = sys::AOTRUN_API_VERSION;
    let _: u32 = sys::AOTRUN_API_VERSION_1_0;
    let _: u32 = sys::AOTRUN_API_VERSION_1_1;
    let _: u32 = sys::AOTRUN_API_VERSION_1_2;
    const V: u32 = sys::aotrun_make_version(1, 2, 0);
    let _ = V;
    let _: &str = sys::loader::LIBRARY_SONAME;
    let _: &str = sys::loader::DYLIB_PATH_VAR;
    let _: Option<&str> = sys::loader::BUILD_LIB_DIR;
    let api: Result<&'static sys::aotrun_api, sys::LoadError> = sys::api();
    if let Err(e) = &api {
        let _: String = e.to_string();
        let _: &dyn Debug = e;
    }
    let _: fn() -> &'static sys::aotrun_api = sys::api_or_panic;
    let source: Option<sys::loader::Source> = sys::loader::source();
    if let Some(s) = source {
        let _: String = s.to_string();
    }
    #[cfg(feature = "load-dynamic")]
    {
        let _: Result<&'static sys::aotrun_api, sys::LoadError> = sys::load_from("libaotrun.so.1");
    }
}

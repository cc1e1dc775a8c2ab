//! Frozen client of the aotrun crate 1.1 (written against 1.1.0 as
//! released; never edited — compat/rust/README.md).
//!
//! This file is the compile-time half: every public item of crate 1.1 —
//! types, fields, variants, functions, methods, constants, traits and the
//! trait implementations a user can rely on (including Send/Sync) — named
//! with the types 1.1 gave it. It must compile against every later 1.x
//! crate. The runtime half is in tests/.

#![allow(clippy::type_complexity)]

use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::path::PathBuf;
use std::time::Duration;

use aotrun::log::LogHandler;
use aotrun::{
    AsyncOutputs, Capture, CaptureMode, CaptureRunner, DataType, Device, DeviceType, Element, Error, ErrorCode, Event,
    Graph, Level, LevelFilter, Mode, OpenOptions, OwnedTensor, Package, PackageInfo, RunnerBuilder, RunnerStats, Scope,
    SerialRunner, Stream, SymbolInfo, TensorInfo, TensorMut, TensorRef, ThreadedRunner,
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

/// Traits and auto traits of 1.1's types.
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

/// Constants, fields and variants, with 1.1's types.
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
    // A struct literal: DataType's fields are all public in 1.1.
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
}

/// Every field of the info structs, with 1.1's types.
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

    // TensorInfo and SymbolInfo are exhaustive in 1.1: literals compile.
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

/// Every function and method of 1.1, called with the argument types 1.1
/// takes and bound to the result types 1.1 returns. Not run (tests/ runs
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
    Ok(())
}

/// The asynchronous API of 1.1, with its types. The `if` picks `run_async`
/// or `try_run_async` (or `run_async_timeout`): the three return one type in
/// 1.1, and the code a 1.1 service wrote like this must keep compiling.
pub fn scopes(threaded: &ThreadedRunner, serial: &mut SerialRunner, block: bool) -> aotrun::Result<usize> {
    let x = vec![0.0f32; 256];
    let shape = [1i64, 256];
    let out_shape = [1i64, 64];
    let mut ys = vec![vec![0.0f32; 64]; 4];
    let [a, b, c, d] = &mut ys[..] else { unreachable!() };
    let n: aotrun::Result<usize> = threaded.scope(|s: &Scope<'_, '_>| -> aotrun::Result<usize> {
        let input = [TensorRef::new(&x, &shape)?];
        let event: Event<'_> = if block {
            s.run_async(&input, [TensorMut::new(a, &out_shape)?])?
        } else {
            s.try_run_async(&input, [TensorMut::new(a, &out_shape)?])?
        };
        let submitted: aotrun::Result<Event<'_>> = if block {
            s.run_async(&input, vec![TensorMut::new(b, &out_shape)?])
        } else {
            s.run_async_timeout(&input, vec![TensorMut::new(b, &out_shape)?], Duration::from_millis(10))
        };
        let r: aotrun::Result<Event<'_>> = s.try_run_async(&input, TensorMut::new(c, &out_shape)?);
        if let Err(e) = &r {
            let _: ErrorCode = e.code();
        }
        let _: aotrun::Result<()> = event.wait();
        let _: aotrun::Result<()> = event.wait_timeout(Duration::from_secs(1));
        let _: bool = event.is_ready();
        let _: usize = s.pending();
        let _ = (submitted, r);
        Ok(s.pending())
    });
    let m: usize = serial.scope(|s: &aotrun::scope::Scope<'_, '_>| {
        let r: Result<aotrun::scope::Event<'_>, Error> = s.run_async(&[], [TensorMut::new(d, &out_shape).unwrap()]);
        let _ = r;
        s.pending()
    });
    Ok(n? + m)
}

/// What 1.1 re-exports as `aotrun::sys` (the aotrun-sys crate) that a user
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
    const V: u32 = sys::aotrun_make_version(1, 1, 0);
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

//! Frozen client of crate 1.1, run time: what a 1.1 user does with the
//! example MLP package ([batch, 256] -> [batch, 64] float32), in every mode.
//! Never edited (compat/rust/README.md).

use std::time::Duration;

use aotrun::{
    CaptureMode, DataType, Device, DeviceType, Error, ErrorCode, Event, Mode, OpenOptions, Package, Stream, TensorMut,
    TensorRef,
};
use aotrun_client_1_1::packages_dir;

fn mlp() -> Package {
    Package::open(packages_dir().join("mlp")).expect("opening the mlp package")
}

fn input(batch: usize) -> Vec<f32> {
    (0..batch * 256).map(|i| ((i % 17) as f32 - 8.0) * 0.125).collect()
}

#[test]
fn compile_time_surface_is_callable() {
    aotrun_client_1_1::traits();
    aotrun_client_1_1::values();
    aotrun_client_1_1::sys();
}

#[test]
fn package_open_info_specs_symbols() {
    assert!(aotrun::init().expect("libaotrun loads").len() > 0);
    let (major, minor, _) = aotrun::version();
    assert_eq!(major, 1);
    assert!(minor >= 1, "a 1.1 client needs library >= 1.1, got {}", aotrun::version_string());
    assert!(aotrun::version_string().starts_with("1."));

    let p = mlp();
    let info = p.info().unwrap();
    assert_eq!(info.name, "mlp");
    assert_eq!(p.name().unwrap(), "mlp");
    assert_eq!((info.num_inputs, info.num_outputs), (1, 1));
    assert!(info.abi_version >= (1, 0));
    assert_eq!(info.device, Device::cpu());
    assert_eq!(info.device.device_type, DeviceType::Cpu);
    assert!(info.hashes_verified);
    assert!(info.path.exists());
    aotrun_client_1_1::fields(&info, &p.input(0).unwrap(), &p.symbols().unwrap()[0], &{
        p.runner().threaded().unwrap().stats().unwrap()
    });

    let x = p.input(0).unwrap();
    assert_eq!(x.dtype, DataType::F32);
    assert_eq!(x.shape, vec![-1, 256]);
    assert_eq!(p.inputs().unwrap(), vec![x]);
    let y = p.output(0).unwrap();
    assert_eq!(y.shape, vec![-1, 64]);
    assert_eq!(p.outputs().unwrap(), vec![y]);
    assert!(p.symbols().unwrap().iter().any(|s| s.required && s.found));
    assert!(p.mode_available(Mode::Threaded).is_ok());

    let e: Error = p.input(5).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.to_string().starts_with(e.code().name()), "{e}");

    let e = Package::open(packages_dir().join("no-such-package")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    let e = OpenOptions::new().expected_sha256("00".repeat(32)).open(packages_dir().join("libmlp.so")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Integrity, "{e}");
    let p2 = OpenOptions::new().verify_hashes(false).allow_untrusted_files(false).open(packages_dir().join("mlp"));
    assert!(!p2.unwrap().info().unwrap().hashes_verified);
    let p3 = Package::open_with(packages_dir().join("mlp"), &OpenOptions::default()).unwrap();
    assert_eq!(p3.name().unwrap(), "mlp");
}

#[test]
fn runs_in_every_mode_agree() {
    let p = mlp();
    let x = input(3);
    let shape = [3i64, 256];
    let threaded = p.runner().num_models(2).max_inflight(4).threaded().unwrap();
    assert_eq!(threaded.mode(), Mode::Threaded);
    let inputs = [TensorRef::new(&x, &shape).unwrap()];
    let y_shape = threaded.output_shapes(&inputs).unwrap().remove(0);
    assert_eq!(y_shape, vec![3, 64]);
    let mut want = vec![0.0f32; 3 * 64];
    threaded.run(&inputs, &mut [TensorMut::new(&mut want, &y_shape).unwrap()]).unwrap();
    assert!(want.iter().any(|v| *v != 0.0));

    let out = threaded.run_alloc(&inputs).unwrap();
    assert_eq!(out[0].shape(), &y_shape[..]);
    assert_eq!(out[0].dtype(), DataType::F32);
    assert_eq!(out[0].device(), Device::cpu());
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &want[..]);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    assert!(out[0].as_slice::<i32>().is_err());
    assert_eq!(out[0].as_raw().ndim, 2);

    let stats = threaded.stats().unwrap();
    assert_eq!(stats.runs, 2);
    assert_eq!((stats.requested_mode, stats.num_models), (Mode::Threaded, 2));
    assert!(!threaded.as_raw().is_null());

    for mut serial in
        [p.runner().strict(true).single_threaded().unwrap(), p.runner().graph_warmup_runs(1).graph().unwrap()]
    {
        for _ in 0..3 {
            let mut y = vec![0.0f32; 3 * 64];
            let mut out = [TensorMut::new(&mut y, &y_shape).unwrap()];
            serial.run(&inputs, &mut out).unwrap();
            assert_eq!(out[0].as_slice::<f32>().unwrap(), &want[..]);
            assert_eq!(y, want);
        }
        assert_eq!(serial.output_shapes(&inputs).unwrap()[0], y_shape);
        assert_eq!(serial.run_alloc(&inputs).unwrap()[0].to_vec::<f32>().unwrap(), want);
        assert!(!serial.as_raw().is_null());
        if serial.mode() == Mode::Graph {
            let st = serial.stats().unwrap();
            assert!(st.graph_captures >= 1 && st.graph_replays >= 1, "{st:?}");
            serial.freeze_graphs().unwrap();
            serial.evict_graphs().unwrap();
        }
    }

    // Views from bytes and raw parts.
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let from_bytes = TensorRef::from_bytes(&bytes, DataType::F32, &shape).unwrap();
    assert_eq!(
        (from_bytes.shape(), from_bytes.dtype(), from_bytes.device()),
        (&shape[..], DataType::F32, Device::cpu())
    );
    let mut y_bytes = vec![0u8; 3 * 64 * 4];
    let mut y = vec![0.0f32; 3 * 64];
    {
        let raw =
            unsafe { TensorRef::from_raw_parts(x.as_ptr().cast(), DataType::F32, &shape, Device::cpu()).unwrap() };
        let mut outs = [TensorMut::from_bytes(&mut y_bytes, DataType::F32, &y_shape).unwrap()];
        threaded.run(&[raw], &mut outs).unwrap();
        let raw_out =
            unsafe { TensorMut::from_raw_parts(y.as_mut_ptr().cast(), DataType::F32, &y_shape, Device::cpu()) };
        threaded.run(&[from_bytes], &mut [raw_out.unwrap()]).unwrap();
    }
    let from_bytes_out: Vec<f32> =
        y_bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert_eq!(from_bytes_out, want);
    assert_eq!(y, want);

    // Argument errors.
    let xi = vec![0i32; 3 * 256];
    let mut y = vec![0.0f32; 3 * 64];
    let e = threaded
        .run(&[TensorRef::new(&xi, &shape).unwrap()], &mut [TensorMut::new(&mut y, &y_shape).unwrap()])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert_eq!(TensorRef::new(&x, &[2, 256]).unwrap_err().code(), ErrorCode::InvalidArgument);
}

#[test]
fn streams_capture_and_replay() {
    let p = mlp();
    let x = input(1);
    let shape = [1i64, 256];
    let y_shape = [1i64, 64];
    let mut threaded = p.runner().threaded().unwrap();
    let mut stream = Stream::new().unwrap();
    let mut want = vec![0.0f32; 64];
    threaded
        .run_on_stream(
            &mut stream,
            &[TensorRef::new(&x, &shape).unwrap()],
            &mut [TensorMut::new(&mut want, &y_shape).unwrap()],
        )
        .unwrap();
    stream.synchronize().unwrap();
    assert!(!stream.as_raw().is_null());

    let mut serial = p.runner().strict(true).single_threaded().unwrap();
    let mut eager = vec![0.0f32; 64];
    serial
        .run_on_stream(
            &mut stream,
            &[TensorRef::new(&x, &shape).unwrap()],
            &mut [TensorMut::new(&mut eager, &y_shape).unwrap()],
        )
        .unwrap();
    assert_eq!(eager, want);

    let mut replayed = vec![0.0f32; 64];
    {
        let mut capture = stream.begin_capture(&mut serial, CaptureMode::ThreadLocal).unwrap();
        capture
            .run(&[TensorRef::new(&x, &shape).unwrap()], &mut [TensorMut::new(&mut replayed, &y_shape).unwrap()])
            .unwrap();
        let graph = capture.end().unwrap();
        assert!(graph.num_nodes() >= 1);
        graph.launch(&mut stream).unwrap();
        graph.launch(&mut stream).unwrap();
        assert!(!stream.is_capturing());
    }
    assert_eq!(replayed, want);

    // A captured threaded runner fails by its second run.
    let mut y1 = vec![0.0f32; 64];
    let mut y2 = vec![0.0f32; 64];
    let mut capture = stream.begin_capture(&mut threaded, CaptureMode::Relaxed).unwrap();
    let first = capture.run(&[TensorRef::new(&x, &shape).unwrap()], &mut [TensorMut::new(&mut y1, &y_shape).unwrap()]);
    let e = match first {
        Ok(()) => capture
            .run(&[TensorRef::new(&x, &shape).unwrap()], &mut [TensorMut::new(&mut y2, &y_shape).unwrap()])
            .unwrap_err(),
        Err(e) => e,
    };
    assert_eq!(e.code(), ErrorCode::CaptureUnsupported, "{e}");
    assert_eq!(capture.end().unwrap_err().code(), ErrorCode::CaptureInvalidated);
    let _ = CaptureMode::Global;
}

#[test]
fn scopes_on_both_runners() {
    let p = mlp();
    let xs: Vec<Vec<f32>> = (0..6).map(|i| input(1).iter().map(|v| v + i as f32).collect()).collect();
    let shape = [1i64, 256];
    let y_shape = [1i64, 64];
    let threaded = p.runner().num_models(2).max_inflight(4).threaded().unwrap();
    let want: Vec<Vec<f32>> = xs
        .iter()
        .map(|x| {
            let mut y = vec![0.0f32; 64];
            threaded
                .run(&[TensorRef::new(x, &shape).unwrap()], &mut [TensorMut::new(&mut y, &y_shape).unwrap()])
                .unwrap();
            y
        })
        .collect();

    let mut ys = vec![vec![0.0f32; 64]; 6];
    threaded
        .scope(|s| -> aotrun::Result<()> {
            let mut events: Vec<Event<'_>> = Vec::new();
            for (i, (x, y)) in xs.iter().zip(ys.iter_mut()).enumerate() {
                let inputs = [TensorRef::new(x, &shape)?];
                // 1.1: the three submissions have one type.
                let e = if i % 3 == 0 {
                    s.run_async(&inputs, [TensorMut::new(y, &y_shape)?])
                } else if i % 3 == 1 {
                    s.run_async_timeout(&inputs, vec![TensorMut::new(y, &y_shape)?], Duration::from_secs(30))
                } else {
                    match s.try_run_async(&inputs, TensorMut::new(y, &y_shape)?) {
                        Err(e) if e.code() == ErrorCode::WouldBlock => Err(e),
                        other => other,
                    }
                };
                match e {
                    Ok(e) => events.push(e),
                    Err(e) if e.code() == ErrorCode::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            assert!(s.pending() <= 6);
            for e in &events {
                e.wait()?;
                e.wait_timeout(Duration::from_secs(1))?;
                assert!(e.is_ready());
            }
            Ok(())
        })
        .unwrap();
    for (i, y) in ys.iter().enumerate() {
        if y.iter().any(|v| *v != 0.0) {
            assert_eq!(y, &want[i]);
        } else {
            assert_eq!(i % 3, 2, "only a try_run_async refused with WouldBlock may leave its output unwritten");
        }
    }
    let st = threaded.stats().unwrap();
    assert_eq!(st.async_submitted, st.async_completed);

    let mut serial = p.runner().single_threaded().unwrap();
    let mut ys = vec![vec![0.0f32; 64]; 3];
    let n = serial.scope(|s| {
        let events: Vec<Event<'_>> = xs[..3]
            .iter()
            .zip(ys.iter_mut())
            .map(|(x, y)| {
                s.run_async(&[TensorRef::new(x, &shape).unwrap()], [TensorMut::new(y, &y_shape).unwrap()]).unwrap()
            })
            .collect();
        events.len()
    });
    assert_eq!(n, 3);
    for (y, w) in ys.iter().zip(&want) {
        assert_eq!(y, w);
    }
}

#[test]
fn the_compile_time_functions_run() {
    let p = mlp();
    let threaded = p.runner().threaded().unwrap();
    let mut serial = p.runner().single_threaded().unwrap();
    aotrun_client_1_1::scopes(&threaded, &mut serial, true).unwrap();
    aotrun_client_1_1::scopes(&threaded, &mut serial, false).ok();
}

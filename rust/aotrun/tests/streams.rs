//! Caller streams and caller-driven capture: a threaded runner cannot be
//! captured past its first run (CAPTURE_UNSUPPORTED, as with CUDA),
//! a single_threaded one records without executing and its graph replays
//! what an eager run computes. Captures are thread-local so that they cannot
//! disturb the other tests of this process.

mod common;
#[path = "common/counting.rs"]
mod counting;

use std::sync::{Mutex, MutexGuard};

use aotrun::{CaptureMode, ErrorCode, Package, Stream, TensorMut, TensorRef};

const SHAPE: [i64; 2] = [2, 4];

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn x() -> Vec<f32> {
    (0..8).map(|i| i as f32 * 0.25 - 1.0).collect()
}

/// Capturing a threaded runner (one instance) fails with CAPTURE_UNSUPPORTED
/// by its second run at the latest (the second must query the instance's
/// event); with `first_recorded`, the first run must be recorded (SDK
/// packages skip the query of a never-recorded event). The capture is
/// invalidated; afterwards the same runner runs normally.
fn threaded_capture_fails_by_second_call(p: &Package, want: &[f32], first_recorded: bool) {
    let mut runner = p.runner().num_models(1).threaded().unwrap();
    let x = x();
    let (mut y1, mut y2) = (vec![0.0f32; 8], vec![0.0f32; 8]);
    let mut stream = Stream::new().unwrap();
    {
        let mut cap = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap();
        let first = cap.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut y1, &SHAPE).unwrap()]);
        let e = match first {
            Ok(()) => cap
                .run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut y2, &SHAPE).unwrap()])
                .expect_err("the second run of a captured threaded runner must fail"),
            Err(e) => {
                assert!(!first_recorded, "the first run of a threaded runner should be recorded: {e}");
                e
            }
        };
        assert_eq!(e.code(), ErrorCode::CaptureUnsupported, "{e}");
        assert!(e.message().contains("capturing"), "{e}");
        let e = cap.end().unwrap_err();
        assert_eq!(e.code(), ErrorCode::CaptureInvalidated, "{e}");
    }
    assert!(!stream.is_capturing());
    assert_eq!(y1, vec![0.0; 8], "recorded, never executed");
    // Runner and stream keep working.
    let mut y = vec![0.0f32; 8];
    runner
        .run_on_stream(
            &mut stream,
            &[TensorRef::new(&x, &SHAPE).unwrap()],
            &mut [TensorMut::new(&mut y, &SHAPE).unwrap()],
        )
        .unwrap();
    assert_eq!(y, want);
}

/// Capturing a single_threaded runner: legal; the graph's replays write what
/// an eager run writes.
fn single_threaded_capture_replays_identically(p: &Package) -> (Vec<f32>, Vec<f32>, usize) {
    let x = x();
    let mut runner = p.runner().strict(true).single_threaded().unwrap();
    let mut eager = vec![0.0f32; 8];
    runner.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut eager, &SHAPE).unwrap()]).unwrap();
    let mut replayed = vec![0.0f32; 8];
    let mut stream = Stream::new().unwrap();
    let nodes = {
        let mut cap = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap();
        cap.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut replayed, &SHAPE).unwrap()]).unwrap();
        let graph = cap.end().unwrap();
        assert!(graph.num_nodes() >= 1, "{graph:?}");
        graph.launch(&mut stream).unwrap();
        graph.launch(&mut stream).unwrap();
        stream.synchronize().unwrap();
        graph.num_nodes()
    };
    (eager, replayed, nodes)
}

#[test]
fn rust_package_capture_rules() {
    let _g = lock();
    let p = Package::open(common::rust_package()).unwrap();
    let want = common::affine(&x());
    threaded_capture_fails_by_second_call(&p, &want, false);
    let (eager, replayed, _) = single_threaded_capture_replays_identically(&p);
    assert_eq!(eager, want);
    assert_eq!(replayed, eager);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn counting_package_capture_records_without_executing() {
    let dir = common::packages_dir();
    let _g = lock();
    std::env::set_var("AOTRUN_TEST_SPIN_US", "0");
    let so = common::package_so(&dir, "counting");
    let p = Package::open(&so).unwrap();
    let c = counting::Counting::open(&so);
    let want: Vec<f32> = x().iter().map(|v| v + 1.0).collect();
    threaded_capture_fails_by_second_call(&p, &want, true);

    c.reset();
    let x = x();
    let mut runner = p.runner().strict(true).single_threaded().unwrap();
    let mut y = vec![0.0f32; 8];
    let mut stream = Stream::new().unwrap();
    {
        let mut cap = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap();
        cap.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut y, &SHAPE).unwrap()]).unwrap();
        assert_eq!(c.completed(), 0, "capture records, it does not execute");
        let graph = cap.end().unwrap();
        assert_eq!(c.completed(), 0);
        for n in 1..=3 {
            graph.launch(&mut stream).unwrap();
            assert_eq!(c.completed(), n, "each replay executes the recorded run once");
        }
    }
    assert_eq!(y, want);
    let (eager, replayed, _) = single_threaded_capture_replays_identically(&p);
    assert_eq!((eager.as_slice(), replayed.as_slice()), (want.as_slice(), want.as_slice()));
}

#[test]
fn dropped_capture_is_discarded_and_forgotten_capture_refuses_runs() {
    let _g = lock();
    let p = Package::open(common::rust_package()).unwrap();
    let mut runner = p.runner().single_threaded().unwrap();
    let x = x();
    let mut y = vec![0.0f32; 8];
    let mut stream = Stream::new().unwrap();
    {
        let mut cap = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap();
        cap.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut y, &SHAPE).unwrap()]).unwrap();
    } // dropped: ended, graph discarded
    assert!(!stream.is_capturing());
    assert_eq!(y, vec![0.0; 8]);

    let cap = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap();
    std::mem::forget(cap);
    assert!(stream.is_capturing());
    let e = runner
        .run_on_stream(
            &mut stream,
            &[TensorRef::new(&x, &SHAPE).unwrap()],
            &mut [TensorMut::new(&mut y, &SHAPE).unwrap()],
        )
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::CaptureUnsupported, "{e}");
    let e = stream.begin_capture(&mut runner, CaptureMode::ThreadLocal).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    drop(stream); // discards the open capture
    runner.run(&[TensorRef::new(&x, &SHAPE).unwrap()], &mut [TensorMut::new(&mut y, &SHAPE).unwrap()]).unwrap();
    assert_eq!(y, common::affine(&x));
}

#[test]
fn a_bound_graph_replays_reads_and_refills_in_a_loop() {
    // The Rust package (y = 2x + 1), built by cargo: always runs.
    let p = Package::open(common::rust_package()).unwrap();
    let mut runner = p.runner().single_threaded().unwrap();
    let mut stream = Stream::new().unwrap();
    let x = aotrun::Tensor::from_vec(vec![0.0f32; 8], [2, 4]).unwrap();
    let y = aotrun::Tensor::zeros::<f32>([2, 4]).unwrap();
    let mut graph = stream.capture_owned(&mut runner, CaptureMode::ThreadLocal, vec![x], vec![y]).unwrap();
    assert_eq!(graph.output::<f32>(0).unwrap(), &[0.0; 8], "nothing ran during the capture");
    for step in 0..5 {
        graph.input_mut::<f32>(0).unwrap().fill(step as f32);
        graph.launch(&mut stream).unwrap();
        assert_eq!(graph.output::<f32>(0).unwrap(), &[2.0 * step as f32 + 1.0; 8], "step {step}");
    }
    assert!(graph.input_mut::<f32>(1).is_err());
    assert!(graph.output::<i64>(0).is_err());
    let (xs, ys) = graph.into_buffers();
    assert_eq!(xs[0].as_slice::<f32>().unwrap(), &[4.0; 8]);
    assert_eq!(ys[0].as_slice::<f32>().unwrap(), &[9.0; 8]);
    // The runner is free again.
    assert_eq!(runner.run_f32(&[1.0; 8], [2, 4]).unwrap().as_slice::<f32>().unwrap(), &[3.0; 8]);
}

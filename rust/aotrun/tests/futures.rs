//! Owned runs as futures (`ThreadedRunner::run_owned`): from tokio and from
//! the std-only `block_on`, buffers given back on success and failure, the
//! in-flight window respected without blocking the runtime, and a future
//! dropped before its run completed.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use aotrun::{block_on, ErrorCode, Package, RunFuture, Tensor, ThreadedRunner};

/// The counting package's AOTRUN_TEST_SPIN_US is read when a runner is made.
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn counting_runner(spin_us: u64, num_models: i32, max_inflight: i32) -> (Package, ThreadedRunner) {
    std::env::set_var("AOTRUN_TEST_SPIN_US", spin_us.to_string());
    let p = Package::open(common::package_so(&common::packages_dir(), "counting")).unwrap();
    let r = p.runner().num_models(num_models).max_inflight(max_inflight).threaded().unwrap();
    (p, r)
}

fn x_of(i: usize) -> Vec<f32> {
    (0..8).map(|k| (i * 8 + k) as f32).collect()
}

#[test]
fn futures_are_send_and_static() {
    fn check<T: Send + 'static>() {}
    check::<RunFuture>();
    check::<Tensor>();
}

#[test]
fn owned_runs_of_the_rust_package_from_tokio_reuse_their_buffers() {
    // Needs no AOTRUN_PACKAGES_DIR: cargo builds this package (y = 2x + 1).
    let p = Package::open(common::rust_package()).unwrap();
    let runner = Arc::new(p.runner().num_models(2).max_inflight(4).threaded().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let runner = runner.clone();
            rt.spawn(async move {
                let mut x = Tensor::from_vec(x_of(i), [2, 4])?;
                let mut y = Tensor::zeros::<f32>([2, 4])?;
                for round in 0..4 {
                    x.as_mut_slice::<f32>()?.iter_mut().for_each(|v| *v += round as f32);
                    let want = common::affine(x.as_slice::<f32>()?);
                    let done = runner.run_owned(vec![x], vec![y]).await?;
                    let [x2] = <[Tensor; 1]>::try_from(done.inputs).unwrap();
                    let [y2] = <[Tensor; 1]>::try_from(done.outputs).unwrap();
                    assert_eq!(y2.as_slice::<f32>()?, &want[..], "task {i} round {round}");
                    (x, y) = (x2, y2);
                }
                aotrun::Result::<()>::Ok(())
            })
        })
        .collect();
    for t in tasks {
        rt.block_on(t).unwrap().unwrap();
    }
    let s = runner.stats().unwrap();
    assert_eq!((s.async_submitted, s.async_completed, s.async_failed), (128, 128, 0), "{s:?}");
}

#[test]
fn block_on_needs_no_runtime_and_failures_give_the_buffers_back() {
    let p = Package::open(common::rust_package()).unwrap();
    let runner = p.runner().threaded().unwrap();
    let x = Tensor::from_vec(vec![1.0f32; 8], [2, 4]).unwrap();
    let y = Tensor::zeros::<f32>([2, 4]).unwrap();
    let done = block_on(runner.run_owned(vec![x], vec![y])).unwrap();
    assert_eq!(done.outputs[0].as_slice::<f32>().unwrap(), &[3.0; 8]);
    // A wrong output shape: refused at submission, buffers back untouched.
    let bad = Tensor::zeros::<f32>([3, 4]).unwrap();
    let e = block_on(runner.run_owned(done.inputs, vec![bad])).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert_eq!(e.buffers.inputs[0].as_slice::<f32>().unwrap(), &[1.0; 8]);
    assert_eq!(e.buffers.outputs[0].shape(), &[3, 4]);
    let as_error: aotrun::Error = e.into();
    assert_eq!(as_error.code(), ErrorCode::InvalidArgument);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_full_window_makes_futures_wait_without_blocking_the_runtime() {
    let _g = lock();
    let (_p, runner) = counting_runner(2_000, 2, 2);
    let runner = Arc::new(runner);
    // One runtime thread: had a full window blocked it, the 24 runs would be
    // serialised behind it; they all finish, within the window.
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..24)
            .map(|i| {
                let fut = runner.run_owned(
                    vec![Tensor::from_vec(x_of(i), [2, 4]).unwrap()],
                    vec![Tensor::zeros::<f32>([2, 4]).unwrap()],
                );
                tokio::spawn(fut)
            })
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    for (i, r) in results.into_iter().enumerate() {
        let done = r.unwrap();
        let want: Vec<f32> = x_of(i).iter().map(|v| v + 1.0).collect();
        assert_eq!(done.outputs[0].as_slice::<f32>().unwrap(), &want[..]);
    }
    let s = runner.stats().unwrap();
    assert_eq!(s.async_completed, 24, "{s:?}");
    assert!(s.peak_inflight <= 2, "{s:?}");
}

struct Noop;
impl std::task::Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_future_dropped_in_flight_still_completes_its_run() {
    let _g = lock();
    let (_p, runner) = counting_runner(50_000, 1, 4);
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    for _ in 0..4 {
        let mut fut = runner
            .run_owned(vec![Tensor::from_vec(x_of(1), [2, 4]).unwrap()], vec![Tensor::zeros::<f32>([2, 4]).unwrap()]);
        // Submitted by the first poll; 50 ms to run.
        assert!(Pin::new(&mut fut).poll(&mut cx).is_pending());
        drop(fut);
    }
    assert_eq!(runner.stats().unwrap().async_submitted, 4);
    let start = Instant::now();
    while runner.stats().unwrap().async_completed < 4 {
        assert!(start.elapsed() < Duration::from_secs(30), "runs of dropped futures did not complete");
        std::thread::sleep(Duration::from_millis(5));
    }
    let s = runner.stats().unwrap();
    assert_eq!((s.async_completed, s.async_failed), (4, 0), "{s:?}");
    // Dropping the runner now waits for nothing left; with runs still in
    // flight, aotrun_runner_destroy would wait for them.
    drop(runner);
    // And a future still pending when dropped after a poll with no runs left.
    let (_p, runner) = counting_runner(0, 1, 1);
    let done = block_on(
        runner.run_owned(vec![Tensor::from_vec(x_of(2), [2, 4]).unwrap()], vec![Tensor::zeros::<f32>([2, 4]).unwrap()]),
    )
    .unwrap();
    assert_eq!(done.outputs[0].as_slice::<f32>().unwrap()[0], 17.0);
}

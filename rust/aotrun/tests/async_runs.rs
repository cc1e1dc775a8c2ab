//! Asynchronous runs through `runner.scope(..)`: results, the in-flight
//! bound (checked against what the `counting` package itself saw), the
//! try/timeout variants, failures landing in their own events, and the scope
//! waiting for runs whose events were dropped, forgotten, or abandoned by a
//! panic.

mod common;
#[path = "common/counting.rs"]
mod counting;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use aotrun::{ErrorCode, Package, TensorMut, TensorRef};
use counting::Counting;

const SHAPE: [i64; 2] = [2, 4];

/// The counting package's counters and the AOTRUN_TEST_* variables are
/// process-wide; the tests that use them take turns.
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The counting package (bare .so) with its counters; executions busy-wait
/// `spin_us` (read when a runner is created, so create runners under the
/// lock, after this).
fn counting(dir: &std::path::Path, spin_us: u64) -> (Package, Counting) {
    std::env::set_var("AOTRUN_TEST_SPIN_US", spin_us.to_string());
    let so = common::package_so(dir, "counting");
    let package = Package::open(&so).unwrap_or_else(|e| panic!("opening {}: {e}", so.display()));
    let c = Counting::open(&so);
    (package, c)
}

fn inputs(n: usize) -> Vec<Vec<f32>> {
    (0..n).map(|i| (0..8).map(|k| (i * 8 + k) as f32).collect()).collect()
}

fn plus_one(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v + 1.0).collect()
}

#[test]
fn async_runs_of_the_rust_package() {
    // Needs no AOTRUN_PACKAGES_DIR: cargo builds this package.
    let p = Package::open(common::rust_package()).unwrap();
    let xs = inputs(16);
    let mut ys = vec![vec![0.0f32; 8]; 16];
    let threaded = p.runner().num_models(2).threaded().unwrap();
    threaded
        .scope(|s| -> aotrun::Result<()> {
            let mut events = Vec::new();
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                events.push(s.run_async(&[TensorRef::new(x, &SHAPE)?], [TensorMut::new(y, &SHAPE)?])?);
            }
            for e in &events {
                e.wait()?;
                assert!(e.is_ready());
            }
            Ok(())
        })
        .unwrap();
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(y, &common::affine(x));
    }
    let stats = threaded.stats().unwrap();
    assert_eq!((stats.async_submitted, stats.async_completed, stats.async_failed), (16, 16, 0), "{stats:?}");
    assert_eq!(stats.inflight, 0);

    // A serial runner: &mut self scope, Vec outputs, one TensorMut as outputs.
    let mut serial = p.runner().single_threaded().unwrap();
    let mut ys2 = vec![vec![0.0f32; 8]; 2];
    let (a, b) = ys2.split_at_mut(1);
    serial
        .scope(|s| -> aotrun::Result<()> {
            let e1 = s.run_async(&[TensorRef::new(&xs[0], &SHAPE)?], vec![TensorMut::new(&mut a[0], &SHAPE)?])?;
            let e2 = s.run_async(&[TensorRef::new(&xs[1], &SHAPE)?], TensorMut::new(&mut b[0], &SHAPE)?)?;
            e1.wait()?;
            e2.wait()
        })
        .unwrap();
    assert_eq!(ys2[0], common::affine(&xs[0]));
    assert_eq!(ys2[1], common::affine(&xs[1]));
}

#[test]
fn argument_errors_are_returned_at_submission_and_take_no_slot() {
    let p = Package::open(common::rust_package()).unwrap();
    let runner = p.runner().threaded().unwrap();
    let x = vec![0.0f32; 8];
    let xi = vec![0i32; 8];
    let mut y = vec![0.0f32; 8];
    let mut y1 = vec![0.0f32; 4];
    runner.scope(|s| {
        let e = s.run_async(&[TensorRef::new(&xi, &SHAPE).unwrap()], [TensorMut::new(&mut y, &SHAPE).unwrap()]);
        assert_eq!(e.unwrap_err().code(), ErrorCode::InvalidArgument);
        let e = s.try_run_async(&[TensorRef::new(&x, &SHAPE).unwrap()], [TensorMut::new(&mut y1, &[1, 4]).unwrap()]);
        let e = e.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
        assert!(!e.message().is_empty());
        assert_eq!(s.pending(), 0);
    });
    let stats = runner.stats().unwrap();
    assert_eq!((stats.async_submitted, stats.inflight), (0, 0), "{stats:?}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn in_flight_window_bounds_what_the_package_sees() {
    let dir = common::packages_dir();
    let _g = lock();
    // Runs of 20 ms: longer than a scheduler slice, so that two runs overlap
    // in time even when the loaded CI machine gives the workers one core
    // between them (2 ms runs once completed one by one there: saw 1).
    let (p, c) = counting(&dir, 20_000);
    let runner = p.runner().num_models(4).max_inflight(3).threaded().unwrap();
    assert_eq!(runner.stats().unwrap().max_inflight, 3);
    c.reset();
    const N: usize = 24;
    let xs = inputs(N);
    let mut ys = vec![vec![-7.0f32; 8]; N];
    runner
        .scope(|s| -> aotrun::Result<()> {
            let mut events = Vec::new();
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                // Blocks while three runs are queued or executing.
                events.push(s.run_async(&[TensorRef::new(x, &SHAPE)?], [TensorMut::new(y, &SHAPE)?])?);
                assert_eq!(s.pending(), events.len());
            }
            events.iter().try_for_each(|e| e.wait())
        })
        .unwrap();
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(y, &plus_one(x));
    }
    assert_eq!(c.completed(), N as i64, "the package executed every run once");
    let seen = c.max_inflight();
    assert!(seen <= 3, "package saw {seen} overlapping executions with max_inflight 3");
    assert!(seen >= 2, "4 instances and a window of 3 should overlap runs of 20 ms (saw {seen})");
    let stats = runner.stats().unwrap();
    assert!(stats.peak_inflight <= 3 && stats.peak_inflight >= 2, "{stats:?}");
    assert_eq!((stats.async_submitted, stats.async_completed, stats.inflight), (N as u64, N as u64, 0));
    assert!(stats.submit_blocked_ns > 0, "24 submissions into a window of 3 must have waited: {stats:?}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn try_run_async_would_block_and_timeout_when_full() {
    let dir = common::packages_dir();
    let _g = lock();
    let (p, _c) = counting(&dir, 100_000); // 100 ms per run
    let runner = p.runner().num_models(1).max_inflight(2).threaded().unwrap();
    let xs = inputs(5);
    let mut ys = vec![vec![0.0f32; 8]; 5];
    let [y0, y1, y2, y3, y4] = &mut ys[..] else { unreachable!() };
    // For the 1.1 forms, whose refusals consume the views.
    let (mut spare_a, mut spare_b) = (vec![0.0f32; 8], vec![0.0f32; 8]);
    runner
        .scope(|s| -> aotrun::Result<()> {
            let t = |i: usize| TensorRef::new(&xs[i], &SHAPE);
            let e0 = s.try_run_async(&[t(0)?], [TensorMut::new(y0, &SHAPE)?])?;
            let e1 = s.try_run_async(&[t(1)?], [TensorMut::new(y1, &SHAPE)?])?;
            // Two runs of 100 ms hold both slots.
            let full = s.try_run_async_or_refused(&[t(2)?], [TensorMut::new(y2, &SHAPE)?]).unwrap_err();
            assert_eq!(full.code(), ErrorCode::WouldBlock, "{full}");
            assert!(full.message().contains("in-flight"), "{full}");
            // The 1.1 form: the same refusal as an Error.
            let e = s.try_run_async(&[t(2)?], [TensorMut::new(&mut spare_a, &SHAPE)?]).unwrap_err();
            assert_eq!(e.code(), ErrorCode::WouldBlock, "{e}");
            let start = Instant::now();
            let late = s
                .run_async_timeout_or_refused(&[t(3)?], [TensorMut::new(y3, &SHAPE)?], Duration::from_millis(5))
                .unwrap_err();
            assert_eq!(late.code(), ErrorCode::Timeout, "{late}");
            assert!(start.elapsed() >= Duration::from_millis(4));
            let [given_back] = late.outputs;
            assert_eq!(given_back.shape(), &SHAPE[..]);
            let e = s
                .run_async_timeout(&[t(3)?], [TensorMut::new(&mut spare_b, &SHAPE)?], Duration::from_millis(5))
                .unwrap_err();
            assert_eq!(e.code(), ErrorCode::Timeout, "{e}");
            // The first run's slot is free once its event completes.
            assert!(!e0.is_ready());
            assert_eq!(e0.wait_timeout(Duration::from_millis(1)).unwrap_err().code(), ErrorCode::Timeout);
            e0.wait()?;
            assert!(e0.is_ready());
            // Any number of times.
            e0.wait()?;
            // The refused submission gave its output back: retry it.
            let e2 = s.try_run_async_or_refused(&[t(2)?], full.outputs)?;
            e1.wait()?;
            let e4 = s.try_run_async(&[t(4)?], [TensorMut::new(y4, &SHAPE)?])?;
            e2.wait()?;
            e4.wait_timeout(Duration::from_secs(30))
        })
        .unwrap();
    assert_eq!(ys[0], plus_one(&xs[0]));
    assert_eq!(ys[1], plus_one(&xs[1]));
    assert_eq!(ys[2], plus_one(&xs[2]), "the refused run's view was given back and retried");
    assert_eq!(ys[3], vec![0.0; 8], "timed-out run wrote nothing");
    assert_eq!(ys[4], plus_one(&xs[4]));
    let stats = runner.stats().unwrap();
    assert_eq!(stats.would_block, 2, "{stats:?}");
    assert_eq!((stats.async_submitted, stats.async_completed), (4, 4), "{stats:?}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn scope_waits_for_dropped_and_forgotten_events() {
    let dir = common::packages_dir();
    let _g = lock();
    let (p, c) = counting(&dir, 30_000);
    let runner = p.runner().num_models(2).max_inflight(8).threaded().unwrap();
    c.reset();
    let xs = inputs(6);
    let mut ys = vec![vec![0.0f32; 8]; 6];
    let start = Instant::now();
    runner.scope(|s| {
        for (i, (x, y)) in xs.iter().zip(ys.iter_mut()).enumerate() {
            let e = s.run_async(&[TensorRef::new(x, &SHAPE).unwrap()], [TensorMut::new(y, &SHAPE).unwrap()]).unwrap();
            if i % 2 == 0 {
                std::mem::forget(e); // leaked: the scope still waits
            } // else dropped while running: orphaned, freed later
        }
        // Forgotten handles stay with the scope; dropped ones too while
        // their run is going.
        assert!(s.pending() >= 3, "{}", s.pending());
    });
    // Three rounds of two 30 ms runs at the least.
    assert!(start.elapsed() >= Duration::from_millis(80), "{:?}", start.elapsed());
    assert_eq!(c.completed(), 6);
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(y, &plus_one(x), "written before the scope returned");
    }
    assert_eq!(runner.stats().unwrap().inflight, 0);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_panic_in_the_scope_still_waits_for_its_runs() {
    let dir = common::packages_dir();
    let _g = lock();
    let (p, c) = counting(&dir, 30_000);
    let runner = p.runner().num_models(2).threaded().unwrap();
    c.reset();
    let xs = inputs(4);
    let mut ys = vec![vec![0.0f32; 8]; 4];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runner.scope(|s| {
            for (x, y) in xs.iter().zip(ys.iter_mut()) {
                s.run_async(&[TensorRef::new(x, &SHAPE).unwrap()], [TensorMut::new(y, &SHAPE).unwrap()]).unwrap();
            }
            panic!("user code failed while runs were in flight");
        })
    }));
    assert!(r.is_err());
    assert_eq!(c.completed(), 4, "the scope waited while unwinding");
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(y, &plus_one(x));
    }
}

fn fault_package(dir: &std::path::Path) -> Package {
    std::env::set_var("AOTRUN_TEST_FAULT_EVERY", "7");
    Package::open(common::package_so(dir, "fault_async")).unwrap()
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn failures_land_in_their_own_events_in_order_on_a_serial_runner() {
    let dir = common::packages_dir();
    let _g = lock();
    let p = fault_package(&dir);
    let mut runner = p.runner().single_threaded().unwrap();
    const N: usize = 21;
    let xs = inputs(N);
    let mut ys = vec![vec![-1.0f32; 8]; N];
    let outcomes = runner.scope(|s| {
        let events: Vec<_> = xs
            .iter()
            .zip(ys.iter_mut())
            .map(|(x, y)| s.run_async(&[TensorRef::new(x, &SHAPE).unwrap()], [TensorMut::new(y, &SHAPE).unwrap()]))
            .collect::<aotrun::Result<_>>()
            .unwrap();
        events.iter().map(|e| e.wait()).collect::<Vec<_>>()
    });
    // One worker, in order: executions 7, 14, 21 are submissions 6, 13, 20.
    for (i, r) in outcomes.iter().enumerate() {
        if (i + 1) % 7 == 0 {
            let e = r.as_ref().unwrap_err();
            assert_eq!(e.code(), ErrorCode::Package, "run {i}: {e}");
            // The library names the package; the package's message follows.
            assert!(e.message().contains("'fault_async'"), "run {i}: {e}");
            assert!(e.message().ends_with(&format!("fault: injected failure on run {}", i + 1)), "run {i}: {e}");
            assert_eq!(ys[i], vec![-1.0; 8], "failed run {i} wrote nothing");
        } else {
            assert!(r.is_ok(), "run {i}: {r:?}");
            assert_eq!(ys[i], xs[i], "run {i}");
        }
    }
    let stats = runner.stats().unwrap();
    assert_eq!((stats.async_completed, stats.async_failed), (18, 3), "{stats:?}");
    // Later runs keep working (execution 22 succeeds).
    let mut y = vec![0.0f32; 8];
    runner.run(&[TensorRef::new(&xs[0], &SHAPE).unwrap()], &mut [TensorMut::new(&mut y, &SHAPE).unwrap()]).unwrap();
    assert_eq!(y, xs[0]);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn failures_land_in_their_own_events_from_several_threads() {
    let dir = common::packages_dir();
    let _g = lock();
    let p = fault_package(&dir);
    let runner = p.runner().num_models(2).max_inflight(4).threaded().unwrap();
    const THREADS: usize = 4;
    const PER: usize = 14;
    // Each thread has its own scope over its own buffers.
    let failed: Vec<Vec<u64>> = std::thread::scope(|ts| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let runner = &runner;
                ts.spawn(move || {
                    let xs: Vec<Vec<f32>> =
                        (0..PER).map(|i| (0..8).map(|k| (t * 1000 + i * 8 + k) as f32).collect()).collect();
                    let mut ys = vec![vec![-1.0f32; 8]; PER];
                    let outcomes = runner.scope(|s| {
                        let events: Vec<_> = xs
                            .iter()
                            .zip(ys.iter_mut())
                            .map(|(x, y)| {
                                s.run_async(&[TensorRef::new(x, &SHAPE).unwrap()], [TensorMut::new(y, &SHAPE).unwrap()])
                                    .unwrap()
                            })
                            .collect();
                        events.iter().map(|e| e.wait()).collect::<Vec<_>>()
                    });
                    let mut failed = Vec::new();
                    for (i, r) in outcomes.into_iter().enumerate() {
                        match r {
                            Ok(()) => assert_eq!(ys[i], xs[i], "thread {t} run {i}"),
                            Err(e) => {
                                assert_eq!(e.code(), ErrorCode::Package, "{e}");
                                let (_, n) = e
                                    .message()
                                    .split_once("fault: injected failure on run ")
                                    .unwrap_or_else(|| panic!("unexpected message: {e}"));
                                failed.push(n.parse::<u64>().unwrap());
                                assert_eq!(ys[i], vec![-1.0; 8], "failed run wrote nothing");
                            }
                        }
                    }
                    failed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // 56 executions: exactly the 7th, 14th, ... failed, each reported once,
    // by the event of the run that failed.
    let mut all: Vec<u64> = failed.concat();
    all.sort_unstable();
    assert_eq!(all, vec![7, 14, 21, 28, 35, 42, 49, 56]);
    let stats = runner.stats().unwrap();
    assert_eq!((stats.async_completed, stats.async_failed, stats.inflight), (48, 8, 0), "{stats:?}");
}

//! Frozen client of crate 1.2, run time: a full in-flight window, with the
//! `counting` test package slowed to 100 ms per run: refusals as errors, and
//! (`_or_refused`, added to 1.2 before its release) with the output views
//! given back and retried. In its own test binary: the package reads
//! AOTRUN_TEST_SPIN_US from the environment.

use std::time::{Duration, Instant};

use aotrun::{Error, ErrorCode, Event, Package, Refused, TensorMut, TensorRef};
use aotrun_client_1_2::packages_dir;

const SHAPE: [i64; 2] = [2, 4];

#[test]
fn would_block_and_timeout_are_errors() {
    std::env::set_var("AOTRUN_TEST_SPIN_US", "100000");
    let p = Package::open(packages_dir().join("libcounting.so")).unwrap();
    let runner = p.runner().num_models(1).max_inflight(2).threaded().unwrap();
    let xs: Vec<Vec<f32>> = (0..4).map(|i| (0..8).map(|k| (i * 8 + k) as f32).collect()).collect();
    let mut ys = vec![vec![0.0f32; 8]; 4];
    let [y0, y1, y2, y3] = &mut ys[..] else { unreachable!() };
    runner
        .scope(|s| -> aotrun::Result<()> {
            let t = |i: usize| TensorRef::new(&xs[i], &SHAPE);
            let e0: Event<'_> = s.try_run_async(&[t(0)?], [TensorMut::new(y0, &SHAPE)?])?;
            let e1: Event<'_> = s.try_run_async(&[t(1)?], [TensorMut::new(y1, &SHAPE)?])?;
            // Both slots are held for 100 ms: refused.
            let full = s.try_run_async(&[t(2)?], [TensorMut::new(y2, &SHAPE)?]).map_err(Error::from);
            let full: Error = full.unwrap_err();
            assert_eq!(full.code(), ErrorCode::WouldBlock, "{full}");
            assert!(!full.message().is_empty());
            let start = Instant::now();
            let late = s.run_async_timeout(&[t(3)?], [TensorMut::new(y3, &SHAPE)?], Duration::from_millis(5));
            let late = late.unwrap_err();
            assert_eq!(late.code(), ErrorCode::Timeout, "{late}");
            assert!(start.elapsed() >= Duration::from_millis(4));
            assert!(!e0.is_ready());
            assert_eq!(e0.wait_timeout(Duration::from_millis(1)).unwrap_err().code(), ErrorCode::Timeout);
            e0.wait()?;
            e1.wait()?;
            Ok(())
        })
        .unwrap();
    assert_eq!(ys[0], xs[0].iter().map(|v| v + 1.0).collect::<Vec<_>>());
    assert_eq!(ys[2], vec![0.0; 8], "refused: not written");
    assert_eq!(ys[3], vec![0.0; 8], "timed out: not written");
    let st = runner.stats().unwrap();
    assert_eq!(st.would_block, 1, "{st:?}");
    assert_eq!((st.async_submitted, st.async_completed, st.async_failed), (2, 2, 0), "{st:?}");
}

#[test]
fn refused_submissions_give_their_outputs_back() {
    std::env::set_var("AOTRUN_TEST_SPIN_US", "100000");
    let p = Package::open(packages_dir().join("libcounting.so")).unwrap();
    let runner = p.runner().num_models(1).max_inflight(2).threaded().unwrap();
    let xs: Vec<Vec<f32>> = (0..4).map(|i| (0..8).map(|k| (i * 8 + k) as f32).collect()).collect();
    let mut ys = vec![vec![0.0f32; 8]; 4];
    let [y0, y1, y2, y3] = &mut ys[..] else { unreachable!() };
    runner
        .scope(|s| -> aotrun::Result<()> {
            let t = |i: usize| TensorRef::new(&xs[i], &SHAPE);
            let e0: Event<'_> = s.try_run_async_or_refused(&[t(0)?], [TensorMut::new(y0, &SHAPE)?])?;
            let e1: Event<'_> = s.try_run_async_or_refused(&[t(1)?], vec![TensorMut::new(y1, &SHAPE)?])?;
            // Both slots are held for 100 ms: refused, the view given back.
            let full: Refused<TensorMut<'_>> =
                s.try_run_async_or_refused(&[t(2)?], TensorMut::new(y2, &SHAPE)?).unwrap_err();
            assert_eq!(full.code(), ErrorCode::WouldBlock, "{full}");
            assert_eq!(full.error.code(), ErrorCode::WouldBlock);
            assert!(!full.message().is_empty());
            assert_eq!(full.outputs.shape(), &SHAPE[..]);
            let start = Instant::now();
            let late: Refused<[TensorMut<'_>; 1]> = s
                .run_async_timeout_or_refused(&[t(3)?], [TensorMut::new(y3, &SHAPE)?], Duration::from_millis(5))
                .unwrap_err();
            assert_eq!(late.code(), ErrorCode::Timeout, "{late}");
            assert!(start.elapsed() >= Duration::from_millis(4));
            assert_eq!(late.outputs[0].shape(), &SHAPE[..]);
            // The views given back are retried inside the same scope.
            e0.wait()?;
            let e2: Event<'_> = s.try_run_async_or_refused(&[t(2)?], full.outputs)?;
            e1.wait()?;
            let e3: Event<'_> = s.run_async_timeout_or_refused(&[t(3)?], late.outputs, Duration::from_secs(30))?;
            e2.wait()?;
            e3.wait()?;
            Ok(())
        })
        .unwrap();
    for (x, y) in xs.iter().zip(&ys) {
        assert_eq!(y, &x.iter().map(|v| v + 1.0).collect::<Vec<_>>());
    }
    let st = runner.stats().unwrap();
    assert_eq!(st.would_block, 1, "{st:?}");
    assert_eq!((st.async_submitted, st.async_completed, st.async_failed), (4, 4, 0), "{st:?}");
}

//! Throughput of owned runs awaited as futures (`run_owned`, tokio's
//! current-thread runtime: one thread submits, as in a service) against the
//! scope API (`runner.scope` + `run_async`, one thread submitting), on the
//! async benchmark's package and settings (bench/bench_async.cpp: the
//! `counting` package, 50 us per run, 2 model instances, window 4, 1000 runs
//! per round, each with its own buffers, all waited for).
//!
//!   AOTRUN_PACKAGES_DIR=build/packages cargo run --release --example bench_futures [-- --rounds N]
//!
//! Prints runs/s of each (median of the rounds, the two alternating) and the
//! ratio futures / scope (target >= 0.95), also as the median of the ratios
//! of back-to-back rounds.

use std::time::Instant;

use aotrun::{Package, Tensor, TensorMut, TensorRef, ThreadedRunner};

const RUNS: usize = 1000;
const SHAPE: [i64; 2] = [1, 4];

fn scope_round(runner: &ThreadedRunner, xs: &[Vec<f32>], ys: &mut [Vec<f32>]) -> f64 {
    let t = Instant::now();
    runner
        .scope(|s| -> aotrun::Result<()> {
            let events = xs
                .iter()
                .zip(ys.iter_mut())
                .map(|(x, y)| s.run_async(&[TensorRef::new(x, &SHAPE)?], [TensorMut::new(y, &SHAPE)?]))
                .collect::<aotrun::Result<Vec<_>>>()?;
            events.iter().try_for_each(|e| e.wait())
        })
        .expect("scope runs");
    RUNS as f64 / t.elapsed().as_secs_f64()
}

fn futures_round(
    rt: &tokio::runtime::Runtime,
    runner: &std::sync::Arc<ThreadedRunner>,
    bufs: &mut Vec<(Tensor, Tensor)>,
) -> f64 {
    let taken = std::mem::take(bufs);
    let t = Instant::now();
    let back = rt.block_on(async {
        let tasks: Vec<_> = taken.into_iter().map(|(x, y)| tokio::spawn(runner.run_owned(vec![x], vec![y]))).collect();
        let mut back = Vec::with_capacity(RUNS);
        for task in tasks {
            let done = task.await.expect("task").expect("run");
            let mut it = done.inputs.into_iter().zip(done.outputs);
            back.push(it.next().unwrap());
        }
        back
    });
    let rate = RUNS as f64 / t.elapsed().as_secs_f64();
    *bufs = back;
    rate
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> aotrun::Result<()> {
    let mut rounds = 15;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--rounds" {
            rounds = args.next().and_then(|v| v.parse().ok()).expect("--rounds N");
        }
    }
    let dir = std::env::var("AOTRUN_PACKAGES_DIR").unwrap_or_else(|_| "build/packages".into());
    std::env::set_var("AOTRUN_TEST_SPIN_US", "50");
    let package = Package::open(format!("{dir}/counting.so"))
        .or_else(|_| Package::open(format!("{dir}/libcounting.so")))
        .or_else(|_| Package::open(format!("{dir}/counting/libcounting.so")))?;
    let runner = std::sync::Arc::new(package.runner().num_models(2).max_inflight(4).threaded()?);

    let xs: Vec<Vec<f32>> = (0..RUNS).map(|i| vec![(i % 97) as f32; 4]).collect();
    let mut ys = vec![vec![0.0f32; 4]; RUNS];
    let mut bufs: Vec<(Tensor, Tensor)> = xs
        .iter()
        .map(|x| Ok((Tensor::from_vec(x.clone(), [1, 4])?, Tensor::zeros::<f32>([1, 4])?)))
        .collect::<aotrun::Result<_>>()?;
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("tokio runtime");

    // Warm-up, then alternate so drift hits both alike.
    scope_round(&runner, &xs, &mut ys);
    futures_round(&rt, &runner, &mut bufs);
    let (mut s, mut f) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        s.push(scope_round(&runner, &xs, &mut ys));
        f.push(futures_round(&rt, &runner, &mut bufs));
    }
    for (i, (x, y)) in bufs.iter().enumerate().step_by(97) {
        assert_eq!(y.as_slice::<f32>()?[3], x.as_slice::<f32>()?[3] + 1.0, "run {i}");
    }
    assert_eq!(ys[5][3], xs[5][3] + 1.0);
    // Each round pair ran back to back: the median of their ratios is less
    // exposed to load from other processes than a ratio of medians.
    let paired = median(f.iter().zip(&s).map(|(f, s)| f / s).collect());
    let (s, f) = (median(s), median(f));
    println!("scope   run_async : {s:>9.0} runs/s (median of {rounds} rounds of {RUNS})");
    println!("futures run_owned : {f:>9.0} runs/s");
    println!("ratio futures/scope: {:.3} (medians), {paired:.3} (median of paired rounds; target >= 0.95)", f / s);
    Ok(())
}

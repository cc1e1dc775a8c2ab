//! Per-call overhead of the safe API over the raw C calls, on the noop
//! package (one empty launch per run), in single_threaded and threaded mode.
//! Reports the median ns/call of each variant and the median over blocks of
//! its difference to raw (paired blocks).
//!
//!   cargo run --release --example bench_overhead -- [<noop package>] [--iters N] [--rounds N]
//!
//! Default package: $AOTRUN_PACKAGES_DIR/noop. `--rounds` blocks (default
//! 601), each timing `--iters` calls (default 2000) of every variant back to
//! back on the same runner, the order rotating per block (the machine is
//! shared and noisy, so compare figures from one run only):
//!   raw        aotrun_sys::aotrun_runner_run with DLTensors built once
//!   safe       Runner::run with TensorRef/TensorMut built once
//!   safe+views Runner::run building the views in every call

use std::hint::black_box;
use std::time::Instant;

use aotrun::{sys, Package, SerialRunner, TensorMut, TensorRef, ThreadedRunner};

const BATCH: i64 = 1;
const FEATURES: i64 = 4;

struct Config {
    package: std::path::PathBuf,
    iters: u32,
    rounds: usize,
}

fn config() -> Result<Config, String> {
    let mut package = std::env::var_os("AOTRUN_PACKAGES_DIR").map(|d| std::path::PathBuf::from(d).join("noop"));
    let (mut iters, mut rounds) = (2_000u32, 601usize);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--iters" => iters = it.next().and_then(|v| v.parse().ok()).ok_or("--iters N")?,
            "--rounds" => rounds = it.next().and_then(|v| v.parse().ok()).ok_or("--rounds N")?,
            p => package = Some(p.into()),
        }
    }
    let package = package.ok_or("give the noop package path or set AOTRUN_PACKAGES_DIR")?;
    Ok(Config { package, iters, rounds: rounds.max(1) })
}

/// Either runner type, so one loop measures both modes.
enum Runner {
    Threaded(ThreadedRunner),
    Serial(SerialRunner),
}

impl Runner {
    #[inline(always)]
    fn run(&mut self, i: &[TensorRef], o: &mut [TensorMut]) -> aotrun::Result<()> {
        match self {
            Runner::Threaded(r) => r.run(i, o),
            Runner::Serial(r) => r.run(i, o),
        }
    }

    fn raw(&self) -> *mut sys::aotrun_runner {
        match self {
            Runner::Threaded(r) => r.as_raw(),
            Runner::Serial(r) => r.as_raw(),
        }
    }
}

fn raw_tensor(data: *mut f32, shape: &mut [i64]) -> sys::DLTensor {
    sys::DLTensor {
        data: data.cast(),
        device: sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 },
        ndim: shape.len() as i32,
        dtype: sys::DLDataType { code: sys::kDLFloat as u8, bits: 32, lanes: 1 },
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    }
}

/// ns per call of `f` over `iters` calls.
fn time(iters: u32, mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_nanos() as f64 / iters as f64
}

fn bench(label: &str, mut runner: Runner, cfg: &Config) {
    let x = vec![1.0f32; (BATCH * FEATURES) as usize];
    let mut y = vec![0.0f32; (BATCH * FEATURES) as usize];
    let shape = [BATCH, FEATURES];

    let (mut xs, mut ys) = (shape, shape);
    let raw_in = [raw_tensor(x.as_ptr() as *mut f32, &mut xs)];
    let mut raw_out = [raw_tensor(y.as_mut_ptr(), &mut ys)];
    let handle = runner.raw();
    let mut raw = || {
        let st = unsafe { sys::aotrun_runner_run(black_box(handle), raw_in.as_ptr(), 1, raw_out.as_mut_ptr(), 1) };
        if !st.is_null() {
            panic!(
                "raw run failed: {}",
                unsafe { std::ffi::CStr::from_ptr(sys::aotrun_status_message(st)) }.to_string_lossy()
            );
        }
    };

    let mut y2 = vec![0.0f32; (BATCH * FEATURES) as usize];
    let safe_views = |runner: &mut Runner, y2: &mut Vec<f32>| {
        let i = [TensorRef::new(&x, &shape).unwrap()];
        let mut o = [TensorMut::new(y2, &shape).unwrap()];
        runner.run(black_box(&i), black_box(&mut o)).unwrap();
    };

    // Warm-up: first calls fault in code and, for threaded, the instance pool.
    for _ in 0..10_000 {
        raw();
        safe_views(&mut runner, &mut y2);
    }

    // Paired blocks: each block times `iters` calls of every variant back to
    // back (order rotated), so load changes hit all variants alike; the
    // median over blocks of (variant - raw) is the overhead estimate.
    let (mut t_raw, mut t_safe, mut t_views) = (Vec::new(), Vec::new(), Vec::new());
    let inputs = [TensorRef::new(&x, &shape).unwrap()];
    let mut outputs = [TensorMut::new(&mut y, &shape).unwrap()];
    for block in 0..cfg.rounds {
        for k in 0..3 {
            match (block + k) % 3 {
                0 => t_raw.push(time(cfg.iters, &mut raw)),
                1 => t_safe.push(time(cfg.iters, || runner.run(black_box(&inputs), black_box(&mut outputs)).unwrap())),
                _ => t_views.push(time(cfg.iters, || safe_views(&mut runner, &mut y2))),
            }
        }
    }
    let diff = |v: &[f64]| median(v.iter().zip(&t_raw).map(|(a, b)| a - b).collect());
    let (d_safe, d_views) = (diff(&t_safe), diff(&t_views));
    let r = median(t_raw.clone());
    let row = |name: &str, t: f64, d: f64| {
        println!("{label:<16} {name:<11} {t:>9.1} {d:>+9.1} {:>+8.2}%", d / r * 100.0);
    };
    row("raw", r, 0.0);
    row("safe", median(t_safe), d_safe);
    row("safe+views", median(t_views), d_views);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let cfg = match config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bench_overhead: {e}\nusage: bench_overhead [<noop package>] [--iters N] [--rounds N]");
            std::process::exit(2);
        }
    };
    let package = Package::open(&cfg.package).unwrap_or_else(|e| {
        eprintln!("bench_overhead: {e}");
        std::process::exit(1)
    });
    println!(
        "aotrun {} | package {} | {} blocks x {} calls per variant, medians | {}",
        aotrun::version_string(),
        cfg.package.display(),
        cfg.rounds,
        cfg.iters,
        if cfg!(debug_assertions) { "DEBUG BUILD: use --release" } else { "release" }
    );
    println!("{:<16} {:<11} {:>9} {:>9} {:>9}", "mode", "variant", "ns/call", "vs raw ns", "vs raw");
    let serial = package.runner().strict(true).single_threaded().expect("single_threaded runner");
    bench("single_threaded", Runner::Serial(serial), &cfg);
    let threaded = package.runner().threaded().expect("threaded runner");
    bench("threaded", Runner::Threaded(threaded), &cfg);
}

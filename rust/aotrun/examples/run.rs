//! Opens a package, describes it, runs it once on generated float32 inputs
//! and prints a summary of the outputs and the runner's counters.
//!
//!   cargo run --example run -- <package> [--mode threaded|single_threaded|graph]
//!                                        [--batch N] [--models N] [--strict]
//!
//! Dynamic dimensions (-1) get the value of --batch (default 2). Warnings
//! (e.g. a fallback for an old package) are printed through the log bridge.

use std::process::ExitCode;

use aotrun::{DataType, Mode, Package, TensorRef};

struct Args {
    package: String,
    mode: Mode,
    batch: i64,
    models: i32,
    strict: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mut args = Args { package: String::new(), mode: Mode::Threaded, batch: 2, models: 1, strict: false };
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--mode" => {
                args.mode = match value("--mode")?.as_str() {
                    "threaded" => Mode::Threaded,
                    "single_threaded" => Mode::SingleThreaded,
                    "graph" => Mode::Graph,
                    m => return Err(format!("unknown mode '{m}'")),
                }
            }
            "--batch" => args.batch = value("--batch")?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--models" => args.models = value("--models")?.parse().map_err(|e| format!("--models: {e}"))?,
            "--strict" => args.strict = true,
            "-h" | "--help" => return Err(String::new()),
            p if !p.starts_with('-') && args.package.is_empty() => args.package = p.to_string(),
            other => return Err(format!("unexpected argument '{other}'")),
        }
    }
    if args.package.is_empty() {
        return Err("no package given".into());
    }
    Ok(args)
}

fn run(args: &Args) -> aotrun::Result<()> {
    aotrun::set_log_handler(Box::new(|level, msg| eprintln!("[aotrun {level}] {msg}")));

    let package = Package::open(&args.package)?;
    let info = package.info()?;
    println!(
        "package {} ({}, ABI {}.{}, {}), {} constant(s), {} bytes, opened in {:.2} ms",
        info.name,
        info.format,
        info.abi_version.0,
        info.abi_version.1,
        info.device,
        info.num_constants,
        info.constant_bytes,
        info.open_ns as f64 / 1e6
    );

    // Inputs: float32 with dynamic dims set to --batch, values in [-1, 1).
    let specs = package.inputs()?;
    let mut shapes = Vec::new();
    let mut data = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if spec.dtype != DataType::F32 {
            return Err(aotrun::Error::new(
                aotrun::ErrorCode::Unsupported,
                format!("input {i} '{}' is {}; this example generates float32 only", spec.name, spec.dtype),
            ));
        }
        let shape: Vec<i64> = spec.shape.iter().map(|&d| if d < 0 { args.batch } else { d }).collect();
        let n = shape.iter().product::<i64>() as usize;
        data.push((0..n).map(|k| ((k * 37 % 200) as f32) / 100.0 - 1.0).collect::<Vec<f32>>());
        println!("  input  {i} '{}' {} {:?} -> {:?}", spec.name, spec.dtype, spec.shape, shape);
        shapes.push(shape);
    }
    let inputs: Vec<TensorRef> =
        data.iter().zip(&shapes).map(|(d, s)| TensorRef::new(d, s)).collect::<aotrun::Result<_>>()?;

    let builder = package.runner().num_models(args.models).strict(args.strict);
    let outputs = match args.mode {
        Mode::Threaded => {
            let r = builder.threaded()?;
            let out = r.run_alloc(&inputs)?;
            println!("runner: {} mode, stats {:?}", r.mode(), r.stats()?);
            out
        }
        _ => {
            let mut r = if args.mode == Mode::Graph { builder.graph()? } else { builder.single_threaded()? };
            let out = r.run_alloc(&inputs)?;
            println!("runner: {} mode, stats {:?}", r.mode(), r.stats()?);
            out
        }
    };
    for (i, (t, spec)) in outputs.iter().zip(package.outputs()?).enumerate() {
        match t.as_slice::<f32>() {
            Ok(v) => {
                let sum: f64 = v.iter().map(|&x| x as f64).sum();
                let head: Vec<String> = v.iter().take(4).map(|x| format!("{x:.4}")).collect();
                println!("  output {i} '{}' {:?}: [{}, ...] sum {sum:.6}", spec.name, t.shape(), head.join(", "));
            }
            Err(_) => println!("  output {i} '{}' {} {:?}", spec.name, t.dtype(), t.shape()),
        }
    }
    aotrun::clear_log_handler();
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!(
                "usage: run <package> [--mode threaded|single_threaded|graph] [--batch N] [--models N] [--strict]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

//! The first inference of docs/GETTING_STARTED.md, runnable from the
//! workspace with no environment variable:
//!
//!   cd rust && cargo run --offline --example first_inference [-- <package>]
//!
//! The package defaults to the example MLP of the repository's `build/`
//! (`cmake --build build --target aotrun_minimal`).

fn main() -> aotrun::Result<()> {
    let default = concat!(env!("CARGO_MANIFEST_DIR"), "/../../build/packages/mlp");
    let path = std::env::args().nth(1).unwrap_or_else(|| default.to_string());
    let package = aotrun::Package::open(&path)?; // takes [batch, 256] float32
    let runner = package.runner().threaded()?;
    let y = runner.run_f32(&[0.5; 256], [1, 256])?; // one float32 input, one output
    println!("y: {:?}, first values {:?}", y.shape(), &y.as_slice::<f32>()?[..4]);
    println!("libaotrun {} ({})", aotrun::version_string(), aotrun::init()?);
    Ok(())
}

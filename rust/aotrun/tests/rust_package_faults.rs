//! A panic and an error inside the Rust package become statuses, never an
//! unwind across the C ABI. Its own test binary: the fault is switched on by
//! an environment variable the package reads when a runner's container is
//! created, and no other test may see it.

mod common;

use aotrun::{ErrorCode, Package, TensorMut, TensorRef};

fn run_once(package: &Package) -> aotrun::Result<Vec<f32>> {
    let runner = package.runner().threaded()?;
    let x = [1.0f32; 4];
    let mut y = [0.0f32; 4];
    runner.run(&[TensorRef::new(&x, &[1, 4])?], &mut [TensorMut::new(&mut y, &[1, 4])?])?;
    Ok(y.to_vec())
}

#[test]
fn panic_and_error_in_the_package_are_package_errors() {
    let package = Package::open(common::rust_package()).unwrap();

    // Single test in this binary: nothing else reads the environment now.
    std::env::set_var("AOTRUN_RUST_AFFINE_FAULT", "panic");
    let e = run_once(&package).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Package, "{e}");
    assert!(e.message().contains("panic caught at the ABI boundary"), "{e}");
    assert!(e.message().contains("injected fault"), "{e}");

    std::env::set_var("AOTRUN_RUST_AFFINE_FAULT", "error");
    let e = run_once(&package).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Package, "{e}");
    assert!(e.message().contains("aotrun_rust_affine: injected fault (AOTRUN_RUST_AFFINE_FAULT=error)"), "{e}");

    std::env::remove_var("AOTRUN_RUST_AFFINE_FAULT");
    assert_eq!(run_once(&package).unwrap(), vec![3.0; 4]);
}

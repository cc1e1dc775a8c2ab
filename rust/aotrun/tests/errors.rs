//! Every error path a user can hit returns the right `ErrorCode`, with a
//! message naming what failed.

mod common;

use aotrun::{ErrorCode, Package, TensorMut, TensorRef};

#[test]
fn nonexistent_path_is_not_found() {
    let path = std::env::temp_dir().join("aotrun-rust-test-no-such-package");
    let e = Package::open(&path).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    assert!(e.message().contains("aotrun-rust-test-no-such-package"), "message names the path: {e}");
}

#[test]
fn path_with_nul_is_invalid_argument() {
    let e = Package::open("bad\0path").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

#[test]
fn a_file_that_is_not_a_library_fails_to_load() {
    let path = std::env::temp_dir().join(format!("aotrun-rust-test-not-elf-{}.so", std::process::id()));
    std::fs::write(&path, b"this is not an ELF file").unwrap();
    let e = Package::open(&path).unwrap_err();
    std::fs::remove_file(&path).ok();
    assert_eq!(e.code(), ErrorCode::LoadFailed, "{e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn missing_symbols_is_missing_symbol() {
    let dir = common::packages_dir();
    let e = Package::open(common::package_so(&dir, "missing_symbols")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::MissingSymbol, "{e}");
    assert!(e.message().contains("aotrun_pkg_"), "message lists the symbols: {e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn future_major_is_abi_mismatch() {
    let dir = common::packages_dir();
    let e = Package::open(common::package_so(&dir, "future_major")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::AbiMismatch, "{e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn bad_hash_is_integrity_unless_verification_is_off() {
    let dir = common::packages_dir();
    let path = common::package_dir(&dir, "mlp_bad_hash");
    let e = Package::open(&path).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Integrity, "{e}");
    // The same package opens when the caller opts out of hashing.
    let p = aotrun::OpenOptions::new().verify_hashes(false).open(&path).unwrap();
    assert!(!p.info().unwrap().hashes_verified);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn malformed_manifest_is_bad_package() {
    let dir = common::packages_dir();
    for name in ["mlp_bad_manifest", "mlp_missing_weights"] {
        let e = Package::open(common::package_dir(&dir, name)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadPackage, "{name}: {e}");
    }
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn wrong_dtype_shape_and_count_are_invalid_argument() {
    let dir = common::packages_dir();
    let p = Package::open(common::package_dir(&dir, "mlp")).unwrap();
    let mut serial = p.runner().single_threaded().unwrap();
    let threaded = p.runner().threaded().unwrap();
    let x = vec![0.0f32; 2 * 256];
    let mut y = vec![0.0f32; 2 * 64];

    let xi = vec![0i32; 2 * 256];
    let bad_dtype = [TensorRef::new(&xi, &[2, 256]).unwrap()];
    let bad_shape = [TensorRef::new(&x, &[4, 128]).unwrap()];
    let bad_rank = [TensorRef::new(&x, &[512]).unwrap()];
    let good = [TensorRef::new(&x, &[2, 256]).unwrap()];
    let two = [good[0], good[0]];
    let cases: [(&str, &[TensorRef]); 5] =
        [("dtype", &bad_dtype), ("shape", &bad_shape), ("rank", &bad_rank), ("count (0)", &[]), ("count (2)", &two)];
    for (what, inputs) in cases {
        let mut out = [TensorMut::new(&mut y, &[2, 64]).unwrap()];
        let e = threaded.run(inputs, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "threaded, wrong {what}: {e}");
        let e = serial.run(inputs, &mut out).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "single_threaded, wrong {what}: {e}");
        let e = threaded.output_shapes(inputs).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "output_shapes, wrong {what}: {e}");
    }
    // Output of the wrong shape / count.
    let mut y_small = vec![0.0f32; 64];
    let e = threaded.run(&good, &mut [TensorMut::new(&mut y_small, &[1, 64]).unwrap()]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "output shape: {e}");
    let e = threaded.run(&good, &mut []).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "output count: {e}");
    // Neither runner is damaged.
    threaded.run(&good, &mut [TensorMut::new(&mut y, &[2, 64]).unwrap()]).unwrap();
    serial.run(&good, &mut [TensorMut::new(&mut y, &[2, 64]).unwrap()]).unwrap();
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn bad_runner_options_are_invalid_argument() {
    let dir = common::packages_dir();
    let p = Package::open(common::package_dir(&dir, "noop")).unwrap();
    for n in [0, -1, 1025] {
        let e = p.runner().num_models(n).threaded().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "num_models {n}: {e}");
    }
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn strict_single_threaded_on_abi_1_0_is_unsupported() {
    let dir = common::packages_dir();
    let p = Package::open(common::package_dir(&dir, "mlp_abi10")).unwrap();
    assert_eq!(p.info().unwrap().abi_version, (1, 0));
    let reason = p.mode_available(aotrun::Mode::SingleThreaded).unwrap_err();
    assert!(reason.contains("aotrun_pkg_container_run_single_threaded"), "{reason}");
    let e = p.runner().strict(true).single_threaded().unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported, "{e}");
    assert!(e.message().contains("aotrun_pkg_container_run_single_threaded"), "{e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_failing_package_is_package_error_and_the_runner_survives() {
    let dir = common::packages_dir();
    // tests/packages/throwing.cpp: forward() throws on every run; its SDK
    // turns that into a status, the host into PACKAGE with the message.
    let p = Package::open(common::package_dir(&dir, "throwing")).unwrap();
    let runner = p.runner().threaded().unwrap();
    let x = [1.0f32; 4];
    let mut y = [0.0f32; 4];
    for _ in 0..2 {
        let e = runner
            .run(&[TensorRef::new(&x, &[1, 4]).unwrap()], &mut [TensorMut::new(&mut y, &[1, 4]).unwrap()])
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Package, "{e}");
        assert!(e.message().contains("throwing: forward failed"), "{e}");
    }
    assert_eq!(runner.stats().unwrap().failures, 2);
}

#[test]
fn a_pinned_sha256_is_checked_before_loading() {
    let path = common::rust_package();
    let out = std::process::Command::new("sha256sum").arg(&path).output().expect("sha256sum (coreutils)");
    assert!(out.status.success());
    let digest = String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string();
    assert_eq!(digest.len(), 64);

    aotrun::OpenOptions::new().expected_sha256(digest.to_uppercase()).open(&path).unwrap();
    let wrong: String = digest.chars().rev().collect();
    let e = aotrun::OpenOptions::new().expected_sha256(wrong).open(&path).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Integrity, "{e}");
    let e = aotrun::OpenOptions::new().expected_sha256("abc").open(&path).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

#[test]
fn world_writable_package_files_are_refused_unless_allowed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("aotrun-rust-test-untrusted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let so = dir.join("libaffine_copy.so");
    std::fs::copy(common::rust_package(), &so).unwrap();
    std::fs::set_permissions(&so, std::fs::Permissions::from_mode(0o777)).unwrap();
    let refused = Package::open(&so).map(|_| ());
    let allowed = aotrun::OpenOptions::new().allow_untrusted_files(true).open(&so).map(|_| ());
    std::fs::remove_dir_all(&dir).ok();
    let e = refused.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Integrity, "{e}");
    allowed.unwrap();
}

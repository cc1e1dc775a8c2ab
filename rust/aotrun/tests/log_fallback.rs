//! The fallback warning for a 1.0 package in single_threaded mode arrives
//! through the Rust log bridge. One test in its own binary: the log handler
//! is process-wide and the warning is emitted once.

mod common;

use std::sync::{Arc, Mutex};

use aotrun::{Level, Mode, Package, TensorMut, TensorRef};

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn abi_1_0_single_threaded_fallback_warns_through_the_bridge() {
    let dir = common::packages_dir();
    let seen: Arc<Mutex<Vec<(Level, String)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    aotrun::set_log_level(aotrun::LevelFilter::Warn);
    aotrun::set_log_handler(Box::new(move |level, msg| sink.lock().unwrap().push((level, msg.to_string()))));

    let p = Package::open(common::package_dir(&dir, "mlp_abi10")).unwrap();
    let name = p.name().unwrap();
    let mut runner = p.runner().single_threaded().unwrap();
    // Fell back: runs through the threaded entry point, and says why.
    assert_eq!(runner.mode(), Mode::Threaded);
    let x = vec![0.25f32; 256];
    let mut y = vec![0.0f32; 64];
    runner.run(&[TensorRef::new(&x, &[1, 256]).unwrap()], &mut [TensorMut::new(&mut y, &[1, 64]).unwrap()]).unwrap();
    let stats = runner.stats().unwrap();
    assert_eq!((stats.requested_mode, stats.effective_mode), (Mode::SingleThreaded, Mode::Threaded));
    assert_eq!(stats.fallback_runs, 1);
    assert!(stats.fallback_reason.contains("aotrun_pkg_container_run_single_threaded"), "{stats:?}");

    aotrun::clear_log_handler();
    let seen = seen.lock().unwrap();
    let warnings: Vec<&String> = seen.iter().filter(|(l, _)| *l == Level::Warn).map(|(_, m)| m).collect();
    let fallback: Vec<&&String> =
        warnings.iter().filter(|m| m.contains("aotrun_pkg_container_run_single_threaded")).collect();
    assert_eq!(fallback.len(), 1, "exactly one fallback warning expected, got {seen:?}");
    let msg = fallback[0];
    assert!(msg.contains(&name), "warning names the package '{name}': {msg}");
    assert!(msg.contains("1.0"), "warning names the package's ABI version 1.0: {msg}");
    // The warning and the runner's recorded reason are the same sentence.
    assert_eq!(msg.as_str(), stats.fallback_reason, "warning text differs from stats.fallback_reason");

    // A second runner on the same package does not warn again.
    drop(seen);
    let again: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&again);
    aotrun::set_log_handler(Box::new(move |_, msg| sink.lock().unwrap().push(msg.to_string())));
    let _second = p.runner().single_threaded().unwrap();
    aotrun::clear_log_handler();
    let again = again.lock().unwrap();
    assert!(!again.iter().any(|m| m.contains("aotrun_pkg_container_run_single_threaded")), "warned twice: {again:?}");
}

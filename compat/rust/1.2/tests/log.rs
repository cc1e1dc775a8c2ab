//! Frozen client of crate 1.2, run time: the log bridge, with the fallback
//! warning of an ABI 1.0 package in single_threaded mode. In its own test
//! binary (the handler is process-wide). Never edited
//! (compat/rust/README.md).

use std::sync::{Arc, Mutex};

use aotrun::{Level, LevelFilter, Mode, Package, TensorMut, TensorRef};
use aotrun_client_1_2::packages_dir;

#[test]
fn fallback_warning_arrives_through_the_handler() {
    let seen: Arc<Mutex<Vec<(Level, String)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    aotrun::set_log_level(LevelFilter::Debug);
    assert_eq!(aotrun::log_level(), LevelFilter::Debug);
    aotrun::set_log_level(LevelFilter::Warn);
    assert_eq!(aotrun::log::log_level(), LevelFilter::Warn);
    let handler: aotrun::log::LogHandler = Box::new(move |level, msg| sink.lock().unwrap().push((level, msg.into())));
    aotrun::set_log_handler(handler);

    let p = Package::open(packages_dir().join("mlp_abi10")).unwrap();
    assert_eq!(p.info().unwrap().abi_version, (1, 0));
    assert!(p.mode_available(Mode::SingleThreaded).is_err());
    let e = p.runner().strict(true).single_threaded().unwrap_err();
    assert_eq!(e.code(), aotrun::ErrorCode::Unsupported, "{e}");
    let mut runner = p.runner().single_threaded().unwrap();
    assert_eq!(runner.mode(), Mode::Threaded);
    let x = vec![0.25f32; 256];
    let mut y = vec![0.0f32; 64];
    runner.run(&[TensorRef::new(&x, &[1, 256]).unwrap()], &mut [TensorMut::new(&mut y, &[1, 64]).unwrap()]).unwrap();
    let st = runner.stats().unwrap();
    assert_eq!((st.requested_mode, st.effective_mode, st.fallback_runs), (Mode::SingleThreaded, Mode::Threaded, 1));
    assert!(!st.fallback_reason.is_empty());

    aotrun::clear_log_handler();
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|(l, m)| *l == Level::Warn && m.contains("aotrun_pkg_container_run_single_threaded")),
        "{seen:?}"
    );
    assert!(Level::Error < Level::Debug);
    assert_eq!(Level::Warn.name(), "warn");
}

//! A log handler may clear or replace itself from inside (aotrun.h, "Calls
//! from callbacks"): the call returns at once and the running handler is
//! dropped only after it returns. Its own binary: the handler is
//! process-wide.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use aotrun::Package;

/// Opens the 1.0 package afresh and asks for single_threaded: one fallback
/// warning per opened package.
fn provoke_warning(dir: &std::path::Path) {
    let p = Package::open(common::package_dir(dir, "noop_abi10")).unwrap();
    let _runner = p.runner().single_threaded().unwrap();
}

/// Runs `f` on a thread and fails the test if it has not finished in time
/// (a deadlock would otherwise hang the test binary).
fn within(secs: u64, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(secs)).expect("deadlock: the call did not return");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_log_handler_may_clear_or_replace_itself() {
    let dir = common::packages_dir();
    aotrun::set_log_level(aotrun::LevelFilter::Warn);

    // Dropped exactly once, after its last call returned.
    struct DropCounter(Arc<AtomicUsize>);
    impl Drop for DropCounter {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let (d, c) = (DropCounter(Arc::clone(&drops)), Arc::clone(&calls));
    aotrun::set_log_handler(Box::new(move |_, _| {
        let _keep = &d;
        c.fetch_add(1, Ordering::SeqCst);
        aotrun::clear_log_handler();
        // Still alive here: clearing from inside defers the drop.
        assert_eq!(d.0.load(Ordering::SeqCst), 0);
    }));
    let d1 = dir.clone();
    within(20, move || provoke_warning(&d1));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the cleared handler was dropped once, after it returned");
    // Cleared: the next warning goes to stderr, not to the old handler.
    let d2 = dir.clone();
    within(20, move || provoke_warning(&d2));
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // Replacing itself: the replacement receives the next message.
    let replaced = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&replaced);
    aotrun::set_log_handler(Box::new(move |_, _| {
        let r = Arc::clone(&r);
        aotrun::set_log_handler(Box::new(move |_, _| {
            r.fetch_add(1, Ordering::SeqCst);
        }));
    }));
    let d3 = dir.clone();
    within(20, move || {
        provoke_warning(&d3);
        provoke_warning(&d3);
    });
    assert_eq!(replaced.load(Ordering::SeqCst), 1);
    aotrun::clear_log_handler();
}

//! Constants (weights) while serving, against the `weight_id` test package:
//! y = x + w[..] + b[..]; with every w = s and every b = 1000 s, every
//! element of y - x is 1001 s, so an output names the weight set it came
//! from, and an output mixing two sets is caught.

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aotrun::{ConstantsControl, DataType, ErrorCode, Package, TensorMut, TensorRef, Update};

const W: usize = 4096;

fn weight_id() -> Package {
    let dir = common::packages_dir();
    Package::open(common::package_dir(&dir, "weight_id")).expect("open weight_id")
}

/// The set an output came from; panics on a mix of sets.
fn set_of(x: &[f32], y: &[f32]) -> i64 {
    let sets: Vec<i64> = x.iter().zip(y).map(|(a, b)| ((b - a) / 1001.0).round() as i64).collect();
    assert!(sets.iter().all(|&s| s == sets[0]), "an output mixes weight sets: {sets:?}");
    sets[0]
}

/// Runs `batch` rows through `run` and returns the set the output names.
fn run_set(batch: usize, run: impl FnOnce(&[TensorRef<'_>], &mut [TensorMut<'_>]) -> aotrun::Result<()>) -> i64 {
    let shape = [batch as i64, 4];
    let x: Vec<f32> = (0..batch * 4).map(|i| (i % 13) as f32 * 0.25).collect();
    let mut y = vec![0.0f32; batch * 4];
    run(&[TensorRef::new(&x, &shape).unwrap()], &mut [TensorMut::new(&mut y, &shape).unwrap()]).expect("run");
    set_of(&x, &y)
}

/// Set `s`: every w = s, every b = 1000 s.
struct WeightSet {
    w: Vec<f32>,
    b: Vec<f32>,
}

const W_SHAPE: [i64; 1] = [W as i64];
const B_SHAPE: [i64; 1] = [4];

impl WeightSet {
    fn new(s: i64) -> WeightSet {
        WeightSet { w: vec![s as f32; W], b: vec![1000.0 * s as f32; 4] }
    }

    fn stage<'c>(&self, control: &'c mut ConstantsControl) -> aotrun::Result<aotrun::Staged<'c>> {
        let named = [("w", TensorRef::new(&self.w, &W_SHAPE)?), ("b", TensorRef::new(&self.b, &B_SHAPE)?)];
        control.stage_constants(&named, Update::Full)
    }
}

fn temp_file(leaf: &str) -> PathBuf {
    std::env::temp_dir().join(format!("aotrun_rust_constants_{}_{leaf}", std::process::id()))
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn the_package_lists_its_constants() {
    let package = weight_id();
    assert_eq!(package.info().unwrap().num_constants, 2);
    let list = package.constants().unwrap();
    let mut names: Vec<&str> = list.iter().map(|c| c.name()).collect();
    names.sort();
    assert_eq!(names, ["b", "w"]);
    for c in &list {
        assert_eq!(c.original_name(), c.name());
        assert_eq!(c.dtype(), DataType::F32);
        assert!(!c.folded());
        let shape = c.shape().expect("weight_id states its shapes");
        assert_eq!(shape, if c.name() == "w" { &W_SHAPE[..] } else { &B_SHAPE[..] });
        assert_eq!(c.nbytes(), Some(shape[0] as u64 * 4));
    }
    let e = package.constant(2).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("out of range"), "{e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn a_staged_set_is_used_after_its_swap_and_rolls_back() {
    let package = weight_id();
    let (runner, mut control) = package.runner().num_models(2).threaded_with_constants().unwrap();
    let run = |batch| run_set(batch, |i, o| runner.run(i, o));
    assert_eq!(run(8), 0);

    let mut one = WeightSet::new(1);
    let staged = one.stage(&mut control).unwrap();
    // Copied: the caller's buffers do not matter any more.
    one.w.fill(99.0);
    assert_eq!(staged.generation(), 1);
    assert_eq!(run(8), 0, "a staged set is not used before its swap");
    assert_eq!(runner.constants_state().unwrap().inactive_generation, Some(1));

    let swapped = staged.swap().unwrap();
    assert_eq!((swapped.generation(), swapped.previous_generation()), (1, 0));
    assert_eq!(run(8), 1);
    assert_eq!(run(3), 1);

    let staged = swapped.rollback().unwrap();
    assert_eq!(run(8), 0, "rolled back");
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation), (0, Some(1)));

    // The rolled-back set is staged again: swapping it re-applies it.
    let swapped = staged.swap().unwrap();
    assert_eq!(run(8), 1);
    swapped.release_previous().unwrap();
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation, s.updates, s.swaps), (1, None, 1, 3));
    assert_eq!(run(8), 1);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn serial_and_graph_runners_update_too() {
    let package = weight_id();
    for graph in [false, true] {
        let (mut runner, mut control) = if graph {
            package.runner().graph_with_constants().unwrap()
        } else {
            package.runner().single_threaded_with_constants().unwrap()
        };
        assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0);
        // The serial runner keeps running (&mut) while an update is staged.
        let staged = WeightSet::new(5).stage(&mut control).unwrap();
        assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0);
        let swapped = staged.swap().unwrap();
        for _ in 0..3 {
            assert_eq!(run_set(8, |i, o| runner.run(i, o)), 5, "graph={graph}");
        }
        drop(swapped.rollback().unwrap());
        assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0, "graph={graph}");
        assert_eq!(runner.constants_state().unwrap().inactive_generation, None, "a dropped Staged is freed");
    }
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn partial_updates_discard_and_a_dropped_swap_keeps_the_previous_set() {
    let package = weight_id();
    let (runner, mut control) = package.runner().threaded_with_constants().unwrap();
    let w = vec![3.0f32; W];
    let staged = control.stage_constants(&[("w", TensorRef::new(&w, &W_SHAPE).unwrap())], Update::Partial).unwrap();
    staged.discard().unwrap();
    assert_eq!(control.state().unwrap().inactive_generation, None);

    let swapped = control.stage_constants(&[("w", TensorRef::new(&w, &W_SHAPE).unwrap())], Update::Partial).unwrap();
    drop(swapped.swap().unwrap());
    // A partial update keeps b (set 0: all zeros), so y - x = 3 everywhere.
    let shape = [2i64, 4];
    let x = [0.0f32; 8];
    let mut y = [0.0f32; 8];
    runner.run(&[TensorRef::new(&x, &shape).unwrap()], &mut [TensorMut::new(&mut y, &shape).unwrap()]).unwrap();
    assert_eq!(y, [3.0; 8]);
    assert_eq!(control.state().unwrap().inactive_generation, Some(0), "dropping a Swapped keeps the previous set");
    control.release_inactive().unwrap();
    assert_eq!(control.state().unwrap().inactive_generation, None);
    control.release_inactive().unwrap(); // none left: still Ok
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn updates_from_a_safetensors_file() {
    let package = weight_id();
    let (mut runner, mut control) = package.runner().single_threaded_with_constants().unwrap();
    let path = temp_file("seven.safetensors");
    common::safetensors::write_f32(&path, &[("w", &W_SHAPE, &[7.0; W]), ("b", &B_SHAPE, &[7000.0; 4])]).unwrap();
    let staged = control.stage_constants_from_file(&path, Update::Full).unwrap();
    std::fs::remove_file(&path).unwrap(); // mapped: the set keeps its pages
    staged.swap().unwrap().release_previous().unwrap();
    assert_eq!(run_set(8, |i, o| runner.run(i, o)), 7);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn bad_updates_are_errors_naming_what_is_wrong() {
    let package = weight_id();
    let (runner, mut control) = package.runner().threaded_with_constants().unwrap();
    let four = [1.0f32; 4];
    let w = vec![1.0f32; W];

    let e = control.stage_constants(&[("v", TensorRef::new(&four, &B_SHAPE).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("no constant 'v'"), "{e}");

    let e = control.stage_constants(&[("w", TensorRef::new(&w, &W_SHAPE).unwrap())], Update::Full).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("'b'"), "a full update names what it leaves out: {e}");

    let e = control.stage_constants(&[("b", TensorRef::new(&w, &W_SHAPE).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("'b'"), "a wrong shape names the constant: {e}");

    let e = control.stage_constants(&[("w\0", TensorRef::new(&w, &W_SHAPE).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");

    let absent = temp_file("absent.safetensors");
    let e = control.stage_constants_from_file(&absent, Update::Full).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    assert!(e.message().contains(absent.to_str().unwrap()), "{e}");

    let junk = temp_file("junk.safetensors");
    std::fs::write(&junk, b"not a safetensors file").unwrap();
    let e = control.stage_constants_from_file(&junk, Update::Full).unwrap_err();
    std::fs::remove_file(&junk).ok();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains(junk.to_str().unwrap()), "{e}");

    // Nothing of it changed the runner.
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation, s.updates), (0, None, 0));
    assert_eq!(run_set(4, |i, o| runner.run(i, o)), 0);
}

/// Sets the flag when dropped: a panicking thread stops the others.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn runs_from_four_threads_never_mix_sets_while_another_thread_swaps_200_times() {
    const SWAPS: i64 = 200;
    let package = weight_id();
    let (runner, mut control) = package.runner().num_models(4).threaded_with_constants().unwrap();
    let done = AtomicBool::new(false);
    let runs = AtomicU64::new(0);
    let highest_seen = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let _stop = SetOnDrop(&done);
                while !done.load(Ordering::Acquire) {
                    // set_of panics on a mixed output.
                    let set = run_set(64, |i, o| runner.run(i, o));
                    assert!((0..=SWAPS).contains(&set), "set {set}");
                    highest_seen.fetch_max(set as u64, Ordering::Relaxed);
                    runs.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let control = &mut control;
        let (done, runs) = (&done, &runs);
        s.spawn(move || {
            // Stops the runners also when this thread panics.
            let _stop = SetOnDrop(done);
            for set in 1..=SWAPS {
                if done.load(Ordering::Acquire) {
                    break; // a runner thread failed
                }
                let swapped = WeightSet::new(set).stage(control).unwrap().swap().unwrap();
                swapped.release_previous().unwrap();
                // Let some runs start on each set (bounded: a runner thread
                // that panicked runs no more).
                let (before, t0) = (runs.load(Ordering::Relaxed), Instant::now());
                while runs.load(Ordering::Relaxed) == before && t0.elapsed() < Duration::from_secs(2) {
                    std::thread::yield_now();
                }
            }
        });
    });
    assert_eq!(run_set(8, |i, o| runner.run(i, o)), SWAPS);
    assert!(runs.load(Ordering::Relaxed) >= SWAPS as u64);
    assert!(highest_seen.load(Ordering::Relaxed) >= 1);
    let s = control.state().unwrap();
    assert_eq!(
        (s.active_generation, s.updates, s.swaps, s.inactive_generation),
        (SWAPS as u64, SWAPS as u64, SWAPS as u64, None)
    );
}

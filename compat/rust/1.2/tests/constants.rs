//! Frozen client of crate 1.2, run time: constants (weights), added to 1.2
//! before its release, against the `weight_id` test package: y = x + w[..] +
//! b[..]; with every w = s and every b = 1000 s, every element of y - x is
//! 1001 s, so an output names the weight set it came from, and an output
//! mixing two sets is caught. In its own test binary: weight_id reads
//! AOTRUN_TEST_SPIN_US, which window.rs sets.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aotrun::{
    ConstantInfo, ConstantsControl, ConstantsState, DataType, ErrorCode, Mode, Package, Staged, TensorMut, TensorRef,
    Update,
};
use aotrun_client_1_2::packages_dir;

fn weight_id() -> Package {
    Package::open(packages_dir().join("weight_id")).expect("opening the weight_id package")
}

/// The length of `w` as the package states it.
fn w_len(p: &Package) -> usize {
    let c = p.constants().unwrap().into_iter().find(|c| c.name() == "w").expect("weight_id has w");
    c.shape().expect("weight_id states its shapes")[0] as usize
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
    w_shape: [i64; 1],
}

const B_SHAPE: [i64; 1] = [4];

impl WeightSet {
    fn new(p: &Package, s: i64) -> WeightSet {
        let n = w_len(p);
        WeightSet { w: vec![s as f32; n], b: vec![1000.0 * s as f32; 4], w_shape: [n as i64] }
    }

    fn stage<'c>(&self, control: &'c mut ConstantsControl) -> aotrun::Result<Staged<'c>> {
        let named = [("w", TensorRef::new(&self.w, &self.w_shape)?), ("b", TensorRef::new(&self.b, &B_SHAPE)?)];
        control.stage_constants(&named, Update::Full)
    }

    /// Writes the set as a .safetensors file (float32, little-endian).
    fn write(&self, path: &Path) {
        let tensors: [(&str, &[i64], &[f32]); 2] = [("w", &self.w_shape, &self.w), ("b", &B_SHAPE, &self.b)];
        let mut header = String::from("{");
        let mut offset = 0usize;
        for (i, (name, shape, values)) in tensors.iter().enumerate() {
            let end = offset + values.len() * 4;
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            if i > 0 {
                header.push(',');
            }
            header.push_str(&format!(
                "\"{name}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{offset},{end}]}}",
                dims.join(",")
            ));
            offset = end;
        }
        header.push('}');
        while header.len() % 8 != 0 {
            header.push(' ');
        }
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        for (_, _, values) in tensors {
            bytes.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        }
        std::fs::write(path, bytes).unwrap();
    }
}

fn temp_file(leaf: &str) -> PathBuf {
    std::env::temp_dir().join(format!("aotrun_client_1_2_{}_{leaf}", std::process::id()))
}

#[test]
fn the_package_lists_its_constants() {
    let p = weight_id();
    assert_eq!(p.info().unwrap().num_constants, 2);
    let list: Vec<ConstantInfo<'_>> = p.constants().unwrap();
    let by_index: Vec<ConstantInfo<'_>> = (0..2).map(|i| p.constant(i).unwrap()).collect();
    assert_eq!(list, by_index);
    let mut names: Vec<&str> = list.iter().map(|c| c.name()).collect();
    names.sort();
    assert_eq!(names, ["b", "w"]);
    for c in &list {
        let copy: ConstantInfo<'_> = *c;
        assert_eq!(copy, *c);
        assert_eq!(c.original_name(), c.name());
        assert_eq!(c.dtype(), DataType::F32);
        assert!(!c.folded());
        let shape = c.shape().expect("weight_id states its shapes");
        assert_eq!(shape.len(), 1);
        if c.name() == "b" {
            assert_eq!(shape, &B_SHAPE[..]);
        }
        assert_eq!(c.nbytes(), Some(shape[0] as u64 * 4));
        assert!(format!("{c:?}").contains(c.name()));
    }
    let e = p.constant(2).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
}

#[test]
fn the_compile_time_function_runs() {
    let p = weight_id();
    let file = temp_file("ones.safetensors");
    WeightSet::new(&p, 1).write(&file);
    let state: ConstantsState = aotrun_client_1_2::constants(&p, &file).unwrap();
    std::fs::remove_file(&file).ok();
    assert_eq!(aotrun_client_1_2::constants_state_fields(&state).1, None, "{state:?}");
    assert_eq!((state.updates, state.swaps, state.graph_recaptures), (5, 4, 0), "{state:?}");
    assert!(state.active_generation >= 3, "{state:?}");
}

#[test]
fn a_staged_set_is_used_after_its_swap_and_rolls_back() {
    let p = weight_id();
    let (runner, mut control) = p.runner().num_models(2).threaded_with_constants().unwrap();
    assert_eq!(runner.mode(), Mode::Threaded);
    let run = |batch| run_set(batch, |i, o| runner.run(i, o));
    assert_eq!(run(8), 0);
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation, s.updates, s.swaps), (0, None, 0, 0));

    let mut one = WeightSet::new(&p, 1);
    let staged = one.stage(&mut control).unwrap();
    one.w.fill(99.0); // copied: the caller's buffers no longer matter
    assert_eq!(staged.generation(), 1);
    assert!(format!("{staged:?}").contains("Staged"));
    assert_eq!(run(8), 0, "a staged set is not used before its swap");
    assert_eq!(runner.constants_state().unwrap().inactive_generation, Some(1));

    let swapped = staged.swap().unwrap();
    assert_eq!((swapped.generation(), swapped.previous_generation()), (1, 0));
    assert!(format!("{swapped:?}").contains("Swapped"));
    assert_eq!(run(8), 1);
    assert_eq!(run(3), 1);

    let staged = swapped.rollback().unwrap();
    assert_eq!(staged.generation(), 1);
    assert_eq!(run(8), 0, "rolled back");
    let s = runner.constants_state().unwrap(); // the control is borrowed by `staged`
    assert_eq!((s.active_generation, s.inactive_generation), (0, Some(1)));

    // The rolled-back set is staged again: swapping it re-applies it.
    let swapped = staged.swap().unwrap();
    assert_eq!(run(8), 1);
    swapped.release_previous().unwrap();
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation, s.updates, s.swaps), (1, None, 1, 3));
    assert_eq!(s, control.state().unwrap());
    assert!(format!("{control:?}").contains("ConstantsControl"));
}

#[test]
fn serial_and_graph_runners_update_too() {
    let p = weight_id();
    for graph in [false, true] {
        let builder = p.runner().graph_warmup_runs(1);
        let (mut runner, mut control) =
            if graph { builder.graph_with_constants() } else { builder.single_threaded_with_constants() }.unwrap();
        assert_eq!(runner.mode(), if graph { Mode::Graph } else { Mode::SingleThreaded });
        for _ in 0..4 {
            assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0);
        }
        // The serial runner keeps running (&mut) while an update is staged.
        let staged = WeightSet::new(&p, 5).stage(&mut control).unwrap();
        assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0);
        let swapped = staged.swap().unwrap();
        for _ in 0..4 {
            assert_eq!(run_set(8, |i, o| runner.run(i, o)), 5, "graph={graph}");
        }
        let s = runner.constants_state().unwrap();
        if graph {
            assert!(s.graph_recaptures >= 1, "the new set captures its own graphs: {s:?}");
        } else {
            assert_eq!(s.graph_recaptures, 0, "{s:?}");
        }
        drop(swapped.rollback().unwrap());
        assert_eq!(run_set(8, |i, o| runner.run(i, o)), 0, "graph={graph}");
        assert_eq!(runner.constants_state().unwrap().inactive_generation, None, "a dropped Staged is freed");
    }
}

#[test]
fn partial_updates_discard_and_a_dropped_swap_keeps_the_previous_set() {
    let p = weight_id();
    let (runner, mut control) = p.runner().threaded_with_constants().unwrap();
    let n = w_len(&p);
    let w = vec![3.0f32; n];
    let w_shape = [n as i64];
    let staged = control.stage_constants(&[("w", TensorRef::new(&w, &w_shape).unwrap())], Update::Partial).unwrap();
    staged.discard().unwrap();
    assert_eq!(control.state().unwrap().inactive_generation, None);

    let staged = control.stage_constants(&[("w", TensorRef::new(&w, &w_shape).unwrap())], Update::Partial).unwrap();
    drop(staged.swap().unwrap());
    // A partial update keeps b (the package's: zeros), so y - x = 3.
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
fn updates_from_a_safetensors_file() {
    let p = weight_id();
    let (mut runner, mut control) = p.runner().single_threaded_with_constants().unwrap();
    let path = temp_file("seven.safetensors");
    WeightSet::new(&p, 7).write(&path);
    let staged = control.stage_constants_from_file(&path, Update::Full).unwrap();
    std::fs::remove_file(&path).unwrap(); // mapped: the set keeps its pages
    staged.swap().unwrap().release_previous().unwrap();
    assert_eq!(run_set(8, |i, o| runner.run(i, o)), 7);

    let path = temp_file("eight.safetensors");
    WeightSet::new(&p, 8).write(&path);
    let by_str = control.stage_constants_from_file(path.to_str().unwrap(), Update::Partial).unwrap();
    by_str.discard().unwrap();
    control.stage_constants_from_file(path.clone(), Update::Full).unwrap().swap().unwrap().release_previous().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(run_set(8, |i, o| runner.run(i, o)), 8);
}

#[test]
fn bad_updates_are_errors() {
    let p = weight_id();
    let (runner, mut control) = p.runner().threaded_with_constants().unwrap();
    let n = w_len(&p);
    let four = [1.0f32; 4];
    let w = vec![1.0f32; n];
    let w_shape = [n as i64];

    let e = control.stage_constants(&[("v", TensorRef::new(&four, &B_SHAPE).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains('v'), "{e}");
    let e = control.stage_constants(&[("w", TensorRef::new(&w, &w_shape).unwrap())], Update::Full).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("'b'"), "a full update names what it leaves out: {e}");
    let e = control.stage_constants(&[("b", TensorRef::new(&w, &w_shape).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    let e = control.stage_constants(&[("w\0", TensorRef::new(&w, &w_shape).unwrap())], Update::Partial).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");

    let absent = temp_file("absent.safetensors");
    let e = control.stage_constants_from_file(&absent, Update::Full).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    let junk = temp_file("junk.safetensors");
    std::fs::write(&junk, b"not a safetensors file").unwrap();
    let e = control.stage_constants_from_file(&junk, Update::Full).unwrap_err();
    std::fs::remove_file(&junk).ok();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");

    // None of it changed the runner.
    let s = runner.constants_state().unwrap();
    assert_eq!((s.active_generation, s.inactive_generation, s.updates, s.swaps), (0, None, 0, 0));
    assert_eq!(run_set(4, |i, o| runner.run(i, o)), 0);
}

#[test]
fn the_control_outlives_its_runner() {
    let p = weight_id();
    let (runner, mut control) = p.runner().threaded_with_constants().unwrap();
    drop(runner);
    WeightSet::new(&p, 2).stage(&mut control).unwrap().swap().unwrap().release_previous().unwrap();
    assert_eq!(control.state().unwrap().active_generation, 1);
}

/// Sets the flag when dropped: a panicking thread stops the others.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

#[test]
fn runs_from_two_threads_never_mix_sets_while_another_thread_swaps() {
    const SWAPS: i64 = 30;
    let p = weight_id();
    let sets: Vec<WeightSet> = (0..=SWAPS).map(|s| WeightSet::new(&p, s)).collect();
    let (runner, mut control) = p.runner().num_models(2).threaded_with_constants().unwrap();
    let done = AtomicBool::new(false);
    let runs = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let _stop = SetOnDrop(&done);
                while !done.load(Ordering::Acquire) {
                    let set = run_set(16, |i, o| runner.run(i, o));
                    assert!((0..=SWAPS).contains(&set), "set {set}");
                    runs.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // The control moves to another thread (Send) while the runner runs.
        let (done, runs, sets) = (&done, &runs, &sets);
        let control = &mut control;
        s.spawn(move || {
            let _stop = SetOnDrop(done);
            for set in &sets[1..] {
                if done.load(Ordering::Acquire) {
                    break; // a runner thread failed
                }
                set.stage(control).unwrap().swap().unwrap().release_previous().unwrap();
                let (before, t0) = (runs.load(Ordering::Relaxed), Instant::now());
                while runs.load(Ordering::Relaxed) == before && t0.elapsed() < Duration::from_secs(2) {
                    std::thread::yield_now();
                }
            }
        });
    });
    assert_eq!(run_set(8, |i, o| runner.run(i, o)), SWAPS);
    let s = control.state().unwrap();
    assert_eq!((s.active_generation, s.updates, s.swaps, s.inactive_generation), (30, 30, 30, None));
}

//! The example MLP package (examples/packages/mlp, built by CMake) against
//! the C++ reference outputs in <packages>/mlp/reference (index.json + raw
//! little-endian float32 files, written by tests/support/mlp_reference_dump).

mod common;

use std::path::{Path, PathBuf};

use aotrun::{DataType, Mode, Package, TensorMut, TensorRef};
use serde_json::Value;

struct Case {
    x: Vec<f32>,
    x_shape: Vec<i64>,
    y: Vec<f32>,
    y_shape: Vec<i64>,
}

fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(bytes.len() % 4, 0, "{} is not whole float32s", path.display());
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// `j[key]`, panicking with the key's name when absent.
fn field<'a>(j: &'a Value, key: &str) -> &'a Value {
    j.get(key).unwrap_or_else(|| panic!("reference index: key '{key}' missing in {j}"))
}

fn text_of<'a>(j: &'a Value, key: &str) -> &'a str {
    field(j, key).as_str().unwrap_or_else(|| panic!("reference index: '{key}' is not a string"))
}

fn shape(j: &Value, key: &str) -> Vec<i64> {
    let dims = field(j, key).as_array().unwrap_or_else(|| panic!("reference index: '{key}' is not an array"));
    dims.iter().map(|d| d.as_i64().unwrap_or_else(|| panic!("reference index: '{key}' holds {d}"))).collect()
}

/// The reference cases and their tolerance.
fn reference(dir: &Path) -> (Vec<Case>, f32) {
    let ref_dir: PathBuf = dir.join("mlp").join("reference");
    let index_path = ref_dir.join("index.json");
    let text = std::fs::read_to_string(&index_path)
        .unwrap_or_else(|e| panic!("{}: {e} (target mlp_reference_data builds it)", index_path.display()));
    let index: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", index_path.display()));
    assert_eq!(text_of(&index, "dtype"), "float32");
    assert_eq!(text_of(&index, "byte_order"), "little");
    let tol = field(&index, "tolerance").as_f64().expect("reference index: 'tolerance' is not a number") as f32;
    let cases: Vec<Case> = field(&index, "cases")
        .as_array()
        .expect("reference index: 'cases' is not an array")
        .iter()
        .map(|c| Case {
            x: read_f32(&ref_dir.join(text_of(c, "input"))),
            x_shape: shape(c, "input_shape"),
            y: read_f32(&ref_dir.join(text_of(c, "output"))),
            y_shape: shape(c, "output_shape"),
        })
        .collect();
    assert!(!cases.is_empty(), "{} lists no cases", index_path.display());
    (cases, tol)
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let (i, err) = got.iter().zip(want).map(|(g, w)| (g - w).abs()).enumerate().fold((0, 0.0f32), |best, (i, e)| {
        if e > best.1 || e.is_nan() {
            (i, e)
        } else {
            best
        }
    });
    assert!(err <= tol, "{what}: max |error| {err} at element {i} (got {}, want {}) > {tol}", got[i], want[i]);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn outputs_match_the_reference_in_every_mode() {
    let dir = common::packages_dir();
    let (cases, tol) = reference(&dir);
    assert!(tol <= 1e-4);
    let p = Package::open(common::package_dir(&dir, "mlp")).unwrap();
    let info = p.info().unwrap();
    assert_eq!((info.name.as_str(), info.abi_version, info.num_constants), ("mlp", (1, 1), 6));
    assert!(info.hashes_verified);
    assert_eq!(p.input(0).unwrap().dtype, DataType::F32);

    let threaded = p.runner().num_models(2).threaded().unwrap();
    let mut single = p.runner().strict(true).single_threaded().unwrap();
    let mut graph = p.runner().strict(true).graph().unwrap();
    for c in &cases {
        let inputs = [TensorRef::new(&c.x, &c.x_shape).unwrap()];
        assert_eq!(threaded.output_shapes(&inputs).unwrap(), vec![c.y_shape.clone()]);
        let what = |mode: &str| format!("{mode}, shape {:?}", c.x_shape);

        let mut y = vec![f32::NAN; c.y.len()];
        threaded.run(&inputs, &mut [TensorMut::new(&mut y, &c.y_shape).unwrap()]).unwrap();
        assert_close(&y, &c.y, tol, &what("threaded"));

        let mut y = vec![f32::NAN; c.y.len()];
        single.run(&inputs, &mut [TensorMut::new(&mut y, &c.y_shape).unwrap()]).unwrap();
        assert_close(&y, &c.y, tol, &what("single_threaded"));

        // Twice: the first graph run captures, the second replays.
        for round in 0..2 {
            let mut y = vec![f32::NAN; c.y.len()];
            graph.run(&inputs, &mut [TensorMut::new(&mut y, &c.y_shape).unwrap()]).unwrap();
            assert_close(&y, &c.y, tol, &what(&format!("graph round {round}")));
        }

        let out = threaded.run_alloc(&inputs).unwrap();
        assert_eq!(out[0].shape(), c.y_shape.as_slice());
        assert_close(out[0].as_slice::<f32>().unwrap(), &c.y, tol, &what("run_alloc"));
    }
    assert_eq!(single.mode(), Mode::SingleThreaded);
    assert_eq!(single.stats().unwrap().runs, cases.len() as u64);
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR=<build>/packages (ctest sets it)")]
fn threaded_runner_from_4_threads_matches_the_reference() {
    let dir = common::packages_dir();
    let (cases, tol) = reference(&dir);
    let p = Package::open(common::package_dir(&dir, "mlp")).unwrap();
    let runner = p.runner().num_models(2).threaded().unwrap();
    const ROUNDS: usize = 10;
    std::thread::scope(|s| {
        for t in 0..4 {
            let (runner, cases) = (&runner, &cases);
            s.spawn(move || {
                for r in 0..ROUNDS {
                    // Threads interleave both batch sizes.
                    let c = &cases[(t + r) % cases.len()];
                    let mut y = vec![f32::NAN; c.y.len()];
                    runner
                        .run(
                            &[TensorRef::new(&c.x, &c.x_shape).unwrap()],
                            &mut [TensorMut::new(&mut y, &c.y_shape).unwrap()],
                        )
                        .unwrap();
                    assert_close(&y, &c.y, tol, &format!("thread {t} round {r}"));
                }
            });
        }
    });
    let stats = runner.stats().unwrap();
    assert_eq!((stats.runs, stats.failures), (4 * ROUNDS as u64, 0));
}

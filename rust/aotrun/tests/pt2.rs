//! A real PyTorch AOTInductor package (compat/aoti/fixtures/torch-2.15.0/mlp.pt2)
//! through the safe crate, against eager PyTorch's output saved beside it.
//! Needs libtorch: `AOTRUN_LIBTORCH` (scripts/test.sh fetches one) and
//! `AOTRUN_PT2_FIXTURES` (set by ctest); ignored without them.

use std::path::{Path, PathBuf};

use aotrun::{DataType, ErrorCode, OpenOptions, Package, TensorMut, TensorRef};

/// The fixtures. The tests are ignored (build.rs: cfg `aotrun_pt2`) unless
/// both variables were set when they were built; then a bad value fails.
fn fixtures() -> PathBuf {
    let d = std::env::var_os("AOTRUN_PT2_FIXTURES").expect("AOTRUN_PT2_FIXTURES is set (cfg aotrun_pt2)");
    let d = PathBuf::from(d).join("torch-2.15.0");
    assert!(d.is_dir(), "{} is not a directory", d.display());
    d
}

/// A little-endian float32 .npy file: (shape, values).
fn read_npy(path: &Path) -> (Vec<i64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.contains("'<f4'"), "{}: not float32", path.display());
    let dims = &header[header.find('(').unwrap() + 1..header.find(')').unwrap()];
    let shape = dims.split(',').filter(|d| !d.trim().is_empty()).map(|d| d.trim().parse().unwrap()).collect();
    let data = bytes[10 + hlen..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    (shape, data)
}

/// torch.testing.assert_close's float32 defaults.
fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5 + 1.3e-6 * w.abs(), "{what}: element {i}: {g} vs {w}");
    }
}

#[test]
#[cfg_attr(not(aotrun_pt2), ignore = "needs AOTRUN_PT2_FIXTURES and AOTRUN_LIBTORCH (scripts/test.sh)")]
fn pt2_mlp_matches_eager_pytorch_in_every_mode() {
    let dir = fixtures();
    let p = Package::open(dir.join("mlp.pt2")).unwrap();
    let info = p.info().unwrap();
    assert_eq!((info.format.as_str(), info.name.as_str()), ("pt2", "mlp"));
    let input = p.input(0).unwrap();
    assert!(input.known);
    assert_eq!((input.dtype, input.shape.clone()), (DataType::F32, vec![4, 64]));
    let (x_shape, x) = read_npy(&dir.join("mlp.in0.npy"));
    let (y_shape, want) = read_npy(&dir.join("mlp.out0.npy"));

    let threaded = p.runner().threaded().unwrap();
    let mut single = p.runner().strict(true).single_threaded().unwrap();
    let mut graph = p.runner().strict(true).graph().unwrap();
    let inputs = [TensorRef::new(&x, &x_shape).unwrap()];
    let mut y = vec![f32::NAN; want.len()];
    threaded.run(&inputs, &mut [TensorMut::new(&mut y, &y_shape).unwrap()]).unwrap();
    assert_close(&y, &want, "threaded");
    let mut y = vec![f32::NAN; want.len()];
    single.run(&inputs, &mut [TensorMut::new(&mut y, &y_shape).unwrap()]).unwrap();
    assert_close(&y, &want, "single_threaded");
    for round in 0..3 {
        let mut y = vec![f32::NAN; want.len()];
        graph.run(&inputs, &mut [TensorMut::new(&mut y, &y_shape).unwrap()]).unwrap();
        assert_close(&y, &want, &format!("graph round {round}"));
    }
    assert_eq!(graph.stats().unwrap().graph_captures, 1);
    let out = threaded.run_alloc(&inputs).unwrap();
    assert_close(out[0].as_slice::<f32>().unwrap(), &want, "run_alloc");
}

#[test]
#[cfg_attr(not(aotrun_pt2), ignore = "needs AOTRUN_PT2_FIXTURES and AOTRUN_LIBTORCH (scripts/test.sh)")]
fn pt2_unknown_model_name_is_not_found() {
    let dir = fixtures();
    let err = OpenOptions::new().pt2_model("decoder").open(dir.join("mlp.pt2")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    assert!(err.message().contains("has no model named 'decoder'; it holds: model"), "{}", err.message());
    let err = OpenOptions::new().pt2_model("a/b").open(dir.join("mlp.pt2")).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

//! The package written in Rust (crate aotrun-package, libaotrun_rust_affine.so)
//! opened and run by the C++ runtime through this crate. Needs only
//! libaotrun, not AOTRUN_PACKAGES_DIR.

mod common;

use aotrun::{DataType, ErrorCode, Mode, Package, TensorMut, TensorRef};

fn open() -> Package {
    let path = common::rust_package();
    Package::open(&path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()))
}

#[test]
fn loader_sees_abi_1_1_and_the_specs() {
    let p = open();
    let info = p.info().unwrap();
    assert_eq!(info.abi_version, (1, 1));
    assert_eq!(info.format, "aotrun-so");
    assert_eq!((info.num_inputs, info.num_outputs, info.num_constants), (1, 1, 0));
    let x = p.input(0).unwrap();
    assert_eq!((x.name.as_str(), x.dtype, x.shape.as_slice()), ("x", DataType::F32, &[-1i64, 4][..]));
    let y = p.output(0).unwrap();
    assert_eq!((y.name.as_str(), y.dtype, y.shape.as_slice()), ("y", DataType::F32, &[-1i64, 4][..]));
    assert_eq!(p.input(1).unwrap_err().code(), ErrorCode::InvalidArgument);
    // Every required and the 1.1 optional entry point is found.
    let symbols = p.symbols().unwrap();
    assert!(!symbols.is_empty());
    for s in &symbols {
        if s.required || s.name == "aotrun_pkg_container_run_single_threaded" {
            assert!(s.found, "{} not found", s.name);
        }
    }
    assert_eq!(p.mode_available(Mode::SingleThreaded), Ok(()));
}

#[test]
fn runs_in_every_mode() {
    let p = open();
    let x: Vec<f32> = (0..12).map(|i| i as f32 * 0.5 - 2.0).collect();
    let shape = [3i64, 4];
    let want = common::affine(&x);
    let inputs = [TensorRef::new(&x, &shape).unwrap()];

    let threaded = p.runner().num_models(2).threaded().unwrap();
    assert_eq!(threaded.mode(), Mode::Threaded);
    assert_eq!(threaded.output_shapes(&inputs).unwrap(), vec![vec![3, 4]]);
    let mut y = vec![0.0f32; 12];
    threaded.run(&inputs, &mut [TensorMut::new(&mut y, &shape).unwrap()]).unwrap();
    assert_eq!(y, want);

    let mut single = p.runner().strict(true).single_threaded().unwrap();
    assert_eq!(single.mode(), Mode::SingleThreaded);
    let mut y = vec![0.0f32; 12];
    single.run(&inputs, &mut [TensorMut::new(&mut y, &shape).unwrap()]).unwrap();
    assert_eq!(y, want);
    let stats = single.stats().unwrap();
    assert_eq!((stats.runs, stats.fallback_runs, stats.fallback_reason.as_str()), (1, 0, ""));

    // Graph: captured per input shape, replayed; different inputs of the
    // same shape must give fresh results (inputs are copied in or reused).
    let mut graph = p.runner().strict(true).graph().unwrap();
    for round in 0..3 {
        let xr: Vec<f32> = x.iter().map(|v| v + round as f32).collect();
        let mut y = vec![0.0f32; 12];
        graph
            .run(&[TensorRef::new(&xr, &shape).unwrap()], &mut [TensorMut::new(&mut y, &shape).unwrap()])
            .unwrap_or_else(|e| panic!("graph round {round}: {e}"));
        assert_eq!(y, common::affine(&xr), "graph round {round}");
    }
    let stats = graph.stats().unwrap();
    assert_eq!(stats.effective_mode, Mode::Graph);
    assert_eq!((stats.graph_captures, stats.graphs_cached), (1, 1), "one shape, one graph: {stats:?}");
    assert!(stats.graph_replays >= 1, "{stats:?}");
    graph.evict_graphs().unwrap();
    assert_eq!(graph.stats().unwrap().graphs_cached, 0);
}

#[test]
fn run_alloc_hands_over_outputs() {
    let p = open();
    let runner = p.runner().threaded().unwrap();
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let out = runner.run_alloc(&[TensorRef::new(&x, &[1, 4]).unwrap()]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape(), &[1, 4]);
    assert_eq!(out[0].dtype(), DataType::F32);
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[3.0, 5.0, 7.0, 9.0]);
    assert_eq!(out[0].as_slice::<i32>().unwrap_err().code(), ErrorCode::InvalidArgument);
}

#[test]
fn wrong_inputs_are_invalid_argument() {
    let p = open();
    let runner = p.runner().threaded().unwrap();
    let x = vec![0.0f32; 8];
    let mut y = vec![0.0f32; 8];

    // wrong dtype
    let xi = vec![0i32; 8];
    let e = runner
        .run(&[TensorRef::new(&xi, &[2, 4]).unwrap()], &mut [TensorMut::new(&mut y, &[2, 4]).unwrap()])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    // wrong shape (second dimension is fixed at 4)
    let e = runner
        .run(&[TensorRef::new(&x, &[4, 2]).unwrap()], &mut [TensorMut::new(&mut y, &[4, 2]).unwrap()])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    // wrong count
    let e = runner.run(&[], &mut [TensorMut::new(&mut y, &[2, 4]).unwrap()]).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    // output shape that does not match the input's
    let mut y1 = vec![0.0f32; 4];
    let e = runner
        .run(&[TensorRef::new(&x, &[2, 4]).unwrap()], &mut [TensorMut::new(&mut y1, &[1, 4]).unwrap()])
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    // The runner stays usable.
    runner.run(&[TensorRef::new(&x, &[2, 4]).unwrap()], &mut [TensorMut::new(&mut y, &[2, 4]).unwrap()]).unwrap();
    assert_eq!(y, vec![1.0; 8]);
}

#[test]
fn threaded_runner_shared_by_4_threads() {
    let p = open();
    let runner = p.runner().num_models(2).threaded().unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let runner = &runner;
            s.spawn(move || {
                for i in 0..250 {
                    let x: Vec<f32> = (0..8).map(|k| (t * 10_000 + i * 10 + k) as f32).collect();
                    let mut y = vec![0.0f32; 8];
                    runner
                        .run(&[TensorRef::new(&x, &[2, 4]).unwrap()], &mut [TensorMut::new(&mut y, &[2, 4]).unwrap()])
                        .unwrap();
                    assert_eq!(y, common::affine(&x), "thread {t} iteration {i}");
                }
            });
        }
    });
    assert_eq!(runner.stats().unwrap().runs, 1000);
}

//! A bad request to a `.pt2` (issue #29) is an error for that request, in
//! Rust as in C: token ids outside GPT-2's vocabulary are InvalidArgument
//! naming the input, the element and the table, and the runner goes on to
//! serve the next request. The model (tests/pt2/requests/gpt2.pt2:
//! vocabulary 1000, 128 positions) runs on aotrun's own shim, so only the
//! fixtures are needed (`AOTRUN_PT2_FIXTURES`, set by ctest).

use std::path::PathBuf;

use aotrun::{ErrorCode, OpenOptions, TensorMut, TensorRef};

#[test]
#[cfg_attr(not(aotrun_pt2_fixtures), ignore = "needs AOTRUN_PT2_FIXTURES (set by ctest)")]
fn ids_outside_the_vocabulary_are_invalid_argument_and_the_next_request_runs() {
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/pt2/requests/gpt2.pt2");
    let p = OpenOptions::new().provider("shim").open(model).unwrap();
    let mut r = p.runner().single_threaded().unwrap();
    let shape = [2i64, 16];
    let mut ids = vec![7i64; 32];
    let mut y = vec![f32::NAN; 2 * 16 * 64];
    let mut run = |ids: &[i64], y: &mut [f32]| {
        r.run(&[TensorRef::new(ids, &shape).unwrap()], &mut [TensorMut::new(y, &[2, 16, 64]).unwrap()])
    };
    run(&ids, &mut y).unwrap();
    let good = y.clone();
    assert!(good.iter().all(|v| v.is_finite()));
    for bad in [-1i64, 1000, 1001, 1 << 40] {
        ids[19] = bad;
        let e = run(&ids, &mut y).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
        let want = format!("element [1, 3] is {bad}, outside [0, 1000)");
        assert!(e.message().contains(&want), "{e}");
    }
    ids[19] = 7;
    run(&ids, &mut y).unwrap();
    assert_eq!(y, good);
}

//! The model's own names for a `.pt2`'s tensors (issue #28 item 3): keyword
//! arguments and output keys from the call signature the archive records,
//! the placeholders staying [`TensorInfo::name`]. The model
//! (tests/pt2/names/named.pt2, `forward(x, *, mask, extra)` returning
//! `{"logits", "features"}`) runs on aotrun's own shim.

use std::path::PathBuf;

use aotrun::{ErrorCode, OpenOptions};

#[test]
#[cfg_attr(not(aotrun_pt2_fixtures), ignore = "needs AOTRUN_PT2_FIXTURES (set by ctest)")]
fn keyword_arguments_and_output_keys_are_named_as_the_model_names_them() {
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/pt2/names/named.pt2");
    let p = OpenOptions::new().provider("shim").open(model).unwrap();
    let inputs: Vec<String> = (0..4).map(|i| p.input_model_name(i).unwrap()).collect();
    // x is positional: torch records no name for it, so it keeps its own.
    assert_eq!(inputs, ["arg4_1", "mask", "extra.bias", "extra.gain"]);
    assert_eq!(p.input(1).unwrap().name, "arg5_1");
    let outputs: Vec<String> = (0..2).map(|i| p.output_model_name(i).unwrap()).collect();
    assert_eq!(outputs, ["logits", "features"]);
    assert_eq!(p.output(0).unwrap().name, "output0");
    let e = p.output_model_name(2).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("output index 2 out of range"), "{e}");
}

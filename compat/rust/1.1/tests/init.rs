#![cfg(feature = "load-dynamic")]
//! Frozen client of crate 1.1, run time: `init_from` before anything else
//! (its own test binary, so it is the first call into aotrun). Never edited
//! (compat/rust/README.md).

#[test]
fn init_from_the_library_named_then_init_says_where() {
    // The build tree's library, as the build script found it.
    let dir = std::env::var_os("AOTRUN_LIB_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("AOTRUN_BUILD_DIR").map(|b| std::path::PathBuf::from(b).join("c_api")))
        .expect("AOTRUN_LIB_DIR or AOTRUN_BUILD_DIR (ctest sets them)");
    let from = aotrun::init_from(&dir).expect("init_from the build tree's library");
    assert!(from.contains("libaotrun.so.1"), "{from}");
    assert_eq!(aotrun::init().unwrap(), from);
    // Again with the same file is fine.
    aotrun::init_from(dir.join("libaotrun.so.1")).unwrap();
    let _ = aotrun_client_1_1::packages_dir();
    assert_eq!(aotrun::version().0, 1);
}

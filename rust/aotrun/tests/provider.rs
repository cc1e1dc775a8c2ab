//! Which C shim provider serves a package, and why (`OpenOptions::provider`,
//! `Package::provider`; C API 1.3). The provider is chosen once per process
//! (this test binary is one): the `.pt2` here is forced onto aotrun's own
//! shim, which needs no libtorch, only the fixtures (`AOTRUN_PT2_FIXTURES`,
//! set by ctest).

mod common;

use std::path::PathBuf;

use aotrun::{ErrorCode, OpenOptions, Package, ProviderPreview, TensorMut, TensorRef};

#[test]
#[cfg_attr(not(aotrun_pt2_fixtures), ignore = "needs AOTRUN_PT2_FIXTURES (set by ctest)")]
fn a_pt2_forced_onto_the_shim_reports_it_and_why() {
    let fixtures = PathBuf::from(std::env::var_os("AOTRUN_PT2_FIXTURES").expect("cfg aotrun_pt2_fixtures"));
    let p = OpenOptions::new().provider("shim").open(fixtures.join("torch-2.15.0/mlp.pt2")).unwrap();
    let provider = p.provider().unwrap().expect("a .pt2 has a provider");
    assert_eq!(provider.name, "shim");
    // The test threads share one process: when another test opened a .pt2
    // first, the reason also says the shim was already loaded for it.
    let forced = "forced by the package option 'provider' ('shim')";
    assert!(
        provider.reason == forced
            || (provider.reason.starts_with(forced) && provider.reason.contains("loaded for an earlier .pt2 package")),
        "{}",
        provider.reason
    );
    let x = vec![0.5f32; 4 * 64];
    let mut y = vec![f32::NAN; 4 * 16];
    let r = p.runner().threaded().unwrap();
    r.run(&[TensorRef::new(&x, &[4, 64]).unwrap()], &mut [TensorMut::new(&mut y, &[4, 16]).unwrap()]).unwrap();
    assert!(y.iter().all(|v| v.is_finite()), "{y:?}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR (set by ctest)")]
fn a_package_calling_no_shim_has_no_provider() {
    let p = Package::open(common::package_so(&common::packages_dir(), "counting")).unwrap();
    assert_eq!(p.provider().unwrap(), None);
}

#[test]
fn an_unknown_provider_is_invalid_argument_naming_it() {
    let e = OpenOptions::new().provider("torch").open("/nonexistent.pt2").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.message().contains("unknown C shim provider 'torch' (expected auto, shim or libtorch)"), "{e}");
}

#[test]
#[cfg_attr(not(aotrun_pt2_fixtures), ignore = "needs AOTRUN_PT2_FIXTURES (set by ctest)")]
fn the_provider_is_previewed_before_open_and_open_agrees() {
    let fixtures = PathBuf::from(std::env::var_os("AOTRUN_PT2_FIXTURES").expect("cfg aotrun_pt2_fixtures"));
    let mlp = fixtures.join("torch-2.15.0/mlp.pt2");
    let shim = OpenOptions::new().provider("shim");
    let preview = Package::preview_provider(&mlp, &shim).unwrap();
    assert_eq!(preview.name.as_deref(), Some("shim"), "{preview:?}");
    let library = preview.library.clone().expect("the shim's library");
    assert!(library.to_string_lossy().contains("libaotrun_shim.so.1"), "{preview:?}");
    let opened = shim.open(&mlp).unwrap().provider().unwrap().expect("a .pt2 has a provider");
    assert_eq!(Some(opened.name), preview.name);
    // Forcing libtorch with none configured: the refusal is the answer.
    let refused = Package::preview_provider(&mlp, &OpenOptions::new().provider("libtorch")).unwrap();
    assert_eq!(refused.name, None, "{refused:?}");
    assert!(refused.reason.contains("asks for libtorch"), "{refused:?}");
    let e = Package::preview_provider("/nonexistent.pt2", &shim).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
}

#[test]
#[cfg_attr(not(aotrun_packages), ignore = "needs AOTRUN_PACKAGES_DIR (set by ctest)")]
fn a_package_calling_no_shim_previews_no_provider() {
    let p = Package::preview_provider(common::package_so(&common::packages_dir(), "counting"), &OpenOptions::new());
    assert_eq!(p.unwrap(), ProviderPreview { name: None, library: None, reason: String::new() });
}

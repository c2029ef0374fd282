//! Build script of the `background` crate (the crate that becomes the extension's service
//! worker). It checks the source `manifest.json` and `extension/` at compile time with
//! `tandem_manifest::check` (crates/manifest, which lists every rule and tests each one), so
//! a manifest Chrome or the Chrome Web Store would refuse, or one that does not match the
//! code, fails the build instead of failing silently in the browser or at submission.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = crate_dir.join("../..");
    let manifest_path = root.join("manifest.json");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("extension").display()
    );
    let crate_version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let checked = std::fs::read_to_string(&manifest_path)
        .map_err(|e| e.to_string())
        .and_then(|text| {
            tandem_manifest::check(&root, &text, &crate_version).map_err(|e| e.to_string())
        });
    if let Err(problem) = checked {
        // A panic is how a build script reports a failure with its reason.
        panic!("manifest.json: {problem}");
    }
}

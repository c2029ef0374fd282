//! Each refusal, on the repository's own manifest and files with one thing changed.

use super::*;
use serde_json::json;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(root().join("manifest.json")).expect("the manifest");
    parse("manifest.json", &text).expect("valid JSON")
}

fn run(m: &Value) -> Result<(), Problem> {
    check(&root(), &m.to_string(), env!("CARGO_PKG_VERSION"))
}

#[test]
fn the_repository_manifest_passes() {
    assert_eq!(run(&manifest()), Ok(()));
}

#[test]
fn a_manifest_without_icons_is_refused() {
    let mut m = manifest();
    m.as_object_mut().expect("an object").remove("icons");
    assert_eq!(
        run(&m),
        Err(Problem::MissingIcon {
            key: "icons",
            size: 16
        })
    );
}

#[test]
fn an_action_without_its_128_px_icon_is_refused() {
    let mut m = manifest();
    m["action"]["default_icon"]
        .as_object_mut()
        .expect("default_icon")
        .remove("128");
    assert_eq!(
        run(&m),
        Err(Problem::MissingIcon {
            key: "action.default_icon",
            size: 128
        })
    );
    m["action"]
        .as_object_mut()
        .expect("action")
        .remove("default_icon");
    assert_eq!(
        run(&m),
        Err(Problem::MissingIcon {
            key: "action.default_icon",
            size: 16
        })
    );
}

#[test]
fn an_icon_of_the_wrong_size_or_not_a_png_is_refused() {
    let mut m = manifest();
    m["icons"]["48"] = json!("icons/tandem-32.png");
    assert_eq!(
        run(&m),
        Err(Problem::IconWrongSize {
            key: "icons",
            size: 48,
            file: "icons/tandem-32.png".into(),
            width: 32,
            height: 32
        })
    );
    let mut m = manifest();
    m["action"]["default_icon"]["32"] = json!("background.js");
    assert_eq!(
        run(&m),
        Err(Problem::IconNotPng {
            key: "action.default_icon",
            size: 32,
            file: "background.js".into()
        })
    );
    m["action"]["default_icon"]["32"] = json!("icons/missing-32.png");
    assert!(matches!(run(&m), Err(Problem::IconNotPng { size: 32, .. })));
}

#[test]
fn png_size_reads_the_header_and_refuses_other_bytes() {
    let png = std::fs::read(root().join("extension/icons/tandem-128.png")).expect("the icon");
    assert_eq!(png_size(&png), Some((128, 128)));
    assert_eq!(png_size(&png[..20]), None, "cut inside the header");
    assert_eq!(png_size(b"GIF89a\x10\x00\x10\x00"), None);
    assert_eq!(png_size(b""), None);
}

#[test]
fn a_description_over_132_characters_is_refused_in_any_language() {
    let long = "x".repeat(133);
    let catalogs = vec![
        (
            "de".to_string(),
            json!({"extDescription": {"message": "kurz"}}).to_string(),
        ),
        (
            "en".to_string(),
            json!({"extDescription": {"message": long}}).to_string(),
        ),
    ];
    assert_eq!(
        catalogs_fit("extDescription", &catalogs),
        Err(Problem::LongDescription {
            locale: "en".into(),
            chars: 133
        })
    );
    // Characters, not bytes: 132 Japanese characters are 396 bytes and fit.
    let ja = "あ".repeat(132);
    assert_eq!(description_fits("ja", &ja), Ok(()));
    assert!(description_fits("ja", &format!("{ja}あ")).is_err());
}

#[test]
fn a_language_without_the_description_is_refused() {
    let catalogs = vec![(
        "fr".to_string(),
        json!({"extName": {"message": "Tandem"}}).to_string(),
    )];
    assert_eq!(
        catalogs_fit("extDescription", &catalogs),
        Err(Problem::MissingDescription {
            locale: "fr".into(),
            key: "extDescription".into()
        })
    );
}

#[test]
fn a_literal_description_is_checked_too() {
    let mut m = manifest();
    m["description"] = json!("y".repeat(140));
    assert_eq!(
        run(&m),
        Err(Problem::LongDescription {
            locale: "manifest.json".into(),
            chars: 140
        })
    );
}

#[test]
fn a_permission_the_worker_needs_may_be_optional_but_not_missing() {
    let mut m = manifest();
    let keep = |list: &Value, drop: &str| -> Value {
        json!(list
            .as_array()
            .expect("a list")
            .iter()
            .filter(|p| p.as_str() != Some(drop))
            .collect::<Vec<_>>())
    };
    for name in ["notifications", "identity"] {
        m["permissions"] = keep(&m["permissions"], name);
        m["optional_permissions"] = keep(&m["optional_permissions"], name);
    }
    assert_eq!(
        run(&m),
        Err(rule(
            "permissions or optional_permissions must include \"notifications\""
        ))
    );
    m["optional_permissions"] = json!(["notifications", "identity"]);
    assert_eq!(run(&m), Ok(()));
    m["permissions"] = keep(&m["permissions"], "debugger");
    m["optional_permissions"] = json!(["notifications", "identity", "debugger"]);
    assert_eq!(run(&m), Err(rule("permissions must include \"debugger\"")));
}

//! Build script of the `background` crate (the crate that becomes the extension's service
//! worker). It checks the source `manifest.json` at compile time, so a manifest Chrome would
//! refuse to load, or one that does not match the code, fails the build instead of failing
//! silently in the browser:
//! - it parses, is Manifest V3, and its `version` equals the crate version;
//! - the extension-page CSP allows 'wasm-unsafe-eval' (without it the wasm cannot load);
//! - the service worker is a module (the bootstrap uses `import`);
//! - it asks for the permissions the worker's `chrome.*` calls need, host access to http and
//!   https sites (the agent acts on any site the user points it at), and declares the
//!   "ask-tandem" shortcut the worker answers;
//! - every file it names (service worker, side panel) exists under `extension/`.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = crate_dir.join("../..");
    let manifest_path = root.join("manifest.json");
    println!("cargo:rerun-if-changed={}", manifest_path.display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("extension").display()
    );
    if let Err(problem) = check(&root, &manifest_path) {
        // A panic is how a build script reports a failure with its reason.
        panic!("manifest.json: {problem}");
    }
}

fn check(root: &Path, manifest_path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(manifest_path).map_err(|e| format!("cannot read: {e}"))?;
    // A build script is not shipped: serde_json's reader is fine here (clippy.toml's rule is
    // about the wasm), and a `Value` has no struct to read.
    #[allow(clippy::disallowed_methods)]
    let m: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}"))?;
    let field = |path: &[&str]| -> Option<&serde_json::Value> {
        path.iter().try_fold(&m, |v, key| v.get(key))
    };
    let string = |path: &[&str]| {
        field(path)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };

    if field(&["manifest_version"]).and_then(|v| v.as_u64()) != Some(3) {
        return Err("manifest_version must be 3".into());
    }
    let crate_version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let version = string(&["version"]);
    if version != crate_version {
        return Err(format!(
            "version {version:?} differs from the crate version {crate_version:?}"
        ));
    }
    let csp = string(&["content_security_policy", "extension_pages"]);
    if !csp.contains("'wasm-unsafe-eval'") {
        return Err(format!(
            "the extension_pages CSP must allow 'wasm-unsafe-eval', it is {csp:?}"
        ));
    }
    // The chrome.* APIs the worker calls: without its permission an API is simply missing
    // at run time, which would surface as a silent failure in the browser.
    let permissions: Vec<&str> = field(&["permissions"])
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|p| p.as_str()).collect())
        .unwrap_or_default();
    for needed in [
        "sidePanel",
        "storage",
        "tabs",
        "alarms",
        "contextMenus",
        "scripting",
        "activeTab",
        // The task's firewall (crates/background/src/agent/firewall.rs): session rules on
        // the task's tabs, and the watch that turns what they held back into a question.
        "declarativeNetRequest",
        "webRequest",
        // Trusted input for actions a page ignored as script events (agent/trusted.rs).
        "debugger",
        // A scheduled workflow's outcome, or its need of the user (crates/background/src/workflows.rs).
        "notifications",
    ] {
        if !permissions.contains(&needed) {
            return Err(format!("permissions must include {needed:?}"));
        }
    }
    // The agent acts on whatever http/https site the user points it at, including a second
    // site a task navigates to, where no user gesture could grant access (ARCHITECTURE.md,
    // "Site access"); provider APIs and local servers (Ollama) are covered too.
    let hosts: Vec<&str> = field(&["host_permissions"])
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|p| p.as_str()).collect())
        .unwrap_or_default();
    for needed in ["http://*/*", "https://*/*"] {
        if !hosts.contains(&needed) {
            return Err(format!("host_permissions must include {needed:?}"));
        }
    }
    // The worker answers the "ask-tandem" shortcut by that name (crates/background/src/ask.rs).
    if field(&["commands", "ask-tandem", "description"]).is_none() {
        return Err("commands must declare \"ask-tandem\" with a description".into());
    }
    if string(&["background", "type"]) != "module" {
        return Err("background.type must be \"module\"".into());
    }
    for path in [
        ["background", "service_worker"],
        ["side_panel", "default_path"],
    ] {
        let file = string(&path);
        if file.is_empty() || !root.join("extension").join(&file).is_file() {
            return Err(format!(
                "{} names {file:?}, which is not a file in extension/",
                path.join(".")
            ));
        }
    }
    // Scripts put into pages: each must exist, and only the listener recorder may run in the
    // page's own (MAIN) world, where the page can reach what it defines.
    for script in field(&["content_scripts"])
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let main = script.get("world").and_then(|w| w.as_str()) == Some("MAIN");
        for file in script
            .get("js")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
        {
            if !root.join("extension").join(file).is_file() {
                return Err(format!(
                    "content_scripts names {file:?}, which is not a file in extension/"
                ));
            }
            if main && file != "content/listeners.js" {
                return Err(format!(
                    "{file:?} would run in the page's MAIN world; only content/listeners.js may"
                ));
            }
        }
    }
    Ok(())
}

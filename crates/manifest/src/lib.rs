//! The checks the background crate's build script (`build.rs` at the top of the repository)
//! runs on `manifest.json` and `extension/`, so a manifest Chrome would refuse to load, one
//! the Chrome Web Store would refuse, or one that does not match the code fails the build
//! instead of failing silently in the browser or at submission:
//! - it parses, is Manifest V3, and its `version` equals the crate version;
//! - the extension-page CSP allows 'wasm-unsafe-eval' (without it the wasm cannot load);
//! - the service worker is a module (the bootstrap uses `import`);
//! - it asks for the permissions the worker's `chrome.*` calls need (some may be optional:
//!   the panel asks for them at first use), host access to http and https sites (the agent
//!   acts on any site the user points it at), and declares the "ask-tandem" shortcut the
//!   worker answers;
//! - every file it names (service worker, side panel, content scripts) exists under
//!   `extension/`;
//! - it has icons at 16, 32, 48 and 128 px, in `icons` and in `action.default_icon`, each a
//!   PNG of that size (without them Chrome draws a grey letter in the toolbar, and the store
//!   wants the 128 px one);
//! - the description, in every language of `extension/_locales/`, is at most 132 characters
//!   (the store's limit).
//!
//! A library rather than code inside `build.rs`, so that each refusal is tested natively.

use std::path::Path;

use serde_json::Value;

/// The icon sizes Chrome and the store use: toolbar (16, 32 on high-density screens), the
/// extensions page (48), installation and the store (128).
pub const ICON_SIZES: [u32; 4] = [16, 32, 48, 128];

/// The Chrome Web Store refuses a longer description.
pub const MAX_DESCRIPTION_CHARS: usize = 132;

/// API permissions the worker's `chrome.*` calls need from installation on.
const REQUIRED: [&str; 10] = [
    "sidePanel",
    "storage",
    "tabs",
    "alarms",
    "contextMenus",
    "scripting",
    "activeTab",
    // The task's firewall (crates/background/src/agent/firewall.rs): session rules on the
    // task's tabs, and the watch that turns what they held back into a question.
    "declarativeNetRequest",
    "webRequest",
    // Trusted input for actions a page ignored as script events (agent/trusted.rs). Chrome
    // does not let an extension list it as optional, and the agent needs it mid-task, away
    // from any click that could grant it.
    "debugger",
];

/// API permissions the worker uses, which the panel may instead ask for at first use (listed
/// in `permissions` or in `optional_permissions`): without one the feature says so.
const REQUIRED_OR_OPTIONAL: [&str; 2] = [
    // A scheduled workflow's outcome, or its need of the user (crates/background/src/workflows.rs).
    "notifications",
    // Signing in to an MCP server (crates/background/src/mcp_oauth.rs).
    "identity",
];

/// Why the manifest or `extension/` is refused, in a sentence for the developer.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{file} is not valid JSON: {reason}")]
    NotJson { file: String, reason: String },
    #[error("{0}")]
    Rule(String),
    #[error("{key} has no {size} px icon (it needs {ICON_SIZES:?})")]
    MissingIcon { key: &'static str, size: u32 },
    #[error("{key} names {file:?} for {size} px, which is not a PNG file in extension/")]
    IconNotPng {
        key: &'static str,
        size: u32,
        file: String,
    },
    #[error("{file:?} is {width}×{height} px, but {key} lists it for {size} px")]
    IconWrongSize {
        key: &'static str,
        size: u32,
        file: String,
        width: u32,
        height: u32,
    },
    #[error("the description in {locale} has {chars} characters; the Chrome Web Store takes at most {MAX_DESCRIPTION_CHARS}")]
    LongDescription { locale: String, chars: usize },
    #[error("the description names the message {key:?}, which {locale} lacks")]
    MissingDescription { locale: String, key: String },
}

fn rule(text: impl Into<String>) -> Problem {
    Problem::Rule(text.into())
}

fn parse(file: &str, text: &str) -> Result<Value, Problem> {
    // Not shipped: serde_json's reader is fine here (clippy.toml's rule is about the wasm),
    // and a `Value` has no struct to read.
    #[allow(clippy::disallowed_methods)]
    serde_json::from_str(text).map_err(|e| Problem::NotJson {
        file: file.into(),
        reason: e.to_string(),
    })
}

fn read(path: &Path) -> Result<Vec<u8>, Problem> {
    std::fs::read(path).map_err(|e| Problem::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn strings<'a>(m: &'a Value, key: &str) -> Vec<&'a str> {
    m.get(key)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|p| p.as_str()).collect())
        .unwrap_or_default()
}

/// Checks `manifest_text` (the source manifest) against the files under `root` (the
/// repository: `root/extension/` is what ships beside it) and the crate's version.
pub fn check(root: &Path, manifest_text: &str, crate_version: &str) -> Result<(), Problem> {
    let m = parse("manifest.json", manifest_text)?;
    let extension = root.join("extension");
    let field = |path: &[&str]| -> Option<&Value> { path.iter().try_fold(&m, |v, key| v.get(key)) };
    let string = |path: &[&str]| {
        field(path)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };

    if field(&["manifest_version"]).and_then(|v| v.as_u64()) != Some(3) {
        return Err(rule("manifest_version must be 3"));
    }
    let version = string(&["version"]);
    if version != crate_version {
        return Err(rule(format!(
            "version {version:?} differs from the crate version {crate_version:?}"
        )));
    }
    let csp = string(&["content_security_policy", "extension_pages"]);
    if !csp.contains("'wasm-unsafe-eval'") {
        return Err(rule(format!(
            "the extension_pages CSP must allow 'wasm-unsafe-eval', it is {csp:?}"
        )));
    }
    check_permissions(&m)?;
    // The worker answers the "ask-tandem" shortcut by that name (crates/background/src/ask.rs).
    if field(&["commands", "ask-tandem", "description"]).is_none() {
        return Err(rule(
            "commands must declare \"ask-tandem\" with a description",
        ));
    }
    if string(&["background", "type"]) != "module" {
        return Err(rule("background.type must be \"module\""));
    }
    for path in [
        ["background", "service_worker"],
        ["side_panel", "default_path"],
    ] {
        let file = string(&path);
        if file.is_empty() || !extension.join(&file).is_file() {
            return Err(rule(format!(
                "{} names {file:?}, which is not a file in extension/",
                path.join(".")
            )));
        }
    }
    check_content_scripts(&m, &extension)?;
    check_icons(&m, &extension)?;
    check_descriptions(&m, &extension.join("_locales"))
}

fn check_permissions(m: &Value) -> Result<(), Problem> {
    // Without its permission an API is simply missing at run time, which would surface as a
    // silent failure in the browser.
    let permissions = strings(m, "permissions");
    let optional = strings(m, "optional_permissions");
    for needed in REQUIRED {
        if !permissions.contains(&needed) {
            return Err(rule(format!("permissions must include {needed:?}")));
        }
    }
    for needed in REQUIRED_OR_OPTIONAL {
        if !permissions.contains(&needed) && !optional.contains(&needed) {
            return Err(rule(format!(
                "permissions or optional_permissions must include {needed:?}"
            )));
        }
    }
    // The agent acts on whatever http/https site the user points it at, including a second
    // site a task navigates to, where no user gesture could grant access (ARCHITECTURE.md,
    // "Site access"); provider APIs and local servers (Ollama) are covered too.
    let hosts = strings(m, "host_permissions");
    for needed in ["http://*/*", "https://*/*"] {
        if !hosts.contains(&needed) {
            return Err(rule(format!("host_permissions must include {needed:?}")));
        }
    }
    Ok(())
}

/// Scripts put into pages: each must exist, and only the listener recorder may run in the
/// page's own (MAIN) world, where the page can reach what it defines.
fn check_content_scripts(m: &Value, extension: &Path) -> Result<(), Problem> {
    for script in m
        .get("content_scripts")
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
            if !extension.join(file).is_file() {
                return Err(rule(format!(
                    "content_scripts names {file:?}, which is not a file in extension/"
                )));
            }
            if main && file != "content/listeners.js" {
                return Err(rule(format!(
                    "{file:?} would run in the page's MAIN world; only content/listeners.js may"
                )));
            }
        }
    }
    Ok(())
}

/// Every size of [`ICON_SIZES`] in `icons` and in `action.default_icon`, each naming a PNG
/// under `extension` whose header says that size.
fn check_icons(m: &Value, extension: &Path) -> Result<(), Problem> {
    for (key, sets) in [
        ("icons", m.get("icons")),
        (
            "action.default_icon",
            m.get("action").and_then(|a| a.get("default_icon")),
        ),
    ] {
        for size in ICON_SIZES {
            let Some(file) = sets
                .and_then(|s| s.get(size.to_string()))
                .and_then(|f| f.as_str())
            else {
                return Err(Problem::MissingIcon { key, size });
            };
            let not_png = || Problem::IconNotPng {
                key,
                size,
                file: file.to_string(),
            };
            let bytes = std::fs::read(extension.join(file)).map_err(|_| not_png())?;
            let (width, height) = png_size(&bytes).ok_or_else(not_png)?;
            if (width, height) != (size, size) {
                return Err(Problem::IconWrongSize {
                    key,
                    size,
                    file: file.to_string(),
                    width,
                    height,
                });
            }
        }
    }
    Ok(())
}

/// A PNG's width and height, read from its header (the signature, then the IHDR chunk,
/// which the format requires first); `None` when `bytes` is not a PNG.
pub fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if bytes.get(..8)? != SIGNATURE || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let word = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_be_bytes(b))
    };
    Some((word(16)?, word(20)?))
}

/// The manifest's description, in every language folder of `locales` (sorted, so the first
/// one refused is the same on every machine).
fn check_descriptions(m: &Value, locales: &Path) -> Result<(), Problem> {
    let description = m
        .get("description")
        .and_then(|d| d.as_str())
        .unwrap_or_default();
    let Some(key) = description
        .strip_prefix("__MSG_")
        .and_then(|k| k.strip_suffix("__"))
    else {
        return description_fits("manifest.json", description);
    };
    let entries = std::fs::read_dir(locales).map_err(|e| Problem::Unreadable {
        path: locales.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // A build script, not shipped: the standard sort is fine (clippy.toml's rule is about the wasm).
    #[allow(clippy::disallowed_methods)]
    names.sort();
    let mut catalogs = Vec::new();
    for locale in names {
        let file = locales.join(&locale).join("messages.json");
        catalogs.push((locale, String::from_utf8_lossy(&read(&file)?).into_owned()));
    }
    catalogs_fit(key, &catalogs)
}

/// Message `key` in each `(locale, messages.json text)` of `catalogs` is there and fits.
pub fn catalogs_fit(key: &str, catalogs: &[(String, String)]) -> Result<(), Problem> {
    for (locale, text) in catalogs {
        let messages = parse(&format!("_locales/{locale}/messages.json"), text)?;
        let Some(text) = messages
            .get(key)
            .and_then(|e| e.get("message"))
            .and_then(|t| t.as_str())
        else {
            return Err(Problem::MissingDescription {
                locale: locale.clone(),
                key: key.to_string(),
            });
        };
        description_fits(locale, text)?;
    }
    Ok(())
}

/// The store counts characters, not bytes: a Japanese description has room for 132 too.
pub fn description_fits(locale: &str, text: &str) -> Result<(), Problem> {
    let chars = text.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(Problem::LongDescription {
            locale: locale.to_string(),
            chars,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;

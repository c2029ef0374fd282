//! What a person reads about a tool provider beyond its name: the warnings that go with the
//! approval question (a tool that can destroy something, a name another extension already
//! uses), the short id that tells two namesakes apart on Settings' controls, and the line for
//! a provider that offers nothing right now. Any extension can call itself anything; only its
//! id is its own, so whenever two names could be confused the id is shown beside them.

use super::registry::{Decision, Provider, Registry};

/// The first characters of an extension id, enough to tell two apart at a glance
/// (`bkkh…`); the whole id stays in the approval question.
pub fn short_id(id: &str) -> String {
    let head: String = id.chars().take(4).collect();
    if head.len() < id.len() {
        format!("{head}…")
    } else {
        head
    }
}

/// `Probe Tools (bkkh…)`: a provider as its Settings controls name it, so that two rows
/// whose extensions chose the same name still have distinct accessible names.
pub fn row_name(provider: &Provider) -> String {
    format!("{} ({})", provider.name(), short_id(provider.id()))
}

/// The other providers that go by `provider`'s name (compared as a person would: letter case
/// and spacing aside). A provider with no name of its own is shown by its id and has none.
pub fn namesakes<'a>(registry: &'a Registry, provider: &Provider) -> Vec<&'a Provider> {
    let key = |p: &Provider| {
        p.name()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let name = key(provider);
    if name.is_empty() || provider.name() == provider.id() {
        return Vec::new();
    }
    registry
        .providers()
        .filter(|p| p.id() != provider.id() && p.mcp().is_none() && key(p) == name)
        .collect()
}

/// The sentences that follow the approval question of `provider`: each tool that says it can
/// destroy something, and each other extension already known under the same name.
pub fn approval_notes(registry: &Registry, provider: &Provider) -> Vec<String> {
    let mut notes = Vec::new();
    let destructive: Vec<&str> = provider
        .tools()
        .iter()
        .filter(|t| t.destructive())
        .map(|t| t.name.as_str())
        .collect();
    match destructive.as_slice() {
        [] => {}
        [one] => notes.push(format!(
            "Careful: {one} says it can delete or change things for good."
        )),
        many => notes.push(format!(
            "Careful: {} say they can delete or change things for good.",
            many.join(", ")
        )),
    }
    for other in namesakes(registry, provider) {
        let standing = match other.decision() {
            Decision::Allowed => "one you allowed",
            Decision::Denied => "one you denied",
            Decision::Pending => "one that also asks now",
        };
        notes.push(format!(
            "The name «{}» is already used by another extension ({}, {standing}): this request comes from a different extension ({}).",
            other.name(),
            short_id(other.id()),
            short_id(provider.id()),
        ));
    }
    notes
}

/// Said beside a look-alike's warning when Chrome does not let Tandem read its extensions
/// (no `management` permission): the icon and where it came from cannot be shown.
pub const NO_MANAGEMENT_NOTE: &str = "Chrome does not let Tandem see this extension's icon or where it was installed from, so only its id tells the two apart.";

/// The icon's text alternative beside a look-alike's warning.
pub const ICON_ALT: &str = "Icon of the extension asking, as Chrome shows it";

/// What Chrome reports about an extension (`chrome.management`, where Tandem may read it):
/// where it was installed from, in a few words.
pub fn install_note(install_type: &str) -> Option<&'static str> {
    Some(match install_type {
        "normal" => "Chrome reports it as installed from the Chrome Web Store.",
        "development" => "Chrome reports it as an unpacked extension (loaded by hand, not from the Chrome Web Store).",
        "sideload" => "Chrome reports it as installed by another program on this computer.",
        "admin" => "Chrome reports it as installed by your administrator.",
        _ => return None,
    })
}

/// A tool call's arguments as a person reads them, one `name: value` a line in name order
/// (texts without quotes, nested values as compact JSON, each cut at 200 characters); "no
/// arguments" for an empty object. `None` when `arguments` is not a JSON object: the card shows it as it came.
pub fn argument_lines(arguments: &str) -> Option<String> {
    let value: serde_json::Value = crate::json::from_str(arguments).ok()?;
    let fields = value.as_object()?;
    if fields.is_empty() {
        return Some("no arguments".into());
    }
    let cut = |t: String| {
        if t.chars().count() > 200 {
            format!("{}…", t.chars().take(199).collect::<String>())
        } else {
            t
        }
    };
    let lines: Vec<String> = fields
        .iter()
        .map(|(name, v)| {
            let shown = match v {
                serde_json::Value::String(t) => t.clone(),
                other => other.to_string(),
            };
            format!("{name}: {}", cut(shown))
        })
        .collect();
    Some(lines.join("\n"))
}

/// The line under a provider in Settings when it offers no tools: denied, or withdrawn.
pub fn empty_line(provider: &Provider) -> Option<&'static str> {
    if provider.mcp().is_some() || !provider.tools().is_empty() {
        return None;
    }
    Some(match provider.decision() {
        Decision::Denied => {
            "Denied: it cannot give Tandem tools. Allow lets it offer them again; Remove forgets your choice, so it will ask again."
        }
        _ => "It offers no tools right now (it withdrew them); they come back when it registers them again.",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{parse_incoming, Incoming};
    use serde_json::json;

    fn register(r: &mut Registry, id: &str, name: Option<&str>, tools: serde_json::Value) {
        let msg = json!({"type": "REGISTER_TOOLS", "tools": tools});
        let Ok(Incoming::RegisterTools(tools)) = parse_incoming(&msg) else {
            panic!("not a registration: {msg}");
        };
        r.register(id, name.unwrap_or(""), tools);
    }

    fn tool(name: &str, destructive: bool) -> serde_json::Value {
        json!({"name": name, "label": name, "description": "d",
               "parameters": {"type": "object", "properties": {}},
               "annotations": {"destructiveHint": destructive}})
    }

    const A: &str = "aaaabbbbccccddddeeeeffffgggghhhh";
    const B: &str = "ppppoooonnnnmmmmllllkkkkjjjjiiii";

    #[test]
    fn a_look_alike_is_named_with_both_ids() {
        let mut r = Registry::default();
        register(&mut r, A, Some("Probe Tools"), json!([tool("read", false)]));
        r.decide(A, true).unwrap();
        register(&mut r, B, Some("probe  tools"), json!([tool("wipe", true)]));
        let b = r.provider(B).unwrap();
        let notes = approval_notes(&r, b);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("wipe says it can delete"), "{notes:?}");
        assert!(
            notes[1].contains("already used by another extension (aaaa…, one you allowed)"),
            "{notes:?}"
        );
        assert!(notes[1].contains("(pppp…)"), "{notes:?}");
        assert_ne!(row_name(r.provider(A).unwrap()), row_name(b));
        assert_eq!(row_name(b), "probe tools (pppp…)");
    }

    #[test]
    fn no_warning_without_a_namesake_or_a_destructive_tool() {
        let mut r = Registry::default();
        register(&mut r, A, Some("Probe Tools"), json!([tool("read", false)]));
        register(&mut r, B, Some("Other Tools"), json!([tool("read", false)]));
        assert!(approval_notes(&r, r.provider(B).unwrap()).is_empty());
    }

    #[test]
    fn providers_without_tools_get_a_line() {
        let mut r = Registry::default();
        register(&mut r, A, Some("Probe Tools"), json!([tool("read", false)]));
        r.decide(A, true).unwrap();
        assert_eq!(empty_line(r.provider(A).unwrap()), None);
        r.unregister(A);
        assert!(empty_line(r.provider(A).unwrap())
            .unwrap()
            .contains("withdrew"));
        r.decide(A, false).unwrap();
        assert!(empty_line(r.provider(A).unwrap())
            .unwrap()
            .starts_with("Denied"));
    }

    #[test]
    fn a_registration_without_a_name_keeps_the_name() {
        let mut r = Registry::default();
        register(&mut r, A, Some("Probe Tools"), json!([tool("read", false)]));
        register(&mut r, A, None, json!([tool("read", false)]));
        assert_eq!(r.provider(A).unwrap().name(), "Probe Tools");
        r.decide(A, true).unwrap();
        register(&mut r, A, None, json!([tool("read", false)]));
        assert_eq!(r.provider(A).unwrap().name(), "Probe Tools");
        register(
            &mut r,
            A,
            Some("Probe Tools 2"),
            json!([tool("read", false)]),
        );
        assert_eq!(r.provider(A).unwrap().name(), "Probe Tools 2");
    }

    #[test]
    fn arguments_read_as_lines() {
        assert_eq!(
            argument_lines(r#"{"url":"https://a.example/x","n":3,"tags":["a"]}"#).as_deref(),
            // In name order: serde_json's map keeps no other.
            Some("n: 3\ntags: [\"a\"]\nurl: https://a.example/x")
        );
        assert_eq!(argument_lines("{}").as_deref(), Some("no arguments"));
        assert_eq!(argument_lines("not json"), None);
        assert_eq!(argument_lines("[1]"), None);
    }

    #[test]
    fn install_types_read_as_sentences() {
        assert!(install_note("development").unwrap().contains("unpacked"));
        assert_eq!(install_note("other"), None);
        assert_eq!(short_id("abc"), "abc");
    }
}

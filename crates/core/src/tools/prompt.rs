//! What a person reads about a tool provider beyond its name: the warnings that go with the
//! approval question (a tool that can destroy something, a name another extension already
//! uses), the short id that tells two namesakes apart on Settings' controls, and the line for
//! a provider that offers nothing right now. Any extension can call itself anything; only its
//! id is its own, so whenever two names could be confused the id is shown beside them.

use super::registry::{Decision, Provider, Registry};
use crate::case::Lowercase;
use crate::i18n::{nested, text, Mark, Msg};

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
            .lowercase()
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

/// The approval question: "`who` wants to give Tandem 3 tools: a, b, c. …", `who` being the
/// provider as the panel names it (its name and id).
pub fn approval_question(who: &str, tools: &[&str]) -> Msg {
    let count = match tools.len() {
        1 => Msg::key("provOneTool"),
        n => Msg::new("provNTools", vec![text(n.to_string())]),
    };
    Msg::new(
        "provAsks",
        vec![
            text(who),
            nested(Mark::Plain, count),
            text(tools.join(", ")),
        ],
    )
}

/// The sentences that follow the approval question of `provider`: each tool that says it can
/// destroy something, and each other extension already known under the same name.
pub fn approval_notes(registry: &Registry, provider: &Provider) -> Vec<Msg> {
    let mut notes = Vec::new();
    let destructive: Vec<&str> = provider
        .tools()
        .iter()
        .filter(|t| t.destructive())
        .map(|t| t.name.as_str())
        .collect();
    match destructive.as_slice() {
        [] => {}
        [one] => notes.push(Msg::new("provCarefulOne", vec![text(*one)])),
        many => notes.push(Msg::new("provCarefulMany", vec![text(many.join(", "))])),
    }
    for other in namesakes(registry, provider) {
        let standing = Msg::key(match other.decision() {
            Decision::Allowed => "provStandingAllowed",
            Decision::Denied => "provStandingDenied",
            Decision::Pending => "provStandingPending",
        });
        notes.push(Msg::new(
            "provNameUsed",
            vec![
                text(other.name()),
                text(short_id(other.id())),
                nested(Mark::Plain, standing),
                text(short_id(provider.id())),
            ],
        ));
    }
    notes
}

/// Said beside a look-alike's warning when Chrome does not let Tandem read its extensions
/// (no `management` permission): the icon and where it came from cannot be shown.
pub fn no_management_note() -> Msg {
    Msg::key("provNoManagement")
}

/// The icon's text alternative beside a look-alike's warning.
pub fn icon_alt() -> Msg {
    Msg::key("provIconAlt")
}

/// What Chrome reports about an extension (`chrome.management`, where Tandem may read it):
/// where it was installed from, in a few words.
pub fn install_note(install_type: &str) -> Option<Msg> {
    Some(Msg::key(match install_type {
        "normal" => "provFromStore",
        "development" => "provUnpacked",
        "sideload" => "provSideloaded",
        "admin" => "provByAdmin",
        _ => return None,
    }))
}

/// A tool call's arguments as a person reads them, one `name: value` a line in name order
/// (texts without quotes, nested values as compact JSON, each cut at 200 characters); "no
/// arguments" for an empty object. `None` when `arguments` is not a JSON object: the card shows it as it came.
pub fn argument_lines(arguments: &str) -> Option<Msg> {
    let value: serde_json::Value = crate::json::from_str(arguments).ok()?;
    let fields = value.as_object()?;
    if fields.is_empty() {
        return Some(Msg::key("provNoArguments"));
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
    Some(Msg::literal(lines.join("\n")))
}

/// The line under a provider in Settings when it offers no tools: denied, or withdrawn.
pub fn empty_line(provider: &Provider) -> Option<Msg> {
    if provider.mcp().is_some() || !provider.tools().is_empty() {
        return None;
    }
    Some(Msg::key(match provider.decision() {
        Decision::Denied => "provDenied",
        _ => "provWithdrawn",
    }))
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
        let notes: Vec<String> = approval_notes(&r, b).iter().map(Msg::english).collect();
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
            .english()
            .contains("withdrew"));
        r.decide(A, false).unwrap();
        assert!(empty_line(r.provider(A).unwrap())
            .unwrap()
            .english()
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
        let lines = |a: &str| argument_lines(a).map(|m| m.english());
        assert_eq!(
            lines(r#"{"url":"https://a.example/x","n":3,"tags":["a"]}"#).as_deref(),
            // In name order: serde_json's map keeps no other.
            Some("n: 3\ntags: [\"a\"]\nurl: https://a.example/x")
        );
        assert_eq!(lines("{}").as_deref(), Some("no arguments"));
        assert_eq!(argument_lines("not json"), None);
        assert_eq!(argument_lines("[1]"), None);
    }

    #[test]
    fn install_types_read_as_sentences() {
        assert!(install_note("development")
            .unwrap()
            .english()
            .contains("unpacked"));
        assert_eq!(
            approval_question("«Tandem Tabs» (extension x)", &["tab.list", "tab.open"]).english(),
            "«Tandem Tabs» (extension x) wants to give Tandem 2 tools: tab.list, tab.open. Allowed tools can be called by the model in your chats; you choose per tool in Settings → Tools."
        );
        assert_eq!(install_note("other"), None);
        assert_eq!(short_id("abc"), "abc");
    }
}

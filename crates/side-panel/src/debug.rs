//! The Debug drawer and the token meter: what the last send did, from the worker's report.
//! The report only ever holds the redacted request, and lives in this page's memory.

use serde_json::Value;
use tandem_core::i18n::text;
use web_sys::{HtmlButtonElement, HtmlElement};

use crate::dom::{self, DomError};
use crate::hub::{self, Event};
use crate::i18n::say;

pub fn wire() -> Result<(), DomError> {
    // The conversation's reports and clears come through the hub: this view knows no other.
    hub::listen(|event| match event {
        Event::Report(report) => {
            if let Err(e) = show(report, hub::message_text) {
                web_sys::console::warn_1(&format!("Tandem: debug report not shown: {e}").into());
            }
        }
        Event::Cleared => reset(),
    });
    let toggle: HtmlButtonElement = dom::by_id("debug-toggle")?;
    let t = toggle.clone();
    dom::on("debug-toggle", "click", move |_: web_sys::Event| {
        if let Ok(section) = dom::by_id::<HtmlElement>("debug") {
            let open = section.hidden();
            section.set_hidden(!open);
            dom::set_attr(&t, "aria-expanded", if open { "true" } else { "false" });
        }
    })?;
    Ok(())
}

/// Renders `report`; `text_of(id)` gives the start of the message a pair id names.
fn show(report: &Value, text_of: impl Fn(&str) -> Option<String>) -> Result<(), DomError> {
    let section: HtmlElement = dom::by_id("debug")?;
    section.set_inner_html("");
    let str_at = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let num_at = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64).unwrap_or_default();

    heading(&section, &say("debugLastSend", vec![]))?;
    para(
        &section,
        &say(
            "debugProviderModel",
            vec![
                text(str_at(report, "provider")),
                text(str_at(report, "model")),
            ],
        ),
    )?;

    let budget = report.get("budget").cloned().unwrap_or_default();
    let breakdown = budget.get("breakdown").cloned().unwrap_or_default();
    heading(&section, &say("debugBudget", vec![]))?;
    let dl = dom::create("dl", "")?;
    let rows = [
        ("debugContextWindow", num_at(&budget, "contextLimit")),
        ("debugSystemPrompt", num_at(&breakdown, "system")),
        ("debugYourMessage", num_at(&breakdown, "userText")),
        ("debugImages", num_at(&breakdown, "userImages")),
        ("debugHistory", num_at(&breakdown, "history")),
        ("debugTotalInput", num_at(&breakdown, "totalInput")),
        ("debugLeft", num_at(&breakdown, "remainingForResponse")),
    ];
    for (key, value) in rows {
        append_text(&dl, "dt", &say(key, vec![]))?;
        append_text(&dl, "dd", &group(value))?;
    }
    append(&section, &dl)?;

    heading(&section, &say("debugHistory", vec![]))?;
    let list = dom::create("ul", "")?;
    let excerpt = |id: &str| {
        text_of(id)
            .map(|t| format!("“{}”", clip(&t, 60)))
            .unwrap_or_else(|| id.to_string())
    };
    let ids = |v: &Value| v.as_array().cloned().unwrap_or_default();
    for id in ids(budget.get("includedPairs").unwrap_or(&Value::Null)) {
        let id = id.as_str().unwrap_or_default();
        append_text(&list, "li", &say("debugIncluded", vec![text(excerpt(id))]))?
            .set_class_name("included");
    }
    for entry in ids(budget.get("excluded").unwrap_or(&Value::Null)) {
        let id = entry.get(0).and_then(Value::as_str).unwrap_or_default();
        let reason = entry.get(1).and_then(Value::as_str).unwrap_or_default();
        append_text(
            &list,
            "li",
            &say(
                "debugExcluded",
                vec![text(reason.replace('-', " ")), text(excerpt(id))],
            ),
        )?
        .set_class_name("excluded");
    }
    if list.child_element_count() == 0 {
        append_text(&list, "li", &say("debugNoEarlier", vec![]))?;
    }
    append(&section, &list)?;

    heading(&section, &say("debugAttempts", vec![]))?;
    let attempts = dom::create("ol", "")?;
    for a in ids(report.get("attempts").unwrap_or(&Value::Null)) {
        let outcome = a.get("outcome").cloned().unwrap_or_default();
        let result = match str_at(&outcome, "result").as_str() {
            "ok" => "ok".to_string(),
            _ => format!(
                "{}: {}",
                str_at(&outcome, "kind"),
                str_at(&outcome, "message")
            ),
        };
        let action = a.get("action").cloned().unwrap_or_default();
        let next = match str_at(&action, "type").as_str() {
            "retryAfter" => say(
                "debugRetryAfter",
                vec![text(num_at(&action, "ms").to_string())],
            ),
            "trimAndRetry" => say("debugTrimRetry", vec![]),
            "fail" => say("debugGiveUp", vec![]),
            _ => say("debugDone", vec![]),
        };
        let pairs = num_at(&a, "includedPairs");
        append_text(
            &attempts,
            "li",
            &say(
                "debugAttempt",
                vec![text(pairs.to_string()), text(result), text(next)],
            ),
        )?;
    }
    append(&section, &attempts)?;

    // Frames the decoder skipped: the answer went on without them, and this says so.
    let notes = ids(report.get("notes").unwrap_or(&Value::Null));
    if !notes.is_empty() {
        heading(&section, &say("debugStreamNotes", vec![]))?;
        let list = dom::create("ul", "")?;
        for note in notes {
            append_text(&list, "li", note.as_str().unwrap_or_default())?;
        }
        append(&section, &list)?;
    }

    heading(&section, &say("debugRequestSent", vec![]))?;
    let request = report.get("request").cloned().unwrap_or_default();
    let body = tandem_core::json::from_str::<Value>(&str_at(&request, "body"))
        .and_then(|b| serde_json::to_string_pretty(&b))
        .unwrap_or_else(|_| str_at(&request, "body"));
    let headers: Vec<String> = ids(request.get("headers").unwrap_or(&Value::Null))
        .iter()
        .map(|h| {
            format!(
                "{}: {}",
                h.get(0).and_then(Value::as_str).unwrap_or_default(),
                h.get(1).and_then(Value::as_str).unwrap_or_default()
            )
        })
        .collect();
    let pre = append_text(
        &section,
        "pre",
        &format!(
            "{} {}\n{}\n\n{}",
            str_at(&request, "method"),
            str_at(&request, "url"),
            headers.join("\n"),
            body
        ),
    )?;
    dom::set_attr(&pre, "aria-label", &say("debugRequestPayload", vec![]));

    let used = num_at(&breakdown, "totalInput");
    let limit = num_at(&budget, "contextLimit");
    let provider_count = report
        .get("usage")
        .and_then(|u| u.get("input"))
        .and_then(Value::as_u64);
    meter(
        provider_count.unwrap_or(used),
        limit,
        provider_count.is_some(),
    );
    Ok(())
}

/// Back to the state before any send.
fn reset() {
    if let Ok(section) = dom::by_id::<HtmlElement>("debug") {
        section.set_text_content(None);
        if let Ok(p) = dom::create("p", "hint") {
            p.set_text_content(Some(&say("debugNothingYet", vec![])));
            let _ = section.append_child(&p);
        }
    }
    if let Ok(text) = dom::by_id::<HtmlElement>("token-meter") {
        text.set_text_content(Some(&say("meterNothing", vec![])));
    }
    if let Ok(bar) = dom::by_id::<web_sys::Element>("context-meter") {
        dom::set_attr(&bar, "value", "0");
    }
}

/// "Context: 1,234 / 128,000 tokens" under the chat, and the bar beside it.
pub fn meter(used: u64, limit: u64, counted_by_provider: bool) {
    if let Ok(text) = dom::by_id::<HtmlElement>("token-meter") {
        let key = if counted_by_provider {
            "meterTokens"
        } else {
            "meterTokensEstimated"
        };
        text.set_text_content(Some(&say(
            key,
            vec![
                tandem_core::i18n::text(group(used)),
                tandem_core::i18n::text(group(limit)),
            ],
        )));
    }
    if let Ok(bar) = dom::by_id::<web_sys::Element>("context-meter") {
        dom::set_attr(&bar, "max", &limit.max(1).to_string());
        dom::set_attr(&bar, "value", &used.to_string());
        dom::set_attr(&bar, "high", &(limit * 8 / 10).to_string());
    }
}

/// `1048576` → `1,048,576`.
pub(crate) fn group(n: u64) -> String {
    tandem_core::chat::group_thousands(n)
}

fn clip(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

fn append(parent: &HtmlElement, child: &HtmlElement) -> Result<(), DomError> {
    parent
        .append_child(child)
        .map(|_| ())
        .map_err(|_| DomError::Missing("debug"))
}

fn append_text(parent: &HtmlElement, tag: &str, text: &str) -> Result<HtmlElement, DomError> {
    let el = dom::create(tag, "")?;
    el.set_text_content(Some(text));
    append(parent, &el)?;
    Ok(el)
}

fn heading(parent: &HtmlElement, text: &str) -> Result<(), DomError> {
    append_text(parent, "h2", text).map(|_| ())
}

fn para(parent: &HtmlElement, text: &str) -> Result<(), DomError> {
    append_text(parent, "p", text).map(|_| ())
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen_test]
    fn thousands_are_grouped_and_long_text_clipped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1234567), "1,234,567");
        assert_eq!(clip("héllo wörld", 5), "héllo…");
        assert_eq!(clip("short", 10), "short");
    }

    #[wasm_bindgen_test]
    fn a_report_renders_budget_history_attempts_and_the_redacted_payload() {
        let doc = dom::document().expect("document");
        // Its own container: the test runner reports through elements of the page body.
        let host = doc.create_element("div").expect("div");
        doc.body()
            .expect("body")
            .append_child(&host)
            .expect("append");
        host.set_inner_html(
            "<section id=debug></section><span id=token-meter></span><meter id=context-meter></meter>",
        );
        let report = serde_json::json!({
            "provider": "OpenAI", "model": "gpt-test",
            "budget": {"contextLimit": 8192, "includedPairs": ["m1"], "excluded": [["m0", "trimmed"]],
                       "breakdown": {"system": 30, "userText": 5, "userImages": 0, "history": 40, "totalInput": 75, "remainingForResponse": 8117}},
            "request": {"url": "http://x/v1/chat/completions", "method": "POST",
                        "headers": [["authorization", "[redacted]"]], "body": "{\"model\":\"gpt-test\"}"},
            "attempts": [{"attempt": 1, "includedPairs": 2, "outcome": {"result": "error", "kind": "context-overflow", "message": "too long"}, "action": {"type": "trimAndRetry"}},
                         {"attempt": 2, "includedPairs": 1, "outcome": {"result": "ok"}, "action": {"type": "done"}}],
            "usage": {"input": 80, "output": 3}
        });
        show(&report, |id| {
            (id == "m1").then(|| "What is the capital of France?".to_string())
        })
        .expect("renders");
        let text = doc
            .get_element_by_id("debug")
            .and_then(|d| d.text_content())
            .unwrap_or_default();
        for needle in [
            "OpenAI · model gpt-test",
            "Total input75",
            "included: “What is the capital of France?”",
            "excluded (trimmed): m0",
            "2 earlier exchange(s) sent → context-overflow: too long → drop the oldest exchange and retry",
            "1 earlier exchange(s) sent → ok → done",
            "authorization: [redacted]",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in {text}");
        }
        let meter = doc
            .get_element_by_id("token-meter")
            .and_then(|d| d.text_content())
            .unwrap_or_default();
        assert_eq!(meter, "Context: 80 / 8,192 tokens");
    }
}

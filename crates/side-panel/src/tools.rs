//! Tools from other extensions, as the user sees them: the prompt when a provider first asks
//! to give Tandem tools (Allow / Deny), Settings → Tools (each provider, each tool's Allow /
//! Ask / Deny, Remove), and a card in the answer for every call the model makes (with
//! Approve / Deny when the tool is set to Ask). The registry lives in `chrome.storage.local`,
//! written by the worker; this module renders it and sends the user's choices to the worker.

use tandem_core::chat::ToolCard;
use tandem_core::protocol::{PanelToWorker, ToolsCommand};
use tandem_core::tools::{Decision, Policy, Registry, STORAGE_KEY};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlSelectElement};

use crate::chrome;
use crate::dom::{self, DomError};

pub fn wire() -> Result<(), DomError> {
    spawn_local(show());
    chrome::on_local_change(STORAGE_KEY, || spawn_local(show()));
    Ok(())
}

fn send(command: ToolsCommand) {
    if let Err(e) = crate::chat::post(&PanelToWorker::Tools { command }) {
        crate::chat::show_error(&format!(
            "Tandem's background worker is not reachable ({e})."
        ));
    }
}

async fn read() -> Result<Registry, String> {
    let Some(json) = chrome::local_json(STORAGE_KEY).await? else {
        return Ok(Registry::default());
    };
    let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
    Ok(Registry::from_stored(&value))
}

async fn show() {
    let registry = match read().await {
        Ok(r) => r,
        Err(e) => {
            hint(&format!("The tool providers could not be read ({e})."));
            return;
        }
    };
    if let Err(e) = show_approval(&registry).and_then(|()| show_settings(&registry)) {
        crate::chat::show_error(&e.to_string());
    }
}

/// How a provider is named to the user: its own name (which any extension could claim) and
/// its id (which no other extension can have).
fn who(name: &str, id: &str) -> String {
    if name.is_empty() || name == id {
        format!("extension {id}")
    } else {
        format!("«{name}» (extension {id})")
    }
}

/// The first provider waiting for the user's Allow / Deny, if any.
fn show_approval(registry: &Registry) -> Result<(), DomError> {
    let group: HtmlElement = dom::by_id("tool-approval")?;
    let waiting = registry
        .providers()
        .find(|p| p.decision() == Decision::Pending);
    let Some(provider) = waiting else {
        group.set_hidden(true);
        return Ok(());
    };
    let id = provider.id().to_string();
    let tools: Vec<&str> = provider.tools().iter().map(|t| t.name.as_str()).collect();
    let text = format!(
        "{} wants to give Tandem {} tool{}: {}. Allowed tools can be called by the model in your chats; you choose per tool in Settings → Tools.",
        who(provider.name(), &id),
        tools.len(),
        if tools.len() == 1 { "" } else { "s" },
        tools.join(", ")
    );
    dom::by_id::<HtmlElement>("tool-approval-text")?.set_text_content(Some(&text));
    for (button, allow) in [("tool-approval-allow", true), ("tool-approval-deny", false)] {
        let button: HtmlButtonElement = dom::by_id(button)?;
        let id = id.clone();
        button.set_onclick(Some(
            Closure::<dyn FnMut()>::new(move || {
                send(ToolsCommand::Decide {
                    provider_id: id.clone(),
                    allow,
                })
            })
            .into_js_value()
            .unchecked_ref(),
        ));
    }
    group.set_hidden(false);
    Ok(())
}

/// Settings → Tools: every decided provider, its tools and their policies.
fn show_settings(registry: &Registry) -> Result<(), DomError> {
    let list: HtmlElement = dom::by_id("tool-providers")?;
    list.set_text_content(None);
    let mut shown = 0;
    for provider in registry
        .providers()
        .filter(|p| p.decision() != Decision::Pending)
    {
        shown += 1;
        let id = provider.id().to_string();
        let name = if provider.name().is_empty() {
            id.clone()
        } else {
            provider.name().to_string()
        };
        let item = dom::create("li", "tool-provider")?;
        let title = dom::create("p", "label")?;
        let state = match provider.decision() {
            Decision::Denied => " — denied",
            _ => "",
        };
        title.set_text_content(Some(&format!("{}{state}", who(provider.name(), &id))));
        let _ = item.append_child(&title);
        if provider.decision() == Decision::Allowed {
            for tool in provider.tools() {
                let row = dom::create("div", "row tool-row")?;
                let label = dom::create("span", "tool-name")?;
                label.set_text_content(Some(&format!("{} — {}", tool.name, tool.label)));
                dom::set_attr(&label, "title", &tool.description);
                let select: HtmlSelectElement = dom::create("select", "")?.unchecked_into();
                dom::set_attr(&select, "aria-label", &format!("{} from {name}", tool.name));
                for (value, text) in [("allow", "Allow"), ("ask", "Ask"), ("deny", "Deny")] {
                    let option = dom::create("option", "")?;
                    dom::set_attr(&option, "value", value);
                    option.set_text_content(Some(text));
                    let _ = select.append_child(&option);
                }
                select.set_value(match provider.policy(tool) {
                    Policy::Allow => "allow",
                    Policy::Ask => "ask",
                    Policy::Deny => "deny",
                });
                let (pid, tname, sel) = (id.clone(), tool.name.clone(), select.clone());
                dom::on(&select, "change", move |_: web_sys::Event| {
                    let policy = match sel.value().as_str() {
                        "allow" => Policy::Allow,
                        "deny" => Policy::Deny,
                        _ => Policy::Ask,
                    };
                    send(ToolsCommand::SetPolicy {
                        provider_id: pid.clone(),
                        tool: tname.clone(),
                        policy,
                    });
                });
                let _ = row.append_child(&label);
                let _ = row.append_child(&select);
                let _ = item.append_child(&row);
            }
        }
        let remove = dom::create("button", "")?;
        dom::set_attr(&remove, "type", "button");
        dom::set_attr(&remove, "aria-label", &format!("Remove provider {name}"));
        remove.set_text_content(Some("Remove provider"));
        let pid = id.clone();
        dom::on(&remove, "click", move |_: web_sys::Event| {
            send(ToolsCommand::Remove {
                provider_id: pid.clone(),
            })
        });
        let _ = item.append_child(&remove);
        let _ = list.append_child(&item);
    }
    list.set_hidden(shown == 0);
    hint(if shown == 0 {
        "No tool providers yet. Extensions that give Tandem tools ask here first."
    } else {
        ""
    });
    Ok(())
}

fn hint(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("tools-hint") {
        line.set_text_content(Some(text));
        line.set_hidden(text.is_empty());
    }
}

/// A call the model made, as a card in the answer (above its text). With `question`, the
/// card asks Approve / Deny and sends the answer to the worker.
pub fn show_use(
    bubble: &HtmlElement,
    call_id: &str,
    tool: &str,
    provider: &str,
    arguments: &str,
    question: Option<&str>,
) -> Result<(), DomError> {
    let card = dom::create("details", "tool-card")?;
    dom::set_attr(&card, "data-call", call_id);
    dom::set_attr(&card, "aria-label", &format!("Tool call {tool}"));
    dom::set_attr(&card, "open", "");
    let summary = dom::create("summary", "")?;
    summary.set_text_content(Some(&if provider.is_empty() {
        format!("Tool {tool}")
    } else {
        format!("Tool {tool} from {provider}")
    }));
    let _ = card.append_child(&summary);
    let args = dom::create("pre", "tool-args")?;
    dom::set_attr(&args, "aria-label", "Arguments");
    args.set_text_content(Some(arguments));
    let _ = card.append_child(&args);
    if let Some(question) = question {
        let ask = dom::create("div", "tool-ask")?;
        dom::set_attr(&ask, "role", "group");
        dom::set_attr(&ask, "aria-label", &format!("Run {tool}?"));
        let text = dom::create("p", "")?;
        text.set_text_content(Some(question));
        let _ = ask.append_child(&text);
        let row = dom::create("div", "row")?;
        for (label, approve) in [("Approve", true), ("Deny", false)] {
            let button = dom::create("button", "")?;
            dom::set_attr(&button, "type", "button");
            button.set_text_content(Some(label));
            let (id, group) = (call_id.to_string(), ask.clone());
            dom::on(&button, "click", move |_: web_sys::Event| {
                let decided = PanelToWorker::ToolDecision {
                    call_id: id.clone(),
                    approve,
                };
                if let Err(e) = crate::chat::post(&decided) {
                    crate::chat::show_error(&format!(
                        "Tandem's background worker is not reachable ({e})."
                    ));
                    return;
                }
                group.remove();
            });
            let _ = row.append_child(&button);
        }
        let _ = ask.append_child(&row);
        let _ = card.append_child(&ask);
    }
    let before = bubble.query_selector(".text").ok().flatten();
    let _ = bubble.insert_before(&card, before.as_ref().map(|e| e.as_ref()));
    Ok(())
}

/// What came of the call: shown in its card (a question still open there is closed).
pub fn show_result(
    bubble: &HtmlElement,
    call_id: &str,
    ok: bool,
    text: &str,
    duration_ms: Option<u64>,
) -> Result<(), DomError> {
    let Some(card) = bubble
        .query_selector_all(".tool-card")
        .ok()
        .and_then(|cards| {
            (0..cards.length())
                .filter_map(|i| cards.item(i))
                .filter_map(|n| n.dyn_into::<HtmlElement>().ok())
                .find(|c| c.get_attribute("data-call").as_deref() == Some(call_id))
        })
    else {
        return Ok(());
    };
    if let Some(ask) = card.query_selector(".tool-ask").ok().flatten() {
        ask.remove();
    }
    let result = dom::create(
        "p",
        if ok {
            "tool-result"
        } else {
            "tool-result error"
        },
    )?;
    dom::set_attr(&result, "aria-label", "Tool result");
    let took = duration_ms
        .map(|ms| format!(" ({:.1} s)", ms as f64 / 1000.0))
        .unwrap_or_default();
    result.set_text_content(Some(&format!(
        "{}{took}: {}",
        if ok { "Done" } else { "Failed" },
        shorten(text)
    )));
    let _ = card.append_child(&result);
    Ok(())
}

/// A card of an earlier answer (the conversation shown again): how the call ended.
pub fn show_card(bubble: &HtmlElement, card: &ToolCard) -> Result<(), DomError> {
    show_use(
        bubble,
        &card.call_id,
        &card.tool,
        &card.provider,
        &card.arguments,
        None,
    )?;
    match card.ok {
        Some(ok) => show_result(bubble, &card.call_id, ok, &card.result, None),
        None => Ok(()),
    }
}

/// The fence lines of the model's copy are for the model; the user reads the text inside.
fn shorten(text: &str) -> String {
    let inner: Vec<&str> = text
        .lines()
        .filter(|l| {
            !l.starts_with(tandem_core::fence::FENCE_OPEN) && *l != tandem_core::fence::FENCE_CLOSE
        })
        .collect();
    let joined = inner.join("\n");
    if joined.chars().count() > 600 {
        format!("{}…", joined.chars().take(600).collect::<String>())
    } else {
        joined
    }
}

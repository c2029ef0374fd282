//! Tool-call cards in a transcript: the calls a model made (with Approve / Deny when the
//! worker asks) and what came of them, in a chat answer or a task step. Not a view: the chat
//! and the task both show cards, and neither depends on the other or on the Tools settings.

use tandem_core::chat::ToolCard;
use tandem_core::decimal::decimal;
use tandem_core::i18n::text;
use tandem_core::protocol::PanelToWorker;
use tandem_core::tools::image::ToolImage;
use tandem_core::tools::page;
use wasm_bindgen::JsCast;
use web_sys::HtmlElement;

use crate::dom::{self, DomError};
use crate::i18n::say;

/// Approve / Deny of every card, in the chat or the task card, now or later: one listener
/// on the document, installed once. The card names its call (`data-call`), the button the
/// answer (`data-approve`).
pub fn wire() -> Result<(), DomError> {
    dom::on_document("click", |e: web_sys::Event| {
        if let Some(button) = dom::item_of(&e, ".tool-card .tool-ask button[data-approve]") {
            decide(&button);
        }
    })
}

/// Sends the answer of `button` (Approve or Deny) to the worker; its question closes.
fn decide(button: &web_sys::Element) {
    let approve = button.get_attribute("data-approve").as_deref() == Some("true");
    let call_id = button
        .closest(".tool-card")
        .ok()
        .flatten()
        .and_then(|card| card.get_attribute("data-call"));
    let Some(call_id) = call_id else {
        return;
    };
    let decided = PanelToWorker::ToolDecision {
        call_id: call_id.clone(),
        approve,
    };
    if let Err(e) = crate::port::post(&decided) {
        crate::alert::show_error(&say(
            "workerUnreachable",
            vec![tandem_core::i18n::text(e.to_string())],
        ));
        return;
    }
    if let Some(group) = button.closest(".tool-ask").ok().flatten() {
        group.remove();
    }
    crate::waiting::done(&call_id);
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
    dom::set_attr(&card, "data-tool", tool);
    dom::set_attr(&card, "aria-label", &say("cardToolCall", vec![text(tool)]));
    dom::set_attr(&card, "open", "");
    let summary = dom::create("summary", "")?;
    let (tool_arg, by) = (text(tool), text(provider));
    summary.set_text_content(Some(&if provider.is_empty() {
        say("toolCard", vec![tool_arg])
    } else if provider.starts_with(page::PROVIDER_NAME) {
        // A page's own tool (WebMCP): not an extension the user allowed.
        say("toolCardByPage", vec![tool_arg, by])
    } else {
        say("toolCardFrom", vec![tool_arg, by])
    }));
    let _ = card.append_child(&summary);
    // The arguments as a person reads them (`url: https://…`); the JSON as sent one click
    // further, for whoever wants the exact call.
    let readable = tandem_core::tools::prompt::argument_lines(arguments)
        .map(|m| tandem_chrome::i18n::plain(&m));
    let args = dom::create("pre", "tool-args")?;
    dom::set_attr(&args, "aria-label", &say("cardArguments", vec![]));
    args.set_text_content(Some(readable.as_deref().unwrap_or(arguments)));
    let _ = card.append_child(&args);
    if readable.is_some() {
        let raw = dom::create("details", "tool-raw")?;
        let summary = dom::create("summary", "")?;
        summary.set_text_content(Some(&say("cardAsSent", vec![])));
        let json = dom::create("pre", "")?;
        json.set_text_content(Some(arguments));
        let _ = raw.append_child(&summary);
        let _ = raw.append_child(&json);
        let _ = card.append_child(&raw);
    }
    if let Some(question) = question {
        let ask = dom::create("div", "tool-ask")?;
        dom::set_attr(&ask, "role", "group");
        dom::set_attr(&ask, "aria-label", &say("cardRunAsk", vec![text(tool)]));
        let text = dom::create("p", "")?;
        // A long question (every argument, never cut) scrolls; the keyboard can scroll it too.
        dom::set_attr(&text, "tabindex", "0");
        text.set_text_content(Some(question));
        let _ = ask.append_child(&text);
        let row = dom::create("div", "row")?;
        for (key, approve) in [("approve", true), ("deny", false)] {
            let button = dom::create("button", "")?;
            dom::set_attr(&button, "type", "button");
            button.set_text_content(Some(&tandem_chrome::i18n::label(key)));
            dom::set_attr(
                &button,
                "data-approve",
                if approve { "true" } else { "false" },
            );
            let _ = row.append_child(&button);
        }
        let _ = ask.append_child(&row);
        let _ = card.append_child(&ask);
    }
    let before = bubble.query_selector(".text").ok().flatten();
    let _ = bubble.insert_before(&card, before.as_ref().map(|e| e.as_ref()));
    // In the conversation's log (announced), brought into view, and named by the pinned
    // line whenever it is out of sight.
    if let Some(ask) = card
        .query_selector(".tool-ask")
        .ok()
        .flatten()
        .and_then(|a| a.dyn_into::<HtmlElement>().ok())
    {
        crate::waiting::ask(
            call_id,
            &tandem_chrome::i18n::plain(&tandem_core::agent::waiting::call_waiting(tool)),
            &ask,
        );
    }
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
    let Some(card) = card_of(bubble, call_id) else {
        return Ok(());
    };
    if let Some(ask) = card.query_selector(".tool-ask").ok().flatten() {
        ask.remove();
        crate::waiting::done(call_id);
    }
    let result = dom::create(
        "p",
        if ok {
            "tool-result"
        } else {
            "tool-result error"
        },
    )?;
    dom::set_attr(&result, "aria-label", &say("cardResult", vec![]));
    let took = duration_ms
        .map(|ms| format!(" ({} s)", decimal(ms as f64 / 1000.0, 1)))
        .unwrap_or_default();
    result.set_text_content(Some(&say(
        if ok { "cardDone" } else { "cardFailed" },
        vec![
            tandem_core::i18n::text(took),
            tandem_core::i18n::text(shorten(text)),
        ],
    )));
    let _ = card.append_child(&result);
    Ok(())
}

/// The images the tool returned, in its card, each named by the tool in its alt text. Each
/// data: URL is checked again here ([`ToolImage::from_data_url`]: PNG, JPEG, GIF or WebP,
/// within the size limit, never SVG) whatever the worker said; one that fails is a sentence.
pub fn show_images(bubble: &HtmlElement, call_id: &str, images: &[String]) -> Result<(), DomError> {
    let Some(card) = card_of(bubble, call_id) else {
        return Ok(());
    };
    let tool = card.get_attribute("data-tool").unwrap_or_default();
    for (i, url) in images.iter().enumerate() {
        let Some(image) = ToolImage::from_data_url(url) else {
            let said = dom::create("p", "tool-result error")?;
            said.set_text_content(Some(&say("toolImageNotShown", vec![])));
            let _ = card.append_child(&said);
            continue;
        };
        let img = dom::create("img", "tool-image")?;
        let nth = if images.len() > 1 {
            format!(" {}", i + 1)
        } else {
            String::new()
        };
        dom::set_attr(
            &img,
            "alt",
            &say(
                "cardImage",
                vec![text(nth), text(tool.clone()), text(image.describe())],
            ),
        );
        dom::set_attr(&img, "src", &image.data_url());
        let _ = card.append_child(&img);
    }
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
        // A call that never ended was stopped with its answer.
        None => show_stopped(bubble, &card.call_id),
    }
}

/// The call was stopped before it ended (Stop, or the answer ended with it): its card says
/// "Stopped" rather than keeping no outcome (a question still open there is closed).
pub fn show_stopped(bubble: &HtmlElement, call_id: &str) -> Result<(), DomError> {
    let Some(card) = card_of(bubble, call_id) else {
        return Ok(());
    };
    if let Some(ask) = card.query_selector(".tool-ask").ok().flatten() {
        ask.remove();
    }
    let result = dom::create("p", "tool-result stopped")?;
    dom::set_attr(&result, "aria-label", &say("cardResult", vec![]));
    result.set_text_content(Some(&say("cardStopped", vec![])));
    let _ = card.append_child(&result);
    Ok(())
}

fn card_of(bubble: &HtmlElement, call_id: &str) -> Option<HtmlElement> {
    let cards = bubble.query_selector_all(".tool-card").ok()?;
    (0..cards.length())
        .filter_map(|i| cards.item(i))
        .filter_map(|n| n.dyn_into::<HtmlElement>().ok())
        .find(|c| c.get_attribute("data-call").as_deref() == Some(call_id))
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

//! Settings' two questions about a provider, asked with the form as typed: "Test connection"
//! (does it answer, with this key?) and "List models" (its models become the Model field's
//! suggestions). Only the answer to the latest question of each kind is shown.

use std::cell::RefCell;

use tandem_core::protocol::PanelToWorker;
use tandem_core::provider::ProviderKind;
use web_sys::HtmlElement;

use super::{form_values, selected_kind, text};
use crate::dom;
use crate::i18n::say;

/// The questions in flight, one cell: only the answer to the latest of each kind is shown.
#[derive(Default)]
struct Asked {
    test: Option<String>,
    listing: Option<String>,
}

thread_local! {
    static ASKED: RefCell<Asked> = RefCell::new(Asked::default());
}

/// Another provider is shown: the answers about the one before leave, and another
/// provider's models are not suggestions for this one.
pub(super) fn forget() {
    connection_status("", true);
    ASKED.with(|a| a.borrow_mut().listing = None);
    models_status("");
    if let Ok(options) = dom::by_id::<HtmlElement>("model-options") {
        options.set_text_content(None);
    }
}

/// Asks the worker to try the provider with the form as typed.
pub(super) fn test_connection() {
    let Some(provider) = selected_kind() else {
        return;
    };
    let request_id = dom::fresh_id("t");
    ASKED.with(|a| a.borrow_mut().test = Some(request_id.clone()));
    connection_status(&say("testingProvider", vec![text(provider.label())]), true);
    let message = PanelToWorker::TestConnection {
        request_id,
        provider,
        settings: form_values(),
    };
    if let Err(e) = crate::port::post(&message) {
        connection_status(&say("workerUnreachable", vec![text(e.to_string())]), false);
    }
}

/// The worker's answer to a connection test.
pub(super) fn connection_result(request_id: &str, ok: bool, message: &str) {
    let current = ASKED.with(|a| a.borrow().test.as_deref() == Some(request_id));
    if current {
        connection_status(message, ok);
    }
}

/// Asks the worker for the provider's models, with the form as typed.
pub(super) fn list_models() {
    let Some(provider) = selected_kind() else {
        return;
    };
    let form = form_values();
    let request_id = dom::fresh_id("m");
    ASKED.with(|a| a.borrow_mut().listing = Some(request_id.clone()));
    models_status(&say("listingModels", vec![text(provider.label())]));
    let message = PanelToWorker::ListModels {
        request_id,
        provider,
        settings: form,
    };
    if let Err(e) = crate::port::post(&message) {
        models_status(&say("workerUnreachable", vec![text(e.to_string())]));
    }
}

/// The worker's answer: the models become the Model field's suggestions (typing any name
/// still works), each with its context window where known.
pub(super) fn models_listed(
    request_id: &str,
    provider: ProviderKind,
    models: &[tandem_core::model_list::ListedModel],
    message: &str,
) {
    let current = ASKED.with(|a| a.borrow().listing.as_deref() == Some(request_id));
    if !current || selected_kind() != Some(provider) {
        return;
    }
    models_status(message);
    let Ok(options) = dom::by_id::<HtmlElement>("model-options") else {
        return;
    };
    options.set_text_content(None);
    for model in models {
        let Ok(option) = dom::create("option", "") else {
            continue;
        };
        dom::set_attr(&option, "value", &model.id);
        if let Some(window) = model.context_window {
            dom::set_attr(
                &option,
                "label",
                &format!(
                    "{} · {}",
                    model.id,
                    say(
                        "nTokens",
                        vec![tandem_core::i18n::count_shown(
                            u64::from(window),
                            tandem_core::chat::group_thousands(u64::from(window))
                        )]
                    )
                ),
            );
        }
        let _ = options.append_child(&option);
    }
}

fn models_status(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("models-status") {
        line.set_text_content(Some(text));
    }
}

fn connection_status(text: &str, ok: bool) {
    if let Ok(line) = dom::by_id::<HtmlElement>("connection-status") {
        line.set_text_content(Some(text));
        line.set_class_name(if ok { "ok" } else { "failed" });
    }
}

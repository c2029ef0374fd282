//! The Settings form: one set of fields per provider, stored under `settings` in
//! `chrome.storage.local`. The API key is write-only from the panel's point of view: the
//! form never shows a saved key back, only its last four characters. The "Tasks" fields are
//! a part of this view (`agent`).

mod agent;
mod nano;
mod provider_check;

use std::cell::RefCell;

use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::{mask_key, ProviderConfig, ProviderKind, ProviderSettings};
use tandem_core::session::Preferred;
use tandem_core::settings::{Settings, StoredSettings};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{HtmlButtonElement, HtmlElement, HtmlInputElement, HtmlSelectElement};

use crate::chrome;
use crate::dom::{self, DomError};
use crate::i18n::say;

const KEY: &str = "settings";

thread_local! {
    /// The settings as last read from or written to storage.
    static SAVED: RefCell<Settings> = RefCell::new(Settings::default());
}

thread_local! {
    /// The first read of the settings, started by the bootstrap before the wasm was ready, so
    /// that it is answered by the time the form is wired; taken by the first `load`.
    static FIRST_READ: RefCell<Option<js_sys::Promise>> = const { RefCell::new(None) };
}

/// Keeps `read` (a Promise of the storage read of `settings`) for the first `load`; anything
/// else leaves `load` to read them itself.
pub(crate) fn first_read(read: JsValue) {
    if let Ok(promise) = wasm_bindgen::JsCast::dyn_into::<js_sys::Promise>(read) {
        FIRST_READ.with(|r| *r.borrow_mut() = Some(promise));
    }
}

/// `asked_early`: the bootstrap asked the worker about the on-device model (`port::adopt`).
pub fn wire(asked_early: bool) -> Result<(), DomError> {
    let provider: HtmlSelectElement = dom::by_id("provider")?;
    for kind in ProviderKind::PICKABLE {
        let option = web_sys::HtmlOptionElement::new_with_text_and_value(kind.label(), kind.id())
            .map_err(|_| DomError::Missing("provider"))?;
        provider
            .add_with_html_option_element(&option)
            .map_err(|_| DomError::Missing("provider"))?;
    }
    dom::on("settings-toggle", "click", |_: web_sys::Event| {
        toggle_panel()
    })?;
    dom::on("settings-close", "click", |_: web_sys::Event| close_view())?;
    // Esc leaves Settings, as "Back to conversation" does (an IME composition keeps its Esc).
    dom::on("settings", "keydown", |e: web_sys::KeyboardEvent| {
        if e.key() == "Escape" && !e.is_composing() {
            e.prevent_default();
            close_view();
        }
    })?;
    dom::on("provider", "change", |_: web_sys::Event| {
        if let Some(kind) = selected_kind() {
            fill(kind);
        }
    })?;
    dom::on("model", "input", |_: web_sys::Event| show_vision())?;
    dom::on("on-device", "change", |_: web_sys::Event| show_vision())?;
    dom::on("settings-form", "submit", |e: web_sys::Event| {
        e.prevent_default();
        save();
    })?;
    dom::on("test-connection", "click", |_: web_sys::Event| {
        provider_check::test_connection()
    })?;
    // Only on request: a provider is not contacted because a field was entered.
    dom::on("list-models", "click", |_: web_sys::Event| {
        provider_check::list_models()
    })?;
    // The worker is asked about the on-device model first, before the panel's other
    // questions, so that its answer is not queued behind theirs; it is shown once the
    // settings are read (`nano::settings_loaded`). The bootstrap asked already when it opened
    // the Port while the wasm compiled (`port::adopt`).
    if asked_early {
        nano::asked(crate::port::EARLY_STATUS_ID);
    } else {
        nano::ask(false);
    }
    spawn_local(async {
        match load().await {
            Ok(stored) => {
                let notice = stored.notice();
                let settings = stored.settings;
                let active = settings.active;
                SAVED.with(|s| *s.borrow_mut() = settings);
                if let Some(kind) = active {
                    if let Ok(select) = dom::by_id::<HtmlSelectElement>("provider") {
                        select.set_value(kind.id());
                    }
                } else {
                    // First run: nothing can be sent before a provider is set, so show the form
                    // (open, not toggle: the user may have opened it already).
                    set_open(true);
                }
                if let Some(kind) = selected_kind() {
                    fill(kind);
                }
                if let Ok(select) = dom::by_id::<HtmlSelectElement>("on-device") {
                    select.set_value(SAVED.with(|s| s.borrow().on_device.id()));
                }
                show_vision();
                SAVED.with(|s| agent::show(&s.borrow()));
                show_stall_limit();
                // Said at once, where the user will look: the form shows what was kept.
                if let Some(notice) = notice {
                    set_open(true);
                    status(&notice);
                }
            }
            Err(e) => status(&e),
        }
        nano::settings_loaded();
    });
    dom::on("nano-download", "click", |_: web_sys::Event| {
        nano::ask(true)
    })?;
    agent::wire_sites()?;
    Ok(())
}

/// The worker's answers to Settings' questions.
pub(crate) fn receive(message: WorkerToPanel) {
    match message {
        WorkerToPanel::ConnectionResult {
            request_id,
            ok,
            message,
        } => provider_check::connection_result(&request_id, ok, &message),
        WorkerToPanel::Models {
            request_id,
            provider,
            models,
            message,
        } => provider_check::models_listed(&request_id, provider, &models, &message),
        WorkerToPanel::NanoStatus {
            request_id,
            availability,
            progress,
            detail,
        } => nano::answer(&request_id, availability, progress, detail),
        _ => {}
    }
}

fn toggle_panel() {
    if let Ok(section) = dom::by_id::<HtmlElement>("settings") {
        set_open(section.hidden());
    }
}

/// Settings is a view of its own: open, it takes the place of the conversation and its
/// composer (the header stays, so "Settings" toggles it back).
fn set_open(open: bool) {
    let (Ok(section), Ok(toggle), Ok(chat)) = (
        dom::by_id::<HtmlElement>("settings"),
        dom::by_id::<HtmlButtonElement>("settings-toggle"),
        dom::by_id::<HtmlElement>("chat-view"),
    ) else {
        return;
    };
    section.set_hidden(!open);
    // The conversation, its actions (Save conversation, Clear…) and the composer.
    chat.set_hidden(open);
    dom::set_attr(
        &toggle,
        "aria-expanded",
        if open { "true" } else { "false" },
    );
}

/// Leaves Settings for the conversation, the focus back on the button that opens it (keyboard
/// users continue where they were).
fn close_view() {
    set_open(false);
    if let Ok(toggle) = dom::by_id::<HtmlButtonElement>("settings-toggle") {
        let _ = toggle.focus();
    }
}

fn selected_kind() -> Option<ProviderKind> {
    dom::by_id::<HtmlSelectElement>("provider")
        .ok()
        .and_then(|s| ProviderKind::from_id(&s.value()))
}

fn input(id: &'static str) -> Option<HtmlInputElement> {
    dom::by_id::<HtmlInputElement>(id).ok()
}

/// Shows `kind`'s saved fields (never the key itself).
fn fill(kind: ProviderKind) {
    let stored = SAVED.with(|s| s.borrow().providers.get(&kind).cloned().unwrap_or_default());
    if let Some(base) = input("base-url") {
        base.set_value(&stored.base_url);
        base.set_placeholder(
            kind.default_base_url()
                .unwrap_or("http://localhost:1234/v1"),
        );
    }
    if let Some(model) = input("model") {
        model.set_value(&stored.model);
    }
    if let Ok(fields) = dom::by_id::<HtmlElement>("firebase-fields") {
        fields.set_hidden(kind != ProviderKind::Firebase);
    }
    if let Some(project) = input("project-id") {
        project.set_value(&stored.project_id);
    }
    if let Some(app) = input("app-id") {
        app.set_value(&stored.app_id);
    }
    if let Some(window) = input("context-window") {
        window.set_value(
            &stored
                .context_window
                .map(|n| n.to_string())
                .unwrap_or_default(),
        );
        let known = tandem_core::models::model_info(kind, &stored.model);
        window.set_placeholder(&known.context_window.to_string());
    }
    provider_check::forget();
    show_vision();
    if let Some(key) = input("api-key") {
        key.set_value("");
        key.set_placeholder(if kind.key_optional() {
            "optional for local servers"
        } else {
            ""
        });
    }
    if let Ok(hint) = dom::by_id::<HtmlElement>("api-key-hint") {
        let text = if stored.api_key.is_empty() {
            String::new()
        } else {
            say("keySaved", vec![text(mask_key(&stored.api_key))])
        };
        hint.set_text_content(Some(&text));
    }
    status("");
}

/// One sentence under Model: whether tasks send this model screenshots
/// (`tandem_core::vision::takes_images`; on "On-device only" Gemini Nano answers, and gets
/// them only where Chrome's on-device model takes images: its session is then created with
/// image input).
fn show_vision() {
    let Ok(hint) = dom::by_id::<HtmlElement>("model-vision") else {
        return;
    };
    let model = input("model").map(|m| m.value()).unwrap_or_default();
    let nano_only = dom::by_id::<HtmlSelectElement>("on-device")
        .is_ok_and(|s| s.value() == Preferred::Nano.id());
    let text = match selected_kind() {
        _ if nano_only => crate::i18n::message("modelNanoScreenshots").unwrap_or_else(|| {
            "Gemini Nano gets screenshots of the page only where Chrome's on-device model takes images on this device; otherwise tasks describe pages to it in text.".into()
        }),
        _ if model.trim().is_empty() => String::new(),
        Some(kind) if tandem_core::vision::takes_images(kind, &model) => {
            crate::i18n::message("modelGetsScreenshots").unwrap_or_else(|| {
                "Tasks send this model screenshots of the page when the element list is not enough (a chart, a map).".into()
            })
        }
        _ => crate::i18n::message("modelTextOnly").unwrap_or_else(|| {
            "This model takes text only: tasks describe pages to it and never send it screenshots.".into()
        }),
    };
    hint.set_text_content(Some(&text));
}

/// The saved stall limit (`budget.stallSeconds`); the default shows as the placeholder.
fn show_stall_limit() {
    let seconds = SAVED.with(|s| s.borrow().budget.stall_seconds);
    if let Some(field) = input("stall-seconds") {
        let default = tandem_core::budget::BudgetSettings::default().stall_seconds;
        field.set_value(&if seconds == default {
            String::new()
        } else {
            seconds.to_string()
        });
    }
}

/// How long a plain "Saved." toast stays before it leaves the room to the conversation;
/// sentences about a problem stay until the next status.
const SAVED_TOAST_MS: i32 = 10_000;

thread_local! {
    /// Counts statuses, so a toast's timer only clears the status it was set for.
    static STATUS_SEQ: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

fn status(text: &str) {
    let seq = STATUS_SEQ.with(|s| {
        s.set(s.get().wrapping_add(1));
        s.get()
    });
    if let Ok(line) = dom::by_id::<HtmlElement>("settings-status") {
        line.set_text_content(Some(text));
    }
    if text == saved_text() {
        let clear = wasm_bindgen::closure::Closure::once_into_js(move || {
            if STATUS_SEQ.with(|s| s.get()) == seq {
                status("");
            }
        });
        if let Some(window) = web_sys::window() {
            use wasm_bindgen::JsCast;
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
                clear.unchecked_ref(),
                SAVED_TOAST_MS,
            );
        }
    }
}

/// "Saved.", the toast that clears itself.
fn saved_text() -> String {
    say("settingsSaved", vec![])
}

fn text(t: impl Into<String>) -> tandem_core::i18n::Arg {
    tandem_core::i18n::text(t)
}

fn save() {
    let Some(kind) = selected_kind() else { return };
    let mut settings = SAVED.with(|s| s.borrow().clone());
    if let Err(e) = agent::read_form(&mut settings) {
        status(&e);
        return;
    }
    let entry = settings.providers.entry(kind).or_default();
    let form = form_values();
    entry.base_url = form.base_url;
    entry.model = form.model;
    entry.context_window = form.context_window;
    entry.project_id = form.project_id;
    entry.app_id = form.app_id;
    if !form.api_key.is_empty() {
        entry.api_key = form.api_key;
    }
    settings.active = Some(kind);
    // The field's min/max are checked by the form before Save submits; empty is the default.
    settings.budget.stall_seconds = input("stall-seconds")
        .and_then(|i| i.value().trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(tandem_core::budget::BudgetSettings::default().stall_seconds);
    if let Ok(select) = dom::by_id::<HtmlSelectElement>("on-device") {
        settings.on_device = Preferred::from_id(&select.value()).unwrap_or_default();
    }

    let problem = ProviderConfig::from_settings(kind, entry)
        .err()
        .map(|e| e.to_string());
    // Chrome only grants a host permission from inside the click that asked for it, so the
    // request is made now, before anything is awaited.
    let permission = entry_origin(entry).and_then(|origin| request_origin(&origin));
    spawn_local(async move {
        let granted = match permission {
            Some(p) => JsFuture::from(p)
                .await
                .map(|v| v.is_truthy())
                .unwrap_or(false),
            None => true,
        };
        match store(&settings).await {
            Ok(()) => {
                SAVED.with(|s| *s.borrow_mut() = settings);
                fill(kind);
                show_stall_limit();
                let usable = problem.is_none() && granted;
                status(&match (problem, granted) {
                    (Some(p), _) => say("savedNotUsable", vec![text(p)]),
                    (None, false) => say("savedNotGranted", vec![]),
                    (None, true) => saved_text(),
                });
                // Save ends the visit to Settings; "Saved." stays on screen as a toast. When
                // the settings cannot be used yet the form stays open on what to fix.
                if usable {
                    close_view();
                }
            }
            Err(e) => status(&e),
        }
    });
}

/// `https://host:port/*` for a base URL the user typed, to ask Chrome for access to it.
fn entry_origin(entry: &ProviderSettings) -> Option<String> {
    let url = web_sys::Url::new(entry.base_url.trim()).ok()?;
    matches!(url.protocol().as_str(), "http:" | "https:")
        .then(|| format!("{}//{}/*", url.protocol(), url.hostname()))
}

fn request_origin(origin: &str) -> Option<js_sys::Promise> {
    let origins = js_sys::Array::of1(&origin.into());
    let req = dom::items("origins", &origins);
    chrome::permissions_request(&req).ok()
}

/// The saved settings, read field by field (`Settings::from_stored_json`): a damaged part
/// costs only that part, and the notice says which, in one sentence for the user.
async fn load() -> Result<StoredSettings, String> {
    let promise = match FIRST_READ.with(|r| r.borrow_mut().take()) {
        Some(started) => started,
        None => chrome::storage_local_get(&KEY.into()).map_err(tandem_chrome::js_text)?,
    };
    let items = JsFuture::from(promise)
        .await
        .map_err(tandem_chrome::js_text)?;
    let value = js_sys::Reflect::get(&items, &KEY.into()).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok(StoredSettings::default());
    }
    let json: String = js_sys::JSON::stringify(&value)
        .map(String::from)
        .unwrap_or_default();
    Ok(Settings::from_stored_json(&json))
}

async fn store(settings: &Settings) -> Result<(), String> {
    let json = serde_json::to_string(settings).map_err(|e| e.to_string())?;
    let value = js_sys::JSON::parse(&json).map_err(tandem_chrome::js_text)?;
    let promise =
        chrome::storage_local_set(&dom::items(KEY, &value)).map_err(tandem_chrome::js_text)?;
    JsFuture::from(promise)
        .await
        .map_err(|e| say("settingsNotSaved", vec![text(tandem_chrome::js_text(&e))]))?;
    Ok(())
}

/// The provider fields as typed (the key field is empty when the saved key should be used).
fn form_values() -> ProviderSettings {
    let value = |id| {
        input(id)
            .map(|i| i.value().trim().to_string())
            .unwrap_or_default()
    };
    ProviderSettings {
        base_url: value("base-url"),
        model: value("model"),
        api_key: value("api-key"),
        // Anything that is not a sensible whole number means "use the model table".
        context_window: value("context-window")
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= 512),
        project_id: value("project-id"),
        app_id: value("app-id"),
    }
}

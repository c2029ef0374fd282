//! The Workflows view: the saved workflows (`chrome.storage.local["workflows"]`, redrawn on
//! every change), each with its name, start site, steps, parameters and last run; Run (a
//! `RunWorkflow` task command with the values in its parameter fields, for that run only: the
//! run shows in the task card), Rename (a name another workflow has is refused), parameters
//! renamed, given a default ("Save as default") or removed, Delete, Export (a JSON file
//! downloaded through an `<a download>` click) and Import (a file checked by
//! `workflow::import`: anything malformed, oversized or hostile is refused with a sentence
//! and nothing is stored).
//! A clicked notification of a scheduled run (`SHOWN_KEY` in `chrome.storage.session`, written
//! by the worker) opens the view on that workflow's entry, or, while the run waits for the
//! person, closes it so the task card shows. A view of its own: it imports no other view.

use std::cell::RefCell;

use js_sys::Uint8Array;
use tandem_core::agent::task::TaskCommand;
use tandem_core::agent::workflow::{
    self, alarm_name, Every, Schedule, Shown, Workflow, MAX_IMPORT_BYTES, SHOWN_KEY, WORKFLOWS_KEY,
};
use tandem_core::protocol::PanelToWorker;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{HtmlButtonElement, HtmlElement, HtmlInputElement, HtmlSelectElement};

use crate::dom::{self, DomError};
use crate::i18n::say;
use tandem_core::i18n::{nested, text as arg, Mark, Msg};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = create)]
    fn alarms_create(name: &str, info: &JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = clear)]
    fn alarms_clear(name: &str) -> Result<js_sys::Promise, JsValue>;
}

/// The alarm of workflow `id`: set for `schedule`, or cleared. The worker runs the workflow
/// when it rings (and makes it again at start if Chrome dropped it).
async fn set_alarm(id: &str, schedule: Option<&Schedule>) -> Result<(), String> {
    let name = alarm_name(id);
    let promise = match schedule {
        Some(s) => {
            let info = js_sys::Object::new();
            let _ =
                js_sys::Reflect::set(&info, &"when".into(), &JsValue::from_f64(s.next_at as f64));
            let minutes = (s.every.period_ms() / 60_000) as f64;
            let _ = js_sys::Reflect::set(
                &info,
                &"periodInMinutes".into(),
                &JsValue::from_f64(minutes),
            );
            alarms_create(&name, &info)
        }
        None => alarms_clear(&name),
    }
    .map_err(tandem_chrome::js_text)?;
    JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(tandem_chrome::js_text)
}

thread_local! {
    /// The workflows as last read from storage.
    static LIST: RefCell<Vec<Workflow>> = const { RefCell::new(Vec::new()) };
    /// The workflow whose notification was clicked last, marked in the list.
    static SHOWN: RefCell<Option<String>> = const { RefCell::new(None) };
}

pub fn wire() -> Result<(), DomError> {
    dom::on("workflows-toggle", "click", |_: web_sys::Event| {
        let open = dom::by_id::<HtmlElement>("workflows").is_ok_and(|s| s.hidden());
        set_open(open);
    })?;
    dom::on("workflows-close", "click", |_: web_sys::Event| {
        set_open(false);
        if let Ok(t) = dom::by_id::<HtmlButtonElement>("workflows-toggle") {
            let _ = t.focus();
        }
    })?;
    // Opening Settings leaves this view (Settings takes the same place).
    dom::on("settings-toggle", "click", |_: web_sys::Event| {
        if let Ok(section) = dom::by_id::<HtmlElement>("workflows") {
            section.set_hidden(true);
        }
        if let Ok(t) = dom::by_id::<HtmlButtonElement>("workflows-toggle") {
            dom::set_attr(&t, "aria-expanded", "false");
        }
    })?;
    dom::on("workflows", "keydown", |e: web_sys::KeyboardEvent| {
        if e.key() == "Escape" && !e.is_composing() {
            e.prevent_default();
            set_open(false);
        }
    })?;
    dom::on("workflows-import", "change", |_: web_sys::Event| {
        let Ok(input) = dom::by_id::<HtmlInputElement>("workflows-import") else {
            return;
        };
        let file = input.files().and_then(|f| f.get(0));
        input.set_value("");
        if let Some(file) = file {
            spawn_local(import_file(file));
        }
    })?;
    wire_entries()?;
    // Every store (this panel's own too) comes back as a change: a list equal to the one shown
    // is not rebuilt, so a name or a value being typed into an entry is not wiped by the echo
    // of an earlier save.
    crate::chrome::on_local_change(WORKFLOWS_KEY, || spawn_local(reload_changed()));
    crate::chrome::on_session_change(SHOWN_KEY, || spawn_local(show_clicked(false)));
    spawn_local(async {
        reload().await;
        show_clicked(true).await;
    });
    Ok(())
}

/// Shows the run of the workflow whose notification the person clicked: its entry, focused,
/// with its last run (also said in the status line), or the task card while the run waits
/// for them. `opening`: the panel is just opening, and shows only a click of the last
/// minute (a panel opened later by hand shows what the person had).
async fn show_clicked(opening: bool) {
    let shown = match crate::chrome::session_json(SHOWN_KEY).await {
        Ok(Some(json)) => tandem_core::json::from_str::<Shown>(&json).ok(),
        _ => None,
    };
    let Some(shown) = shown.filter(|s| !opening || s.fresh(js_sys::Date::now() as u64)) else {
        return;
    };
    if shown.waiting {
        set_open(false);
        if let Ok(card) = dom::by_id::<HtmlElement>("task-mode") {
            card.scroll_into_view();
        }
        return;
    }
    SHOWN.with(|s| *s.borrow_mut() = Some(shown.id.clone()));
    set_open(true);
    // The outcome was written just before the notice went out: read it afresh.
    reload().await;
    let Some(flow) = LIST.with(|l| l.borrow().iter().find(|w| w.id == shown.id).cloned()) else {
        return status(&say("workflowGone", vec![]));
    };
    status(&format!("{}: {}", flow.name, last_run_line(&flow)));
    let entry = dom::by_id::<HtmlElement>("workflows-list")
        .ok()
        .and_then(|list| {
            let items = list.child_nodes();
            (0..items.length())
                .filter_map(|i| items.item(i))
                .filter_map(|n| n.dyn_into::<web_sys::Element>().ok())
                .find(|e| e.get_attribute("data-workflow").as_deref() == Some(shown.id.as_str()))
        });
    if let Some(entry) = entry.and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
        entry.scroll_into_view();
        let _ = entry.focus();
    }
}

/// The view takes the place of the conversation (and of Settings), like Settings does.
fn set_open(open: bool) {
    if let Ok(section) = dom::by_id::<HtmlElement>("workflows") {
        section.set_hidden(!open);
    }
    if let Ok(toggle) = dom::by_id::<HtmlButtonElement>("workflows-toggle") {
        dom::set_attr(
            &toggle,
            "aria-expanded",
            if open { "true" } else { "false" },
        );
    }
    if let Ok(chat) = dom::by_id::<HtmlElement>("chat-view") {
        chat.set_hidden(open);
    }
    if open {
        if let Ok(settings) = dom::by_id::<HtmlElement>("settings") {
            settings.set_hidden(true);
        }
        if let Ok(t) = dom::by_id::<HtmlButtonElement>("settings-toggle") {
            dom::set_attr(&t, "aria-expanded", "false");
        }
    }
}

fn status(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("workflows-status") {
        line.set_text_content(Some(text));
    }
}

async fn reload() {
    if let Some(list) = read_list().await {
        show_list(list);
    }
}

/// [`reload`] for a change in storage: nothing is rebuilt when the list is the one shown.
async fn reload_changed() {
    if let Some(list) = read_list().await {
        if LIST.with(|l| *l.borrow() != list) {
            show_list(list);
        }
    }
}

/// The stored list; None (and a sentence in the status line) when it cannot be read.
async fn read_list() -> Option<Vec<Workflow>> {
    match crate::chrome::local_json(WORKFLOWS_KEY).await {
        Ok(Some(json)) => Some(workflow::read_stored(&json)),
        Ok(None) => Some(Vec::new()),
        Err(e) => {
            status(&say("workflowsNotRead", vec![arg(e.to_string())]));
            None
        }
    }
}

fn show_list(list: Vec<Workflow>) {
    LIST.with(|l| *l.borrow_mut() = list);
    if let Err(e) = render() {
        crate::alert::show_error(&e.to_string());
    }
}

async fn store(list: Vec<Workflow>) -> Result<(), String> {
    let json = serde_json::to_string(&list).map_err(|e| e.to_string())?;
    let value = js_sys::JSON::parse(&json).map_err(tandem_chrome::js_text)?;
    let promise = crate::chrome::storage_local_set(&dom::items(WORKFLOWS_KEY, &value))
        .map_err(tandem_chrome::js_text)?;
    JsFuture::from(promise)
        .await
        .map_err(tandem_chrome::js_text)?;
    LIST.with(|l| *l.borrow_mut() = list);
    Ok(())
}

/// Changes the workflow `id` with `change` and stores the list; the sentence of a refusal,
/// or `done`, goes to the status line.
fn change(
    id: String,
    done: String,
    change: impl FnOnce(&mut Workflow) -> Result<(), Msg> + 'static,
) {
    spawn_local(async move {
        let mut list = LIST.with(|l| l.borrow().clone());
        let Some(flow) = list.iter_mut().find(|w| w.id == id) else {
            return status(&say("workflowGone", vec![]));
        };
        if let Err(e) = change(flow) {
            return status(&tandem_chrome::i18n::plain(&e));
        }
        match store(list).await {
            Ok(()) => status(&done),
            Err(e) => status(&say("workflowsNotSaved", vec![arg(e.to_string())])),
        }
        let _ = render();
    });
}

fn render() -> Result<(), DomError> {
    let list: HtmlElement = dom::by_id("workflows-list")?;
    list.set_text_content(None);
    let flows = LIST.with(|l| l.borrow().clone());
    dom::by_id::<HtmlElement>("workflows-empty")?.set_hidden(!flows.is_empty());
    list.set_hidden(flows.is_empty());
    for flow in &flows {
        append(&list, &item(flow)?)?;
    }
    Ok(())
}

fn text(tag: &str, class: &str, content: &str) -> Result<HtmlElement, DomError> {
    let el = dom::create(tag, class)?;
    el.set_text_content(Some(content));
    Ok(el)
}

fn append(parent: &HtmlElement, child: &HtmlElement) -> Result<(), DomError> {
    parent
        .append_child(child)
        .map(|_| ())
        .map_err(|_| DomError::NoDocument)
}

/// A button of an entry; `action` (its `data-action`) is what [`act`] does on a click.
fn button(label: &str, name: &str, action: &str) -> Result<HtmlElement, DomError> {
    let b = text("button", "", label)?;
    dom::set_attr(&b, "type", "button");
    dom::set_attr(&b, "aria-label", name);
    dom::set_attr(&b, "data-action", action);
    Ok(b)
}

/// What the buttons of an entry do (their `data-action`). Save as default stores a
/// parameter's value (and its name) for every run; Run takes the values in the fields for
/// that run only.
const SAVE_PARAM: &str = "save-param";
const REMOVE_PARAM: &str = "remove-param";
const RENAME: &str = "rename";
const RUN: &str = "run";
const EXPORT: &str = "export";
const DELETE: &str = "delete";
const SAVE_SCHEDULE: &str = "save-schedule";

/// The buttons of every entry: one listener on the list, installed once (the list is
/// rebuilt at every change). The entry names its workflow (`data-workflow`), the button what
/// it does (`data-action`) and, for a parameter, which one (`data-param`); the fields it
/// reads are its siblings, named by `data-field`.
fn wire_entries() -> Result<(), DomError> {
    dom::on_each(
        "workflows-list",
        "li[data-workflow] button[data-action]",
        "click",
        |button, _: web_sys::Event| act(&button),
    )
}

fn act(button: &web_sys::Element) {
    let id = button
        .closest("li[data-workflow]")
        .ok()
        .flatten()
        .and_then(|li| li.get_attribute("data-workflow"));
    let (Some(id), Some(action)) = (id, button.get_attribute("data-action")) else {
        return;
    };
    // The field named `name` beside the button (in its row or group).
    let input = |name: &str| -> Option<HtmlInputElement> {
        button
            .parent_element()?
            .query_selector(&format!("[data-field=\"{name}\"]"))
            .ok()??
            .dyn_into()
            .ok()
    };
    let value = |name: &str| input(name).map(|i| i.value()).unwrap_or_default();
    let param = button.get_attribute("data-param").unwrap_or_default();
    match action.as_str() {
        SAVE_PARAM => {
            let (new, value) = (value("param-name"), value("param-value"));
            let said = say(
                "wfDefaultSaved",
                vec![arg(new.trim().to_string()), arg(value.clone())],
            );
            change(id, said, move |w| {
                w.rename_param(&param, &new)?;
                w.set_param_value(new.trim(), &value)
            });
        }
        REMOVE_PARAM => change(
            id,
            say("workflowParamRemoved", vec![arg(param.clone())]),
            move |w| {
                w.remove_param(&param);
                Ok(())
            },
        ),
        RENAME => {
            // `/run` finds a workflow by its name: another's is refused, as at save time.
            let chosen =
                LIST.with(|l| workflow::chosen_name(&value("name"), &l.borrow(), Some(&id)));
            let name = match chosen {
                Ok(name) => name,
                Err(e) => return status(&tandem_chrome::i18n::plain(&e)),
            };
            change(
                id,
                say("workflowRenamed", vec![arg(name.clone())]),
                move |w| {
                    w.name = name;
                    Ok(())
                },
            );
        }
        RUN => run(id, entry_values(button)),
        EXPORT => export(&id),
        DELETE => spawn_local(delete(id)),
        SAVE_SCHEDULE => {
            let select = button
                .parent_element()
                .and_then(|g| g.query_selector("select[data-field=\"every\"]").ok()?)
                .and_then(|s| s.dyn_into::<HtmlSelectElement>().ok());
            let every = select.map(|s| s.value()).unwrap_or_default();
            let allow = input("allow-model").is_some_and(|i| i.checked());
            save_schedule(id, &every, &value("hours"), allow);
        }
        _ => {}
    }
}

/// The values in the parameter fields of `button`'s entry, by parameter (as stored, not as
/// its name field may have been edited).
fn entry_values(button: &web_sys::Element) -> Vec<(String, String)> {
    let Some(fields) = button
        .closest("li[data-workflow]")
        .ok()
        .flatten()
        .and_then(|li| {
            li.query_selector_all("input[data-field=\"param-value\"]")
                .ok()
        })
    else {
        return Vec::new();
    };
    (0..fields.length())
        .filter_map(|i| fields.item(i)?.dyn_into::<HtmlInputElement>().ok())
        .filter_map(|f| Some((f.get_attribute("data-param")?, f.value())))
        .collect()
}

/// Runs workflow `id` with `values` for this run only: the stored defaults stay as they are
/// (the worker reads the workflow afresh and puts these in their place).
fn run(id: String, values: Vec<(String, String)>) {
    set_open(false);
    let command = TaskCommand::RunWorkflow {
        name: id,
        params: values,
        tab_id: crate::tab::current(),
    };
    if let Err(e) = crate::port::post(&PanelToWorker::Task { command }) {
        status(&say("workerUnreachable", vec![arg(e.to_string())]));
    }
}

fn export(id: &str) {
    let Some(flow) = LIST.with(|l| l.borrow().iter().find(|w| w.id == id).cloned()) else {
        return status(&say("workflowGone", vec![]));
    };
    if let Err(e) = download(std::slice::from_ref(&flow)) {
        status(&say("workflowNotExported", vec![arg(e.to_string())]));
    }
}

async fn delete(id: String) {
    let mut list = LIST.with(|l| l.borrow().clone());
    let Some(name) = list.iter().find(|w| w.id == id).map(|w| w.name.clone()) else {
        return status(&say("workflowGone", vec![]));
    };
    list.retain(|w| w.id != id);
    let _ = set_alarm(&id, None).await;
    match store(list).await {
        Ok(()) => status(&say("workflowDeleted", vec![arg(name)])),
        Err(e) => status(&say("workflowsNotSaved", vec![arg(e.to_string())])),
    }
    let _ = render();
}

/// Save of "Runs by itself": `every` and `hours` as chosen, `allow` the model taking over.
fn save_schedule(id: String, every: &str, hours: &str, allow: bool) {
    let every = match Every::parse(every, hours) {
        Ok(e) => e,
        Err(e) => return status(&tandem_chrome::i18n::plain(&e)),
    };
    let now = js_sys::Date::now() as u64;
    let schedule = every.map(|e| Schedule::new(e, allow, now));
    let said = match &schedule {
        Some(s) => say(
            "workflowScheduledEvery",
            vec![nested(Mark::Plain, s.every.label_message())],
        ),
        None => say("workflowUnscheduled", vec![]),
    };
    // Notifications are an optional permission: asked for now, inside the click (Chrome asks
    // only during a user gesture), when a schedule is set. The schedule is saved whatever the
    // answer: its runs are listed here either way.
    let asked = schedule.as_ref().and_then(|_| ask_for_notifications());
    spawn_local(async move {
        let mut list = LIST.with(|l| l.borrow().clone());
        let Some(flow) = list.iter_mut().find(|w| w.id == id) else {
            return status(&say("workflowGone", vec![]));
        };
        flow.schedule = schedule.clone();
        if let Err(e) = store(list).await {
            return status(&say("workflowsNotSaved", vec![arg(e.to_string())]));
        }
        match set_alarm(&id, schedule.as_ref()).await {
            Ok(()) => status(&said),
            Err(e) => status(&say("workflowScheduleNotSet", vec![arg(e.to_string())])),
        }
        let _ = render();
        if let (Some(p), Some(s)) = (asked, &schedule) {
            let granted = JsFuture::from(p).await.is_ok_and(|v| v.is_truthy());
            if !granted {
                status(&say(
                    "workflowScheduledSilently",
                    vec![nested(Mark::Plain, s.every.label_message())],
                ));
            }
        }
    });
}

/// A text field of an entry (its caller names it by `data-field` for the button beside it).
fn field(label: &str, value: &str) -> Result<HtmlInputElement, DomError> {
    let input: HtmlInputElement = dom::create("input", "")?
        .dyn_into()
        .map_err(|_| DomError::NoDocument)?;
    dom::set_attr(&input, "type", "text");
    dom::set_attr(&input, "aria-label", label);
    dom::set_attr(&input, "spellcheck", "false");
    input.set_value(value);
    Ok(input)
}

/// One workflow's entry: what it does and its controls.
fn item(flow: &Workflow) -> Result<HtmlElement, DomError> {
    // A control's accessible name: its word with the workflow's name.
    let named = |key: &str| say(key, vec![arg(flow.name.clone())]);
    let li = dom::create("li", "workflow")?;
    dom::set_attr(&li, "aria-label", &flow.name);
    dom::set_attr(&li, "data-workflow", &flow.id);
    // Focusable by script only: a clicked notification brings the person here.
    dom::set_attr(&li, "tabindex", "-1");
    if SHOWN.with(|s| s.borrow().as_deref() == Some(flow.id.as_str())) {
        dom::set_attr(&li, "aria-current", "true");
    }
    append(&li, &text("h3", "", &flow.name)?)?;
    append(
        &li,
        &text(
            "p",
            "hint",
            &say("workflowStartsOn", vec![arg(flow.start_site())]),
        )?,
    )?;
    append(&li, &text("p", "hint", &last_run_line(flow))?)?;

    let steps = dom::create("ol", "")?;
    dom::set_attr(
        &steps,
        "aria-label",
        &say("wfStepsOf", vec![arg(flow.name.clone())]),
    );
    for line in flow.step_lines() {
        append(&steps, &text("li", "", &line)?)?;
    }
    append(&li, &steps)?;

    if !flow.params.is_empty() {
        let group = dom::create("div", "stack")?;
        dom::set_attr(&group, "role", "group");
        dom::set_attr(
            &group,
            "aria-label",
            &say("wfParamsOf", vec![arg(flow.name.clone())]),
        );
        for p in &flow.params {
            let row = dom::create("div", "row")?;
            let name = field(&say("wfParamName", vec![arg(p.name.clone())]), &p.name)?;
            dom::set_attr(&name, "data-field", "param-name");
            let value = field(&say("wfParamValue", vec![arg(p.name.clone())]), &p.value)?;
            dom::set_attr(&value, "data-field", "param-value");
            dom::set_attr(&value, "data-param", &p.name);
            append(&row, &name)?;
            append(&row, &value)?;
            let save = button(
                &say("wfSaveDefault", vec![]),
                &say("wfSaveDefaultOf", vec![arg(p.name.clone())]),
                SAVE_PARAM,
            )?;
            dom::set_attr(&save, "data-param", &p.name);
            let remove = button(
                &say("wfRemove", vec![]),
                &say("wfRemoveParam", vec![arg(p.name.clone())]),
                REMOVE_PARAM,
            )?;
            dom::set_attr(&remove, "data-param", &p.name);
            append(&row, &save)?;
            append(&row, &remove)?;
            append(&group, &row)?;
        }
        append(&group, &text("p", "hint", &say("wfParamsHint", vec![]))?)?;
        append(&li, &group)?;
    }

    let rename_row = dom::create("div", "row")?;
    let new_name = field(&say("wfNewName", vec![arg(flow.name.clone())]), &flow.name)?;
    dom::set_attr(&new_name, "data-field", "name");
    append(&rename_row, &new_name)?;
    append(
        &rename_row,
        &button(&say("wfRename", vec![]), &named("wfRenameNamed"), RENAME)?,
    )?;
    append(&li, &rename_row)?;
    append(&li, &schedule_group(flow)?)?;

    let actions = dom::create("div", "row")?;
    for (word, name, action) in [
        ("wfRun", "wfRunNamed", RUN),
        ("wfExport", "wfExportNamed", EXPORT),
        ("wfDelete", "wfDeleteNamed", DELETE),
    ] {
        append(&actions, &button(&say(word, vec![]), &named(name), action)?)?;
    }
    append(&li, &actions)?;
    Ok(li)
}

/// "Last run <when>: <outcome>", or "Not run yet."
fn last_run_line(flow: &Workflow) -> String {
    match &flow.last_run {
        Some(run) => {
            let when: String = js_sys::Date::new(&JsValue::from_f64(run.at as f64))
                .to_locale_string("default", &JsValue::UNDEFINED)
                .into();
            // The outcome in the person's language while the English stored beside it is
            // the worker's (an imported file's, or an older run's, read back or as it is).
            say(
                "workflowLastRun",
                vec![arg(when), nested(Mark::Plain, run.message())],
            )
        }
        None => say("workflowNotRun", vec![]),
    }
}

/// Downloads `flows` as a JSON file.
fn download(flows: &[Workflow]) -> Result<(), String> {
    let json = workflow::export(flows);
    let slug: String = flows
        .first()
        .map(|w| w.name.as_str())
        .unwrap_or("workflows")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    dom::download(
        &json,
        "application/json",
        &format!("tandem-workflow-{slug}.json"),
    )
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// Reads and checks an imported file; stores its workflows only when all of it is sound.
async fn import_file(file: web_sys::File) {
    // A file far too large is refused before it is read into memory.
    if file.size() > MAX_IMPORT_BYTES as f64 {
        return status(&format!(
            "This file cannot be imported: it is larger than {} KB, more than any workflow needs.",
            MAX_IMPORT_BYTES / 1024
        ));
    }
    let buffer = match JsFuture::from(file.array_buffer()).await {
        Ok(b) => b,
        Err(e) => {
            return status(&format!(
                "Tandem could not read the file ({}).",
                tandem_chrome::js_text(e)
            ))
        }
    };
    let bytes = Uint8Array::new(&buffer).to_vec();
    let stamp = js_sys::Date::now() as u64;
    let imported = match workflow::import(&bytes, |i| format!("wf-{stamp}-{i}")) {
        Ok(w) => w,
        Err(sentence) => return status(&tandem_chrome::i18n::plain(&sentence)),
    };
    let mut list = LIST.with(|l| l.borrow().clone());
    if list.len() + imported.len() > workflow::MAX_WORKFLOWS {
        return status(&tandem_chrome::i18n::plain(&workflow::import_refused(
            Msg::new(
                "wfImportKeepsAtMost",
                vec![arg(workflow::MAX_WORKFLOWS.to_string())],
            ),
        )));
    }
    let count = imported.len();
    list.extend(imported);
    match store(list).await {
        Ok(()) => status(&if count == 1 {
            say("workflowImportedOne", vec![])
        } else {
            say("workflowImported", vec![arg(count.to_string())])
        }),
        Err(e) => status(&say("workflowsNotSaved", vec![arg(e.to_string())])),
    }
    let _ = render();
}

/// Asks Chrome to let Tandem show notifications (a scheduled run's outcome, or its need of
/// the person); resolves to whether it may. Granted already, Chrome answers at once.
fn ask_for_notifications() -> Option<js_sys::Promise> {
    let wanted = js_sys::Array::of1(&"notifications".into());
    crate::chrome::permissions_request(&dom::items("permissions", &wanted)).ok()
}

/// "Runs by itself": daily, weekly or every N hours, and whether the model may take over
/// when a page changed; saved with the workflow, and its alarm set.
fn schedule_group(flow: &Workflow) -> Result<HtmlElement, DomError> {
    let group = dom::create("div", "stack")?;
    dom::set_attr(&group, "role", "group");
    dom::set_attr(
        &group,
        "aria-label",
        &say("wfScheduleOf", vec![arg(flow.name.clone())]),
    );
    let current = match &flow.schedule {
        Some(s) => {
            let when: String = js_sys::Date::new(&JsValue::from_f64(s.next_at as f64))
                .to_locale_string("default", &JsValue::UNDEFINED)
                .into();
            say(
                "workflowRuns",
                vec![nested(Mark::Plain, s.every.label_message()), arg(when)],
            )
        }
        None => say("workflowRunsByHand", vec![]),
    };
    append(&group, &text("p", "hint", &current)?)?;
    let row = dom::create("div", "row")?;
    let select: HtmlSelectElement = dom::create("select", "")?
        .dyn_into()
        .map_err(|_| DomError::NoDocument)?;
    dom::set_attr(
        &select,
        "aria-label",
        &say("wfHowOften", vec![arg(flow.name.clone())]),
    );
    let chosen = match flow.schedule.as_ref().map(|s| s.every) {
        None => "off",
        Some(Every::Daily) => "daily",
        Some(Every::Weekly) => "weekly",
        Some(Every::Hours(_)) => "hours",
    };
    for (value, key) in [
        ("off", "wfOnlyByHand"),
        ("daily", "wfEveryDay"),
        ("weekly", "wfEveryWeek"),
        ("hours", "wfEveryNHours"),
    ] {
        let option = web_sys::HtmlOptionElement::new_with_text_and_value(&say(key, vec![]), value)
            .map_err(|_| DomError::NoDocument)?;
        option.set_selected(value == chosen);
        select
            .add_with_html_option_element(&option)
            .map_err(|_| DomError::NoDocument)?;
    }
    let hours = field(
        &say("wfHoursBetween", vec![arg(flow.name.clone())]),
        &match flow.schedule.as_ref().map(|s| s.every) {
            Some(Every::Hours(n)) => n.to_string(),
            _ => String::new(),
        },
    )?;
    dom::set_attr(&hours, "inputmode", "numeric");
    dom::set_attr(&hours, "data-field", "hours");
    dom::set_attr(&select, "data-field", "every");
    append(&row, &select)?;
    append(&row, &hours)?;
    append(&group, &row)?;
    let label = dom::create("label", "")?;
    let allow: HtmlInputElement = dom::create("input", "")?
        .dyn_into()
        .map_err(|_| DomError::NoDocument)?;
    dom::set_attr(&allow, "type", "checkbox");
    dom::set_attr(&allow, "data-field", "allow-model");
    allow.set_checked(flow.schedule.as_ref().is_some_and(|s| s.allow_model));
    append(&label, &allow)?;
    label
        .append_with_str_1(&format!(" {}", say("wfAllowModel", vec![])))
        .map_err(|_| DomError::NoDocument)?;
    append(&group, &label)?;
    append(&group, &text("p", "hint", &say("wfScheduledHint", vec![]))?)?;
    append(
        &group,
        &button(
            &say("wfSaveSchedule", vec![]),
            &say("wfSaveScheduleOf", vec![arg(flow.name.clone())]),
            SAVE_SCHEDULE,
        )?,
    )?;
    Ok(group)
}

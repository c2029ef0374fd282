//! Saved workflows as the worker keeps them: `chrome.storage.local["workflows"]` (the user's
//! data: target names and their own values, never a secret), read entry by entry
//! (`workflow::read_stored`: a damaged entry is left out, never the others). The panel's
//! Workflows view renames, deletes, imports and exports there itself; the worker saves a
//! finished task as one, updates one after a run the model finished, finds one to run and
//! writes each run's outcome.

use js_sys::{Object, Promise, Reflect, JSON};
use tandem_chrome::i18n::plain;
use tandem_chrome::js_text;
use tandem_core::agent::task::{TaskContext, TaskStatus};
use tandem_core::agent::why::reason;
use tandem_core::agent::workflow::{
    self, alarm_name, read_stored, LastRun, Replay, Shown, Workflow, MAX_WORKFLOWS, SHOWN_KEY,
    WORKFLOWS_KEY,
};
use tandem_core::i18n::{nested, text, Mark, Msg};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::chrome::{self, session_set};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = get)]
    fn alarms_get(name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = create)]
    fn alarms_create(name: &str, info: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "notifications"], js_name = create)]
    fn notifications_create(id: &str, options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "notifications"], js_name = clear)]
    fn notifications_clear(id: &str) -> Result<Promise, JsValue>;
}

/// At every worker start: each scheduled workflow has its alarm. Chrome may drop alarms
/// when it restarts; a run missed meanwhile is run once, now (not once per miss).
pub fn start() {
    spawn_local(async {
        let Ok(list) = load().await else {
            return;
        };
        let now = js_sys::Date::now() as u64;
        for flow in list {
            let Some(schedule) = flow.schedule.as_ref() else {
                continue;
            };
            let name = alarm_name(&flow.id);
            let exists = match alarms_get(&name) {
                Ok(p) => JsFuture::from(p).await.is_ok_and(|a| a.is_object()),
                Err(_) => false,
            };
            if exists {
                continue;
            }
            let when = schedule.ring_at(now);
            let info = Object::new();
            let _ = Reflect::set(&info, &"when".into(), &JsValue::from_f64(when as f64));
            let minutes = (schedule.every.period_ms() / 60_000) as f64;
            let _ = Reflect::set(
                &info,
                &"periodInMinutes".into(),
                &JsValue::from_f64(minutes),
            );
            if let Ok(p) = alarms_create(&name, &info) {
                let _ = JsFuture::from(p).await;
            }
        }
    });
}

/// Tells the user that a scheduled run waits for them (an approval, a password, or the
/// model's leave to take over).
pub fn notify_paused(ctx: &TaskContext) {
    let Some(replay) = ctx.replay.as_ref() else {
        return;
    };
    // In the UI language, as the panel would say it.
    let what = match &ctx.pending {
        Some(p) => p.message(),
        None => ctx.reason_message().unwrap_or_else(|| Msg::literal("")),
    };
    notify(
        &replay.workflow_id,
        &plain(&Msg::new(
            "workflowNeedsYou",
            vec![text(replay.name.clone())],
        )),
        &plain(&Msg::new(
            "workflowOpenPanel",
            vec![nested(Mark::Plain, what)],
        )),
    );
}

/// A system notification (one per workflow: a newer one replaces the last).
pub(crate) fn notify(workflow_id: &str, title: &str, message: &str) {
    let options = Object::new();
    let _ = Reflect::set(&options, &"type".into(), &"basic".into());
    let _ = Reflect::set(&options, &"iconUrl".into(), &"icons/tandem-128.png".into());
    let _ = Reflect::set(&options, &"title".into(), &title.into());
    let cut: String = message.chars().take(300).collect();
    let _ = Reflect::set(&options, &"message".into(), &cut.into());
    match notifications_create(&alarm_name(workflow_id), &options) {
        Ok(p) => spawn_local(async move {
            if let Err(e) = JsFuture::from(p).await {
                crate::log_error("a workflow notification failed", &e);
            }
        }),
        // `notifications` is optional (the panel asks when a schedule is saved): refused, the
        // run's outcome is still in the Workflows view, where the panel shows it.
        Err(e) => crate::log_error(
            "Chrome has not allowed Tandem to show notifications; the scheduled run's outcome is in the Workflows view",
            &e,
        ),
    }
}

/// The person clicked workflow `id`'s notification: the notice goes, and every open panel
/// (and one the click opens) shows that workflow's run: its entry in the Workflows view, or
/// the task card when the run waits for them (`waiting`).
pub(crate) async fn show_in_panels(id: &str, waiting: bool) {
    if let Ok(p) = notifications_clear(&alarm_name(id)) {
        let _ = JsFuture::from(p).await;
    }
    let shown = Shown {
        id: id.to_string(),
        waiting,
        at: js_sys::Date::now() as u64,
    };
    let stored = serde_json::to_string(&shown)
        .map_err(|e| e.to_string())
        .and_then(|json| JSON::parse(&json).map_err(js_text))
        .and_then(|value| {
            let items = Object::new();
            let _ = Reflect::set(&items, &SHOWN_KEY.into(), &value);
            session_set(&items).map_err(js_text)
        });
    let written = match stored {
        Ok(p) => JsFuture::from(p).await.map(|_| ()).map_err(js_text),
        Err(e) => Err(e),
    };
    if let Err(e) = written {
        crate::log_error("the clicked workflow could not be shown", &e.into());
    }
}

pub(crate) async fn set_last_run(id: &str, outcome: Msg) {
    let Ok(mut list) = load().await else {
        return;
    };
    if let Some(flow) = list.iter_mut().find(|w| w.id == id) {
        flow.last_run = Some(LastRun::new(js_sys::Date::now() as u64, outcome));
        let _ = store(&list).await;
    }
}

/// The stored workflows (none when there are none or storage cannot be read).
pub(crate) async fn load() -> Result<Vec<Workflow>, String> {
    let json = chrome::stored_json(chrome::storage_local_get, WORKFLOWS_KEY)
        .await
        .map_err(js_text)?;
    Ok(json
        .filter(|j| j != "null")
        .map(|json| read_stored(&json))
        .unwrap_or_default())
}

pub(crate) async fn store(list: &[Workflow]) -> Result<(), String> {
    let json = serde_json::to_string(list).map_err(|e| e.to_string())?;
    chrome::store_json(WORKFLOWS_KEY, &json)
        .await
        .map_err(js_text)
}

/// A sentence for the person, in the UI language (the worker's `chrome.i18n`).
fn say(msg: impl std::borrow::Borrow<Msg>) -> String {
    plain(msg.borrow())
}

/// "Tandem could not read the saved workflows (…)."
fn not_read(detail: &str) -> Msg {
    Msg::new("wfNotRead", vec![text(detail)])
}

/// "Save as workflow" for the ended task, called `name` (the person's choice, refused with a
/// sentence when empty, too long or another workflow's); the sentence the panel shows either
/// way.
pub async fn save_task(ctx: Option<TaskContext>, name: &str) -> String {
    let Some(ctx) = ctx.filter(|c| c.status == TaskStatus::Done && c.replay.is_none()) else {
        return say(Msg::key("wfOnlyDone"));
    };
    let mut list = match load().await {
        Ok(l) => l,
        Err(e) => return say(not_read(&e.to_string())),
    };
    if list.len() >= MAX_WORKFLOWS {
        return say(Msg::new(
            "wfKeepsAtMostDelete",
            vec![text(MAX_WORKFLOWS.to_string())],
        ));
    }
    let name = match workflow::chosen_name(name, &list, None) {
        Ok(n) => n,
        Err(e) => return say(e),
    };
    let id = format!("wf-{}", js_sys::Date::now() as u64);
    let flow = match Workflow::from_task(&id, &ctx.task, &name, &ctx.recorded)
        .and_then(|w| workflow::check(&w).map(|()| w))
    {
        Ok(w) => w,
        Err(e) => return say(e),
    };
    let name = flow.name.clone();
    list.push(flow);
    match store(&list).await {
        Ok(()) => say(Msg::new("wfSaved", vec![text(name)])),
        Err(e) => say(Msg::new("wfNotSaved", vec![text(e.to_string())])),
    }
}

/// "Update workflow": the workflow the ended run replayed takes the steps it did.
pub async fn update_from_run(ctx: Option<TaskContext>) -> String {
    let Some((ctx, replay)) = ctx
        .filter(|c| c.status == TaskStatus::Done)
        .and_then(|c| c.replay.clone().map(|r| (c, r)))
    else {
        return say(Msg::key("wfOnlyDoneRun"));
    };
    let mut list = match load().await {
        Ok(l) => l,
        Err(e) => return say(not_read(&e.to_string())),
    };
    let Some(flow) = list.iter_mut().find(|w| w.id == replay.workflow_id) else {
        return say(Msg::key("wfDeletedMeanwhile"));
    };
    match flow.updated(&ctx.recorded, &replay.params) {
        Ok(next) => *flow = next,
        Err(e) => return say(e),
    }
    let name = flow.name.clone();
    match store(&list).await {
        Ok(()) => say(Msg::new("wfUpdated", vec![text(name)])),
        Err(e) => say(Msg::new("wfNotSaved", vec![text(e.to_string())])),
    }
}

/// The task that runs the workflow called `name` (its id also works) with `given` values,
/// or the sentence saying why not.
pub async fn run_task(
    name: &str,
    given: &[(String, String)],
    tab: i32,
) -> Result<TaskContext, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(say(Msg::key("wfRunName")));
    }
    let list = load().await.map_err(|e| say(not_read(&e.to_string())))?;
    let flow = list
        .iter()
        .find(|w| w.id == name)
        .or_else(|| list.iter().find(|w| w.name.eq_ignore_ascii_case(name)))
        .ok_or_else(|| say(Msg::new("wfNoSuchWorkflow", vec![text(name)])))?;
    let values = flow.values(given).map_err(|e| say(&e))?;
    let id = format!("task-{}", js_sys::Date::now() as u64);
    // The start page is named in the task: it is where the user chose to go, so the agent
    // (after a divergence) may return there without asking.
    let goal = format!(
        "{} (saved workflow \u{201c}{}\u{201d}, starting at {})",
        workflow::fill(&flow.goal, &values),
        flow.name,
        flow.start_url
    );
    let mut ctx = TaskContext::new(id, goal, tab);
    ctx.replay = Some(Replay::new(flow, values));
    Ok(ctx)
}

/// Writes how a workflow's run ended into the workflow (its last run and outcome).
pub async fn note_outcome(ctx: &TaskContext) {
    let Some(replay) = ctx.replay.as_ref().filter(|_| ctx.status.is_final()) else {
        return;
    };
    let Ok(mut list) = load().await else {
        return;
    };
    let Some(flow) = list.iter_mut().find(|w| w.id == replay.workflow_id) else {
        return;
    };
    let status = Msg::key(match ctx.status {
        TaskStatus::Done => "taskDone",
        TaskStatus::Failed => "taskFailed",
        TaskStatus::Cancelled => "taskCancelled",
        _ => "taskStopped",
    });
    // "Failed; step 2: …; the model took over from there: <why the task ended>", each part
    // a message of its own; the English is what is stored beside it.
    let mut parts = vec![nested(Mark::Plain, status)];
    match &replay.diverged {
        Some(why) => parts.extend([text("; "), nested(Mark::Plain, reason(why))]),
        None if ctx.status == TaskStatus::Done => {
            parts = vec![nested(Mark::Plain, Msg::key("workflowDoneNoModel"))]
        }
        None => {}
    }
    if ctx.status != TaskStatus::Done {
        if let Some(said) = ctx.reason_message() {
            parts.extend([text(": "), nested(Mark::Plain, said)]);
        }
    }
    let outcome = Msg {
        key: String::new(),
        args: parts,
    };
    let run = LastRun::new(js_sys::Date::now() as u64, outcome);
    let shown = plain(&run.message());
    flow.last_run = Some(run);
    let title = plain(&Msg::new(
        "workflowScheduled",
        vec![text(flow.name.clone())],
    ));
    if let Err(e) = store(&list).await {
        crate::log_error("a workflow's last run could not be saved", &e.into());
    }
    if replay.scheduled {
        notify(&replay.workflow_id, &title, &shown);
    }
}

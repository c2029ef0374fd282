//! `chrome.alarms` rings here: the memory's cleanup every 30 minutes, and saved workflows'
//! schedules. Above both, so neither the memory nor the workflows' storage reaches up into
//! the agent that runs a workflow.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub fn on_alarm(alarm: JsValue) {
    let name = Reflect::get(&alarm, &"name".into())
        .ok()
        .and_then(|n| n.as_string());
    match name.as_deref() {
        Some(crate::memory::CLEANUP_ALARM) => crate::memory::on_cleanup_alarm(),
        // The other alarms are saved workflows' schedules.
        Some(name) => crate::agent::on_workflow_alarm(name),
        None => {}
    }
}

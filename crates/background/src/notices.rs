//! `chrome.notifications` clicks land here. Tandem's notifications are saved workflows'
//! scheduled runs (named by their alarm, `workflow:<id>`): a click shows that run. Above the
//! workflows' storage and the agent, like `alarms`, so neither reaches up into the other.

use js_sys::JsString;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub fn on_notification_clicked(id: JsValue) {
    let Some(id) = id.dyn_ref::<JsString>().map(String::from) else {
        return;
    };
    if let Some(workflow) = tandem_core::agent::workflow::workflow_of_alarm(&id) {
        crate::agent::on_workflow_notice(workflow);
    }
}

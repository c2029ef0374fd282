//! "Ask Tandem" on selected text: the context-menu item and the keyboard shortcut (manifest
//! `commands`). `extension/background.js` opens the side panel inside the click or shortcut
//! handler (the user gesture that allows it does not survive an await), then forwards here:
//! this reads the selection and leaves it for the panel to ask about (`memory::ask_about`).

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use tandem_chrome::js_text;
use tandem_core::memory::SensitiveField;

use crate::chrome::execute_script;

/// The context-menu item's id and the command's name (declared in manifest.json).
pub const ASK_ID: &str = "ask-tandem";
const ASK_TITLE: &str = "Ask Tandem";

// A page-side function for `scripting.executeScript`, which serialises it into the page.
// It is defined in a module (an extension file): the extension's CSP forbids building one
// from a string.
#[wasm_bindgen(inline_js = r"
export function selection_reader() {
    return () => {
        // The focused element, through open shadow roots.
        let field = document.activeElement;
        while (field && field.shadowRoot && field.shadowRoot.activeElement) {
            field = field.shadowRoot.activeElement;
        }
        if (field && (field.tagName === 'TEXTAREA' || field.tagName === 'INPUT')) {
            const type = (field.getAttribute('type') || '').toLowerCase();
            const auto = (field.getAttribute('autocomplete') || '').toLowerCase();
            // What is selected in these never leaves the page, not even to be refused later.
            if (type === 'password' || /\b(current|new)-password\b/.test(auto)) {
                return { sensitive: 'password' };
            }
            if (/\bcc-/.test(auto)) return { sensitive: 'payment' };
            if (/\bone-time-code\b/.test(auto)) return { sensitive: 'one-time-code' };
            if (typeof field.selectionStart === 'number' && field.selectionEnd > field.selectionStart) {
                return { text: field.value.slice(field.selectionStart, field.selectionEnd) };
            }
        }
        return { text: String(getSelection() ?? '') };
    };
}
")]
extern "C" {
    fn selection_reader() -> js_sys::Function;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "contextMenus"], js_name = removeAll)]
    fn menus_remove_all() -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "contextMenus"], js_name = create)]
    fn menus_create(properties: &JsValue, done: &js_sys::Function) -> Result<JsValue, JsValue>;
}

#[derive(Debug, thiserror::Error)]
enum AskError {
    #[error("could not add the \"{ASK_TITLE}\" menu item: {0}")]
    Menu(String),
}

/// On install and update: the menu item (menus persist, so it is made once per install).
pub fn create_menu() {
    spawn_local(async {
        let made = async {
            // An update keeps the old items: start from none so the id is free.
            if let Ok(p) = menus_remove_all() {
                let _ = JsFuture::from(p).await;
            }
            let properties = Object::new();
            let _ = Reflect::set(&properties, &"id".into(), &ASK_ID.into());
            let _ = Reflect::set(&properties, &"title".into(), &ASK_TITLE.into());
            let contexts = Array::of1(&"selection".into());
            let _ = Reflect::set(&properties, &"contexts".into(), &contexts);
            // Errors come back through runtime.lastError in the callback; reading it there
            // is what keeps Chrome from logging it as unchecked.
            let promise = Promise::new(&mut |resolve, _| {
                let settle = resolve.clone();
                let done = Closure::once_into_js(move || {
                    let error = last_error().map_or(JsValue::NULL, JsValue::from);
                    let _ = settle.call1(&JsValue::NULL, &error);
                });
                if let Err(e) = menus_create(&properties, done.unchecked_ref()) {
                    let _ = resolve.call1(&JsValue::NULL, &JsValue::from(js_text(e)));
                }
            });
            match JsFuture::from(promise)
                .await
                .ok()
                .and_then(|v| v.as_string())
            {
                Some(error) => Err(AskError::Menu(error)),
                None => Ok(()),
            }
        };
        if let Err(e) = made.await {
            web_sys::console::error_1(&format!("Tandem: {e}").into());
        }
    });
}

/// `chrome.runtime.lastError.message`, if there is one.
fn last_error() -> Option<String> {
    let chrome = Reflect::get(&js_sys::global(), &"chrome".into()).ok()?;
    let runtime = Reflect::get(&chrome, &"runtime".into()).ok()?;
    let error = Reflect::get(&runtime, &"lastError".into()).ok()?;
    if error.is_undefined() || error.is_null() {
        return None;
    }
    Some(
        Reflect::get(&error, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_else(|| "unknown error".into()),
    )
}

#[wasm_bindgen]
pub fn on_menu_clicked(info: JsValue, tab: JsValue) {
    let field = |name: &str| Reflect::get(&info, &name.into()).ok();
    if field("menuItemId").and_then(|v| v.as_string()).as_deref() != Some(ASK_ID) {
        return;
    }
    let Some(tab_id) = tab_id_of(&tab) else {
        return;
    };
    // Chrome's copy of the selection has its line breaks folded; the page's own has them.
    let offered = field("selectionText").and_then(|v| v.as_string());
    let frame = field("frameId").and_then(|v| v.as_f64());
    spawn_local(async move {
        let text = match read_selection(tab_id, frame).await {
            // Chrome's own copy of the selection is not used either.
            Some(Selected::Sensitive(field)) => {
                return crate::memory::refuse_selection(tab_id, field).await
            }
            Some(Selected::Text(t)) if !t.trim().is_empty() => t,
            _ => offered.unwrap_or_default(),
        };
        crate::memory::ask_about(tab_id, &text).await;
    });
}

#[wasm_bindgen]
pub fn on_command(command: String, tab: JsValue) {
    if command != ASK_ID {
        return;
    }
    let Some(tab_id) = tab_id_of(&tab) else {
        return;
    };
    spawn_local(async move {
        // Nothing selected: the panel opened, and there is nothing to ask about.
        match read_selection(tab_id, None).await {
            Some(Selected::Text(text)) => crate::memory::ask_about(tab_id, &text).await,
            Some(Selected::Sensitive(field)) => {
                crate::memory::refuse_selection(tab_id, field).await
            }
            None => {}
        }
    });
}

fn tab_id_of(tab: &JsValue) -> Option<i32> {
    let id = Reflect::get(tab, &"id".into()).ok()?.as_f64()?;
    // TAB_ID_NONE (-1) and non-integers are not tabs we can read or remember.
    (id >= 0.0 && id.fract() == 0.0 && id <= f64::from(i32::MAX)).then_some(id as i32)
}

/// What the page-side reader found.
enum Selected {
    Text(String),
    /// The selection is inside a field Tandem never reads.
    Sensitive(SensitiveField),
}

/// The selection in the tab (in `frame`, else the top frame). The shortcut and the menu grant
/// `activeTab` for this tab, which is the access `executeScript` needs. `None` when the page
/// cannot be read (chrome:// pages, the Web Store, a closed tab).
async fn read_selection(tab_id: i32, frame: Option<f64>) -> Option<Selected> {
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab_id.into());
    if let Some(frame) = frame {
        let _ = Reflect::set(&target, &"frameIds".into(), &Array::of1(&frame.into()));
    }
    let injection = Object::new();
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let _ = Reflect::set(&injection, &"func".into(), &selection_reader());
    let results = JsFuture::from(execute_script(&injection).ok()?)
        .await
        .ok()?;
    let first = Reflect::get(&results, &0.into()).ok()?;
    let result = Reflect::get(&first, &"result".into()).ok()?;
    let field = |name: &str| Reflect::get(&result, &name.into()).ok()?.as_string();
    if let Some(name) = field("sensitive") {
        // A name this worker does not know is still a field it must not read.
        return Some(Selected::Sensitive(
            SensitiveField::from_name(&name).unwrap_or(SensitiveField::Password),
        ));
    }
    field("text").map(Selected::Text)
}

//! Page tools (WebMCP) at run time: the tools a web page registered through
//! `document.modelContext`, listed and called in the page itself with
//! `scripting.executeScript` in the page's MAIN world (where `modelContext` lives; the
//! isolated world of an extension has its own `document` wrapper without the page's tools).
//! What is offered, asked and fenced is `tandem_core::tools::page`; this binds it to Chrome.
//!
//! Measured on Chromium 156 with `--enable-blink-features=WebMCP`: `getTools()` resolves with
//! plain objects `{name, title, description, inputSchema (object), origin, window}`, and
//! `executeTool(thatObject, argumentsObject)` with the JSON text of the tool's answer.

use js_sys::{Array, Object, Promise, Reflect, JSON};
use serde_json::Value;
use tandem_core::tools::page::{read_listing, PageListing};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::chrome::execute_script;

// Page-side functions for `scripting.executeScript`, which serialises them into the page.
// They are defined in a module (an extension file): the extension's CSP forbids building a
// function from a string. Both only ever return plain JSON-able values (the page's tool
// objects hold its `window`, which cannot cross).
#[wasm_bindgen(inline_js = r"
export function page_tools_lister() {
    return async () => {
        const host = location.hostname;
        const context = document.modelContext;
        if (!context || typeof context.getTools !== 'function') {
            return { supported: false, host, tools: [] };
        }
        let listed = [];
        try {
            listed = await context.getTools();
        } catch (e) {
            return { supported: true, host, tools: [], error: String(e && e.message || e) };
        }
        const tools = [];
        for (const t of Array.isArray(listed) ? listed : []) {
            // Tools of this document only: not those of frames from other origins.
            if (t && t.origin && t.origin !== location.origin) continue;
            let schema = t && t.inputSchema;
            try {
                schema = typeof schema === 'string' ? schema : JSON.stringify(schema ?? { type: 'object' });
            } catch (e) {
                schema = 'unreadable';
            }
            tools.push({
                name: String(t && t.name || ''),
                description: String(t && t.description || ''),
                inputSchema: schema,
            });
        }
        return { supported: true, host, tools };
    };
}

export function page_tool_runner() {
    return async (host, name, argumentsJson) => {
        // The tab may have gone to another site since the tools were listed: a tool of the
        // same name there is not the one the user was asked about.
        if (location.hostname !== host) {
            return { ok: false, error: 'the tab shows another site now (' + location.hostname + ')' };
        }
        const context = document.modelContext;
        if (!context) return { ok: false, error: 'the page offers no tools any more' };
        try {
            const tools = await context.getTools();
            const tool = (tools || []).find((t) => t && t.name === name && (!t.origin || t.origin === location.origin));
            if (!tool) return { ok: false, error: 'the page no longer offers ' + name };
            const result = await context.executeTool(tool, JSON.parse(argumentsJson));
            if (result === undefined || result === null) return { ok: true, result: null };
            return { ok: true, result: typeof result === 'string' ? result : JSON.stringify(result) };
        } catch (e) {
            return { ok: false, error: String(e && e.message || e) };
        }
    };
}
")]
extern "C" {
    fn page_tools_lister() -> js_sys::Function;
    fn page_tool_runner() -> js_sys::Function;
}

/// How long listing a page's tools may hold up a chat turn.
const LIST_LIMIT_MS: i32 = 3_000;
/// A page tool's own limit; the turn's race (30 s, Stop) is around it as for every tool.
const CALL_LIMIT_MS: i32 = 60_000;

#[derive(Debug, thiserror::Error)]
pub enum PageToolsError {
    #[error("Tandem could not run a script in tab {tab_id}: {reason}")]
    Inject { tab_id: i32, reason: String },
    #[error("the page in tab {tab_id} did not answer within {limit_ms} ms")]
    Slow { tab_id: i32, limit_ms: i32 },
    #[error("the page's answer in tab {tab_id} could not be read")]
    Unreadable { tab_id: i32 },
}

/// Runs `func(args…)` in the top frame of `tab_id`, in the page's world, and reads its
/// (JSON-able) result.
async fn run_in_page(
    tab_id: i32,
    func: &js_sys::Function,
    args: &Array,
    limit_ms: i32,
) -> Result<Value, PageToolsError> {
    let inject = |e: JsValue| PageToolsError::Inject {
        tab_id,
        reason: tandem_chrome::js_text(e),
    };
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab_id.into());
    let injection = Object::new();
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let _ = Reflect::set(&injection, &"world".into(), &"MAIN".into());
    let _ = Reflect::set(&injection, &"func".into(), func);
    let _ = Reflect::set(&injection, &"args".into(), args);
    // A page still loading is scripted as it is: waiting for it would hold up the answer.
    let _ = Reflect::set(&injection, &"injectImmediately".into(), &JsValue::TRUE);
    let running = execute_script(&injection).map_err(inject)?;
    // A page that never answers (a busy script, a tool that hangs) gives up after `limit_ms`.
    let timer = Promise::new(&mut |_, reject| {
        crate::chrome::set_timeout(&reject, limit_ms);
    });
    let results = JsFuture::from(Promise::race(&Array::of2(&running, &timer)))
        .await
        .map_err(|e| match e.is_undefined() {
            true => PageToolsError::Slow { tab_id, limit_ms },
            false => inject(e),
        })?;
    let result = Reflect::get(&results, &0.into())
        .and_then(|first| Reflect::get(&first, &"result".into()))
        .map_err(|_| PageToolsError::Unreadable { tab_id })?;
    let text = JSON::stringify(&result)
        .ok()
        .and_then(|t| t.as_string())
        .ok_or(PageToolsError::Unreadable { tab_id })?;
    tandem_core::json::from_str(&text).map_err(|_| PageToolsError::Unreadable { tab_id })
}

/// The tools the page in `tab_id` offers now. An error: the tab is not a web page Tandem
/// may script (chrome:// pages, the Web Store, a closed tab), so it offers nothing.
pub async fn list(tab_id: i32) -> Result<PageListing, PageToolsError> {
    let value = run_in_page(tab_id, &page_tools_lister(), &Array::new(), LIST_LIMIT_MS).await?;
    Ok(read_listing(&value))
}

/// Runs the page's tool `name` with `params` (already checked against its schema) in
/// `tab_id`, if the tab still shows `host`. Never fails: the page's answer `{ok, result |
/// error}` (what went wrong is its error, for the model), read by
/// `tandem_core::tools::page::read_result`.
pub async fn call(tab_id: i32, host: &str, name: &str, params: &Value) -> Value {
    let args = Array::of3(
        &host.into(),
        &name.into(),
        &JsValue::from_str(&params.to_string()),
    );
    run_in_page(tab_id, &page_tool_runner(), &args, CALL_LIMIT_MS)
        .await
        .unwrap_or_else(|e| tandem_core::json!({"ok": false, "error": e.to_string()}))
}

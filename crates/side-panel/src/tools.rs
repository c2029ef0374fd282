//! Tools from other extensions, as the user sees them: the prompt when a provider first asks
//! to give Tandem tools (Allow / Deny), Settings → Tools (each provider, each tool's Allow /
//! Ask / Deny, Remove), and a card in the answer for every call the model makes (with
//! Approve / Deny when the tool is set to Ask). The registry lives in `chrome.storage.local`,
//! written by the worker; this module renders it and sends the user's choices to the worker.

use tandem_core::mcp::McpEndpoint;
use tandem_core::protocol::{PanelToWorker, ToolsCommand};
use tandem_core::tools::page::{self, PageListing};
use tandem_core::tools::prompt;
use tandem_core::tools::{Decision, Policy, Registry, STORAGE_KEY};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlSelectElement};

use crate::chrome;
use crate::dom::{self, DomError};
use crate::i18n::say;
use tandem_chrome::i18n::plain;

fn text(t: impl Into<String>) -> tandem_core::i18n::Arg {
    tandem_core::i18n::text(t)
}

pub fn wire() -> Result<(), DomError> {
    spawn_local(show());
    chrome::on_local_change(STORAGE_KEY, || spawn_local(show()));
    wire_rows()?;
    wire_mcp()?;
    wire_webmcp();
    Ok(())
}

thread_local! {
    /// The request id of the last Test / Add this panel sent: only its result is shown.
    static LAST_MCP: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    /// The number of the latest look-up of the current page's tools (WebMCP).
    static WEBMCP_LOOKUP: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Settings → Tools → Add MCP server: the form, Test and Add. Host access to the server is
/// asked for inside the click (Chrome only asks during a user gesture); the token goes to the
/// worker and the field is emptied once the server is added.
fn wire_mcp() -> Result<(), DomError> {
    let open: HtmlButtonElement = dom::by_id("mcp-open")?;
    let form: HtmlElement = dom::by_id("mcp-form")?;
    let toggle = open.clone();
    dom::on("mcp-open", "click", move |_: web_sys::Event| {
        let show = form.hidden();
        form.set_hidden(!show);
        dom::set_attr(
            &toggle,
            "aria-expanded",
            if show { "true" } else { "false" },
        );
    })?;
    for (button, add, sign_in) in [
        ("mcp-test", false, false),
        ("mcp-add", true, false),
        ("mcp-signin", true, true),
    ] {
        dom::on(button, "click", move |_: web_sys::Event| {
            mcp_submit(add, sign_in)
        })?;
    }
    // A new URL may be a server that takes a token: the token field comes back.
    dom::on("mcp-url", "input", |_: web_sys::Event| {
        show_sign_in(false);
        show_client_id(false);
    })?;
    chrome::on_local_change(
        tandem_core::mcp::TEST_KEY,
        || spawn_local(show_mcp_result()),
    );
    Ok(())
}

fn field(id: &'static str) -> Option<web_sys::HtmlInputElement> {
    dom::by_id::<web_sys::HtmlInputElement>(id).ok()
}

fn value_of(id: &'static str) -> String {
    field(id).map(|f| f.value()).unwrap_or_default()
}

/// The Client ID field, for a server that does not let Tandem register itself; its label
/// names the server, as typed in the form.
fn show_client_id(shown: bool) {
    let server = [value_of("mcp-name"), value_of("mcp-url")]
        .into_iter()
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_default();
    if let Ok(label) = dom::by_id::<HtmlElement>("mcp-client-id-label") {
        label.set_text_content(Some(&say("toolsClientIdFor", vec![text(server)])));
        label.set_hidden(!shown);
    }
    if let Some(f) = field("mcp-client-id") {
        f.set_hidden(!shown);
        if !shown {
            f.set_value("");
        }
    }
}

fn mcp_status(text: &str) {
    if let Ok(p) = dom::by_id::<HtmlElement>("mcp-status") {
        p.set_text_content(Some(text));
    }
}

/// The "More headers" box: one `Name: value` a line (a secret, like the token).
fn headers_box() -> Option<web_sys::HtmlTextAreaElement> {
    dom::by_id::<web_sys::HtmlTextAreaElement>("mcp-headers").ok()
}

/// A server that signs people in (OAuth) gets Sign in instead of the token field.
/// `["identity"]`: what Chrome's sign-in window (`chrome.identity.launchWebAuthFlow`) needs.
fn sign_in_permission() -> JsValue {
    js_sys::Array::of1(&"identity".into()).into()
}

fn show_sign_in(sign_in: bool) {
    if let Ok(b) = dom::by_id::<HtmlElement>("mcp-signin") {
        b.set_hidden(!sign_in);
    }
    for id in ["mcp-token-label", "mcp-token"] {
        if let Ok(e) = dom::by_id::<HtmlElement>(id) {
            e.set_hidden(sign_in);
        }
    }
}

fn mcp_submit(add: bool, sign_in: bool) {
    let value = |id| field(id).map(|f| f.value()).unwrap_or_default();
    let (name, url, token) = (value("mcp-name"), value("mcp-url"), value("mcp-token"));
    let headers = headers_box().map(|b| b.value()).unwrap_or_default();
    // Checked here too, so a wrong line is named before anything is sent.
    if let Err(e) = tandem_core::mcp::parse_headers(&headers) {
        return mcp_status(&e);
    }
    let url = match tandem_core::mcp::check_url(&url) {
        Ok(u) => u,
        Err(e) => return mcp_status(&e),
    };
    let Some(origin) = web_sys::Url::new(&url)
        .ok()
        .map(|u| format!("{}//{}/*", u.protocol(), u.hostname()))
    else {
        return mcp_status("The URL could not be read.");
    };
    // Asked now, inside the click: Chrome refuses the question outside a user gesture. A
    // sign-in also needs `identity` (an optional permission) for Chrome's sign-in window;
    // Chrome grants it without a question of its own.
    let wanted = dom::items("origins", &js_sys::Array::of1(&origin.clone().into()));
    if sign_in {
        let _ = js_sys::Reflect::set(&wanted, &"permissions".into(), &sign_in_permission());
    }
    let asked = chrome::permissions_request(&wanted).ok();
    let request_id = format!("mcp-{}", js_sys::Date::now() as u64);
    LAST_MCP.with(|l| *l.borrow_mut() = request_id.clone());
    mcp_status(match (add, sign_in) {
        (_, true) => "Signing in… (a sign-in window opens)",
        (true, false) => "Adding…",
        (false, false) => "Testing…",
    });
    if let Ok(list) = dom::by_id::<HtmlElement>("mcp-test-tools") {
        list.set_text_content(None);
        list.set_hidden(true);
    }
    spawn_local(async move {
        let granted = match asked {
            Some(p) => wasm_bindgen_futures::JsFuture::from(p)
                .await
                .map(|v| v.is_truthy())
                .unwrap_or(false),
            None => false,
        };
        if !granted && sign_in {
            return mcp_status(&format!(
                "Chrome did not allow Tandem to reach {origin} and open its sign-in window, so Tandem cannot sign in to this server."
            ));
        }
        if !granted {
            return mcp_status(&format!(
                "Chrome did not allow Tandem to reach {origin}, so Tandem cannot talk to this server."
            ));
        }
        let server = McpEndpoint {
            url,
            token: if sign_in { String::new() } else { token },
            headers,
            sign_in,
            client_id: if sign_in {
                value_of("mcp-client-id")
            } else {
                String::new()
            },
        };
        send(if add {
            ToolsCommand::AddMcp {
                request_id,
                name,
                server,
            }
        } else {
            ToolsCommand::TestMcp { request_id, server }
        });
    });
}

/// What the worker found for the last Test / Add: the sentence, and the tools as a list.
async fn show_mcp_result() {
    let Ok(Some(json)) = chrome::local_json(tandem_core::mcp::TEST_KEY).await else {
        return;
    };
    let Ok(v) = tandem_core::json::from_str::<serde_json::Value>(&json) else {
        return;
    };
    let id = v.get("requestId").and_then(|i| i.as_str()).unwrap_or("");
    if LAST_MCP.with(|l| *l.borrow() != id) {
        return;
    }
    mcp_status(v.get("message").and_then(|m| m.as_str()).unwrap_or(""));
    if v.get("signIn").and_then(|s| s.as_bool()) == Some(true) {
        show_sign_in(true);
    }
    if v.get("clientId").and_then(|s| s.as_bool()) == Some(true) {
        show_client_id(true);
    }
    let tools: Vec<&str> = v
        .get("tools")
        .and_then(|t| t.as_array())
        .map(|t| t.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    if let Ok(list) = dom::by_id::<HtmlElement>("mcp-test-tools") {
        list.set_text_content(None);
        for t in &tools {
            if let Ok(li) = dom::create("li", "") {
                li.set_text_content(Some(t));
                let _ = list.append_child(&li);
            }
        }
        list.set_hidden(tools.is_empty());
    }
    // Added: the form is emptied, the token first.
    let added = v.get("ok").and_then(|o| o.as_bool()) == Some(true)
        && v.get("message")
            .and_then(|m| m.as_str())
            .is_some_and(|m| m.starts_with("Added"));
    if added {
        show_sign_in(false);
        show_client_id(false);
        for id in ["mcp-token", "mcp-name", "mcp-url"] {
            if let Some(f) = field(id) {
                f.set_value("");
            }
        }
        if let Some(b) = headers_box() {
            b.set_value("");
        }
    }
}

// What the active tab's page offers (WebMCP), looked up from the panel itself: Settings shows
// it before any chat turn. The page-side function runs in the page's MAIN world (where
// `document.modelContext` lives) and returns only plain JSON-able values; it is defined in a
// module (an extension file) because the CSP forbids building one from a string. The worker's
// copy (`crates/background/src/page_tools.rs`) is the one chat turns use.
#[wasm_bindgen(inline_js = r"
function lister() {
    const host = location.hostname;
    const context = document.modelContext;
    if (!context || typeof context.getTools !== 'function') return { supported: false, host, tools: [] };
    return Promise.resolve(context.getTools()).then((listed) => ({
        supported: true,
        host,
        tools: (Array.isArray(listed) ? listed : [])
            .filter((t) => t && (!t.origin || t.origin === location.origin))
            .map((t) => {
                let schema = t.inputSchema;
                try { schema = typeof schema === 'string' ? schema : JSON.stringify(schema ?? { type: 'object' }); }
                catch (e) { schema = 'unreadable'; }
                return { name: String(t.name || ''), description: String(t.description || ''), inputSchema: schema };
            }),
    }), () => ({ supported: true, host, tools: [] }));
}

export async function active_page_tools() {
    try {
        const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
        if (!tab || typeof tab.id !== 'number') return null;
        const [first] = await chrome.scripting.executeScript({
            target: { tabId: tab.id }, world: 'MAIN', injectImmediately: true, func: lister,
        });
        return first && first.result ? JSON.stringify(first.result) : null;
    } catch (e) {
        // Not a page Tandem may script (chrome://, the Web Store, this panel as a tab).
        return null;
    }
}
")]
extern "C" {
    async fn active_page_tools() -> JsValue;
}

/// Settings → Tools: what the current tab's page offers as tools (WebMCP), or that this
/// browser offers none. Looked up again when Settings opens and when the tab changes.
fn wire_webmcp() {
    spawn_local(show_webmcp());
    let _ = dom::on("settings-toggle", "click", |_: web_sys::Event| {
        spawn_local(show_webmcp())
    });
    let again = Closure::<dyn FnMut()>::new(|| spawn_local(show_webmcp())).into_js_value();
    for event in ["onActivated", "onUpdated"] {
        let target = js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
            .and_then(|c| js_sys::Reflect::get(&c, &"tabs".into()))
            .and_then(|t| js_sys::Reflect::get(&t, &event.into()))
            .ok()
            .filter(|e| e.is_object());
        let add = target
            .as_ref()
            .and_then(|t| js_sys::Reflect::get(t, &"addListener".into()).ok())
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        if let (Some(target), Some(add)) = (target, add) {
            let _ = add.call1(&target, &again);
        }
    }
}

async fn show_webmcp() {
    // Look-ups overlap (a tab's updates come in bursts): only the latest one writes.
    let mine = WEBMCP_LOOKUP.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    // Whether the browser offers page tools at all, from this panel's own document (a
    // secure context like any https page).
    let global = js_sys::global();
    let has = |object: &str| {
        js_sys::Reflect::get(&global, &object.into())
            .ok()
            .filter(|o| o.is_object())
            .and_then(|o| js_sys::Reflect::has(&o, &"modelContext".into()).ok())
            .unwrap_or(false)
    };
    let browser_has = has("navigator") || has("document");
    let listing = active_page_tools()
        .await
        .as_string()
        .and_then(|t| tandem_core::json::from_str::<serde_json::Value>(&t).ok())
        .map(|v| page::read_listing(&v))
        .map(|mut l| {
            // An http page has no modelContext even where the browser offers it: the page
            // offers nothing, the browser is not to blame.
            l.supported |= browser_has;
            l
        });
    // No web page to look into.
    let listing = listing.or_else(|| (!browser_has).then(PageListing::default));
    if WEBMCP_LOOKUP.with(|n| n.get()) != mine {
        return;
    }
    if let Ok(p) = dom::by_id::<HtmlElement>("webmcp-status") {
        p.set_text_content(Some(&tandem_chrome::i18n::plain(&page::settings_line(
            listing.as_ref(),
        ))));
    }
}

fn send(command: ToolsCommand) {
    if let Err(e) = crate::port::post(&PanelToWorker::Tools { command }) {
        crate::alert::show_error(&format!(
            "Tandem's background worker is not reachable ({e})."
        ));
    }
}

async fn read() -> Result<Registry, String> {
    let Some(json) = chrome::local_json(STORAGE_KEY).await? else {
        return Ok(Registry::default());
    };
    let value: serde_json::Value = tandem_core::json::from_str(&json).map_err(|e| e.to_string())?;
    Ok(Registry::from_stored(&value))
}

async fn show() {
    let registry = match read().await {
        Ok(r) => r,
        Err(e) => {
            hint(&say("toolsNotRead", vec![text(e.to_string())]));
            return;
        }
    };
    if let Err(e) = show_approval(&registry).and_then(|()| show_settings(&registry)) {
        crate::alert::show_error(&e.to_string());
    }
}

/// How a provider is named to the user: its own name (which any extension could claim) and
/// its id (which no other extension can have).
fn who(name: &str, id: &str) -> String {
    if name.is_empty() || name == id {
        say("toolsExtension", vec![text(id)])
    } else {
        say("toolsNamedExtension", vec![text(name), text(id)])
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
    let text = plain(&prompt::approval_question(
        &who(provider.name(), &id),
        &tools,
    ));
    dom::by_id::<HtmlElement>("tool-approval-text")?.set_text_content(Some(&text));
    // What could mislead: a tool that destroys, a name another extension already uses. And
    // what Chrome says of where the extension came from, where Tandem may ask.
    let notes = tandem_chrome::i18n::plain_all(&prompt::approval_notes(registry, provider));
    let line: HtmlElement = dom::by_id("tool-approval-notes")?;
    line.set_text_content(Some(&notes));
    line.set_hidden(notes.is_empty());
    let lookalike = !prompt::namesakes(registry, provider).is_empty();
    show_icon(None);
    spawn_local(install_note(id.clone(), lookalike));
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

#[wasm_bindgen(inline_js = r"
export async function extension_info(id) {
    // chrome.management is there only when the user granted Tandem that permission: null
    // without it. Otherwise where Chrome says it came from and its largest icon's URL.
    try {
        if (!globalThis.chrome || !chrome.management || typeof chrome.management.get !== 'function') return null;
        const info = await chrome.management.get(id);
        if (!info) return null;
        const icons = Array.isArray(info.icons) ? info.icons.filter((i) => i && typeof i.url === 'string') : [];
        icons.sort((a, b) => (b.size || 0) - (a.size || 0));
        return {
            installType: typeof info.installType === 'string' ? info.installType : '',
            icon: icons.length ? icons[0].url : '',
        };
    } catch (e) {
        return null;
    }
}
")]
extern "C" {
    async fn extension_info(id: &str) -> JsValue;
}

/// Adds what Chrome reports about the waiting extension to the approval's notes, when Tandem
/// may read it: where it came from (Web Store, unpacked…) and, beside a look-alike's warning,
/// its icon. When Chrome does not let Tandem read it, a look-alike's warning says so.
async fn install_note(id: String, lookalike: bool) {
    let info = extension_info(&id).await;
    let field = |key: &str| {
        js_sys::Reflect::get(&info, &key.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let note = if info.is_object() {
        if lookalike {
            show_icon(Some(&field("icon")));
        }
        prompt::install_note(&field("installType"))
    } else if lookalike {
        Some(prompt::no_management_note())
    } else {
        None
    };
    let Some(note) = note.map(|n| plain(&n)) else {
        return;
    };
    let Ok(line) = dom::by_id::<HtmlElement>("tool-approval-notes") else {
        return;
    };
    let text = line.text_content().unwrap_or_default();
    if !text.contains(&note) {
        line.set_text_content(Some(format!("{text} {note}").trim()));
        line.set_hidden(false);
    }
}

/// The icon of the extension asking, beside the look-alike warning (`None` or a URL that is
/// not Chrome's own icon address: no icon). Only `chrome://extension-icon/` is shown: it is
/// Chrome's picture of the installed extension, which the extension cannot fake.
fn show_icon(url: Option<&str>) {
    let Ok(group) = dom::by_id::<HtmlElement>("tool-approval") else {
        return;
    };
    if let Ok(old) = dom::by_id::<HtmlElement>("tool-approval-icon") {
        old.remove();
    }
    let Some(url) = url.filter(|u| u.starts_with("chrome://extension-icon/")) else {
        return;
    };
    let Ok(img) = dom::create("img", "provider-icon") else {
        return;
    };
    img.set_id("tool-approval-icon");
    dom::set_attr(&img, "src", url);
    dom::set_attr(&img, "alt", &plain(&prompt::icon_alt()));
    dom::set_attr(&img, "width", "32");
    dom::set_attr(&img, "height", "32");
    if let Ok(notes) = dom::by_id::<HtmlElement>("tool-approval-notes") {
        let _ = group.insert_before(&img, Some(&notes));
    }
}

/// What a button of a provider's row does (its `data-action`).
const TURN_ON: &str = "turn-on";
const TURN_OFF: &str = "turn-off";
const SIGN_IN: &str = "sign-in";
const SIGN_OUT: &str = "sign-out";
const ALLOW: &str = "allow";
const DENY: &str = "deny";
const REMOVE: &str = "remove";

/// The controls of Settings → Tools' rows: one listener for the buttons and one for the
/// policy menus, on the list, installed once; the list is rebuilt at every change of the
/// registry. A row names its provider (`data-provider`), a menu its tool (`data-tool`), a
/// button what it does (`data-action`).
fn wire_rows() -> Result<(), DomError> {
    dom::on_each(
        "tool-providers",
        "button[data-action]",
        "click",
        |button, _: web_sys::Event| {
            let (Some(provider_id), Some(action)) =
                (provider_of(&button), button.get_attribute("data-action"))
            else {
                return;
            };
            if action == SIGN_IN {
                // `identity`, asked for inside the click as Chrome wants; without it the
                // worker says that Chrome's sign-in window is not allowed.
                let asked =
                    chrome::permissions_request(&dom::items("permissions", &sign_in_permission()))
                        .ok();
                spawn_local(async move {
                    if let Some(p) = asked {
                        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
                    }
                    send(ToolsCommand::SignInMcp { provider_id });
                });
                return;
            }
            send(match action.as_str() {
                TURN_ON | TURN_OFF => ToolsCommand::SetMcpEnabled {
                    provider_id,
                    enabled: action == TURN_ON,
                },
                SIGN_IN => ToolsCommand::SignInMcp { provider_id },
                SIGN_OUT => ToolsCommand::SignOutMcp { provider_id },
                ALLOW | DENY => ToolsCommand::Decide {
                    provider_id,
                    allow: action == ALLOW,
                },
                REMOVE => ToolsCommand::Remove { provider_id },
                _ => return,
            })
        },
    )?;
    dom::on_each(
        "tool-providers",
        "select[data-tool]",
        "change",
        |select, _: web_sys::Event| {
            let (Some(provider_id), Some(tool)) =
                (provider_of(&select), select.get_attribute("data-tool"))
            else {
                return;
            };
            let policy = match select.unchecked_ref::<HtmlSelectElement>().value().as_str() {
                "allow" => Policy::Allow,
                "deny" => Policy::Deny,
                _ => Policy::Ask,
            };
            send(ToolsCommand::SetPolicy {
                provider_id,
                tool,
                policy,
            });
        },
    )
}

/// The provider whose row `control` is in.
fn provider_of(control: &web_sys::Element) -> Option<String> {
    control
        .closest("li[data-provider]")
        .ok()
        .flatten()?
        .get_attribute("data-provider")
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
        // An extension's controls carry its short id too: two extensions may choose the
        // same name, and each row's buttons must still be told apart.
        let name = if provider.mcp().is_some() {
            provider.name().to_string()
        } else {
            prompt::row_name(provider)
        };
        let item = dom::create("li", "tool-provider")?;
        dom::set_attr(&item, "data-provider", &id);
        let title = dom::create("p", "label")?;
        let state = match provider.decision() {
            Decision::Denied => format!(" — {}", say("toolsDenied", vec![])),
            _ => String::new(),
        };
        match provider.mcp() {
            Some(server) => {
                // The address, the token's last letters, the headers' names (only: the
                // values are secrets), one after the other.
                let mut about = vec![server.url.clone()];
                if let Some(h) = server.token_hint.as_deref() {
                    about.push(say("mcpToken", vec![text(h)]));
                }
                if !server.header_names.is_empty() {
                    about.push(say(
                        "mcpHeaders",
                        vec![text(server.header_names.join(", "))],
                    ));
                }
                let off = if server.enabled {
                    String::new()
                } else {
                    format!(" — {}", say("toolsTurnedOff", vec![]))
                };
                let about = vec![text(provider.name()), text(about.join(", "))];
                title.set_text_content(Some(&format!("{}{off}", say("mcpRowTitle", about))));
            }
            None => title.set_text_content(Some(&format!("{}{state}", who(provider.name(), &id)))),
        }
        let _ = item.append_child(&title);
        if let Some(problem) = provider.mcp().and_then(|m| m.problem.as_deref()) {
            let p = dom::create("p", "hint error")?;
            dom::set_attr(
                &p,
                "aria-label",
                &say("toolsProblemWith", vec![text(&name)]),
            );
            p.set_text_content(Some(problem));
            let _ = item.append_child(&p);
        }
        if let Some(line) = prompt::empty_line(provider) {
            let p = dom::create("p", "hint")?;
            p.set_text_content(Some(&plain(&line)));
            let _ = item.append_child(&p);
        }
        if provider.decision() == Decision::Allowed {
            for tool in provider.tools() {
                let row = dom::create("div", "row tool-row")?;
                let label = dom::create("span", "tool-name")?;
                label.set_text_content(Some(&format!("{} — {}", tool.name, tool.label)));
                dom::set_attr(&label, "title", &tool.description);
                let select: HtmlSelectElement = dom::create("select", "")?.unchecked_into();
                dom::set_attr(
                    &select,
                    "aria-label",
                    &say("toolsPolicyOf", vec![text(&tool.name), text(&name)]),
                );
                for (value, key) in [("allow", "allow"), ("ask", "toolsAsk"), ("deny", "deny")] {
                    let option = dom::create("option", "")?;
                    dom::set_attr(&option, "value", value);
                    // `allow` and `deny` are the panel's static labels, `toolsAsk` core's.
                    option.set_text_content(Some(&tandem_chrome::i18n::label(key)));
                    let _ = select.append_child(&option);
                }
                select.set_value(match provider.policy(tool) {
                    Policy::Allow => "allow",
                    Policy::Ask => "ask",
                    Policy::Deny => "deny",
                });
                dom::set_attr(&select, "data-tool", &tool.name);
                let _ = row.append_child(&label);
                let _ = row.append_child(&select);
                let _ = item.append_child(&row);
            }
        }
        if let Some(server) = provider.mcp() {
            let enabled = server.enabled;
            let turn = dom::create("button", "")?;
            dom::set_attr(&turn, "type", "button");
            let (what, named) = if enabled {
                ("toolsTurnOff", "toolsTurnOffNamed")
            } else {
                ("toolsTurnOn", "toolsTurnOnNamed")
            };
            dom::set_attr(&turn, "aria-label", &say(named, vec![text(&name)]));
            turn.set_text_content(Some(&say(what, vec![])));
            dom::set_attr(
                &turn,
                "data-action",
                if enabled { TURN_OFF } else { TURN_ON },
            );
            let _ = item.append_child(&turn);
            // A server that signs people in: Sign out while signed in; Sign in (again) when
            // signed out or when the sign-in could not be renewed.
            // (the button's word, its accessible name with the server's, what it does)
            let mut actions: Vec<(&str, &str, &str)> = Vec::new();
            if server.needs_sign_in() {
                actions.push(if server.signed_in {
                    ("toolsSignInAgain", "toolsSignInAgainTo", SIGN_IN)
                } else {
                    ("toolsSignIn", "toolsSignInTo", SIGN_IN)
                });
            }
            if server.signs_in && server.signed_in {
                actions.push(("toolsSignOut", "toolsSignOutOf", SIGN_OUT));
            }
            for (what, named, action) in actions {
                let button = dom::create("button", "")?;
                dom::set_attr(&button, "type", "button");
                dom::set_attr(&button, "aria-label", &say(named, vec![text(&name)]));
                button.set_text_content(Some(&say(what, vec![])));
                dom::set_attr(&button, "data-action", action);
                let _ = item.append_child(&button);
            }
        }
        if provider.mcp().is_none() {
            // Deny and Allow keep the person's choice; Remove forgets it (the extension
            // asks again when it next registers).
            let allow = provider.decision() != Decision::Allowed;
            let decide = dom::create("button", "")?;
            dom::set_attr(&decide, "type", "button");
            let (what, named) = if allow {
                ("allow", "toolsAllowProvider")
            } else {
                ("deny", "toolsDenyProvider")
            };
            dom::set_attr(&decide, "aria-label", &say(named, vec![text(&name)]));
            decide.set_text_content(Some(&tandem_chrome::i18n::label(what)));
            dom::set_attr(&decide, "data-action", if allow { ALLOW } else { DENY });
            let _ = item.append_child(&decide);
        }
        let remove = dom::create("button", "")?;
        dom::set_attr(&remove, "type", "button");
        let (what, named) = if provider.mcp().is_some() {
            ("toolsRemoveServer", "toolsRemoveServerNamed")
        } else {
            ("toolsRemoveProvider", "toolsRemoveProviderNamed")
        };
        dom::set_attr(&remove, "aria-label", &say(named, vec![text(&name)]));
        remove.set_text_content(Some(&say(what, vec![])));
        dom::set_attr(&remove, "data-action", REMOVE);
        let _ = item.append_child(&remove);
        let _ = list.append_child(&item);
    }
    list.set_hidden(shown == 0);
    hint(&if shown == 0 {
        // The same words `sidepanel.html` starts with (a static label).
        tandem_chrome::i18n::label("noToolProvidersYetExtensionsThat")
    } else {
        String::new()
    });
    Ok(())
}

fn hint(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("tools-hint") {
        line.set_text_content(Some(text));
        line.set_hidden(text.is_empty());
    }
}

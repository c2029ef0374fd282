//! Tandem Tabs, the example tool provider: gives Tandem `tab.list`, `tab.open`, `tab.close`
//! and `tab.group`. `scripts/build` turns it into the unpacked extension `dist-tools/tabs/`
//! (`manifest.json`, `background.js`, `wasm/`).
//!
//! The checks (which URLs may be opened, which ids are tab ids, what a list looks like) are
//! plain functions tested natively; the handlers only call `chrome.tabs` around them.

use js_sys::{Promise, Reflect, JSON};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tandem_tool_provider::{Tool, ToolProvider, ToolResult};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

// Plain comments, not doc comments, on the types below: schemars turns doc comments into
// schema descriptions, and those are written for the model in `description` attributes.

#[derive(Deserialize, JsonSchema)]
struct OpenTab {
    #[schemars(
        description = "The address to open: an http or https URL (a bare host such as example.com means https)."
    )]
    url: String,
}

#[derive(Deserialize, JsonSchema)]
struct CloseTab {
    #[serde(rename = "tabId")]
    #[schemars(description = "The id of the tab to close, as tab.list gives it.")]
    tab_id: i64,
}

#[derive(Deserialize, JsonSchema)]
struct GroupTabs {
    #[serde(rename = "tabIds")]
    #[schemars(description = "The ids of the tabs to put in one group, as tab.list gives them.")]
    tab_ids: Vec<i64>,
    #[schemars(description = "The group's title.")]
    title: String,
}

#[wasm_bindgen(start)]
fn main() {
    provider().start();
}

fn provider() -> ToolProvider {
    ToolProvider::new(
        "Tandem Tabs",
        [
            Tool::new(
                "tab.list",
                "List tabs",
                "Lists the open tabs of every window: id, title and URL of each.",
            )
            .read_only()
            .closed_world(),
            Tool::new("tab.open", "Open a tab", "Opens a URL in a new tab.").params::<OpenTab>(),
            Tool::new("tab.close", "Close a tab", "Closes one tab.")
                .params::<CloseTab>()
                .destructive(),
            Tool::new(
                "tab.group",
                "Group tabs",
                "Puts tabs in one titled tab group.",
            )
            .params::<GroupTabs>(),
        ],
    )
    .handle("tab.list", |_: Value| list())
    .handle("tab.open", open)
    .handle("tab.close", close)
    .handle("tab.group", group)
}

async fn list() -> Result<ToolResult, String> {
    let tabs = call(tabs_query(&to_js(&json!({}))))
        .await?
        .unwrap_or(Value::Null);
    Ok(list_result(&tabs))
}

async fn open(p: OpenTab) -> Result<ToolResult, String> {
    let url = checked_url(&p.url)?;
    let tab = call(tabs_create(&to_js(&json!({ "url": url }))))
        .await?
        .unwrap_or(Value::Null);
    let id = tab.get("id").cloned().unwrap_or(Value::Null);
    Ok(
        ToolResult::text(format!("Opened {url} in a new tab (id {id})."))
            .with_details(json!({ "tabId": id, "url": url })),
    )
}

async fn close(p: CloseTab) -> Result<ToolResult, String> {
    let id = tab_id(p.tab_id)?;
    call(tabs_remove(id)).await?;
    Ok(ToolResult::text(format!("Closed tab {id}.")))
}

async fn group(p: GroupTabs) -> Result<ToolResult, String> {
    let (ids, title) = group_request(&p.tab_ids, &p.title)?;
    let group_id = call(tabs_group(&to_js(&json!({ "tabIds": ids }))))
        .await?
        .and_then(|g| g.as_i64())
        .ok_or("Chrome made no group")?;
    let group_id = i32::try_from(group_id).map_err(|_| "Chrome gave a group id out of range")?;
    call(tab_groups_update(
        group_id,
        &to_js(&json!({ "title": title })),
    ))
    .await?;
    Ok(
        ToolResult::text(format!("Grouped {} tab(s) as \"{title}\".", ids.len()))
            .with_details(json!({ "groupId": group_id, "tabIds": ids })),
    )
}

/// `url` as the URL to open: http and https only, since any other scheme (`javascript:`,
/// `file:`, `chrome:`, `data:`) would let a model do more than open a web page. A bare
/// host (`example.com`, `localhost:8080/x`) is taken as https, the way people write them.
pub fn checked_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.is_empty() {
        return Err("the URL is empty".into());
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{url:?} is not a URL (it has spaces)"));
    }
    let full = match scheme_of(url) {
        Some(scheme)
            if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") =>
        {
            url.to_owned()
        }
        Some(scheme) => {
            return Err(format!(
                "only http and https URLs can be opened, not {scheme}:"
            ))
        }
        None => format!("https://{}", url.trim_start_matches("//")),
    };
    // After "scheme://" there must be a host.
    let rest = full
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() {
        return Err(format!("{url:?} has no host"));
    }
    Ok(full)
}

/// The scheme of `url`, if it has one. `localhost:8080` has none: what follows its colon
/// is a port.
fn scheme_of(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once(':')?;
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let port = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let is_port = !port.is_empty() && port.chars().all(|c| c.is_ascii_digit());
    (is_scheme && !is_port).then_some(scheme)
}

/// A tab id from the model: Chrome's are non-negative 32-bit integers.
pub fn tab_id(id: i64) -> Result<i32, String> {
    i32::try_from(id)
        .ok()
        .filter(|id| *id >= 0)
        .ok_or_else(|| format!("{id} is not a tab id (tab.list gives them)"))
}

/// The tab ids and title of a `tab.group`, checked.
pub fn group_request(ids: &[i64], title: &str) -> Result<(Vec<i32>, String), String> {
    if ids.is_empty() {
        return Err("no tabs to group: tabIds is empty".into());
    }
    let ids = ids
        .iter()
        .map(|&id| tab_id(id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((ids, title.trim().to_owned()))
}

/// `chrome.tabs.query`'s answer as a result: a line per tab for the model, and the same as
/// data in `details`.
pub fn list_result(tabs: &Value) -> ToolResult {
    let tabs: Vec<Value> = tabs
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|tab| {
            // A tab still loading has only `pendingUrl`.
            let url = tab.get("url").or_else(|| tab.get("pendingUrl"));
            json!({
                "id": tab.get("id").cloned().unwrap_or(Value::Null),
                "title": tab.get("title").and_then(Value::as_str).unwrap_or_default(),
                "url": url.and_then(Value::as_str).unwrap_or_default(),
            })
        })
        .collect();
    let mut text = format!("{} open tab(s):", tabs.len());
    for tab in &tabs {
        text.push_str(&format!(
            "\n- id {}: {} — {}",
            tab["id"],
            tab["title"].as_str().unwrap_or_default(),
            tab["url"].as_str().unwrap_or_default()
        ));
    }
    ToolResult::text(text).with_details(Value::Array(tabs))
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = create)]
    fn tabs_create(properties: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = remove)]
    fn tabs_remove(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = group)]
    fn tabs_group(options: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabGroups"], js_name = update)]
    fn tab_groups_update(group_id: i32, properties: &JsValue) -> Result<Promise, JsValue>;
}

/// Awaits a `chrome.*` promise; Chrome's error message (such as "No tab with id: 5.")
/// becomes the tool's error.
async fn call(promise: Result<Promise, JsValue>) -> Result<Option<Value>, String> {
    let value = JsFuture::from(promise.map_err(|e| message(&e))?)
        .await
        .map_err(|e| message(&e))?;
    Ok(JSON::stringify(&value)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok()))
}

fn to_js(value: &Value) -> JsValue {
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

fn message(error: &JsValue) -> String {
    Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| "Chrome refused the call".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_open_and_bare_hosts_mean_https() {
        assert_eq!(
            checked_url("https://example.com/a?b#c"),
            Ok("https://example.com/a?b#c".into())
        );
        assert_eq!(
            checked_url(" HTTP://example.com "),
            Ok("HTTP://example.com".into())
        );
        assert_eq!(checked_url("example.com"), Ok("https://example.com".into()));
        assert_eq!(
            checked_url("localhost:8080/x"),
            Ok("https://localhost:8080/x".into())
        );
        assert_eq!(checked_url("//cdn.test/x"), Ok("https://cdn.test/x".into()));
    }

    #[test]
    fn other_schemes_and_non_urls_are_refused() {
        for url in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "file:///etc/passwd",
            "chrome://settings",
            "data:text/html,<b>x</b>",
            "chrome-extension://abc/page.html",
            "https://",
            "http:///path",
            "",
            "   ",
            "exa mple.com",
        ] {
            assert!(checked_url(url).is_err(), "{url}");
        }
        assert_eq!(
            checked_url("ftp://x.test"),
            Err("only http and https URLs can be opened, not ftp:".into())
        );
    }

    #[test]
    fn tab_ids_are_checked() {
        assert_eq!(tab_id(12), Ok(12));
        assert!(tab_id(-1).is_err());
        assert!(tab_id(i64::from(i32::MAX) + 1).is_err());
        assert_eq!(
            group_request(&[1, 2], " Work "),
            Ok((vec![1, 2], "Work".into()))
        );
        assert!(group_request(&[], "x").is_err());
        assert!(group_request(&[1, -2], "x").is_err());
    }

    #[test]
    fn lists_show_id_title_and_url() {
        let result = list_result(&json!([
            {"id": 1, "title": "Example", "url": "https://example.com/", "windowId": 9},
            {"id": 2, "pendingUrl": "https://loading.test/"},
        ]));
        assert_eq!(
            result.details,
            Some(json!([
                {"id": 1, "title": "Example", "url": "https://example.com/"},
                {"id": 2, "title": "", "url": "https://loading.test/"},
            ]))
        );
        let text = serde_json::to_value(&result.content).unwrap_or_default()[0]["text"].clone();
        assert_eq!(
            text,
            "2 open tab(s):\n- id 1: Example — https://example.com/\n- id 2:  — https://loading.test/"
        );
        assert_eq!(list_result(&Value::Null).details, Some(json!([])));
    }

    #[test]
    fn the_four_tools_are_described_and_handled() {
        let p = provider();
        assert!(p.problems().is_empty(), "{:?}", p.problems());
        let tools = serde_json::to_value(p.register_message()).unwrap_or_default()["tools"].clone();
        assert_eq!(
            tools[0]["annotations"],
            json!({"readOnlyHint": true, "openWorldHint": false})
        );
        assert_eq!(tools[1]["parameters"]["required"], json!(["url"]));
        assert_eq!(tools[2]["annotations"], json!({"destructiveHint": true}));
        assert_eq!(
            tools[2]["parameters"]["properties"]["tabId"]["type"],
            "integer"
        );
        assert_eq!(
            tools[3]["parameters"]["required"],
            json!(["tabIds", "title"])
        );
    }
}

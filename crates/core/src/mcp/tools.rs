//! An MCP server's tools as the registry's [`ToolDescriptor`]s, and its `tools/call` results
//! as the provider result shape ([`crate::tools::parse_tool_result`] reads) the outcome code
//! fences and caps like any provider's.

use crate::json;
use serde_json::{Map, Value};

use super::error::McpError;
use super::session::clip;
use crate::tools::image::{ToolImage, MAX_IMAGES_PER_RESULT};
use crate::tools::protocol::{MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS, MAX_TOOLS};
use crate::tools::ToolDescriptor;

/// One page of `tools/list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolsPage {
    pub tools: Vec<ToolDescriptor>,
    /// A sentence for each tool left out (its name or schema is not usable).
    pub skipped: Vec<String>,
    pub next_cursor: Option<String>,
}

/// Reads a `tools/list` result. A tool is checked exactly as an extension's is
/// ([`ToolDescriptor::from_value`]: name shape, schema size, depth and subset); one that
/// fails is left out with a sentence, the others are kept. Over-long titles and descriptions
/// are cut rather than refused: an MCP server's author did not write them for Tandem.
pub fn read_tools(result: &Value) -> Result<ToolsPage, McpError> {
    let Some(list) = result.get("tools").and_then(Value::as_array) else {
        return Err(McpError::NotMcp {
            what: "a tools/list answer without a list of tools".into(),
        });
    };
    let mut page = ToolsPage {
        tools: Vec::new(),
        skipped: Vec::new(),
        next_cursor: result
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_string),
    };
    for (i, t) in list.iter().enumerate() {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        let shown = if name.is_empty() {
            format!("tool {}", i + 1)
        } else {
            format!("tool {:?}", clip(name, 64))
        };
        crate::tools::keep_listed(&mut page.tools, &mut page.skipped, &shown, descriptor(t));
    }
    Ok(page)
}

/// Adds a page to the tools read so far, within the registry's limit of tools per provider.
/// Once the limit is reached, the cursor is dropped (no more pages are worth asking for) and
/// one sentence says where the list was cut.
pub fn add_page(all: &mut ToolsPage, page: ToolsPage) {
    all.skipped.extend(page.skipped);
    all.next_cursor = page.next_cursor;
    for t in page.tools {
        if all.tools.len() >= MAX_TOOLS {
            all.skipped.push(format!(
                "Tandem takes at most {MAX_TOOLS} tools from one server: {:?} and the tools after it are left out.",
                clip(&t.name, 64)
            ));
            all.next_cursor = None;
            break;
        }
        if !all.tools.iter().any(|k| k.name == t.name) {
            all.tools.push(t);
        }
    }
}

/// The longest tool name an MCP server may give (the 2025-11-25 specification's limit).
/// The model-facing name is shortened to what the models accept, keeping it unique.
pub const MAX_TOOL_NAME_CHARS: usize = 128;

fn descriptor(t: &Value) -> Result<ToolDescriptor, String> {
    let o = t.as_object().ok_or("it is not an object")?;
    let name = o.get("name").and_then(Value::as_str).unwrap_or("");
    let label = text(o.get("title"))
        .or_else(|| text(o.get("annotations").and_then(|a| a.get("title"))))
        .unwrap_or(name);
    let description = text(o.get("description")).unwrap_or("");
    let schema = o
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let mut v = Map::new();
    v.insert("name".into(), json!(name));
    v.insert("label".into(), json!(clip(label, MAX_LABEL_CHARS)));
    v.insert(
        "description".into(),
        json!(clip(description, MAX_DESCRIPTION_CHARS)),
    );
    v.insert("parameters".into(), strip_meta(schema));
    if let Some(a) = o.get("annotations") {
        v.insert("annotations".into(), a.clone());
    }
    if let Some(output) = o.get("outputSchema") {
        v.insert("output".into(), strip_meta(output.clone()));
    }
    ToolDescriptor::from_value_within(&Value::Object(v), MAX_TOOL_NAME_CHARS)
}

/// `$schema` (which schema generators add) says nothing about the arguments; dropped so the
/// schema the model sees is only what constrains them.
fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn strip_meta(mut schema: Value) -> Value {
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
    }
    schema
}

/// A `tools/call` result as a provider result (`{content, error?}`): text items kept, an
/// image checked ([`ToolImage::read`]: PNG, JPEG, GIF or WebP, clean base64 that is what it
/// claims, at most 2 MB, at most [`MAX_IMAGES_PER_RESULT`] per result) and kept as an image
/// item, or replaced by the sentence saying why it was left out; a `resource` holding text
/// or an image blob is that; a `resource_link` is named by its title and address (Tandem does
/// not fetch it); other items are named by type; `isError` an error whose text is the content.
/// `structuredContent` is checked against the tool's `outputSchema` when it declared one
/// (`output`): a result that does not fit is an error saying so; it is the text when there is
/// no content at all.
pub fn call_result(result: &Value, output: Option<&Value>) -> Value {
    let mut images = 0usize;
    let mut content: Vec<Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|i| content_item(i, &mut images)).collect())
        .unwrap_or_default();
    let structured = result.get("structuredContent").filter(|s| !s.is_null());
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    if content.is_empty() {
        if let Some(s) = structured {
            content.push(json!({"type": "text", "text": s.to_string()}));
        }
    }
    if is_error {
        let text: Vec<String> = content
            .iter()
            .map(|c| match c.get("text").and_then(Value::as_str) {
                Some(t) => t.to_string(),
                None => format!("[{} omitted]", c["type"].as_str().unwrap_or("content")),
            })
            .collect();
        let error = if text.is_empty() {
            "the tool failed without saying why".to_string()
        } else {
            text.join("\n")
        };
        return json!({"content": [], "error": error});
    }
    // The specification: a tool that declares an output schema must give structured
    // results that fit it, and clients should check them.
    if let Some(schema) = output {
        let problem = match structured {
            None => Some("it declared an output schema but gave no structured result".to_string()),
            Some(s) => crate::tools::schema::validate(schema, s)
                .err()
                .map(|invalid| format!("its structured result does not fit the output schema it declared: {invalid}")),
        };
        if let Some(problem) = problem {
            return json!({"content": content, "error": problem});
        }
    }
    json!({"content": content})
}

/// One content item; `images` counts the images kept so far.
fn content_item(item: &Value, images: &mut usize) -> Value {
    let field = |k: &str| item.get(k).and_then(Value::as_str);
    match field("type") {
        Some("text") => json!({"type": "text", "text": field("text").unwrap_or("")}),
        // A resource with text is text the tool meant to give; one with an image blob is an
        // image.
        Some("resource") => {
            let r = |k: &str| {
                item.pointer(&format!("/resource/{k}"))
                    .and_then(Value::as_str)
            };
            match (r("text"), r("blob"), r("mimeType")) {
                (Some(t), _, _) => json!({"type": "text", "text": t}),
                (None, Some(blob), Some(mime)) if mime.starts_with("image/") => {
                    image_item(mime, blob, images)
                }
                _ => json!({"type": "resource"}),
            }
        }
        Some("image") => image_item(
            field("mimeType").unwrap_or(""),
            field("data").unwrap_or(""),
            images,
        ),
        Some("resource_link") => {
            let name = field("title").or(field("name")).unwrap_or("a resource");
            let uri = field("uri").unwrap_or("");
            json!({"type": "text", "text": format!("[a link to {} at {}, not fetched]", clip(name, 100), clip(uri, 300))})
        }
        Some(kind) => json!({"type": kind}),
        None => json!({"type": "content"}),
    }
}

/// An image item checked, or the sentence the model reads in its place.
fn image_item(mime: &str, data: &str, images: &mut usize) -> Value {
    let left_out = |why: String| json!({"type": "text", "text": format!("[{why}]")});
    if *images >= MAX_IMAGES_PER_RESULT {
        return left_out(format!(
            "an image was left out: Tandem passes on at most {MAX_IMAGES_PER_RESULT} images from one result."
        ));
    }
    match ToolImage::read(mime, data) {
        Ok(image) => {
            *images += 1;
            json!({"type": "image", "mimeType": image.kind.mime(), "data": image.data})
        }
        Err(why) => left_out(why),
    }
}

/// The provider result for a call that failed before the tool answered. A JSON-RPC error is
/// the server's answer (its words, the tool's error); anything else is Tandem failing to
/// reach or read the server, which the worker tells the model as Tandem's own sentence
/// ([`TANDEM_FAILURE`]), with the server's words (an error body) apart.
pub fn rpc_error_result(e: &McpError) -> Value {
    if e.is_servers_answer() {
        return json!({"content": [], "error": e.to_string()});
    }
    let (sentence, said) = e.for_model();
    json!({"content": [], TANDEM_FAILURE: {"sentence": sentence, "said": said}})
}

/// The key of a provider result that is Tandem's failure, not the tool's answer: only
/// [`rpc_error_result`] writes it (a server's result is rebuilt by [`call_result`], which
/// never does).
pub const TANDEM_FAILURE: &str = "tandemFailure";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::image::tests::PNG;
    use crate::tools::{parse_tool_result, Policy};

    #[test]
    fn tools_become_descriptors_checked_like_an_extensions() {
        let result = json!({
            "tools": [
                {"name": "echo", "description": "Echoes.", "inputSchema": {
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"], "additionalProperties": false},
                 "annotations": {"readOnlyHint": true, "openWorldHint": false}},
                {"name": "rm", "title": "Remove a file", "inputSchema": {"type": "object"},
                 "annotations": {"readOnlyHint": true, "destructiveHint": true}},
                {"name": "no schema"},
                {"name": "bad", "inputSchema": {"type": "string"}},
                {"name": "echo", "inputSchema": {"type": "object"}},
                {"name": "plain", "description": "x".repeat(3000)}
            ],
            "nextCursor": "p2"
        });
        let page = read_tools(&result).unwrap();
        let names: Vec<&str> = page.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "rm", "plain"]);
        assert_eq!(page.next_cursor.as_deref(), Some("p2"));
        assert_eq!(page.skipped.len(), 3, "{:?}", page.skipped);
        assert!(
            page.skipped[0].starts_with("tool \"no schema\" is left out: a name may only hold"),
            "{}",
            page.skipped[0]
        );
        assert!(
            page.skipped[1].contains("\"type\": \"object\""),
            "{}",
            page.skipped[1]
        );
        assert_eq!(
            page.skipped[2],
            "tool \"echo\" is listed twice; the first is kept."
        );
        let echo = &page.tools[0];
        assert_eq!(echo.label, "echo");
        assert!(echo.parameters.get("$schema").is_none());
        assert_eq!(Policy::default_for(echo), Policy::Allow);
        assert_eq!(page.tools[1].label, "Remove a file");
        assert_eq!(Policy::default_for(&page.tools[1]), Policy::Ask);
        assert_eq!(Policy::default_for(&page.tools[2]), Policy::Ask);
        // Read-only, but with no word about the open world: it may fetch any URL.
        let fetch = read_tools(&json!({"tools": [
            {"name": "fetch_url", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": true}},
            {"name": "fetch_page", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": true, "openWorldHint": true}}
        ]}))
        .unwrap();
        assert!(fetch.tools.iter().all(|t| t.open_world()));
        assert!(fetch
            .tools
            .iter()
            .all(|t| Policy::default_for(t) == Policy::Ask));
        assert_eq!(page.tools[2].description.chars().count(), 2000);
        assert!(read_tools(&json!({"resources": []})).is_err());
    }

    #[test]
    fn pages_add_up_within_the_limit() {
        let mut all = read_tools(&json!({"tools": [{"name": "a"}], "nextCursor": "x"})).unwrap();
        add_page(
            &mut all,
            read_tools(&json!({"tools": [{"name": "a"}, {"name": "b"}]})).unwrap(),
        );
        let names: Vec<&str> = all.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(all.next_cursor, None);
        let many: Vec<Value> = (0..70).map(|i| json!({"name": format!("t{i}")})).collect();
        add_page(
            &mut all,
            read_tools(&json!({"tools": many, "nextCursor": "more"})).unwrap(),
        );
        assert_eq!(all.tools.len(), MAX_TOOLS);
        assert_eq!(
            all.skipped.last().unwrap(),
            "Tandem takes at most 64 tools from one server: \"t62\" and the tools after it are left out."
        );
        assert_eq!(all.next_cursor, None, "no further page is asked for");
    }

    #[test]
    fn call_results_keep_text_name_the_rest_and_carry_errors() {
        let r = call_result(
            &json!({"content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
                {"type": "resource_link", "uri": "file:///b.png", "name": "b.png"}
            ]}),
            None,
        );
        let read = parse_tool_result(&r);
        assert_eq!(
            read.text(),
            "hello\n[image: PNG, 70 bytes]\ninside\n[a link to b.png at file:///b.png, not fetched]"
        );
        assert_eq!(read.images(), vec![format!("data:image/png;base64,{PNG}")]);
        assert_eq!(read.error, None);

        let failed = parse_tool_result(&call_result(
            &json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]}),
            None,
        ));
        assert_eq!(failed.error.as_deref(), Some("no such file"));
        assert_eq!(failed.text(), "");
        let silent = parse_tool_result(&call_result(&json!({"isError": true}), None));
        assert_eq!(
            silent.error.as_deref(),
            Some("the tool failed without saying why")
        );
        let structured =
            parse_tool_result(&call_result(&json!({"structuredContent": {"n": 3}}), None));
        assert_eq!(structured.text(), r#"{"n":3}"#);
        // Tandem's own failure is marked as such, the server's words kept apart.
        let gone = rpc_error_result(&McpError::NeedsToken);
        assert!(gone[TANDEM_FAILURE]["sentence"]
            .as_str()
            .unwrap()
            .contains("401"));
        assert!(gone.get("error").is_none());
        let down = rpc_error_result(&McpError::Http {
            status: 500,
            detail: ": «the database is down»".into(),
            said: Some("the database is down".into()),
        });
        assert_eq!(
            down[TANDEM_FAILURE],
            json!({"sentence": "The MCP server answered HTTP 500.", "said": "the database is down"})
        );
        // A JSON-RPC error is the server's answer: the tool's error.
        let refused = parse_tool_result(&rpc_error_result(&McpError::Rpc {
            method: "tools/call".into(),
            code: -32602,
            message: "Unknown tool".into(),
        }));
        assert!(refused.error.unwrap().contains("Unknown tool"));
    }

    #[test]
    fn structured_results_are_checked_against_the_output_schema() {
        let page = read_tools(&json!({"tools": [{"name": "add", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}}]}))
        .unwrap();
        let output = page.tools[0]
            .output
            .clone()
            .expect("the output schema is kept");
        let fits = parse_tool_result(&call_result(
            &json!({"content": [{"type": "text", "text": "{\"sum\":5}"}], "structuredContent": {"sum": 5}}),
            Some(&output),
        ));
        assert_eq!((fits.text().as_str(), fits.error), ("{\"sum\":5}", None));
        let wrong = parse_tool_result(&call_result(
            &json!({"structuredContent": {"sum": "five"}}),
            Some(&output),
        ));
        let e = wrong.error.unwrap();
        assert!(
            e.starts_with("its structured result does not fit the output schema"),
            "{e}"
        );
        assert!(e.contains("sum"), "{e}");
        let none = parse_tool_result(&call_result(
            &json!({"content": [{"type": "text", "text": "5"}]}),
            Some(&output),
        ));
        assert!(none.error.unwrap().contains("gave no structured result"));
    }

    #[test]
    fn images_are_checked_capped_and_told_apart_from_their_refusals() {
        let wrong = [
            json!({"type": "image", "data": "not base64!", "mimeType": "image/png"}),
            json!({"type": "image", "data": "PHN2Zz48L3N2Zz4=", "mimeType": "image/svg+xml"}),
            json!({"type": "image", "data": PNG, "mimeType": "image/jpeg"}),
            json!({"type": "image", "data": "A".repeat(5 * 1024 * 1024), "mimeType": "image/png"}),
        ];
        let read = parse_tool_result(&call_result(&json!({"content": wrong}), None));
        assert!(read.images().is_empty());
        assert_eq!(
            read.text(),
            "[a PNG image was left out: its data is not valid base64.]\n\
             [an image of type image/svg+xml was left out: Tandem passes on PNG, JPEG, GIF and WebP images only.]\n\
             [an image was left out: its data is not the JPEG image it claims to be.]\n\
             [a PNG image of 3.8 MB was left out: Tandem passes on images up to 2 MB.]"
        );
        // A resource whose blob is an image is that image; five images keep four.
        let blob = json!({"type": "resource", "resource": {"uri": "file:///c.png", "mimeType": "image/png", "blob": PNG}});
        let many: Vec<Value> = std::iter::repeat_n(blob, 5).collect();
        let read = parse_tool_result(&call_result(&json!({"content": many}), None));
        assert_eq!(read.images().len(), 4);
        assert!(read.text().ends_with(
            "[an image was left out: Tandem passes on at most 4 images from one result.]"
        ));
    }

    #[test]
    fn tool_names_may_be_128_characters_long() {
        let long = "n".repeat(128);
        let page =
            read_tools(&json!({"tools": [{"name": long}, {"name": "m".repeat(129)}]})).unwrap();
        assert_eq!(page.tools.len(), 1);
        assert_eq!(page.tools[0].name, long);
        assert!(
            page.skipped[0].contains("at most 128"),
            "{:?}",
            page.skipped
        );
    }
}

//! Markdown answers in the DOM. `tandem_core::markdown` decides what each piece of an
//! answer becomes (and what is finished while it streams); this module only creates the
//! elements it names, with `createElement`, `createTextNode` and `setAttribute`. Nothing from
//! a model ever goes through `innerHTML`.
//!
//! While an answer streams, the finished blocks are appended once and never touched again;
//! only the unfinished tail's nodes are replaced, at most once per frame. A backlog is parsed
//! in 4 KB slices cut after a line, and a paragraph that grows past 4 KB is closed at a line
//! end. Finished blocks go into parts (see [`PART_BLOCKS`]). `scripts/bench-render.mjs` prints
//! last byte → end shown, the longest frame gap and typing latency for 50 and 500 KB.

use tandem_core::markdown::{self, Node, Stream};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlElement};

use crate::dom::{self, DomError};
use crate::i18n::say;

/// How many finished blocks one `div.md-part` holds. Finished blocks go into parts rather
/// than straight into the answer's element: appending a block then changes one part of at most
/// this many blocks, and the browser re-measures that part and the list of parts, not every
/// block of the answer (measured: with 20,000 blocks as direct children, laying out the answer
/// after each frame's append took most of a 500 KB answer's render time).
const PART_BLOCKS: u32 = 64;

/// The most text given to the parser at once while catching up. Text that arrived faster
/// than it could be shown is parsed and appended in slices of this size, cut after a line
/// where possible, so one frame never parses and builds the whole backlog.
const SLICE: usize = 4096;

/// How long an unfinished paragraph may grow before its lines so far are kept as a finished
/// paragraph and the text after them is parsed on its own. Every render parses the unfinished
/// tail again, so one endless paragraph would make each render slower than the last; closing
/// it keeps a render's work near the size of what arrived. The seam may differ from a parse
/// of the whole text in rare cases (emphasis or a link spanning the seam's line break, a
/// setext underline right after it); the conversation keeps the Markdown itself, which is
/// parsed whole when the conversation is shown again.
const SEAL_AFTER: usize = 4 * 1024;

/// The rendering of one answer while it streams.
pub struct Live {
    stream: Stream,
    /// The answer's `.text` element: parts of finished blocks first, then the tail.
    root: HtmlElement,
    /// The part being filled, and how many blocks it holds.
    part: Option<(HtmlElement, u32)>,
    /// How many of `root`'s children are parts.
    parts: u32,
    /// Text received and not yet given to the parser (it is shown a slice at a time).
    pending: String,
    /// The source of paragraphs closed early (see [`SEAL_AFTER`]); `stream` parses what follows.
    sealed: String,
    /// Bytes given to the parser since it last finished a block (at least the tail's size).
    unfinished: usize,
}

impl Live {
    pub fn new(root: HtmlElement) -> Self {
        Self {
            stream: Stream::new(),
            root,
            part: None,
            parts: 0,
            pending: String::new(),
            sealed: String::new(),
            unfinished: 0,
        }
    }

    /// Appends a piece of the answer; it is shown by the next [`Live::render`]. O(delta).
    pub fn push(&mut self, delta: &str) {
        self.pending.push_str(delta);
    }

    /// The Markdown shown so far (all of the answer once nothing is [`Live::behind`]).
    pub fn source(&self) -> String {
        format!("{}{}", self.sealed, self.stream.source())
    }

    /// Whether no text at all arrived.
    pub fn is_empty(&self) -> bool {
        self.sealed.is_empty() && self.stream.source().is_empty() && self.pending.is_empty()
    }

    /// Whether text arrived that is not on screen yet.
    pub fn behind(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Shows what arrived, slice by slice, until it is all shown or `budget_ms` passed (the
    /// rest waits for the next call): appends newly finished blocks, replaces the tail.
    pub fn render(&mut self, budget_ms: f64) -> Result<(), DomError> {
        let start = js_sys::Date::now();
        while self.behind() {
            let cut = slice_end(&self.pending, SLICE);
            self.stream.push(&self.pending[..cut]);
            self.unfinished += cut;
            self.pending.drain(..cut);
            self.show_update()?;
            if js_sys::Date::now() - start >= budget_ms {
                break;
            }
        }
        Ok(())
    }

    /// Shows everything that arrived at once (the answer ended some other way than by
    /// streaming to its end: an error, the worker gone).
    pub fn render_all(&mut self) -> Result<(), DomError> {
        if !self.behind() {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.pending);
        self.stream.push(&rest);
        self.unfinished += rest.len();
        self.show_update()
    }

    /// Parses the unfinished part and puts it on screen.
    fn show_update(&mut self) -> Result<(), DomError> {
        let update = self.stream.update();
        // The old tail goes; the parts before it stay as they are.
        while self.root.child_nodes().length() > self.parts {
            match self.root.last_child() {
                Some(last) => {
                    let _ = self.root.remove_child(&last);
                }
                None => break,
            }
        }
        if !update.finished.is_empty() {
            self.unfinished = 0;
        }
        for node in &update.finished {
            let built = build(node)?;
            self.keep(&built)?;
        }
        // One paragraph that has grown long, ending with a whole line: closed here.
        let long_paragraph = self.unfinished >= SEAL_AFTER
            && self.stream.source().ends_with('\n')
            && matches!(update.tail.as_slice(), [Node::Element { tag: "p", .. }]);
        for node in &update.tail {
            let built = build(node)?;
            if long_paragraph {
                self.keep(&built)?;
            } else {
                self.root
                    .append_child(&built)
                    .map_err(|_| DomError::Missing("messages"))?;
            }
        }
        if long_paragraph {
            let stream = std::mem::take(&mut self.stream);
            self.sealed.push_str(stream.source());
            self.unfinished = 0;
        }
        Ok(())
    }

    /// Appends a finished block to the part being filled (a new part when it is full).
    fn keep(&mut self, block: &web_sys::Node) -> Result<(), DomError> {
        let part = match &mut self.part {
            Some((part, held)) if *held < PART_BLOCKS => {
                *held += 1;
                part.clone()
            }
            _ => {
                let part = dom::create("div", "md-part")?;
                self.root
                    .append_child(&part)
                    .map_err(|_| DomError::Missing("messages"))?;
                self.parts += 1;
                self.part = Some((part.clone(), 1));
                part
            }
        };
        part.append_child(block)
            .map_err(|_| DomError::Missing("messages"))?;
        Ok(())
    }

    /// The user stopped the answer: what is on screen is the answer; text that arrived but
    /// is not shown yet is dropped.
    pub fn stop(&mut self) {
        self.pending.clear();
    }

    /// Starts over (the worker switched providers and the answer begins again).
    pub fn reset(&mut self) {
        self.stream = Stream::new();
        self.part = None;
        self.parts = 0;
        self.pending.clear();
        self.sealed.clear();
        self.unfinished = 0;
        self.root.set_text_content(None);
    }
}

/// Where the next slice of `text` ends: all of it when it is short, else after the last
/// line break within `max` bytes, else at a character boundary (one line longer than `max`).
fn slice_end(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(i) => i + 1,
        // A character is at most 4 bytes: `max` of at least 4 always moves on.
        None if end > 0 => end,
        None => text.len(),
    }
}

/// Shows a whole Markdown text (an answer from the remembered conversation) in `root`.
pub fn render_into(root: &HtmlElement, source: &str) -> Result<(), DomError> {
    root.set_text_content(None);
    for node in &markdown::plan(source) {
        append(root, node)?;
    }
    Ok(())
}

fn append(parent: &web_sys::Node, node: &Node) -> Result<(), DomError> {
    let built = build(node)?;
    parent
        .append_child(&built)
        .map_err(|_| DomError::Missing("messages"))?;
    Ok(())
}

fn build(node: &Node) -> Result<web_sys::Node, DomError> {
    let doc = dom::document()?;
    match node {
        Node::Text(text) => Ok(doc.create_text_node(text).into()),
        Node::Element {
            tag,
            class,
            attrs,
            children,
        } => {
            let el = dom::create(tag, class.unwrap_or(""))?;
            for (name, value) in attrs {
                dom::set_attr(&el, name, value);
            }
            // A task list's checkbox says its state in words (core gives only the state).
            if *class == Some("task") {
                let done = attrs.iter().any(|(name, _)| *name == "checked");
                let key = if done { "mdTaskDone" } else { "mdTaskOpen" };
                dom::set_attr(&el, "aria-label", &say(key, vec![]));
            }
            for child in children {
                append(&el, child)?;
            }
            Ok(el.into())
        }
        Node::CodeBlock { lang, code } => {
            let block = dom::create("div", "code-block")?;
            let head = dom::create("div", "code-head")?;
            let label = dom::create("span", "code-lang")?;
            label.set_text_content(Some(lang.as_deref().unwrap_or("code")));
            let copy = dom::create("button", "copy-code")?;
            dom::set_attr(&copy, "type", "button");
            dom::set_attr(&copy, "aria-label", &say("chatCopyCode", vec![]));
            copy.set_text_content(Some(&say("chatCopy", vec![])));
            let pre = dom::create("pre", "")?;
            let code_el = dom::create("code", "")?;
            code_el.set_text_content(Some(code));
            let fail = |_| DomError::Missing("messages");
            head.append_child(&label).map_err(fail)?;
            head.append_child(&copy).map_err(fail)?;
            pre.append_child(&code_el).map_err(fail)?;
            block.append_child(&head).map_err(fail)?;
            block.append_child(&pre).map_err(fail)?;
            Ok(block.into())
        }
    }
}

/// One listener for every code block's Copy button (blocks are re-created while they
/// stream, so a listener per button would pile up).
pub fn wire() -> Result<(), DomError> {
    dom::on("messages", "click", |e: web_sys::Event| {
        let Some(button) = e
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|t| t.closest("button.copy-code").ok().flatten())
        else {
            return;
        };
        let code = button
            .closest(".code-block")
            .ok()
            .flatten()
            .and_then(|b| b.query_selector("pre code").ok().flatten())
            .and_then(|c| c.text_content())
            .unwrap_or_default();
        copy_text(button, code);
    })?;
    Ok(())
}

/// Puts `text` on the clipboard; `button` says "Copied" for a moment, or why it failed.
pub fn copy_text(button: Element, text: String) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let promise = window.navigator().clipboard().write_text(&text);
    wasm_bindgen_futures::spawn_local(async move {
        match JsFuture::from(promise).await {
            Ok(_) => flash(&button, &say("chatCopied", vec![])),
            Err(e) => crate::alert::show_error(&say(
                "chatCopyFailed",
                vec![tandem_core::i18n::text(tandem_chrome::js_text(&e))],
            )),
        }
    });
}

/// Shows `text` on `button` for 1.5 s (its accessible name stays).
fn flash(button: &Element, text: &str) {
    let before = button.text_content();
    button.set_text_content(Some(text));
    let Some(window) = web_sys::window() else {
        return;
    };
    let b = button.clone();
    let restore = Closure::once_into_js(move || b.set_text_content(before.as_deref()));
    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
        restore.unchecked_ref::<js_sys::Function>(),
        1500,
    );
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    fn host() -> HtmlElement {
        let doc = dom::document().expect("document");
        let host = dom::create("div", "text md").expect("div");
        doc.body()
            .expect("body")
            .append_child(&host)
            .expect("append");
        host
    }

    #[wasm_bindgen_test]
    fn markdown_becomes_elements_and_html_stays_text() {
        let root = host();
        render_into(
            &root,
            "**b** [ok](https://a.example) [no](javascript:alert(1))\n\n<img src=x onerror=alert(1)>\n\n```sh\nls\n```",
        )
        .expect("renders");
        assert_eq!(
            root.query_selector("strong")
                .ok()
                .flatten()
                .and_then(|e| e.text_content()),
            Some("b".into())
        );
        assert!(root.query_selector("img").ok().flatten().is_none());
        let links = root.query_selector_all("a").expect("query");
        assert_eq!(links.length(), 1);
        let a: Element = links.get(0).expect("a").dyn_into().expect("element");
        assert_eq!(
            a.get_attribute("href").as_deref(),
            Some("https://a.example")
        );
        assert_eq!(a.get_attribute("target").as_deref(), Some("_blank"));
        let text = root.text_content().unwrap_or_default();
        assert!(text.contains("<img src=x onerror=alert(1)>"), "{text}");
        assert!(text.contains("no (javascript:alert(1))"), "{text}");
        let copy = root
            .query_selector("button[aria-label='Copy code']")
            .ok()
            .flatten();
        assert!(copy.is_some());
    }

    #[wasm_bindgen_test]
    fn finished_blocks_are_kept_while_the_tail_is_replaced() {
        let root = host();
        let mut live = Live::new(root.clone());
        live.push("# Title\n\nfirst para");
        live.render(f64::INFINITY).expect("render");
        live.push("graph\n\nsecond");
        live.render(f64::INFINITY).expect("render");
        let h1 = root.query_selector("h1").ok().flatten().expect("h1");
        live.push(" one\n\n- a\n- b\n");
        live.render(f64::INFINITY).expect("render");
        // The heading finished long ago: it is the same node, untouched.
        let again = root.query_selector("h1").ok().flatten().expect("h1");
        assert!(h1.is_same_node(Some(&again)));
        // Finished blocks sit in parts; without them the answer reads as parsed at once.
        assert!(root
            .query_selector(".md-part > h1")
            .ok()
            .flatten()
            .is_some());
        assert_eq!(
            root.inner_html()
                .replace("<div class=\"md-part\">", "")
                .replace("</div>", ""),
            "<h1>Title</h1><p>first paragraph</p><p>second one</p><ul><li>a</li><li>b</li></ul>"
        );
        // Stop keeps what is shown; text not yet shown is dropped.
        live.push("- c");
        live.stop();
        assert_eq!(
            live.source(),
            "# Title\n\nfirst paragraph\n\nsecond one\n\n- a\n- b\n"
        );
    }

    #[wasm_bindgen_test]
    fn an_endless_paragraph_is_closed_and_the_text_stays_whole() {
        let root = host();
        let mut live = Live::new(root.clone());
        let line = "a line of one long paragraph with **bold** in it\n";
        let lines = 2 * SEAL_AFTER / line.len();
        for _ in 0..lines {
            live.push(line);
            live.render(f64::INFINITY).expect("render");
        }
        live.push("the end");
        live.render(f64::INFINITY).expect("render");
        // Closed at least once: a finished paragraph sits in a part, the rest is the tail.
        assert!(root.query_selector(".md-part > p").ok().flatten().is_some());
        assert_eq!(live.source(), format!("{}the end", line.repeat(lines)));
        let strong = root.query_selector_all("strong").expect("query").length();
        assert_eq!(strong as usize, lines);
    }
}

#[cfg(test)]
mod slice_tests {
    use super::slice_end;

    #[test]
    fn slices_end_after_a_line_or_on_a_character() {
        assert_eq!(slice_end("short", 8), 5);
        assert_eq!(slice_end("ab\ncd\nefghij", 8), 6);
        // No line break in reach: cut on a character boundary ("é" is two bytes).
        assert_eq!(slice_end("aaaaaaaé", 8), 7);
        assert_eq!(slice_end("ééééé", 3), 2);
    }
}

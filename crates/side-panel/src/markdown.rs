//! Markdown answers in the DOM. `tandem_core::markdown` decides what each piece of an
//! answer becomes (and what is finished while it streams); this module only creates the
//! elements it names, with `createElement`, `createTextNode` and `setAttribute`. Nothing from
//! a model ever goes through `innerHTML`.
//!
//! While an answer streams, the finished blocks are appended once and never touched again;
//! only the unfinished tail's nodes are replaced, at most once per frame.

use tandem_core::markdown::{self, Node, Stream};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlElement};

use crate::dom::{self, DomError};

/// The rendering of one answer while it streams.
pub struct Live {
    stream: Stream,
    /// The answer's `.text` element: finished blocks first, then the tail.
    root: HtmlElement,
    /// How many of `root`'s children are finished blocks.
    finished: u32,
    /// How many bytes of the source are on screen.
    shown: usize,
}

impl Live {
    pub fn new(root: HtmlElement) -> Self {
        Self {
            stream: Stream::new(),
            root,
            finished: 0,
            shown: 0,
        }
    }

    /// Appends a piece of the answer; it is shown at the next [`Live::render`].
    pub fn push(&mut self, delta: &str) {
        self.stream.push(delta);
    }

    /// The Markdown source received so far.
    pub fn source(&self) -> &str {
        self.stream.source()
    }

    /// Whether text arrived that is not on screen yet.
    pub fn behind(&self) -> bool {
        self.shown < self.stream.source().len()
    }

    /// Shows what arrived: appends newly finished blocks, replaces the tail.
    pub fn render(&mut self) -> Result<(), DomError> {
        if !self.behind() {
            return Ok(());
        }
        let update = self.stream.update();
        self.shown = self.stream.source().len();
        // The old tail goes; finished blocks before it stay as they are.
        while self.root.child_nodes().length() > self.finished {
            match self.root.last_child() {
                Some(last) => {
                    let _ = self.root.remove_child(&last);
                }
                None => break,
            }
        }
        for node in &update.finished {
            append(&self.root, node)?;
            self.finished += 1;
        }
        for node in &update.tail {
            append(&self.root, node)?;
        }
        Ok(())
    }

    /// The user stopped the answer: what is on screen is the answer; text that arrived but
    /// is not shown yet is dropped.
    pub fn stop(&mut self) {
        self.stream.truncate(self.shown);
    }

    /// Starts over (the worker switched providers and the answer begins again).
    pub fn reset(&mut self) {
        self.stream = Stream::new();
        self.finished = 0;
        self.shown = 0;
        self.root.set_text_content(None);
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
            if class.is_none() {
                el.remove_attribute("class").ok();
            }
            for (name, value) in attrs {
                dom::set_attr(&el, name, value);
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
            dom::set_attr(&copy, "aria-label", "Copy code");
            copy.set_text_content(Some("Copy"));
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
    let list: HtmlElement = dom::by_id("messages")?;
    dom::on(&list, "click", |e: web_sys::Event| {
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
    });
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
            Ok(_) => flash(&button, "Copied"),
            Err(e) => crate::alert::show_error(&format!(
                "Could not copy to the clipboard: {}",
                crate::chrome::js_text(&e)
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
        live.render().expect("render");
        live.push("graph\n\nsecond");
        live.render().expect("render");
        let h1 = root.query_selector("h1").ok().flatten().expect("h1");
        live.push(" one\n\n- a\n- b\n");
        live.render().expect("render");
        // The heading finished long ago: it is the same node, untouched.
        let again = root.query_selector("h1").ok().flatten().expect("h1");
        assert!(h1.is_same_node(Some(&again)));
        assert_eq!(
            root.inner_html(),
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
}

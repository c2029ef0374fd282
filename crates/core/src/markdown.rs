//! Markdown answers, as plain data: pulldown-cmark's events become a tree of [`Node`]s the
//! side panel turns into DOM elements one by one (never HTML text), and [`Stream`] decides,
//! while an answer streams, which blocks are finished and which tail must be parsed again.
//!
//! Safety is decided here, so it is tested natively: raw HTML becomes text, a link is live
//! only for `http:`, `https:` and `mailto:` (anything else is shown as text with its
//! destination), and images are never loaded (an image becomes a link to it, or text).
//!
//! ```
//! use tandem_core::markdown::{plan, to_markup};
//! assert_eq!(to_markup(&plan("**hi** <b>x</b>")), "<p><strong>hi</strong> &lt;b&gt;x&lt;/b&gt;</p>");
//! ```

use pulldown_cmark::{
    Alignment, CodeBlockKind, Event, HeadingLevel, LinkType, Options, Tag, TagEnd,
};

/// One node of the rendering plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    /// An element with fixed tag and class; attribute values come from the answer but are
    /// only ever set as attributes (`href` only when [`live_url`] accepted it).
    Element {
        /// The HTML tag.
        tag: &'static str,
        /// Its class, for the style sheet.
        class: Option<&'static str>,
        /// Attribute names and values.
        attrs: Vec<(&'static str, String)>,
        children: Vec<Node>,
    },
    /// Text, shown as text whatever it contains.
    Text(String),
    /// A code block: shown with its language label and a Copy button.
    CodeBlock { lang: Option<String>, code: String },
}

impl Node {
    fn element(tag: &'static str) -> Node {
        Node::Element {
            tag,
            class: None,
            attrs: Vec::new(),
            children: Vec::new(),
        }
    }

    fn with_class(tag: &'static str, class: &'static str) -> Node {
        Node::Element {
            tag,
            class: Some(class),
            attrs: Vec::new(),
            children: Vec::new(),
        }
    }

    fn push(&mut self, child: Node) {
        if let Node::Element { children, .. } = self {
            // Adjacent text is merged: fewer DOM nodes, and tests read naturally.
            if let (Node::Text(new), Some(Node::Text(last))) = (&child, children.last_mut()) {
                last.push_str(new);
                return;
            }
            children.push(child);
        }
    }
}

/// The parser options of Tandem's Markdown: CommonMark plus tables, strikethrough and task
/// lists (`- [ ]`, `- [x]`), which models write as they would on GitHub.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// The plan of a whole Markdown text.
pub fn plan(source: &str) -> Vec<Node> {
    blocks(source).into_iter().map(|(_, node)| node).collect()
}

/// Whether `url` may be a live link: only web and mail addresses. Everything else
/// (`javascript:`, `data:`, `file:`, `chrome:`, relative paths that would resolve inside the
/// extension) is shown as text. The browser strips nothing that could turn a string starting
/// with these prefixes into another scheme.
pub fn live_url(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:")
}

/// Each top-level block of `source` with the byte offset where its first line starts.
fn blocks(source: &str) -> Vec<(usize, Node)> {
    let mut b = Builder::default();
    // Where the block being read began; taken when it is done.
    let mut first: Option<usize> = None;
    for (event, range) in pulldown_cmark::Parser::new_ext(source, options()).into_offset_iter() {
        if b.stack.is_empty() && b.code.is_none() && first.is_none() {
            first = Some(line_start(source, range.start));
        }
        b.event(event);
        b.mark_starts(&mut first);
    }
    b.close_all();
    b.mark_starts(&mut first);
    b.starts.into_iter().zip(b.done).collect()
}

/// The offset of the start of the line holding `at`.
fn line_start(source: &str, at: usize) -> usize {
    source
        .get(..at)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// An open element and how it ends.
struct Open {
    node: Node,
    /// The element under it closes with it: one tag opened both (a table and its scrolling
    /// wrapper, `thead` and its row).
    closes_parent: bool,
    /// Text added at its end when it closes (an inert link's destination).
    suffix: Option<String>,
}

#[derive(Default)]
struct Builder {
    /// Finished top-level nodes.
    done: Vec<Node>,
    /// Their first-line offsets (one per top-level event sequence).
    starts: Vec<usize>,
    stack: Vec<Open>,
    /// A code block being read: its language and text.
    code: Option<(Option<String>, String)>,
    /// Alignments of the table being read, and the index of the next cell.
    align: Vec<Alignment>,
    cell: usize,
    in_head: bool,
    /// Text read since the last other event: the parser may hand one run of text over in
    /// pieces (at an escape, an entity, a would-be delimiter), and a bare URL is found only in
    /// the whole run.
    text: String,
}

impl Builder {
    /// Gives every finished top-level node the start of the block it came from.
    fn mark_starts(&mut self, first: &mut Option<usize>) {
        while self.starts.len() < self.done.len() {
            let at = first.or(self.starts.last().copied()).unwrap_or(0);
            self.starts.push(at);
        }
        if self.stack.is_empty() && self.code.is_none() {
            *first = None;
        }
    }

    fn open(&mut self, node: Node) {
        self.stack.push(Open {
            node,
            closes_parent: false,
            suffix: None,
        });
    }

    /// Opens `node` inside the element opened just before, to be closed with it.
    fn open_inner(&mut self, node: Node) {
        self.stack.push(Open {
            node,
            closes_parent: true,
            suffix: None,
        });
    }

    fn top_tag(&self) -> Option<&'static str> {
        match self.stack.last() {
            Some(Open {
                node: Node::Element { tag, .. },
                ..
            }) => Some(tag),
            _ => None,
        }
    }

    fn close(&mut self) {
        while let Some(open) = self.stack.pop() {
            let mut node = open.node;
            if let Some(suffix) = open.suffix {
                node.push(Node::Text(suffix));
            }
            self.emit(node);
            if !open.closes_parent {
                return;
            }
        }
    }

    fn close_all(&mut self) {
        self.flush_text();
        while !self.stack.is_empty() {
            self.close();
        }
        if let Some((lang, code)) = self.code.take() {
            self.emit(Node::CodeBlock { lang, code });
        }
    }

    fn emit(&mut self, node: Node) {
        match self.stack.last_mut() {
            Some(parent) => parent.node.push(node),
            None => self.done.push(node),
        }
    }

    /// Whether what is being read sits inside a link (live or inert): its text stays text.
    fn in_link(&self) -> bool {
        self.stack.iter().any(|open| match &open.node {
            Node::Element { tag, class, .. } => *tag == "a" || *class == Some("link-inert"),
            _ => false,
        })
    }

    /// Emits the text read so far, its bare web addresses as live links (outside links only).
    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        if self.in_link() {
            self.emit(Node::Text(text));
            return;
        }
        let mut at = 0;
        for (start, end) in bare_urls(&text) {
            if start > at {
                self.emit(Node::Text(text[at..start].to_string()));
            }
            let url = &text[start..end];
            let mut a = live_link(url.to_string());
            a.push(Node::Text(url.to_string()));
            self.emit(a);
            at = end;
        }
        if at < text.len() {
            self.emit(Node::Text(text[at..].to_string()));
        }
    }

    fn event(&mut self, event: Event<'_>) {
        if self.code.is_none() {
            if let Event::Text(t) = &event {
                self.text.push_str(t);
                return;
            }
            self.flush_text();
        }
        if let Some((_, code)) = self.code.as_mut() {
            match event {
                Event::Text(t) => code.push_str(&t),
                Event::End(_) => {
                    if let Some((lang, code)) = self.code.take() {
                        self.emit(Node::CodeBlock { lang, code });
                    }
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(TagEnd::Table) => {
                if self.top_tag() == Some("tbody") {
                    self.close();
                }
                self.close();
            }
            Event::End(TagEnd::TableHead) => {
                self.in_head = false;
                self.close();
            }
            Event::End(_) => self.close(),
            // Gathered above, emitted by `flush_text`.
            Event::Text(t) => self.text.push_str(&t),
            Event::Code(t) => {
                let mut code = Node::element("code");
                code.push(Node::Text(t.into_string()));
                self.emit(code);
            }
            // Raw HTML is shown as the text it is: model output never becomes markup.
            Event::Html(t) | Event::InlineHtml(t) => self.emit(Node::Text(t.into_string())),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.emit(Node::Text(t.into_string())),
            Event::FootnoteReference(t) => self.emit(Node::Text(format!("[^{t}]"))),
            Event::SoftBreak => self.emit(Node::Text("\n".into())),
            Event::HardBreak => self.emit(Node::element("br")),
            Event::Rule => self.emit(Node::element("hr")),
            // A read-only checkbox: the answer reports a state, the person does not edit it.
            // The panel names it ("Done" / "Not done") in the person's language.
            Event::TaskListMarker(done) => {
                let mut attrs = vec![
                    ("type", "checkbox".to_string()),
                    ("disabled", String::new()),
                ];
                if done {
                    attrs.push(("checked", String::new()));
                }
                self.emit(Node::Element {
                    tag: "input",
                    class: Some("task"),
                    attrs,
                    children: Vec::new(),
                });
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let node = match tag {
            Tag::Paragraph => Node::element("p"),
            Tag::Heading { level, .. } => Node::element(match level {
                HeadingLevel::H1 => "h1",
                HeadingLevel::H2 => "h2",
                HeadingLevel::H3 => "h3",
                HeadingLevel::H4 => "h4",
                HeadingLevel::H5 => "h5",
                HeadingLevel::H6 => "h6",
            }),
            Tag::BlockQuote(_) => Node::element("blockquote"),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .map(|l| l.chars().take(32).collect::<String>()),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some((lang, String::new()));
                return;
            }
            Tag::HtmlBlock => Node::with_class("div", "raw-html"),
            Tag::List(Some(first)) => {
                let mut attrs = Vec::new();
                if first != 1 {
                    attrs.push(("start", first.to_string()));
                }
                Node::Element {
                    tag: "ol",
                    class: None,
                    attrs,
                    children: Vec::new(),
                }
            }
            Tag::List(None) => Node::element("ul"),
            Tag::Item => Node::element("li"),
            Tag::Table(align) => {
                // The wrapper scrolls a wide table sideways in a narrow panel.
                self.align = align;
                self.in_head = false;
                self.open(Node::with_class("div", "table-wrap"));
                self.open_inner(Node::element("table"));
                return;
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                self.open(Node::element("thead"));
                self.open_inner(Node::element("tr"));
                return;
            }
            Tag::TableRow => {
                if self.top_tag() == Some("table") {
                    // The first body row opens `tbody`; the table's end closes it.
                    self.open(Node::element("tbody"));
                }
                self.cell = 0;
                Node::element("tr")
            }
            Tag::TableCell => {
                let class = match self.align.get(self.cell) {
                    Some(Alignment::Left) => Some("align-left"),
                    Some(Alignment::Center) => Some("align-center"),
                    Some(Alignment::Right) => Some("align-right"),
                    _ => None,
                };
                self.cell += 1;
                Node::Element {
                    tag: if self.in_head { "th" } else { "td" },
                    class,
                    attrs: Vec::new(),
                    children: Vec::new(),
                }
            }
            Tag::Emphasis => Node::element("em"),
            Tag::Strong => Node::element("strong"),
            Tag::Strikethrough => Node::element("del"),
            Tag::Superscript => Node::element("sup"),
            Tag::Subscript => Node::element("sub"),
            Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            } => {
                let href = if link_type == LinkType::Email {
                    format!("mailto:{dest_url}")
                } else {
                    dest_url.into_string()
                };
                if live_url(&href) {
                    let mut a = live_link(href);
                    if !title.is_empty() {
                        if let Node::Element { attrs, .. } = &mut a {
                            attrs.push(("title", title.into_string()));
                        }
                    }
                    a
                } else {
                    // Shown as text with where it pointed, so nothing is hidden and
                    // nothing can run.
                    self.stack.push(Open {
                        node: Node::with_class("span", "link-inert"),
                        closes_parent: false,
                        suffix: Some(format!(" ({href})")),
                    });
                    return;
                }
            }
            Tag::Image { dest_url, .. } => {
                // Images are never loaded (a remote image tells its server who reads the
                // answer and when): a web image becomes a link to it, anything else its text.
                let lower = dest_url.get(..8).unwrap_or(&dest_url).to_ascii_lowercase();
                if lower.starts_with("http://") || lower.starts_with("https://") {
                    let mut a = live_link(dest_url.into_string());
                    a.push(Node::Text("Image: ".into()));
                    a
                } else {
                    Node::with_class("span", "image-inert")
                }
            }
            // Not enabled in `options`; kept balanced should a future option emit them.
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => Node::element("div"),
        };
        self.open(node);
    }
}

/// A link that opens in a new tab and tells the page nothing about Tandem.
/// The byte ranges of the bare web addresses in `text` (`https://…` or `http://…` not written
/// as a link), as GitHub finds them: an address starts the text or follows a space or an
/// opening bracket or quote, runs to the next space or `<`, and does not end with the
/// punctuation of the sentence around it (`.`, `,`, `:`, `;`, `!`, `?`, quotes, `*`, `_`, `~`) nor
/// with a `)` it did not open. Only http and https: other schemes stay text ([`live_url`]).
fn bare_urls(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(rel) = lower[from..].find("http") {
        let start = from + rel;
        from = start + 4;
        let scheme = if lower[start..].starts_with("https://") {
            8
        } else if lower[start..].starts_with("http://") {
            7
        } else {
            continue;
        };
        let before = text[..start].chars().next_back();
        if !before.is_none_or(|c| c.is_whitespace() || "([{<\"'*_~".contains(c)) {
            continue;
        }
        let run = text[start..]
            .find(|c: char| c.is_whitespace() || c == '<')
            .map_or(text.len(), |n| start + n);
        let mut end = run;
        loop {
            let url = &text[start..end];
            match url.chars().next_back() {
                Some(c) if ".,:;!?\"'*_~".contains(c) => end -= c.len_utf8(),
                Some(')') if url.matches(')').count() > url.matches('(').count() => end -= 1,
                _ => break,
            }
        }
        // A host must follow the scheme.
        if text[start + scheme..end].starts_with(|c: char| c.is_alphanumeric()) {
            found.push((start, end));
        }
        from = run.max(from);
    }
    found
}

fn live_link(href: String) -> Node {
    Node::Element {
        tag: "a",
        class: None,
        attrs: vec![
            ("href", href),
            ("target", "_blank".into()),
            ("rel", "noopener noreferrer".into()),
        ],
        children: Vec::new(),
    }
}

/// An answer being streamed: its Markdown source, and how much of it is finished.
///
/// Appending is O(delta). [`Stream::update`] parses only the part after the finished blocks:
/// a top-level block is finished once another top-level block has begun after it, on a
/// complete line followed by another complete line (CommonMark never reopens a closed block;
/// the lines must be complete because their ends can still change what the new block is,
/// e.g. `#` then `#tag`, or a table's delimiter line). So while blocks keep coming, each
/// update costs the unfinished tail, not the answer. The one cross-block feature given up is
/// a link reference definition written after the blocks that use it: those links stay text.
#[derive(Debug, Default, Clone)]
pub struct Stream {
    source: String,
    /// Bytes of `source` that belong to finished blocks (a line start).
    finished: usize,
}

/// What changed since the last update: blocks now finished (append them; they never change
/// again) and the plan of the unfinished tail (replaces the previous tail).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Update {
    /// Blocks finished since the last update, in order.
    pub finished: Vec<Node>,
    /// Everything after them.
    pub tail: Vec<Node>,
}

impl Stream {
    /// An empty answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a piece of the answer.
    pub fn push(&mut self, delta: &str) {
        self.source.push_str(delta);
    }

    /// The Markdown source so far.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Keeps only the first `len` bytes (what was shown when the user stopped the answer).
    /// `len` is moved back to a character boundary, and never below the finished part.
    pub fn truncate(&mut self, len: usize) {
        let mut len = len.clamp(self.finished, self.source.len());
        while !self.source.is_char_boundary(len) {
            len -= 1;
        }
        self.source.truncate(len);
    }

    /// Parses the unfinished part: the blocks that became finished, and the tail's plan.
    pub fn update(&mut self) -> Update {
        let tail = self.source.get(self.finished..).unwrap_or_default();
        // A block proves the one before it finished only once its first line and the line
        // after it are complete: the last line can still change (`#` then `#tag`), and a
        // table's header line is a table only because of the delimiter line under it.
        let settled = tail
            .rfind('\n')
            .and_then(|last| tail[..last].rfind('\n'))
            .map_or(0, |i| i + 1);
        let mut blocks = blocks(tail);
        // The last block that began on a complete line, after at least one other block.
        let split = blocks
            .iter()
            .enumerate()
            .skip(1)
            .rev()
            .find(|(_, (start, _))| *start < settled)
            .map(|(i, (start, _))| (i, *start));
        let Some((index, start)) = split else {
            return Update {
                finished: Vec::new(),
                tail: blocks.into_iter().map(|(_, n)| n).collect(),
            };
        };
        let rest = blocks.split_off(index);
        self.finished += start;
        Update {
            finished: blocks.into_iter().map(|(_, n)| n).collect(),
            tail: rest.into_iter().map(|(_, n)| n).collect(),
        }
    }
}

/// The plan as HTML-like text, for tests and docs (the panel builds DOM nodes instead).
pub fn to_markup(nodes: &[Node]) -> String {
    let mut out = String::new();
    for node in nodes {
        write_markup(node, &mut out);
    }
    out
}

fn write_markup(node: &Node, out: &mut String) {
    match node {
        Node::Text(t) => escape(t, out),
        Node::CodeBlock { lang, code } => {
            out.push_str("<pre lang=\"");
            escape(lang.as_deref().unwrap_or(""), out);
            out.push_str("\">");
            escape(code, out);
            out.push_str("</pre>");
        }
        Node::Element {
            tag,
            class,
            attrs,
            children,
        } => {
            out.push('<');
            out.push_str(tag);
            if let Some(c) = class {
                out.push_str(" class=\"");
                out.push_str(c);
                out.push('"');
            }
            for (k, v) in attrs {
                out.push(' ');
                out.push_str(k);
                out.push_str("=\"");
                escape(v, out);
                out.push('"');
            }
            out.push('>');
            if matches!(*tag, "br" | "hr" | "input") {
                return;
            }
            for c in children {
                write_markup(c, out);
            }
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
    }
}

fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(source: &str, expected: &str) {
        assert_eq!(to_markup(&plan(source)), expected, "source: {source:?}");
    }

    #[test]
    fn inline_formatting() {
        check(
            "**bold** *em* ~~gone~~ `code`",
            "<p><strong>bold</strong> <em>em</em> <del>gone</del> <code>code</code></p>",
        );
        check("one\ntwo", "<p>one\ntwo</p>");
        check("one  \ntwo", "<p>one<br>two</p>");
    }

    #[test]
    fn bare_web_addresses_are_live_links_without_the_sentence_around_them() {
        let a = |url: &str| {
            format!("<a href=\"{url}\" target=\"_blank\" rel=\"noopener noreferrer\">{url}</a>")
        };
        check(
            "See https://example.com/docs.",
            &format!("<p>See {}.</p>", a("https://example.com/docs")),
        );
        check(
            "(at http://example.com/a_(b)) and https://x.test/?q=1&r=2, done",
            &format!(
                "<p>(at {}) and {}, done</p>",
                a("http://example.com/a_(b)"),
                a("https://x.test/?q=1&amp;r=2")
            ),
        );
        // Inside a link, inline code or a code block an address stays what it was.
        check(
            "[https://a.test](https://b.test) `https://c.test`",
            "<p><a href=\"https://b.test\" target=\"_blank\" rel=\"noopener noreferrer\">https://a.test</a> <code>https://c.test</code></p>",
        );
        check(
            "```\nhttps://c.test\n```",
            "<pre lang=\"\">https://c.test\n</pre>",
        );
        // Other schemes, a scheme without a host, and a word that merely contains one: text.
        check(
            "javascript:alert(1) https:// xhttps://a.test ftp://a.test",
            "<p>javascript:alert(1) https:// xhttps://a.test ftp://a.test</p>",
        );
    }

    #[test]
    fn task_list_items_are_read_only_checkboxes() {
        check(
            "- [ ] buy milk\n- [x] pay rent",
            "<ul><li><input class=\"task\" type=\"checkbox\" disabled=\"\">buy milk</li>\
             <li><input class=\"task\" type=\"checkbox\" disabled=\"\" checked=\"\">pay rent</li></ul>",
        );
    }

    #[test]
    fn blocks_of_every_kind() {
        check("# Title\n\n### Small", "<h1>Title</h1><h3>Small</h3>");
        check("- a\n- b", "<ul><li>a</li><li>b</li></ul>");
        check("3. c\n4. d", "<ol start=\"3\"><li>c</li><li>d</li></ol>");
        check("1. a", "<ol><li>a</li></ol>");
        check(
            "> quoted\n> more",
            "<blockquote><p>quoted\nmore</p></blockquote>",
        );
        check("a\n\n---\n\nb", "<p>a</p><hr><p>b</p>");
    }

    #[test]
    fn code_blocks_keep_their_text_and_language() {
        check(
            "```rust extra\nfn main() { \"<b>\" }\n```",
            "<pre lang=\"rust\">fn main() { &quot;&lt;b&gt;&quot; }\n</pre>",
        );
        check("    indented\n", "<pre lang=\"\">indented\n</pre>");
        // An unclosed fence (still streaming) is code up to the end.
        check("```js\nlet a", "<pre lang=\"js\">let a</pre>");
    }

    #[test]
    fn tables_have_head_body_and_alignment() {
        check(
            "| a | b |\n|:-|-:|\n| 1 | 2 |\n| 3 | 4 |",
            "<div class=\"table-wrap\"><table><thead><tr><th class=\"align-left\">a</th><th class=\"align-right\">b</th></tr></thead>\
             <tbody><tr><td class=\"align-left\">1</td><td class=\"align-right\">2</td></tr>\
             <tr><td class=\"align-left\">3</td><td class=\"align-right\">4</td></tr></tbody></table></div>",
        );
        check(
            "| h |\n|---|",
            "<div class=\"table-wrap\"><table><thead><tr><th>h</th></tr></thead></table></div>",
        );
    }

    #[test]
    fn raw_html_is_text() {
        check(
            "<img src=x onerror=alert(1)>",
            "<div class=\"raw-html\">&lt;img src=x onerror=alert(1)&gt;</div>",
        );
        check(
            "hi <script>alert(1)</script>",
            "<p>hi &lt;script&gt;alert(1)&lt;/script&gt;</p>",
        );
    }

    #[test]
    fn only_web_and_mail_links_are_live() {
        check(
            "[site](https://example.com \"Example\")",
            "<p><a href=\"https://example.com\" target=\"_blank\" rel=\"noopener noreferrer\" title=\"Example\">site</a></p>",
        );
        check(
            "<mail@example.com>",
            "<p><a href=\"mailto:mail@example.com\" target=\"_blank\" rel=\"noopener noreferrer\">mail@example.com</a></p>",
        );
        check(
            "[x](javascript:alert(1))",
            "<p><span class=\"link-inert\">x (javascript:alert(1))</span></p>",
        );
        check(
            "[x](JaVaScRiPt:alert(1)) [y](data:text/html,hi) [z](/relative)",
            "<p><span class=\"link-inert\">x (JaVaScRiPt:alert(1))</span> \
             <span class=\"link-inert\">y (data:text/html,hi)</span> \
             <span class=\"link-inert\">z (/relative)</span></p>",
        );
        // Entities do not smuggle a scheme past the check.
        check(
            "[x](&#106;avascript:alert(1))",
            "<p><span class=\"link-inert\">x (javascript:alert(1))</span></p>",
        );
        assert!(live_url("HTTPS://A.B"));
        assert!(!live_url(" https://a.b"));
        assert!(!live_url("http:/"));
    }

    #[test]
    fn images_are_never_loaded() {
        check(
            "![a cat](https://img.example/cat.png)",
            "<p><a href=\"https://img.example/cat.png\" target=\"_blank\" rel=\"noopener noreferrer\">Image: a cat</a></p>",
        );
        check(
            "![x](javascript:alert(1))",
            "<p><span class=\"image-inert\">x</span></p>",
        );
    }

    /// Streams `source` in pieces of `size` bytes (on character boundaries) and returns the
    /// markup of what the panel would show at the end, and how many bytes were parsed in all.
    fn stream_in_pieces(source: &str, size: usize) -> (String, usize) {
        let mut s = Stream::new();
        let mut shown: Vec<Node> = Vec::new();
        let mut tail_len = 0;
        let mut parsed = 0;
        let mut at = 0;
        while at < source.len() {
            let mut end = (at + size).min(source.len());
            while !source.is_char_boundary(end) {
                end += 1;
            }
            s.push(&source[at..end]);
            at = end;
            parsed += s.source().len() - s.finished;
            let u = s.update();
            shown.truncate(shown.len() - tail_len);
            shown.extend(u.finished);
            tail_len = u.tail.len();
            shown.extend(u.tail);
        }
        (to_markup(&shown), parsed)
    }

    const SAMPLE: &str = "# Plan\n\nSome **bold** text\nwith a soft break.\n\n- one\n- two\n\n  still two\n- three\n\nAfter the list.\nHeading\n---\n\n```rust\nfn main() {}\n\n// blank line inside\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\nlazy\n\npara\n#\n\n#tag is text\n1. x\n2. y\n\n<div>raw</div>\n\nend [l](https://e.x) `c` é ü 😀\n";

    #[test]
    fn streaming_in_any_pieces_ends_as_the_whole_parse() {
        let whole = to_markup(&plan(SAMPLE));
        for size in [1, 2, 3, 5, 7, 16, 64, 1000] {
            assert_eq!(stream_in_pieces(SAMPLE, size).0, whole, "pieces of {size}");
        }
    }

    proptest::proptest! {
        /// Any answer made of Markdown pieces (link reference definitions aside: see
        /// `Stream`), cut anywhere, ends on screen as the whole answer parsed at once.
        #[test]
        fn any_chunking_ends_as_the_whole_parse(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "# h", "##", "#", "para", "*em*", "**", "`c`", "```", "```js", "~~~", "    code",
                "- ", "* ", "1. ", "2) ", "> ", ">", "| a | b |", "|---|---|", "| - |", "---", "===",
                "<div>", "</div>", "<!--", "-->", "[l](https://x.y)", "![i](x)", "\\", "  ", "\t",
                "\n", "\n", "\n", "\n\n", "é", "😀", "a", "b", "  - ", "   ", "+ ", "10. ",
                "<pre>", "</pre>", "<script>", "<?", "?>", "<![CDATA[", "]]>", "***", "___", "~~x~~",
                "<https://a.b>", "[x]", "(y)", "| x |", "|:-:|", "- [ ] ", "\r\n", "&amp;", "&#",
            ]), 0..60),
            size in 1usize..12,
        ) {
            let source: String = pieces.concat();
            let whole = to_markup(&plan(&source));
            proptest::prop_assert_eq!(stream_in_pieces(&source, size).0, whole, "source {:?}", source);
        }
    }

    #[test]
    fn streaming_cost_grows_with_the_answer_not_its_square() {
        // 2,000 paragraphs streamed 10 bytes at a time: each update parses about one block.
        let source: String = (0..2000)
            .map(|i| format!("Paragraph {i} with *some* words.\n\n"))
            .collect();
        let (shown, parsed) = stream_in_pieces(&source, 10);
        assert_eq!(shown, to_markup(&plan(&source)));
        assert!(
            parsed < source.len() * 8,
            "parsed {parsed} bytes for a {}-byte answer",
            source.len()
        );
    }

    #[test]
    fn a_block_begun_on_an_unfinished_line_finishes_nothing() {
        // `#` alone is an empty heading, but `#tag` continues the paragraph above it.
        let mut s = Stream::new();
        s.push("para\n#");
        assert_eq!(
            s.update(),
            Update {
                finished: vec![],
                tail: plan("para\n#")
            }
        );
        s.push("tag\n\nnext\n");
        assert_eq!(
            s.update().finished,
            vec![],
            "the line after `next` is not complete yet"
        );
        s.push("\n");
        let u = s.update();
        assert_eq!(to_markup(&u.finished), "<p>para\n#tag</p>");
        assert_eq!(to_markup(&u.tail), "<p>next</p>");
    }

    #[test]
    fn a_table_header_line_waits_for_its_delimiter_line() {
        // `| - |` over `|---|` is a one-column table interrupting the paragraph; once the
        // delimiter line reads `|---|---|` it is not, and the paragraph goes on.
        let source = "| a | b |\n| - |\n|---|---|";
        assert_eq!(stream_in_pieces(source, 1).0, to_markup(&plan(source)));
        assert_eq!(
            to_markup(&plan(source)),
            "<p>| a | b |\n| - |\n|---|---|</p>"
        );
    }

    #[test]
    fn truncate_stays_on_a_character_and_after_finished_blocks() {
        let mut s = Stream::new();
        s.push("done\n\nnext é\n\n");
        let u = s.update();
        assert_eq!(to_markup(&u.finished), "<p>done</p>");
        assert_eq!(to_markup(&u.tail), "<p>next é</p>");
        s.truncate(s.source().len() - 3); // inside "é"
        assert_eq!(s.source(), "done\n\nnext ");
        s.truncate(0);
        assert_eq!(s.source(), "done\n\n");
    }
}

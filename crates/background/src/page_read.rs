//! "Ask about this page": reads the readable text of the page open in the panel's tab with
//! `scripting.executeScript` and puts it on the question as its quote (`page_text`), so the
//! question travels like an "Ask Tandem" selection: same `Turn`, budget, fence and session
//! memory (`chrome.storage.session` only, never `storage.local`). A page Tandem cannot read
//! (Chrome's own pages, the Web Store, a PDF in the viewer, a failed injection) is a sentence
//! for the panel, and nothing reaches the provider.

use js_sys::{Array, Function, Object, Reflect, JSON};
use tandem_chrome::js_text;
use tandem_core::chat::{ChatMessage, Role};
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::page_text::{self, RawPage};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::session::CloudConfig;
use tandem_core::tokens::Estimator;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::chrome::{self, execute_script, tabs_get, Port};
use crate::storage;

// The page-side reader, serialised by `executeScript` into the page. It lives in a module (an
// extension file): the extension's CSP forbids building a function from a string. It only
// gathers: each block of text with the landmarks around it; choosing the main content is
// `tandem_core::page_text::readable`, tested natively.
#[wasm_bindgen(inline_js = r"
export function page_reader() {
    return (maxChars) => {
        const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'CANVAS', 'IFRAME',
            'OBJECT', 'EMBED', 'BUTTON', 'SELECT', 'OPTION', 'TEXTAREA', 'INPUT', 'HEAD']);
        const BLOCKS = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'LI', 'PRE', 'BLOCKQUOTE',
            'TD', 'TH', 'DT', 'DD', 'FIGCAPTION', 'CAPTION', 'DIV', 'SECTION', 'ARTICLE', 'MAIN',
            'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'UL', 'OL', 'TABLE', 'TR', 'FORM', 'BODY',
            'ADDRESS', 'DETAILS', 'SUMMARY', 'DIALOG', 'FIGURE', 'DL', 'FIELDSET']);
        const AD = /(^|[\s_-])(ads?|advert\w*|advertisement|sponsor\w*|promo\w*|adslot|ad-slot|dfp|outbrain|taboola|cookie\w*|consent|newsletter-signup)([\s_-]|$)/i;
        const role = (el) => (el.getAttribute('role') || '').toLowerCase();
        const marksOf = (block) => {
            const marks = new Set();
            let sectioned = false;
            const chain = [];
            for (let el = block; el && el.nodeType === 1; el = el.parentElement) chain.push(el);
            // From the top down, so a header knows whether it sits inside a section.
            for (const el of chain.reverse()) {
                const tag = el.tagName, r = role(el);
                if (tag === 'NAV' || r === 'navigation' || r === 'menu' || r === 'menubar') marks.add('nav');
                if (tag === 'ASIDE' || r === 'complementary') marks.add('aside');
                if ((tag === 'HEADER' && !sectioned) || r === 'banner') marks.add('header');
                if ((tag === 'FOOTER' && !sectioned) || r === 'contentinfo') marks.add('footer');
                if (tag === 'MAIN' || r === 'main') marks.add('main');
                if (tag === 'ARTICLE' || r === 'article') marks.add('article');
                if (tag === 'DIALOG' || r === 'dialog' || r === 'alertdialog') marks.add('dialog');
                if (el.hidden || el.getAttribute('aria-hidden') === 'true') marks.add('hidden');
                const names = `${el.id || ''} ${typeof el.className === 'string' ? el.className : ''}`;
                if (AD.test(names) || el.hasAttribute('data-ad') || el.hasAttribute('data-ad-slot')) marks.add('ad');
                if (['ARTICLE', 'MAIN', 'SECTION', 'ASIDE', 'NAV'].includes(tag)) sectioned = true;
            }
            if (block.checkVisibility && !block.checkVisibility({ visibilityProperty: true })) marks.add('hidden');
            return [...marks];
        };
        const records = new Map();
        const blocks = [];
        let total = 0;
        const root = document.body || document.documentElement;
        if (!root) return { title: document.title, url: location.href, blocks };
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node && total < maxChars; node = walker.nextNode()) {
            const text = node.data;
            if (!text || !text.trim()) continue;
            let block = null, link = false, skip = false;
            for (let el = node.parentElement; el; el = el.parentElement) {
                if (SKIP.has(el.tagName)) { skip = true; break; }
                if (el.tagName === 'A') link = true;
                if (!block && BLOCKS.has(el.tagName)) block = el;
            }
            if (skip || !block) continue;
            let rec = records.get(block);
            if (!rec) {
                rec = { text: '', tag: block.tagName.toLowerCase(), marks: marksOf(block), linkChars: 0 };
                records.set(block, rec);
                blocks.push(rec);
            }
            const piece = text.slice(0, maxChars - total);
            rec.text += piece;
            total += piece.length;
            if (link) rec.linkChars += piece.trim().length;
        }
        return { title: document.title, url: location.href, blocks };
    };
}
")]
extern "C" {
    fn page_reader() -> Function;
}

/// Why the page's text could not be put on the question: each is the sentence the panel shows.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("Tandem cannot tell which page is open: click on the page's tab and try again.")]
    NoTab,
    #[error("The tab closed before Tandem could read its page.")]
    TabGone,
    /// A sentence from `page_text` (Chrome's own page, the Web Store, a PDF, an injection error).
    #[error("{0}")]
    Refused(String),
    #[error("Tandem could not read {page}: {detail}.")]
    Unreadable { page: String, detail: String },
    #[error("The model's window is too small to hold any of {0}'s text; choose a model with a larger context window in Settings.")]
    NoRoom(String),
}

impl From<ReadError> for ProviderError {
    fn from(e: ReadError) -> Self {
        // Nothing is wrong with the provider; the kind only decides how the panel ends the
        // answer (no text arrived: the question goes back to the Message box).
        ProviderError::new(ErrorKind::Provider, e.to_string())
    }
}

/// `messages` with its last message (the question) quoting the readable text of `tab_id`'s
/// page, capped to what the configured model's window leaves; an empty question becomes
/// [`page_text::PAGE_QUESTION`].
pub async fn quote_page(
    port: &Port,
    request_id: &str,
    tab_id: Option<i32>,
    mut messages: Vec<ChatMessage>,
) -> Result<Vec<ChatMessage>, ProviderError> {
    let tab = tab_id.ok_or(ReadError::NoTab)?;
    let url = tab_url(tab).await?;
    if let Some(why) = page_text::read_refusal(&url, chrome::file_access_for(&url).await) {
        return Err(ReadError::Refused(why).into());
    }
    // The progress line until the answer's first words (a long page takes a moment).
    let _ = crate::outbox::post(
        port,
        &WorkerToPanel::Status {
            request_id: request_id.to_owned(),
            text: "Reading the page…".to_owned(),
        },
    );
    let page = read(tab, &url).await?;
    let name = page.name();
    let text = page_text::readable(&page);
    if text.trim().is_empty() {
        return Err(ReadError::Refused(page_text::empty_page(&name)).into());
    }
    let Some(question) = messages.last_mut().filter(|m| m.role == Role::User) else {
        return Ok(messages);
    };
    if question.content.trim().is_empty() {
        question.content = page_text::PAGE_QUESTION.to_owned();
    }
    let (max_tokens, estimator) = room(&question.content).await;
    let capped = page_text::cap(&text, max_tokens, estimator);
    if capped.text.is_empty() {
        return Err(ReadError::NoRoom(name).into());
    }
    // The address Chrome shows for the tab, not what the page says about itself.
    question.quote = Some(page_text::page_quote(&name, &url, &capped.text));
    question.page = Some(name);
    question.images.clear();
    Ok(messages)
}

/// How many tokens the page may take, and how they are counted: from the saved settings'
/// model window and answer reserve. Unsaved or incomplete settings fail later with their own
/// sentence; the page is capped at the ceiling meanwhile.
async fn room(question: &str) -> (u32, Estimator) {
    let Ok(settings) = storage::settings().await else {
        return (page_text::MAX_PAGE_TOKENS, Estimator::Classified);
    };
    let budget = settings.budget.clone();
    let estimator = Estimator::from_override(budget.chars_per_token);
    let tokens = match CloudConfig::from_settings(&settings, budget.clone()) {
        Ok(config) => page_text::page_budget(
            config.context_window,
            budget.assistant_response_allowance,
            estimator.count(question),
        ),
        Err(_) => page_text::MAX_PAGE_TOKENS,
    };
    (tokens, estimator)
}

/// The URL Chrome shows for the tab (a navigation under way counts as its target).
async fn tab_url(tab: i32) -> Result<String, ReadError> {
    let promise = tabs_get(tab).map_err(|_| ReadError::TabGone)?;
    let info = JsFuture::from(promise)
        .await
        .map_err(|_| ReadError::TabGone)?;
    let field = |name: &str| {
        Reflect::get(&info, &name.into())
            .ok()
            .and_then(|v| v.as_string())
            .filter(|v| !v.is_empty())
    };
    Ok(field("pendingUrl")
        .or_else(|| field("url"))
        .unwrap_or_default())
}

/// Runs the reader in the tab's top frame.
async fn read(tab: i32, url: &str) -> Result<RawPage, ReadError> {
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    let injection = Object::new();
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let _ = Reflect::set(&injection, &"func".into(), &page_reader());
    let args = Array::of1(&(page_text::MAX_READ_CHARS as f64).into());
    let _ = Reflect::set(&injection, &"args".into(), &args);
    let refused = |e: JsValue| ReadError::Refused(page_text::explain_read_error(url, &js_text(e)));
    let results = JsFuture::from(execute_script(&injection).map_err(refused)?)
        .await
        .map_err(refused)?;
    let unreadable = |detail: &str| ReadError::Unreadable {
        page: url.to_owned(),
        detail: detail.to_owned(),
    };
    let result = Reflect::get(&results, &0.into())
        .and_then(|first| Reflect::get(&first, &"result".into()))
        .ok()
        .filter(|r| r.is_object())
        .ok_or_else(|| unreadable("the page gave no answer"))?;
    let json = JSON::stringify(&result).map_err(|_| unreadable("its answer was not text"))?;
    RawPage::from_json(&String::from(json)).map_err(|e| unreadable(&e.to_string()))
}

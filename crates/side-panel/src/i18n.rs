//! The panel's static labels in the person's language, through Chrome's own mechanism:
//! `sidepanel.html` is written in English; [`LABELS`] names each label's message, and
//! `chrome.i18n.getMessage` gives its text in the UI language's catalog
//! (`extension/_locales/<lang>/messages.json`), English when the language has none. The page's
//! `lang` and `dir` follow the UI language, so a right-to-left language lays out right to left
//! even before its catalog exists. Sentences built at run time are core's messages, put into
//! words by `tandem_chrome::i18n` (see ARCHITECTURE.md, "Run-time sentences").

use wasm_bindgen::prelude::*;

use crate::dom;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getMessage)]
    fn get_message(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getUILanguage)]
    fn ui_language() -> Result<JsValue, JsValue>;
}

/// The catalog's sentence `key` with `args`, in the person's language (English for a key
/// the language's catalog lacks).
pub fn say(key: &str, args: Vec<tandem_core::i18n::Arg>) -> String {
    tandem_chrome::i18n::plain(&tandem_core::i18n::Msg::new(key, args))
}

/// Where a message goes on its element.
enum Put {
    Text,
    Label,
    Placeholder,
    Title,
}

/// Each static label of `sidepanel.html`: the element (a selector), where the text goes and
/// the message's name in `_locales/*/messages.json`. Kept here rather than as attributes in
/// the page, so the page stays plain HTML that names its controls in English; a control
/// missing from this table keeps its English words.
const LABELS: &[(&str, Put, &str)] = &[
    ("#debug-toggle", Put::Text, "debug"),
    ("#settings-toggle", Put::Text, "settings"),
    ("#settings-status", Put::Label, "settingsStatus"),
    ("#waiting", Put::Label, "waitingForYou"),
    ("#tool-approval", Put::Label, "toolProvider"),
    ("#tool-approval-allow", Put::Text, "allow"),
    ("#tool-approval-deny", Put::Text, "deny"),
    ("#waiting-show", Put::Text, "showTheQuestion"),
    ("#settings", Put::Label, "settings"),
    ("#settings h2", Put::Text, "settings"),
    ("#settings-close", Put::Text, "backToConversation"),
    ("#workflows-toggle", Put::Text, "workflowsTitle"),
    ("#workflows", Put::Label, "workflowsTitle"),
    ("#workflows h2", Put::Text, "workflowsTitle"),
    ("#workflows-close", Put::Text, "backToConversation"),
    (
        "#workflows > p.hint:not(#workflows-empty)",
        Put::Text,
        "workflowsHint",
    ),
    (
        "label[for=\"workflows-import\"]",
        Put::Text,
        "workflowsImport",
    ),
    ("#workflows-status", Put::Label, "workflowsStatus"),
    ("#workflows-list", Put::Label, "workflowsSaved"),
    ("#workflows-empty", Put::Text, "workflowsEmpty"),
    ("#token-meter", Put::Text, "meterNothing"),
    ("#task-save-workflow", Put::Text, "saveAsWorkflow"),
    ("#task-save-workflow", Put::Title, "saveAsWorkflowTitle"),
    ("#task-save-form", Put::Label, "saveAsWorkflow"),
    (
        "label[for=\"task-workflow-name\"]",
        Put::Text,
        "workflowNameLabel",
    ),
    ("#task-save-workflow-confirm", Put::Text, "save"),
    ("#task-save-workflow-confirm", Put::Label, "saveWorkflow"),
    ("#task-save-workflow-cancel", Put::Text, "cancel"),
    ("label[for=\"on-device\"]", Put::Text, "onDeviceModel"),
    (
        "#on-device option[value=\"auto\"]",
        Put::Text,
        "preferGeminiNanoOnThisDevice",
    ),
    ("#on-device option[value=\"cloud\"]", Put::Text, "cloudOnly"),
    (
        "#on-device option[value=\"nano\"]",
        Put::Text,
        "onDeviceOnlyNothingLeavesThis",
    ),
    ("#nano-status", Put::Label, "onDeviceModelStatus"),
    ("#nano-progress", Put::Label, "modelDownload"),
    ("#nano-download", Put::Text, "downloadOnDeviceModel"),
    ("label[for=\"provider\"]", Put::Text, "provider"),
    ("label[for=\"base-url\"]", Put::Text, "baseUrl"),
    ("label[for=\"model\"]", Put::Text, "model"),
    ("#list-models", Put::Text, "listModels"),
    ("#models-status", Put::Label, "modelList"),
    ("label[for=\"api-key\"]", Put::Text, "apiKey"),
    ("label[for=\"project-id\"]", Put::Text, "projectId"),
    ("label[for=\"app-id\"]", Put::Text, "appId"),
    (
        "#firebase-fields .hint",
        Put::Text,
        "fromYourFirebaseWebAppS",
    ),
    (
        "label[for=\"context-window\"]",
        Put::Text,
        "contextWindowTokens",
    ),
    ("#context-window-hint", Put::Text, "leaveEmptyToUseTheModel"),
    (
        "label[for=\"stall-seconds\"]",
        Put::Text,
        "stallLimitSeconds",
    ),
    (
        "#stall-seconds-hint",
        Put::Text,
        "anAnswerThatReceivesNothingFor",
    ),
    ("#agent-settings legend", Put::Text, "tasks"),
    ("label[for=\"allowed-sites\"]", Put::Text, "allowedSites"),
    ("label[for=\"blocked-sites\"]", Put::Text, "blockedSites"),
    ("#sites-hint", Put::Text, "oneHostPerLineLikeExample"),
    (
        "#approve-plan + span",
        Put::Text,
        "approveThePlanBeforeActing",
    ),
    (
        "label[for=\"token-limit\"]",
        Put::Text,
        "stopATaskOrAnswerAfterNTokens",
    ),
    (
        "#token-limit-hint",
        Put::Text,
        "countedFromWhatTheProviderReports",
    ),
    ("#granted-title", Put::Text, "sitesTandemMayActOn"),
    ("#granted-hint", Put::Text, "noneYetTandemAsksBeforeIts"),
    ("fieldset:has(#tool-providers) > legend", Put::Text, "tools"),
    ("#tool-providers", Put::Label, "toolProviders"),
    ("#tools-hint", Put::Text, "noToolProvidersYetExtensionsThat"),
    ("#mcp-open", Put::Text, "addMcpServer"),
    ("#mcp-form", Put::Label, "newMcpServer"),
    ("label[for=\"mcp-name\"]", Put::Text, "serverName"),
    ("label[for=\"mcp-url\"]", Put::Text, "serverUrl"),
    ("label[for=\"mcp-token\"]", Put::Text, "bearerTokenOptional"),
    (
        "label[for=\"mcp-headers\"]",
        Put::Text,
        "moreHeadersOptional",
    ),
    ("#mcp-headers-hint", Put::Text, "oneHeaderALineAsName"),
    ("#mcp-test", Put::Text, "testServer"),
    ("#mcp-add", Put::Text, "addServer"),
    ("#mcp-status", Put::Label, "mcpServerStatus"),
    ("#mcp-test-tools", Put::Label, "toolsTheServerOffers"),
    ("#webmcp-status", Put::Label, "pageTools"),
    ("#settings-save", Put::Text, "save"),
    ("#test-connection", Put::Text, "testConnection"),
    ("#connection-status", Put::Label, "connectionTest"),
    ("#conversation-actions", Put::Label, "conversationActions"),
    ("#export", Put::Text, "saveConversation"),
    ("#export", Put::Title, "downloadThisConversationAsAMarkdown"),
    ("#clear", Put::Text, "clearConversation"),
    ("#clear", Put::Title, "startOverForgetThisTabS"),
    ("#forget-all", Put::Text, "forgetEverything"),
    (
        "#forget-all",
        Put::Title,
        "forgetTheConversationsOfEveryTab",
    ),
    ("#debug", Put::Label, "debug"),
    ("#debug > .hint", Put::Text, "nothingSentYetKeptInMemory"),
    ("#memory-status", Put::Label, "memory"),
    ("#messages", Put::Label, "conversation"),
    ("#progress", Put::Label, "progress"),
    ("#task-mode", Put::Label, "currentTask"),
    ("#task-status", Put::Label, "taskStatus"),
    ("#task-notice", Put::Label, "taskNotice"),
    ("#task-pause", Put::Text, "pause"),
    ("#task-resume", Put::Text, "resume"),
    ("#task-continue", Put::Text, "continue"),
    ("#task-continue", Put::Title, "allowTheTaskAnotherCeilingS"),
    ("#task-cancel", Put::Text, "cancel"),
    ("#task-dismiss", Put::Text, "dismiss"),
    ("#task-dismiss", Put::Title, "forgetThisTaskAndEverythingIt"),
    ("#task-confirm", Put::Label, "approvalNeeded"),
    (
        "label[for=\"task-secret\"]",
        Put::Text,
        "passwordForThisField",
    ),
    ("#task-approve", Put::Text, "approve"),
    ("#task-deny", Put::Text, "deny"),
    ("#task-site", Put::Label, "siteAccess"),
    ("#task-site-once", Put::Text, "allowOnce"),
    ("#task-site-always", Put::Text, "alwaysAllowOnThisSite"),
    ("#task-site-deny", Put::Text, "deny"),
    ("#task-question", Put::Label, "questionFromTandem"),
    ("label[for=\"task-reply\"]", Put::Text, "answer"),
    ("#task-send-answer", Put::Text, "sendAnswer"),
    ("#task-guide", Put::Label, "guideTheTask"),
    ("label[for=\"task-note\"]", Put::Text, "noteForTheAgent"),
    ("#task-note", Put::Placeholder, "eGPickSizeMOr"),
    ("#task-send-note", Put::Text, "sendNote"),
    ("#task-did-it", Put::Text, "iDidThisMyself"),
    ("#task-add-tab", Put::Text, "addThisTabToTheTask"),
    ("#task-steps", Put::Label, "steps"),
    ("#task-answer", Put::Label, "finalAnswer"),
    (".modes", Put::Label, "composerMode"),
    ("#mode-chat", Put::Text, "chat"),
    ("#mode-task", Put::Text, "task"),
    ("#context-meter", Put::Label, "contextUsed"),
    ("#message", Put::Label, "message"),
    (
        "#message",
        Put::Placeholder,
        "askAnythingEnterSendsShiftEnter",
    ),
    ("#attachments", Put::Label, "attachedImages"),
    ("label[for=\"attach\"]", Put::Text, "attachImage"),
    ("#send", Put::Text, "send"),
    ("#stop", Put::Text, "stop"),
    ("#ask-page", Put::Text, "askAboutThisPage"),
    ("#ask-page", Put::Title, "sendTheQuestionInTheMessage"),
    ("#summarize-page", Put::Text, "summarizeThisPage"),
    ("#summarize-page", Put::Title, "summarizeTheMainTextOfThis"),
    ("#task", Put::Label, "task"),
    ("#task", Put::Placeholder, "aTaskForTandemOnThis"),
    ("#task-start", Put::Text, "startTask"),
];

/// Languages written right to left (their primary subtag).
const RTL: [&str; 8] = ["ar", "he", "iw", "fa", "ur", "ps", "sd", "yi"];

/// The message `name` in the UI language; `None` when there is none (or no `chrome.i18n`).
pub(crate) fn message(name: &str) -> Option<String> {
    get_message(name)
        .ok()
        .and_then(|v| v.as_string())
        .filter(|m| !m.is_empty())
}

/// `ar-EG` → right to left.
pub fn is_rtl(language: &str) -> bool {
    let primary = language
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    RTL.contains(&primary.as_str())
}

/// Puts the UI language's labels on the page and sets its `lang` and `dir`.
pub fn localize() {
    let Ok(document) = dom::document() else {
        return;
    };
    let language = ui_language()
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_else(|| "en".into());
    if let Some(root) = document.document_element() {
        dom::set_attr(&root, "lang", &language);
        dom::set_attr(&root, "dir", if is_rtl(&language) { "rtl" } else { "ltr" });
    }
    if let Some(title) = message("panelTitle") {
        document.set_title(&title);
    }
    for (selector, put, name) in LABELS {
        let Some(text) = message(name) else {
            continue;
        };
        let Ok(Some(el)) = document.query_selector(selector) else {
            continue;
        };
        match put {
            Put::Text => el.set_text_content(Some(&text)),
            Put::Label => dom::set_attr(&el, "aria-label", &text),
            Put::Placeholder => dom::set_attr(&el, "placeholder", &text),
            Put::Title => dom::set_attr(&el, "title", &text),
        }
    }
}

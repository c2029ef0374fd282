//! Settings' line about the on-device model: "Gemini Nano: available / downloading N% /
//! unavailable (reason)", its progress bar and its Download button. The worker is asked;
//! only the answer to the latest question is shown, and not before the form shows what is
//! stored (a filled line tells the person, and the tests, that the settings are in).

use std::cell::RefCell;

use tandem_core::decimal::decimal;
use tandem_core::i18n::{nested, text, Mark, Msg};
use tandem_core::protocol::PanelToWorker;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlProgressElement};

use crate::dom;
use crate::i18n::say;

/// One answer of the worker's: availability, download progress, the reason behind it.
struct Answer {
    availability: String,
    progress: Option<f64>,
    detail: Msg,
}

/// The line's state, one cell: what was asked last, whether the settings are read, and the
/// answer that waits for them.
#[derive(Default)]
struct Line {
    asked: Option<String>,
    settings_read: bool,
    waiting: Option<Answer>,
}

thread_local! {
    static LINE: RefCell<Line> = RefCell::new(Line::default());
}

/// Asks the worker what Gemini Nano can do; with `download`, to download it.
pub(super) fn ask(download: bool) {
    let request_id = dom::fresh_id("n");
    LINE.with(|l| l.borrow_mut().asked = Some(request_id.clone()));
    let message = if download {
        PanelToWorker::DownloadNano { request_id }
    } else {
        PanelToWorker::NanoStatus { request_id }
    };
    if let Err(e) = crate::port::post(&message) {
        show_when_read(Answer {
            availability: "unavailable".to_string(),
            progress: None,
            detail: Msg::new("nanoWorkerUnreachable", vec![text(e.to_string())]),
        });
    }
}

/// The question `request_id` was asked for the line by someone else (the bootstrap, before
/// the wasm was ready): its answer is the one to show.
pub(super) fn asked(request_id: &str) {
    LINE.with(|l| l.borrow_mut().asked = Some(request_id.to_string()));
}

/// The worker's answer to `request_id`: shown if it answers the latest question.
pub(super) fn answer(request_id: &str, availability: String, progress: Option<f64>, detail: Msg) {
    let latest = LINE.with(|l| l.borrow().asked.as_deref() == Some(request_id));
    if latest {
        show_when_read(Answer {
            availability,
            progress,
            detail,
        });
    }
}

/// The first read of the settings is done: an answer that waited for it is shown now.
pub(super) fn settings_loaded() {
    let waiting = LINE.with(|l| {
        let mut line = l.borrow_mut();
        line.settings_read = true;
        line.waiting.take()
    });
    if let Some(answer) = waiting {
        show(&answer);
    }
}

fn show_when_read(answer: Answer) {
    let read = LINE.with(|l| l.borrow().settings_read);
    if read {
        show(&answer);
    } else {
        LINE.with(|l| l.borrow_mut().waiting = Some(answer));
    }
}

fn show(answer: &Answer) {
    let Answer {
        availability,
        progress,
        detail,
    } = answer;
    let availability = availability.as_str();
    let progress = *progress;
    let detail = || nested(Mark::Plain, detail.clone());
    if let Ok(line) = dom::by_id::<HtmlElement>("nano-status") {
        let text = match availability {
            "downloading" => say(
                "nanoDownloading",
                vec![text(decimal(progress.unwrap_or(0.0) * 100.0, 0))],
            ),
            "available" => say("nanoAvailable", vec![]),
            "unavailable" => say("nanoUnavailable", vec![detail()]),
            "downloadable" => say("nanoDownloadable", vec![detail()]),
            other => say("nanoStatusOther", vec![text(other), detail()]),
        };
        line.set_text_content(Some(&text));
    }
    if let Ok(bar) = dom::by_id::<HtmlProgressElement>("nano-progress") {
        let shown =
            availability == "downloading" || (availability == "available" && progress.is_some());
        bar.set_hidden(!shown);
        // The number itself, not a string Rust formats: the browser writes the attribute.
        bar.set_value(progress.unwrap_or(0.0));
    }
    if let Ok(button) = dom::by_id::<HtmlButtonElement>("nano-download") {
        button.set_hidden(availability != "downloadable");
    }
}

//! Gemini Nano for Settings: what the on-device model can do here, and its download (the
//! user's click is the consent), with progress. Chat on Nano is the conversation's session
//! (`chat_session`).

use std::rc::Rc;

use tandem_core::decimal::{decimal, trimmed};
use tandem_core::i18n::{text, Msg};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::session::{Availability, NanoBackend, NanoCreateOptions, SessionConfig};
use wasm_bindgen_futures::spawn_local;

use crate::chrome::Port;
use crate::nano::{prompt_api_present, BrowserNano};
use crate::outbox::post;

pub async fn availability(nano: &BrowserNano) -> Result<Availability, Msg> {
    if !prompt_api_present() {
        return Err(Msg::key("nanoNoPromptApi"));
    }
    // The browser's own words, as it said them.
    nano.availability(&text_options())
        .await
        .map_err(|e| Msg::literal(e.to_string()))
}

fn text_options() -> NanoCreateOptions {
    NanoCreateOptions::for_session(&SessionConfig::default(), Vec::new())
}

/// Answers Settings' question "what can Nano do?"; with `download`, starts the model
/// download (the user's click is the consent) and reports its progress until it is there.
pub fn report_status(port: Port, request_id: String, download: bool) {
    spawn_local(async move {
        let send = |availability: &str, progress: Option<f64>, detail: Msg| {
            let _ = post(
                &port,
                &WorkerToPanel::NanoStatus {
                    request_id: request_id.clone(),
                    availability: availability.to_string(),
                    progress,
                    detail,
                },
            );
        };
        let m = crate::sessions::manager();
        let availability = match availability(m.nano()).await {
            Ok(a) => a,
            Err(why) => return send("unavailable", None, why),
        };
        let detail = match availability {
            Availability::Available => match crate::nano::params().await {
                Some(p) => Msg::new(
                    "nanoReadyLimits",
                    vec![
                        text(trimmed(
                            p.get("maxTopK").and_then(|v| v.as_f64()).unwrap_or(0.0),
                            0,
                        )),
                        text(trimmed(
                            p.get("maxTemperature")
                                .and_then(|v| v.as_f64())
                                .unwrap_or(0.0),
                            2,
                        )),
                    ],
                ),
                None => Msg::key("nanoReady"),
            },
            Availability::Downloadable => Msg::key("nanoCanDownload"),
            Availability::Downloading => Msg::key("nanoIsDownloading"),
            Availability::Unavailable => Msg::key("nanoCannotRun"),
        };
        let wants_download = download
            && matches!(
                availability,
                Availability::Downloadable | Availability::Downloading
            );
        if !wants_download {
            return send(availability.word(), None, detail);
        }
        let progress_port = port.clone();
        let progress_id = request_id.clone();
        let on_progress: Rc<dyn Fn(f64)> = Rc::new(move |loaded: f64| {
            let _ = post(
                &progress_port,
                &WorkerToPanel::NanoStatus {
                    request_id: progress_id.clone(),
                    availability: "downloading".into(),
                    progress: Some(loaded.clamp(0.0, 1.0)),
                    detail: Msg::new(
                        "nanoDownloadingPercent",
                        vec![text(decimal(loaded.clamp(0.0, 1.0) * 100.0, 0))],
                    ),
                },
            );
        });
        *m.nano().on_progress.borrow_mut() = Some(on_progress);
        let created = m.nano().create(&text_options()).await;
        *m.nano().on_progress.borrow_mut() = None;
        match created {
            Ok(model) => {
                // The download was the point; sessions are created per conversation.
                tandem_core::session::NanoModel::destroy(&model);
                send("available", Some(1.0), Msg::key("nanoReady"));
            }
            Err(e) => send(
                "unavailable",
                None,
                Msg::new("nanoDownloadFailed", vec![text(e.to_string())]),
            ),
        }
    });
}

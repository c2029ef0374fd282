//! "Save conversation": the conversation on screen as a Markdown file the browser downloads.
//! The document is made by `tandem_core::export`; this side adds the site and the date and
//! hands the browser a Blob through an `<a download>` click, so no permission is needed and
//! nothing is written anywhere but where the user's browser saves downloads.

use js_sys::Reflect;
use wasm_bindgen_futures::spawn_local;

use crate::dom::{self, DomError};

/// Why a conversation could not be saved, said to the user.
#[derive(Debug, thiserror::Error)]
enum ExportError {
    #[error("There is nothing to save yet: the conversation is empty.")]
    Empty,
    #[error(transparent)]
    Dom(#[from] DomError),
}

impl ExportError {
    /// The sentence in the person's language (the English above is for logs and tests).
    fn said(&self) -> String {
        match self {
            ExportError::Empty => crate::i18n::say("chatNothingToSave", vec![]),
            other => other.to_string(),
        }
    }
}

pub fn wire() -> Result<(), DomError> {
    dom::on("export", "click", |_: web_sys::Event| {
        spawn_local(async {
            let site = active_url()
                .await
                .and_then(|u| tandem_core::memory::domain_of(&u));
            if let Err(e) = save(site.as_deref()) {
                crate::alert::show_error(&e.said());
            }
        });
    })?;
    Ok(())
}

/// The URL of the tab active in the panel's window: the conversation on screen is its.
/// `None` when Chrome does not say (no tab, a page Tandem may not read).
async fn active_url() -> Option<String> {
    let tab = crate::chrome::active_tab().await?;
    Reflect::get(&tab, &"url".into()).ok()?.as_string()
}

fn save(site: Option<&str>) -> Result<(), ExportError> {
    let messages = super::messages();
    if messages.is_empty() {
        return Err(ExportError::Empty);
    }
    // ISO 8601 is ASCII, so slicing by bytes is safe: "2026-11-23T20:05:09.000Z".
    let iso: String = js_sys::Date::new_0().to_iso_string().into();
    let when = match (iso.get(..10), iso.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => iso.clone(),
    };
    let markdown = tandem_core::export::to_markdown(&messages, site, &when);
    let name = tandem_core::export::file_name(site, &iso);

    dom::download(&markdown, "text/markdown;charset=utf-8", &name)?;
    Ok(())
}

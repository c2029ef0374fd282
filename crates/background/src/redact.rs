//! The worker's side of `tandem_core::redact`: the saved credentials, refreshed whenever the
//! settings are read, and [`out`], which every message to a panel and every log line passes
//! through.

use std::cell::RefCell;

use tandem_core::settings::Settings;

thread_local! {
    static SECRETS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Remembers the credentials of `settings` (called on every read of the stored settings, so
/// the list is as fresh as the request that could echo them).
pub fn remember(settings: &Settings) {
    let secrets = tandem_core::redact::secrets_of(settings);
    SECRETS.with(|s| *s.borrow_mut() = secrets);
}

/// `text` without any saved credential or token-shaped word.
pub fn out(text: &str) -> String {
    SECRETS.with(|s| tandem_core::redact::redact(text, &s.borrow()))
}

//! The panel's alert line (`role=alert`): the one place every view says what went wrong.

use web_sys::HtmlElement;

use crate::dom;

/// Shows `message` on the alert line; an empty one hides it.
pub fn show_error(message: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("error") {
        line.set_text_content(Some(message));
        line.set_hidden(message.is_empty());
    }
}

//! The "Tasks" part of the Settings form: "Allowed sites", "Blocked sites" and "Approve the
//! plan before acting". `settings` calls [`show`] after loading and [`read_form`] on Save.

use tandem_core::provider::Settings;
use web_sys::{HtmlInputElement, HtmlTextAreaElement};

use crate::dom;

/// Puts the saved values in the form.
pub fn show(settings: &Settings) {
    let agent = &settings.agent;
    if let Ok(t) = dom::by_id::<HtmlTextAreaElement>("allowed-sites") {
        t.set_value(&agent.allowed_sites);
    }
    if let Ok(t) = dom::by_id::<HtmlTextAreaElement>("blocked-sites") {
        t.set_value(&agent.blocked_sites);
    }
    if let Ok(c) = dom::by_id::<HtmlInputElement>("approve-plan") {
        c.set_checked(agent.approve_plan);
    }
}

/// Copies the form into `settings`; a list that does not parse is refused with a sentence
/// (and nothing is changed).
pub fn read_form(settings: &mut Settings) -> Result<(), String> {
    let mut agent = settings.agent.clone();
    if let Ok(t) = dom::by_id::<HtmlTextAreaElement>("allowed-sites") {
        agent.allowed_sites = t.value().trim().to_string();
    }
    if let Ok(t) = dom::by_id::<HtmlTextAreaElement>("blocked-sites") {
        agent.blocked_sites = t.value().trim().to_string();
    }
    if let Ok(c) = dom::by_id::<HtmlInputElement>("approve-plan") {
        agent.approve_plan = c.checked();
    }
    agent.policy().map_err(|e| e.to_string())?;
    settings.agent = agent;
    Ok(())
}

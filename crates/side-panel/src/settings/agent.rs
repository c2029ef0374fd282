//! The "Tasks" part of the Settings form: "Allowed sites", "Blocked sites", "Approve the
//! plan before acting", "Stop a task or answer after N tokens" and the remembered "Sites Tandem may act on". `settings` calls
//! [`show`] after loading and [`read_form`] on Save.

use tandem_core::agent::cost::DEFAULT_TOKEN_LIMIT;
use tandem_core::agent::{SiteGrants, SITE_GRANTS_KEY};
use tandem_core::settings::Settings;

use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{HtmlElement, HtmlInputElement, HtmlTextAreaElement};

use crate::chrome;
use crate::dom::{self, DomError};

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
    // The default shows as the placeholder, so a later change of the default reaches people
    // who never set their own.
    if let Ok(i) = dom::by_id::<HtmlInputElement>("token-limit") {
        i.set_value(&if agent.token_limit == DEFAULT_TOKEN_LIMIT {
            String::new()
        } else {
            agent.token_limit.to_string()
        });
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
    if let Ok(i) = dom::by_id::<HtmlInputElement>("token-limit") {
        let typed = i.value().replace([',', ' ', '_'], "");
        agent.token_limit = match typed.trim() {
            "" => DEFAULT_TOKEN_LIMIT,
            n => n.parse::<u32>().map_err(|_| {
                format!("\"Stop a task or answer after N tokens\" takes a whole number of tokens, like 200000 (0: no limit), not \"{}\".", i.value().trim())
            })?,
        };
    }
    agent.policy().map_err(|e| e.to_string())?;
    settings.agent = agent;
    Ok(())
}

/// "Sites Tandem may act on": the sites remembered with "Always allow on this site", each
/// with Remove. Filled now and again whenever the stored list changes (the worker adds to it
/// during a task).
pub fn wire_sites() -> Result<(), DomError> {
    spawn_local(show_sites());
    // Each site's Remove: one listener for the list, which is rebuilt at every change.
    dom::on_each(
        "granted-sites",
        "button[data-host]",
        "click",
        |button, _: web_sys::Event| {
            if let Some(host) = button.get_attribute("data-host") {
                spawn_local(forget_site(host));
            }
        },
    )?;
    chrome::on_local_change(SITE_GRANTS_KEY, || spawn_local(show_sites()));
    Ok(())
}

async fn read_grants() -> Result<SiteGrants, String> {
    Ok(chrome::local_json(SITE_GRANTS_KEY)
        .await?
        .map(|json| SiteGrants::parse(&json))
        .unwrap_or_default())
}

async fn show_sites() {
    let grants = read_grants().await.unwrap_or_else(|e| {
        sites_hint(&format!("The remembered sites could not be read ({e})."));
        SiteGrants::default()
    });
    let Ok(list) = dom::by_id::<HtmlElement>("granted-sites") else {
        return;
    };
    list.set_text_content(None);
    for host in &grants.always {
        let Ok(item) = dom::create("li", "granted-site") else {
            return;
        };
        let Ok(name) = dom::create("span", "") else {
            return;
        };
        name.set_text_content(Some(host));
        let Ok(remove) = dom::create("button", "") else {
            return;
        };
        dom::set_attr(&remove, "type", "button");
        dom::set_attr(&remove, "aria-label", &format!("Remove {host}"));
        remove.set_text_content(Some("Remove"));
        dom::set_attr(&remove, "data-host", host);
        let _ = item.append_child(&name);
        let _ = item.append_child(&remove);
        let _ = list.append_child(&item);
    }
    list.set_hidden(grants.always.is_empty());
    sites_hint(&if grants.always.is_empty() {
        crate::i18n::say("noneYetTandemAsksBeforeIts", vec![])
    } else {
        String::new()
    });
}

/// Remove: Tandem asks again before acting on `host`.
async fn forget_site(host: String) {
    let result = async {
        let mut grants = read_grants().await?;
        grants.remove(&host);
        let value = js_sys::JSON::parse(&grants.to_json()).map_err(tandem_chrome::js_text)?;
        let promise = chrome::storage_local_set(&dom::items(SITE_GRANTS_KEY, &value))
            .map_err(tandem_chrome::js_text)?;
        JsFuture::from(promise)
            .await
            .map_err(tandem_chrome::js_text)?;
        Ok::<_, String>(())
    };
    match result.await {
        // storage.onChanged redraws the list.
        Ok(()) => {}
        Err(e) => sites_hint(&format!("{host} could not be removed ({e}).")),
    }
}

fn sites_hint(text: &str) {
    if let Ok(hint) = dom::by_id::<HtmlElement>("granted-hint") {
        hint.set_text_content(Some(text));
        hint.set_hidden(text.is_empty());
    }
}

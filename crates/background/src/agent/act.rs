//! Acting on the page: the action's effect in the tab, and the failure ladder for actions on
//! an element (locate it again in a fresh snapshot, or take it from the look the model
//! answered when the page has not changed since, ask the user where it needs approval,
//! highlight and act in one call, let the page settle).

use std::borrow::Cow;

use tandem_core::agent::task::{PendingConfirmation, TaskContext};
use tandem_core::agent::{
    approval_sentence, effect_of, effect_question, fence, leave_question, needs_confirmation,
    needs_leave_approval, tabs, Action, Approved, ConfirmReason, DriverCommand, Element,
    LocateError, ScrollTarget,
};

use super::page::{
    act_in_page, activate_tab, allowed, close_tab, go_back, host_of, lap, navigate, open_tab,
    settle, snapshot, unchanged_since_snapshot, NotActed, OnLook, Phase,
};
use super::run::{Loop, Observed};
use super::Session;
use crate::chrome;

impl Loop {
    /// Carries out `action`; returns the target's label and the result sentence.
    pub(super) async fn act(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
        action: &Action,
    ) -> (Option<String>, Result<String, String>) {
        let tab = ctx.tab_id;
        match action {
            Action::Navigate { url } => {
                if let Err(e) = allowed(&self.policy, url) {
                    return (None, Err(format!("not allowed: {e}")));
                }
                if let Err(e) = self.may_leave(ctx, session, observed, url).await {
                    return (None, Err(e));
                }
                match navigate(tab, url).await {
                    Ok(()) => (None, Ok(format!("opened {url}"))),
                    Err(e) => (None, Err(format!("could not open {url}: {e}"))),
                }
            }
            Action::Back => match go_back(tab).await {
                Ok(()) => (None, Ok("went back".into())),
                Err(e) => (None, Err(e.to_string())),
            },
            Action::Wait { ms } => {
                chrome::sleep(i32::try_from(*ms).unwrap_or(i32::MAX)).await;
                (None, Ok(format!("waited {ms} ms")))
            }
            Action::OpenTab { url } => {
                if let Err(e) = allowed(&self.policy, url) {
                    return (None, Err(format!("not allowed: {e}")));
                }
                if let Err(e) = self.may_leave(ctx, session, observed, url).await {
                    return (None, Err(e));
                }
                // The tab opens empty and joins the firewall before it loads the address: a
                // redirect on the way must meet the task's rules like in any of its tabs.
                match open_tab("about:blank").await {
                    Ok(id) => {
                        tabs::opened(ctx, id);
                        self.previous = None;
                        self.firewall.know(id);
                        self.firewall.sync(ctx).await;
                        match navigate(id, url).await {
                            Ok(()) => (
                                None,
                                Ok(format!("opened {url} in a new tab, now the current tab")),
                            ),
                            Err(e) => (None, Err(format!("could not open {url}: {e}"))),
                        }
                    }
                    Err(e) => (None, Err(format!("could not open {url}: {e}"))),
                }
            }
            Action::SwitchTab { tab: index } => {
                let before = ctx.tab_id;
                match tabs::switch_to(ctx, *index) {
                    Ok(id) => match activate_tab(id).await {
                        Ok(()) => {
                            self.previous = None;
                            (None, Ok(format!("switched to tab [{index}]")))
                        }
                        Err(e) => {
                            ctx.tab_id = before;
                            (None, Err(e.to_string()))
                        }
                    },
                    Err(e) => (None, Err(e.to_string())),
                }
            }
            Action::CloseTab => match tabs::close_current(ctx) {
                Ok((closed, next)) => {
                    if let Err(e) = close_tab(closed).await {
                        crate::log_error("closing a task tab failed", &e.to_string().into());
                    }
                    let _ = activate_tab(next).await;
                    self.previous = None;
                    (
                        None,
                        Ok("closed the tab; the previous tab is current again".into()),
                    )
                }
                Err(e) => (None, Err(e.to_string())),
            },
            Action::ExtractText { element: None } => match snapshot(tab, 4000).await {
                Ok(s) => {
                    let text = s.text.unwrap_or_default();
                    ctx.extracted.push(text.clone());
                    (None, Ok(fence("page text", &text)))
                }
                Err(e) => (None, Err(e.to_string())),
            },
            Action::Scroll {
                target: ScrollTarget::Page(_),
            } => {
                let Some(command) = action.driver_command() else {
                    return (None, Err("nothing to do".into()));
                };
                match act_in_page(tab, None, &command, false, None, OnLook::Any).await {
                    Ok(_) => (None, Ok("scrolled".into())),
                    Err(NotActed::Failed(e)) => (None, Err(e)),
                    Err(NotActed::Changed) => (None, Err("the page changed".into())),
                }
            }
            _ => self.act_on_element(ctx, session, observed, action).await,
        }
    }

    /// Going to a site that is neither the one the agent is on nor one the user named (in
    /// the task or a note) waits for the user's approval, with the whole URL shown: a page
    /// may ask the agent to carry what it read away in an address.
    async fn may_leave(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
        url: &str,
    ) -> Result<(), String> {
        let Some(target) = host_of(url) else {
            return Ok(()); // `allowed` already refused what has no host
        };
        let current = host_of(&observed.snapshot.url);
        let mut texts: Vec<&str> = vec![ctx.task.as_str()];
        texts.extend(ctx.notes.iter().map(String::as_str));
        if !needs_leave_approval(&target, current.as_deref(), &texts) {
            return Ok(());
        }
        let question = PendingConfirmation {
            action: "open a site".into(),
            target: None,
            reason: leave_question(url),
            secret: false,
            site: None,
            tool: None,
        };
        let approved = self.confirm(ctx, session, question).await;
        if approved {
            // The firewall lets the tab go there from now on.
            ctx.hosts_opened.push(target);
            self.firewall.sync(ctx).await;
            Ok(())
        } else {
            Err(format!(
                "you denied opening {target}; it was not opened. Do not try it again"
            ))
        }
    }

    /// The failure ladder: locate by signature in a fresh snapshot (the observed one when the
    /// page is unchanged since); if missing, refresh the map and try once more with a new
    /// snapshot; a second failure makes the planner re-plan.
    async fn act_on_element(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
        action: &Action,
    ) -> (Option<String>, Result<String, String>) {
        let tab = ctx.tab_id;
        let (Some(id), Some(command)) = (action.element(), action.driver_command()) else {
            return (None, Err("this action needs an element".into()));
        };
        let mut target = observed
            .map
            .element(id, &observed.snapshot)
            .map(|el| label(id, el));
        let mut last_error = String::new();
        // The look the model answered still holds when nothing changed since: no second
        // snapshot (on a large page, most of a step's own time). When the top frame's driver
        // watches the whole page (no frames of other origins), it checks that as it acts;
        // otherwise every frame is asked first.
        let whole_page = observed.snapshot.frames.iter().all(|f| f.accessible);
        let mut on_observed = whole_page || unchanged_since_snapshot(tab).await;
        let mut attempt = 0;
        while attempt < 2 {
            if attempt > 0 {
                chrome::sleep(400).await;
            }
            let fresh = if on_observed {
                Cow::Borrowed(&observed.snapshot)
            } else {
                match snapshot(tab, 0).await {
                    Ok(s) => Cow::Owned(s),
                    Err(e) => {
                        last_error = e.to_string();
                        attempt += 1;
                        continue;
                    }
                }
            };
            let started = js_sys::Date::now();
            let located = match &fresh {
                // The page the model saw: its element is the one it named, no search needed
                // (a search could only find it again, or call twins ambiguous).
                Cow::Borrowed(_) => observed
                    .map
                    .element(id, &observed.snapshot)
                    .ok_or(LocateError::UnknownId(id)),
                Cow::Owned(fresh) => observed.map.locate(id, fresh),
            };
            lap(Phase::Locate, started);
            let element = match located {
                Ok(el) => el.clone(),
                Err(e) => {
                    last_error = e.to_string();
                    attempt += 1;
                    on_observed = false;
                    continue;
                }
            };
            target = Some(label(id, &element));
            let mut command = command.clone();
            let mut typed_secret = false;
            // Data leaving for a site the task has not approved (a form posting elsewhere, a
            // link to another host) is asked about first, the destination first.
            let effect = effect_of(action, &element, &fresh, &Approved::of(ctx));
            if let Some(effect) = &effect {
                if on_observed && whole_page && !unchanged_since_snapshot(tab).await {
                    on_observed = false;
                    continue;
                }
                let question = PendingConfirmation {
                    action: action.to_json().to_string(),
                    target: target.clone(),
                    reason: effect_question(&element, effect),
                    secret: false,
                    site: None,
                    tool: None,
                };
                if !self.confirm(ctx, session, question).await {
                    return (
                        target,
                        Err(format!(
                            "you denied sending data to {}; nothing was done. Do not try it again",
                            effect.host()
                        )),
                    );
                }
                ctx.hosts_opened.push(effect.host().to_string());
                self.firewall.sync(ctx).await;
            }
            let reason = needs_confirmation(action, Some(&element), &fresh);
            let asked = reason.is_some() || effect.is_some();
            if let Some(reason) = reason {
                // The question takes the user's time: ask it once, about the page as it is.
                if on_observed && whole_page && !unchanged_since_snapshot(tab).await {
                    on_observed = false;
                    continue;
                }
                let secret = matches!(reason, ConfirmReason::EntersPassword);
                let question = PendingConfirmation {
                    action: action.to_json().to_string(),
                    target: target.clone(),
                    reason: approval_sentence(action, &element, &reason),
                    secret,
                    site: None,
                    tool: None,
                };
                let approved = self.confirm(ctx, session, question).await;
                let value = self.secret.borrow_mut().take();
                if let (true, Some(value), DriverCommand::Type { text, .. }) =
                    (secret, value, &mut command)
                {
                    *text = value;
                    typed_secret = true;
                }
                if !approved {
                    return (
                        target,
                        Err("you denied this action; it was not done. Do not try it again".into()),
                    );
                }
            }
            // The next step looks at the page again: the driver takes that look while it
            // watches this action's effects. The highlight goes with the act; the driver puts
            // it up once it has hit-tested the element. On the observed page's handle, the
            // driver first checks that the page is still the one observed (after a question,
            // the page was checked before it, as the user approved what they saw).
            let on_look = if on_observed && whole_page && !asked {
                OnLook::Expect
            } else {
                OnLook::Any
            };
            let handle = Some(element.handle.as_str());
            match act_in_page(tab, handle, &command, true, Some(800), on_look).await {
                Ok(acted) => {
                    // The driver watched the page until it was quiet; only a new document
                    // still loading is waited for here.
                    if acted.loading {
                        settle(tab).await;
                    }
                    if typed_secret {
                        return (
                            target,
                            Ok("typed (the value you entered in the panel)".into()),
                        );
                    }
                    return (target, Ok(acted.sentence));
                }
                // The page changed while the model thought: nothing was done, and no attempt
                // is spent; find the element in a fresh snapshot.
                Err(NotActed::Changed) => on_observed = false,
                Err(NotActed::Failed(e)) => {
                    last_error = e;
                    attempt += 1;
                    on_observed = false;
                }
            }
        }
        // Second failure: record it and let the planner re-plan before the next step.
        ctx.plan.clear();
        (target, Err(last_error))
    }
}

/// `[8] link "Blue backpack — $35"`, for the timeline.
fn label(id: u32, el: &Element) -> String {
    let role = el.effective_role().unwrap_or(el.tag.as_str());
    let name = if el.name.is_empty() {
        &el.text
    } else {
        &el.name
    };
    let name: String = name.chars().take(60).collect();
    format!("[{id}] {role} \"{name}\"")
}

//! Acting on the page: the action's effect in the tab, and the failure ladder for actions on
//! an element (locate it again in a fresh snapshot, or take it from the look the model
//! answered when the page has not changed since, ask the user where it needs approval,
//! highlight and act in one call, let the page settle).

use std::borrow::Cow;

use tandem_core::agent::flow::{flow_denied, flow_message};
use tandem_core::agent::report;
use tandem_core::agent::task::{PendingConfirmation, TaskContext};
use tandem_core::agent::{
    approval_message, effect_message, effect_of, fence, frame_of_handle, judge, leave_message,
    needs_leave_approval, seen_as_message, tabs, userinfo_message, wants_page_words, Action,
    Approved, ConfirmReason, DragTarget, DriverCommand, Element, LocateError, ScrollTarget, Step,
};
use tandem_core::i18n::{nested, text, Mark, Msg};

use super::hosts::host_of;
use super::page::{
    act_in_page, activate_tab, allowed, close_tab, go_back, lap, navigate, open_tab, settle,
    snapshot, snapshot_in_full, unchanged_since_snapshot, MapSource, NotActed, OnLook, Phase,
};
use super::run::{Loop, Observed};
use super::trusted;
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
                    return (None, Err(report::not_allowed(&e.to_string())));
                }
                if let Err(e) = self.may_go(ctx, session, observed, url).await {
                    return (None, Err(e));
                }
                match navigate(tab, url).await {
                    Ok(()) => (None, Ok(report::opened(url, false))),
                    Err(e) => (None, Err(report::not_opened(url, &e.to_string()))),
                }
            }
            Action::Back => match go_back(tab).await {
                Ok(()) => (None, Ok("went back".into())),
                Err(e) => (None, Err(e.to_string())),
            },
            Action::Wait { ms, text: None } => {
                chrome::sleep(i32::try_from(*ms).unwrap_or(i32::MAX)).await;
                (None, Ok(format!("waited {ms} ms")))
            }
            // The driver watches the page for the text (bounded by `ms`, at most
            // MAX_WAIT_MS): no snapshot per poll, and it answers as soon as the text shows.
            Action::Wait {
                ms,
                text: Some(text),
            } => {
                let command = DriverCommand::WaitText {
                    text: text.clone(),
                    ms: *ms,
                };
                match act_in_page(tab, None, &command, None, None, OnLook::Any).await {
                    Ok(acted) => (None, Ok(acted.sentence)),
                    Err(NotActed::Failed(e) | NotActed::Ignored { sentence: e, .. }) => {
                        (None, Err(e))
                    }
                    Err(NotActed::Changed) => (None, Err("the page changed".into())),
                }
            }
            // A key for whatever has focus: the page's own (Escape closing a popup).
            Action::Press { element: None, .. } => {
                let Some(command) = action.driver_command() else {
                    return (None, Err("nothing to do".into()));
                };
                match act_in_page(
                    tab,
                    None,
                    &command,
                    Some(&MapSource::From(self.previous.clone())),
                    None,
                    OnLook::Any,
                )
                .await
                {
                    Ok(acted) => {
                        if acted.loading {
                            settle(tab).await;
                        }
                        (None, Ok(acted.sentence))
                    }
                    Err(NotActed::Ignored { sentence, aim }) => (
                        None,
                        trusted::repeat(tab, None, &command, aim, sentence).await,
                    ),
                    Err(NotActed::Failed(e)) => (None, Err(e)),
                    Err(NotActed::Changed) => (None, Err("the page changed".into())),
                }
            }
            Action::OpenTab { url } => {
                if let Err(e) = allowed(&self.policy, url) {
                    return (None, Err(report::not_allowed(&e.to_string())));
                }
                if let Err(e) = self.may_go(ctx, session, observed, url).await {
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
                            Ok(()) => (None, Ok(report::opened(url, true))),
                            Err(e) => (None, Err(report::not_opened(url, &e))),
                        }
                    }
                    Err(e) => (None, Err(report::not_opened(url, &e.to_string()))),
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
                match act_in_page(tab, None, &command, None, None, OnLook::Any).await {
                    Ok(_) => (None, Ok("scrolled".into())),
                    Err(NotActed::Failed(e) | NotActed::Ignored { sentence: e, .. }) => {
                        (None, Err(e))
                    }
                    Err(NotActed::Changed) => (None, Err("the page changed".into())),
                }
            }
            _ => self.act_on_element(ctx, session, observed, action).await,
        }
    }

    /// Before opening `url`: values read on another site in its address, or a site nobody
    /// named (in the task or a note), wait for the user's approval, with the real host first
    /// and the whole URL shown: a page may ask the agent to carry what it read away in an
    /// address. One question at most: the data question also says when nobody named the site.
    /// A yes opens the task's firewall for that host.
    async fn may_go(
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
        let leaving = {
            let mut texts: Vec<&str> = vec![ctx.task.as_str()];
            texts.extend(ctx.notes.iter().map(String::as_str));
            needs_leave_approval(&target, current.as_deref(), &texts)
        };
        let carried = {
            let user = ctx.user_texts();
            ctx.read.carried(&target, url, &user)
        };
        let denied_leaving =
            format!("you denied opening {target}; it was not opened. Do not try it again");
        if !carried.is_empty() {
            let how = Msg::new(
                "flowInAddress",
                vec![
                    text(url),
                    nested(Mark::Plain, userinfo_message(url, &target)),
                ],
            );
            let mut reason = flow_message(&carried, &target, how);
            if leaving {
                reason = reason.then(Msg::new("flowNotNamed", vec![text(target.clone())]));
            }
            let question = PendingConfirmation::asking("send data to another site", None, reason);
            if self.confirm(ctx, session, question).await {
                ctx.read.approve(&carried, &target);
                ctx.hosts_opened.push(target);
                self.firewall.sync(ctx).await;
                return Ok(());
            }
            return Err(if leaving {
                denied_leaving
            } else {
                flow_denied(&carried, &target)
            });
        }
        if !leaving {
            return Ok(());
        }
        let question =
            PendingConfirmation::asking("open a site", None, leave_message(url, &target));
        let approved = self.confirm(ctx, session, question).await;
        if approved {
            // The firewall lets the tab go there from now on.
            ctx.hosts_opened.push(target);
            self.firewall.sync(ctx).await;
            Ok(())
        } else {
            Err(denied_leaving)
        }
    }

    /// Values the agent read on another site that `outgoing` (bound for `to`) carries wait
    /// for the user's approval, the values and both sites shown. `Err` is the step's result
    /// after a No.
    pub(super) async fn may_carry(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        to: &str,
        outgoing: &str,
        how: Msg,
    ) -> Result<(), String> {
        let carried = {
            let user = ctx.user_texts();
            ctx.read.carried(to, outgoing, &user)
        };
        if carried.is_empty() {
            return Ok(());
        }
        let question = PendingConfirmation::asking(
            "send data to another site",
            None,
            flow_message(&carried, to, how),
        );
        if self.confirm(ctx, session, question).await {
            ctx.read.approve(&carried, to);
            Ok(())
        } else {
            Err(flow_denied(&carried, to))
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
        let mut flow_checked = false;
        let mut attempt = 0;
        while attempt < 2 {
            if attempt > 0 {
                chrome::sleep(400).await;
            }
            let fresh = if on_observed {
                Cow::Borrowed(&observed.snapshot)
            } else {
                // Described in full: the element found in it is acted on and checked.
                match snapshot_in_full(tab).await {
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
            // Text typed on one site that carries what was read on another asks first (once:
            // the question does not come back when the ladder tries again).
            if let (Action::Type { text, .. }, false) = (action, flow_checked) {
                flow_checked = true;
                let to = frame_host(&fresh, &element);
                if let Some(to) = to {
                    let how = Msg::new(
                        "flowTypedInto",
                        vec![nested(Mark::Plain, seen_as_message(&element))],
                    );
                    if let Err(e) = self.may_carry(ctx, session, &to, text, how).await {
                        return (target, Err(e));
                    }
                    if self.stop.get() != super::Stop::No {
                        return (target, Err("stopped before acting".into()));
                    }
                }
            }
            let mut command = command.clone();
            let mut typed_secret = false;
            // A drag onto an element: that element's handle, from the same look, in the same
            // frame (the driver drags within one document).
            let mut drop_on = None;
            if let Action::Drag {
                to: DragTarget::Element(to),
                ..
            } = action
            {
                let found = match &fresh {
                    Cow::Borrowed(_) => observed
                        .map
                        .element(*to, &observed.snapshot)
                        .ok_or(LocateError::UnknownId(*to)),
                    Cow::Owned(fresh) => observed.map.locate(*to, fresh),
                };
                let drop = match found {
                    Ok(drop) => drop.clone(),
                    Err(e) => return (target, Err(format!("the drop target: {e}"))),
                };
                let (frame, local) = frame_of_handle(&drop.handle);
                if frame != frame_of_handle(&element.handle).0 {
                    return (
                        target,
                        Err("the drop target is in another frame than the element; nothing was done".into()),
                    );
                }
                if let DriverCommand::Drag { to, .. } = &mut command {
                    *to = Some(local.to_owned());
                }
                drop_on = Some(drop);
            }
            // Data leaving for a site the task has not approved (a form posting elsewhere, a
            // link to another host) is asked about first, the destination first.
            let effect = effect_of(action, &element, &fresh, &Approved::of(ctx));
            if let Some(effect) = &effect {
                if on_observed && whole_page && !unchanged_since_snapshot(tab).await {
                    on_observed = false;
                    continue;
                }
                let question = PendingConfirmation::asking(
                    action.to_json().to_string(),
                    target.clone(),
                    effect_message(&element, effect),
                );
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
            // The judge: whether this step waits for the person, and why (core `agent::judge`).
            // A confirmation's question is in the page's words, read only for such a step.
            let page_words = if wants_page_words(action, &element, &ctx.judged, ctx.actions_taken) {
                snapshot(tab, PAGE_WORDS).await.ok().and_then(|s| s.text)
            } else {
                None
            };
            let verdict = {
                let user = ctx.user_texts();
                judge(&Step {
                    action,
                    element: &element,
                    page: &fresh,
                    drop_on: drop_on.as_ref(),
                    page_words: page_words.as_deref(),
                    user_texts: &user,
                    memory: &ctx.judged,
                    step: ctx.actions_taken,
                })
            };
            let asked = verdict.is_some() || effect.is_some() || page_words.is_some();
            if let Some(verdict) = verdict {
                // The question takes the user's time: ask it once, about the page as it is.
                if on_observed && whole_page && !unchanged_since_snapshot(tab).await {
                    on_observed = false;
                    continue;
                }
                let reason = &verdict.reason;
                let secret = matches!(reason, ConfirmReason::EntersPassword);
                let mut question = PendingConfirmation::asking(
                    action.to_json().to_string(),
                    target.clone(),
                    approval_message(action, &element, reason),
                );
                question.secret = secret;
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
                ctx.judged.approve(&verdict);
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
            match act_in_page(
                tab,
                handle,
                &command,
                Some(&MapSource::From(self.previous.clone())),
                Some(800),
                on_look,
            )
            .await
            {
                Ok(acted) => {
                    ctx.judged.acted(action, &element);
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
                // The page did not react to script events: repeated once as trusted input
                // (not retried by the ladder: the action was done, and ignored).
                Err(NotActed::Ignored { sentence, aim }) => {
                    let repeated = trusted::repeat(tab, handle, &command, aim, sentence).await;
                    return (target, repeated);
                }
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

/// Characters of the page's text the judge reads for a confirmation's question.
const PAGE_WORDS: u32 = 4000;

/// The host of the document `el` is in: its frame's (a cross-origin frame is another
/// site), else the page's.
fn frame_host(page: &tandem_core::agent::Snapshot, el: &Element) -> Option<String> {
    if !el.frame.is_empty() {
        if let Some(frame) = page.frames.iter().find(|f| f.path == el.frame) {
            return host_of(&frame.url);
        }
    }
    host_of(&page.url)
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

//! The loop's question about what the task's firewall ([`super::firewall`]) held back during
//! a step, and where the tab goes after the answer.

use tandem_core::agent::task::{PendingConfirmation, TaskContext};
use tandem_core::agent::{held_message, Approved};

use super::firewall::{tabs_go_back, take_held, wait};
use super::page::{navigate, settle};
use super::run::{Loop, Stop};
use crate::sessions::Session;

impl Loop {
    /// After an action: each request the firewall held back is asked about, the
    /// destination first. Yes opens that host for the task and goes there again (a page
    /// address) or lets the model submit again (a form: its fields are gone with the blocked
    /// page); No returns the tab to `return_to`, the page the step acted on (not back in
    /// history: an open redirect would only run again). Either way the step's result says
    /// what happened; `outcome` stays when nothing was held back.
    pub(super) async fn held_back(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        outcome: Result<String, String>,
        return_to: &str,
    ) -> Result<String, String> {
        let mut result = outcome;
        for held in take_held() {
            let Some(host) = held.host() else { continue };
            // Blocked by another extension (an ad blocker), not by the task's rules.
            if Approved::of(ctx).allows(&host) {
                continue;
            }
            let question =
                PendingConfirmation::asking("send data to another site", None, held_message(&held));
            let approved = self.confirm(ctx, session, question).await;
            if self.stop.get() != Stop::No {
                return Err("stopped before acting".into());
            }
            let tab = held.tab.unwrap_or(ctx.tab_id);
            if approved {
                ctx.hosts_opened.push(host.clone());
                self.firewall.sync(ctx).await;
                result = if held.is_get() && !held.frame {
                    match navigate(tab, &held.url).await {
                        Ok(()) => Ok(format!("the page went to {host}, which the user allowed")),
                        Err(e) => Err(format!("could not go to {host}: {e}")),
                    }
                } else {
                    if !held.frame {
                        back(tab, ctx.tab_id, return_to).await;
                    }
                    Err(format!("the form was held back until the user allowed sending it to {host}; they allowed it now, so submit it again if the task needs it"))
                };
            } else {
                if !held.frame {
                    back(tab, ctx.tab_id, return_to).await;
                }
                result = Err(format!("this tried to send data to {host}, which the user refused; nothing was sent. Do not try it again"));
            }
        }
        result
    }
}

/// Away from the error page a blocked navigation left: the task's tab to the page the step
/// acted on, another tab back in its history.
async fn back(tab: i32, task_tab: i32, return_to: &str) {
    let went = if tab == task_tab {
        navigate(tab, return_to).await
    } else {
        let went = wait(tabs_go_back(tab)).await;
        settle(tab).await;
        went
    };
    if let Err(e) = went {
        crate::log_error("leaving a held-back page failed", &e.into());
    }
}

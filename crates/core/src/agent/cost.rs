//! The cost ceiling a person sets: "Stop a task or answer after N tokens". Tokens are counted
//! from what the providers reported (sent + received per attempt, the session's token log),
//! so the ceiling is checked between requests: one request may carry a task past it, the
//! next is never sent.
//!
//! A task's allowance starts at one ceiling's worth; reaching it pauses the task, and
//! Continue allows one more ceiling's worth from what was used ([`TokenAllowance::renew`]).
//! A chat answer (its tool rounds) stops at the ceiling.

use serde::{Deserialize, Serialize};

use crate::chat::group_thousands;

/// The ceiling when Settings says nothing: enough for a long task (about 30 steps of a
/// large page), small enough that a runaway model is stopped at a few cents to a dollar.
pub const DEFAULT_TOKEN_LIMIT: u32 = 200_000;

/// The tokens a task may use before it pauses. Kept in the task, so a Paused task that is
/// resumed after a worker restart still knows how much it was allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenAllowance {
    /// The total the task may reach (used so far included).
    pub until: u64,
}

impl TokenAllowance {
    /// What a task (re)starting with `used` tokens behind it may use, given the person's
    /// `limit`: a new task gets one ceiling's worth; a task paused at its ceiling gets one
    /// more from where it stopped (Continue); any other resumed task keeps its allowance.
    /// A limit of 0 means no ceiling.
    pub fn renew(previous: Option<Self>, used: u64, limit: u32) -> Option<Self> {
        if limit == 0 {
            return None;
        }
        match previous {
            Some(a) if used < a.until => Some(a),
            _ => Some(Self {
                until: used.saturating_add(u64::from(limit)),
            }),
        }
    }

    /// True when a task with `used` tokens behind it must not send another request.
    pub fn reached(self, used: u64) -> bool {
        used >= self.until
    }
}

/// True when an answer that used `used` tokens in its requests so far must not send another
/// (a `limit` of 0 means no ceiling).
pub fn answer_over(used: u64, limit: u32) -> bool {
    limit > 0 && used >= u64::from(limit)
}

/// Why a task paused at its ceiling, as the person reads it on the task card.
pub fn task_sentence(used: u64, limit: u32) -> String {
    format!(
        "The token limit was reached: this task used {} tokens, and the limit set in Settings is {} tokens. Press Continue to allow another {} tokens.",
        group_thousands(used),
        group_thousands(u64::from(limit)),
        group_thousands(u64::from(limit)),
    )
}

/// Why a chat answer stopped at the ceiling, shown under what it said so far.
pub fn answer_sentence(used: u64, limit: u32) -> String {
    format!(
        "Stopped: the token limit was reached. This answer used {} tokens, and the limit set in Settings is {} tokens.",
        group_thousands(used),
        group_thousands(u64::from(limit)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_task_gets_one_ceiling_and_pauses_when_it_is_reached() {
        let a = TokenAllowance::renew(None, 0, 1_000).unwrap();
        assert_eq!(a.until, 1_000);
        assert!(!a.reached(999));
        assert!(a.reached(1_000));
        assert!(a.reached(5_000), "one request may carry the task past it");
    }

    #[test]
    fn continue_allows_one_more_ceiling_from_where_the_task_stopped() {
        let paused = TokenAllowance { until: 1_000 };
        let a = TokenAllowance::renew(Some(paused), 1_300, 1_000).unwrap();
        assert_eq!(a.until, 2_300);
        assert!(!a.reached(1_300));
    }

    #[test]
    fn a_task_resumed_below_its_ceiling_keeps_its_allowance() {
        // Paused by the person at 400 tokens: Resume does not hand out a new ceiling.
        let a = TokenAllowance::renew(Some(TokenAllowance { until: 1_000 }), 400, 1_000);
        assert_eq!(a, Some(TokenAllowance { until: 1_000 }));
    }

    #[test]
    fn zero_means_no_ceiling() {
        assert_eq!(TokenAllowance::renew(None, 10, 0), None);
        assert!(!answer_over(u64::MAX, 0));
        assert!(answer_over(2_000, 2_000));
        assert!(!answer_over(1_999, 2_000));
    }

    #[test]
    fn the_sentences_say_what_happened_in_numbers_a_person_reads() {
        let s = task_sentence(201_345, 200_000);
        assert!(s.contains("token limit was reached"), "{s}");
        assert!(s.contains("201,345 tokens"), "{s}");
        assert!(s.contains("200,000"), "{s}");
        assert!(s.contains("Continue"), "{s}");
        let s = answer_sentence(3_100, 3_000);
        assert!(
            s.starts_with("Stopped: the token limit was reached."),
            "{s}"
        );
        assert!(s.contains("3,100 tokens"), "{s}");
    }

    #[test]
    fn a_task_pauses_at_its_allowance_with_continue_and_continue_renews_it() {
        use crate::agent::task::{TaskContext, TaskStatus, TaskView};
        let mut ctx = TaskContext::new("t", "buy", 1);
        ctx.token_allowance = TokenAllowance::renew(ctx.token_allowance, ctx.tokens_used(), 1_000);
        let step = |ctx: &mut TaskContext, tokens| {
            ctx.record_action("click".into(), None, Ok("ok".into()), None, Some(tokens))
        };
        step(&mut ctx, 600);
        assert!(!ctx.pause_at_token_limit(1_000));
        step(&mut ctx, 500);
        assert!(ctx.pause_at_token_limit(1_000));
        assert_eq!(ctx.status, TaskStatus::Paused);
        let reason = ctx.reason.clone().unwrap();
        assert!(reason.contains("1,100 tokens"), "{reason}");
        assert!(TaskView::from(&ctx).at_token_limit);
        // Continue: the run starts again with one more ceiling's worth.
        ctx.status = TaskStatus::Running;
        ctx.token_allowance = TokenAllowance::renew(ctx.token_allowance, ctx.tokens_used(), 1_000);
        assert!(!ctx.pause_at_token_limit(1_000));
        assert!(!TaskView::from(&ctx).at_token_limit);
        // A task stored before the allowance existed loads without one and never pauses.
        let mut old = TaskContext::new("o", "x", 1);
        step(&mut old, 5_000);
        assert!(!old.pause_at_token_limit(1_000));
    }
}

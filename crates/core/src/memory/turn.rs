//! One answer's input, in the mode the question arrived in. A follow-up goes through the
//! budget pipeline over the visible history, and what the budget leaves out for lack of room
//! is distilled into the system prompt's "Conversation context" rather than silently lost. A
//! selected-text question ("Ask Tandem") is sent alone, the selection fenced as data, with the
//! earlier conversation as private background notes.

use crate::hash::HashSet;

use super::prompt::PAST_SELECTIONS;
use super::{
    build_context, build_prompt_with, conversation_context, ContextMetrics, MemoryConfig,
    MemoryMessage, PromptMode, SessionContext,
};
use crate::budget::{
    compute_budget, Budget, BudgetError, BudgetSettings, Conversation, Reason, TokenCache,
};
use crate::chat::{ChatMessage, Role};
use crate::tokens::Estimator;

/// The question a selection is asked with when the user only chose "Ask Tandem".
pub const SELECTION_QUESTION: &str = "Explain this.";

/// How many times a follow-up's context is re-distilled when adding it to the system prompt
/// pushed more of the history out. Each round only adds older pairs; in practice one or two
/// rounds settle it.
const MAX_ROUNDS: usize = 4;

/// An answer to prepare: the conversation (hidden messages included) ending with the message
/// to answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    history: Vec<MemoryMessage>,
    /// Index in `history` of the message to answer when it is a selected-text question.
    selection_at: Option<usize>,
    /// What the budget pipeline sees (build its `Conversation` from these): the history in
    /// model form for a follow-up, the fenced question alone for a selection.
    pub messages: Vec<ChatMessage>,
}

/// What to send: the budget over [`Turn::messages`] and the system prompt it was made with.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub budget: Budget,
    pub system: String,
    /// The distilled context in the system prompt, if any: left-out pairs of a follow-up, or
    /// the private notes of a selected-text question.
    pub context: Option<ContextMetrics>,
}

impl Turn {
    pub fn new(history: Vec<MemoryMessage>) -> Self {
        let request = history
            .iter()
            .rposition(|m| !m.hidden && m.role != Role::System);
        let selection_at =
            request.filter(|&i| history[i].role == Role::User && history[i].quote.is_some());
        let messages = match selection_at {
            Some(i) => vec![history[i].to_model()],
            None => history.iter().map(MemoryMessage::to_model).collect(),
        };
        Self {
            history,
            selection_at,
            messages,
        }
    }

    /// Whether this answers a selected-text question (rather than a follow-up).
    pub fn is_selection(&self) -> bool {
        self.selection_at.is_some()
    }

    /// Budgets `conversation` (built from [`Turn::messages`]) under a system prompt that
    /// starts with `intro`.
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        &self,
        conversation: &Conversation<'_>,
        intro: &str,
        image_count: usize,
        context_limit: u32,
        settings: &BudgetSettings,
        config: &MemoryConfig,
        cache: &mut TokenCache,
    ) -> Result<Plan, BudgetError> {
        let estimator = Estimator::from_override(settings.chars_per_token);
        let mut budget_for = |system: &str| {
            compute_budget(
                conversation,
                Some(system),
                image_count,
                context_limit,
                settings,
                cache,
            )
        };
        if let Some(at) = self.selection_at {
            let request = &self.history[at];
            let quote = request.quote.clone().unwrap_or_default();
            let mode = match request.page {
                Some(_) => PromptMode::PageText { text: quote },
                None => PromptMode::NewSelection { selection: quote },
            };
            let prompt = |earlier: &SessionContext, config: &MemoryConfig| {
                build_prompt_with(
                    intro,
                    earlier,
                    config,
                    estimator,
                    mode.clone(),
                    &request.content,
                )
            };
            let bare = prompt(&session_of(std::iter::empty()), config);
            debug_assert_eq!(Some(&bare.user), self.messages.first().map(|m| &m.content));
            let mut plan = Plan {
                budget: budget_for(&bare.system)?,
                system: bare.system,
                context: None,
            };
            let earlier = session_of(self.history[..at].iter().cloned());
            let probe = prompt(
                &session_of([MemoryMessage::new(Role::User, "…", 0)].into_iter()),
                config,
            );
            let framing = estimator
                .count(&probe.system)
                .saturating_sub(estimator.count(&plan.system));
            let config = capped(config, &plan.budget, settings, framing);
            let noted = prompt(&earlier, &config);
            if noted.metrics.included > 0 {
                // Notes that do not fit beside the selection are left out.
                if let Ok(budget) = budget_for(&noted.system) {
                    plan = Plan {
                        budget,
                        system: noted.system,
                        context: Some(noted.metrics),
                    };
                }
            }
            return Ok(plan);
        }

        let mut base = intro.to_owned();
        if self.history.iter().any(|m| !m.hidden && m.quote.is_some()) {
            base.push_str("\n\n");
            base.push_str(crate::fence::FENCE_RULE);
            base.push_str(PAST_SELECTIONS);
        }
        let mut plan = Plan {
            budget: budget_for(&base)?,
            system: base.clone(),
            context: None,
        };
        let framing = estimator.count(&conversation_context("…"));
        let config = capped(config, &plan.budget, settings, framing);
        let mut distilled: Vec<String> = Vec::new();
        for _ in 0..MAX_ROUNDS {
            let left_out = left_out_for_room(&plan.budget);
            if left_out == distilled {
                break;
            }
            let built = build_context(
                &self.left_out_session(conversation, &left_out),
                &config,
                estimator,
            );
            // The fence rule is said once: `base` has it already when past selections are
            // fenced in the history.
            let context = conversation_context(&built.text);
            let context = match base.contains(crate::fence::FENCE_RULE) {
                true => context.replacen(&format!("\n\n{}", crate::fence::FENCE_RULE), "", 1),
                false => context,
            };
            let system = format!("{base}{context}");
            match budget_for(&system) {
                Ok(budget) => {
                    plan = Plan {
                        budget,
                        system,
                        context: (!built.text.is_empty()).then_some(built.metrics),
                    };
                    distilled = left_out;
                }
                // Not even the distilled context fits beside the message: send without it.
                Err(_) => break,
            }
        }
        Ok(plan)
    }

    /// The messages of the pairs `ids`, as a session to distil (oldest first, quotes kept).
    fn left_out_session(&self, conversation: &Conversation<'_>, ids: &[String]) -> SessionContext {
        let ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let messages = conversation
            .pairs
            .iter()
            .filter(|pair| ids.contains(pair.id))
            .flat_map(|pair| pair.user.into_iter().chain(pair.assistant))
            .map(|m| {
                // The original carries the quote the model form fenced into the content.
                self.history
                    .iter()
                    .find(|h| !m.id.is_empty() && h.id == m.id)
                    .cloned()
                    .unwrap_or_else(|| MemoryMessage::from_chat(m, 0))
            });
        session_of(messages)
    }
}

/// Ids of the pairs the budget left out for lack of room (not the hidden ones), oldest first.
fn left_out_for_room(budget: &Budget) -> Vec<String> {
    budget
        .excluded
        .iter()
        .filter(|(_, reason)| matches!(reason, Reason::NoRoom | Reason::Older))
        .map(|(id, _)| id.clone())
        .collect()
}

/// `config` with its token budget cut to half of the room `budget` (made without any context)
/// leaves for history, less the `framing` tokens of the wording around the context: the
/// distilled context never crowds the latest exchanges, or the question, out of the window.
fn capped(
    config: &MemoryConfig,
    budget: &Budget,
    settings: &BudgetSettings,
    framing: u32,
) -> MemoryConfig {
    let b = budget.breakdown;
    let room = b.history
        + b.remaining_for_response.saturating_sub(
            settings.assistant_response_allowance
                + settings
                    .user_request_allowance
                    .saturating_sub(b.user_text + b.user_images),
        );
    MemoryConfig {
        budget_tokens: config
            .budget_tokens
            .min((room / 2).saturating_sub(framing) as usize),
        ..config.clone()
    }
}

fn session_of(messages: impl Iterator<Item = MemoryMessage>) -> SessionContext {
    let mut session = SessionContext::new("", 0);
    session.messages = messages.collect();
    session
}

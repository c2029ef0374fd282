//! Which part of the conversation is sent: the context budget, and the request built from it.
//!
//! The visible history is cut into pairs (a user message and the assistant reply to it).
//! Pairs are taken newest first while they fit in what the context window leaves after the
//! system prompt, the new message and the reserve for the answer; the first pair that does
//! not fit ends the walk, so what is sent is always the most recent stretch of the
//! conversation, never a patchwork. A new message that does not fit on its own is an error
//! the user reads, never a silent truncation.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::chat::{ChatMessage, Role};
use crate::errors::{ErrorKind, ProviderError};
use crate::hash::BuildFnv1a;
use crate::request::{RequestMessage, RequestOptions, UniversalRequest};
use crate::stream::Usage;
use crate::tokens::{image_tokens, Estimator, MESSAGE_OVERHEAD};

/// The user's budget settings (stored with the rest of Settings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BudgetSettings {
    /// Replaces the estimator with a flat ASCII chars-per-token rate (for tokenisers the
    /// built-in estimate is known to miss).
    pub chars_per_token: Option<f32>,
    /// Tokens always kept for the new message, even when it is shorter (URA).
    pub user_request_allowance: u32,
    /// Tokens kept free for the answer (ARA). Requests should not ask for a longer answer.
    pub assistant_response_allowance: u32,
    /// How many times a provider's "context too long" may drop the oldest pair and retry.
    pub max_trim_attempts: u32,
    /// An answer that receives nothing for this long is given up with a sentence (a third of
    /// it, at most 20 s, and the user is told it is still being waited for).
    pub stall_seconds: u32,
}

impl Default for BudgetSettings {
    fn default() -> Self {
        Self {
            chars_per_token: None,
            user_request_allowance: 512,
            assistant_response_allowance: 2_048,
            max_trim_attempts: 3,
            stall_seconds: 60,
        }
    }
}

/// A user message and the assistant reply to it; either side can be missing (a reply that
/// failed, a greeting without a question). Its id is the id of its first message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair<'a> {
    pub id: &'a str,
    pub user: Option<&'a ChatMessage>,
    pub assistant: Option<&'a ChatMessage>,
}

impl<'a> Pair<'a> {
    fn messages(self) -> impl Iterator<Item = &'a ChatMessage> {
        self.user.into_iter().chain(self.assistant)
    }

    /// Cheap guard against a cached count going stale when a message is edited or a reply
    /// regenerated under the same pair id: the byte lengths of both sides. An edit that keeps
    /// the exact lengths is missed, and then the estimate barely moves anyway.
    fn fingerprint(self) -> u64 {
        let len = |m: Option<&ChatMessage>| {
            m.map_or(0, |m| {
                let results: usize = m.tool_results.iter().map(|r| r.content.len()).sum();
                (m.content.len() + results) as u64 + 1
            })
        };
        (len(self.user) << 32) ^ len(self.assistant)
    }
}

/// A conversation ready to budget: visible history as pairs, plus the new request.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation<'a> {
    /// Oldest first.
    pub pairs: Vec<Pair<'a>>,
    /// Ids of the messages the user hid from the context.
    pub hidden: Vec<&'a str>,
    /// The last visible message: the one to answer.
    pub request: &'a ChatMessage,
}

impl<'a> Conversation<'a> {
    /// Pairs the visible messages. Hidden messages are dropped before pairing (the visible
    /// answer to a hidden question stands as a pair of its own); system-role messages in the
    /// history are skipped (the system prompt travels separately).
    pub fn from_messages(messages: &'a [ChatMessage]) -> Result<Self, BudgetError> {
        let hidden = messages
            .iter()
            .filter(|m| m.hidden)
            .map(|m| m.id.as_str())
            .collect();
        let mut visible = messages
            .iter()
            .filter(|m| !m.hidden && m.role != Role::System);
        let request = visible
            .next_back()
            .filter(|m| m.role == Role::User)
            .ok_or(BudgetError::NoRequest)?;
        let mut pairs: Vec<Pair<'a>> = Vec::new();
        for message in visible {
            match (message.role, pairs.last_mut()) {
                (Role::Assistant, Some(open))
                    if open.user.is_some() && open.assistant.is_none() =>
                {
                    open.assistant = Some(message);
                }
                (Role::Assistant, _) => pairs.push(Pair {
                    id: &message.id,
                    user: None,
                    assistant: Some(message),
                }),
                _ => pairs.push(Pair {
                    id: &message.id,
                    user: Some(message),
                    assistant: None,
                }),
            }
        }
        Ok(Self {
            pairs,
            hidden,
            request,
        })
    }
}

/// Per-pair token counts, kept by the caller between sends so each pair is estimated once.
#[derive(Clone, Debug, Default)]
pub struct TokenCache {
    // FNV-1a rather than std's SipHash, which took a tenth of a cold budget (each pair's id
    // is hashed twice); the ids are the chat's own.
    entries: HashMap<String, CachedCount, BuildFnv1a>,
    estimator: Estimator,
    estimator_calls: u64,
}

#[derive(Clone, Copy, Debug)]
struct CachedCount {
    tokens: u32,
    /// `None` for counts from provider usage, taken over by the pair's first budget.
    fingerprint: Option<u64>,
}

impl TokenCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many pairs have been run through the estimator (cache misses), for tests and the
    /// Debug drawer.
    pub fn estimator_calls(&self) -> u64 {
        self.estimator_calls
    }

    /// Replaces the estimate of the pair just answered with what the provider counted. Only
    /// the output is attributable to the pair: the reported input covers the whole prompt, and
    /// subtracting our estimate of the rest would move that estimate's error onto this pair.
    pub fn record_usage(&mut self, budget: &Budget, usage: Usage) {
        if budget.request_id.is_empty() || usage.output == 0 {
            return;
        }
        let tokens = budget
            .breakdown
            .user_text
            .saturating_add(usage.output)
            .saturating_add(MESSAGE_OVERHEAD);
        self.entries.insert(
            budget.request_id.clone(),
            CachedCount {
                tokens,
                fingerprint: None,
            },
        );
    }

    fn use_estimator(&mut self, estimator: Estimator) {
        if self.estimator != estimator {
            // Counts made with another rate are not comparable.
            self.entries.clear();
            self.estimator = estimator;
        }
    }

    fn pair_tokens(&mut self, pair: Pair<'_>) -> u32 {
        let fingerprint = pair.fingerprint();
        if let Some(hit) = self.entries.get_mut(pair.id) {
            if hit.fingerprint.is_none_or(|f| f == fingerprint) {
                hit.fingerprint = Some(fingerprint);
                return hit.tokens;
            }
        }
        self.estimator_calls += 1;
        let estimator = self.estimator;
        let tokens =
            pair.messages()
                .map(|m| {
                    // An agent step's native call and its result are sent too (see build_request).
                    let calls = m.tool_calls.iter().map(|c| {
                        estimator.count(&c.name) + estimator.count(&c.arguments.to_string())
                    });
                    let results = m
                        .tool_results
                        .iter()
                        .map(|r| estimator.count(&r.name) + estimator.count(&r.content));
                    calls
                        .chain(results)
                        .fold(estimator.count(&m.content), u32::saturating_add)
                        .saturating_add(MESSAGE_OVERHEAD)
                })
                .sum();
        // Messages without ids (older stored chats) cannot be told apart: never cache them.
        if !pair.id.is_empty() {
            self.entries.insert(
                pair.id.to_string(),
                CachedCount {
                    tokens,
                    fingerprint: Some(fingerprint),
                },
            );
        }
        tokens
    }
}

/// Why a pair (or a hidden message) is not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The user hid the message.
    Hidden,
    /// The newest pair that did not fit.
    NoRoom,
    /// Older than a pair that did not fit (not even counted).
    Older,
    /// Dropped after the provider said the prompt was too long.
    Trimmed,
}

/// Where the context window goes, in (estimated) tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    pub system: u32,
    pub user_text: u32,
    pub user_images: u32,
    pub history: u32,
    /// A turn's tool rounds (the model's calls and their results), sent after the request.
    #[serde(skip_serializing_if = "is_zero")]
    pub tool_rounds: u32,
    pub total_input: u32,
    pub remaining_for_response: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What one send includes, for the request builder and the Debug drawer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub context_limit: u32,
    /// Id of the message being answered (the pair it will start).
    pub request_id: String,
    /// Ids of the pairs sent, oldest first; always the newest pairs of the history.
    pub included_pairs: Vec<String>,
    pub excluded: Vec<(String, Reason)>,
    /// Tokens of each included pair, in the order of `included_pairs`.
    pub pair_tokens: Vec<u32>,
    pub breakdown: Breakdown,
}

impl Budget {
    /// Counts `tokens` more input sent after the request (a turn's tool rounds). Pairs of
    /// history make room for them, oldest first, until `allowance` is left for the answer
    /// again (or no pair is left: the provider then says whether it fits).
    pub fn count_after_request(&mut self, tokens: u32, allowance: u32) {
        if tokens == 0 {
            return;
        }
        self.breakdown.tool_rounds = self.breakdown.tool_rounds.saturating_add(tokens);
        self.breakdown.total_input = self.breakdown.total_input.saturating_add(tokens);
        self.breakdown.remaining_for_response =
            self.breakdown.remaining_for_response.saturating_sub(tokens);
        while self.breakdown.remaining_for_response < allowance && !self.included_pairs.is_empty() {
            let id = self.included_pairs.remove(0);
            let freed = self.pair_tokens.remove(0);
            self.excluded.push((id, Reason::NoRoom));
            self.breakdown.history -= freed;
            self.breakdown.total_input -= freed;
            self.breakdown.remaining_for_response += freed;
        }
    }

    /// Drops the oldest included pair (after a context-overflow answer). `None` when no pair
    /// is left to drop.
    pub fn trim_oldest(&mut self) -> Option<String> {
        if self.included_pairs.is_empty() {
            return None;
        }
        let id = self.included_pairs.remove(0);
        let tokens = self.pair_tokens.remove(0);
        self.excluded.push((id.clone(), Reason::Trimmed));
        self.breakdown.history -= tokens;
        self.breakdown.total_input -= tokens;
        self.breakdown.remaining_for_response += tokens;
        Some(id)
    }
}

/// Problems found before anything is sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error("There is nothing to send: the conversation has to end with a message from you.")]
    NoRequest,
    #[error(
        "Your message is about {request} tokens{}, but this model takes at most {limit} tokens \
         and {} of them are needed for the system prompt and the answer. Shorten the message{} \
         or pick a model with a larger context window.",
        images_note(*images),
        system + answer,
        if *images > 0 { ", attach fewer images" } else { "" }
    )]
    TooLarge {
        request: u32,
        images: usize,
        limit: u32,
        system: u32,
        answer: u32,
    },
}

fn images_note(images: usize) -> String {
    match images {
        0 => String::new(),
        1 => " including its image".to_string(),
        n => format!(" including its {n} images"),
    }
}

impl From<BudgetError> for ProviderError {
    fn from(e: BudgetError) -> Self {
        let kind = match e {
            BudgetError::NoRequest => ErrorKind::Provider,
            BudgetError::TooLarge { .. } => ErrorKind::ContextOverflow,
        };
        ProviderError::new(kind, e.to_string())
    }
}

/// Chooses the pairs to send. `image_count` images go with the new message; `system` is the
/// system prompt, if any.
pub fn compute_budget(
    conversation: &Conversation<'_>,
    system: Option<&str>,
    image_count: usize,
    context_limit: u32,
    settings: &BudgetSettings,
    cache: &mut TokenCache,
) -> Result<Budget, BudgetError> {
    let images = (image_count, image_tokens(image_count));
    compute_budget_with_images(conversation, system, images, context_limit, settings, cache)
}

/// [`compute_budget`] for images whose size is known: `images` is their count and their
/// tokens for the provider at hand (an agent's screenshot, `crate::vision::image_tokens_for`).
pub fn compute_budget_with_images(
    conversation: &Conversation<'_>,
    system: Option<&str>,
    (image_count, user_images): (usize, u32),
    context_limit: u32,
    settings: &BudgetSettings,
    cache: &mut TokenCache,
) -> Result<Budget, BudgetError> {
    cache.use_estimator(Estimator::from_override(settings.chars_per_token));
    let message_tokens = |text: &str| cache.estimator.count(text).saturating_add(MESSAGE_OVERHEAD);
    let system_tokens = system.filter(|s| !s.is_empty()).map_or(0, message_tokens);
    // An agent step's request may carry the results of the previous step's native call.
    let results = conversation
        .request
        .tool_results
        .iter()
        .map(|r| cache.estimator.count(&r.content))
        .fold(0, u32::saturating_add);
    let user_text = message_tokens(&conversation.request.content).saturating_add(results);
    let request = user_text.saturating_add(user_images);
    let answer = settings.assistant_response_allowance;
    if u64::from(system_tokens) + u64::from(request) + u64::from(answer) > u64::from(context_limit)
    {
        return Err(BudgetError::TooLarge {
            request,
            images: image_count,
            limit: context_limit,
            system: system_tokens,
            answer,
        });
    }
    let space = context_limit - system_tokens - request - answer;
    // The allowance keeps room for the request even when this one is short.
    let space = space.saturating_sub(settings.user_request_allowance.saturating_sub(request));

    let mut history = 0u32;
    let mut newest_first = Vec::new();
    let mut excluded = Vec::new();
    let mut pairs = conversation.pairs.iter().rev();
    for pair in pairs.by_ref() {
        let tokens = cache.pair_tokens(*pair);
        if tokens > space - history {
            excluded.push((pair.id.to_string(), Reason::NoRoom));
            break;
        }
        history += tokens;
        newest_first.push((pair.id.to_string(), tokens));
    }
    excluded.extend(pairs.map(|p| (p.id.to_string(), Reason::Older)));
    excluded.reverse();
    excluded.extend(
        conversation
            .hidden
            .iter()
            .map(|id| (id.to_string(), Reason::Hidden)),
    );
    let (included_pairs, pair_tokens) = newest_first.into_iter().rev().unzip();

    let total_input = system_tokens + request + history;
    Ok(Budget {
        context_limit,
        request_id: conversation.request.id.clone(),
        included_pairs,
        excluded,
        pair_tokens,
        breakdown: Breakdown {
            system: system_tokens,
            user_text,
            user_images,
            history,
            tool_rounds: 0,
            total_input,
            remaining_for_response: context_limit - total_input,
        },
    })
}

/// Estimated tokens of messages sent after the request (tool rounds): their text, the calls'
/// names and arguments and the results, as the budget counts a message.
pub fn after_request_tokens(messages: &[RequestMessage], settings: &BudgetSettings) -> u32 {
    let estimator = Estimator::from_override(settings.chars_per_token);
    messages
        .iter()
        .map(|m| {
            let calls = m.tool_calls.iter().map(|c| {
                estimator
                    .count(&c.name)
                    .saturating_add(estimator.count(&c.arguments.to_string()))
            });
            // A tool's images cost what attached images do.
            let results = m.tool_results.iter().map(|r| {
                estimator
                    .count(&r.name)
                    .saturating_add(estimator.count(&r.content))
                    .saturating_add(image_tokens(r.images.len()))
            });
            calls
                .chain(results)
                .fold(estimator.count(&m.content), u32::saturating_add)
                .saturating_add(MESSAGE_OVERHEAD)
        })
        .fold(0, u32::saturating_add)
}

/// The request for `budget`: the included pairs oldest first, then the new message with its
/// images. `budget` must come from this `conversation` (its pairs are the newest ones).
pub fn build_request(
    budget: &Budget,
    conversation: &Conversation<'_>,
    system: Option<&str>,
    images: &[String],
    model: &str,
    options: RequestOptions,
) -> UniversalRequest {
    let skip = conversation
        .pairs
        .len()
        .saturating_sub(budget.included_pairs.len());
    let included = &conversation.pairs[skip..];
    debug_assert!(included
        .iter()
        .map(|p| p.id)
        .eq(budget.included_pairs.iter().map(String::as_str)));
    // The text, and an agent step's native call or its results (which `normalized` drops
    // when the budget left out their partner).
    let text = |m: &ChatMessage| RequestMessage {
        tool_calls: m.tool_calls.clone(),
        tool_results: m.tool_results.clone(),
        ..RequestMessage::text(m.role, m.content.clone())
    };
    let mut messages: Vec<RequestMessage> = included
        .iter()
        .flat_map(|p| p.messages())
        .map(text)
        .collect();
    messages.push(RequestMessage {
        images: images.to_vec(),
        ..text(conversation.request)
    });
    UniversalRequest {
        model: model.to_string(),
        system: system.filter(|s| !s.is_empty()).map(str::to_string),
        messages,
        options,
        tools: Vec::new(),
        output: None,
    }
    .normalized()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    #[test]
    fn a_tools_images_count_like_attached_ones() {
        let outcome = crate::request::ToolOutcome {
            call_id: "c".into(),
            name: "chart".into(),
            content: "The chart.".into(),
            is_error: false,
            images: Vec::new(),
        };
        let turn = |images: usize| {
            vec![RequestMessage {
                tool_results: vec![crate::request::ToolOutcome {
                    images: vec!["data:image/png;base64,iVBORw0KGgo=".into(); images],
                    ..outcome.clone()
                }],
                ..RequestMessage::text(Role::User, "")
            }]
        };
        let settings = BudgetSettings::default();
        assert_eq!(
            after_request_tokens(&turn(2), &settings),
            after_request_tokens(&turn(0), &settings) + image_tokens(2)
        );
    }

    /// `"u1 40"`: message `u1` from the user with 40 words; `a…` is the assistant; a trailing
    /// `!` on the id hides the message.
    fn messages(spec: &[&str]) -> Vec<ChatMessage> {
        spec.iter()
            .map(|s| {
                let (id, words) = s.split_once(' ').unwrap_or((s, "1"));
                let role = if id.starts_with('a') {
                    Role::Assistant
                } else {
                    Role::User
                };
                let words: usize = words.parse().unwrap();
                let mut m = ChatMessage::new(role, vec!["word"; words].join(" "));
                m.id = id.trim_end_matches('!').to_string();
                m.hidden = id.ends_with('!');
                m
            })
            .collect()
    }

    const SETTINGS: BudgetSettings = BudgetSettings {
        chars_per_token: None,
        user_request_allowance: 20,
        assistant_response_allowance: 50,
        max_trim_attempts: 3,
        stall_seconds: 60,
    };

    fn check(spec: &[&str], limit: u32, images: usize, expect: Expect) {
        let msgs = messages(spec);
        let conv = Conversation::from_messages(&msgs).unwrap();
        let shown = match compute_budget(
            &conv,
            Some("Be brief."),
            images,
            limit,
            &SETTINGS,
            &mut TokenCache::new(),
        ) {
            Ok(Budget {
                included_pairs,
                pair_tokens,
                excluded,
                breakdown: b,
                ..
            }) => format!(
                "included {included_pairs:?} {pair_tokens:?}\nexcluded {excluded:?}\n\
                 system {} + text {} + images {} + history {} = input {}; {} left for the answer",
                b.system,
                b.user_text,
                b.user_images,
                b.history,
                b.total_input,
                b.remaining_for_response
            ),
            Err(e) => e.to_string(),
        };
        expect.assert_eq(&shown);
    }

    #[test]
    fn budgets() {
        check(
            &["u1 10"],
            200,
            0,
            expect![[r#"
                included [] []
                excluded []
                system 7 + text 14 + images 0 + history 0 = input 21; 179 left for the answer"#]],
        );
        // All fits.
        check(
            &["u1 10", "a1 20", "u2 10", "a2 20", "u3 5"],
            400,
            0,
            expect![[r#"
                included ["u1", "u2"] [37, 37]
                excluded []
                system 7 + text 9 + images 0 + history 74 = input 90; 310 left for the answer"#]],
        );
        // The oldest pair does not fit: it and everything older are left out.
        check(
            &["u0 5", "a0 5", "u1 60", "a1 60", "u2 10", "a2 20", "u3 5"],
            200,
            0,
            expect![[r#"
                included ["u2"] [37]
                excluded [("u0", Older), ("u1", NoRoom)]
                system 7 + text 9 + images 0 + history 37 = input 53; 147 left for the answer"#]],
        );
        // Hidden messages are dropped before pairing; the hidden question's answer pairs alone.
        check(
            &["u1! 80", "a1 10", "u2 10", "a2! 50", "u3 5"],
            200,
            0,
            expect![[r#"
                included ["a1", "u2"] [14, 14]
                excluded [("u1", Hidden), ("a2", Hidden)]
                system 7 + text 9 + images 0 + history 28 = input 44; 156 left for the answer"#]],
        );
        // The new message cannot fit even alone.
        check(
            &["u1 10", "a1 10", "u2 300"],
            200,
            0,
            expect!["Your message is about 289 tokens, but this model takes at most 200 tokens and 57 of them are needed for the system prompt and the answer. Shorten the message or pick a model with a larger context window."],
        );
        // Images count against the new message.
        check(
            &["u1 10", "a1 10", "u2 5"],
            1_000,
            1,
            expect![[r#"
                included ["u1"] [28]
                excluded []
                system 7 + text 9 + images 765 + history 28 = input 809; 191 left for the answer"#]],
        );
        check(
            &["u1 5"],
            1_000,
            2,
            expect!["Your message is about 1539 tokens including its 2 images, but this model takes at most 1000 tokens and 57 of them are needed for the system prompt and the answer. Shorten the message, attach fewer images or pick a model with a larger context window."],
        );
    }

    #[test]
    fn conversation_must_end_with_a_visible_user_message() {
        for spec in [&[][..], &["u1 3", "a1 3"], &["u1 3", "a1 3", "u2! 3"]] {
            assert_eq!(
                Conversation::from_messages(&messages(spec)),
                Err(BudgetError::NoRequest)
            );
        }
    }

    #[test]
    fn a_screenshot_is_counted_at_its_own_estimate() {
        let msgs = messages(&["u1:10", "a1:10", "u2:5"]);
        let conv = Conversation::from_messages(&msgs).unwrap();
        let with = |tokens| {
            compute_budget_with_images(
                &conv,
                None,
                (1, tokens),
                10_000,
                &SETTINGS,
                &mut TokenCache::new(),
            )
            .unwrap()
            .breakdown
        };
        let (small, large) = (with(258), with(1105));
        assert_eq!((small.user_images, large.user_images), (258, 1105));
        assert_eq!(large.total_input - small.total_input, 1105 - 258);
        // Too large for the window: said with the image.
        let err = compute_budget_with_images(
            &conv,
            None,
            (1, 9_990),
            10_000,
            &SETTINGS,
            &mut TokenCache::new(),
        );
        assert!(matches!(err, Err(BudgetError::TooLarge { images: 1, .. })));
    }

    #[test]
    fn request_is_chronological_with_images_on_the_new_message() {
        let msgs = messages(&["u1 1", "a1 2", "u2 3", "a2 4", "u3 5"]);
        let conv = Conversation::from_messages(&msgs).unwrap();
        let mut budget =
            compute_budget(&conv, None, 1, 10_000, &SETTINGS, &mut TokenCache::new()).unwrap();
        budget.trim_oldest();
        let images = vec!["data:image/png;base64,AAAA".to_string()];
        let req = build_request(
            &budget,
            &conv,
            Some(""),
            &images,
            "gpt-4o",
            RequestOptions::default(),
        );
        let shown: Vec<_> = req
            .messages
            .iter()
            .map(|m| (m.role, m.content.split(' ').count(), m.images.len()))
            .collect();
        assert_eq!(
            shown,
            [
                (Role::User, 3, 0),
                (Role::Assistant, 4, 0),
                (Role::User, 5, 1)
            ]
        );
        assert_eq!(req.system, None);
    }

    #[test]
    fn provider_usage_replaces_the_estimate() {
        let mut msgs = messages(&["u1 10"]);
        let mut cache = TokenCache::new();
        let conv = Conversation::from_messages(&msgs).unwrap();
        let budget = compute_budget(&conv, None, 0, 1_000, &SETTINGS, &mut cache).unwrap();
        cache.record_usage(
            &budget,
            Usage {
                input: 30,
                output: 100,
            },
        );
        msgs.extend(messages(&["a1 20", "u2 5"]));
        let conv = Conversation::from_messages(&msgs).unwrap();
        let budget = compute_budget(&conv, None, 0, 1_000, &SETTINGS, &mut cache).unwrap();
        assert_eq!(
            budget.pair_tokens,
            [budget_user_text(10) + 100 + MESSAGE_OVERHEAD]
        );
        assert_eq!(cache.estimator_calls(), 0);
        // Regenerating the answer under the same pair id invalidates the count.
        msgs[1].content.push_str(" more");
        let conv = Conversation::from_messages(&msgs).unwrap();
        compute_budget(&conv, None, 0, 1_000, &SETTINGS, &mut cache).unwrap();
        assert_eq!(cache.estimator_calls(), 1);
    }

    fn budget_user_text(words: usize) -> u32 {
        Estimator::Classified.count(&vec!["word"; words].join(" ")) + MESSAGE_OVERHEAD
    }

    fn conversation_spec() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec((0usize..80, 0usize..80, any::<bool>()), 0..25).prop_map(|pairs| {
            let mut spec: Vec<String> = pairs
                .iter()
                .enumerate()
                .flat_map(|(i, (u, a, hide))| {
                    [
                        format!("u{i}{} {u}", if *hide { "!" } else { "" }),
                        format!("a{i} {a}"),
                    ]
                })
                .collect();
            spec.push("u-new 8".to_string());
            spec
        })
    }

    proptest! {
        #[test]
        fn included_pairs_are_the_newest_and_fit(
            spec in conversation_spec(),
            limit in 0u32..3_000,
            images in 0usize..3,
        ) {
            let msgs = messages(&spec.iter().map(String::as_str).collect::<Vec<_>>());
            let conv = Conversation::from_messages(&msgs).unwrap();
            let mut cache = TokenCache::new();
            let budget = compute_budget(&conv, Some("sys"), images, limit, &SETTINGS, &mut cache);
            let Ok(budget) = budget else {
                return Ok(());
            };
            let ids: Vec<&str> = conv.pairs.iter().map(|p| p.id).collect();
            let included: Vec<&str> = budget.included_pairs.iter().map(String::as_str).collect();
            prop_assert!(ids.ends_with(&included));
            let b = budget.breakdown;
            let request = b.user_text + b.user_images;
            let reserves = SETTINGS.assistant_response_allowance
                + SETTINGS.user_request_allowance.saturating_sub(request);
            // The answer's reserve always fits; the request's allowance only limits history
            // (a short message is never refused because the allowance would not fit).
            prop_assert!(b.total_input + SETTINGS.assistant_response_allowance <= limit);
            if b.history > 0 {
                prop_assert!(b.total_input + reserves <= limit);
            }
            let history: u32 = budget.pair_tokens.iter().sum();
            prop_assert_eq!(b.total_input, b.system + request + history);
        }

        #[test]
        fn each_pair_is_estimated_once(
            spec in conversation_spec(),
            limits in prop::collection::vec(0u32..5_000, 1..5),
        ) {
            let msgs = messages(&spec.iter().map(String::as_str).collect::<Vec<_>>());
            let conv = Conversation::from_messages(&msgs).unwrap();
            let mut cache = TokenCache::new();
            let mut measured = std::collections::HashSet::new();
            for limit in limits {
                if let Ok(b) = compute_budget(&conv, None, 0, limit, &SETTINGS, &mut cache) {
                    let no_room = b.excluded.iter().filter(|(_, r)| *r == Reason::NoRoom);
                    let no_room = no_room.map(|(id, _)| id.clone());
                    measured.extend(b.included_pairs.iter().cloned().chain(no_room));
                }
                prop_assert_eq!(cache.estimator_calls(), measured.len() as u64);
            }
        }
    }
}

//! `cargo bench -p tandem-core --bench session`: prints figures, asserts nothing.
//!
//! Tokens sent per step of a scripted 10-step agent task (a planner step, then navigator
//! steps), step-scoped (a new session with the full prompt every step, as extensions do today)
//! against task-scoped (one `HybridSession` for the task), on the fake Gemini Nano and on the
//! fake stateless cloud API; on the cloud also a 30-step task, beside what peer extensions send
//! (their system prompt + the history of actions and results + only the newest page state, in
//! browser-use's shape: the history as a block in the one user message). Task-scoped steps are
//! given their compact form, as the agent gives it, so the cloud sends older turns compacted.
//! First a breakdown of where Tandem's tokens go: what is sent once per request (system prompt
//! parts, schema instructions) and what per turn.
//! Tokens are `tandem_core::tokens` estimates, counted the same way for every design and
//! provider (`MESSAGE_OVERHEAD` per message included).

use pollster::block_on;
use tandem_core::agent::task::{self, PageSeen, TaskContext};
use tandem_core::chat::{ChatMessage, Role};
use tandem_core::fence::fence;
use tandem_core::provider::ProviderKind;
use tandem_core::request::UniversalRequest;
use tandem_core::session::testing::{scripted_reply, FakeCloud, FakeNano, Fault, RecordingSleeper};
use tandem_core::session::{
    Availability, CloudConfig, NanoError, Preferred, SessionConfig, SessionManager, TokenRecord,
};
use tandem_core::tokens::{estimate_tokens, MESSAGE_OVERHEAD};

type Manager = SessionManager<FakeNano, FakeCloud, RecordingSleeper>;

fn main() {
    let task = Task::new(10);
    println!(
        "Scripted task: {} steps (1 planner + {} navigator), Tandem's own prompts. Estimated tokens: system \
         prompt {}, schema instructions {}, step {}-{}, compact step {}-{}, Tandem's reply {}-{}, a peer's \
         history entry {}-{}.",
        task.turns.len(),
        task.turns.len() - 1,
        estimate_tokens(&task.system),
        estimate_tokens(&task.schema),
        task.turns.iter().map(|t| estimate_tokens(t)).min().unwrap_or(0),
        task.turns.iter().map(|t| estimate_tokens(t)).max().unwrap_or(0),
        task.summaries.iter().map(|t| estimate_tokens(t)).min().unwrap_or(0),
        task.summaries.iter().map(|t| estimate_tokens(t)).max().unwrap_or(0),
        task.turns.iter().map(|t| estimate_tokens(&tandem_reply(t))).min().unwrap_or(0),
        task.turns.iter().map(|t| estimate_tokens(&tandem_reply(t))).max().unwrap_or(0),
        task.peer_history.iter().map(|t| estimate_tokens(t)).min().unwrap_or(0),
        task.peer_history.iter().map(|t| estimate_tokens(t)).max().unwrap_or(0),
    );
    breakdown(&task);
    nano(&task);
    cloud(&task);
    cloud(&Task::new(30));
    failover(&task);
}

/// Where the tokens of a cloud request go: each part of the system text (sent with every
/// request of the task, byte-stable, so a provider's prompt cache serves it), and what each
/// turn adds. Parts are found in the system prompt by the texts they are made of.
fn breakdown(task: &Task) {
    let t = |s: &str| estimate_tokens(s);
    let system = &task.system;
    let legend = tandem_core::agent::LIST_LEGEND;
    let fence_rule = tandem_core::fence::FENCE_RULE;
    let compact_legend = system
        .lines()
        .find(|l| l.starts_with("Earlier turns"))
        .unwrap_or_default();
    let rest = [legend, fence_rule, compact_legend]
        .iter()
        .fold(system.clone(), |s, part| s.replacen(part, "", 1));
    println!();
    println!("Breakdown, estimated tokens (characters):");
    println!(
        "  sent with every request (the system text, byte-stable across the task's requests):"
    );
    for (name, text) in [
        ("system prompt", system.as_str()),
        ("  of it: the element list's legend", legend),
        ("  of it: the compact turns' legend", compact_legend),
        ("  of it: the fence rule", fence_rule),
        ("  of it: roles, task and language rules", rest.as_str()),
        ("schema instructions (the actions)", task.schema.as_str()),
    ] {
        println!("    {name:<42} {:>5} ({})", t(text), text.chars().count());
    }
    let lines = task.schema.lines().count();
    println!(
        "    schema instructions: {lines} lines, {:.1} tokens a line",
        f64::from(t(&task.schema)) / lines.max(1) as f64
    );
    let navigator = task.turns.get(1).map(String::as_str).unwrap_or_default();
    let state = navigator
        .find("⟦untrusted data: element list")
        .map_or(navigator, |at| &navigator[at..]);
    let header = navigator.replacen(state, "", 1);
    println!("  sent once, in the newest turn:");
    println!(
        "    {:<42} {:>5}",
        "navigator turn, without the page state",
        t(&header)
    );
    println!("    {:<42} {:>5}", "page state (element list)", t(state));
    println!("  kept for every earlier step (the compact turn and the model's answer):");
    let pair =
        |i: usize| t(&task.summaries[i]) + t(&kept_reply(&task.turns[i])) + 2 * MESSAGE_OVERHEAD;
    if let Some(last) = task.summaries.len().checked_sub(1) {
        println!(
            "    {:<42} {:>5}  e.g. {:?}",
            "a navigator step",
            pair(last),
            task.summaries[last]
        );
        println!("    {:<42} {:>5}", "the planner step", pair(0));
    }
    println!(
        "    {:<42} {:>5}",
        "a peer's step (answer and result)",
        task.peer_history.first().map_or(0, |h| t(h))
    );
}

fn nano(task: &Task) {
    let full = task.step_scoped(Preferred::Nano, History::Full).0;
    let replies = task.step_scoped(Preferred::Nano, History::RepliesOnly).0;
    let state = task.step_scoped(Preferred::Nano, History::None).0;
    let scoped = task.task_scoped(Preferred::Nano, None, true).0;
    println!();
    println!("Gemini Nano (fake Prompt API): tokens sent per step");
    println!(
        "{:>5} {:>13} {:>13} {:>13} {:>12}",
        "step", "step-scoped", "step-scoped", "step-scoped", "task-scoped"
    );
    println!(
        "{:>5} {:>13} {:>13} {:>13} {:>12}",
        "", "full prompt", "peer baseline", "state only", ""
    );
    for i in 0..task.turns.len() {
        println!(
            "{:>5} {:>13} {:>13} {:>13} {:>12}",
            i + 1,
            full[i],
            replies[i],
            state[i],
            scoped[i]
        );
    }
    let (f, r, s, t) = (sum(&full), sum(&replies), sum(&state), sum(&scoped));
    println!("{:>5} {f:>13} {r:>13} {s:>13} {t:>12}", "total");
    println!(
        "ratio task-scoped / step-scoped: {:.2} (full prompt), {:.2} (peer baseline), {:.2} (state only); \
         target <= 0.40 against the full prompt",
        ratio(t, f),
        ratio(t, r),
        ratio(t, s)
    );
    println!(
        "  full prompt = system + schema instructions + every earlier state and reply + the new state: the \
         context the task-scoped session holds. peer baseline: a peer's system prompt, its history of actions and \
         results, the new state; state only keeps no history at all."
    );
}

fn cloud(task: &Task) {
    let steps = task.turns.len();
    let (full, full_requests) = task.step_scoped(Preferred::Cloud, History::Full);
    let (peers, _) = task.step_scoped(Preferred::Cloud, History::RepliesOnly);
    let (peers_own, _) = task.step_scoped(Preferred::Cloud, History::PeerOnTandemsPrompt);
    let (whole, whole_requests) = task.task_scoped(Preferred::Cloud, None, false);
    let (scoped, requests) = task.task_scoped(Preferred::Cloud, None, true);
    let fresh = new_tokens(&requests);
    println!();
    println!(
        "Cloud, stateless chat API (fake OpenAI gpt-4o), {steps}-step task: tokens sent per step"
    );
    println!(
        "{:>5} {:>13} {:>15} {:>13} {:>13} {:>22}",
        "step",
        "step-scoped",
        "peer baseline",
        "task-scoped",
        "task-scoped",
        "task-scoped compact,"
    );
    println!(
        "{:>5} {:>13} {:>15} {:>13} {:>13} {:>22}",
        "", "full prompt", "actions+newest", "whole turns", "compact", "not in previous prefix"
    );
    for i in 0..steps {
        println!(
            "{:>5} {:>13} {:>15} {:>13} {:>13} {:>22}",
            i + 1,
            full[i],
            peers[i],
            whole[i],
            scoped[i],
            fresh[i]
        );
    }
    let (f, p, w, t, n) = (
        sum(&full),
        sum(&peers),
        sum(&whole),
        sum(&scoped),
        sum(&fresh),
    );
    println!("{:>5} {f:>13} {p:>15} {w:>13} {t:>13} {n:>22}", "total");
    println!(
        "ratio task-scoped / step-scoped full prompt: {:.3} compact (target <= 0.35; {:.2} with whole turns, \
         whose requests equal step-scoped ones: {})",
        ratio(t, f),
        ratio(w, f),
        full_requests == whole_requests
    );
    println!(
        "ratio task-scoped compact / peer baseline ({steps} steps; the peer's system prompt + history of actions \
         and results + newest page state): {:.3} ({t} / {p} tokens; target <= 0.8)",
        ratio(t, p)
    );
    let po = sum(&peers_own);
    println!(
        "  against the same peer history with Tandem's own system prompt and schema instructions in place of \
         the peer's: {:.3} ({t} / {po} tokens)",
        ratio(t, po)
    );
    println!(
        "uncached share with provider prompt caching: {n} of {t} tokens = {:.2} (target <= 0.17): each request \
         repeats the previous one up to its last message, byte for byte (prefix stable: {})",
        ratio(n, t),
        prefix_stable(&requests)
    );
    let whole_fresh = sum(&new_tokens(&whole_requests));
    println!(
        "  with whole turns: uncached {whole_fresh} of {w} tokens = {:.2}; compacting adds each \
         turn's summary to the uncached part once ({} more uncached tokens in all)",
        ratio(whole_fresh, w),
        n.saturating_sub(whole_fresh)
    );
    // What the share hides: caching discounts the cached part, it does not remove it. Billed
    // at a cached token's price relative to an uncached one (OpenAI 0.5, Anthropic and Gemini
    // about 0.1), compact turns cost less than whole ones at every rate.
    for (provider, rate) in [("OpenAI", 0.5), ("Anthropic/Gemini", 0.1)] {
        let billed = |uncached: u32, all: u32| {
            f64::from(uncached) + rate * f64::from(all.saturating_sub(uncached))
        };
        println!(
            "  billed as uncached tokens with cached ones at {rate} ({provider}): compact {:.0}, whole turns {:.0}",
            billed(n, t),
            billed(whole_fresh, w)
        );
    }
    println!(
        "  largest request: {} tokens compact, {} with whole turns",
        scoped.iter().max().unwrap_or(&0),
        whole.iter().max().unwrap_or(&0)
    );
}

/// Whether each request repeats the previous one up to its last message.
fn prefix_stable(requests: &[UniversalRequest]) -> bool {
    requests.windows(2).all(|w| {
        let (a, b) = (&w[0], &w[1]);
        let keep = a.messages.len().saturating_sub(1);
        a.system == b.system && b.messages.len() > keep && a.messages[..keep] == b.messages[..keep]
    })
}

fn failover(task: &Task) {
    let failed = 5;
    let (sent, _) = task.task_scoped(Preferred::Auto, Some(failed), true);
    let (whole, _) = task.task_scoped(Preferred::Auto, Some(failed), false);
    println!();
    println!(
        "Task-scoped with a Nano failure at step {} (Auto): Nano until then, the failed step re-run on the \
         cloud from the transcript (in the compact view), the cloud after",
        failed + 1
    );
    println!(
        "  the failover step sends {} tokens ({} with whole turns)",
        sent[failed], whole[failed]
    );
    let cells: Vec<String> = sent.iter().map(u32::to_string).collect();
    println!(
        "  per step: {}; total {} (ratio to Nano step-scoped full prompt: {:.2})",
        cells.join(" "),
        sum(&sent),
        ratio(
            sum(&sent),
            sum(&task.step_scoped(Preferred::Nano, History::Full).0)
        )
    );
}

#[derive(Clone, Copy, PartialEq)]
enum History {
    Full,
    /// The peer baseline: a peer's system prompt, its history of actions and results, the
    /// newest page state.
    RepliesOnly,
    /// The same with Tandem's system prompt and schema instructions in place of the peer's:
    /// only the history differs.
    PeerOnTandemsPrompt,
    None,
}

/// The shortest system prompt of the peers the baseline models, in `tokens` estimates:
/// browser-use's `browser_use/agent/system_prompts/system_prompt_flash.md` (3,224 characters,
/// 688 tokens, Nov 2026; its default `system_prompt.md` is 24,550 characters, Nanobrowser's
/// navigator prompt with its security rules about 9,900). Their action lists come on top (as
/// tool or output schemas): the baseline gives them Tandem's schema instructions, which
/// describe the same actions, so every cut of Tandem's action schema lowers the baseline too.
const PEER_SYSTEM_TOKENS: u32 = 688;

/// A peer's request for a step: the earlier steps' entries as a history block of the one user
/// message, then the page state (browser-use: `<agent_history>` then `<browser_state>`).
fn peer_turn(history: &[String], turn: &str) -> String {
    if history.is_empty() {
        return turn.to_string();
    }
    format!(
        "<agent_history>\n{}\n</agent_history>\n{turn}",
        history.join("\n")
    )
}

struct Task {
    system: String,
    schema: String,
    turns: Vec<String>,
    /// Each turn's compact form, as the agent gives it (`task::navigator_summary`).
    summaries: Vec<String>,
    /// What peer extensions keep of each step in their history (the model's evaluation,
    /// memory and next goal with its action: `scripted_reply`'s shape).
    peer_history: Vec<String>,
    /// A peer's system prompt: [`PEER_SYSTEM_TOKENS`] of prose, then the action list.
    peer_system: String,
}

impl Task {
    /// Tandem's own prompt, schema instructions, turns and compact turns (from `agent::task`),
    /// around a page state of ~500 tokens per step; the model answers as Tandem's navigator
    /// and planner do ([`tandem_reply`]).
    fn new(steps: usize) -> Self {
        let mut words = Words(0x2545_f491_4f6c_dd1d);
        let goal = "compare three laptops under 1000 EUR";
        let mut ctx = TaskContext::new("bench", goal, 40);
        let mut turns = Vec::new();
        let mut summaries = Vec::new();
        let mut previous: Option<(String, String)> = None;
        for i in 0..steps {
            let url = format!("https://shop.example/laptops/{i}");
            let title = format!("Laptop {i} - Shop");
            let state = fence("element list", &words.text(480));
            let page = PageSeen {
                url: &url,
                title: &title,
                change: task::page_change(
                    previous.as_ref().map(|(u, f)| (u.as_str(), f.as_str())),
                    &url,
                    "b",
                ),
            };
            if i == 0 {
                turns.push(task::planner_turn(&ctx, &state, None));
                summaries.push(task::planner_summary(&ctx, &page, false));
                ctx.plan =
                    "1. Open each laptop under 1000 EUR. 2. Note its price. 3. Compare.".into();
            } else {
                turns.push(task::navigator_turn(&ctx, &state));
                summaries.push(task::navigator_summary(&ctx, &page));
                ctx.record_action(
                    r#"{"action":"click","element":12}"#.into(),
                    Some(format!("[12] link \"Laptop {}\"", i + 1)),
                    Ok("clicked; the page changed".into()),
                    None,
                    None,
                );
                ctx.actions_taken = i as u32;
            }
            previous = Some((url, "b".into()));
        }
        // A peer keeps the model's answer (evaluation, memory, next goal, action) and the
        // action's result, the same result Tandem's turns carry.
        let peer_history = turns
            .iter()
            .map(|t| {
                format!(
                    "{}\nAction result: clicked; the page changed",
                    scripted_reply(t)
                )
            })
            .collect();
        let peer_system = format!(
            "{}\n\n{}",
            words.text(PEER_SYSTEM_TOKENS),
            task::schema_instructions()
        );
        Self {
            system: task::system_prompt(),
            schema: task::schema_instructions(),
            turns,
            summaries,
            peer_history,
            peer_system,
        }
    }

    fn peer_config(&self, preferred: Preferred) -> SessionConfig {
        SessionConfig {
            system_prompt: self.peer_system.clone(),
            preferred,
            ..SessionConfig::default()
        }
    }

    fn config(&self, preferred: Preferred, history: Vec<ChatMessage>) -> SessionConfig {
        SessionConfig {
            system_prompt: self.system.clone(),
            schema_instructions: self.schema.clone(),
            initial_history: history,
            preferred,
            ..SessionConfig::default()
        }
    }

    /// One session for the task; `fail_at`: the Nano prompt that fails; `compact`: each step
    /// is given its compact form.
    fn task_scoped(
        &self,
        preferred: Preferred,
        fail_at: Option<usize>,
        compact: bool,
    ) -> (Vec<u32>, Vec<UniversalRequest>) {
        let m = manager();
        if let Some(call) = fail_at {
            let lost = NanoError::new("InvalidStateError", "The session has been destroyed.");
            m.nano().fault_at(call, Fault::Fail(lost));
        }
        let run = m.run_task(self.config(preferred, Vec::new()), async |s| {
            for (turn, summary) in self.turns.iter().zip(&self.summaries) {
                if compact {
                    let reply = s.invoke_with_summary(turn, summary, None).await?;
                    // As the agent keeps a planner's answer (`run.rs`, `plan`).
                    if turn.starts_with(task::PLANNER_TAG) {
                        let parsed = task::parse_planner(&reply);
                        s.compact_last_reply(task::planner_reply_summary(&parsed));
                    }
                } else {
                    s.invoke(turn, None).await?;
                }
            }
            Ok(s.token_log().to_vec())
        });
        let log = block_on(run).unwrap_or_default();
        let requests = m.transport().requests.borrow().clone();
        (per_step(&log, self.turns.len()), requests)
    }

    /// A new session per step, started with the history `history` keeps.
    fn step_scoped(
        &self,
        preferred: Preferred,
        history: History,
    ) -> (Vec<u32>, Vec<UniversalRequest>) {
        let m = manager();
        let mut sent = Vec::new();
        for (step, turn) in self.turns.iter().enumerate() {
            let replies = self.turns[..step].iter().map(|t| tandem_reply(t));
            let earlier = self.turns[..step].iter().zip(replies);
            let messages: Vec<ChatMessage> = match history {
                History::Full => earlier
                    .flat_map(|(t, r)| {
                        [
                            ChatMessage::new(Role::User, t.as_str()),
                            ChatMessage::new(Role::Assistant, r.as_str()),
                        ]
                    })
                    .collect(),
                History::RepliesOnly | History::PeerOnTandemsPrompt | History::None => Vec::new(),
            };
            // A peer's request: the history of actions and results as a block of the one user
            // message, before the page state (browser-use's `<agent_history>`). As leading
            // assistant messages they would be dropped on the cloud (a request starts with the
            // user), which made earlier versions of this bench count no history for peers.
            let turn = match history {
                History::RepliesOnly | History::PeerOnTandemsPrompt => {
                    peer_turn(&self.peer_history[..step], turn)
                }
                _ => turn.clone(),
            };
            let config = match history {
                History::RepliesOnly => self.peer_config(preferred),
                _ => self.config(preferred, messages),
            };
            let run = m.run_task(config, async |s| {
                s.invoke(&turn, None).await?;
                Ok(s.token_log().to_vec())
            });
            let log = block_on(run).unwrap_or_default();
            sent.push(log.iter().map(|t| t.sent).sum());
        }
        let requests = m.transport().requests.borrow().clone();
        (sent, requests)
    }
}

fn manager() -> Manager {
    let m = SessionManager::new(
        FakeNano::new(Availability::Available),
        FakeCloud::default(),
        RecordingSleeper::default(),
        Some(CloudConfig::new(ProviderKind::OpenAi, "gpt-4o")),
    );
    m.nano().reply_with(tandem_reply);
    m.transport().reply_with(tandem_reply);
    m
}

/// What Tandem's model answers: the planner's plan, or one flat navigator action (the JSON
/// the schema instructions ask for), its element varying with the turn.
fn tandem_reply(turn: &str) -> String {
    if turn.starts_with(task::PLANNER_TAG) {
        return r#"{"plan":"1. Open each laptop under 1000 EUR. 2. Note its price. 3. Compare.","complete":false}"#.into();
    }
    let element = turn.len() % 97;
    format!(r#"{{"action":"click","element":{element}}}"#)
}

/// The answer as earlier turns keep it on the cloud: a planner's without its plan.
fn kept_reply(turn: &str) -> String {
    let reply = tandem_reply(turn);
    if turn.starts_with(task::PLANNER_TAG) {
        return task::planner_reply_summary(&task::parse_planner(&reply));
    }
    reply
}

/// Tokens sent per step, all attempts included.
fn per_step(log: &[TokenRecord], steps: usize) -> Vec<u32> {
    let mut sent = vec![0; steps];
    for t in log {
        if let Some(slot) = sent.get_mut(t.step) {
            *slot += t.sent;
        }
    }
    sent
}

/// Tokens of each request beyond its longest common prefix with the previous request (the
/// part a provider's prompt cache cannot serve).
fn new_tokens(requests: &[UniversalRequest]) -> Vec<u32> {
    let tokens = |text: &str| estimate_tokens(text) + MESSAGE_OVERHEAD;
    requests
        .iter()
        .enumerate()
        .map(|(i, req)| {
            let prev = i.checked_sub(1).map(|p| &requests[p]);
            let same_system = prev.is_some_and(|p| p.system == req.system);
            let shared = prev.map_or(0, |p| {
                if !same_system {
                    return 0;
                }
                p.messages
                    .iter()
                    .zip(&req.messages)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            let system = if same_system {
                0
            } else {
                req.system.as_deref().map_or(0, tokens)
            };
            system
                + req.messages[shared..]
                    .iter()
                    .map(|m| tokens(&m.content))
                    .sum::<u32>()
        })
        .collect()
}

fn sum(v: &[u32]) -> u32 {
    v.iter().sum()
}

fn ratio(a: u32, b: u32) -> f64 {
    f64::from(a) / f64::from(b.max(1))
}

/// Deterministic filler text of a given estimated size (xorshift over a small vocabulary).
struct Words(u64);

impl Words {
    const VOCAB: [&'static str; 24] = [
        "click", "button", "element", "index", "page", "scroll", "input", "search", "result",
        "price", "laptop", "compare", "open", "tab", "wait", "link", "form", "submit", "read",
        "details", "memory", "goal", "never", "always",
    ];

    fn text(&mut self, tokens: u32) -> String {
        let mut out = String::new();
        while estimate_tokens(&out) < tokens {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            let word = Self::VOCAB[(self.0 % Self::VOCAB.len() as u64) as usize];
            out.push_str(word);
            out.push(if self.0 % 11 == 0 { '.' } else { ' ' });
        }
        out.trim_end().to_string()
    }
}

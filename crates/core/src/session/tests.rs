use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use expect_test::expect;
use pollster::block_on;
use schemars::JsonSchema;
use serde::Deserialize;

use super::nano::{ABORT, INVALID_STATE, NOT_SUPPORTED, QUOTA_EXCEEDED, TIMEOUT};
use super::testing::{scripted_reply, FakeCloud, FakeNano, Fault, RecordingSleeper};
use super::*;
use crate::errors::ErrorKind;

type Manager = SessionManager<FakeNano, FakeCloud, RecordingSleeper>;
type Events = Rc<RefCell<Vec<SessionEvent>>>;

const SYSTEM: &str = "You drive a web browser for the user, one action per step.";
const SCHEMA_TEXT: &str = "Answer with JSON: evaluation, memory, nextGoal, action.";

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct AgentOutput {
    evaluation: String,
    memory: String,
    next_goal: String,
    action: serde_json::Value,
}

fn manager(availability: Availability, cloud: bool) -> (Manager, Events) {
    let cloud = cloud.then(|| CloudConfig::new(ProviderKind::OpenAi, "gpt-4o"));
    let m = SessionManager::new(
        FakeNano::new(availability),
        FakeCloud::default(),
        RecordingSleeper::default(),
        cloud,
    );
    let events: Events = Rc::default();
    let log = Rc::clone(&events);
    m.on_event(move |e| log.borrow_mut().push(e.clone()));
    (m, events)
}

fn config(preferred: Preferred) -> SessionConfig {
    SessionConfig {
        system_prompt: SYSTEM.to_string(),
        schema_instructions: SCHEMA_TEXT.to_string(),
        temperature: Some(0.2),
        top_k: Some(3),
        preferred,
        ..SessionConfig::default()
    }
}

fn turn(i: usize) -> String {
    format!(
        "Step {i}. URL https://shop.example/p{i}. Elements: [1] Search [2] Cart [{i}] Item {i}."
    )
}

/// Runs `steps` steps with the agent schema; stops at the first error.
fn run_steps(
    session: &mut HybridSession<FakeNano, FakeCloud, RecordingSleeper>,
    steps: usize,
) -> Result<Vec<String>, SessionError> {
    let schema = schema_for::<AgentOutput>();
    (0..steps)
        .map(|i| block_on(session.invoke(&turn(i), Some(&schema))))
        .collect()
}

fn kinds(events: &Events) -> Vec<String> {
    events
        .borrow()
        .iter()
        .map(|e| match &e.kind {
            EventKind::Answered { .. } => format!("{}:answered-by-{}", e.step, e.provider),
            EventKind::FailedOver { to, reason, .. } => {
                format!("{}:failover-to-{to}({reason:?})", e.step)
            }
            kind => format!("{}:{kind:?}-{}", e.step, e.provider),
        })
        .collect()
}

fn count(events: &Events, wanted: fn(&EventKind) -> bool) -> usize {
    events.borrow().iter().filter(|e| wanted(&e.kind)).count()
}

#[test]
fn provider_selection_table() {
    use Availability::*;
    let mut sentences: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for preferred in [Preferred::Auto, Preferred::Nano, Preferred::Cloud] {
        for nano in [Available, Downloadable, Downloading, Unavailable] {
            let cells: Vec<String> =
                [(false, true), (true, true), (false, false), (true, false)]
                    .into_iter()
                    .map(|(consent, cloud)| {
                        let cloud = cloud.then_some(ProviderKind::Anthropic);
                        match choose_provider(preferred, nano, consent, cloud) {
                            Ok(p) => p.to_string(),
                            Err(e) => {
                                let text = e.to_string();
                                let n = sentences.iter().position(|s| *s == text).unwrap_or_else(
                                    || {
                                        sentences.push(text);
                                        sentences.len() - 1
                                    },
                                );
                                format!("error {n}")
                            }
                        }
                    })
                    .collect();
            rows.push(format!(
                "{:<5} {:<12} | {}",
                format!("{preferred:?}"),
                format!("{nano:?}"),
                cells.join(" | ")
            ));
        }
    }
    let sentences: Vec<String> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{i}: {s}"))
        .collect();
    expect![[r#"
        preferred availability | no consent, cloud | consent, cloud | no consent, no cloud | consent, no cloud
        Auto  Available    | Gemini Nano | Gemini Nano | Gemini Nano | Gemini Nano
        Auto  Downloadable | Anthropic | Gemini Nano | error 0 | Gemini Nano
        Auto  Downloading  | Anthropic | Gemini Nano | error 1 | Gemini Nano
        Auto  Unavailable  | Anthropic | Anthropic | error 2 | error 2
        Nano  Available    | Gemini Nano | Gemini Nano | Gemini Nano | Gemini Nano
        Nano  Downloadable | error 3 | Gemini Nano | error 3 | Gemini Nano
        Nano  Downloading  | error 4 | Gemini Nano | error 4 | Gemini Nano
        Nano  Unavailable  | error 5 | error 5 | error 5 | error 5
        Cloud Available    | Anthropic | Anthropic | error 6 | error 6
        Cloud Downloadable | Anthropic | Anthropic | error 6 | error 6
        Cloud Downloading  | Anthropic | Anthropic | error 6 | error 6
        Cloud Unavailable  | Anthropic | Anthropic | error 6 | error 6

        0: No AI provider can run this task: Gemini Nano has not been downloaded yet, and no cloud provider is configured. Open Settings and choose a provider, or allow the Gemini Nano download there.
        1: No AI provider can run this task: Gemini Nano is still downloading, and no cloud provider is configured. Open Settings and choose a provider, or allow the Gemini Nano download there.
        2: No AI provider can run this task: Gemini Nano is not available in this browser or on this device, and no cloud provider is configured. Open Settings and choose a provider.
        3: This task is set to run on Gemini Nano only, but Gemini Nano has not been downloaded yet. Allow the download in Settings, or set the task to Auto or Cloud.
        4: This task is set to run on Gemini Nano only, but Gemini Nano is still downloading. Allow the download in Settings, or set the task to Auto or Cloud.
        5: This task is set to run on Gemini Nano only, but Gemini Nano is not available in this browser or on this device. Set the task to Auto or Cloud.
        6: This task is set to use a cloud provider, but none is configured. Open Settings, choose a provider and save, or set the task to Auto."#]]
    .assert_eq(&format!(
        "preferred availability | no consent, cloud | consent, cloud | no consent, no cloud | consent, no cloud\n{}\n\n{}",
        rows.join("\n"),
        sentences.join("\n")
    ));

    // The manager applies the same table, and a forced cloud never asks Nano.
    let (m, events) = manager(Downloadable, true);
    m.set_download_consent(true);
    let s = block_on(m.create(config(Preferred::Auto))).unwrap();
    assert_eq!(s.provider(), Some(ProviderId::Nano));
    let s2 = block_on(m.create(config(Preferred::Cloud))).unwrap();
    assert_eq!(s2.provider(), Some(ProviderId::Cloud(ProviderKind::OpenAi)));
    assert_eq!(m.nano().stats.created.get(), 1);
    drop((s, s2));
    assert_eq!(count(&events, |k| *k == EventKind::Destroyed), 2);
}

#[test]
fn nano_gets_the_init_messages_once_and_each_step_only_its_turn() {
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    run_steps(&mut s, 10).unwrap();
    let stats = &m.nano().stats;
    assert_eq!(stats.created.get(), 1);
    let system_sends = stats
        .received_texts()
        .iter()
        .filter(|t| t.contains(SYSTEM))
        .count();
    assert_eq!(system_sends, 1);
    let schema_sends = stats
        .received_texts()
        .iter()
        .filter(|t| t.contains(SCHEMA_TEXT))
        .count();
    assert_eq!(schema_sends, 1);
    assert_eq!(
        *stats.inputs.borrow(),
        (0..10).map(turn).collect::<Vec<_>>()
    );
    // The schema constrains every answer but is not re-sent as input: the instructions are
    // already in the initial prompt.
    assert!(stats
        .prompt_options
        .borrow()
        .iter()
        .all(|o| o.response_constraint.is_some() && o.omit_response_constraint_input));
    let sent: Vec<u32> = s.token_log().iter().map(|t| t.sent).collect();
    let init = message_tokens(&format!("{SYSTEM}\n\n{SCHEMA_TEXT}"));
    assert_eq!(sent[0], init + message_tokens(&turn(0)));
    assert!(
        (1..10).all(|i| sent[i] == message_tokens(&turn(i))),
        "{sent:?}"
    );
    let cfg = config(Preferred::Auto);
    let create = NanoCreateOptions::for_session(&cfg, Transcript::new(&cfg).init_prompts());
    expect![[r#"{"initialPrompts":[{"role":"system","content":"You drive a web browser for the user, one action per step.\n\nAnswer with JSON: evaluation, memory, nextGoal, action."}],"temperature":0.2,"topK":3,"expectedInputs":[{"type":"text"}],"expectedOutputs":[{"type":"text"}]}"#]].assert_eq(&serde_json::to_string(&create).unwrap());
}

#[test]
fn failover_at_each_step_reruns_that_step_on_the_rebuilt_transcript() {
    // References: the same task on Nano only, and on the cloud only.
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let replies = run_steps(&mut s, 10).unwrap();
    let nano_turns: Vec<(String, String)> = s
        .transcript()
        .turns
        .iter()
        .map(|t| (t.input.clone(), t.reply.clone()))
        .collect();
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    assert_eq!(run_steps(&mut s, 10).unwrap(), replies);
    let cloud_requests = m.transport().requests.borrow().clone();

    for failed in 0..10 {
        let (m, events) = manager(Availability::Available, true);
        m.nano().fault_at(
            failed,
            Fault::Fail(NanoError::new(
                INVALID_STATE,
                "The session has been destroyed.",
            )),
        );
        let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
        let got = run_steps(&mut s, 10).unwrap();
        assert_eq!(got, replies, "failover at {failed}");
        let turns: Vec<(String, String)> = s
            .transcript()
            .turns
            .iter()
            .map(|t| (t.input.clone(), t.reply.clone()))
            .collect();
        assert_eq!(turns, nano_turns, "failover at {failed}");
        let providers: Vec<ProviderId> = s.transcript().turns.iter().map(|t| t.provider).collect();
        let cloud = ProviderId::Cloud(ProviderKind::OpenAi);
        assert_eq!(
            providers,
            [vec![ProviderId::Nano; failed], vec![cloud; 10 - failed]].concat()
        );
        // The first cloud request is the failed step, rebuilt from the transcript exactly as a
        // cloud-only task would have sent it; so is every later one.
        assert_eq!(
            *m.transport().requests.borrow(),
            cloud_requests[failed..],
            "failover at {failed}"
        );
        assert_eq!(
            m.nano().stats.live(),
            0,
            "the failed Nano model is destroyed at once"
        );
        assert_eq!(
            kinds(&events)[failed + 1],
            format!("{failed}:failover-to-OpenAI(SessionLost)")
        );
        if failed == 3 {
            let req = &m.transport().requests.borrow()[0];
            let shown: Vec<String> = req
                .messages
                .iter()
                .map(|msg| {
                    format!(
                        "{:?}: {}",
                        msg.role,
                        msg.content.chars().take(60).collect::<String>()
                    )
                })
                .collect();
            expect![[r#"
                model gpt-4o, options RequestOptions { temperature: Some(0.2), max_output_tokens: Some(2048), context_window: Some(128000) }
                system: You drive a web browser for the user, one action per step.

                Answer with JSON: evaluation, memory, nextGoal, action.
                User: Step 0. URL https://shop.example/p0. Elements: [1] Search [2
                Assistant: {"evaluation":"The previous action worked and the page shows
                User: Step 1. URL https://shop.example/p1. Elements: [1] Search [2
                Assistant: {"evaluation":"The previous action worked and the page shows
                User: Step 2. URL https://shop.example/p2. Elements: [1] Search [2
                Assistant: {"evaluation":"The previous action worked and the page shows
                User: Step 3. URL https://shop.example/p3. Elements: [1] Search [2"#]]
            .assert_eq(&format!(
                "model {}, options {:?}\nsystem: {}\n{}",
                req.model,
                req.options,
                req.system.as_deref().unwrap_or(""),
                shown.join("\n")
            ));
            expect![[r#"
                [
                    "0:Created-Gemini Nano",
                    "0:answered-by-Gemini Nano",
                    "1:answered-by-Gemini Nano",
                    "2:answered-by-Gemini Nano",
                    "3:failover-to-OpenAI(SessionLost)",
                    "3:answered-by-OpenAI",
                    "4:answered-by-OpenAI",
                    "5:answered-by-OpenAI",
                    "6:answered-by-OpenAI",
                    "7:answered-by-OpenAI",
                    "8:answered-by-OpenAI",
                    "9:answered-by-OpenAI",
                ]
            "#]]
            .assert_debug_eq(&kinds(&events));
        }
    }
}

#[test]
fn every_nano_failure_kind_fails_over_but_abort_cancels() {
    for (name, reason) in [
        (QUOTA_EXCEEDED, FailoverReason::ContextFull),
        (NOT_SUPPORTED, FailoverReason::Unsupported),
        (TIMEOUT, FailoverReason::Timeout),
        ("UnknownError", FailoverReason::Other("UnknownError".into())),
    ] {
        let (m, events) = manager(Availability::Available, true);
        m.nano().fault_at(1, Fault::Fail(NanoError::new(name, "x")));
        let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
        run_steps(&mut s, 3).unwrap();
        let failed_over = events.borrow().iter().find_map(|e| match &e.kind {
            EventKind::FailedOver { reason, .. } => Some((e.step, reason.clone())),
            _ => None,
        });
        assert_eq!(failed_over, Some((1, reason.clone())));
        // The session keeps the switch for the task's timeline.
        assert_eq!(s.failovers().len(), 1);
        assert_eq!(s.failovers()[0].step, 1);
        assert_eq!(s.failovers()[0].from, ProviderId::Nano);
        assert_eq!(s.failovers()[0].reason, reason);
        assert!(matches!(s.failovers()[0].to, ProviderId::Cloud(_)));
    }
    let (m, events) = manager(Availability::Available, true);
    m.nano().fault_at(
        1,
        Fault::Fail(NanoError::new(ABORT, "The user aborted a request.")),
    );
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let err = run_steps(&mut s, 3).unwrap_err();
    assert_eq!(err.to_string(), "The task was cancelled at step 2.");
    assert_eq!(
        count(&events, |k| matches!(k, EventKind::FailedOver { .. })),
        0
    );
    // A Nano-only task reports the failure instead of leaving the device.
    let (m, _) = manager(Availability::Available, true);
    m.nano().fault_at(
        0,
        Fault::Fail(NanoError::new(QUOTA_EXCEEDED, "The input is too large.")),
    );
    let mut s = block_on(m.create(config(Preferred::Nano))).unwrap();
    expect!["Gemini Nano failed at step 1 (QuotaExceededError): The input is too large."]
        .assert_eq(&run_steps(&mut s, 1).unwrap_err().to_string());
    assert!(m.transport().requests.borrow().is_empty());
}

#[test]
fn unparseable_json_is_retried_once_then_fails_over() {
    // Once: Nano tries again and answers.
    let (m, events) = manager(Availability::Available, true);
    m.nano()
        .fault_at(0, Fault::Reply("Sure! I will click the button.".into()));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    run_steps(&mut s, 2).unwrap();
    assert_eq!(m.nano().stats.prompts.get(), 3);
    assert_eq!(
        count(&events, |k| matches!(k, EventKind::FailedOver { .. })),
        0
    );

    // Twice: the step moves to the cloud.
    let (m, events) = manager(Availability::Available, true);
    m.nano().fault_at(0, Fault::Reply("[1, 2]".into()));
    m.nano()
        .fault_at(1, Fault::Reply("{\"evaluation\":\"cut off".into()));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let replies = run_steps(&mut s, 2).unwrap();
    assert_eq!(replies[0], scripted_reply(&turn(0)));
    assert_eq!(kinds(&events)[1], "0:failover-to-OpenAI(InvalidOutput)");
    assert_eq!(m.transport().requests.borrow().len(), 2);

    // Nowhere to go: the user reads why.
    let (m, _) = manager(Availability::Available, false);
    m.nano()
        .fault_at(0, Fault::Reply("{\"evaluation\":\"x\"}".into()));
    m.nano()
        .fault_at(1, Fault::Reply("{\"evaluation\":\"x\"}".into()));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    expect![[r#"Gemini Nano answered step 1 without the JSON asked for, 2 times in a row (the required field "memory" is missing)."#]]
        .assert_eq(&run_steps(&mut s, 1).unwrap_err().to_string());

    // The cloud gets the same second chance, then the error.
    let (m, _) = manager(Availability::Unavailable, true);
    m.transport().fault_at(0, Fault::Reply("no".into()));
    m.transport()
        .fault_at(1, Fault::Reply("```json\n{\"a\":1}\n```".into()));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let err = run_steps(&mut s, 1).unwrap_err();
    assert!(
        matches!(err, SessionError::InvalidOutput { attempts: 2, .. }),
        "{err}"
    );
}

#[test]
fn failed_nano_creation_starts_on_the_cloud() {
    let (m, events) = manager(Availability::Downloadable, true);
    m.set_download_consent(true);
    m.nano().fail_create(NanoError::new(
        "NotAllowedError",
        "Requires a user gesture.",
    ));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    run_steps(&mut s, 1).unwrap();
    drop(s);
    expect![[r#"
        [
            "0:failover-to-OpenAI(Other(\"NotAllowedError\"))",
            "0:Created-OpenAI",
            "0:answered-by-OpenAI",
            "1:Destroyed-OpenAI",
        ]
    "#]]
    .assert_debug_eq(&kinds(&events));
}

#[test]
fn cloud_steps_trim_on_overflow_and_wait_on_rate_limits() {
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    run_steps(&mut s, 3).unwrap();
    let overflow = ProviderError::new(ErrorKind::ContextOverflow, "too long");
    let limited = ProviderError {
        retry_after_ms: Some(2_000),
        ..ProviderError::new(ErrorKind::RateLimited, "slow down")
    };
    m.transport().fault_at(3, Fault::Fail(overflow));
    m.transport().fault_at(4, Fault::Fail(limited));
    run_steps(&mut s, 1).unwrap();
    let requests = m.transport().requests.borrow();
    let lengths: Vec<usize> = requests.iter().map(|r| r.messages.len()).collect();
    // Step 3 (index 0 of a fresh call): 7 messages, trimmed to 5, resent after the wait.
    assert_eq!(lengths, [1, 3, 5, 7, 5, 5]);
    // The wait is slept a second at a time, so a Stop ends it.
    assert_eq!(*m.sleeper().waits.borrow(), [1_000, 1_000]);
    let step3: Vec<u32> = s
        .token_log()
        .iter()
        .filter(|t| t.step == 3)
        .map(|t| t.sent)
        .collect();
    assert_eq!(step3.len(), 3);
    assert!(step3[1] < step3[0] && step3[1] == step3[2], "{step3:?}");
}

#[test]
fn cloud_errors_carry_the_step() {
    let (m, _) = manager(Availability::Unavailable, true);
    m.transport().fault_at(
        1,
        Fault::Fail(ProviderError::new(
            ErrorKind::BadKey,
            "OpenAI rejected the API key (401). Check the key in Settings.",
        )),
    );
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    expect!["Step 2: OpenAI rejected the API key (401). Check the key in Settings."]
        .assert_eq(&run_steps(&mut s, 2).unwrap_err().to_string());
}

#[test]
fn streaming_restarts_when_the_step_moves() {
    let schema = schema_for::<AgentOutput>();
    let (m, _) = manager(Availability::Available, true);
    m.nano()
        .fault_at(1, Fault::Fail(NanoError::new(TIMEOUT, "signal timed out")));
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    for i in 0..2 {
        let mut updates = Vec::new();
        let reply = block_on(s.invoke_streaming(&turn(i), Some(&schema), &mut |u| {
            updates.push(match u {
                StreamUpdate::Delta(d) => format!("delta {}", d.len()),
                StreamUpdate::Restart { provider } => format!("restart on {provider}"),
            })
        }))
        .unwrap();
        let half = reply.len() / 2;
        let expected: Vec<String> = match i {
            0 => vec![
                format!("delta {half}"),
                format!("delta {}", reply.len() - half),
            ],
            _ => vec!["restart on OpenAI".into(), format!("delta {}", reply.len())],
        };
        assert_eq!(updates, expected);
    }
}

/// Pending on its first poll, like a prompt still running.
struct Pending(bool);
impl Future for Pending {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[test]
fn sessions_are_destroyed_on_every_path() {
    let (m, events) = manager(Availability::Available, true);
    let destroyed = |events: &Events| count(events, |k| *k == EventKind::Destroyed);
    // Success.
    let replies = block_on(m.run_task(config(Preferred::Auto), async |s| run_steps(s, 2))).unwrap();
    assert_eq!(replies.len(), 2);
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 1)
    );
    // Cancelled by the model call.
    m.nano()
        .fault_at(2, Fault::Fail(NanoError::new(ABORT, "aborted")));
    let err = block_on(m.run_task(config(Preferred::Auto), async |s| run_steps(s, 2))).unwrap_err();
    assert_eq!(err, SessionError::Cancelled { step: 0 });
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 2)
    );
    // Error on Nano with nowhere to go, and on the cloud.
    m.nano()
        .fault_at(3, Fault::Fail(NanoError::new(INVALID_STATE, "gone")));
    block_on(m.run_task(config(Preferred::Nano), async |s| run_steps(s, 2))).unwrap_err();
    m.transport().fault_at(
        0,
        Fault::Fail(ProviderError::new(ErrorKind::Network, "offline")),
    );
    block_on(m.run_task(config(Preferred::Cloud), async |s| run_steps(s, 2))).unwrap_err();
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 4)
    );
    // Cancelled by dropping the task's future while a step is in flight.
    {
        let task = m.run_task(config(Preferred::Auto), async |s| {
            run_steps(s, 1)?;
            Pending(false).await;
            run_steps(s, 1)
        });
        let mut task = pin!(task);
        let poll = task.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(poll.is_pending());
        assert_eq!((m.live_sessions(), m.nano().stats.live()), (1, 1));
    }
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 5)
    );
    // Never created: nothing to destroy, nothing counted.
    m.nano()
        .fail_create(NanoError::new("NotAllowedError", "no"));
    block_on(m.create(config(Preferred::Nano))).err().unwrap();
    m.nano().availability.set(Availability::Unavailable);
    block_on(m.create(config(Preferred::Nano))).err().unwrap();
    assert_eq!((m.live_sessions(), destroyed(&events)), (0, 5));
    assert_eq!(count(&events, |k| *k == EventKind::Created), 5);
}

#[test]
fn a_hundred_tasks_leave_no_live_session() {
    let (m, events) = manager(Availability::Available, true);
    for task in 0..100 {
        let calls = m.nano().stats.prompts.get();
        match task % 4 {
            1 => m.nano().fault_at(
                calls + 1,
                Fault::Fail(NanoError::new(QUOTA_EXCEEDED, "full")),
            ),
            2 => m
                .nano()
                .fault_at(calls + 2, Fault::Fail(NanoError::new(ABORT, "stop"))),
            3 => m.transport().fault_at(
                m.transport().requests.borrow().len(),
                Fault::Fail(ProviderError::new(ErrorKind::Overloaded, "busy")),
            ),
            _ => {}
        }
        let preferred = if task % 4 == 3 {
            Preferred::Cloud
        } else {
            Preferred::Auto
        };
        let _ = block_on(m.run_task(config(preferred), async |s| run_steps(s, 3)));
    }
    assert_eq!(m.live_sessions(), 0);
    assert_eq!(m.nano().stats.live(), 0);
    assert_eq!(m.nano().stats.created.get(), 75);
    assert_eq!(count(&events, |k| *k == EventKind::Created), 100);
    assert_eq!(count(&events, |k| *k == EventKind::Destroyed), 100);
    assert_eq!(
        m.sleeper().waits.borrow().len(),
        25,
        "overloaded: one backoff wait each"
    );
}

#[test]
fn resumed_task_starts_nano_with_the_whole_transcript() {
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    run_steps(&mut s, 2).unwrap();
    let transcript = s.transcript().clone();
    drop(s);
    m.nano().availability.set(Availability::Available);
    let mut s = block_on(m.resume(config(Preferred::Auto), transcript)).unwrap();
    assert_eq!(s.provider(), Some(ProviderId::Nano));
    let init = m.nano().stats.initial_prompts.borrow()[0].clone();
    assert_eq!(init.len(), 5, "system + 2 turns of 2 messages");
    block_on(s.invoke("next", None)).unwrap();
    assert_eq!(s.transcript().turns.len(), 3);
    assert_eq!(*m.nano().stats.inputs.borrow(), ["next"]);
}

#[test]
fn transcript_separates_init_from_steps() {
    let mut cfg = config(Preferred::Auto);
    let mut hidden = ChatMessage::new(crate::chat::Role::User, "secret");
    hidden.hidden = true;
    cfg.initial_history = vec![
        ChatMessage::new(crate::chat::Role::System, "Be terse."),
        ChatMessage::new(crate::chat::Role::User, "Example question"),
        ChatMessage::new(crate::chat::Role::Assistant, "{\"example\":true}"),
        hidden,
    ];
    cfg.schema_instructions.clear();
    let t = Transcript::new(&cfg);
    assert_eq!(
        t.system_text().as_deref(),
        Some(format!("{SYSTEM}\n\nBe terse.").as_str())
    );
    let ids: Vec<String> = t
        .messages_with("go")
        .iter()
        .map(|m| format!("{}:{:?}", m.id, m.role))
        .collect();
    assert_eq!(ids, ["i0:User", "i1:Assistant", "t0u:User"]);
    assert_eq!(t.init_prompts().len(), 3);
}

#[test]
fn schema_generation_and_checks() {
    let schema = schema_for::<AgentOutput>();
    let json = schema.json();
    assert_eq!(json["type"], "object");
    let text = json.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$schema"),
        "{text}"
    );
    let required: Vec<&str> = json["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(required, ["evaluation", "memory", "nextGoal", "action"]);
    let ok = r#"{"evaluation":"e","memory":"m","nextGoal":"g","action":{}}"#;
    assert_eq!(
        schema.validate(&format!("```json\n{ok}\n```")).as_deref(),
        Ok(ok)
    );
    assert_eq!(schema.validate(ok).as_deref(), Ok(ok));
    // A cloud model's prose around the object is dropped.
    assert_eq!(
        schema
            .validate(&format!("Here it is: {ok} Hope this helps."))
            .as_deref(),
        Ok(ok)
    );
    let errors: Vec<String> = ["[]", r#"{"evaluation":"e"}"#, "Sure!"]
        .iter()
        .map(|t| schema.validate(t).unwrap_err().to_string())
        .collect();
    expect![[r#"
        [
            "a JSON array where object was asked for",
            "the required field \"memory\" is missing",
            "not JSON: expected value at line 1 column 1",
        ]
    "#]]
    .assert_debug_eq(&errors);
    let numbers = Schema::new(serde_json::json!({"type": ["number", "null"]}));
    assert!(numbers.validate("3").is_ok() && numbers.validate("null").is_ok());
    assert!(numbers.validate("\"3\"").is_err());
}

fn step_scoped(preferred: Preferred) -> SessionConfig {
    SessionConfig {
        scope: SessionScope::Step,
        ..config(preferred)
    }
}

fn turns_of(s: &HybridSession<FakeNano, FakeCloud, RecordingSleeper>) -> Vec<Turn> {
    s.transcript().turns.clone()
}

#[test]
fn step_scope_on_nano_makes_a_model_per_step_with_the_whole_prompt() {
    // Task scope, the reference: one model for the task.
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let replies = run_steps(&mut s, 10).unwrap();
    let task_turns = turns_of(&s);
    let task_sent: u32 = s.token_log().iter().map(|t| t.sent).sum();
    drop(s);
    assert_eq!(m.nano().stats.created.get(), 1);

    let (m, events) = manager(Availability::Available, true);
    let mut s = block_on(m.create(step_scoped(Preferred::Auto))).unwrap();
    assert_eq!(run_steps(&mut s, 10).unwrap(), replies);
    assert_eq!(turns_of(&s), task_turns, "same transcript as task scope");
    let stats = &m.nano().stats;
    assert_eq!(stats.created.get(), 10, "one model per step");
    assert_eq!(stats.live(), 1, "only the current step's model is alive");
    // Model k starts with the system text and the k completed turns, then gets turn k.
    let init = stats.initial_prompts.borrow().clone();
    for (k, prompts) in init.iter().enumerate() {
        assert_eq!(prompts.len(), 1 + 2 * k, "model {k}");
        assert_eq!(prompts[0].role, crate::chat::Role::System);
        assert!(prompts[0].content.contains(SYSTEM) && prompts[0].content.contains(SCHEMA_TEXT));
        for (i, t) in task_turns[..k].iter().enumerate() {
            assert_eq!(prompts[1 + 2 * i].content, t.input);
            assert_eq!(prompts[2 + 2 * i].content, t.reply);
        }
    }
    let system_sends = stats
        .received_texts()
        .iter()
        .filter(|t| t.contains(SYSTEM))
        .count();
    assert_eq!(system_sends, 10, "the system prompt goes with every step");
    assert_eq!(
        *stats.inputs.borrow(),
        (0..10).map(turn).collect::<Vec<_>>()
    );
    // The token log charges each step its re-sent initial prompts.
    let sent: Vec<u32> = s.token_log().iter().map(|t| t.sent).collect();
    let expected: Vec<u32> = init
        .iter()
        .enumerate()
        .map(|(k, prompts)| {
            prompts
                .iter()
                .map(|p| message_tokens(&p.content))
                .sum::<u32>()
                + message_tokens(&turn(k))
        })
        .collect();
    assert_eq!(sent, expected);
    let step_sent: u32 = sent.iter().sum();
    assert!(
        f64::from(task_sent) <= 0.4 * f64::from(step_sent),
        "{task_sent} vs {step_sent}"
    );
    assert!(m.transport().requests.borrow().is_empty());
    drop(s);
    assert_eq!((m.live_sessions(), m.nano().stats.live()), (0, 0));
    // One task session: created once, destroyed once, whatever happened underneath.
    assert_eq!(count(&events, |k| *k == EventKind::Created), 1);
    assert_eq!(count(&events, |k| *k == EventKind::Destroyed), 1);
    assert_eq!(
        count(&events, |k| matches!(k, EventKind::Answered { .. })),
        10
    );
}

#[test]
fn step_scope_on_the_cloud_sends_what_task_scope_sends() {
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    let replies = run_steps(&mut s, 10).unwrap();
    let task_log = s.token_log().to_vec();
    let requests = m.transport().requests.borrow().clone();
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(step_scoped(Preferred::Cloud))).unwrap();
    assert_eq!(run_steps(&mut s, 10).unwrap(), replies);
    assert_eq!(*m.transport().requests.borrow(), requests);
    assert_eq!(s.token_log(), task_log.as_slice());
}

#[test]
fn step_scope_fails_over_when_a_new_model_cannot_be_made_or_prompted() {
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let replies = run_steps(&mut s, 6).unwrap();
    let cloud = ProviderId::Cloud(ProviderKind::OpenAi);

    // The model for step 3 cannot be created: step 3 and the rest go to the cloud.
    let (m, events) = manager(Availability::Available, true);
    let mut s = block_on(m.create(step_scoped(Preferred::Auto))).unwrap();
    run_steps(&mut s, 2).unwrap();
    m.nano()
        .fail_create(NanoError::new(NOT_SUPPORTED, "No model today."));
    let mut schema_steps = Vec::new();
    let schema = schema_for::<AgentOutput>();
    for i in 2..6 {
        schema_steps.push(block_on(s.invoke(&turn(i), Some(&schema))).unwrap());
    }
    assert_eq!(schema_steps, replies[2..]);
    let providers: Vec<ProviderId> = s.transcript().turns.iter().map(|t| t.provider).collect();
    assert_eq!(
        providers,
        [vec![ProviderId::Nano; 2], vec![cloud; 4]].concat()
    );
    assert_eq!(s.failovers().len(), 1);
    assert_eq!(
        (s.failovers()[0].step, &s.failovers()[0].reason),
        (2, &FailoverReason::Unsupported)
    );
    assert_eq!(m.nano().stats.live(), 0, "the step-2 model was destroyed");
    assert_eq!(m.transport().requests.borrow().len(), 4);
    drop(s);
    expect![[r#"
        [
            "0:Created-Gemini Nano",
            "0:answered-by-Gemini Nano",
            "1:answered-by-Gemini Nano",
            "2:failover-to-OpenAI(Unsupported)",
            "2:answered-by-OpenAI",
            "3:answered-by-OpenAI",
            "4:answered-by-OpenAI",
            "5:answered-by-OpenAI",
            "6:Destroyed-OpenAI",
        ]
    "#]]
    .assert_debug_eq(&kinds(&events));

    // A prompt that fails on a fresh model fails over like in task scope.
    let (m, _) = manager(Availability::Available, true);
    m.nano()
        .fault_at(3, Fault::Fail(NanoError::new(TIMEOUT, "signal timed out")));
    let mut s = block_on(m.create(step_scoped(Preferred::Auto))).unwrap();
    assert_eq!(run_steps(&mut s, 6).unwrap(), replies);
    assert_eq!(s.failovers()[0].step, 3);
    assert_eq!(m.nano().stats.created.get(), 4);
    drop(s);
    assert_eq!((m.live_sessions(), m.nano().stats.live()), (0, 0));
}

#[test]
fn step_scope_sessions_are_destroyed_on_every_path() {
    let (m, events) = manager(Availability::Available, false);
    let destroyed = |events: &Events| count(events, |k| *k == EventKind::Destroyed);
    // Cancelled while the next model is being made: the session still ends cleanly.
    let result = block_on(m.run_task(step_scoped(Preferred::Auto), async |s| {
        run_steps(s, 2)?;
        m.nano().fail_create(NanoError::new(ABORT, "aborted"));
        run_steps(s, 1)
    }));
    assert_eq!(result.unwrap_err(), SessionError::Cancelled { step: 2 });
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 1)
    );
    // Nano only: a model that cannot be made ends the task with the reason.
    let err = block_on(m.run_task(step_scoped(Preferred::Nano), async |s| {
        run_steps(s, 2)?;
        m.nano()
            .fail_create(NanoError::new("NotAllowedError", "Not now."));
        run_steps(s, 1)
    }))
    .unwrap_err();
    assert!(matches!(err, SessionError::Nano { step: 2, .. }), "{err}");
    assert_eq!(
        (m.live_sessions(), m.nano().stats.live(), destroyed(&events)),
        (0, 0, 2)
    );
}

// --- Planned turns (the chat's request through the cloud session) ---

use crate::chat::{ChatMessage, Role};
use crate::request::{RequestMessage, ToolCall, ToolOutcome, ToolSpec, UniversalRequest};
use crate::send::UniversalResponse;
use crate::stream::StreamEvent;

/// The chat's shape of request: its own history, system text, images and tools.
struct ChatPlanner {
    history: Vec<ChatMessage>,
    system: String,
    images: Vec<String>,
    tools: Vec<ToolSpec>,
}

impl RequestPlanner for ChatPlanner {
    fn messages(&self, _: &Transcript, _: &str) -> Vec<ChatMessage> {
        self.history.clone()
    }

    fn plan(
        &mut self,
        conversation: &crate::budget::Conversation<'_>,
        _: Option<&str>,
        config: &CloudConfig,
        cache: &mut crate::budget::TokenCache,
    ) -> Result<(crate::budget::Budget, Option<String>), crate::budget::BudgetError> {
        let budget = crate::budget::compute_budget(
            conversation,
            Some(&self.system),
            self.images.len(),
            config.context_window,
            &config.budget,
            cache,
        )?;
        Ok((budget, Some(self.system.clone())))
    }

    fn images(&self) -> &[String] {
        &self.images
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
}

#[derive(Default)]
struct Hooks {
    deltas: String,
    rounds: Vec<Vec<ToolCall>>,
    statuses: Vec<(ProviderKind, u64)>,
    attempts: Vec<crate::budget::Budget>,
    answered: Vec<bool>,
    /// Events after which the reader goes away.
    read_until: Option<usize>,
    events: usize,
    stop_in_wait: bool,
    /// Every `restart` note.
    restarts: Vec<String>,
    /// Tool rounds the turn may run (unlimited when `None`), as the chat's `Rounds` counts.
    max_rounds: Option<usize>,
    /// The images each tool result carries.
    tool_images: Vec<String>,
}

impl TurnHooks for Hooks {
    fn event(&mut self, event: &StreamEvent) -> bool {
        self.events += 1;
        if let StreamEvent::Delta(d) = event {
            self.deltas.push_str(d);
        }
        self.read_until.is_none_or(|n| self.events < n)
    }

    fn attempt(&mut self, report: &AttemptReport<'_>) {
        self.attempts.push(report.plan.budget().clone());
    }

    fn retrying_in(&mut self, provider: ProviderKind, left_ms: u64) {
        self.statuses.push((provider, left_ms));
    }

    fn stopped(&self) -> bool {
        self.stop_in_wait
    }

    fn restart(&mut self, note: &str) {
        self.deltas.clear();
        self.restarts.push(note.to_string());
    }

    fn rounds_left(&self) -> bool {
        self.max_rounds.is_none_or(|max| self.rounds.len() < max)
    }

    fn tool_round<'a>(&'a mut self, calls: &'a [ToolCall]) -> super::plan::RoundFuture<'a> {
        self.rounds.push(calls.to_vec());
        let outcomes = calls
            .iter()
            .map(|c| ToolOutcome {
                call_id: c.id.clone(),
                name: c.name.clone(),
                content: "R".repeat(600),
                is_error: false,
                images: self.tool_images.clone(),
            })
            .collect();
        Box::pin(async move { Ok(outcomes) })
    }

    fn answered(&mut self, _: &UniversalResponse, _: &crate::budget::Budget, rounds: bool) {
        self.answered.push(rounds);
    }
}

fn chat_history(pairs: usize) -> Vec<ChatMessage> {
    let mut history = Vec::new();
    for i in 0..pairs {
        let mut u = ChatMessage::new(Role::User, format!("question {i} {}", "q".repeat(400)));
        u.id = format!("u{i}");
        let mut a = ChatMessage::new(Role::Assistant, format!("answer {i} {}", "a".repeat(400)));
        a.id = format!("a{i}");
        history.extend([u, a]);
    }
    let mut last = ChatMessage::new(Role::User, "What does the page say?");
    last.id = "last".into();
    history.push(last);
    history
}

fn chat_planner(pairs: usize) -> ChatPlanner {
    ChatPlanner {
        history: chat_history(pairs),
        system: "You are Tandem.".into(),
        images: vec!["data:image/png;base64,AAAA".into()],
        tools: vec![ToolSpec {
            name: "page_read".into(),
            description: "Reads the page.".into(),
            parameters: serde_json::json!({"type": "object"}),
        }],
    }
}

fn read_call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "page_read".into(),
        arguments: serde_json::json!({}),
    }
}

type TestCloud = (
    CloudSession<FakeCloud, RecordingSleeper>,
    Rc<FakeCloud>,
    Rc<RecordingSleeper>,
    Transcript,
);

fn cloud_session(window: u32) -> TestCloud {
    cloud_session_on(window, "gpt-4o")
}

fn cloud_session_on(window: u32, model: &str) -> TestCloud {
    let transport = Rc::new(FakeCloud::default());
    let sleeper = Rc::new(RecordingSleeper::default());
    let mut config = CloudConfig::new(ProviderKind::OpenAi, model);
    config.context_window = window;
    config.budget.assistant_response_allowance = 500;
    let transcript = Transcript::new(&config_for_chat());
    let session = CloudSession::new(
        Rc::clone(&transport),
        Rc::clone(&sleeper),
        config,
        &transcript,
        None,
    );
    (session, transport, sleeper, transcript)
}

/// A chat turn on a test session as the panel runs it with `chat_planner(pairs)`: no abort
/// signal, the turn's tool rounds into `rounds`, its token records dropped.
fn chat_turn<C: CloudTransport>(
    session: &mut CloudSession<C, RecordingSleeper>,
    transcript: &Transcript,
    pairs: usize,
    hooks: &mut Hooks,
    rounds: &mut Vec<RequestMessage>,
) -> Result<UniversalResponse, CloudFailure> {
    block_on(session.run_turn(
        transcript,
        "",
        &mut chat_planner(pairs),
        hooks,
        None,
        rounds,
        &mut Vec::new(),
    ))
}

fn config_for_chat() -> SessionConfig {
    SessionConfig {
        system_prompt: "unused: the planner brings its own".into(),
        ..SessionConfig::default()
    }
}

/// A tool's image goes to a model that reads images as the result's image, and to one
/// that does not as a sentence in the result's text; the turn's rounds keep the image either
/// way (a failover to a model that reads it gets it).
#[test]
fn a_tools_image_goes_to_a_seeing_model_and_is_said_to_a_text_only_one() {
    let png = crate::tools::image::ToolImage::read("image/png", crate::tools::image::tests::PNG)
        .unwrap()
        .data_url();
    for (model, sees) in [("gpt-4o", true), ("gpt-3.5-turbo", false)] {
        let (mut session, cloud, _, transcript) = cloud_session_on(128_000, model);
        cloud.tools_at(0, vec![read_call("c1")]);
        let mut hooks = Hooks {
            tool_images: vec![png.clone()],
            ..Hooks::default()
        };
        let mut rounds = Vec::new();
        chat_turn(&mut session, &transcript, 0, &mut hooks, &mut rounds).unwrap();
        let requests = cloud.requests.borrow();
        let result = &requests[1].messages.last().unwrap().tool_results[0];
        let said = "The tool returned an image (PNG, 70 bytes) that this model cannot see.";
        if sees {
            assert_eq!(result.images, vec![png.clone()], "{model}");
            assert!(!result.content.contains(said));
        } else {
            assert!(result.images.is_empty(), "{model}");
            assert!(result.content.ends_with(&format!("\n{said}")), "{model}");
        }
        assert_eq!(rounds[1].tool_results[0].images, vec![png.clone()]);
    }
}

#[test]
fn a_planned_turn_sends_the_planners_request_and_carries_tool_rounds() {
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    cloud.tools_at(0, vec![read_call("c1")]);
    let mut planner = chat_planner(2);
    let mut hooks = Hooks::default();
    let mut rounds = Vec::new();
    let mut tokens = Vec::new();
    let answer = block_on(session.run_turn(
        &transcript,
        "",
        &mut planner,
        &mut hooks,
        None,
        &mut rounds,
        &mut tokens,
    ))
    .unwrap();

    let requests = cloud.requests.borrow();
    assert_eq!(requests.len(), 2, "one tool round, then the answer");
    let first = &requests[0];
    assert_eq!(first.system.as_deref(), Some("You are Tandem."));
    assert_eq!(first.tools.len(), 1);
    let last = first.messages.last().unwrap();
    assert_eq!(last.content, "What does the page say?");
    assert_eq!(last.images, vec!["data:image/png;base64,AAAA".to_string()]);
    assert_eq!(first.messages.len(), 5, "two pairs and the request");

    // The round follows the request: the model's call, then its result.
    let second = &requests[1];
    assert_eq!(second.messages.len(), 7);
    assert_eq!(second.messages[5].role, Role::Assistant);
    assert_eq!(second.messages[5].tool_calls, vec![read_call("c1")]);
    assert_eq!(second.messages[6].role, Role::User);
    assert_eq!(second.messages[6].tool_results[0].call_id, "c1");
    assert_eq!(&second.messages[5..], &rounds[..]);

    assert_eq!(hooks.rounds, vec![vec![read_call("c1")]]);
    assert_eq!(hooks.attempts.len(), 2, "a Debug report per attempt");
    assert_eq!(hooks.answered, vec![true]);
    // Both answers streamed: the text before the call and the final one.
    assert!(hooks.deltas.ends_with(&answer.content));
    assert!(hooks.deltas.len() > answer.content.len());
    assert_eq!(tokens.len(), 2);
}

#[test]
fn tool_rounds_are_counted_by_the_budget() {
    // Room for the history and the request, but not also for a 600-character result.
    let needed = {
        let (mut session, _, _, transcript) = cloud_session(128_000);
        let mut hooks = Hooks::default();
        chat_turn(&mut session, &transcript, 2, &mut hooks, &mut Vec::new()).unwrap();
        hooks.attempts[0].breakdown.total_input + 500
    };
    let (mut session, cloud, _, transcript) = cloud_session(needed + 50);
    cloud.tools_at(0, vec![read_call("c1")]);
    let mut hooks = Hooks::default();
    let mut rounds = Vec::new();
    chat_turn(&mut session, &transcript, 2, &mut hooks, &mut rounds).unwrap();
    let requests = cloud.requests.borrow();
    let history = |r: &UniversalRequest| {
        r.messages
            .iter()
            .filter(|m| m.content.starts_with("question"))
            .count()
    };
    assert_eq!(history(&requests[0]), 2);
    assert_eq!(
        history(&requests[1]),
        1,
        "the oldest pair made room for the tool round"
    );
    let after = &hooks.attempts[1];
    assert!(after.breakdown.tool_rounds > 0);
    assert!(after.breakdown.remaining_for_response >= 500);
    assert_eq!(
        after.breakdown.total_input,
        after.breakdown.system
            + after.breakdown.user_text
            + after.breakdown.user_images
            + after.breakdown.history
            + after.breakdown.tool_rounds
    );
}

#[test]
fn rounds_handed_over_are_sent_and_counted_from_the_first_attempt() {
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    let mut rounds = vec![
        RequestMessage {
            tool_calls: vec![read_call("n1")],
            ..RequestMessage::text(Role::Assistant, "")
        },
        RequestMessage {
            tool_results: vec![ToolOutcome {
                call_id: "n1".into(),
                name: "page_read".into(),
                content: "done on device".into(),
                is_error: false,
                images: Vec::new(),
            }],
            ..RequestMessage::text(Role::User, "")
        },
    ];
    let handed = rounds.clone();
    let mut hooks = Hooks::default();
    chat_turn(&mut session, &transcript, 0, &mut hooks, &mut rounds).unwrap();
    let requests = cloud.requests.borrow();
    assert_eq!(requests.len(), 1, "no tool runs again");
    assert_eq!(&requests[0].messages[1..], &handed[..]);
    assert!(hooks.attempts[0].breakdown.tool_rounds > 0);
    assert_eq!(hooks.answered, vec![true]);
}

#[test]
fn a_busy_provider_is_retried_with_a_status_every_second() {
    let (mut session, cloud, sleeper, transcript) = cloud_session(128_000);
    let busy = ProviderError {
        retry_after_ms: Some(2_500),
        ..ProviderError::new(ErrorKind::RateLimited, "busy")
    };
    cloud.fault_at(0, Fault::Fail(busy));
    let mut hooks = Hooks::default();
    chat_turn(&mut session, &transcript, 1, &mut hooks, &mut Vec::new()).unwrap();
    assert_eq!(cloud.requests.borrow().len(), 2);
    assert_eq!(
        hooks.statuses,
        vec![
            (ProviderKind::OpenAi, 2_500),
            (ProviderKind::OpenAi, 1_500),
            (ProviderKind::OpenAi, 500)
        ]
    );
    assert_eq!(*sleeper.waits.borrow(), vec![1_000, 1_000, 500]);
    assert_eq!(hooks.attempts.len(), 2);
}

#[test]
fn stop_during_the_wait_or_the_stream_ends_the_turn_as_stopped() {
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    cloud.fault_at(
        0,
        Fault::Fail(ProviderError::new(ErrorKind::Overloaded, "busy")),
    );
    let mut hooks = Hooks {
        stop_in_wait: true,
        ..Hooks::default()
    };
    let waited = chat_turn(&mut session, &transcript, 1, &mut hooks, &mut Vec::new());
    assert_eq!(waited.unwrap_err(), CloudFailure::Stopped);
    assert_eq!(cloud.requests.borrow().len(), 1, "no retry after Stop");

    // The reader goes away after the first event: the call ends, and it is not an error.
    let mut hooks = Hooks {
        read_until: Some(1),
        ..Hooks::default()
    };
    let read = chat_turn(&mut session, &transcript, 1, &mut hooks, &mut Vec::new());
    assert_eq!(read.unwrap_err(), CloudFailure::Stopped);
    assert_eq!(cloud.requests.borrow().len(), 2);
    assert_eq!(
        hooks.attempts.len(),
        1,
        "the stopped attempt is reported too"
    );
}

#[test]
fn the_default_planner_sends_the_transcript_like_a_step() {
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    let expected = session.request_for(&transcript, "next").unwrap();
    block_on(session.run_turn(
        &transcript,
        "next",
        &mut TranscriptPlanner,
        &mut Hooks::default(),
        None,
        &mut Vec::new(),
        &mut Vec::new(),
    ))
    .unwrap();
    assert_eq!(cloud.requests.borrow()[0], expected);
}

/// Streams some text, then the connection drops.
struct CutAfterText {
    calls: RefCell<usize>,
}

impl CloudTransport for CutAfterText {
    type Abort = ();

    async fn send(&self, _: &UniversalRequest) -> Result<UniversalResponse, ProviderError> {
        unreachable!("run_turn streams")
    }

    async fn send_events(
        &self,
        _: &UniversalRequest,
        _: Option<&()>,
        on_event: &mut dyn FnMut(&StreamEvent) -> bool,
    ) -> (Result<UniversalResponse, SendFailure>, AttemptTrace) {
        *self.calls.borrow_mut() += 1;
        on_event(&StreamEvent::Delta("Half an ans".into()));
        let cut = ProviderError::new(ErrorKind::Overloaded, "the stream was cut");
        (Err(SendFailure::Provider(cut)), AttemptTrace::default())
    }
}

#[test]
fn a_failure_after_streamed_text_is_final() {
    let transport = Rc::new(CutAfterText {
        calls: RefCell::new(0),
    });
    let transcript = Transcript::new(&config_for_chat());
    let mut session = CloudSession::new(
        Rc::clone(&transport),
        Rc::new(RecordingSleeper::default()),
        CloudConfig::new(ProviderKind::OpenAi, "gpt-4o"),
        &transcript,
        None,
    );
    let mut hooks = Hooks::default();
    let result = chat_turn(&mut session, &transcript, 1, &mut hooks, &mut Vec::new());
    // Overloaded is retried when nothing was shown; here the reader saw half an answer.
    match result {
        Err(CloudFailure::Provider(e)) => assert_eq!(e.kind, ErrorKind::Overloaded),
        other => panic!("expected the provider's failure, got {other:?}"),
    }
    assert_eq!(*transport.calls.borrow(), 1, "not sent again");
    assert_eq!(hooks.deltas, "Half an ans");
    assert!(hooks.statuses.is_empty());
}

/// A chat turn on a session: Nano preferred, tool calls as structured output on one model.
fn chat_session(m: &Manager) -> HybridSession<FakeNano, FakeCloud, RecordingSleeper> {
    let config = SessionConfig {
        preferred: Preferred::Auto,
        ..config_for_chat()
    };
    block_on(m.create(config)).unwrap()
}

#[test]
fn a_chat_turn_on_nano_runs_its_tool_calls_on_one_model_and_streams_the_answer() {
    let (m, _) = manager(Availability::Available, true);
    let mut session = chat_session(&m);
    m.nano().fault_at(
        0,
        Fault::Reply(r#"{"tool":"page_read","arguments":{}}"#.into()),
    );
    m.nano()
        .fault_at(1, Fault::Reply(r#"{"answer":"It says hello."}"#.into()));
    let mut hooks = Hooks::default();
    let answer =
        block_on(session.run_turn("What does the page say?", &mut chat_planner(0), &mut hooks))
            .unwrap();
    assert_eq!(answer.content, "It says hello.");
    assert_eq!(answer.model.as_deref(), Some(NANO_MODEL));
    assert_eq!(hooks.deltas, "It says hello.");
    assert_eq!(hooks.rounds.len(), 1);
    assert_eq!(hooks.rounds[0][0].name, "page_read");
    let stats = &m.nano().stats;
    assert_eq!(stats.created.get(), 1, "one model for the whole turn");
    let inputs = stats.inputs.borrow();
    assert_eq!(inputs[0], "What does the page say?");
    // The tool's result (fenced by the tool layer) is the next prompt.
    assert!(inputs[1].starts_with("Result of page_read") && inputs[1].contains("RRRR"));
    assert!(m.transport().requests.borrow().is_empty());
    assert_eq!(session.transcript().turns.len(), 1);
}

#[test]
fn nano_failing_mid_turn_hands_the_tool_rounds_to_the_cloud_which_runs_none_again() {
    let (m, events) = manager(Availability::Available, true);
    let mut session = chat_session(&m);
    m.nano().fault_at(
        0,
        Fault::Reply(r#"{"tool":"page_read","arguments":{}}"#.into()),
    );
    m.nano().fault_at(
        1,
        Fault::Fail(NanoError::new(
            INVALID_STATE,
            "The session has been destroyed.",
        )),
    );
    let mut hooks = Hooks::default();
    let answer =
        block_on(session.run_turn("What does the page say?", &mut chat_planner(0), &mut hooks))
            .unwrap();
    // One tool round only: Nano's, carried to the cloud.
    assert_eq!(hooks.rounds.len(), 1);
    let requests = m.transport().requests.borrow();
    assert_eq!(requests.len(), 1);
    let carried: Vec<_> = requests[0]
        .messages
        .iter()
        .filter(|m| !m.tool_calls.is_empty() || !m.tool_results.is_empty())
        .collect();
    assert_eq!(carried.len(), 2, "{:?}", requests[0].messages);
    assert_eq!(carried[0].tool_calls[0].name, "page_read");
    assert!(carried[1].tool_results[0].content.starts_with("RRR"));
    assert_eq!(answer.model.as_deref(), Some("gpt-4o"));
    assert_eq!(hooks.restarts.len(), 1);
    assert!(
        hooks.restarts[0].contains("OpenAI continues"),
        "{}",
        hooks.restarts[0]
    );
    assert_eq!(
        session.provider(),
        Some(ProviderId::Cloud(ProviderKind::OpenAi))
    );
    assert_eq!(m.nano().stats.live(), 0, "the broken model is destroyed");
    assert!(kinds(&events)
        .iter()
        .any(|k| k.starts_with("0:failover-to-OpenAI")));
    // The next turn stays on the cloud session.
    drop(requests);
    block_on(session.run_turn("And now?", &mut chat_planner(0), &mut Hooks::default())).unwrap();
    assert_eq!(m.transport().requests.borrow().len(), 2);
    assert_eq!(m.nano().stats.prompts.get(), 2);
}

#[test]
fn a_stopped_nano_turn_is_cancelled_and_on_device_only_nano_failures_are_not_hidden() {
    let (m, _) = manager(Availability::Available, true);
    let mut session = chat_session(&m);
    let mut hooks = Hooks {
        stop_in_wait: true,
        ..Hooks::default()
    };
    let stopped = block_on(session.run_turn("Hi", &mut chat_planner(0), &mut hooks));
    assert!(
        matches!(stopped, Err(SessionError::Cancelled { .. })),
        "{stopped:?}"
    );
    assert!(hooks.deltas.is_empty());

    let (m, _) = manager(Availability::Available, true);
    let config = SessionConfig {
        preferred: Preferred::Nano,
        ..config_for_chat()
    };
    let mut session = block_on(m.create(config)).unwrap();
    m.nano()
        .fault_at(0, Fault::Fail(NanoError::new(QUOTA_EXCEEDED, "Too large.")));
    let failed = block_on(session.run_turn("Hi", &mut chat_planner(0), &mut Hooks::default()));
    assert!(
        matches!(failed, Err(SessionError::Nano { .. })),
        "{failed:?}"
    );
    assert!(m.transport().requests.borrow().is_empty());
}

/// The compact form of `turn(i)`: what the agent gives with the step.
fn summary(i: usize) -> String {
    format!("Step {i}. URL https://shop.example/p{i}; its element list is left out (stale).")
}

/// Runs `steps` steps, each with its compact form.
fn run_compact_steps(
    session: &mut HybridSession<FakeNano, FakeCloud, RecordingSleeper>,
    steps: usize,
) -> Result<Vec<String>, SessionError> {
    let schema = schema_for::<AgentOutput>();
    (0..steps)
        .map(|i| block_on(session.invoke_with_summary(&turn(i), &summary(i), Some(&schema))))
        .collect()
}

fn contents(req: &crate::request::UniversalRequest) -> Vec<String> {
    req.messages.iter().map(|m| m.content.clone()).collect()
}

#[test]
fn the_cloud_sends_older_turns_compact_with_their_answers_and_a_stable_prefix() {
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    let replies = run_compact_steps(&mut s, 6).unwrap();
    let requests = m.transport().requests.borrow().clone();
    assert_eq!(requests.len(), 6);
    for (n, req) in requests.iter().enumerate() {
        let sent = contents(req);
        // Every earlier turn compact, its answer (the action) whole; the newest turn whole.
        let mut expected = Vec::new();
        for (i, reply) in replies.iter().enumerate().take(n) {
            expected.push(summary(i));
            expected.push(reply.clone());
        }
        expected.push(turn(n));
        assert_eq!(sent, expected, "request {n}");
        // Request n+1 repeats request n up to its last message (the turn before last).
        if let Some(next) = requests.get(n + 1) {
            assert_eq!(next.system, req.system);
            let prefix = &sent[..sent.len() - 1];
            assert_eq!(
                &contents(next)[..prefix.len()],
                prefix,
                "prefix of {}",
                n + 1
            );
            assert_ne!(contents(next)[prefix.len()], sent[sent.len() - 1]);
        }
    }
    // The transcript keeps every turn whole (for failover, Debug and resume).
    let inputs: Vec<String> = s
        .transcript()
        .turns
        .iter()
        .map(|t| t.input.clone())
        .collect();
    assert_eq!(inputs, (0..6).map(turn).collect::<Vec<_>>());
    assert_eq!(
        s.transcript().full_messages_with("next")[0].content,
        turn(0),
        "the full view is still there"
    );
}

#[test]
fn a_failover_sends_the_compact_view_and_nano_keeps_whole_turns() {
    let (m, _) = manager(Availability::Available, true);
    m.nano().fault_at(
        3,
        Fault::Fail(NanoError::new(
            INVALID_STATE,
            "The session has been destroyed.",
        )),
    );
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    let replies = run_compact_steps(&mut s, 5).unwrap();
    // Nano was prompted with whole turns: its context holds them, nothing is re-sent.
    let nano_inputs = m.nano().stats.inputs.borrow().clone();
    assert_eq!(nano_inputs[..3], (0..3).map(turn).collect::<Vec<_>>());
    let first = contents(&m.transport().requests.borrow()[0]);
    let mut expected = Vec::new();
    for (i, reply) in replies.iter().enumerate().take(3) {
        expected.push(summary(i));
        expected.push(reply.clone());
    }
    expected.push(turn(3));
    assert_eq!(
        first, expected,
        "the failed step, rebuilt in the compact view"
    );
}

#[test]
fn a_compacted_reply_goes_compact_to_the_cloud_from_its_first_request_and_whole_to_nano() {
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    let schema = schema_for::<AgentOutput>();
    let first = block_on(s.invoke_with_summary(&turn(0), &summary(0), Some(&schema))).unwrap();
    s.compact_last_reply("{\"plan\":\"…\"}".into());
    for i in 1..3 {
        block_on(s.invoke_with_summary(&turn(i), &summary(i), Some(&schema))).unwrap();
    }
    let requests = m.transport().requests.borrow().clone();
    // Every request after the step holds the compact reply, never the whole one: each
    // request still repeats the previous one up to its last message.
    for req in &requests[1..] {
        assert_eq!(contents(req)[1], "{\"plan\":\"…\"}");
    }
    assert_eq!(contents(&requests[2])[..2], contents(&requests[1])[..2]);
    // The transcript keeps the reply whole (Nano, Debug, resume).
    assert_eq!(s.transcript().turns[0].reply, first);
    assert_eq!(s.transcript().full_messages_with("next")[1].content, first);
}

#[test]
fn a_stored_transcript_without_summaries_still_loads_and_is_sent_whole() {
    let stored = r#"{"systemPrompt":"s","schemaInstructions":"","init":[],
        "turns":[{"input":"Step 0 with its list","reply":"{}","provider":"nano"}]}"#;
    let t: Transcript = crate::json::from_str(stored).unwrap();
    assert_eq!(t.turns[0].summary, None);
    let sent: Vec<String> = t
        .messages_with("next")
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(sent, ["Step 0 with its list", "{}", "next"]);
    // And a turn without a summary is stored as before (no new key).
    let json = serde_json::to_string(&t).unwrap();
    assert!(!json.contains("summary"), "{json}");
}

#[test]
fn step_scope_on_the_cloud_sends_whole_turns_as_a_fresh_session_per_step_would() {
    // The reference: task scope without compact forms (every turn whole).
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    run_steps(&mut s, 4).unwrap();
    let whole = m.transport().requests.borrow().clone();
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(step_scoped(Preferred::Cloud))).unwrap();
    run_compact_steps(&mut s, 4).unwrap();
    assert_eq!(*m.transport().requests.borrow(), whole);
    assert!(contents(&whole[3]).contains(&turn(0)));
}

#[test]
fn preferred_ids_are_its_serde_names() {
    for p in Preferred::ALL {
        assert_eq!(serde_json::to_value(p).unwrap(), serde_json::json!(p.id()));
        assert_eq!(Preferred::from_id(p.id()), Some(p));
    }
    assert_eq!(Preferred::from_id("Nano"), None);
}

/// Issue 33: a model that calls a tool in every answer. Past the 8 rounds the next request
/// offers no tools, carries the rounds as text and asks for the answer, and the turn ends
/// there: 9 requests, not one per further call.
#[test]
fn a_model_that_keeps_calling_tools_gets_one_request_without_tools_then_the_turn_ends() {
    for (reply, answered) in [("", false), ("Here is what I found.", true)] {
        let (mut session, cloud, _, transcript) = cloud_session(128_000);
        for n in 0..40 {
            cloud.tools_at(n, vec![read_call(&format!("c{n}"))]);
        }
        if reply.is_empty() {
            cloud.reply_with(|_| String::new());
        } else {
            cloud.reply_with(|_| "Here is what I found.".into());
        }
        let mut hooks = Hooks {
            max_rounds: Some(8),
            ..Hooks::default()
        };
        let result = chat_turn(&mut session, &transcript, 1, &mut hooks, &mut Vec::new());
        let requests = cloud.requests.borrow();
        assert_eq!(
            requests.len(),
            9,
            "8 tool rounds, then one request for the answer"
        );
        assert_eq!(hooks.rounds.len(), 8, "no call past the limit runs");
        assert!(requests[..8].iter().all(|r| r.tools.len() == 1));
        let last = &requests[8];
        assert!(last.tools.is_empty(), "the last request offers no tools");
        assert!(last
            .messages
            .iter()
            .all(|m| m.tool_calls.is_empty() && m.tool_results.is_empty()));
        let asked = &last.messages.last().unwrap().content;
        assert!(asked.ends_with(FINAL_ANSWER_NOTE), "{asked}");
        assert!(asked.contains("(the tool page_read answered:)"));
        match (result, answered) {
            (Ok(r), true) => {
                assert_eq!(r.content, "Here is what I found.");
                assert!(r.tool_calls.is_empty());
            }
            (Err(CloudFailure::Provider(e)), false) => {
                assert!(
                    e.message.contains("kept calling tools after the 8 rounds"),
                    "{}",
                    e.message
                );
            }
            (other, _) => panic!("{other:?}"),
        }
    }
}

/// The backstop: hooks that never run out of rounds still cannot make a turn send more than
/// [`MAX_REQUESTS_PER_TURN`] requests.
#[test]
fn a_turn_never_sends_more_than_the_request_ceiling() {
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    for n in 0..100 {
        cloud.tools_at(n, vec![read_call(&format!("c{n}"))]);
    }
    let err = chat_turn(
        &mut session,
        &transcript,
        1,
        &mut Hooks::default(),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(
        cloud.requests.borrow().len(),
        MAX_REQUESTS_PER_TURN as usize
    );
    let CloudFailure::Provider(e) = err else {
        panic!("{err:?}")
    };
    assert!(
        e.message
            .starts_with("Tandem stopped after 16 requests to OpenAI"),
        "{}",
        e.message
    );
}

/// The structured-output rung each request asked for.
fn output_modes(requests: &[UniversalRequest]) -> Vec<crate::structured::OutputMode> {
    requests
        .iter()
        .map(|r| r.output.as_ref().unwrap().mode)
        .collect()
}

/// How a 400 with `body` from the server at `base_url` is classified (model "m", no key).
fn classify_400(kind: ProviderKind, base_url: &str, body: &str) -> ProviderError {
    let cfg = crate::provider::ProviderConfig {
        kind,
        base_url: base_url.into(),
        model: "m".into(),
        api_key: String::new(),
        project_id: String::new(),
        app_id: String::new(),
    };
    crate::errors::classify_http(400, body, None, &cfg)
}

/// Issue 33: an OpenAI-compatible server that refuses `json_schema`, then `json_object`: the
/// same step is asked again a rung down each time and answered once, the refusals cost no
/// token record, and the session keeps the rung for its later steps.
#[test]
fn a_server_refusing_structured_output_steps_the_ladder_down_once_per_rung() {
    use crate::structured::OutputMode;
    let (mut session, cloud, _, transcript) = cloud_session(128_000);
    let refused = |what: &str| {
        let body = format!(
            r#"{{"error":{{"message":"'response_format.type' must be 'text', got '{what}'","type":"invalid_request_error","param":"response_format"}}}}"#
        );
        classify_400(
            ProviderKind::OpenAiCompatible,
            "http://localhost:1234/v1",
            &body,
        )
    };
    assert_eq!(refused("json_schema").kind, ErrorKind::OutputFormatRefused);
    cloud.fault_at(0, Fault::Fail(refused("json_schema")));
    cloud.fault_at(1, Fault::Fail(refused("json_object")));
    session.set_output(Some(crate::session::StepOutput {
        name: "navigator_action".into(),
        schema: serde_json::json!({"type": "object"}),
        ..Default::default()
    }));
    let mut tokens = Vec::new();
    let mut hooks = Hooks::default();
    let answer = block_on(session.run_turn(
        &transcript,
        "ROLE: NAVIGATOR",
        &mut TranscriptPlanner,
        &mut hooks,
        None,
        &mut Vec::new(),
        &mut tokens,
    ));
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(
        output_modes(&cloud.requests.borrow()),
        [
            OutputMode::JsonSchema,
            OutputMode::JsonObject,
            OutputMode::Prose
        ]
    );
    assert_eq!(tokens.len(), 1, "the refusals are not attempts of the step");
    assert_eq!(session.output_mode(), OutputMode::Prose);
    // The next step starts where the ladder stopped.
    block_on(session.run_turn(
        &transcript,
        "ROLE: NAVIGATOR again",
        &mut TranscriptPlanner,
        &mut Hooks::default(),
        None,
        &mut Vec::new(),
        &mut tokens,
    ))
    .unwrap();
    let last = cloud
        .requests
        .borrow()
        .last()
        .unwrap()
        .output
        .clone()
        .unwrap();
    assert_eq!(last.mode, OutputMode::Prose);
}

/// The ladder's rung outlives the task: the next session on the same provider and model
/// starts where the server's refusals left it, and sends no request it would refuse.
#[test]
fn a_later_task_starts_at_the_rung_the_server_took() {
    use crate::structured::OutputMode;
    let (m, _) = manager(Availability::Unavailable, true);
    let refused = crate::errors::ProviderError {
        kind: ErrorKind::OutputFormatRefused,
        message: "refused".into(),
        status: Some(400),
        retry_after_ms: None,
        said: None,
    };
    m.transport().fault_at(0, Fault::Fail(refused.clone()));
    m.transport().fault_at(1, Fault::Fail(refused));
    let schema = Schema::new(serde_json::json!({"type": "object"}));
    let mut first = block_on(m.create(config(Preferred::Cloud))).unwrap();
    block_on(first.invoke_step("Step 1", None, "navigator_action", &schema)).unwrap();
    assert_eq!(first.output_mode(), Some(OutputMode::Prose));
    first.destroy();
    let mut second = block_on(m.create(config(Preferred::Cloud))).unwrap();
    block_on(second.invoke_step("Step 1", None, "navigator_action", &schema)).unwrap();
    assert_eq!(
        output_modes(&m.transport().requests.borrow()),
        [
            OutputMode::JsonSchema,
            OutputMode::JsonObject,
            OutputMode::Prose,
            OutputMode::Prose
        ]
    );
}

/// Issue 33: a navigator step on the cloud offers the task's tools natively; a native call is
/// the step's answer (one, of parallel calls), and its result goes back in the next step's
/// request as a tool result right after the call, whichever step comes next (a planner step
/// declares the tools but may not call them). A resumed task keeps the pair.
#[test]
fn a_native_call_is_the_steps_answer_and_its_result_goes_back_as_a_tool_result() {
    use crate::structured::{OutputMode, ReplyForm, StepMode};
    let (m, _) = manager(Availability::Unavailable, true);
    let tool = ToolSpec {
        name: "notes__add_note".into(),
        description: "Adds a note.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    };
    let call = |id: &str, text: &str| ToolCall {
        id: id.into(),
        name: "notes__add_note".into(),
        arguments: serde_json::json!({ "text": text }),
    };
    m.transport()
        .tools_at(0, vec![call("call_9", "milk"), call("call_10", "eggs")]);
    let schema = Schema::new(serde_json::json!({"type": "object"}));
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    s.set_step_tools(vec![tool.clone()]);

    let reply = block_on(s.invoke_step_calling(
        "ROLE: NAVIGATOR step 1",
        Some("step 1"),
        "navigator_action",
        &schema,
    ))
    .unwrap();
    assert_eq!(
        reply.call,
        Some(call("call_9", "milk")),
        "the first call only"
    );
    assert_eq!(reply.text, "");
    assert_eq!(s.step_mode(), Some(StepMode::NativeCall));
    let outcome = ToolOutcome {
        call_id: "call_9".into(),
        name: "notes__add_note".into(),
        content: "⟦untrusted data: result⟧\nAdded.\n⟦/untrusted data⟧".into(),
        is_error: false,
        images: Vec::new(),
    };
    s.answer_call(outcome.clone());

    // The planner comes next: its request declares the tools, may not call them, and
    // carries the call and its result in the provider-neutral shape every adapter spreads.
    let plan = block_on(s.invoke_step("ROLE: PLANNER", None, "planner_reply", &schema)).unwrap();
    assert!(!plan.is_empty());
    assert_eq!(
        s.step_mode(),
        Some(StepMode::Reply {
            form: ReplyForm::Rung(OutputMode::JsonSchema),
            tools: true
        })
    );
    let check = |i: usize, calls: bool| {
        let requests = m.transport().requests.borrow();
        let r = &requests[i];
        assert_eq!(r.tools, std::slice::from_ref(&tool), "request {i}");
        assert_eq!(r.output.as_ref().unwrap().calls, calls, "request {i}");
        let asked = r
            .messages
            .iter()
            .position(|m| !m.tool_calls.is_empty())
            .expect("the call is in the history");
        assert_eq!(r.messages[asked].tool_calls, [call("call_9", "milk")]);
        assert_eq!(r.messages[asked].role, Role::Assistant);
        let answer = &r.messages[asked + 1];
        assert_eq!(answer.tool_results, std::slice::from_ref(&outcome));
        assert_eq!(answer.role, Role::User);
        // The result is sent once: as the tool result, not again in a turn's text.
        let all: String = r.messages.iter().map(|m| m.content.as_str()).collect();
        assert!(!all.contains("Added."), "{all}");
    };
    check(1, false);
    {
        let first = &m.transport().requests.borrow()[0];
        assert!(first.output.as_ref().unwrap().calls);
        assert_eq!(first.tools, std::slice::from_ref(&tool));
    }

    // A later navigator step, and the same task resumed elsewhere, still send the pair.
    block_on(s.invoke_step_calling(
        "ROLE: NAVIGATOR step 2",
        Some("step 2"),
        "navigator_action",
        &schema,
    ))
    .unwrap();
    check(2, true);
    let stored = serde_json::to_string(s.transcript()).unwrap();
    let transcript: Transcript = crate::json::from_str(&stored).unwrap();
    assert_eq!(&transcript, s.transcript());
    s.destroy();
    let mut again = block_on(m.resume(config(Preferred::Cloud), transcript)).unwrap();
    again.set_step_tools(vec![tool.clone()]);
    block_on(again.invoke_step_calling(
        "ROLE: NAVIGATOR step 3",
        Some("step 3"),
        "navigator_action",
        &schema,
    ))
    .unwrap();
    check(3, true);
}

/// Issue 33: a server that refuses the step's native tools (an Ollama model without tool
/// support, vLLM without auto tool choice) gets the same step again without them, and the
/// session's later steps offer none: the task goes on with the `tool` action, no step lost.
#[test]
fn a_server_that_refuses_native_tools_gets_the_step_again_without_them() {
    use crate::structured::{OutputMode, ReplyForm, StepMode};
    let refusal = |kind: ProviderKind, body: &str| classify_400(kind, "http://127.0.0.1:1", body);
    let ollama = refusal(
        ProviderKind::Ollama,
        r#"{"error":"registry.ollama.ai/library/gemma3:1b does not support tools"}"#,
    );
    let vllm = refusal(
        ProviderKind::OpenAiCompatible,
        r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}"#,
    );
    for e in [&ollama, &vllm] {
        assert_eq!(e.kind, ErrorKind::ToolsRefused, "{e:?}");
    }
    // Other 400s stay what they were.
    let other = refusal(
        ProviderKind::OpenAi,
        r#"{"error":{"message":"max_tokens is too large"}}"#,
    );
    assert_eq!(other.kind, ErrorKind::Provider);

    let (m, _) = manager(Availability::Unavailable, true);
    m.transport().fault_at(0, Fault::Fail(vllm));
    let schema = Schema::new(serde_json::json!({"type": "object"}));
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    s.set_step_tools(vec![ToolSpec {
        name: "notes__add_note".into(),
        description: "Adds a note.".into(),
        parameters: serde_json::json!({"type": "object"}),
    }]);
    for turn in ["ROLE: NAVIGATOR step 1", "ROLE: NAVIGATOR step 2"] {
        let reply =
            block_on(s.invoke_step_calling(turn, None, "navigator_action", &schema)).unwrap();
        assert!(reply.call.is_none() && !reply.text.is_empty());
        assert_eq!(
            s.step_mode(),
            Some(StepMode::Reply {
                form: ReplyForm::Rung(OutputMode::JsonSchema),
                tools: false
            })
        );
    }
    let offered: Vec<usize> = m
        .transport()
        .requests
        .borrow()
        .iter()
        .map(|r| r.tools.len())
        .collect();
    assert_eq!(offered, [1, 0, 0], "refused once, then never offered again");
    assert_eq!(s.transcript().turns.len(), 2, "each step answered once");
    assert_eq!(
        s.token_log().len(),
        2,
        "the refused request is no attempt of the step"
    );
}

/// A task step's attached images (a tool's, from the step before) go with that step's turn
/// only: the next step's request has none, and its history holds the turn's text.
#[test]
fn a_steps_images_go_with_its_turn_only() {
    let (m, _) = manager(Availability::Unavailable, true);
    let schema = Schema::new(serde_json::json!({"type": "object"}));
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    assert!(s.takes_images(), "gpt-4o reads images");
    let png = "data:image/png;base64,iVBORw0KGgo=".to_string();
    s.attach_images(vec![png.clone()]);
    block_on(s.invoke_step("Step 1", None, "navigator_action", &schema)).unwrap();
    block_on(s.invoke_step("Step 2", None, "navigator_action", &schema)).unwrap();
    let requests = m.transport().requests.borrow();
    let first = requests[0].messages.last().unwrap();
    assert_eq!(
        (first.content.as_str(), &first.images),
        ("Step 1", &vec![png])
    );
    assert!(requests[1].messages.iter().all(|m| m.images.is_empty()));
}

#[test]
fn a_screenshot_goes_only_to_a_cloud_model_that_takes_images_and_only_while_attached() {
    const SHOT: &str = "data:image/jpeg;base64,/9j/AAAA";
    // gpt-4o takes images: the step's request carries it on its last message.
    let (m, _) = manager(Availability::Unavailable, true);
    let mut s = block_on(m.create(config(Preferred::Cloud))).unwrap();
    assert!(s.takes_images());
    s.attach_screenshot(vec![SHOT.to_string()], 765);
    block_on(s.invoke(&turn(0), None)).unwrap();
    s.clear_screenshot();
    block_on(s.invoke(&turn(1), None)).unwrap();
    let requests = m.transport().requests.borrow();
    let images: Vec<Vec<String>> = requests
        .iter()
        .map(|r| r.messages.iter().flat_map(|m| m.images.clone()).collect())
        .collect();
    assert_eq!(images, [vec![SHOT.to_string()], vec![]]);
    assert_eq!(requests[0].messages.last().map(|m| m.images.len()), Some(1));
    drop(requests);

    // A text-only cloud model never gets one, whatever the caller attached.
    let blind = SessionManager::new(
        FakeNano::new(Availability::Unavailable),
        FakeCloud::default(),
        RecordingSleeper::default(),
        Some(CloudConfig::new(ProviderKind::OpenAi, "gpt-3.5-turbo")),
    );
    let mut s = block_on(blind.create(config(Preferred::Cloud))).unwrap();
    assert!(!s.takes_images());
    s.attach_screenshot(vec![SHOT.to_string()], 765);
    block_on(s.invoke(&turn(0), None)).unwrap();
    assert!(blind.transport().requests.borrow()[0]
        .messages
        .iter()
        .all(|m| m.images.is_empty()));

    // A Nano session created without image input is never given the image.
    let (m, _) = manager(Availability::Available, true);
    let mut s = block_on(m.create(config(Preferred::Auto))).unwrap();
    assert_eq!(s.provider(), Some(ProviderId::Nano));
    assert!(!s.takes_images());
    s.attach_screenshot(vec![SHOT.to_string()], 765);
    block_on(s.invoke(&turn(0), None)).unwrap();
    let stats = &m.nano().stats;
    assert!(stats.received_texts().iter().all(|t| !t.contains("base64")));
    assert!(stats
        .prompt_options
        .borrow()
        .iter()
        .all(|o| o.images.is_empty()));
    let kinds = |o: &NanoCreateOptions| -> Vec<String> {
        o.expected_inputs.iter().map(|e| e.kind.clone()).collect()
    };
    assert_eq!(kinds(&stats.create_options.borrow()[0]), ["text"]);
}

#[test]
fn nano_takes_a_screenshot_only_when_its_session_was_created_with_image_input() {
    const SHOT: &str = "data:image/jpeg;base64,/9j/AAAA";
    let (m, _) = manager(Availability::Available, true);
    let seeing = SessionConfig {
        images: true,
        ..config(Preferred::Auto)
    };
    let mut s = block_on(m.create(seeing)).unwrap();
    assert_eq!(s.provider(), Some(ProviderId::Nano));
    assert!(s.takes_images(), "created with image input");
    s.attach_screenshot(vec![SHOT.to_string()], crate::vision::NANO_IMAGE_TOKENS);
    block_on(s.invoke(&turn(0), None)).unwrap();
    let with_shot = s.token_log().last().map(|t| t.sent).unwrap_or_default();
    s.clear_screenshot();
    block_on(s.invoke(&turn(0), None)).unwrap();
    let without = s.token_log().last().map(|t| t.sent).unwrap_or_default();

    let stats = &m.nano().stats;
    assert_eq!(stats.created.get(), 1, "one on-device session for the task");
    let created = &stats.create_options.borrow()[0];
    let kinds: Vec<&str> = created
        .expected_inputs
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        ["text", "image"],
        "image input asked for at creation"
    );
    let options = stats.prompt_options.borrow();
    assert_eq!(
        options[0].images,
        [SHOT.to_string()],
        "the step's prompt carries it"
    );
    assert!(options[1].images.is_empty(), "only while attached");
    // The first prompt also carried the initial prompts; compare the image's share by
    // the same turn sent again.
    assert!(
        with_shot >= without + crate::vision::NANO_IMAGE_TOKENS,
        "{with_shot} vs {without}"
    );
    // The image is a part of its own, never pasted into the prompt's text.
    assert!(stats.received_texts().iter().all(|t| !t.contains("base64")));
}

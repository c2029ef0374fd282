//! Tools from other extensions ("tool providers"): Tandem is the orchestrator that lets the
//! model call them, with the user's approval.
//!
//! The flow, as the service worker runs it:
//! 1. A provider sends `REGISTER_TOOLS` over cross-extension messaging; [`parse_incoming`]
//!    reads and bounds it (untrusted input), [`Registry::register`] records it and says
//!    whether the user must first approve the provider ([`Registry::approval_question`],
//!    [`Registry::decide`]); [`RegisterOutcome::answer`] is what the provider is told.
//! 2. A chat request offers [`Registry::specs`]: the allowed tools under model-facing names
//!    that are valid for every provider and never collide.
//! 3. Each call the model makes goes through [`plan_call`] (per answer, [`plan_round`]):
//!    refused at once, asked, or run by sending [`Run::message`] (`TOOL_EXECUTE`).
//! 4. The provider's answer ([`parse_tool_result`]), or a timeout, a missing provider or the
//!    user's no, becomes a [`crate::request::ToolOutcome`] for the model ([`outcome`]): capped
//!    and fenced, errors as sentences.
//!
//! On Gemini Nano, which has no native tool calling, [`nano`] turns the same turn into
//! structured output. Everything here is pure; the worker does messaging, storage, timers
//! and questions.

pub mod nano;
pub mod outcome;
pub mod protocol;
pub mod registry;
pub mod schema;
pub mod turn;

pub use nano::{instructions, parse_reply, response_constraint, result_turn, NanoReply};
pub use outcome::{Failure, Origin, MAX_RESULT_CHARS};
pub use protocol::{
    parse_incoming, parse_tool_result, Annotations, Answer, Incoming, Outgoing, ProtocolError,
    ResultItem, ToolDescriptor, ToolResult,
};
pub use registry::{
    Decision, Policy, Provider, RegisterOutcome, Registry, RegistryError, Resolved, STORAGE_KEY,
};
pub use schema::{check_schema, validate, Invalid, Violation};
pub use turn::{plan_call, plan_round, round_limit_sentence, CallPlan, Rounds, Run, MAX_ROUNDS};

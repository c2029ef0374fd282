//! The browser agent's pure logic: what the page looks like to the LLM, what the LLM may do,
//! and what must not happen without the user.
//!
//! One step of the loop, as the service worker runs it:
//! 1. `extension/content/driver.js` returns a [`Snapshot`] of the tab.
//! 2. [`ElementMap::build`] numbers its visible interactive elements, keeping the numbers of
//!    the previous step's elements, and [`ElementMap::render`] writes the list for the LLM,
//!    fenced as untrusted data ([`safety::fence`]).
//! 3. The LLM answers one flat JSON action; [`parse_action`] reads it (or says what to fix).
//! 4. Before acting, a fresh snapshot is taken and [`ElementMap::locate`] finds the element
//!    the LLM meant ([`signature`]), refusing when unsure; [`judge()`] and
//!    [`UrlPolicy`] decide whether the user must agree first.
//! 5. The driver's `act` runs a [`DriverCommand`] on the element's handle, hit-testing where a
//!    person's pointer would land, and [`ActResult::sentence`] says what it changed.

pub mod actions;
pub mod colour;
pub mod cost;
pub mod effects;
pub mod element_map;
pub mod flow;
pub mod judge;
#[cfg(test)]
mod judge_tests;
pub mod keys;
pub mod look;
#[cfg(test)]
mod perception_tests;
pub mod recorder;
pub mod report;
pub mod safety;
pub mod settings;
pub mod signature;
pub mod sites;
pub mod snapshot;
pub mod step_line;
pub mod tabs;
pub mod task;
#[cfg(test)]
mod tests;
pub mod tool_step;
pub mod trusted;
pub mod waiting;
pub mod why;
pub mod workflow;

pub use actions::{
    action_schema, action_schema_for, action_schema_with_tools, parse_action, Action, ActionError,
    DragTarget, ParsedAction, Repair, ScrollTarget, SelectMode, LOOK_ACTION, TOOL_ACTION,
};
pub use effects::{
    effect_message, effect_of, effect_question, held_message, held_question, Approved, Effect,
    Firewall, Held,
};
pub use element_map::{ElementMap, Entry, LocateError, Rendered, LIST_LEGEND};
pub use judge::{
    approval_message, approval_sentence, judge, wants_page_words, ConfirmReason, JudgeMemory, Kind,
    Step, Verdict,
};
pub use safety::{fence, seen_as, seen_as_message, HostPattern, UrlDenied, UrlPolicy, FENCE_RULE};
pub use settings::{AgentSettings, SiteListError};
pub use signature::{Evidence, Match, Signature};
pub use sites::{
    explain_script_error, leave_message, leave_question, needs_file_access, needs_leave_approval,
    needs_site_grant, page_refusal, site_denied, site_question, userinfo_message, userinfo_warning,
    SiteGrants, SITE_GRANTS_KEY,
};
pub use snapshot::{frame_of_handle, ActErrorCode, ActResult, DriverCommand, Element, Snapshot};
pub use task::ToolUse;

//! Give Tandem tools from your own Chrome extension, in Rust compiled to wasm.
//!
//! Tandem (extension id [`TANDEM_ID`]) is an orchestrator: other extensions, *tool
//! providers*, register tools with it, and its model calls them. This crate is the whole
//! provider side of that protocol: it registers your tools (retrying while Tandem is not
//! there, waiting while the user has not approved you yet, registering again when Tandem
//! asks), routes each `TOOL_EXECUTE` to your handler, turns errors into results, and
//! refuses every message that does not come from Tandem. `README.md` next to this crate
//! has the protocol's exact JSON and the manifest a provider needs.
//!
//! # Example
//!
//! The wasm side, a `cdylib` crate depending on this one, `wasm-bindgen`, `serde` and
//! `schemars`:
//!
//! ```no_run
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tandem_tool_provider::{Tool, ToolProvider, ToolResult};
//! use wasm_bindgen::prelude::*;
//!
//! /// The parameters of `note.add`. Doc comments become the schema's descriptions, which
//! /// Tandem's model reads.
//! #[derive(Deserialize, JsonSchema)]
//! struct AddNote {
//!     /// The note's text.
//!     text: String,
//! }
//!
//! #[wasm_bindgen(start)]
//! fn main() {
//!     ToolProvider::new(
//!         "Notes",
//!         [
//!             Tool::new("note.add", "Add a note", "Saves a short note for the user.")
//!                 .params::<AddNote>(),
//!             Tool::new("note.count", "Count notes", "Says how many notes there are.")
//!                 .read_only()
//!                 .closed_world(),
//!         ],
//!     )
//!     .handle("note.add", |p: AddNote| async move {
//!         if p.text.trim().is_empty() {
//!             return Err("the note is empty".to_string()); // becomes ToolResult.error
//!         }
//!         Ok(format!("Saved: {}", p.text)) // becomes {content:[{type:"text", text}]}
//!     })
//!     .handle("note.count", |_: serde_json::Value| async move {
//!         Ok::<_, String>(ToolResult::text("0 notes").with_details(serde_json::json!({"count": 0})))
//!     })
//!     .start();
//! }
//! ```
//!
//! The worker's bootstrap, `background.js` (`"background": {"service_worker":
//! "background.js", "type": "module"}` in the manifest), after
//! `wasm-bindgen --target web --out-dir wasm`:
//!
//! ```js
//! import init from './wasm/notes.js';
//! init().catch((error) => console.error('Notes: the wasm did not load:', error));
//! ```
//!
//! That is all of it, and it is enough for MV3. Chrome hands the event that wakes a
//! stopped worker only to listeners added synchronously while the worker script is first
//! evaluated, before any wasm can have loaded. This crate's listeners
//! (`runtime.onMessageExternal`, `onInstalled`, `onStartup`) live in a small JS module that
//! wasm-bindgen's glue imports statically, so they are added during that evaluation; they
//! queue events until [`ToolProvider::start`] runs and then forward them. Keep the
//! bootstrap free of top-level `await` (it makes the worker's registration fail silently),
//! and add your own listeners for other events at its top level.
//!
//! # When it registers
//!
//! - At every worker start ([`ToolProvider::start`]) and on `runtime.onInstalled` /
//!   `onStartup` (these arrive with a start, so at most one registration runs). Registering
//!   is idempotent on Tandem's side.
//! - When Tandem sends `ORCHESTRATOR_READY` (it started, or the user approved this
//!   provider): always, replacing a registration under way.
//!
//! A registration sends `REGISTER_TOOLS` until Tandem answers. If nobody answers (Tandem
//! not installed or disabled: "Could not establish connection. Receiving end does not
//! exist.") it retries up to [`registration::MAX_ATTEMPTS`] times, waiting 250 ms, 500 ms,
//! … doubling up to 20 s ([`registration::backoff_ms`]). Any answer stops it: `ok:true` is
//! done, `ok:false` (a first registration waits for the user's approval) means "wait for
//! `ORCHESTRATOR_READY`", which Tandem sends once approved.
//!
//! # Errors and panics
//!
//! A handler's `Err`, parameters that do not deserialise into its type, and a call to a tool
//! this provider does not offer all become a [`ToolResult`] with `error` set; nothing in this
//! crate panics on what arrives from outside. A panic in a handler cannot be caught in wasm
//! (the release profile aborts): return `Err` instead.

mod protocol;
mod provider;
pub mod registration;
mod runtime;
mod tool;

pub use protocol::{
    Annotations, Content, ProviderMessage, RegisterAnswer, Route, ToolCall, ToolDescriptor,
    ToolResult, TANDEM_ID,
};
pub use provider::ToolProvider;
pub use runtime::unregister;
pub use tool::Tool;

/// The pure decisions (routing and the answers to refused messages), public so a provider
/// with needs this crate does not cover can reuse them.
pub mod wire {
    pub use crate::protocol::{acknowledged, refusal, route};
}

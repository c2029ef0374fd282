//! Tandem's pure logic. No wasm-bindgen, no web-sys, no I/O: everything here is plain data
//! in, plain data out, so it is tested natively with `cargo test` and reused unchanged by the
//! service worker and the side panel.
//!
//! Data flows one way through the send pipeline:
//! visible history → [`budget`] → [`request`] (`UniversalRequest`) → [`adapters`] (HTTP request
//! + stream decoder per provider) → [`stream::StreamEvent`]s → [`errors`] for failures.

// Tests may sort with the standard sorts (clippy.toml disallows them in shipped code, which
// the wasm clippy run checks without cfg(test)).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod adapters;
pub mod agent;
pub mod answer_schema;
pub mod budget;
pub mod case;
pub mod chat;
pub mod decimal;
pub mod errors;
pub mod export;
pub mod fence;
pub mod float_text;
pub mod hash;
pub mod http;
pub mod i18n;
pub mod json;
pub mod markdown;
pub mod mcp;
pub mod memory;
pub mod model_list;
pub mod models;
pub mod ndjson;
pub mod page_text;
pub mod protocol;
pub mod provider;
pub mod redact;
pub mod request;
pub mod send;
pub mod session;
pub mod settings;
pub mod sort;
pub mod sse;
pub mod stream;
pub mod structured;
pub mod tokens;
pub mod tools;
pub mod url;
pub mod vision;

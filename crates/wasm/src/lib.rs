//! Tandem's one shipped wasm module: the service worker (`tandem-background`) and the side
//! panel (`tandem-side-panel`) linked together. Both use most of `tandem-core`, serde_json and
//! the standard library; as one module that code ships once (635 KB gzip instead of 532 + 280
//! KB for two modules, when they were joined). Each context calls only its own start export:
//! `extension/background.js` calls `start_worker`, `extension/sidepanel.js` calls
//! `start_panel`; the other half's code is never run there.
//!
//! Linking is all this crate does: the `#[wasm_bindgen]` exports of both crates become this
//! module's exports. It holds no code, so no crate depends on it.

pub use tandem_background;
pub use tandem_side_panel;

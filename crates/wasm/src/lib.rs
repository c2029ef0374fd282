//! Tandem's shipped wasm. This crate holds no code: it links, per context, the crate whose
//! `#[wasm_bindgen]` exports become the module's. scripts/build builds it twice, with
//! `--features worker` (the service worker, `tandem-background`: dist/wasm/worker.js) and
//! `--features panel` (the side panel, `tandem-side-panel`: dist/wasm/panel.js), so each
//! context fetches and compiles only its own code. No crate depends on it.

#[cfg(feature = "worker")]
pub use tandem_background;
#[cfg(feature = "panel")]
pub use tandem_side_panel;

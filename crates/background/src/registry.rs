//! The tool registry as the worker keeps it: read from `chrome.storage.local` once per worker
//! life (the panel reads the same entry for Settings → Tools and the approval prompt),
//! changed here and saved when it changed; and the calls waiting on a provider, which end as
//! withdrawn the moment a change removes or turns off that provider. What the registry
//! decides is `tandem_core::tools::Registry`.

use std::cell::{Cell, RefCell};

use serde_json::Value;
use tandem_core::tools::{Registry, STORAGE_KEY};
use wasm_bindgen::prelude::*;

use crate::chrome;

thread_local! {
    /// The registry as stored; loaded once per worker life, then changed here and saved.
    static REGISTRY: RefCell<Option<Registry>> = const { RefCell::new(None) };
    /// Calls waiting for a provider's answer, ended early when the user removes or turns off
    /// that provider meanwhile.
    static RUNNING: RefCell<Vec<Waiting>> = const { RefCell::new(Vec::new()) };
    static NEXT_WAIT: Cell<u64> = const { Cell::new(0) };
}

/// A call waiting for its provider's answer.
struct Waiting {
    id: u64,
    provider_id: String,
    /// Ends the wait as withdrawn.
    end: js_sys::Function,
}

/// A call now waits on `provider_id`: `end` is called if a change removes or turns off that
/// provider first. Returns the id [`unwatch`] takes.
pub(crate) fn watch(provider_id: &str, end: js_sys::Function) -> u64 {
    let id = NEXT_WAIT.with(|n| {
        n.set(n.get() + 1);
        n.get()
    });
    RUNNING.with(|w| {
        w.borrow_mut().push(Waiting {
            id,
            provider_id: provider_id.to_string(),
            end,
        })
    });
    id
}

/// The call `id` no longer waits (its provider answered, or it gave up).
pub(crate) fn unwatch(id: u64) {
    RUNNING.with(|w| w.borrow_mut().retain(|x| x.id != id));
}

/// The registry, read from storage the first time. Unreadable storage reads as empty: no
/// tools is safe, and every provider is asked again.
pub(crate) async fn loaded() -> Registry {
    if let Some(r) = REGISTRY.with(|r| r.borrow().clone()) {
        return r;
    }
    let stored = chrome::stored_json(chrome::storage_local_get, STORAGE_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|text| tandem_core::json::from_str::<Value>(&text).ok());
    let registry = stored
        .map(|v| Registry::from_stored(&v))
        .unwrap_or_default();
    // Another call may have loaded (and changed) it while this one waited: keep that one.
    REGISTRY.with(|r| r.borrow_mut().get_or_insert(registry).clone())
}

/// At worker start: the toolbar badge says again which providers wait for Allow / Deny.
pub(crate) fn start() {
    wasm_bindgen_futures::spawn_local(async {
        let registry = loaded().await;
        crate::badge::providers(&registry);
    });
}

/// Changes the registry and saves it (the panel re-renders from `storage.onChanged`). A
/// change that changes nothing (a provider re-registering the same tools at every wake) is
/// not written: each write wakes every panel's listener.
pub(crate) async fn change<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    // The async part is the same for every change: one copy, not one per caller's closure.
    let mut f = Some(f);
    let mut out = None;
    change_with(&mut |registry| out = f.take().map(|f| f(registry))).await;
    match out {
        Some(out) => out,
        // `change_with` calls it exactly once.
        None => unreachable!("the registry change was not applied"),
    }
}

async fn change_with(f: &mut dyn FnMut(&mut Registry)) {
    loaded().await;
    let before = REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        let registry = r.get_or_insert_with(Registry::default);
        let before = registry.to_stored();
        f(registry);
        before
    });
    changed(before).await;
}

/// After a change (`before`: the registry as stored before it): the badge, the calls to a
/// provider gone, and the write.
async fn changed(before: Value) {
    let (after, withdrawn) = REGISTRY.with(|r| {
        let mut r = r.borrow_mut();
        let registry = r.get_or_insert_with(Registry::default);
        // The toolbar badge says when a provider waits for Allow / Deny.
        crate::badge::providers(registry);
        let withdrawn: Vec<Waiting> = RUNNING.with(|w| {
            let mut w = w.borrow_mut();
            let (gone, kept) = w.drain(..).partition(|x: &Waiting| {
                registry
                    .provider(&x.provider_id)
                    .is_none_or(|p| !p.usable())
            });
            *w = kept;
            gone
        });
        (registry.to_stored(), withdrawn)
    });
    // Calls to a provider the user just removed or turned off end now, not at their timeout.
    for waiting in withdrawn {
        let _ = waiting.end.call0(&JsValue::NULL);
    }
    if before != after {
        if let Err(e) = save(&after).await {
            crate::log_error("the tool registry could not be saved", &e);
        }
    }
}

async fn save(stored: &Value) -> Result<(), JsValue> {
    chrome::store_json(STORAGE_KEY, &stored.to_string()).await
}

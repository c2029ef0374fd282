//! A host as Chrome reads it: the site lists, the grants and the recorder's registrations
//! compare hosts in the browser's own canonical form.

/// The host of `url` as the browser's own URL parser reads it (lowercase, punycode, IP
/// addresses canonical), without the port; `None` when it has none.
pub(super) fn host_of(url: &str) -> Option<String> {
    let parsed = web_sys::Url::new(url).ok()?;
    let host = parsed.hostname();
    (!host.is_empty()).then_some(host)
}

/// A site-list entry's host as the browser would write it (`Bücher.de` → `xn--bcher-kva.de`);
/// the entry unchanged when it is no host.
pub(super) fn canonical_host(host: &str) -> String {
    web_sys::Url::new(&format!("http://{host}/"))
        .map(|u| u.hostname())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| host.to_string())
}

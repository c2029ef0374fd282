//! Addresses as Tandem reads them where the browser's own parser is not at hand (core has no
//! I/O): the host a conversation or a site decision is keyed by.

/// The host of an http(s) URL, lowercased, without port or credentials; `None` for every other
/// scheme (chrome://, file:, about:, data:), whose pages get no memory.
///
/// `www.` is kept: `www.example.com` and `example.com` are different origins to the browser and
/// can serve different content (or belong to different people on shared hosting), so folding
/// them together could carry a conversation to a site the user did not have it with.
pub fn domain_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    // Browsers treat `\` like `/` in http(s) URLs, so it ends the authority too.
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match host_port.strip_prefix('[') {
        // IPv6 literal: keep the brackets so the port colon stays unambiguous.
        Some(v6) => &host_port[..v6.find(']')? + 2],
        None => host_port.split(':').next().unwrap_or_default(),
    };
    (!host.is_empty()).then(|| host.to_lowercase())
}

//! Addresses as Tandem reads them where the browser's own parser is not at hand (core has no
//! I/O): the host a conversation or a site decision is keyed by.

use crate::case::Lowercase;

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
    (!host.is_empty()).then(|| host.lowercase())
}

/// `%40` → `@`, `+` → space: a value as a form's body or a query carries it
/// (`application/x-www-form-urlencoded`), read as the browser and servers read it. Core's one
/// decoder (the agent's effect and data-flow checks, OAuth redirects): `+` becomes a space
/// BEFORE escapes are undone, so `ada%2Btag%40example.com` is `ada+tag@example.com`, never
/// `ada tag@example.com`. What is no escape (`100%`, `%zz`) stays as written; bytes that are
/// no UTF-8 become U+FFFD, as in the `url` crate's `form_urlencoded`, its test oracle.
pub fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_decode_reads_escapes_and_plus_and_keeps_what_is_no_escape() {
        assert_eq!(form_decode("ada%40example.com"), "ada@example.com");
        assert_eq!(form_decode("blue+backpack"), "blue backpack");
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(form_decode("%zz%4"), "%zz%4");
        assert_eq!(form_decode("caf%C3%A9"), "café");
        // A `+` written as an escape is a `+`, not a space.
        assert_eq!(
            form_decode("ada%2Btag%40example.com"),
            "ada+tag@example.com"
        );
        // Not UTF-8 once decoded: U+FFFD, the rest still read.
        assert_eq!(form_decode("a%40b%FF"), "a@b\u{fffd}");
    }

    /// What the `url` crate (the WHATWG parser's `application/x-www-form-urlencoded`) makes of
    /// a query value.
    fn oracle(value: &str) -> String {
        let query = format!("k={value}");
        let mut pairs = ::url::form_urlencoded::parse(query.as_bytes());
        pairs
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    }

    proptest::proptest! {
        #[test]
        fn form_decode_reads_a_value_as_the_url_crate_does(
            value in "([%+a-fA-F0-9zé@. ]|%[0-9a-fA-F]{2}|%[CcDdEe][0-9a-fA-F]%[89aAbB][0-9a-fA-F]){0,24}"
        ) {
            proptest::prop_assert_eq!(form_decode(&value), oracle(&value), "{:?}", value);
        }
    }

    #[test]
    fn form_decode_agrees_with_the_url_crate_on_the_escapes_that_matter() {
        for value in [
            "ada%2Btag%40example.com",
            "ada+tag%40example.com",
            "blue+backpack",
            "%2B%2b+",
            "100%",
            "%",
            "%4",
            "%zz%4",
            "caf%C3%A9",
            "%FF%FE",
            "%E2%82",
            "a%20b+c%2520",
        ] {
            assert_eq!(form_decode(value), oracle(value), "{value}");
        }
    }
}

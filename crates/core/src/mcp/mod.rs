//! MCP servers as tool providers: the client side of the Model Context Protocol over
//! Streamable HTTP (<https://modelcontextprotocol.io/specification/2025-11-25/basic/transports>),
//! as pure code. The worker does the fetches; everything it sends is built here
//! ([`Session`]), everything it reads is decoded here ([`Reader`], [`check_status`]), and
//! every failure becomes a sentence the user or the model can act on ([`McpError`]).
//!
//! The exchange:
//! 1. `initialize` (POST, JSON-RPC request). The answer may be `application/json` or a
//!    `text/event-stream` carrying the response (and maybe notifications before it). The
//!    server may give an `Mcp-Session-Id` header: it goes on every later request, with
//!    `MCP-Protocol-Version` (the version the server agreed to).
//! 2. `notifications/initialized` (POST, answered 202).
//! 3. `tools/list` (paged by `cursor` / `nextCursor`) → [`read_tools`] → the registry's
//!    [`crate::tools::ToolDescriptor`]s, checked like an extension's.
//! 4. `tools/call` → [`call_result`] → the provider result shape the tool outcome reads.
//!
//! A 404 to a request that carried a session id means the server forgot the session (it
//! restarted): [`McpError::SessionExpired`], and the worker initializes again.

mod credentials;
mod error;
pub mod oauth;
mod reader;
mod session;
mod tools;

pub use credentials::{parse_headers, Credentials, McpEndpoint, MAX_HEADERS};
pub use error::McpError;
pub use reader::{check_status, BodyKind, Reader, Reply};
pub use session::{Outgoing, Session, ACCEPT, PROTOCOL_VERSION, SUPPORTED_VERSIONS};
pub use tools::{
    add_page, call_result, read_tools, rpc_error_result, ToolsPage, MAX_TOOL_NAME_CHARS,
    TANDEM_FAILURE,
};

/// The registry key prefix of MCP servers (extension ids never hold `:`).
pub const ID_PREFIX: &str = "mcp:";

/// Whether a provider id names an MCP server rather than an extension.
pub fn is_server_id(id: &str) -> bool {
    id.starts_with(ID_PREFIX)
}

/// The notification a server sends when its tool list changed.
pub const TOOLS_CHANGED: &str = "notifications/tools/list_changed";

/// `chrome.storage.local` key of what Test (or Save) found: `{requestId, ok, message, tools}`.
/// The panel reads it; it never holds the token.
pub const TEST_KEY: &str = "mcpTest";
/// `chrome.storage.local` key of the servers' tokens and headers (`{id: Credentials}`), like
/// API keys: only the worker reads it, and the registry the panel renders never holds them.
pub const TOKENS_KEY: &str = "mcpTokens";

/// How a token is shown back: its last four characters (`…abcd`), nothing for a short one.
pub fn token_hint(token: &str) -> Option<String> {
    let t = token.trim();
    let n = t.chars().count();
    if n == 0 {
        return None;
    }
    if n < 12 {
        return Some("…".into());
    }
    Some(format!("…{}", t.chars().skip(n - 4).collect::<String>()))
}

/// The URL of a server the user typed, if Tandem may reach it: http(s), with a host.
pub fn check_url(url: &str) -> Result<String, String> {
    let u = url.trim();
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"))
        .ok_or_else(|| "The URL must start with http:// or https://.".to_string())?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err("The URL has no host.".into());
    }
    if u.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("The URL holds spaces.".into());
    }
    Ok(u.to_string())
}

/// Whether two checked URLs name the same MCP endpoint: the scheme and host compared without
/// case, a trailing `/` ignored (`https://Mcp.example/mcp/` is `https://mcp.example/mcp`).
pub fn same_server(a: &str, b: &str) -> bool {
    fn key(url: &str) -> String {
        let url = url.trim().trim_end_matches('/');
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let (host, path) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
        format!(
            "{}://{}{path}",
            scheme.to_ascii_lowercase(),
            host.to_ascii_lowercase()
        )
    }
    key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_server_is_recognised_whatever_its_spelling() {
        assert!(same_server(
            "http://127.0.0.1:3000/mcp",
            "HTTP://127.0.0.1:3000/mcp/"
        ));
        assert!(same_server(
            "https://Mcp.Example/mcp",
            "https://mcp.example/mcp"
        ));
        assert!(!same_server(
            "https://mcp.example/mcp",
            "https://mcp.example/MCP"
        ));
        assert!(!same_server(
            "http://127.0.0.1:3000/mcp",
            "http://127.0.0.1:3001/mcp"
        ));
    }

    #[test]
    fn tokens_are_shown_by_their_end_only_and_urls_are_checked() {
        assert_eq!(token_hint(""), None);
        assert_eq!(token_hint("short").as_deref(), Some("…"));
        assert_eq!(token_hint("secret-token-abcd").as_deref(), Some("…abcd"));
        assert_eq!(
            check_url(" http://127.0.0.1:3000/mcp ").unwrap(),
            "http://127.0.0.1:3000/mcp"
        );
        assert!(check_url("ftp://x").is_err());
        assert!(check_url("http:///mcp").is_err());
        assert!(is_server_id("mcp:1234"));
        assert!(!is_server_id("aaaabbbbccccddddeeeeffffgggghhhh"));
    }
}

//! Why an exchange with an MCP server failed, as sentences for Settings (Test) and for the
//! model (a call that could not run).

/// A failure talking to an MCP server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// Nothing answers: not running, or a wrong address.
    #[error("Tandem could not reach the MCP server at {url}: nothing answers there (it is not running, or the address is wrong).")]
    Unreachable { url: String },
    /// Something took the connection but did not answer within the limit: the server is
    /// running (a closed port is refused at once), and too slow or stuck.
    #[error("The MCP server at {url} took the connection but did not answer within {seconds} s: it is running, but too slow or stuck (try again, or restart it).")]
    Slow { url: String, seconds: u32 },
    /// Something answers, but Chrome does not let Tandem read it: Tandem has no site access
    /// to that host (the user withheld it), so the server's CORS rules apply, and they
    /// refuse Tandem's origin.
    #[error("The MCP server at {url} answers, but Chrome does not let Tandem read its answers: give Tandem access to that site (chrome://extensions → Tandem → Site access), or let the server accept requests from other origins (CORS).")]
    Refused { url: String },
    /// The connection broke while the answer was being read (the server stopped).
    #[error("The MCP server at {url} stopped answering in the middle of its answer.")]
    Cut { url: String },
    #[error("The MCP server answered 401: it needs a token (the Bearer token field) or a header of its own (More headers), or the one given is wrong.")]
    NeedsToken,
    /// A 401 whose `WWW-Authenticate` names the server's sign-in information: it signs
    /// people in with OAuth. `challenge` is that header (not a secret).
    #[error("The MCP server signs people in with their account: use Sign in instead of a token.")]
    SignIn { challenge: String },
    /// The sign-in expired and could not be renewed.
    #[error("The sign-in to the MCP server has expired and could not be renewed: use Sign in again (Settings → Tools).")]
    SignInAgain,
    #[error("The MCP server answered 403: the token or this client is not allowed.")]
    Forbidden,
    /// A 404 to a request that carried a session id: the server forgot the session. Not
    /// shown: the worker initializes again.
    #[error("The MCP server no longer knows this session.")]
    SessionExpired,
    #[error("Nothing answers at this URL (404): check the path of the MCP endpoint (often /mcp).")]
    NotFound,
    #[error("This URL is not an MCP endpoint: it answered with {what}.")]
    NotMcp { what: String },
    /// `detail` is how the answer is described in the sentence; `said` the server's own
    /// words alone (capped, redacted), which the model gets fenced.
    #[error("The MCP server answered HTTP {status}{detail}.")]
    Http {
        status: u16,
        detail: String,
        said: Option<String>,
    },
    /// A JSON-RPC error object (`message` is the server's words, clipped).
    #[error("The MCP server refused {method}: {message} (error {code}).")]
    Rpc {
        method: String,
        code: i64,
        message: String,
    },
    #[error("The MCP server ended its answer to {method} without a response.")]
    NoResponse { method: String },
    #[error("The MCP server speaks protocol version {0}, which Tandem does not (it speaks 2025-11-25, 2025-06-18 and 2025-03-26).")]
    Version(String),
    #[error("The MCP server's answer is larger than Tandem reads ({0} MB at most).")]
    TooLarge(usize),
}

impl McpError {
    /// Whether the failure is the server's answer to the request (a JSON-RPC error), rather
    /// than Tandem failing to reach it or read it: the model gets the server's words fenced as
    /// the tool's, and Tandem's own sentence otherwise.
    pub fn is_servers_answer(&self) -> bool {
        matches!(self, McpError::Rpc { .. })
    }

    /// The failure as the model is told it: Tandem's sentence, and apart from it the
    /// server's own words (an error body), which are the server's and so go in a fence.
    pub fn for_model(&self) -> (String, Option<String>) {
        match self {
            McpError::Http {
                status,
                said: Some(said),
                ..
            } => (
                format!("The MCP server answered HTTP {status}."),
                Some(said.clone()),
            ),
            other => (other.to_string(), None),
        }
    }

    /// Whether the session should be initialized again and the request repeated.
    pub fn session_expired(&self) -> bool {
        matches!(self, McpError::SessionExpired)
    }
}

//! Which extensions may give Tandem tools, their tools, and what the user allows of each.
//!
//! A provider is identified by its extension id only (the one thing Chrome vouches for in a
//! `MessageSender`). An unknown provider's first registration holds its tools as pending and
//! asks the user ([`RegisterOutcome::NeedsApproval`], [`Registry::approval_question`]);
//! nothing of a pending or denied provider reaches the model. A denied provider is refused
//! without asking again, until the user removes it.
//!
//! Each tool has a [`Policy`]: `Allow` by default only for a tool that says it is read-only,
//! not destructive and closed (`openWorldHint: false`), else `Ask`. A policy the user set is kept across re-registrations
//! (providers re-register at every start, after `ORCHESTRATOR_READY`).
//!
//! The model calls tools by namespaced names (`tandem_tabs__tab_open`): two providers may
//! both have a `search`, and providers use `.` which OpenAI and Gemini refuse. The
//! provider's part (its prefix) is chosen once, when the provider first registers, and
//! stored with it, so a name the model saw stays valid across restarts and renames.
//!
//! The worker stores the registry in `chrome.storage.local` (it must outlive the browser
//! session, like the user's decisions) as [`Registry::to_stored`]'s JSON. It is read back
//! field by field ([`Registry::from_stored`]): a damaged provider or tool is skipped, the
//! rest survives, and a skipped provider is simply asked about again.

use std::collections::{BTreeMap, BTreeSet};

use crate::json;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::protocol::{clip, Answer, ToolDescriptor};
use crate::request::ToolSpec;

/// The `chrome.storage.local` key the worker keeps the registry under.
pub const STORAGE_KEY: &str = "toolRegistry";
const STORED_VERSION: u64 = 1;

/// Model-facing names: `^[A-Za-z0-9_-]{1,64}$`, the rule OpenAI and Gemini share.
pub const MAX_MODEL_NAME: usize = 64;
/// The provider's part of a model-facing name; the rest leaves at least 38 characters for
/// the tool's part.
const MAX_PREFIX: usize = 24;
/// How much of a display name is kept: it appears in questions and descriptions.
const MAX_DISPLAY_NAME: usize = 60;
/// How many tool names a question lists before "and N more".
const LISTED_IN_QUESTION: usize = 10;

/// What the user decided about a provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Asked, not answered yet: its tools are held, unusable.
    Pending,
    Allowed,
    /// Refused, and not asked again.
    Denied,
}

/// What Tandem does when the model calls a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Runs it.
    Allow,
    /// Asks the user each time.
    Ask,
    /// Never offers it to the model, and refuses a call.
    Deny,
}

impl Policy {
    /// `Allow` only for a tool that claims to be read-only, does not claim to be destructive
    /// and says it stays out of the open world; anything else asks. A read-only tool that
    /// fetches a URL still sends its arguments to whatever site the URL names, so "read-only"
    /// alone does not make it harmless. The hints are the provider's word, but the user
    /// allowed the provider, and the user can change any policy.
    pub fn default_for(tool: &ToolDescriptor) -> Policy {
        if tool.read_only() && !tool.destructive() && !tool.open_world() {
            Policy::Allow
        } else {
            Policy::Ask
        }
    }

    fn parse(s: &str) -> Option<Policy> {
        match s {
            "allow" => Some(Policy::Allow),
            "ask" => Some(Policy::Ask),
            "deny" => Some(Policy::Deny),
            _ => None,
        }
    }
}

impl Decision {
    fn parse(s: &str) -> Option<Decision> {
        match s {
            "pending" => Some(Decision::Pending),
            "allowed" => Some(Decision::Allowed),
            "denied" => Some(Decision::Denied),
            _ => None,
        }
    }
}

/// The line a signed-out server shows in Settings.
pub const SIGNED_OUT: &str = "Signed out: use Sign in to use its tools again.";

/// What the registry keeps of an MCP server (`crate::mcp`): where it is, whether the user
/// turned it off, and what went wrong last. Its Bearer token is not here: the registry is
/// what the panel renders, and the token is a secret the worker keeps apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    pub url: String,
    /// Turned off: its tools are kept but not offered, and no call reaches it.
    pub enabled: bool,
    /// The last failure reaching it, as a sentence (shown in Settings), cleared on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The end of its token (`…abcd`), so the user can tell which one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_hint: Option<String>,
    /// The names of the headers the user gave it (their values are secrets, kept apart).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_names: Vec<String>,
    /// The server signs people in (OAuth): Settings offers Sign in / Sign out for it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub signs_in: bool,
    /// Tandem holds tokens for it now (signed in, even if they expired).
    #[serde(default, skip_serializing_if = "is_false")]
    pub signed_in: bool,
}

impl McpServer {
    /// Whether Settings offers Sign in: a server that signs people in and is signed out, or
    /// whose sign-in could not be renewed (`McpError::SignInAgain` is its problem).
    pub fn needs_sign_in(&self) -> bool {
        self.signs_in
            && (!self.signed_in
                || self.problem.as_deref()
                    == Some(crate::mcp::McpError::SignInAgain.to_string().as_str()))
    }
}

fn is_false(b: &bool) -> bool {
    !b
}

/// One extension (or MCP server) that offered tools.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    id: String,
    name: String,
    decision: Decision,
    prefix: String,
    tools: Vec<ToolDescriptor>,
    /// Only the policies the user set; the others follow [`Policy::default_for`].
    policies: BTreeMap<String, Policy>,
    /// Set for an MCP server (ids `mcp:…`); `None` for an extension.
    mcp: Option<McpServer>,
}

impl Provider {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The display name (cleaned; the id when the extension gave none).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn decision(&self) -> Decision {
        self.decision
    }

    pub fn tools(&self) -> &[ToolDescriptor] {
        &self.tools
    }

    /// The policy of `tool`: the user's, else the default from its hints.
    pub fn policy(&self, tool: &ToolDescriptor) -> Policy {
        self.policies
            .get(&tool.name)
            .copied()
            .unwrap_or_else(|| Policy::default_for(tool))
    }

    /// The MCP server behind this provider, when it is one.
    pub fn mcp(&self) -> Option<&McpServer> {
        self.mcp.as_ref()
    }

    /// Allowed, and not an MCP server the user turned off.
    pub fn usable(&self) -> bool {
        self.decision == Decision::Allowed && self.mcp.as_ref().is_none_or(|m| m.enabled)
    }

    /// Whether the user set this tool's policy (a UI may offer "reset to default").
    pub fn policy_is_set(&self, tool: &str) -> bool {
        self.policies.contains_key(tool)
    }

    /// The model-facing names of its tools, in the order of [`Provider::tools`].
    pub fn model_names(&self) -> Vec<String> {
        model_names(&self.prefix, &self.tools)
    }

    fn to_stored(&self) -> Value {
        let mut o = Map::new();
        o.insert("name".into(), json!(self.name));
        o.insert("decision".into(), json!(self.decision));
        o.insert("prefix".into(), json!(self.prefix));
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| {
                let mut v = json!({
                    "name": t.name, "label": t.label,
                    "description": t.description, "parameters": t.parameters,
                });
                if let Some(a) = &t.annotations {
                    v["annotations"] = json!(a);
                }
                if let Some(output) = &t.output {
                    v["output"] = output.clone();
                }
                v
            })
            .collect();
        o.insert("tools".into(), Value::Array(tools));
        o.insert("policies".into(), json!(self.policies));
        if let Some(m) = &self.mcp {
            o.insert("mcp".into(), json!(m));
        }
        Value::Object(o)
    }

    /// One stored provider, or `None` when what identifies it or what the user decided is
    /// unreadable (it is then asked about again). Damaged tools and policies are skipped.
    fn from_stored(id: &str, v: &Value) -> Option<Provider> {
        if id.is_empty() {
            return None;
        }
        let o = v.as_object()?;
        let decision = Decision::parse(o.get("decision")?.as_str()?)?;
        let name = display_name(id, o.get("name").and_then(Value::as_str).unwrap_or(""));
        let mut tools: Vec<ToolDescriptor> = Vec::new();
        for t in o
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            // Stored tools pass the same checks as registered ones: storage is only as
            // trustworthy as whatever last wrote it.
            let names_within = if crate::mcp::is_server_id(id) {
                crate::mcp::MAX_TOOL_NAME_CHARS
            } else {
                super::protocol::MAX_NAME_CHARS
            };
            if let Ok(t) = ToolDescriptor::from_value_within(t, names_within) {
                if !tools.iter().any(|k| k.name == t.name)
                    && tools.len() < super::protocol::MAX_TOOLS
                {
                    tools.push(t);
                }
            }
        }
        let mut policies = BTreeMap::new();
        for (tool, p) in o
            .get("policies")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(p) = p.as_str().and_then(Policy::parse) {
                policies.insert(tool.clone(), p);
            }
        }
        Some(Provider {
            id: id.to_string(),
            name,
            decision,
            // Checked (and replaced when unusable) by the registry once every provider is in.
            prefix: o
                .get("prefix")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            tools,
            policies,
            // An MCP entry that does not read is dropped with its provider: without its URL
            // the server cannot be reached, and an id `mcp:…` is never an extension's.
            mcp: match o.get("mcp") {
                Some(m) => Some(crate::json::from_value::<McpServer>(m.clone()).ok()?),
                None if crate::mcp::is_server_id(id) => return None,
                None => None,
            },
        })
    }
}

/// What a registration led to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterOutcome {
    /// A provider the user has not decided about: its tools are held, unusable, until
    /// [`Registry::decide`]. The worker asks [`Registry::approval_question`].
    NeedsApproval {
        provider: String,
        tools: Vec<String>,
    },
    /// The tools are usable (subject to their policies).
    Registered(Vec<String>),
    /// A denied provider: refused without asking the user.
    Refused(String),
}

impl RegisterOutcome {
    /// The answer for the provider. A pending registration is answered `ok:false` with a
    /// sentence saying why: its tools are not usable yet. The worker sends the provider
    /// `ORCHESTRATOR_READY` once the user allows it, and its re-registration then succeeds.
    pub fn answer(&self) -> Answer {
        match self {
            RegisterOutcome::NeedsApproval { .. } => Answer::refused(
                "Waiting for the user to allow this extension's tools in Tandem; Tandem sends ORCHESTRATOR_READY once they are allowed.",
            ),
            RegisterOutcome::Registered(names) => Answer::registered(names.clone()),
            RegisterOutcome::Refused(why) => Answer::refused(why.clone()),
        }
    }
}

/// The sentence a sender without an extension id gets.
pub const NO_ID: &str = "Tandem only accepts tools from extensions, identified by their id.";

/// The sentence a denied provider gets.
pub const DENIED: &str = "The user has not allowed this extension to give Tandem tools.";

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("no extension with the id {0:?} has offered tools to Tandem")]
    UnknownProvider(String),
    #[error("«{provider}» has no tool named {tool:?}")]
    UnknownTool { provider: String, tool: String },
}

/// A model-facing tool name, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub provider_id: String,
    pub provider_name: String,
    /// The name as the model called it.
    pub model_name: String,
    /// The provider's own name for it (what TOOL_EXECUTE carries).
    pub tool_name: String,
    pub policy: Policy,
    pub descriptor: ToolDescriptor,
}

/// Every provider, keyed by extension id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    providers: BTreeMap<String, Provider>,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Handles a provider's (already parsed and bounded) `REGISTER_TOOLS`. `sender_name` is
    /// the extension's display name as the worker knows it (may be empty).
    pub fn register(
        &mut self,
        sender_id: &str,
        sender_name: &str,
        tools: Vec<ToolDescriptor>,
    ) -> RegisterOutcome {
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        if sender_id.is_empty() {
            // Chrome gives every extension sender an id; without one the sender is not an
            // extension, and there would be nothing to key the user's decision by.
            return RegisterOutcome::Refused(NO_ID.to_string());
        }
        if crate::mcp::is_server_id(sender_id) {
            // Only the worker's MCP client changes a server's tools ([`Registry::set_mcp_tools`]).
            return RegisterOutcome::Refused(NO_ID.to_string());
        }
        let Some(p) = self.providers.get_mut(sender_id) else {
            if tools.is_empty() {
                // Nothing to offer: no reason to ask the user anything.
                return RegisterOutcome::Registered(names);
            }
            let name = display_name(sender_id, sender_name);
            let prefix = self.unused_prefix(sender_id, &name);
            self.providers.insert(
                sender_id.to_string(),
                Provider {
                    id: sender_id.to_string(),
                    name,
                    decision: Decision::Pending,
                    prefix,
                    tools,
                    policies: BTreeMap::new(),
                    mcp: None,
                },
            );
            return RegisterOutcome::NeedsApproval {
                provider: sender_id.to_string(),
                tools: names,
            };
        };
        match p.decision {
            // Nothing of a denied provider is kept: it cannot be used anyway.
            Decision::Denied => RegisterOutcome::Refused(DENIED.to_string()),
            Decision::Pending => {
                rename(p, sender_id, sender_name);
                p.tools = tools;
                RegisterOutcome::NeedsApproval {
                    provider: sender_id.to_string(),
                    tools: names,
                }
            }
            Decision::Allowed => {
                rename(p, sender_id, sender_name);
                p.tools = tools;
                RegisterOutcome::Registered(names)
            }
        }
    }

    /// The user's answer to the approval question. Returns the tool names that became
    /// usable (none when denied: a denied provider's tools are dropped).
    pub fn decide(&mut self, sender_id: &str, allow: bool) -> Result<Vec<String>, RegistryError> {
        let p = self.provider_mut(sender_id)?;
        if allow {
            p.decision = Decision::Allowed;
            Ok(p.tools.iter().map(|t| t.name.clone()).collect())
        } else {
            p.decision = Decision::Denied;
            p.tools.clear();
            Ok(Vec::new())
        }
    }

    /// `UNREGISTER_TOOLS`: the sender's tools go; what the user decided (about it and its
    /// tools' policies) stays. Returns whether it had any tools.
    pub fn unregister(&mut self, sender_id: &str) -> bool {
        match self.providers.get_mut(sender_id) {
            Some(p) => !std::mem::take(&mut p.tools).is_empty(),
            None => false,
        }
    }

    /// Forgets a provider entirely, decision and policies included (its next registration
    /// asks the user again). Returns whether it was known.
    pub fn remove_provider(&mut self, provider_id: &str) -> bool {
        self.providers.remove(provider_id).is_some()
    }

    /// Sets a tool's policy; kept across re-registrations.
    pub fn set_policy(
        &mut self,
        provider_id: &str,
        tool: &str,
        policy: Policy,
    ) -> Result<(), RegistryError> {
        let p = self.provider_mut(provider_id)?;
        if !p.tools.iter().any(|t| t.name == tool) {
            return Err(RegistryError::UnknownTool {
                provider: p.name.clone(),
                tool: clip(tool, 64),
            });
        }
        p.policies.insert(tool.to_string(), policy);
        Ok(())
    }

    /// `«Tandem Tabs» wants to give Tandem 3 tools: tab.open, tab.close, tab.list.`
    pub fn approval_question(&self, provider_id: &str) -> Option<String> {
        let p = self.providers.get(provider_id)?;
        let n = p.tools.len();
        let listed: Vec<&str> = p
            .tools
            .iter()
            .take(LISTED_IN_QUESTION)
            .map(|t| t.name.as_str())
            .collect();
        let more = match n.checked_sub(LISTED_IN_QUESTION) {
            Some(rest) if rest > 0 => format!(" and {rest} more"),
            _ => String::new(),
        };
        let noun = if n == 1 { "tool" } else { "tools" };
        Some(format!(
            "«{}» wants to give Tandem {n} {noun}: {}{more}.",
            p.name,
            listed.join(", ")
        ))
    }

    /// The tools the model may call: allowed providers' tools whose policy is not `Deny`,
    /// in a stable order (providers by id, tools as registered). An MCP server with a problem
    /// (it went away, its token was refused) offers nothing until it answers again: the model
    /// is not handed tools that cannot run.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = Vec::new();
        let reachable = |p: &&Provider| p.mcp.as_ref().is_none_or(|m| m.problem.is_none());
        for p in self.allowed().filter(reachable) {
            for (tool, name) in p.tools.iter().zip(p.model_names()) {
                if p.policy(tool) == Policy::Deny {
                    continue;
                }
                let what = if tool.description.trim().is_empty() {
                    &tool.label
                } else {
                    &tool.description
                };
                // The model should know whose tool it is, and that it is not Tandem's own.
                // Every text here is the provider's: neutralised and capped (`offered`).
                let description = format!("«{}»: {what}", super::offered::text(&p.name, 100));
                specs.push(ToolSpec {
                    name,
                    description: super::offered::description(&description),
                    parameters: super::offered::parameters(&tool.parameters),
                });
            }
        }
        specs
    }

    /// The tool behind a model-facing name, if an allowed provider has it (a `Deny` tool
    /// resolves too, with its policy, so the call is refused with a reason rather than as
    /// unknown).
    pub fn resolve(&self, model_name: &str) -> Option<Resolved> {
        self.allowed()
            .filter(|p| {
                model_name
                    .strip_prefix(p.prefix.as_str())
                    .is_some_and(|rest| rest.starts_with("__"))
            })
            .find_map(|p| {
                let i = p.model_names().iter().position(|n| n == model_name)?;
                let tool = &p.tools[i];
                Some(Resolved {
                    provider_id: p.id.clone(),
                    provider_name: p.name.clone(),
                    model_name: model_name.to_string(),
                    tool_name: tool.name.clone(),
                    policy: p.policy(tool),
                    descriptor: tool.clone(),
                })
            })
    }

    /// The providers to send `ORCHESTRATOR_READY` when the worker starts: allowed and
    /// pending ones (a pending one re-registers and may be asked again); denied ones are not
    /// told anything.
    pub fn known_providers(&self) -> Vec<String> {
        self.providers
            .values()
            .filter(|p| p.decision != Decision::Denied && p.mcp.is_none())
            .map(|p| p.id.clone())
            .collect()
    }

    pub fn provider(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// Every provider, by id (for Settings).
    pub fn providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values()
    }

    fn allowed(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values().filter(|p| p.usable())
    }

    /// Adds an MCP server the user added in Settings: adding it is the user's approval, so
    /// it is allowed at once. `id` is `mcp:<uuid>`.
    pub fn add_mcp_server(
        &mut self,
        id: &str,
        name: &str,
        server: McpServer,
        tools: Vec<ToolDescriptor>,
    ) {
        let name = display_name(&server.url, name);
        let prefix = self.unused_prefix(id, &name);
        let policies = self
            .providers
            .get(id)
            .map(|p| p.policies.clone())
            .unwrap_or_default();
        self.providers.insert(
            id.to_string(),
            Provider {
                id: id.to_string(),
                name,
                decision: Decision::Allowed,
                prefix,
                tools,
                policies,
                mcp: Some(server),
            },
        );
    }

    /// A server's tools as listed again (after `list_changed`, or on reconnecting); the
    /// user's policies stay. Clears its problem.
    pub fn set_mcp_tools(
        &mut self,
        id: &str,
        tools: Vec<ToolDescriptor>,
    ) -> Result<(), RegistryError> {
        let p = self.mcp_mut(id)?;
        p.tools = tools;
        if let Some(m) = &mut p.mcp {
            m.problem = None;
        }
        Ok(())
    }

    /// Records (or clears) why a server could not be reached.
    pub fn set_mcp_problem(
        &mut self,
        id: &str,
        problem: Option<String>,
    ) -> Result<(), RegistryError> {
        let p = self.mcp_mut(id)?;
        if let Some(m) = &mut p.mcp {
            m.problem = problem;
        }
        Ok(())
    }

    /// Signed in again (`Some(tools)`: its tools as listed, problem cleared) or signed out
    /// (`None`: no tools until the person signs in again, and the sentence saying so).
    pub fn set_mcp_signed_in(
        &mut self,
        id: &str,
        tools: Option<Vec<ToolDescriptor>>,
    ) -> Result<(), RegistryError> {
        let p = self.mcp_mut(id)?;
        let signed_in = tools.is_some();
        p.tools = tools.unwrap_or_default();
        if let Some(m) = &mut p.mcp {
            m.signed_in = signed_in;
            m.problem = (!signed_in).then(|| SIGNED_OUT.to_string());
        }
        Ok(())
    }

    /// Turns a server off (its tools are kept, not offered) or on again.
    pub fn set_mcp_enabled(&mut self, id: &str, enabled: bool) -> Result<(), RegistryError> {
        let p = self.mcp_mut(id)?;
        if let Some(m) = &mut p.mcp {
            m.enabled = enabled;
        }
        Ok(())
    }

    /// Every MCP server, turned off or not.
    pub fn mcp_servers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values().filter(|p| p.mcp.is_some())
    }

    fn mcp_mut(&mut self, id: &str) -> Result<&mut Provider, RegistryError> {
        match self.providers.get_mut(id) {
            Some(p) if p.mcp.is_some() => Ok(p),
            _ => Err(RegistryError::UnknownProvider(clip(id, 64))),
        }
    }

    fn provider_mut(&mut self, id: &str) -> Result<&mut Provider, RegistryError> {
        self.providers
            .get_mut(id)
            .ok_or_else(|| RegistryError::UnknownProvider(clip(id, 64)))
    }

    /// A readable prefix from the display name, unique among the stored ones: the slug
    /// (`tandem_tabs`), else the slug with the start of the id, else the id's start alone
    /// (names without Latin letters, or repeated collisions).
    fn unused_prefix(&self, id: &str, name: &str) -> String {
        pick_prefix(id, name, &|c| {
            self.providers.values().any(|p| p.id != id && p.prefix == c)
        })
    }

    /// The JSON the worker stores.
    pub fn to_stored(&self) -> Value {
        let mut providers = Map::new();
        for (id, p) in &self.providers {
            providers.insert(id.clone(), p.to_stored());
        }
        json!({"version": STORED_VERSION, "providers": providers})
    }

    /// Reads what [`Registry::to_stored`] wrote, tolerantly: anything unreadable is
    /// skipped, never fatal (no storage, or another shape, is an empty registry).
    pub fn from_stored(v: &Value) -> Registry {
        let mut providers = BTreeMap::new();
        for (id, p) in v
            .get("providers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(p) = Provider::from_stored(id, p) {
                providers.insert(id.clone(), p);
            }
        }
        // Prefixes must be valid and unique; keep the valid ones (the first by id wins a
        // clash), then give the others new ones. Deterministic, so reloading is stable.
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let mut redo = Vec::new();
        for (id, p) in &providers {
            if valid_prefix(&p.prefix) && taken.insert(p.prefix.clone()) {
                continue;
            }
            redo.push(id.clone());
        }
        for id in redo {
            if let Some(p) = providers.get_mut(&id) {
                p.prefix = pick_prefix(&id, &p.name, &|c| taken.contains(c));
                taken.insert(p.prefix.clone());
            }
        }
        Registry { providers }
    }
}

impl Serialize for Registry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_stored().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Registry {
    /// Never fails on a JSON value: see [`Registry::from_stored`].
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Registry::from_stored(&Value::deserialize(d)?))
    }
}

/// The name shown for a provider: control and bidi characters removed, the guillemets that
/// frame it in sentences replaced, whitespace collapsed, at most 60 characters; the id when
/// nothing is left.
/// A registration names the provider anew only when it carries a name: one without `name`
/// keeps the name the person already knows it by, rather than turning it into its id.
fn rename(p: &mut Provider, id: &str, name: &str) {
    let named = display_name(id, name);
    if named != clip(id, MAX_DISPLAY_NAME) || p.name.is_empty() {
        p.name = named;
    }
}

fn display_name(id: &str, name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| match c {
            '«' | '»' => '"',
            c if c.is_whitespace() => ' ',
            c => c,
        })
        .filter(|c| !c.is_control() && !matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}'))
        .collect();
    let collapsed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        clip(id, MAX_DISPLAY_NAME)
    } else {
        clip(&collapsed, MAX_DISPLAY_NAME)
    }
}

/// `Tandem Tabs!` → `tandem_tabs`: lowercase ASCII letters and digits, every other run one
/// `_`, at most 24 characters (cut at a word boundary when possible). Never holds `__`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    if out.len() > MAX_PREFIX {
        // Cut between words when a word ends near the limit.
        let at_boundary = out.as_bytes().get(MAX_PREFIX) == Some(&b'_');
        out.truncate(MAX_PREFIX);
        if !at_boundary {
            if let Some(cut) = out.rfind('_').filter(|&i| i >= MAX_PREFIX / 2) {
                out.truncate(cut);
            }
        }
    }
    out.trim_matches('_').to_string()
}

fn valid_prefix(p: &str) -> bool {
    // Gemini wants function names to start with a letter or '_'; the prefix starts them.
    p.starts_with(|c: char| c.is_ascii_lowercase())
        && p.len() <= MAX_PREFIX
        && p.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !p.starts_with('_')
        && !p.ends_with('_')
        && !p.contains("__")
}

/// `taken`: whether another provider holds the prefix already (a predicate, not a set built
/// for the question).
fn pick_prefix(id: &str, name: &str, taken: &dyn Fn(&str) -> bool) -> String {
    // Extension ids are 32 letters a–p; ids from elsewhere are reduced to the same alphabet.
    let id_part: String = slug(id).replace('_', "");
    let base = match slug(name) {
        // `1Password Tools`: a name must start with a letter.
        b if b.starts_with(|c: char| c.is_ascii_digit()) => slug(&format!("ext {b}")),
        b => b,
    };
    let short = |n: usize| -> String { id_part.chars().take(n).collect() };
    let mut candidates = Vec::new();
    if !base.is_empty() {
        candidates.push(base.clone());
        let room = MAX_PREFIX - 7;
        let cut = base
            .get(..room.min(base.len()))
            .unwrap_or(&base)
            .trim_end_matches('_');
        candidates.push(format!("{cut}_{}", short(6)));
    }
    candidates.push(format!("ext_{}", short(8)));
    candidates.push(format!("ext_{}", short(20)));
    if let Some(free) = candidates
        .into_iter()
        .find(|c| valid_prefix(c) && !taken(c))
    {
        return free;
    }
    // Ids are unique, so this is only reached with odd ids; count up until one is free.
    (1u32..)
        .map(|n| format!("ext_{}_{n}", short(8)).replace("__", "_"))
        .find(|c| valid_prefix(c) && !taken(c))
        .unwrap_or_else(|| "ext".to_string())
}

/// The model-facing names of a provider's tools: `{prefix}__{tool}`, with `.` (the only
/// character a tool name may hold that providers refuse) as `_`. A name that would clash with
/// another of the same provider's (`tab.open` and `tab_open`) or be too long gets a hash of
/// the original name instead, so the result depends only on the tool list, not on history.
fn model_names(prefix: &str, tools: &[ToolDescriptor]) -> Vec<String> {
    let room = MAX_MODEL_NAME.saturating_sub(prefix.len() + 2);
    let slugs: Vec<String> = tools.iter().map(|t| t.name.replace('.', "_")).collect();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for (tool, s) in tools.iter().zip(&slugs) {
        let clashes = slugs.iter().filter(|o| *o == s).count() > 1;
        let mut part = if clashes || s.len() > room {
            hashed(s, &tool.name, room, 0)
        } else {
            s.clone()
        };
        let mut salt = 1;
        while used.contains(&part) {
            part = hashed(s, &tool.name, room, salt);
            salt += 1;
        }
        used.insert(part.clone());
        out.push(format!("{prefix}__{part}"));
    }
    out
}

fn hashed(slug: &str, name: &str, room: usize, salt: u32) -> String {
    let keep = room.saturating_sub(9);
    let head: String = slug.chars().take(keep).collect();
    // Fixed forever (`crate::hash`): names must survive an update.
    let hash = crate::hash::fnv1a_32(format!("{name}#{salt}").bytes());
    format!("{head}_{hash:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::protocol::{parse_incoming, Incoming};

    const TABS: &str = "aaaabbbbccccddddeeeeffffgggghhhh";
    const OTHER: &str = "ppppoooonnnnmmmmllllkkkkjjjjiiii";

    fn tool(name: &str, read_only: Option<bool>, destructive: Option<bool>) -> ToolDescriptor {
        let mut v = json!({
            "name": name, "label": format!("Label of {name}"), "description": format!("Does {name}."),
            "parameters": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            "annotations": {}
        });
        if let Some(r) = read_only {
            v["annotations"]["readOnlyHint"] = json!(r);
        }
        if let Some(d) = destructive {
            v["annotations"]["destructiveHint"] = json!(d);
        }
        ToolDescriptor::from_value(&v).unwrap()
    }

    /// `tool` that also says it stays out of the open world (`openWorldHint: false`), as a
    /// tool that lists the browser's tabs or reads a local file truly does.
    fn closed(mut t: ToolDescriptor) -> ToolDescriptor {
        t.annotations
            .get_or_insert_with(Default::default)
            .open_world_hint = Some(false);
        t
    }

    fn tabs() -> Vec<ToolDescriptor> {
        vec![
            tool("tab.open", None, None),
            tool("tab.close", Some(false), Some(true)),
            closed(tool("tab.list", Some(true), None)),
        ]
    }

    fn allowed() -> Registry {
        let mut r = Registry::new();
        r.register(TABS, "Tandem Tabs", tabs());
        r.decide(TABS, true).unwrap();
        r
    }

    #[test]
    fn an_unknown_provider_waits_for_the_user_and_offers_nothing_meanwhile() {
        let mut r = Registry::new();
        let out = r.register(TABS, "Tandem Tabs", tabs());
        assert_eq!(
            out,
            RegisterOutcome::NeedsApproval {
                provider: TABS.into(),
                tools: vec!["tab.open".into(), "tab.close".into(), "tab.list".into()],
            }
        );
        assert_eq!(out.answer().to_json()["ok"], json!(false));
        assert_eq!(
            r.approval_question(TABS).unwrap(),
            "«Tandem Tabs» wants to give Tandem 3 tools: tab.open, tab.close, tab.list."
        );
        assert!(r.specs().is_empty());
        assert!(r.resolve("tandem_tabs__tab_open").is_none());
        // Registering again while pending is still pending.
        assert!(matches!(
            r.register(TABS, "Tandem Tabs", tabs()),
            RegisterOutcome::NeedsApproval { .. }
        ));
        assert_eq!(r.known_providers(), vec![TABS.to_string()]);

        assert_eq!(r.decide(TABS, true).unwrap().len(), 3);
        let names: Vec<String> = r.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "tandem_tabs__tab_open",
                "tandem_tabs__tab_close",
                "tandem_tabs__tab_list"
            ]
        );
        assert_eq!(
            r.register(TABS, "Tandem Tabs", tabs()),
            RegisterOutcome::Registered(vec![
                "tab.open".into(),
                "tab.close".into(),
                "tab.list".into()
            ])
        );
        assert_eq!(
            r.decide("nobody", true),
            Err(RegistryError::UnknownProvider("nobody".into()))
        );
    }

    #[test]
    fn a_denied_provider_is_refused_without_asking_again() {
        let mut r = Registry::new();
        r.register(TABS, "Tandem Tabs", tabs());
        assert_eq!(r.decide(TABS, false), Ok(vec![]));
        assert_eq!(
            r.register(TABS, "Tandem Tabs", tabs()),
            RegisterOutcome::Refused(DENIED.into())
        );
        assert!(r.provider(TABS).unwrap().tools().is_empty());
        assert!(r.specs().is_empty());
        assert!(r.known_providers().is_empty());
        // Removing it lets it ask again.
        assert!(r.remove_provider(TABS));
        assert!(matches!(
            r.register(TABS, "Tandem Tabs", tabs()),
            RegisterOutcome::NeedsApproval { .. }
        ));
        // An empty registration from a stranger asks nothing and stores nothing.
        assert_eq!(
            r.register(OTHER, "X", vec![]),
            RegisterOutcome::Registered(vec![])
        );
        assert!(r.provider(OTHER).is_none());
    }

    #[test]
    fn policies_default_from_hints_and_the_users_choice_survives_reregistration() {
        let mut r = allowed();
        let policy = |r: &Registry, name: &str| r.resolve(name).unwrap().policy;
        assert_eq!(policy(&r, "tandem_tabs__tab_open"), Policy::Ask);
        assert_eq!(policy(&r, "tandem_tabs__tab_close"), Policy::Ask);
        assert_eq!(policy(&r, "tandem_tabs__tab_list"), Policy::Allow);
        let both = tool("x", Some(true), Some(true));
        assert_eq!(Policy::default_for(&both), Policy::Ask);
        // Read-only but reaching the web (a `fetch_url`): its arguments can carry what the
        // model read to any site, so it asks unless the provider says it stays closed.
        assert_eq!(
            Policy::default_for(&tool("fetch_url", Some(true), None)),
            Policy::Ask
        );
        let mut open = closed(tool("fetch_url", Some(true), None));
        open.annotations.as_mut().unwrap().open_world_hint = Some(true);
        assert_eq!(Policy::default_for(&open), Policy::Ask);
        assert_eq!(
            Policy::default_for(&closed(tool("x", Some(true), None))),
            Policy::Allow
        );
        assert_eq!(
            Policy::default_for(&closed(tool("x", None, None))),
            Policy::Ask,
            "closed but not read-only"
        );
        // The hint survives storage, so a restart does not turn the tool back to Allow.
        let back = Registry::from_stored(&r.to_stored());
        assert_eq!(policy(&back, "tandem_tabs__tab_list"), Policy::Allow);

        r.set_policy(TABS, "tab.open", Policy::Allow).unwrap();
        r.set_policy(TABS, "tab.close", Policy::Deny).unwrap();
        assert_eq!(
            r.set_policy(TABS, "tab.nope", Policy::Allow),
            Err(RegistryError::UnknownTool {
                provider: "Tandem Tabs".into(),
                tool: "tab.nope".into()
            })
        );
        assert!(r.unregister(TABS));
        assert!(r.specs().is_empty());
        r.register(TABS, "Tandem Tabs", tabs());
        assert_eq!(policy(&r, "tandem_tabs__tab_open"), Policy::Allow);
        // A Deny tool is not offered, but resolves so its call is refused with a reason.
        let names: Vec<String> = r.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["tandem_tabs__tab_open", "tandem_tabs__tab_list"]);
        assert_eq!(policy(&r, "tandem_tabs__tab_close"), Policy::Deny);
    }

    #[test]
    fn specs_are_namespaced_described_and_resolve_back() {
        let mut r = allowed();
        // Same display name, same tool names: still no collision.
        r.register(OTHER, "Tandem Tabs", tabs());
        r.decide(OTHER, true).unwrap();
        let specs = r.specs();
        assert_eq!(specs.len(), 6);
        let names: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 6);
        assert!(names.contains("tandem_tabs_ppppoo__tab_open"), "{names:?}");
        for s in &specs {
            assert!(s.name.len() <= 64);
            assert!(s
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
            let back = r.resolve(&s.name).unwrap();
            assert_eq!(back.model_name, s.name);
        }
        assert_eq!(specs[0].description, "«Tandem Tabs»: Does tab.open.");
        let back = r.resolve("tandem_tabs__tab_open").unwrap();
        assert_eq!(back.provider_id, TABS);
        assert_eq!(back.tool_name, "tab.open");
        assert_eq!(back.provider_name, "Tandem Tabs");
        assert!(r.resolve("tandem_tabs__nothing").is_none());
        assert!(r.resolve("tab.open").is_none());
    }

    #[test]
    fn model_names_are_valid_unique_and_deterministic() {
        let long = "a.".repeat(31) + "ab";
        let tools = vec![
            tool("tab.open", None, None),
            tool("tab_open", None, None),
            tool("Tab-Open", None, None),
            tool(&long, None, None),
        ];
        let names = model_names("a_quite_long_prefix_here", &tools);
        assert_eq!(names, model_names("a_quite_long_prefix_here", &tools));
        let set: BTreeSet<&String> = names.iter().collect();
        assert_eq!(set.len(), 4);
        for n in &names {
            assert!(n.len() <= 64, "{n}");
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{n}"
            );
        }
        assert_eq!(names[2], "a_quite_long_prefix_here__Tab-Open");
        assert!(
            names[0].starts_with("a_quite_long_prefix_here__tab_open_"),
            "{}",
            names[0]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_tool_list_gets_valid_unique_names(
            names in proptest::collection::btree_set("[A-Za-z0-9_.-]{1,64}", 1..40),
            display in "\\PC{0,80}",
        ) {
            let tools: Vec<ToolDescriptor> = names.iter().map(|n| tool(n, None, None)).collect();
            let mut r = Registry::new();
            r.register(TABS, &display, tools);
            r.decide(TABS, true).unwrap();
            let specs = r.specs();
            let unique: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            proptest::prop_assert_eq!(unique.len(), names.len());
            for s in &specs {
                proptest::prop_assert!(s.name.len() <= MAX_MODEL_NAME, "{}", s.name);
                proptest::prop_assert!(s.name.starts_with(|c: char| c.is_ascii_lowercase()), "{}", s.name);
                proptest::prop_assert!(
                    s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                    "{}", s.name
                );
                let back = r.resolve(&s.name).unwrap();
                proptest::prop_assert!(names.contains(&back.tool_name));
            }
            proptest::prop_assert_eq!(Registry::from_stored(&r.to_stored()), r);
        }
    }

    #[test]
    fn prefixes_are_readable_and_fall_back_to_the_id() {
        let none = |_: &str| false;
        assert_eq!(pick_prefix(TABS, "Tandem Tabs", &none), "tandem_tabs");
        assert_eq!(pick_prefix(TABS, "  «Tabs»!! 2 ", &none), "tabs_2");
        assert_eq!(pick_prefix(TABS, "タブ", &none), "ext_aaaabbbb");
        assert_eq!(pick_prefix(TABS, "1Password", &none), "ext_1password");
        assert_eq!(pick_prefix("", "", &none), "ext_1");
        assert_eq!(
            pick_prefix(TABS, "The Extraordinarily Long Extension Name", &none),
            "the_extraordinarily_long"
        );
        assert_eq!(
            pick_prefix(TABS, "Tandem Tabs", &|c| c == "tandem_tabs"),
            "tandem_tabs_aaaabb"
        );
        assert_eq!(
            display_name(TABS, " \u{202E}Evil\n«Name» "),
            "Evil \"Name\""
        );
        assert_eq!(display_name(TABS, ""), TABS);
    }

    #[test]
    fn the_stored_shape_round_trips_and_damage_is_skipped() {
        let mut r = allowed();
        r.set_policy(TABS, "tab.open", Policy::Deny).unwrap();
        r.register(OTHER, "Other", vec![tool("x", None, None)]);
        let stored = r.to_stored();
        assert_eq!(stored["version"], json!(1));
        assert_eq!(stored["providers"][TABS]["decision"], json!("allowed"));
        assert_eq!(
            stored["providers"][TABS]["policies"],
            json!({"tab.open": "deny"})
        );
        assert_eq!(Registry::from_stored(&stored), r);
        let via_serde: Registry =
            crate::json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(via_serde, r);

        let mut damaged = stored.clone();
        damaged["providers"][TABS]["tools"][1]["name"] = json!("bad name");
        damaged["providers"][TABS]["tools"][2] = json!(17);
        damaged["providers"][TABS]["policies"]["tab.list"] = json!("maybe");
        damaged["providers"][OTHER]["decision"] = json!("perhaps");
        damaged["providers"]["zzzz"] = json!("garbage");
        let back = Registry::from_stored(&damaged);
        let p = back.provider(TABS).unwrap();
        assert_eq!(p.tools().len(), 1);
        assert_eq!(p.decision(), Decision::Allowed);
        assert!(
            back.provider(OTHER).is_none(),
            "an undecidable provider is asked again"
        );
        assert!(back.provider("zzzz").is_none());
        assert_eq!(
            r.clone().register("", "X", tabs()),
            RegisterOutcome::Refused(NO_ID.into())
        );
        // The user's Deny survived.
        assert!(back.specs().is_empty());

        for nothing in [json!(null), json!([]), json!({"providers": 3}), json!("x")] {
            assert_eq!(Registry::from_stored(&nothing), Registry::new());
        }
    }

    #[test]
    fn stored_prefixes_are_repaired_deterministically() {
        let mut r = allowed();
        r.register(OTHER, "Tandem Tabs", tabs());
        r.decide(OTHER, true).unwrap();
        let mut stored = r.to_stored();
        // Both claim the same prefix; one is missing entirely in another copy.
        stored["providers"][OTHER]["prefix"] = json!("tandem_tabs");
        let back = Registry::from_stored(&stored);
        assert!(back.resolve("tandem_tabs__tab_open").unwrap().provider_id == TABS);
        assert_eq!(back.specs().len(), 6);
        assert_eq!(Registry::from_stored(&back.to_stored()), back);
        stored["providers"][TABS]["prefix"] = json!("Bad__Prefix");
        let again = Registry::from_stored(&stored);
        let names: BTreeSet<String> = again.specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names.len(), 6);
    }

    #[test]
    fn a_long_list_is_summed_up_in_the_question() {
        let mut r = Registry::new();
        let v = json!({"type": "REGISTER_TOOLS", "tools": (0..12).map(|i| json!({
            "name": format!("t{i}"), "label": "L", "description": "", "parameters": {"type": "object"}
        })).collect::<Vec<_>>()});
        let Ok(Incoming::RegisterTools(tools)) = parse_incoming(&v) else {
            panic!()
        };
        r.register(TABS, "", tools);
        assert_eq!(
            r.approval_question(TABS).unwrap(),
            format!("«{TABS}» wants to give Tandem 12 tools: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 2 more.")
        );
        r.register(OTHER, "One", vec![tool("only", None, None)]);
        assert_eq!(
            r.approval_question(OTHER).unwrap(),
            "«One» wants to give Tandem 1 tool: only."
        );
        assert_eq!(r.approval_question("nobody"), None);
        // An empty description falls back to the label.
        r.decide(TABS, true).unwrap();
        assert_eq!(r.specs()[0].description, format!("«{TABS}»: L"));
    }

    #[test]
    fn an_mcp_server_is_one_more_provider_that_can_be_turned_off() {
        let mut r = allowed();
        let id = "mcp:0b9e2c1a-7f00-4b5e-9d5c-1d2e3f4a5b6c";
        let server = McpServer {
            url: "http://127.0.0.1:3000/mcp".into(),
            enabled: true,
            problem: None,
            token_hint: Some("…abcd".into()),
            header_names: vec!["X-Api-Key".into()],
            signs_in: false,
            signed_in: false,
        };
        r.add_mcp_server(
            id,
            "Files",
            server.clone(),
            vec![closed(tool("read", Some(true), None))],
        );
        let back = r.resolve("files__read").unwrap();
        assert_eq!(back.provider_id, id);
        assert_eq!(back.policy, Policy::Allow);
        assert_eq!(r.specs().len(), 4);
        // No ORCHESTRATOR_READY for a server, and no extension can register under its id.
        assert_eq!(r.known_providers(), vec![TABS.to_string()]);
        assert_eq!(
            r.register(id, "x", tabs()),
            RegisterOutcome::Refused(NO_ID.into())
        );
        // Policies survive a new tool list; a problem is cleared by a successful listing.
        r.set_policy(id, "read", Policy::Deny).unwrap();
        r.set_mcp_problem(id, Some("gone".into())).unwrap();
        r.set_mcp_tools(
            id,
            vec![
                closed(tool("read", Some(true), None)),
                tool("write", None, None),
            ],
        )
        .unwrap();
        assert_eq!(r.provider(id).unwrap().mcp().unwrap().problem, None);
        assert_eq!(r.resolve("files__read").unwrap().policy, Policy::Deny);
        // A server that went away offers nothing until it answers again.
        r.set_mcp_problem(id, Some("gone".into())).unwrap();
        assert_eq!(r.specs().len(), 3, "only the extension's tools");
        r.set_mcp_problem(id, None).unwrap();
        assert_eq!(r.specs().len(), 4, "read is Deny, write is offered");
        // Turned off: kept, not offered, not resolved.
        r.set_mcp_enabled(id, false).unwrap();
        assert_eq!(r.specs().len(), 3);
        assert!(r.resolve("files__write").is_none());
        assert_eq!(r.provider(id).unwrap().tools().len(), 2);
        // The stored shape round-trips and holds no token.
        let stored = r.to_stored();
        assert_eq!(
            stored["providers"][id]["mcp"]["url"],
            json!("http://127.0.0.1:3000/mcp")
        );
        assert!(!stored.to_string().contains("Bearer"));
        assert_eq!(Registry::from_stored(&stored), r);
        // A server entry without its URL cannot be reached: dropped.
        let mut damaged = stored.clone();
        damaged["providers"][id]["mcp"] = json!({"enabled": true});
        assert!(Registry::from_stored(&damaged).provider(id).is_none());
        damaged["providers"][id]
            .as_object_mut()
            .unwrap()
            .remove("mcp");
        assert!(Registry::from_stored(&damaged).provider(id).is_none());
        assert!(r.set_mcp_enabled(TABS, false).is_err());
        assert!(r.remove_provider(id));
        assert_eq!(r.mcp_servers().count(), 0);
    }

    #[test]
    fn a_signed_in_server_signs_out_and_in_again() {
        let mut r = allowed();
        let id = "mcp:1b9e2c1a-7f00-4b5e-9d5c-1d2e3f4a5b6c";
        let server = McpServer {
            url: "http://127.0.0.1:3000/mcp".into(),
            enabled: true,
            problem: None,
            token_hint: None,
            header_names: vec![],
            signs_in: true,
            signed_in: true,
        };
        r.add_mcp_server(
            id,
            "Wiki",
            server,
            vec![closed(tool("read", Some(true), None))],
        );
        let m = |r: &Registry| r.provider(id).and_then(|p| p.mcp().cloned()).unwrap();
        assert!(!m(&r).needs_sign_in());
        r.set_mcp_problem(id, Some(crate::mcp::McpError::SignInAgain.to_string()))
            .unwrap();
        assert!(
            m(&r).needs_sign_in(),
            "a renewal that failed asks to sign in again"
        );
        r.set_mcp_signed_in(id, None).unwrap();
        assert!(m(&r).needs_sign_in() && !m(&r).signed_in);
        assert_eq!(m(&r).problem.as_deref(), Some(SIGNED_OUT));
        assert!(
            r.provider(id).unwrap().tools().is_empty(),
            "no tools offered signed out"
        );
        r.set_mcp_signed_in(id, Some(vec![closed(tool("read", Some(true), None))]))
            .unwrap();
        assert!(!m(&r).needs_sign_in() && m(&r).problem.is_none());
        assert_eq!(r.provider(id).unwrap().tools().len(), 1);
    }
}

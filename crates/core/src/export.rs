//! "Save conversation": a conversation as one Markdown document, for the file the user
//! chooses to download. Pure: the panel passes the messages, the site and the date (core has
//! no clock), and writes the result to a Blob.
//!
//! ```
//! use tandem_core::chat::{ChatMessage, Role};
//! use tandem_core::export::to_markdown;
//! let md = to_markdown(
//!     &[ChatMessage::new(Role::User, "Hi?"), ChatMessage::new(Role::Assistant, "**Hello.**")],
//!     Some("example.com"),
//!     "2026-11-23 20:00 UTC",
//! );
//! assert!(md.contains("## You\n\nHi?\n"));
//! assert!(md.contains("## Tandem\n\n**Hello.**\n"));
//! ```

use crate::chat::{ChatMessage, Role, ToolCard};

/// A tool's arguments and result are summarised to this many characters: the file is for
/// reading the conversation, and a result can be 8,000 characters of page text.
const TOOL_SUMMARY_CHARS: usize = 200;

/// The conversation as Markdown: a header (title, site, date), then each message under a
/// `## You` or `## Tandem` heading. Answers keep their Markdown source; a selection the user
/// asked about is a block quote; tool calls are one summarised line each; an answer's
/// provider and its "Stopped"/"Interrupted" badge are noted under it. Messages hidden from
/// context are kept and marked, since the user saw them.
pub fn to_markdown(messages: &[ChatMessage], site: Option<&str>, date: &str) -> String {
    let mut out = String::from("# Conversation with Tandem\n\n");
    out.push_str(&format!(
        "- Site: {}\n- Saved: {}\n",
        site.map(one_line).as_deref().unwrap_or("no website"),
        one_line(date)
    ));
    for m in messages {
        let who = match m.role {
            Role::User => "You",
            Role::Assistant => "Tandem",
            // The panel shows no system messages; should one come, it is not the user's text.
            Role::System => continue,
        };
        out.push_str(&format!("\n## {who}\n\n"));
        if m.hidden {
            out.push_str("_(Hidden from context)_\n\n");
        }
        if let Some(quote) = &m.quote {
            for line in quote.lines() {
                if line.trim().is_empty() {
                    out.push_str(">\n");
                } else {
                    out.push_str(&format!("> {line}\n"));
                }
            }
            out.push('\n');
        }
        for card in &m.tools {
            out.push_str(&tool_line(card));
        }
        if !m.tools.is_empty() {
            out.push('\n');
        }
        let content = m.content.trim_end();
        if !content.is_empty() {
            out.push_str(content);
            out.push('\n');
        }
        if !m.images.is_empty() {
            out.push_str(&format!(
                "\n_({} image{} attached, not included)_\n",
                m.images.len(),
                if m.images.len() == 1 { "" } else { "s" }
            ));
        }
        let mut notes = Vec::new();
        if let Some(badge) = &m.badge {
            notes.push(one_line(badge));
        }
        if let Some(by) = &m.answered_by {
            notes.push(format!("via {}", one_line(by)));
        }
        if !notes.is_empty() {
            out.push_str(&format!("\n_{}_\n", notes.join(", ")));
        }
    }
    out
}

/// The download's file name: `tandem-<site>-<YYYY-MM-DD>.md`, only characters every file
/// system accepts. `date` starts with an ISO date (`2026-11-23…`).
pub fn file_name(site: Option<&str>, date: &str) -> String {
    let site: String = site
        .unwrap_or("conversation")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let day: String = date
        .chars()
        .take(10)
        .filter(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    if day.is_empty() {
        format!("tandem-{site}.md")
    } else {
        format!("tandem-{site}-{day}.md")
    }
}

/// One tool call as a list item: name, provider, outcome, and the start of the arguments
/// and the result.
fn tool_line(card: &ToolCard) -> String {
    let outcome = match card.ok {
        Some(true) => "done",
        Some(false) => "failed",
        None => "did not finish",
    };
    let mut line = format!(
        "- Tool `{}` ({}): {outcome}",
        code_safe(&card.tool),
        one_line(&card.provider)
    );
    let args = summary(&card.arguments);
    if !args.is_empty() {
        line.push_str(&format!("; arguments `{}`", code_safe(&args)));
    }
    let result = summary(&card.result);
    if !result.is_empty() {
        line.push_str(&format!("; result: {result}"));
    }
    line.push('\n');
    line
}

/// Text on one line, at most [`TOOL_SUMMARY_CHARS`] characters (an ellipsis says more was
/// there).
fn summary(text: &str) -> String {
    let flat = one_line(text);
    if flat.chars().count() <= TOOL_SUMMARY_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(TOOL_SUMMARY_CHARS).collect();
    cut.push('…');
    cut
}

/// Line breaks and runs of spaces become one space, so a value cannot start a heading or end
/// a list item.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Backticks would end an inline code span early.
fn code_safe(text: &str) -> String {
    text.replace('`', "'")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(role: Role, content: &str) -> ChatMessage {
        ChatMessage::new(role, content)
    }

    #[test]
    fn header_then_turns_in_order() {
        let md = to_markdown(
            &[
                msg(Role::User, "What is Rust?"),
                msg(
                    Role::Assistant,
                    "A language.\n\n```rust\nfn main() {}\n```\n",
                ),
            ],
            Some("docs.rs"),
            "2026-11-23 20:00 UTC",
        );
        assert_eq!(
            md,
            "# Conversation with Tandem\n\n- Site: docs.rs\n- Saved: 2026-11-23 20:00 UTC\n\
             \n## You\n\nWhat is Rust?\n\
             \n## Tandem\n\nA language.\n\n```rust\nfn main() {}\n```\n"
        );
    }

    #[test]
    fn no_site_is_said() {
        let md = to_markdown(&[], None, "2026-11-23");
        assert!(md.contains("- Site: no website\n"));
    }

    #[test]
    fn quote_badge_provider_hidden_and_images() {
        let mut user = msg(Role::User, "Explain this.");
        user.quote = Some("line one\n\nline two".into());
        user.hidden = true;
        user.images = vec!["data:image/png;base64,AAAA".into()];
        let mut answer = msg(Role::Assistant, "Partial");
        answer.badge = Some("Stopped".into());
        answer.answered_by = Some("OpenAI".into());
        let md = to_markdown(&[user, answer], Some("a.test"), "d");
        assert!(
            md.contains("_(Hidden from context)_\n\n> line one\n>\n> line two\n\nExplain this.\n")
        );
        assert!(md.contains("_(1 image attached, not included)_"));
        assert!(!md.contains("base64"));
        assert!(md.contains("Partial\n\n_Stopped, via OpenAI_\n"));
    }

    #[test]
    fn tool_cards_are_summarised() {
        let mut answer = msg(Role::Assistant, "Done.");
        answer.tools = vec![
            ToolCard {
                call_id: "c1".into(),
                tool: "tabs__list".into(),
                provider: "Tabs\nprovider".into(),
                arguments: "{\"q\":\"`x`\"}".into(),
                ok: Some(true),
                result: "r".repeat(1000),
            },
            ToolCard {
                tool: "t".into(),
                ok: None,
                ..ToolCard::default()
            },
        ];
        let md = to_markdown(&[answer], None, "d");
        let line = md
            .lines()
            .find(|l| l.starts_with("- Tool `tabs__list`"))
            .expect("a line for the first tool");
        assert!(line.contains("(Tabs provider): done"));
        assert!(line.contains("arguments `{\"q\":\"'x'\"}`"));
        assert!(line.ends_with(&format!("{}…", "r".repeat(TOOL_SUMMARY_CHARS))));
        assert!(md.contains("- Tool `t` (): did not finish\n"));
    }

    #[test]
    fn header_values_cannot_break_the_header() {
        let md = to_markdown(&[], Some("evil\n# Heading"), "x\ny");
        assert!(md.contains("- Site: evil # Heading\n- Saved: x y\n"));
    }

    #[test]
    fn file_names() {
        assert_eq!(
            file_name(Some("shop.example.com"), "2026-11-23T20:00:00.000Z"),
            "tandem-shop.example.com-2026-11-23.md"
        );
        assert_eq!(file_name(None, ""), "tandem-conversation.md");
        assert_eq!(
            file_name(Some("[::1]:80/x"), "2026-01-02"),
            "tandem-___1__80_x-2026-01-02.md"
        );
    }
}

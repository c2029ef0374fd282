//! What a task waits for, in one short sentence: the panel's pinned line when the question is
//! out of sight, and the toolbar badge's title when the panel is closed. Each is a catalog
//! message ([`crate::i18n`]), put into words where it is shown.

use super::task::PendingConfirmation;
use crate::i18n::{text, Msg};

/// The sentence for the task's open question or pending approval; `None` when nothing waits.
pub fn task_waiting(pending: Option<&PendingConfirmation>, question: Option<&str>) -> Option<Msg> {
    if let Some(p) = pending {
        return Some(if let Some(site) = &p.site {
            Msg::new("waitSite", vec![text(site.clone())])
        } else if let Some(tool) = &p.tool {
            call_waiting(&tool.tool)
        } else if p.secret {
            Msg::key("waitSecret")
        } else {
            Msg::key("waitApproval")
        });
    }
    question.map(|_| Msg::key("waitQuestion"))
}

/// The sentence for a tool call of a chat answer that waits for Approve / Deny.
pub fn call_waiting(tool: &str) -> Msg {
    Msg::new("waitTool", vec![text(tool)])
}

/// The sentence for tool providers waiting for Allow / Deny (`names` as they call themselves).
pub fn providers_waiting(names: &[&str]) -> Option<Msg> {
    match names {
        [] => None,
        [one] => Some(Msg::new("waitProvider", vec![text(*one)])),
        many => Some(Msg::new(
            "waitProviders",
            vec![text(many.len().to_string())],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::ToolUse;

    fn pending() -> PendingConfirmation {
        PendingConfirmation {
            action: String::new(),
            target: None,
            reason: "Tandem wants to click “Pay now”.".into(),
            secret: false,
            site: None,
            tool: None,
            said: None,
        }
    }

    #[test]
    fn each_question_has_its_sentence() {
        assert_eq!(task_waiting(None, None), None);
        assert_eq!(
            task_waiting(Some(&pending()), None)
                .map(|m| m.english())
                .as_deref(),
            Some("A task step waits for your approval.")
        );
        let site = PendingConfirmation {
            site: Some("shop.example".into()),
            ..pending()
        };
        assert_eq!(
            task_waiting(Some(&site), None)
                .map(|m| m.english())
                .as_deref(),
            Some("Tandem asks whether it may act on shop.example.")
        );
        let secret = PendingConfirmation {
            secret: true,
            ..pending()
        };
        assert!(task_waiting(Some(&secret), None)
            .unwrap()
            .english()
            .contains("password"));
        let tool = PendingConfirmation {
            tool: Some(ToolUse {
                call_id: "c".into(),
                tool: "tabs__open".into(),
                provider: "Tabs".into(),
                arguments: "{}".into(),
            }),
            ..pending()
        };
        assert!(task_waiting(Some(&tool), None)
            .unwrap()
            .english()
            .contains("tabs__open"));
        assert_eq!(
            task_waiting(None, Some("Which size?"))
                .map(|m| m.english())
                .as_deref(),
            Some("Tandem asked you a question about the task.")
        );
        assert_eq!(providers_waiting(&[]), None);
        assert_eq!(
            providers_waiting(&["Probe Tools"])
                .map(|m| m.english())
                .as_deref(),
            Some("The extension Probe Tools asks to give Tandem tools.")
        );
        assert!(call_waiting("x").english().contains("x"));
    }
}

//! What a task waits for, in one short sentence: the panel's pinned line when the question is
//! out of sight, and the toolbar badge's title when the panel is closed.

use super::task::PendingConfirmation;

/// The sentence for the task's open question or pending approval; `None` when nothing waits.
pub fn task_waiting(
    pending: Option<&PendingConfirmation>,
    question: Option<&str>,
) -> Option<String> {
    if let Some(p) = pending {
        return Some(if let Some(site) = &p.site {
            format!("Tandem asks whether it may act on {site}.")
        } else if let Some(tool) = &p.tool {
            format!("Tandem asks before running the tool {}.", tool.tool)
        } else if p.secret {
            "Tandem needs a password for a field of the page.".to_string()
        } else {
            "A task step waits for your approval.".to_string()
        });
    }
    question.map(|_| "Tandem asked you a question about the task.".to_string())
}

/// The sentence for a tool call of a chat answer that waits for Approve / Deny.
pub fn call_waiting(tool: &str) -> String {
    format!("Tandem asks before running the tool {tool}.")
}

/// The sentence for tool providers waiting for Allow / Deny (`names` as they call themselves).
pub fn providers_waiting(names: &[&str]) -> Option<String> {
    match names {
        [] => None,
        [one] => Some(format!("The extension {one} asks to give Tandem tools.")),
        many => Some(format!(
            "{} extensions ask to give Tandem tools.",
            many.len()
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
        }
    }

    #[test]
    fn each_question_has_its_sentence() {
        assert_eq!(task_waiting(None, None), None);
        assert_eq!(
            task_waiting(Some(&pending()), None).as_deref(),
            Some("A task step waits for your approval.")
        );
        let site = PendingConfirmation {
            site: Some("shop.example".into()),
            ..pending()
        };
        assert_eq!(
            task_waiting(Some(&site), None).as_deref(),
            Some("Tandem asks whether it may act on shop.example.")
        );
        let secret = PendingConfirmation {
            secret: true,
            ..pending()
        };
        assert!(task_waiting(Some(&secret), None)
            .unwrap()
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
            .contains("tabs__open"));
        assert_eq!(
            task_waiting(None, Some("Which size?")).as_deref(),
            Some("Tandem asked you a question about the task.")
        );
        assert_eq!(providers_waiting(&[]), None);
        assert_eq!(
            providers_waiting(&["Probe Tools"]).as_deref(),
            Some("The extension Probe Tools asks to give Tandem tools.")
        );
        assert!(call_waiting("x").contains("x"));
    }
}

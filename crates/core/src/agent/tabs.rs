//! The TabRegistry: the tabs a task used, numbered for the model in the order the task met
//! them (`[0]` is the tab it started on), and which one the agent acts on. The worker does the
//! `chrome.tabs` calls; what they mean for the task is decided here.

use super::task::TaskContext;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TabError {
    #[error("there is no tab [{index}] (this task has {count} tabs)")]
    NoSuchTab { index: u32, count: usize },
    #[error("the task's only tab cannot be closed; use navigate instead")]
    LastTab,
}

/// A tab the task opened becomes its current tab.
pub fn opened(ctx: &mut TaskContext, tab_id: i32) {
    ctx.add_tab(tab_id);
    ctx.tab_id = tab_id;
}

/// The tab `[index]` refers to; it becomes the current tab.
pub fn switch_to(ctx: &mut TaskContext, index: u32) -> Result<i32, TabError> {
    let id = usize::try_from(index)
        .ok()
        .and_then(|i| ctx.relevant_tabs.get(i))
        .copied()
        .ok_or(TabError::NoSuchTab {
            index,
            count: ctx.relevant_tabs.len(),
        })?;
    ctx.tab_id = id;
    Ok(id)
}

/// Closing the current tab: it leaves the registry and the tab used before it (the previous
/// one in the list) becomes current. Returns `(closed, now current)`.
pub fn close_current(ctx: &mut TaskContext) -> Result<(i32, i32), TabError> {
    if ctx.relevant_tabs.len() < 2 {
        return Err(TabError::LastTab);
    }
    let closed = ctx.tab_id;
    let at = ctx.relevant_tabs.iter().position(|t| *t == closed);
    ctx.relevant_tabs.retain(|t| *t != closed);
    let next = match at {
        Some(i) if i > 0 => ctx.relevant_tabs.get(i - 1),
        _ => ctx.relevant_tabs.first(),
    }
    .copied()
    .ok_or(TabError::LastTab)?;
    ctx.tab_id = next;
    Ok((closed, next))
}

/// A tab closed by the user (or the browser): it leaves the registry; if it was current, the
/// previous one takes over. `None` when the task has no tab left.
pub fn forget(ctx: &mut TaskContext, tab_id: i32) -> Option<i32> {
    let at = ctx.relevant_tabs.iter().position(|t| *t == tab_id)?;
    ctx.relevant_tabs.remove(at);
    if ctx.tab_id == tab_id {
        let next = ctx
            .relevant_tabs
            .get(at.saturating_sub(1))
            .or(ctx.relevant_tabs.first())
            .copied()?;
        ctx.tab_id = next;
    }
    Some(ctx.tab_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_switching_and_closing_keep_the_registry_and_the_current_tab_right() {
        let mut ctx = TaskContext::new("t", "x", 10);
        assert_eq!(close_current(&mut ctx), Err(TabError::LastTab));
        opened(&mut ctx, 20);
        opened(&mut ctx, 30);
        assert_eq!(ctx.relevant_tabs, vec![10, 20, 30]);
        assert_eq!(ctx.tab_id, 30);
        assert!(crate::agent::task::tab_list(&ctx).contains("[2] tab 30 (current)"));
        assert_eq!(switch_to(&mut ctx, 1), Ok(20));
        assert_eq!(ctx.tab_id, 20);
        assert_eq!(
            switch_to(&mut ctx, 7),
            Err(TabError::NoSuchTab { index: 7, count: 3 })
        );
        assert_eq!(ctx.tab_id, 20, "a failed switch changes nothing");
        assert_eq!(close_current(&mut ctx), Ok((20, 10)));
        assert_eq!(ctx.relevant_tabs, vec![10, 30]);
        switch_to(&mut ctx, 0).unwrap();
        assert_eq!(close_current(&mut ctx), Ok((10, 30)));
        assert_eq!(close_current(&mut ctx), Err(TabError::LastTab));
        // Opening a tab the task already knows does not list it twice.
        opened(&mut ctx, 30);
        assert_eq!(ctx.relevant_tabs, vec![30]);
    }

    #[test]
    fn a_tab_closed_by_the_user_leaves_the_registry() {
        let mut ctx = TaskContext::new("t", "x", 1);
        opened(&mut ctx, 2);
        assert_eq!(forget(&mut ctx, 9), None, "not a task tab");
        assert_eq!(forget(&mut ctx, 2), Some(1));
        assert_eq!(ctx.tab_id, 1);
        assert_eq!(forget(&mut ctx, 1), None, "no tab left");
    }
}

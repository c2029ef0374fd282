//! What can go wrong in a step on the worker's side (the page, the driver, the tab, storage):
//! shared by the loop and the modules it calls, so none of them reaches up into the
//! coordinator for it.

#[derive(Debug, thiserror::Error)]
pub(super) enum AgentError {
    #[error("the page could not be read ({0})")]
    Page(String),
    #[error("the page driver answered something unexpected ({0})")]
    Driver(String),
    #[error("the tab is gone ({0})")]
    Tab(String),
    #[error("saving the task failed ({0})")]
    Storage(String),
}

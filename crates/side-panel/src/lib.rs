//! Side panel.

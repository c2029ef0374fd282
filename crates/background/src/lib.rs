//! Service worker.

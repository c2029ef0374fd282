//! `scripts/bench` runs this: prints figures, asserts nothing.
fn main() {}

//! Builders and helpers shared by Weft tests.
//!
//! [`expect`] is the checker behind the behaviour suite (`tests/behaviour.rs`): scenario files
//! replayed by the simulator, compared with hand-derived `.expect` files.

pub mod expect;

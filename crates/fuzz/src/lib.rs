//! Fuzzing that runs on stable Rust (cargo-fuzz needs a nightly compiler): a small mutational
//! engine ([`engine`]) drives each target ([`targets`]) from seed inputs for a time budget and
//! reports executions and crashes (panics, with the input that caused them).
//!
//! `cargo test -p weft-fuzz` runs every target for a few seconds (`WEFT_FUZZ_MS` per target,
//! default 3000); `cargo run --release -p weft-fuzz -- [TARGET] [SECONDS]` runs longer.
//! There is no coverage feedback: the mutations are chosen for what breaks parsers (nesting
//! amplified by repeating a slice, huge numbers, cut and spliced inputs, each format's tokens).

pub mod engine;
pub mod targets;

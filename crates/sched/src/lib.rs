//! The scheduler core: Hadoop's Fair Scheduler as a deterministic, sans-IO state machine.
//!
//! Events go in through [`Scheduler::handle`] with the current time passed as an argument;
//! decisions come out through [`Scheduler::poll_decision`] ("mutate, then drain").
//! The same events always give the same decisions.
//!
//! This crate must not read a clock, spawn threads, use async, touch files or sockets, or iterate
//! a hash map in an order that could affect a decision. `tests/tidy.rs` enforces the first four.

mod api;
mod app;
mod ask_tags;
mod assign;
mod moves;
mod node;
mod order;
mod ordset;
mod placement;
mod policy;
mod queues;
mod requests;
mod runnable;
mod running;
mod scheduler;
mod shares;
mod table;
mod update;
mod verify;

pub use api::*;
pub use moves::QueueAccess;
pub use scheduler::{Scheduler, WalkMode};

//! The scheduler core: Hadoop's Fair, Capacity and FIFO schedulers as deterministic, sans-IO state machines.
//!
//! Events go in through [`Scheduler::handle`] with the current time passed as an argument;
//! decisions come out through [`Scheduler::poll_decision`] ("mutate, then drain").
//! The same events always give the same decisions.
//!
//! This crate must not read a clock, spawn threads, use async, touch files or sockets, or iterate
//! a hash map in an order that could affect a decision. `tests/tidy.rs` enforces the first four.
//!
//! The engine (`src/`) is built twice, at six resource lanes (`weft-sched-engine`) and at two
//! (`weft-sched-engine2`); [`Scheduler`] runs the two-lane one when the resource-type registry
//! holds only memory and vcores (`facade/scheduler.rs`).

mod scheduler;

pub use scheduler::Scheduler;
pub use weft_config::SchedulerKind;
pub use weft_sched_api::*;
pub use weft_sched_engine::MAX_PLAN_RESERVATIONS;

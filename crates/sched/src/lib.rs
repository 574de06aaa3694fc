//! The scheduler core: Hadoop's Fair, Capacity and FIFO schedulers as deterministic, sans-IO state machines.
//!
//! Events go in through [`Scheduler::handle`] with the current time passed as an argument;
//! decisions come out through [`Scheduler::poll_decision`] ("mutate, then drain").
//! The same events always give the same decisions.
//!
//! This crate must not read a clock, spawn threads, use async, touch files or sockets, or iterate
//! a hash map in an order that could affect a decision. `tests/tidy.rs` enforces the first four.

/// The public types, shared by both builds of this source and the `weft-sched` facade.
mod api {
    pub use weft_sched_api::*;
}
mod capacity;
mod engine;
mod fair;
mod fifo;
mod follower;
mod footprint;
mod lanes;
mod objects;
mod order;
mod queries;
mod queues;
mod rules;
mod scheduler;
mod verify;
mod walk;

pub use api::*;
pub use follower::MAX_PLAN_RESERVATIONS;
pub use scheduler::Scheduler;
pub use weft_config::SchedulerKind;

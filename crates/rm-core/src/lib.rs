//! The ResourceManager's core as a sans-IO, deterministic state machine.
//!
//! [`RmCore`] owns the applications, their attempts, the containers and the nodes, and wraps
//! the scheduler (`weft_sched::Scheduler`). Inputs are methods taking `now` (REST submissions,
//! kills and moves; NM registrations and heartbeats; AM register/allocate/finish; `tick`);
//! outputs ([`Output`]: store writes, AM launches, container stops) are drained with
//! [`RmCore::poll_output`]. It reads no clock, does no I/O and holds no RNG: the daemon
//! (`weft-rm`) and tests drive it.

mod am;
mod am_recovery;
mod apps;
mod core;
mod error;
mod liveness;
mod model;
mod node_identity;
mod nodes;
mod recovery;
mod reports;
mod tokens;

#[cfg(test)]
mod tests;

pub use crate::core::{RmConfig, RmCore};
pub use error::RmError;
pub use model::*;
pub use weft_store::{
    AppState, AttemptState, FinalStatus, LaunchContext, LocalResource, LocalResourceKind, Write,
};
pub use weft_tokens::MasterKey;

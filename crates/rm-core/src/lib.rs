//! The ResourceManager's core as a sans-IO, deterministic state machine.
//!
//! [`RmCore`] owns the applications, their attempts, the containers, the nodes and the
//! time-aware demands (`demands`: seed 004's RMDemand state machine), and wraps
//! the scheduler (`weft_sched::Scheduler`). Inputs are methods taking `now` (REST submissions,
//! kills and moves; NM registrations and heartbeats; AM register/allocate/finish; `tick`);
//! outputs ([`Output`]: store writes, AM launches, container stops) are drained with
//! [`RmCore::poll_output`]. It reads no clock, does no I/O and holds no RNG: the daemon
//! (`weft-rm`) and tests drive it.

mod am;
mod am_gangs;
mod am_recovery;
mod app_table;
mod apps;
mod blacklist;
mod container_table;
mod core;
mod demands;
mod early_submission;
mod ended_containers;
mod error;
mod id_map;
mod limits;
mod liveness;
mod model;
mod node_containers;
mod node_identity;
mod node_labels;
mod node_table;
mod nodes;
mod plan_follower;
mod preemption;
mod recovery;
mod reports;
mod reservation_acls;
mod reservation_records;
mod reservations;
mod retention;
mod tokens;

#[cfg(test)]
mod tests;

pub use crate::core::{
    RmConfig, RmCore, DEFAULT_ALLOCATE_MAX_CONTAINERS, DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL,
    ENDED_CONTAINERS_KEPT,
};
pub use am_gangs::MAX_PENDING_GANGS_PER_ATTEMPT;
pub use demands::{
    demand_state_name, DemandBatch, DemandOutcomes, DemandPreview, DemandReason, DemandReport,
    DemandTransition, DEMAND_GANG_IDS, MAX_AM_DEMANDS_PER_APP, MAX_DEMANDS_PER_SCOPE,
    MAX_DEMANDS_PER_SUBMISSION,
};
pub use error::RmError;
pub use limits::*;
pub use model::*;
pub use node_labels::{LabelSource, NodeLabelInfo, NODE_LABELS_DISABLED};
pub use reservation_acls::ReservationAcl;
pub use reservations::{
    plan_capacity, reservable_queues, ReservationError, ReservationQuery, ReservationSystem,
};
pub use retention::DEFAULT_MAX_COMPLETED_APPS;
pub use weft_demand_lang::Strategy as DemandStrategy;
pub use weft_plan;
pub use weft_store::{
    AppState, AttemptState, DemandState, FinalStatus, LaunchContext, LocalResource,
    LocalResourceKind, Write,
};
pub use weft_tokens::MasterKey;

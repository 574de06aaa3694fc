//! Reservation planning, as Hadoop's ReservationSystem (Rayon) does it.
//!
//! This crate owns the resource skyline over time ([`Skyline`]), one reservable queue's plan
//! ([`Plan`]), the reservation definition language ([`ReservationDefinition`]: R_ANY, R_ALL,
//! R_ORDER, R_ORDER_NO_GAP stages of gangs), the agents ([`AlignedPlannerWithGreedy`],
//! Hadoop's default, and [`GreedyAgent`]), the sharing policies ([`SharingPolicy`]) and the
//! replanner ([`replan`]).
//!
//! It is pure and sans-IO: time is an argument (integer milliseconds), nothing reads a clock,
//! a file or the network, and every map is ordered so the same inputs give the same plan. It
//! must not know about queues' schedulers, applications, the follower that publishes a plan
//! to the scheduler, REST or configuration files: callers translate those into plans and
//! definitions.

mod agent;
mod packing;
mod plan;
mod policy;
mod rdl;
mod replanner;
mod skyline;

pub use agent::{AlignedPlannerWithGreedy, GreedyAgent, Placement, ReservationAgent};
pub use packing::{check_packable, PackedAgent, Unpackable};
pub use plan::{Plan, PlanConfig, PlanError, Reservation};
pub use policy::{BadPercent, CapacityOverTime, Percent, PolicyViolation, SharingPolicy};
pub use rdl::{
    parse_recurrence, BadReservationId, ContractError, Interpreter, ReservationDefinition,
    ReservationId, ReservationRequest, ValidationContext,
};
pub use replanner::{replan, replan_loose_first, DEFAULT_ENFORCEMENT_WINDOW};
pub use skyline::{Integral, MergeOp, Segment, Skyline, SkylineError};

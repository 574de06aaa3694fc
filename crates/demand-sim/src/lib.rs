//! Measures time-aware demands (issue 17 item 7; time-aware-demands spec §4) by driving the
//! real RM core, [`weft_rm_core::RmCore`], in virtual time: virtual NodeManagers heartbeat it,
//! virtual ApplicationMasters register, ask (plain asks, reservations' apps or demands),
//! launch and complete their containers and finish, and the core is ticked at its timers.
//! `weft sim` drives the scheduler alone and cannot see demands, reservations' admission or
//! the RMDemand state machine; this crate sees all of them because it runs the code the RM
//! daemon runs.
//!
//! [`compare`] runs the spec's `deadline-mix` trace under each [`Configuration`] and reports
//! §4.1's metrics ([`report`]).

mod am;
mod bench;
mod clock;
mod cluster;
mod driver;
mod node;
pub mod report;
mod rng;
pub mod scenario;
pub mod workload;

pub use bench::{bench, parse_seeds, Bench};
pub use cluster::Configuration;
pub use driver::{run, JobOutcome, RunOptions, RunOutput, Usage, STEP_MS};
pub use report::{compare, compare_with, Comparison, ConfigReport};
pub use scenario::{run_scenario, ScenarioRunError, ScenarioSummary};
pub use workload::{deadline_mix, JobKind, MixParams};

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A configuration that cannot be built.
    #[error("configuration: {0}")]
    Config(String),
    /// The core refused an input the driver relies on.
    #[error("the RM core refused: {0}")]
    Core(String),
}

//! The discrete-event simulator behind `weft sim run`: it parses a scenario file (the public
//! contract in `scenario-format.md`), replays it through the real scheduler with a virtual
//! clock, and writes what happened as JSON lines.
//!
//! This crate is sans-IO: it reads no files (the caller reads the scenario and any
//! `allocations_file` and passes text in), reads no clock (the scheduler's CPU time comes from
//! an injected [`CpuClock`]), spawns nothing and never uses async.
//!
//! Driving it: [`parse_scenario`] -> provide [`Scenario::needed_file`] if any ->
//! [`initial_config`] -> [`run`].

mod clock;
mod config;
mod driver;
mod duration;
mod events;
pub mod limits;
pub mod output;
mod parse;
pub mod presets;
pub mod progress;
mod queue;
pub mod report;
mod runner;
pub mod scale;
mod scenario;
pub mod sls;
pub mod synth;
#[cfg(test)]
mod tests;
mod toml_walk;
pub mod workload;

pub use clock::{CpuClock, ZeroClock};
pub use config::{initial_config, parse_reload, InitialConfig};
pub use duration::parse_duration;
pub use parse::{parse_scenario, DEFAULT_RACK};
pub use runner::{run, RunError, RunSummary};
pub use scenario::{
    Action, AllocationsSource, Driver, EmbeddedText, NodeSpec, Problem, Property,
    ReserveInterpreter, ReserveRequest, ReserveSpec, Scenario, ScenarioError, ScheduledEvent,
};

use weft_sched::Scheduler;

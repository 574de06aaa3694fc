//! The distributed shell, as in YARN: `weft dshell` submits an ApplicationMaster through the
//! RM's REST API, and that AM (`weft dshell-am`, the same binary) runs a shell command in N
//! containers of a given size, printing where each ran and how it ended. Weft-only: the
//! containers may run as one time-aware demand (a start time, a deadline, an order after other
//! runs: [`DemandFlags`]).

mod am;
mod client;
mod demand;
mod shell;

pub use am::{run_am, AmEnvironment, Decision, DshellAmArgs, Outcome, Tracker};
pub use client::{run, AppReport, DshellArgs, APPLICATION_TYPE, DEFAULT_RM};
pub use demand::DemandFlags;
pub use shell::quote;

//! Hadoop's Fair Scheduler rules: policies, fair shares, the periodic update, maxRunningApps,
//! moves and placement.

mod moves;
pub(crate) mod placement;
pub(crate) mod policy;
mod runnable;
pub(crate) mod shares;
mod update;

pub(crate) use runnable::UserState;

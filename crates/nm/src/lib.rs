//! The Weft NodeManager.
//!
//! The container executor ([`executor`]) runs containers as real processes, each in its own
//! process group, limited by cgroups when the machine offers usable memory/cpu controllers
//! ([`cgroups`]) and always watched by a memory monitor that kills a container whose process
//! tree grows past its limit.

pub mod cgroups;
pub mod executor;
pub mod exit;
pub mod launch;
mod procfs;

pub use cgroups::CgroupMode;
pub use executor::{Completion, ContainerHandle, ExecError, Executor, ExecutorConfig};
pub use launch::{LaunchSpec, NodeLayout};

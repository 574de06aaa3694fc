//! The Weft NodeManager.
//!
//! The container executor ([`executor`]) runs containers as real processes, each in its own
//! process group, limited by cgroups when the machine offers usable memory/cpu controllers
//! ([`cgroups`]); without a cgroup, a memory monitor kills a container whose process tree
//! grows past its limit (with one, the kernel enforces it and the monitor reports OOM kills). [`NodeManager`] adds the container-management gRPC service,
//! the heartbeat driver that keeps the RM informed and the web service
//! (YARN's NM REST API: node facts and container logs), and Hadoop's own
//! ContainerManagementProtocol over Hadoop IPC for Hadoop's `NMClient` (`hadoop`); [`run`]
//! is `weft nm`.

pub mod cgroups;
mod clock;
mod daemon;
pub mod executor;
pub mod exit;
mod hadoop;
pub mod launch;
mod leftovers;
pub mod localize;
mod node;
mod procfs;
mod security;
mod service;
mod table;
mod tracker;
mod web;

pub use cgroups::CgroupMode;
pub use daemon::{run, NmArgs};
pub use executor::{Completion, ContainerHandle, ExecError, Executor, ExecutorConfig};
pub use launch::{LaunchSpec, NodeLayout};
pub use localize::{LocalResourceSpec, ResourceKind};
pub use node::{NmConfig, NmError, NodeManager, NM_SHUTDOWN};

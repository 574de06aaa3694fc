//! Plain domain types shared by every Weft crate.
//!
//! This crate owns the resource vector and its overflow-safe arithmetic, the identifiers of
//! applications, nodes and containers, virtual time, calendar dates of epoch times, and the
//! locality levels.
//! It must not know about queues, configuration files, I/O or the wall clock.

mod calendar;
mod ids;
mod resource;
mod time;
pub mod yarn_id;
mod yarn_names;

pub use calendar::CalendarTime;
pub use ids::{AppId, ContainerId, NodeId};
pub use resource::{
    Lanes, Resource, ResourceTypes, TooManyResourceTypes, MAX_RESOURCE_TYPES, MEMORY, VCORES,
};
pub use time::{Duration, Time};
pub use yarn_names::{YARN_APP_STATES, YARN_NODE_STATES};

/// How close to the data a container was placed, as YARN reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Locality {
    /// On a host the request named.
    NodeLocal,
    /// On a rack the request named (but not on a named host).
    RackLocal,
    /// Anywhere in the cluster.
    OffSwitch,
}

impl Locality {
    /// The name used in outputs (`node_local`, `rack_local`, `off_switch`).
    pub fn as_str(self) -> &'static str {
        match self {
            Locality::NodeLocal => "node_local",
            Locality::RackLocal => "rack_local",
            Locality::OffSwitch => "off_switch",
        }
    }
}

//! A node as the scheduler sees it: capacity, allocation, running containers, reservation.

use crate::lanes::Resource;
use weft_types::{AppId, ContainerId, NodeId};

use crate::objects::app::SchedulerKey;
use crate::objects::containers::{Link, RunList};

/// A container reserved on a node for an app's ask that does not fit yet (spec §6.4, §6.5).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reservation {
    pub(crate) app: AppId,
    pub(crate) key: SchedulerKey,
    pub(crate) size: Resource,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) id: NodeId,
    pub(crate) host: String,
    pub(crate) rack: String,
    pub(crate) capability: Resource,
    pub(crate) allocated: Resource,
    /// Running containers.
    pub(crate) running: RunList,
    pub(crate) reservation: Option<Reservation>,
    /// Its resource pool (0: DEFAULT, or pools off).
    pub(crate) pool: u16,
    /// The NM's port (0 when the driver gave none); with the host, what pools match.
    pub(crate) port: u16,
}

impl Node {
    pub(crate) fn new(id: NodeId, host: String, rack: String, capability: Resource) -> Node {
        Node {
            id,
            host,
            rack,
            capability,
            allocated: Resource::ZERO,
            running: RunList::default(),
            reservation: None,
            pool: 0,
            port: 0,
        }
    }

    /// Resources not allocated to containers (reservations do not count).
    pub(crate) fn unallocated(&self) -> Resource {
        self.capability.saturating_sub(self.allocated)
    }
}

/// A running container. Its app and node are held by their table slots (stable while the
/// container lives: an app or node leaves only after its containers), so a completion reaches
/// them without a look-up by id (a cache miss in the id index at full scale).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Container {
    pub(crate) id: ContainerId,
    /// The app's slot in `Scheduler::apps`.
    pub(crate) app_slot: u32,
    /// The node's slot in `Scheduler::nodes`.
    pub(crate) node_slot: u32,
    pub(crate) size: Resource,
    /// The request priority it was allocated at (Hadoop's RMContainer keeps it: global
    /// preemption takes the largest number first).
    pub(crate) priority: i32,
    /// Recovered on a node outside its app's resource pool (resource-pools spec §10: a host
    /// moved while the RM was down); every allocated container is in its app's pool.
    pub(crate) foreign: bool,
    /// Neighbours on its app's list of running containers.
    pub(crate) by_app: Link,
    /// Neighbours on its node's list.
    pub(crate) by_node: Link,
}

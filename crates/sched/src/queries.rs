//! What a driver asks the scheduler about one application between events: its headroom, the
//! largest container it may ask for, and the containers it is about to lose.

use crate::lanes::Resource;
use weft_types::{AppId, ContainerId};

use crate::engine::Engine;
use crate::rules::Rules;

impl<R: Rules> Engine<R> {
    /// The app's headroom (`R::headroom`), or `None` for an unknown app.
    pub(crate) fn app_headroom(&self, app: AppId) -> Option<Resource> {
        self.apps.get(&app).map(|a| R::headroom(self, a))
    }

    /// The largest container the app may ask for (`R::max_container_allocation` of its
    /// queue), or `None` for an unknown app.
    pub(crate) fn app_max_container_allocation(&self, app: AppId) -> Option<Resource> {
        self.apps
            .get(&app)
            .map(|a| R::max_container_allocation(self, a.queue))
    }

    /// Containers allocated since the start.
    pub(crate) fn allocation_count(&self) -> u64 {
        self.allocations
    }

    /// Sum of node capabilities.
    pub(crate) fn cluster_capacity(&self) -> Resource {
        self.cluster
    }

    /// Sum of allocated containers.
    pub(crate) fn cluster_used_now(&self) -> Resource {
        self.cluster_used
    }

    /// Queues the walks entered so far.
    pub(crate) fn queues_visited_total(&self) -> u64 {
        self.queues_visited
    }

    /// Walks from the root so far.
    pub(crate) fn walks_total(&self) -> u64 {
        self.walks
    }

    /// The widest walk of the latest heartbeat.
    pub(crate) fn widest_walk_of_last_heartbeat(&self) -> u64 {
        self.last_heartbeat_widest_walk
    }

    /// Top-level queues in reach, summed over the walks.
    pub(crate) fn top_level_reachable_total(&self) -> u64 {
        self.top_level_reachable
    }

    /// The id the next allocation gets.
    pub(crate) fn next_container_id(&self) -> ContainerId {
        ContainerId(self.next_container)
    }

    /// The app's usage and running container count.
    pub(crate) fn app_usage(&self, app: AppId) -> Option<(Resource, usize)> {
        self.apps.get(&app).map(|a| (a.usage, a.running.len()))
    }

    /// The node's allocated resources.
    pub(crate) fn node_allocated(&self, node: weft_types::NodeId) -> Option<Resource> {
        self.nodes.get(&node).map(|n| n.allocated)
    }

    /// The app's containers marked for preemption and still live, in marking order
    /// (`R::preemption_contract`).
    pub(crate) fn app_preemption_contract(&self, app: AppId) -> Vec<ContainerId> {
        R::preemption_contract(self, app)
    }
}

//! The public face of the scheduler core: one type whatever the scheduler kind and the number
//! of resource types, dispatching each call to the engine built for that many lanes.
//!
//! Most clusters register only memory and vcores; their engine keeps every vector in two
//! lanes (16 bytes instead of 48: apps, queues, nodes and containers shrink by a third to a
//! half, and a heartbeat touches that many fewer cache lines). A registry with a custom type
//! (e.g. `gpu`) gets the six-lane engine. The choice is made once, at [`Scheduler::new`]; a
//! reload that would register a type the running engine cannot carry is refused, the old
//! configuration kept (resource types change with a restart, as in Hadoop, where
//! `resource-types.xml` is read at start).

use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

use weft_sched_api::*;

/// A scheduler as a deterministic state machine: Hadoop's Fair, Capacity or FIFO scheduler
/// (the kind its [`SchedulerConfig`] names).
///
/// Driving contract: call [`Scheduler::handle`] with the current time and one event, then drain
/// [`Scheduler::poll_decision`] until it returns `None`. Time only comes in through `handle`;
/// the periodic [`Event::Update`] is the driver's job (every `update_interval_ms`).
pub struct Scheduler {
    engine: Lanes,
}

/// The engine, by the width of its resource vectors.
// One per process, matched on every call: boxing would add a pointer chase to every event.
#[allow(clippy::large_enum_variant)]
enum Lanes {
    /// Memory and vcores only.
    Two(weft_sched_engine2::Scheduler),
    /// Up to four custom types besides.
    Six(weft_sched_engine::Scheduler),
}

/// Runs `$body` with `$s` bound to the engine, whatever its width.
macro_rules! with_engine {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Lanes::Two($s) => $body,
            Lanes::Six($s) => $body,
        }
    };
}

/// Whether an engine of two lanes carries every type of `types`.
fn two_lanes_suffice(types: &ResourceTypes) -> bool {
    types.len() <= 2
}

impl Scheduler {
    /// A scheduler with the given configuration and user groups, and no nodes or apps.
    pub fn new(config: SchedulerConfig, groups: GroupMapping) -> Scheduler {
        let engine = if two_lanes_suffice(&config.properties().resource_types) {
            Lanes::Two(weft_sched_engine2::Scheduler::new(config, groups))
        } else {
            Lanes::Six(weft_sched_engine::Scheduler::new(config, groups))
        };
        Scheduler { engine }
    }

    /// [`Scheduler::new`] with the six-lane engine whatever the registry: what every
    /// scheduler ran before the two-lane build, kept for differential tests and benchmarks
    /// (the two must decide alike).
    pub fn with_six_lanes(config: SchedulerConfig, groups: GroupMapping) -> Scheduler {
        Scheduler {
            engine: Lanes::Six(weft_sched_engine::Scheduler::new(config, groups)),
        }
    }

    /// How many lanes the engine's resource vectors have (2 or 6): which build runs.
    pub fn resource_lanes(&self) -> usize {
        match &self.engine {
            Lanes::Two(_) => 2,
            Lanes::Six(_) => weft_types::MAX_RESOURCE_TYPES,
        }
    }

    /// Chooses the walk (the reference walk exists for differential tests and benchmarks).
    pub fn set_walk_mode(&mut self, mode: WalkMode) {
        with_engine!(&mut self.engine, s => s.set_walk_mode(mode))
    }

    /// The resource types in use.
    pub fn resource_types(&self) -> &ResourceTypes {
        with_engine!(&self.engine, s => s.resource_types())
    }

    /// The current configuration.
    pub fn config(&self) -> &SchedulerConfig {
        with_engine!(&self.engine, s => s.config())
    }

    /// Which scheduler this is.
    pub fn kind(&self) -> weft_config::SchedulerKind {
        with_engine!(&self.engine, s => s.kind())
    }

    /// The full name of the queue an application is in.
    pub fn queue_name(&self, app: AppId) -> Option<&str> {
        with_engine!(&self.engine, s => s.queue_name(app))
    }

    /// How many containers have been allocated since the start.
    pub fn allocation_count(&self) -> u64 {
        with_engine!(&self.engine, s => s.allocation_count())
    }

    /// The next output, if any.
    #[inline]
    pub fn poll_decision(&mut self) -> Option<Decision> {
        with_engine!(&mut self.engine, s => s.poll_decision())
    }

    /// Applies one event at time `now`. An `Err` leaves the state exactly as it was: among
    /// others, a reload registering a resource type the running engine cannot carry (a
    /// two-lane engine and a custom type), and an event with an amount of an unregistered type.
    #[inline]
    pub fn handle(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        if let (Lanes::Two(_), Event::Reload(config)) = (&self.engine, &event) {
            let types = &config.properties().resource_types;
            if !two_lanes_suffice(types) {
                return Err(SchedError::ConfigRefused(format!(
                    "the resource types {:?} add to memory and vcores, which this scheduler was \
                     started with: new resource types take a restart",
                    (2..types.len()).map(|i| types.name(i)).collect::<Vec<_>>()
                )));
            }
        }
        with_engine!(&mut self.engine, s => s.handle(now, event))
    }

    /// When the driver should next send [`Event::Timeout`] (never, while `None`): something
    /// the scheduler set a time for comes due then. Ask again after every event.
    pub fn poll_timeout(&self) -> Option<Time> {
        with_engine!(&self.engine, s => s.poll_timeout())
    }

    /// Sum of node capabilities.
    pub fn cluster_capacity(&self) -> Resource {
        with_engine!(&self.engine, s => s.cluster_capacity())
    }

    /// Sum of allocated containers.
    pub fn cluster_used(&self) -> Resource {
        with_engine!(&self.engine, s => s.cluster_used())
    }

    /// Queues the heartbeat walks have entered so far (root included, every visit counted):
    /// divided by the heartbeats, what one heartbeat costs in tree visits.
    pub fn queues_visited(&self) -> u64 {
        with_engine!(&self.engine, s => s.queues_visited())
    }

    /// Walks from the root the heartbeats have made so far (one per container assigned, plus
    /// the one that finds nothing more): `queues_visited` over it is what one walk costs.
    pub fn walks(&self) -> u64 {
        with_engine!(&self.engine, s => s.walks())
    }

    /// The most queues (root included) one walk of the latest heartbeat entered: bounded by
    /// the queues of the heartbeating node's resource pool (resource-pools spec §14, 31).
    pub fn last_heartbeat_widest_walk(&self) -> u64 {
        with_engine!(&self.engine, s => s.last_heartbeat_widest_walk())
    }

    /// The sizes of the hot structures of this scheduler's engine (at its lane width) and the
    /// walk's visit counters so far: what a heartbeat touches, for benchmarks.
    pub fn footprint(&self) -> Footprint {
        with_engine!(&self.engine, s => s.footprint())
    }

    /// Summed over the heartbeat walks so far: how many top-level queues with something to
    /// schedule each walk could descend to (with resource pools, only its node's pool's).
    pub fn top_level_reachable(&self) -> u64 {
        with_engine!(&self.engine, s => s.top_level_reachable())
    }

    /// Each resource pool's nodes, capacity, usage, pending demand and foreign usage,
    /// DEFAULT first then the allocation file's order; empty without resource pools.
    pub fn pool_stats(&self) -> Vec<PoolStats> {
        with_engine!(&self.engine, s => s.pool_stats())
    }

    /// The resource pool a node is in (`""`: DEFAULT); `None` for an unknown node or without
    /// resource pools.
    pub fn node_pool(&self, node: NodeId) -> Option<&str> {
        with_engine!(&self.engine, s => s.node_pool(node))
    }

    /// The resource pool a queue (full name) is bound to (`""`: none, DEFAULT); `None` for an
    /// unknown queue or without resource pools.
    pub fn queue_pool(&self, queue: &str) -> Option<&str> {
        with_engine!(&self.engine, s => s.queue_pool(queue))
    }

    /// How many running containers are foreign: on a node outside their app's resource
    /// pool (left by a host move, resource-pools spec §10). Counts by walking the nodes.
    pub fn foreign_containers(&self) -> usize {
        with_engine!(&self.engine, s => s.foreign_containers())
    }

    /// Calls `visit` for every leaf queue with its current figures: a cheap alternative to
    /// [`Scheduler::snapshot`] for drivers that sample often (no strings are cloned).
    pub fn visit_leaf_queues(&self, visit: impl FnMut(LeafQueueStats<'_>)) {
        with_engine!(&self.engine, s => s.visit_leaf_queues(visit))
    }

    /// Recomputes demand and fair shares at `now` as [`Event::Update`] does, for a snapshot
    /// that should show them fresh, without what the update does over time (starvation
    /// clocks, preemption): a snapshot must not change what the scheduler decides later.
    pub fn update_shares(&mut self, now: Time) {
        with_engine!(&mut self.engine, s => s.update_shares(now))
    }

    /// A read-only picture of the state (report-only figures are brought up to date first).
    pub fn snapshot(&mut self) -> Snapshot {
        with_engine!(&mut self.engine, s => s.snapshot())
    }

    /// [`Scheduler::snapshot`] with empty `apps` and `nodes`: the queues and the cluster's
    /// totals, for reports that sample often (metrics) at a fraction of the cost.
    pub fn queue_snapshot(&mut self) -> Snapshot {
        with_engine!(&mut self.engine, s => s.queue_snapshot())
    }

    /// The cluster's outstanding asks and node reservations, summed without a snapshot.
    pub fn pending_summary(&self) -> PendingSummary {
        with_engine!(&self.engine, s => s.pending_summary())
    }

    /// Repairs drift: recomputes every figure the scheduler maintains from what it holds
    /// (running containers, requests, app lists) and rebuilds the fast path's order. What it
    /// cannot recompute `verify` keeps reporting.
    pub fn rebuild_derived(&mut self) {
        with_engine!(&mut self.engine, s => s.rebuild_derived())
    }

    /// Whether `user` has `access` to the queue named `queue` (with or without `root.`);
    /// `None` when no such queue exists.
    pub fn queue_access(&self, queue: &str, user: &str, access: QueueAccess) -> Option<bool> {
        with_engine!(&self.engine, s => s.queue_access(queue, user, access))
    }

    /// Each queue's Capacity Scheduler figures (capacities, used capacities, state, users and
    /// limits) in snapshot order; empty for the other kinds.
    pub fn capacity_details(&self) -> Vec<CapacityQueueDetails> {
        with_engine!(&self.engine, s => s.capacity_details())
    }

    /// The node partition an application runs in (`""`: DEFAULT): under the Capacity
    /// Scheduler with node labels, its queue's `default-node-label-expression` when it was
    /// submitted; `None` for an unknown app or without labels.
    pub fn app_partition(&self, app: AppId) -> Option<&str> {
        with_engine!(&self.engine, s => s.app_partition(app))
    }

    /// Every inconsistency between the maintained state and a from-scratch recomputation, in
    /// words. Empty means consistent. Also checks that no node is over its capacity.
    pub fn verify(&self) -> Vec<String> {
        with_engine!(&self.engine, s => s.verify())
    }

    /// [`Scheduler::verify`] in slices, for a driver that must not stall for all of it: the
    /// next checks of `round`, walking about `budget` containers (a count, not a time; the
    /// checks of the whole, which walk none, take a slice of their own), the drift found added
    /// to `round.drift`. True when the round is done. Events may come between two slices;
    /// each slice checks whole entities as they are then, so a round over a consistent
    /// scheduler finds nothing, and drift that lasts through a round is found as
    /// [`Scheduler::verify`] finds it.
    pub fn verify_slice(&self, round: &mut VerifyRound, budget: usize) -> bool {
        with_engine!(&self.engine, s => s.verify_slice(round, budget))
    }

    // Per-application answers for the RM's Allocate reply.

    /// The application's headroom, as Hadoop's scheduler of this kind tells an AM: under Fair,
    /// min(cluster free less the free resources of the nodes its blacklist names, its queue's
    /// max share minus usage), with memory (and vcores under drf) capped by the queue's fair
    /// share minus usage; under FIFO, the cluster's free resources. `None` for an unknown app.
    pub fn headroom(&self, app: AppId) -> Option<Resource> {
        with_engine!(&self.engine, s => s.headroom(app))
    }

    /// The largest container the application may ask for (Hadoop's
    /// `getMaximumResourceCapability(queue)`): under Fair its queue's `maxContainerAllocation`,
    /// own or the nearest ancestor's, capped by the scheduler's maximum allocation; under FIFO
    /// the scheduler's maximum. The RM refuses a larger ask (Hadoop's
    /// InvalidResourceRequestException); the scheduler itself caps asks at it (spec §9.4).
    /// `None` for an unknown app.
    pub fn max_container_allocation(&self, app: AppId) -> Option<Resource> {
        with_engine!(&self.engine, s => s.max_container_allocation(app))
    }

    /// The application's containers marked for preemption and not ended yet, in the order
    /// they were marked: Hadoop's `StrictPreemptionContract` in the AM's Allocate reply
    /// (preemption spec §C). Empty for an unknown app and under schedulers that never preempt.
    pub fn preemption_contract(&self, app: AppId) -> Vec<ContainerId> {
        with_engine!(&self.engine, s => s.preemption_contract(app))
    }

    /// The gangs holding members now (at most one: only the head gang may hold), with how
    /// many they hold and when the hold times out.
    pub fn gang_holds(&self) -> Vec<GangHold> {
        with_engine!(&self.engine, s => s.gang_holds())
    }

    /// Why a gang of `members` containers of `resources` asked by `app` would be refused (the
    /// nodes it may use could not host every member even empty), or `None` when it would be
    /// admitted (or the app is unknown, or the size invalid: [`Event::GangAsk`] says so). A
    /// driver that must answer its caller at once asks this before sending the gang.
    pub fn gang_unpackable(&self, app: AppId, resources: Resource, members: u32) -> Option<String> {
        with_engine!(&self.engine, s => s.gang_unpackable(app, resources, members))
    }

    // Queries of a driver that restarts (the RM).

    /// Submits an application (as [`Event::AppSubmitted`]) and returns where it went: the
    /// queue it was placed in, or why it was rejected. `Err` only when the id is in use.
    pub fn submit(
        &mut self,
        now: Time,
        app: AppId,
        user: String,
        queue: Option<String>,
        am_resource: Option<Resource>,
    ) -> Result<Placement, SchedError> {
        with_engine!(&mut self.engine, s => s.submit(now, app, user, queue, am_resource))
    }

    /// [`Scheduler::submit`] for an application submitted with a reservation (Hadoop's
    /// `ApplicationSubmissionContext.reservationId`): placed in a plan queue, it goes to the
    /// reservation's leaf, and is rejected (`RejectCode::ReservationNotActive`, Hadoop's
    /// message) when the plan follower has no leaf for it; placed anywhere else, the
    /// reservation is ignored, as in Hadoop.
    pub fn submit_with_reservation(
        &mut self,
        now: Time,
        app: AppId,
        user: String,
        queue: Option<String>,
        am_resource: Option<Resource>,
        reservation: &str,
    ) -> Result<Placement, SchedError> {
        with_engine!(&mut self.engine, s => {
            s.submit_with_reservation(now, app, user, queue, am_resource, reservation)
        })
    }

    /// [`Scheduler::submit`] with the submission's node label expression (Hadoop's
    /// `ApplicationSubmissionContext.nodeLabelExpression`, `None` or empty: its queue's
    /// `default-node-label-expression`) and optionally a reservation. Under the Capacity
    /// Scheduler the app runs only in that partition, and is rejected
    /// (`RejectCode::LabelNotAccessible`, Hadoop's texts) when its queue cannot access the
    /// label or the cluster has no such label. The Fair and FIFO schedulers ignore it, as
    /// Hadoop's do (the Fair Scheduler's partitions are its resource pools).
    #[allow(clippy::too_many_arguments)]
    pub fn submit_labeled(
        &mut self,
        now: Time,
        app: AppId,
        user: String,
        queue: Option<String>,
        am_resource: Option<Resource>,
        reservation: Option<&str>,
        label: Option<&str>,
    ) -> Result<Placement, SchedError> {
        with_engine!(&mut self.engine, s => {
            s.submit_labeled(now, app, user, queue, am_resource, reservation, label)
        })
    }

    /// The id the next allocation gets: a driver recovering containers after a restart names
    /// them from here ([`Event::ContainerRecovered`] moves it past each one).
    pub fn next_container_id(&self) -> ContainerId {
        with_engine!(&self.engine, s => s.next_container_id())
    }

    /// Why an accepted application is not yet runnable, in the words the RM shows in its
    /// diagnostics (`None`: it is runnable, unknown, or the rules give no reason).
    pub fn waiting_reason(&self, app: AppId) -> Option<String> {
        with_engine!(&self.engine, s => s.waiting_reason(app))
    }

    /// An application's usage and number of running containers (`None`: the scheduler does
    /// not hold it), so a driver keeps no copy of the scheduler's accounting.
    pub fn app_usage(&self, app: AppId) -> Option<(Resource, usize)> {
        with_engine!(&self.engine, s => s.app_usage(app))
    }

    /// A node's allocated resources (`None`: not in the scheduler).
    pub fn node_allocated(&self, node: NodeId) -> Option<Resource> {
        with_engine!(&self.engine, s => s.node_allocated(node))
    }
}

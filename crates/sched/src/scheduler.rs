//! The public face of the scheduler core: one type whatever the scheduler kind, dispatching
//! each call to the engine of that kind with one `match` (the only dynamic choice: below it,
//! every engine is monomorphised over its rules).

use weft_types::{AppId, Resource, ResourceTypes, Time};

use crate::api::*;
use crate::capacity::partitions::{label_not_in_cluster, uses_labels, Partitioned};
use crate::capacity::Capacity;
use crate::engine::Engine;
use crate::fair::Fair;
use crate::fifo::Fifo;
use crate::lanes::{inward, inward_ask, outward};

/// A scheduler as a deterministic state machine: Hadoop's Fair Scheduler or its FIFO scheduler
/// (the kind its [`SchedulerConfig`] names).
///
/// Driving contract: call [`Scheduler::handle`] with the current time and one event, then drain
/// [`Scheduler::poll_decision`] until it returns `None`. Time only comes in through `handle`;
/// the periodic [`Event::Update`] is the driver's job (every `update_interval_ms`).
pub struct Scheduler {
    kind: Kind,
    /// The configuration in force (the last one a reload was accepted with).
    config: SchedulerConfig,
}

/// One engine per scheduler kind.
// One per process, matched on every call: boxing the largest engine would add a pointer chase
// to every event for a few hundred bytes.
#[allow(clippy::large_enum_variant)]
enum Kind {
    Fair(Engine<Fair>),
    Fifo(Engine<Fifo>),
    Capacity(Engine<Capacity>),
    /// The Capacity Scheduler once the node-label registry has labels: one engine per
    /// partition (`capacity::partitions`).
    CapacityLabeled(Box<Partitioned>),
}

/// Runs `$body` with `$e` bound to the engine, whatever its kind.
macro_rules! with_engine {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Kind::Fair($e) => $body,
            Kind::Fifo($e) => $body,
            Kind::Capacity($e) => $body,
            Kind::CapacityLabeled($e) => $body,
        }
    };
}

impl Scheduler {
    /// A scheduler with the given configuration and user groups, and no nodes or apps.
    pub fn new(config: SchedulerConfig, groups: GroupMapping) -> Scheduler {
        let kind = match config.clone() {
            SchedulerConfig::Fair(c) => Kind::Fair(Engine::new_fair(c, groups)),
            SchedulerConfig::Fifo(c) => Kind::Fifo(Engine::new_fifo(c, groups)),
            SchedulerConfig::Capacity(c) if !uses_labels(&c.capacity) => {
                Kind::Capacity(Engine::new_capacity(c, groups))
            }
            SchedulerConfig::Capacity(c) => {
                let engine = Engine::new_capacity(c.clone(), groups.clone());
                // With no node yet, taking the partitions cannot be refused.
                match Partitioned::new(engine, c, &groups, Time(0)) {
                    Ok(p) => Kind::CapacityLabeled(Box::new(p)),
                    Err((engine, _)) => Kind::Capacity(*engine),
                }
            }
        };
        Scheduler { kind, config }
    }

    /// The first configuration with node labels turns the Capacity engine into one engine per
    /// partition; `Err` leaves it as it was.
    fn take_partitions(
        &mut self,
        now: Time,
        config: &crate::api::CapacitySchedulerConfig,
    ) -> Result<(), SchedError> {
        let placeholder = Kind::Fifo(Engine::new_fifo(FifoConfig::default(), GroupMapping::new()));
        let Kind::Capacity(engine) = std::mem::replace(&mut self.kind, placeholder) else {
            return Err(SchedError::ConfigRefused(
                "node partitions need the Capacity Scheduler".to_string(),
            ));
        };
        let groups = engine.groups.clone();
        match Partitioned::new(engine, config.clone(), &groups, now) {
            Ok(p) => {
                self.kind = Kind::CapacityLabeled(Box::new(p));
                Ok(())
            }
            Err((engine, e)) => {
                self.kind = Kind::Capacity(*engine);
                Err(e)
            }
        }
    }

    /// Chooses the walk (the reference walk exists for differential tests and benchmarks).
    pub fn set_walk_mode(&mut self, mode: WalkMode) {
        with_engine!(&mut self.kind, e => e.set_walk_mode(mode))
    }

    /// The resource types in use.
    pub fn resource_types(&self) -> &ResourceTypes {
        with_engine!(&self.kind, e => &e.properties.resource_types)
    }

    /// The current configuration.
    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// Which scheduler this is.
    pub fn kind(&self) -> weft_config::SchedulerKind {
        self.config.kind()
    }

    /// The full name of the queue an application is in.
    pub fn queue_name(&self, app: AppId) -> Option<&str> {
        with_engine!(&self.kind, e => e.queue_name(app))
    }

    /// How many containers have been allocated since the start.
    pub fn allocation_count(&self) -> u64 {
        with_engine!(&self.kind, e => e.allocation_count())
    }

    /// The next output, if any.
    pub fn poll_decision(&mut self) -> Option<Decision> {
        with_engine!(&mut self.kind, e => e.decisions.pop_front())
    }

    /// Applies one event at time `now`. An `Err` leaves the state exactly as it was.
    pub fn handle(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        let reloaded = match &event {
            Event::Reload(config) => Some(SchedulerConfig::clone(config)),
            _ => None,
        };
        if let (Kind::Capacity(_), Some(SchedulerConfig::Capacity(c))) = (&self.kind, &reloaded) {
            if uses_labels(&c.capacity) {
                self.take_partitions(now, c)?;
                self.config = SchedulerConfig::Capacity(c.clone());
                return Ok(());
            }
        }
        with_engine!(&mut self.kind, e => e.handle(now, event))?;
        if let Some(config) = reloaded {
            self.config = config;
        }
        Ok(())
    }

    /// When the driver should next send [`Event::Timeout`] (never, while `None`): something
    /// the scheduler set a time for comes due then. Ask again after every event.
    pub fn poll_timeout(&self) -> Option<Time> {
        with_engine!(&self.kind, e => e.poll_timeout())
    }

    /// Sum of node capabilities.
    pub fn cluster_capacity(&self) -> Resource {
        outward(with_engine!(&self.kind, e => e.cluster_capacity()))
    }

    /// Sum of allocated containers.
    pub fn cluster_used(&self) -> Resource {
        outward(with_engine!(&self.kind, e => e.cluster_used_now()))
    }

    /// Queues the heartbeat walks have entered so far (root included, every visit counted):
    /// divided by the heartbeats, what one heartbeat costs in tree visits.
    pub fn queues_visited(&self) -> u64 {
        with_engine!(&self.kind, e => e.queues_visited_total())
    }

    /// Walks from the root the heartbeats have made so far (one per container assigned, plus
    /// the one that finds nothing more): `queues_visited` over it is what one walk costs.
    pub fn walks(&self) -> u64 {
        with_engine!(&self.kind, e => e.walks_total())
    }

    /// The most queues (root included) one walk of the latest heartbeat entered: bounded by
    /// the queues of the heartbeating node's resource pool (resource-pools spec §14, 31).
    pub fn last_heartbeat_widest_walk(&self) -> u64 {
        with_engine!(&self.kind, e => e.widest_walk_of_last_heartbeat())
    }

    /// The sizes of the hot structures of this scheduler's engine and the walk's visit
    /// counters so far: what a heartbeat touches, for benchmarks.
    pub fn footprint(&self) -> Footprint {
        with_engine!(&self.kind, e => e.footprint())
    }

    /// Summed over the heartbeat walks so far: how many top-level queues with something to
    /// schedule each walk could descend to (with resource pools, only its node's pool's).
    pub fn top_level_reachable(&self) -> u64 {
        with_engine!(&self.kind, e => e.top_level_reachable_total())
    }

    /// Each resource pool's nodes, capacity, usage, pending demand and foreign usage,
    /// DEFAULT first then the allocation file's order; empty without resource pools.
    pub fn pool_stats(&self) -> Vec<PoolStats> {
        with_engine!(&self.kind, e => e.pool_stats())
    }

    /// The resource pool a node is in (`""`: DEFAULT); `None` for an unknown node or without
    /// resource pools.
    pub fn node_pool(&self, node: weft_types::NodeId) -> Option<&str> {
        with_engine!(&self.kind, e => e.node_pool_name(node))
    }

    /// The resource pool a queue (full name) is bound to (`""`: none, DEFAULT); `None` for an
    /// unknown queue or without resource pools.
    pub fn queue_pool(&self, queue: &str) -> Option<&str> {
        with_engine!(&self.kind, e => e.queue_pool_name(queue))
    }

    /// How many running containers are foreign: on a node outside their app's resource
    /// pool (left by a host move, resource-pools spec §10). Counts by walking the nodes.
    pub fn foreign_containers(&self) -> usize {
        with_engine!(&self.kind, e => e.foreign_containers())
    }

    /// Calls `visit` for every leaf queue with its current figures: a cheap alternative to
    /// [`Scheduler::snapshot`] for drivers that sample often (no strings are cloned).
    pub fn visit_leaf_queues(&self, visit: impl FnMut(LeafQueueStats<'_>)) {
        with_engine!(&self.kind, e => e.visit_leaf_queues(visit))
    }

    /// Recomputes demand and fair shares at `now` as [`Event::Update`] does, for a snapshot
    /// that should show them fresh, without what the update does over time (starvation
    /// clocks, preemption): a snapshot must not change what the scheduler decides later.
    pub fn update_shares(&mut self, now: Time) {
        with_engine!(&mut self.kind, e => e.update_shares(now))
    }

    /// A read-only picture of the state (report-only figures are brought up to date first).
    pub fn snapshot(&mut self) -> Snapshot {
        with_engine!(&mut self.kind, e => e.snapshot())
    }

    /// [`Scheduler::snapshot`] with empty `apps` and `nodes`: the queues and the cluster's
    /// totals, for reports that sample often (metrics) at a fraction of the cost.
    pub fn queue_snapshot(&mut self) -> Snapshot {
        with_engine!(&mut self.kind, e => e.queue_snapshot())
    }

    /// The cluster's outstanding asks and node reservations, summed without a snapshot.
    pub fn pending_summary(&self) -> PendingSummary {
        with_engine!(&self.kind, e => e.pending_summary())
    }

    /// Repairs drift: recomputes every figure the scheduler maintains from what it holds
    /// (running containers, requests, app lists) and rebuilds the fast path's order. What it
    /// cannot recompute `verify` keeps reporting.
    pub fn rebuild_derived(&mut self) {
        with_engine!(&mut self.kind, e => e.rebuild_derived())
    }

    /// Whether `user` has `access` to the queue named `queue` (with or without `root.`);
    /// `None` when no such queue exists.
    pub fn queue_access(&self, queue: &str, user: &str, access: QueueAccess) -> Option<bool> {
        match &self.kind {
            Kind::Fair(e) => e.queue_access(queue, user, access),
            Kind::Fifo(e) => e.queue_access(queue),
            Kind::Capacity(e) => e.cs_queue_access(queue, user, access),
            Kind::CapacityLabeled(e) => e.cs_queue_access(queue, user, access),
        }
    }

    /// Each queue's Capacity Scheduler figures (capacities, used capacities, state, users and
    /// limits) in snapshot order; empty for the other kinds.
    pub fn capacity_details(&self) -> Vec<CapacityQueueDetails> {
        match &self.kind {
            Kind::Capacity(e) => e.capacity_details(),
            Kind::CapacityLabeled(e) => e.capacity_details(),
            Kind::Fair(_) | Kind::Fifo(_) => Vec::new(),
        }
    }

    /// The node partition an application runs in (`""`: DEFAULT): under the Capacity
    /// Scheduler with node labels, its queue's `default-node-label-expression` when it was
    /// submitted; `None` for an unknown app or without labels.
    pub fn app_partition(&self, app: AppId) -> Option<&str> {
        match &self.kind {
            Kind::CapacityLabeled(e) => e.app_partition_name(app),
            _ => None,
        }
    }

    /// Every inconsistency between the maintained state and a from-scratch recomputation, in
    /// words. Empty means consistent. Also checks that no node is over its capacity.
    pub fn verify(&self) -> Vec<String> {
        with_engine!(&self.kind, e => e.verify())
    }

    /// [`Scheduler::verify`] in slices, for a driver that must not stall for all of it: the
    /// next checks of `round`, walking about `budget` containers (a count, not a time; the
    /// checks of the whole, which walk none, take a slice of their own), the drift found added
    /// to `round.drift`. True when the round is done. Events may come between two slices;
    /// each slice checks whole entities as they are then, so a round over a consistent
    /// scheduler finds nothing, and drift that lasts through a round is found as
    /// [`Scheduler::verify`] finds it. An entity added behind the round's cursor waits for the
    /// next round.
    pub fn verify_slice(&self, round: &mut VerifyRound, budget: usize) -> bool {
        let VerifyRound { drift, cursor } = round;
        with_engine!(&self.kind, e => e.verify_slice(cursor, budget, drift))
    }

    // Per-application answers for the RM's Allocate reply.

    /// The application's headroom, as Hadoop's scheduler of this kind tells an AM: under Fair,
    /// min(cluster free less the free resources of the nodes its blacklist names, its queue's
    /// max share minus usage), with memory (and vcores under drf) capped by the queue's fair
    /// share minus usage; under FIFO, the cluster's free resources. `None` for an unknown app.
    pub fn headroom(&self, app: AppId) -> Option<Resource> {
        with_engine!(&self.kind, e => e.app_headroom(app)).map(outward)
    }

    /// The largest container the application may ask for (Hadoop's
    /// `getMaximumResourceCapability(queue)`): under Fair its queue's `maxContainerAllocation`,
    /// own or the nearest ancestor's, capped by the scheduler's maximum allocation; under FIFO
    /// the scheduler's maximum. The RM refuses a larger ask (Hadoop's
    /// InvalidResourceRequestException); the scheduler itself caps asks at it (spec §9.4).
    /// `None` for an unknown app.
    pub fn max_container_allocation(&self, app: AppId) -> Option<Resource> {
        with_engine!(&self.kind, e => e.app_max_container_allocation(app)).map(outward)
    }

    /// The application's containers marked for preemption and not ended yet, in the order
    /// they were marked: Hadoop's `StrictPreemptionContract` in the AM's Allocate reply
    /// (preemption spec §C). Empty for an unknown app and under schedulers that never preempt.
    pub fn preemption_contract(&self, app: AppId) -> Vec<weft_types::ContainerId> {
        with_engine!(&self.kind, e => e.app_preemption_contract(app))
    }

    /// The gangs holding members now (at most one: only the head gang may hold), with how
    /// many they hold and when the hold times out.
    pub fn gang_holds(&self) -> Vec<GangHold> {
        with_engine!(&self.kind, e => e.gang_holds())
    }

    /// Why a gang of `members` containers of `resources` asked by `app` would be refused (the
    /// nodes it may use could not host every member even empty), or `None` when it would be
    /// admitted (or the app is unknown, or the size invalid: [`Event::GangAsk`] says so). A
    /// driver that must answer its caller at once asks this before sending the gang.
    pub fn gang_unpackable(&self, app: AppId, resources: Resource, members: u32) -> Option<String> {
        let resources = match inward(resources) {
            Ok(r) => r,
            Err(why) => return Some(why),
        };
        with_engine!(&self.kind, e => e.gang_unpackable(app, resources, members))
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
        self.submit_labeled(now, app, user, queue, am_resource, None, None)
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
        self.submit_labeled(now, app, user, queue, am_resource, Some(reservation), None)
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
        let label = label.map(str::trim).filter(|l| !l.is_empty());
        let am_resource = inward_ask(app, am_resource)?;
        match &mut self.kind {
            Kind::CapacityLabeled(p) => {
                p.submit_now(now, app, user, queue, am_resource, reservation, label)
            }
            Kind::Capacity(e) if label.is_some() => {
                // No labels at all: the cluster cannot have this one.
                let reason = label_not_in_cluster(label.unwrap_or_default());
                if e.apps.contains_key(&app) {
                    return Err(SchedError::Duplicate(format!("application {app}")));
                }
                let code = RejectCode::LabelNotAccessible;
                e.decisions.push_back(Decision::Rejected {
                    app,
                    reason: reason.clone(),
                    code,
                });
                Ok(Placement::Rejected { reason, code })
            }
            Kind::Capacity(e) => e.submit_now(now, app, user, queue, am_resource, reservation),
            Kind::Fair(e) => e.submit_now(now, app, user, queue, am_resource, reservation),
            Kind::Fifo(e) => e.submit_now(now, app, user, queue, am_resource, reservation),
        }
    }

    /// The id the next allocation gets: a driver recovering containers after a restart names
    /// them from here ([`Event::ContainerRecovered`] moves it past each one).
    pub fn next_container_id(&self) -> weft_types::ContainerId {
        with_engine!(&self.kind, e => e.next_container_id())
    }

    /// Why an accepted application is not yet runnable, in the words the RM shows in its
    /// diagnostics (`None`: it is runnable, unknown, or the rules give no reason).
    pub fn waiting_reason(&self, app: AppId) -> Option<String> {
        with_engine!(&self.kind, e => e.waiting_reason(app))
    }

    /// An application's usage and number of running containers (`None`: the scheduler does
    /// not hold it), so a driver keeps no copy of the scheduler's accounting.
    pub fn app_usage(&self, app: AppId) -> Option<(Resource, usize)> {
        with_engine!(&self.kind, e => e.app_usage(app)).map(|(r, n)| (outward(r), n))
    }

    /// A node's allocated resources (`None`: not in the scheduler).
    pub fn node_allocated(&self, node: weft_types::NodeId) -> Option<Resource> {
        with_engine!(&self.kind, e => e.node_allocated(node)).map(outward)
    }
}

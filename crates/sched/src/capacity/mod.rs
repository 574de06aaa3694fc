//! Hadoop's Capacity Scheduler (capacity spec §1-§7) as rules over the shared objects.
//!
//! Queues come from a parsed capacity-scheduler.xml (`weft_config::capacity`): each keeps its
//! configured capacities and the values derived from them and the cluster (`setup`). A node
//! heartbeat walks the shared candidate sets: siblings ordered by utilization (used over
//! guaranteed, spec §6.3; `priority-utilization` where configured), apps in a leaf by `fifo`
//! (application priority, then id) or `fair` (least memory used), and Capacity's own app step
//! (`assign`): the leaf's limit handed down the path, user limits, headroom, delay scheduling
//! by missed opportunities, allocation, reservation and continue looking. Apps wait (pending,
//! the shared non-runnable list) until the AM limits let them in (`admission`). The limits are
//! computed when asked (`limits`); the fast walk reads each leaf's users from figures kept as
//! usage changes and its user limit from a cache dropped when they change (`user_cache`,
//! Hadoop's `UsersManager`). In percentage and weight modes a node change only marks the
//! effective resources stale (the cluster times the fractions, computed when read until the
//! next heartbeat keeps them again, `setup`).
//!
//! Every comparison and rounding goes through the configured resource calculator (`calc`).
//!
//! The spec's open points (§13), decided here:
//! * 2: the per-heartbeat keys are read from the configuration in force; a refresh (`refresh`)
//!   changes them like any other key.
//! * 3: `node-locality-delay = -1` removes only the rack-level wait; the off-switch wait keeps
//!   its rule (Hadoop's code, not its documentation) — `assign.rs`.
//! * 6: a user's weight scales the user limit normalized *down* to the minimum allocation
//!   (Hadoop's code) — `limits.rs`.
//! * 7: no `yarn.admin.acl` short-cut in the core: submission needs the submit or administer
//!   ACL of the leaf or an ancestor, kill the owner or the administer ACL; admins are the
//!   daemons' concern.
//! * 10: siblings tied on use compare absolute capacities in every mode — `order.rs`.
//! * 11: each walk reads the queues' values as they are (one thread, so the same as Hadoop's
//!   snapshot before sorting).

mod admission;
mod assign;
mod auto_create;
mod calc;
mod limits;
mod mapping;
mod moves;
mod order;
mod parallel;
pub(crate) mod partitions;
mod plan_queues;
mod preempt;
mod refresh;
mod report;
mod setup;
mod user_cache;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::lanes::truncate;
use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_config::capacity::CapacityConfig;
use weft_types::{AppId, Locality, NodeId, Time, MEMORY};

use crate::api::{RejectCode, SchedError, SchedulerConfig};
use crate::engine::Engine;
use crate::order::key::SortKey;
use crate::queues::QueueId;
use crate::rules::{AppOf, QueueOf, QueueReport, Rules};
use crate::walk::Assignment;

pub(crate) use calc::Calc;

/// The Capacity Scheduler's engine.
pub(crate) type CapacityEngine = Engine<Capacity>;

/// The Capacity Scheduler's own state.
pub(crate) struct Capacity {
    /// The configuration in force.
    file: CapacityConfig,
    /// The configured resource calculator.
    calc: Calc,
    /// Off-switch containers assigned on the current heartbeat.
    offswitch_assigned: i32,
    /// `yarn.cluster.max-application-priority`.
    max_priority: i32,
    /// Per parent, the headroom its children blocked by their headroom keep from their later
    /// siblings during the current walk (spec §6.2 step 5); emptied when a walk assigns and
    /// when a heartbeat starts or ends.
    blocked_headroom: BTreeMap<QueueId, Resource>,
    /// Each leaf's users and user limit, kept as usage changes (`user_cache`).
    users: user_cache::KeptUsers,
    /// Every capacity and maximum capacity is a fraction (percentage or weight mode): the
    /// effective resources are the cluster times the absolute fractions, so a node change
    /// only marks them stale (`setup::cluster_resized`).
    scaled: bool,
    /// The queues' kept effective resources (`CsCold::eff_min`, `CsHot::eff_max`,
    /// `CsHot::guaranteed`) predate a node change: read through computation until the next
    /// heartbeat brings them up to date (`setup::refresh_scaled`), so a burst of node joins
    /// derives every queue once, not once per node.
    derived_stale: bool,
    /// The leaves with pending apps (activation after a node change visits only these).
    pending_leaves: std::collections::BTreeSet<QueueId>,
    /// The capacity preemption policy (`preempt`).
    preempt: Box<preempt::PreemptState>,
    /// Runnable (not held) apps per queue subtree and per user (`parallel`; boxed to keep the
    /// engine kinds near one size).
    parallel: Box<parallel::ParallelCounts>,
}

/// What a Capacity timer carries.
#[derive(Clone, Debug)]
pub(crate) enum CapacityTimer {
    /// The capacity preemption policy's next round (`preempt`).
    PreemptionRound,
}

/// A queue's state (configuration says RUNNING or STOPPED; DRAINING is a stopping queue that
/// still has apps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum CsState {
    #[default]
    Running,
    Draining,
    Stopped,
}

impl CsState {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CsState::Running => "RUNNING",
            CsState::Draining => "DRAINING",
            CsState::Stopped => "STOPPED",
        }
    }
}

/// What the order reads of a queue on every re-key.
#[derive(Clone, Debug, Default)]
pub(crate) struct CsHot {
    /// `max_rc(effMin, minAlloc)`: what usage is divided by (spec §5.4).
    pub(crate) guaranteed: Resource,
    /// `effMax` (spec §5.1, §5.3): every walk reads it along the path.
    pub(crate) eff_max: Resource,
    pub(crate) abs_capacity: f64,
    /// `priority` (used by a `priority-utilization` parent).
    pub(crate) priority: i32,
    /// Position in the configuration: siblings' final tie-break.
    pub(crate) config_rank: u64,
    /// Rank among all queues by absolute capacity descending, then `config_rank`: the
    /// `utilization` key's tie-break after the used value (kept by `setup::rank_ties`).
    pub(crate) tie_rank: u64,
    /// The queue's children are ordered by `priority-utilization`.
    pub(crate) children_by_priority: bool,
    /// A leaf ordering its apps `fair` (else `fifo`).
    pub(crate) fair_leaf: bool,
    /// `fair.enable-size-based-weight`.
    pub(crate) size_based: bool,
    /// Reserved containers of the subtree's apps: Capacity counts them in a queue's used
    /// resources (spec §1.4), kept by `Rules::reservation_changed`.
    pub(crate) reserved: Resource,
}

/// The limits a leaf has (spec §3.6, §3.7, §5.5).
#[derive(Clone, Debug, Default)]
pub(crate) struct LeafLimits {
    pub(crate) minimum_user_limit_percent: f64,
    pub(crate) user_limit_factor: f64,
    /// `maximum-am-resource-percent`, a fraction.
    pub(crate) am_percent: f64,
    pub(crate) max_applications: i64,
    pub(crate) max_applications_per_user: i64,
    pub(crate) user_weights: BTreeMap<String, f64>,
    pub(crate) default_priority: i32,
}

impl LeafLimits {
    /// `min(maxApps, trunc(maxApps × MULP / 100 × ULF))`; ULF -1: maxApps (spec §5.5).
    fn per_user_cap(&self) -> i64 {
        if self.user_limit_factor == -1.0 {
            return self.max_applications;
        }
        let per_user = (self.max_applications as f64 * self.minimum_user_limit_percent / 100.0
            * self.user_limit_factor) as i64;
        self.max_applications.min(per_user)
    }
}

/// What admission, activation and reports read of a queue.
#[derive(Clone, Debug, Default)]
pub(crate) struct CsCold {
    /// Index in the configuration's queue list.
    pub(crate) index: usize,
    pub(crate) capacity: f64,
    pub(crate) max_capacity: f64,
    pub(crate) abs_capacity: f64,
    pub(crate) abs_max_capacity: f64,
    /// `effMin` (spec §5.1, §5.3).
    pub(crate) eff_min: Resource,
    pub(crate) state: CsState,
    /// Leaves only.
    pub(crate) leaf: Option<LeafLimits>,
}

/// Per app: its application priority (higher is more important).
#[derive(Clone, Debug, Default)]
pub(crate) struct CsApp {
    pub(crate) priority: i32,
    /// Whether its leaf's kept users count it as an app with outstanding asks (`user_cache`).
    pub(crate) counted_asking: bool,
    /// Held back by `max-parallel-apps` (`parallel`): pending, and skipped by activation.
    pub(crate) held: bool,
}

impl Rules for Capacity {
    type App = CsApp;
    type QueueHot = CsHot;
    type QueueCold = CsCold;
    type Timer = CapacityTimer;

    fn new_app() -> CsApp {
        CsApp::default()
    }

    fn place(
        e: &mut CapacityEngine,
        app: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)> {
        e.cs_auto_create(app, user, requested)?;
        e.cs_place(app, user, requested)
    }

    fn admit(e: &mut CapacityEngine, app: AppId) {
        e.cs_admit(app);
    }

    fn leave(e: &mut CapacityEngine, app: AppId) {
        e.cs_leave(app);
    }

    fn move_app(e: &mut CapacityEngine, app: AppId, target: &str) -> Result<(), SchedError> {
        e.cs_move(app, target)
    }

    #[inline]
    fn is_candidate(_: &CapacityEngine, app: &AppOf<Capacity>) -> bool {
        app.runnable && app.has_outstanding_asks()
    }

    fn app_key(e: &CapacityEngine, app: &AppOf<Capacity>) -> SortKey {
        e.cs_app_key(app)
    }

    fn queue_key(e: &CapacityEngine, parent: QueueId, q: &QueueOf<Capacity>) -> SortKey {
        e.cs_queue_key(parent, q)
    }

    fn compare_apps(
        e: &CapacityEngine,
        leaf: QueueId,
        a: &AppOf<Capacity>,
        b: &AppOf<Capacity>,
    ) -> Ordering {
        e.cs_compare_apps(leaf, a, b)
    }

    fn compare_queues(
        e: &CapacityEngine,
        parent: QueueId,
        a: (&QueueOf<Capacity>, Resource),
        b: (&QueueOf<Capacity>, Resource),
    ) -> Ordering {
        e.cs_compare_queues(parent, a, b)
    }

    /// Every candidate could reserve, so the reserve-only walk (taken when no pending ask fits
    /// the node) visits exactly the apps the full walk would, counting the same missed
    /// opportunities.
    fn starved_for_reservation(_: &CapacityEngine, _: &AppOf<Capacity>) -> bool {
        true
    }

    fn has_reservable_ask(_: &CapacityEngine, app: &AppOf<Capacity>) -> bool {
        app.has_outstanding_asks()
    }

    /// Capacity's delay scheduling lives in its own app step (`assign`); the shared
    /// count-based delay stays off.
    fn locality_delay(_: &CapacityEngine) -> Option<(f64, f64)> {
        None
    }

    /// AM limits act at activation (spec §7.3): an activated app may start its AM.
    fn may_start_am(_: &CapacityEngine, _: QueueId, _: Resource) -> bool {
        true
    }

    /// Only the shared walk's retry of an existing reservation asks: it stays reserved.
    fn may_reserve(_: &CapacityEngine, _: AppId, _: Resource, _: NodeId, _: Locality) -> bool {
        true
    }

    /// Spec §6.1 `canAllocateMore`.
    fn keep_assigning(e: &CapacityEngine, _: Resource, count: i32, _: Resource) -> bool {
        let g = &e.rules.file.globals;
        g.multiple_assignments_enabled
            && (g.maximum_container_assignments == -1 || count < g.maximum_container_assignments)
            && e.rules.offswitch_assigned < g.maximum_offswitch_assignments.max(1)
    }

    /// Spec §6.1 step 2: a node without room for one minimum container is not walked (Hadoop
    /// returns before looking at any queue); the app step makes the same check, so this only
    /// saves a walk that would visit every candidate for nothing.
    #[inline]
    fn node_may_take(e: &CapacityEngine, node: NodeId) -> bool {
        e.nodes.get(&node).is_some_and(|n| {
            e.rules
                .calc
                .available_containers(&n.unallocated(), &e.properties.minimum_allocation)
                > 0
        })
    }

    /// Under the Default calculator only memory must fit (vcores may be over-committed, as
    /// Hadoop's); the Dominant calculator's all-type check is made by the app step itself.
    #[inline]
    fn fits_node(size: &[i64; MAX_RESOURCE_TYPES], free: &Resource) -> bool {
        size[MEMORY] <= free.get(MEMORY)
    }

    fn serve_app(e: &mut CapacityEngine, app: AppId, node: NodeId) -> Assignment {
        e.cs_serve(app, node)
    }

    /// Spec §7.6: lowered to `yarn.cluster.max-application-priority`; the app is re-keyed in its
    /// leaf (pending apps meet it at the next activation).
    fn priority_changed(e: &mut CapacityEngine, app: AppId, priority: i32) {
        let max = e.rules.max_priority;
        if let Some(a) = e.apps.get_mut(&app) {
            a.rules.priority = priority.min(max);
        }
        e.refresh_app(app);
    }

    /// Recomputes each queue's reserved resources from the nodes' reservations, and each
    /// leaf's kept users.
    fn rebuild_derived(e: &mut CapacityEngine) {
        e.rebuild_kept_users();
        e.rebuild_parallel();
        let ids: Vec<QueueId> = e.queues.ids().collect();
        for q in ids {
            let reserved = e.recursive_reserved(q);
            e.queues.get_mut(q).rules.reserved = reserved;
        }
    }

    /// Spec §1.4: a reservation counts in its queues' used resources like an allocation; the
    /// path is re-keyed as for a usage change.
    fn reservation_changed(e: &mut CapacityEngine, app: AppId, size: Resource, added: bool) {
        let Some(leaf) = e.apps.get(&app).map(|a| a.queue) else {
            return;
        };
        e.keep_reservation(app, size, added);
        let path: Vec<QueueId> = e.queues.path_to_root(leaf).collect();
        for q in path {
            let hot = &mut e.queues.get_mut(q).rules;
            hot.reserved = if added {
                hot.reserved.saturating_add(size)
            } else {
                hot.reserved.saturating_sub(size)
            };
        }
        e.refresh_queue_path(leaf);
    }

    /// A leaf's kept users follow its apps' usage (`user_cache`).
    #[inline]
    fn usage_charged(
        e: &mut CapacityEngine,
        app_slot: u32,
        amount: Resource,
        add: bool,
        asks: bool,
    ) {
        e.keep_usage(app_slot, amount, add, asks);
    }

    /// A leaf's kept users follow whether its apps have outstanding asks.
    #[inline]
    fn asks_changed(e: &mut CapacityEngine, app: AppId) {
        e.keep_asks(app);
    }

    /// A heartbeat starts its walks with no off-switch container and no blocked headroom, and
    /// asks to be told when it ends.
    #[inline]
    fn heartbeat_starts(e: &mut CapacityEngine, _: NodeId) -> Option<usize> {
        e.rules.offswitch_assigned = 0;
        if !e.rules.blocked_headroom.is_empty() {
            e.rules.blocked_headroom.clear();
        }
        e.refresh_scaled();
        Some(e.decisions.len())
    }

    /// Blocked headroom lives only within a walk: reports and activation between heartbeats
    /// see the limits without it.
    fn heartbeat_assigned(e: &mut CapacityEngine, _: NodeId, _: usize) {
        if !e.rules.blocked_headroom.is_empty() {
            e.rules.blocked_headroom.clear();
        }
    }

    fn max_container_allocation(e: &CapacityEngine, queue: QueueId) -> Resource {
        let index = e.queues.get(queue).rules_cold.index;
        e.rules
            .file
            .queues
            .get(index)
            .and_then(|q| q.maximum_allocation)
            .map_or(e.properties.maximum_allocation, |m| {
                truncate(m).cw_min(e.properties.maximum_allocation)
            })
    }

    fn update(e: &mut CapacityEngine, now: Time) {
        // Demand is only reported: usage plus outstanding asks, per app and up the tree. Per
        // leaf by queue id (ids are table slots: a vector, summed in id order).
        let mut by_leaf: Vec<Option<Resource>> = vec![None; e.queues.id_bound()];
        for slot in 0..e.apps.slot_bound() {
            if let Some(a) = e.apps.at_mut(slot) {
                a.demand = a.compute_demand();
                if let Some(d) = by_leaf.get_mut(a.queue.0 as usize) {
                    *d = Some(d.unwrap_or(Resource::ZERO).saturating_add(a.demand));
                }
            }
        }
        for q in e.queues.iter_mut() {
            q.demand = Resource::ZERO;
        }
        for (leaf, demand) in by_leaf.into_iter().enumerate() {
            let Some(demand) = demand else {
                continue;
            };
            let mut next = u32::try_from(leaf).ok().map(QueueId);
            while let Some(q) = next {
                let queue = e.queues.get_mut(q);
                queue.demand = queue.demand.saturating_add(demand);
                next = queue.parent;
            }
        }
        e.refresh_root_available();
        e.arm_preemption(now);
    }

    fn timer_due(e: &mut CapacityEngine, timer: CapacityTimer, _: Time, now: Time) {
        match timer {
            CapacityTimer::PreemptionRound => e.preemption_timer(now),
        }
    }

    /// A preempted (or any ended) container's mark goes with it.
    fn container_ended(e: &mut CapacityEngine, c: &crate::objects::node::Container) {
        e.preemption_container_ended(c);
    }

    /// The containers the policy warned about (the AM's strict contract).
    fn preemption_contract(e: &CapacityEngine, app: AppId) -> Vec<weft_types::ContainerId> {
        e.marked_of_app(app).to_vec()
    }

    fn reload(e: &mut CapacityEngine, config: SchedulerConfig, _: Time) -> Result<(), SchedError> {
        match config {
            SchedulerConfig::Capacity(config) => {
                let monitor = config.properties.capacity_preemption_monitor();
                e.cs_refresh(config)?;
                e.rules.preempt.monitor = monitor;
                Ok(())
            }
            other => {
                Err(SchedError::ConfigRefused(format!(
                    "the Capacity Scheduler cannot take a {} scheduler's configuration; changing the scheduler needs a restart",
                    other.kind().short_name()
                )))
            }
        }
    }

    fn plan_leaf(e: &mut CapacityEngine, name: &str) -> Result<QueueId, String> {
        e.cs_plan_leaf(name)
    }

    fn plan_resources(e: &mut CapacityEngine, plan: QueueId) -> Resource {
        e.cs_plan_resources(plan)
    }

    fn set_entitlement(
        e: &mut CapacityEngine,
        leaf: QueueId,
        capacity: f64,
        max: f64,
        _resources: Resource,
        _reserved: Option<Resource>,
    ) {
        e.cs_set_entitlement(leaf, capacity, max);
    }

    fn cluster_changed(e: &mut CapacityEngine) {
        e.rules.users.limits_moved();
        e.cluster_resized();
        e.activate_all();
    }

    fn refresh_reports(_: &mut CapacityEngine) {}

    fn app_fair_share(_: &AppOf<Capacity>) -> Resource {
        Resource::ZERO
    }

    fn app_starvation(
        _: &CapacityEngine,
        _: &AppOf<Capacity>,
    ) -> Option<crate::api::AppStarvation> {
        None
    }

    /// Spec §5.7.
    fn headroom(e: &CapacityEngine, app: &AppOf<Capacity>) -> Resource {
        e.cs_headroom(app.queue, &app.user)
    }

    fn queue_report(e: &CapacityEngine, q: &QueueOf<Capacity>) -> QueueReport {
        let policy = if q.is_leaf {
            if q.rules.fair_leaf {
                "fair"
            } else {
                "fifo"
            }
        } else if q.rules.children_by_priority {
            "priority-utilization"
        } else {
            "utilization"
        };
        QueueReport {
            policy,
            weight: 1.0,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            min_share: e.eff_min_of(q),
            starvation: None,
            preempted_containers: e.preempted_from(&q.name),
        }
    }

    fn waiting_reason(e: &CapacityEngine, app: &AppOf<Capacity>) -> Option<String> {
        e.waiting_reason_of(app)
    }

    fn app_usage_basis(report: &QueueReport) -> Resource {
        report.min_share
    }

    fn verify(e: &CapacityEngine, drift: &mut Vec<String>) {
        e.verify_kept_users(drift);
        e.verify_marks(drift);
        e.verify_parallel(drift);
        e.verify_derived(drift);
        let pending: std::collections::BTreeSet<QueueId> = e
            .queues
            .ids()
            .filter(|q| !e.queues.get(*q).non_runnable_apps.is_empty())
            .collect();
        if pending != e.rules.pending_leaves {
            drift.push(format!(
                "leaves with pending apps: kept {:?}, recomputed {pending:?}",
                e.rules.pending_leaves
            ));
        }
        for q in e.queues.ids() {
            let queue = e.queues.get(q);
            let reserved = e.recursive_reserved(q);
            if !crate::objects::app::same_resource(&reserved, &queue.rules.reserved) {
                drift.push(format!(
                    "queue {} counts {:?} reserved, its apps' reservations sum to {reserved:?}",
                    queue.name, queue.rules.reserved
                ));
            }
            // A leaf's AM usage is the AMs running of its active apps (moves and activation
            // carry it).
            if queue.is_leaf {
                let am: Resource = queue
                    .runnable_apps
                    .iter()
                    .filter_map(|id| e.apps.get(id))
                    .filter_map(|a| a.am_resource.filter(|_| a.am_running))
                    .fold(Resource::ZERO, Resource::saturating_add);
                if !crate::objects::app::same_resource(&am, &queue.am_usage) {
                    drift.push(format!(
                        "leaf {} counts {:?} of AM usage, its active apps' AMs sum to {am:?}",
                        queue.name, queue.am_usage
                    ));
                }
            }
            for id in &queue.runnable_apps {
                if e.apps.get(id).is_some_and(|a| !a.runnable) {
                    drift.push(format!(
                        "app {id} is on {}'s active list but not runnable",
                        queue.name
                    ));
                }
            }
            for id in &queue.non_runnable_apps {
                if e.apps.get(id).is_some_and(|a| a.runnable) {
                    drift.push(format!(
                        "app {id} is pending in {} but runnable",
                        queue.name
                    ));
                }
            }
        }
    }
}

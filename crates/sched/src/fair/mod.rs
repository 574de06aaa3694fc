//! Hadoop's Fair Scheduler as rules over the shared objects: policies and their keys, fair
//! shares, the periodic update, maxRunningApps, moves, placement, the AM share, the
//! reservation gate and threshold.

mod headroom;
mod limits;
mod moves;
pub(crate) mod placement;
mod plan_queues;
pub(crate) mod policy;
mod pool_reload;
pub(crate) mod preemption;
mod queues;
#[cfg(all(test, not(weft_two_lanes)))]
mod rebuild_tests;
mod runnable;
pub(crate) mod shares;
pub(crate) mod starvation;
mod update;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::lanes::Resource;
use weft_config::PolicyKind;
use weft_types::{AppId, Locality, NodeId, Time};

use crate::api::{FairConfig, GroupMapping, RejectCode, SchedError, SchedulerConfig};
use crate::engine::Engine;
use crate::lanes::ClusterProperties;
use crate::order::key::SortKey;
use crate::queues::QueueId;
use crate::rules::{AppOf, QueueOf, QueueReport, Rules};
use policy::{PolicyContext, SchedView};
pub(crate) use queues::{FairQueue, FairQueueCold};
use runnable::UserState;

/// The Fair Scheduler's engine.
pub(crate) type FairEngine = Engine<Fair>;

/// What a Fair timer carries.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FairTimer {
    /// Targeted preemption's kill of a batch, `waitTimeBeforeKill` after its warning
    /// (preemption spec A.7, A.8).
    Kill(preemption::KillBatch),
    /// A foreign container's `foreignContainerTimeout` (resource-pools spec §10).
    ForeignTimeout(preemption::foreign::ForeignTimeout),
}

/// Fair's per-app state, read with usage on every re-key.
#[derive(Clone, Debug)]
pub(crate) struct FairApp {
    /// Weight as of the last update (1, or log2(1 + demand MB) with size-based weight).
    pub(crate) weight: f64,
    /// Instantaneous fair share as of the last update (whether the app is starved for a
    /// reservation is read from it on every re-key).
    pub(crate) fair_share: Resource,
    /// Its min-share starvation is not none (as of its last evaluation): with usage below
    /// the fair share, Hadoop's `isStarved`, which gates reservations (read on every re-key).
    pub(crate) min_share_starved: bool,
    /// The targeted pass has set the app's next starvation check (spec A.9) at least once:
    /// only then does the starvation pass look the check time up.
    pub(crate) next_check_set: bool,
}

/// The Fair Scheduler's own state.
pub(crate) struct Fair {
    pub(crate) config: Arc<FairConfig>,
    pub(crate) users: BTreeMap<String, UserState>,
    /// Steady fair shares must be recomputed before they are next shown.
    pub(crate) steady_dirty: bool,
    pub(crate) last_queue_gc: Time,
    /// The reservation threshold of the current configuration (read on every re-key).
    pub(crate) reservation_threshold: Resource,
    /// Reused buffer for a leaf's share inputs in the update.
    pub(crate) scratch_items: Vec<shares::ShareItem>,
    /// The update's reusable buffers: app slots, demand sums by leaf, leaves where an app's
    /// weight changed.
    pub(crate) scratch_slots: Vec<u32>,
    pub(crate) scratch_demands: Vec<Resource>,
    pub(crate) scratch_reweighted: Vec<bool>,
    /// Apps' starvation state, marks, earmarks and the starved apps of the current update.
    /// Boxed: the facade's enum holds a Fair and a FIFO engine inline, whose sizes should stay
    /// close.
    pub(crate) preemption: Box<preemption::PreemptionState>,
}

/// `incrementAllocation x reservation-threshold.increment-multiple` (spec §6.6).
fn reservation_threshold_of(config: &FairConfig) -> Resource {
    let props = &config.properties;
    crate::lanes::truncate(
        props
            .increment_allocation
            .mul_trunc(f64::from(props.reservation_threshold_increment_multiple)),
    )
}

impl FairEngine {
    /// A Fair Scheduler with the given configuration and user groups, and no nodes or apps.
    pub(crate) fn new_fair(config: FairConfig, groups: GroupMapping) -> FairEngine {
        let mut queues = queues::new_tree(&config.allocations);
        // Absolute max shares do not depend on the cluster, so node joins leave them alone
        // (`cluster_changed`); they are resolved here, and on every reload.
        queues.resolve_max_shares(&queues::Capacities::default());
        let rules = Fair {
            reservation_threshold: reservation_threshold_of(&config),
            config: Arc::new(config),
            users: BTreeMap::new(),
            steady_dirty: true,
            last_queue_gc: Time::ZERO,
            scratch_items: Vec::new(),
            scratch_slots: Vec::new(),
            scratch_demands: Vec::new(),
            scratch_reweighted: Vec::new(),
            preemption: Box::default(),
        };
        let properties = ClusterProperties::from_site(&rules.config.properties);
        let pools = rules
            .config
            .allocations
            .resource_pools
            .clone()
            .map(Arc::new);
        let mut engine = Engine::new(rules, properties, queues, groups);
        engine.set_pools(pools);
        engine
    }

    pub(crate) fn policy_context(&self) -> PolicyContext {
        PolicyContext {
            cluster: self.cluster,
            resource_types: self.properties.resource_types.len(),
        }
    }

    /// The comparators' inputs for a member of pool `pool`: with per-pool shares, DRF's
    /// dominant shares are fractions of the pool's capacity (resource-pools spec §8).
    pub(crate) fn policy_context_of(&self, pool: u16) -> PolicyContext {
        let cluster = match &self.pools {
            Some(pools) if pools.per_pool_shares() => pools
                .capacity
                .get(usize::from(pool))
                .copied()
                .unwrap_or(self.cluster),
            _ => self.cluster,
        };
        PolicyContext {
            cluster,
            resource_types: self.properties.resource_types.len(),
        }
    }

    /// The capacity each queue's percentages and shares resolve against.
    pub(crate) fn share_capacities(&self) -> queues::Capacities {
        let pools = match &self.pools {
            Some(pools) if pools.per_pool_shares() => pools.capacity.clone(),
            _ => Vec::new(),
        };
        queues::Capacities {
            cluster: self.cluster,
            pools,
        }
    }

    pub(crate) fn app_view(app: &AppOf<Fair>) -> SchedView {
        SchedView {
            demand: app.demand,
            usage: app.usage,
            min_share: Resource::ZERO,
            weight: app.rules.weight,
            start_time: app.start_time,
            tiebreak: app.id.0,
        }
    }

    pub(crate) fn queue_view(q: &QueueOf<Fair>, usage: Resource) -> SchedView {
        SchedView {
            demand: q.demand,
            usage,
            min_share: q.rules.min_share,
            weight: q.rules.weight,
            start_time: 0,
            tiebreak: q.name_rank,
        }
    }

    fn reload(&mut self, config: FairConfig) {
        self.rules.reservation_threshold = reservation_threshold_of(&config);
        self.properties = ClusterProperties::from_site(&config.properties);
        self.rules.config = Arc::new(config);
        let config = Arc::clone(&self.rules.config);
        self.set_pools(config.allocations.resource_pools.clone().map(Arc::new));
        self.queues.apply_config(&config.allocations);
        let caps = self.share_capacities();
        self.queues.resolve_max_shares(&caps);
        self.update_runnability_on_reload();
        self.rules.steady_dirty = true;
        self.order_dirty = true;
    }
}

impl Rules for Fair {
    type App = FairApp;
    type QueueHot = FairQueue;
    type QueueCold = FairQueueCold;
    type Timer = FairTimer;

    #[inline]
    fn new_app() -> FairApp {
        FairApp {
            weight: 1.0,
            fair_share: Resource::ZERO,
            min_share_starved: false,
            next_check_set: false,
        }
    }

    fn place(
        e: &mut FairEngine,
        app: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)> {
        e.place(app, user, requested)
    }

    fn admit(e: &mut FairEngine, app: AppId) {
        e.add_app_to_queue(app);
        e.note_admitted_for_starvation(app);
    }

    fn leave(e: &mut FairEngine, app: AppId) {
        e.remove_app_from_queue(app);
        e.forget_starvation(app);
    }

    fn move_app(e: &mut FairEngine, app: AppId, target: &str) -> Result<(), SchedError> {
        e.move_app(app, target)
    }

    #[inline]
    fn is_candidate(_: &FairEngine, app: &AppOf<Fair>) -> bool {
        app.runnable && app.has_pending_demand() && app.has_outstanding_asks()
    }

    #[inline]
    fn app_key(e: &FairEngine, app: &AppOf<Fair>) -> SortKey {
        let policy = e.queues.get(app.queue).rules.policy;
        if policy == PolicyKind::Fair {
            return policy::fair_sort_key(
                app.demand.memory_mb(),
                app.usage.memory_mb(),
                0,
                app.rules.weight,
                app.start_time,
                app.id.0,
            );
        }
        let pool = e.queues.get(app.queue).pool;
        policy::sort_key(
            policy,
            &FairEngine::app_view(app),
            &e.policy_context_of(pool),
        )
    }

    #[inline]
    fn queue_key(e: &FairEngine, parent: QueueId, q: &QueueOf<Fair>) -> SortKey {
        let policy = e.queues.get(parent).rules.policy;
        if policy == PolicyKind::Fair {
            return policy::fair_sort_key(
                q.demand.memory_mb(),
                q.usage.memory_mb(),
                q.rules.min_share.memory_mb(),
                q.rules.weight,
                0,
                q.name_rank,
            );
        }
        policy::sort_key(
            policy,
            &FairEngine::queue_view(q, q.usage),
            &e.policy_context_of(q.pool),
        )
    }

    fn compare_apps(e: &FairEngine, leaf: QueueId, a: &AppOf<Fair>, b: &AppOf<Fair>) -> Ordering {
        let (policy, pool) = (e.queues.get(leaf).rules.policy, e.queues.get(leaf).pool);
        let (a, b) = (FairEngine::app_view(a), FairEngine::app_view(b));
        policy::compare(policy, &a, &b, &e.policy_context_of(pool))
    }

    fn compare_queues(
        e: &FairEngine,
        parent: QueueId,
        a: (&QueueOf<Fair>, Resource),
        b: (&QueueOf<Fair>, Resource),
    ) -> Ordering {
        let (policy, pool) = (e.queues.get(parent).rules.policy, a.0.pool);
        let (a, b) = (
            FairEngine::queue_view(a.0, a.1),
            FairEngine::queue_view(b.0, b.1),
        );
        policy::compare(policy, &a, &b, &e.policy_context_of(pool))
    }

    #[inline]
    fn starved_for_reservation(e: &FairEngine, app: &AppOf<Fair>) -> bool {
        app.rules.min_share_starved || e.starved_for_reservation(app)
    }

    fn has_reservable_ask(e: &FairEngine, app: &AppOf<Fair>) -> bool {
        e.has_threshold_ask(app)
    }

    #[inline]
    fn locality_delay(e: &FairEngine) -> Option<(f64, f64)> {
        let props = &e.rules.config.properties;
        (props.locality_threshold_node >= 0.0 && props.locality_threshold_rack >= 0.0).then(|| {
            (
                f64::from(props.locality_threshold_node),
                f64::from(props.locality_threshold_rack),
            )
        })
    }

    fn may_start_am(e: &FairEngine, leaf: QueueId, am: Resource) -> bool {
        e.can_run_am(leaf, am)
    }

    fn may_reserve(
        e: &FairEngine,
        app: AppId,
        size: Resource,
        node: NodeId,
        locality: Locality,
    ) -> bool {
        e.may_reserve(app, size, node, locality)
    }

    #[inline]
    fn keep_assigning(
        e: &FairEngine,
        assigned: Resource,
        count: i32,
        max_to_assign: Resource,
    ) -> bool {
        let props = &e.rules.config.properties;
        if !props.assign_multiple {
            false
        } else if props.dynamic_max_assign {
            assigned.fits_in(&max_to_assign)
        } else {
            props.max_assign <= 0 || count < props.max_assign
        }
    }

    fn max_container_allocation(e: &FairEngine, queue: QueueId) -> Resource {
        e.queues.max_container_allocation(
            queue,
            e.properties.maximum_allocation,
            e.share_capacities().of(e.queues.get(queue)),
        )
    }

    fn update(e: &mut FairEngine, now: Time) {
        e.update(now, true);
    }

    fn update_shares(e: &mut FairEngine, now: Time) {
        e.update(now, false);
    }

    fn timer_due(e: &mut FairEngine, timer: FairTimer, _: Time, _: Time) {
        match timer {
            FairTimer::Kill(batch) => e.kill_batch(batch),
            FairTimer::ForeignTimeout(t) => e.foreign_timeout_due(t),
        }
    }

    #[inline]
    fn container_ended(e: &mut FairEngine, c: &crate::objects::node::Container) {
        e.unmark_ended(c);
    }

    #[inline]
    fn heartbeat_starts(e: &mut FairEngine, node: NodeId) -> Option<usize> {
        e.hand_off_earmarks(node)
    }

    fn heartbeat_assigned(e: &mut FairEngine, node: NodeId, mark: usize) {
        e.shrink_earmarks(node, mark);
    }

    fn reload(e: &mut FairEngine, config: SchedulerConfig, now: Time) -> Result<(), SchedError> {
        match config {
            SchedulerConfig::Fair(config) => {
                e.check_pool_reload(config.allocations.resource_pools.as_ref())?;
                e.reload(config);
                e.arm_foreign_timeouts(now);
                Ok(())
            }
            other => Err(SchedError::ConfigRefused(format!(
                "the Fair Scheduler cannot take a {} scheduler's configuration; changing the scheduler needs a restart",
                other.kind().short_name()
            ))),
        }
    }

    fn plan_leaf(e: &mut FairEngine, name: &str) -> Result<QueueId, String> {
        e.plan_leaf(name)
    }

    fn plan_resources(e: &mut FairEngine, plan: QueueId) -> Resource {
        e.plan_resources(plan)
    }

    fn set_entitlement(
        e: &mut FairEngine,
        leaf: QueueId,
        capacity: f64,
        max: f64,
        resources: Resource,
        reserved: Option<Resource>,
    ) {
        e.set_entitlement(leaf, capacity, max, resources, reserved);
    }

    fn cluster_changed(e: &mut FairEngine) {
        let caps = e.share_capacities();
        e.queues.resolve_relative_max_shares(&caps);
        e.rules.steady_dirty = true;
        e.forget_node_preemption();
    }

    fn refresh_reports(e: &mut FairEngine) {
        if e.rules.steady_dirty {
            e.compute_steady_shares();
        }
    }

    fn app_fair_share(app: &AppOf<Fair>) -> Resource {
        app.rules.fair_share
    }

    fn preemption_contract(e: &FairEngine, app: AppId) -> Vec<weft_types::ContainerId> {
        e.marked_of_app(app).to_vec()
    }

    fn headroom(e: &FairEngine, app: &AppOf<Fair>) -> Resource {
        e.headroom(app)
    }

    fn app_starvation(e: &FairEngine, app: &AppOf<Fair>) -> Option<crate::api::AppStarvation> {
        Some(e.app_starvation(app))
    }

    fn queue_report(_: &FairEngine, q: &QueueOf<Fair>) -> QueueReport {
        QueueReport {
            policy: q.rules.policy.name(),
            weight: q.rules.weight,
            fair_share: q.rules_cold.fair_share,
            steady_fair_share: q.rules_cold.steady_fair_share,
            min_share: q.rules.min_share,
            starvation: Some(FairEngine::queue_starvation(q)),
            preempted_containers: q.rules_cold.preempted_containers,
        }
    }

    fn verify(e: &FairEngine, drift: &mut Vec<String>) {
        e.verify_fair_keys(drift);
        e.verify_preemption(drift);
    }
}

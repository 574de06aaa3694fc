//! The seam between the shared objects and a scheduler's rules.
//!
//! The objects (`objects/`, `queues/`, `order/`, `walk/`, the ledger in `engine/`) change
//! cluster state and keep every aggregate and order; a [`Rules`] type decides. Each scheduler
//! is one `Rules` type and runs as [`Engine<R>`], monomorphised: no `dyn` below the public
//! [`Scheduler`](crate::Scheduler) facade, so the walk calls the rules' hooks as plain
//! (inlinable) functions.
//!
//! Hooks take the engine itself (`&Engine<Self>` or `&mut Engine<Self>`), and the rules' own
//! state lives in `Engine::rules`: a hook reads any shared object and its own state without
//! borrowing one from the other. Families, in the order an event meets them:
//! * admission: [`Rules::place`], [`Rules::admit`], [`Rules::leave`], [`Rules::move_app`];
//! * order: [`Rules::is_candidate`], [`Rules::app_key`], [`Rules::queue_key`] (fast path) and
//!   [`Rules::compare_apps`], [`Rules::compare_queues`] (reference walk), which must agree;
//!   [`Rules::starved_for_reservation`], [`Rules::has_reservable_ask`] (the reservable flags);
//! * the walk's gates: [`Rules::locality_delay`], [`Rules::may_start_am`],
//!   [`Rules::may_reserve`], [`Rules::keep_assigning`], [`Rules::fits_node`],
//!   [`Rules::serve_app`];
//! * limits on asks: [`Rules::max_container_allocation`];
//! * the rules' own aggregates, told of every change they follow: [`Rules::usage_charged`]
//!   (the ledger's usage pass), [`Rules::asks_changed`], [`Rules::reservation_changed`];
//! * periodic, timed and global work: [`Rules::update`], [`Rules::timer_due`], [`Rules::reload`],
//!   [`Rules::cluster_changed`], [`Rules::refresh_reports`];
//! * reports and checks: [`Rules::queue_report`], [`Rules::headroom`], [`Rules::verify`].

use std::cmp::Ordering;

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_types::{AppId, Locality, NodeId, Time};

use crate::api::{RejectCode, SchedError, SchedulerConfig};
use crate::engine::Engine;
use crate::objects::app::App;
use crate::objects::node::Container;
use crate::order::key::SortKey;
use crate::queues::{Queue, QueueId};
use crate::walk::Assignment;

/// An app with the rules' payload.
pub(crate) type AppOf<R> = App<<R as Rules>::App>;
/// A queue with the rules' payloads.
pub(crate) type QueueOf<R> = Queue<<R as Rules>::QueueHot, <R as Rules>::QueueCold>;

/// A queue's figures in the rules' terms, for snapshots and leaf reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueueReport {
    pub(crate) policy: &'static str,
    pub(crate) weight: f64,
    pub(crate) fair_share: Resource,
    pub(crate) steady_fair_share: Resource,
    pub(crate) min_share: Resource,
    pub(crate) starvation: Option<crate::api::QueueStarvation>,
    /// Containers preempted from the queue's apps (its subtree's for a parent).
    pub(crate) preempted_containers: u64,
}

/// What a scheduler decides; the objects, the order and the walk do the rest.
pub(crate) trait Rules: Sized {
    /// Per-app state read with usage on every re-key (inline in the app).
    type App: Clone + std::fmt::Debug;
    /// Per-queue state read on every re-key (inline after the shared hot fields).
    type QueueHot: Clone + std::fmt::Debug + Default;
    /// Per-queue state read only by updates, reloads and reports.
    type QueueCold: Clone + std::fmt::Debug + Default;
    /// What a timer of these rules carries (see `objects/timers.rs`).
    type Timer: Clone + std::fmt::Debug;

    /// The payload of a newly submitted app.
    fn new_app() -> Self::App;

    // Admission.

    /// The leaf a submission goes to (creating it if the rules allow), or why it is refused
    /// (a stable code and words a person can act on).
    fn place(
        e: &mut Engine<Self>,
        app: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)>;
    /// Puts a newly placed app on its leaf's runnable or waiting list.
    fn admit(e: &mut Engine<Self>, app: AppId);
    /// Takes a leaving app off its leaf's lists (and promotes waiting apps).
    fn leave(e: &mut Engine<Self>, app: AppId);
    /// Moves an app to another leaf, or refuses.
    fn move_app(e: &mut Engine<Self>, app: AppId, target: &str) -> Result<(), SchedError>;

    // Order.

    /// Whether the walk should visit the app at all (it is then in its leaf's candidates).
    fn is_candidate(e: &Engine<Self>, app: &AppOf<Self>) -> bool;
    /// The fast path's key of a candidate app in its leaf.
    fn app_key(e: &Engine<Self>, app: &AppOf<Self>) -> SortKey;
    /// The fast path's key of a queue with candidates in its parent.
    fn queue_key(e: &Engine<Self>, parent: QueueId, q: &QueueOf<Self>) -> SortKey;
    /// The reference order of two candidate apps of `leaf` (`Less`: `a` first).
    fn compare_apps(e: &Engine<Self>, leaf: QueueId, a: &AppOf<Self>, b: &AppOf<Self>) -> Ordering;
    /// The reference order of two children of `parent`, each with its recomputed usage.
    fn compare_queues(
        e: &Engine<Self>,
        parent: QueueId,
        a: (&QueueOf<Self>, Resource),
        b: (&QueueOf<Self>, Resource),
    ) -> Ordering;
    /// Whether the app's own state lets it take a reservation now (with an ask that could).
    fn starved_for_reservation(e: &Engine<Self>, app: &AppOf<Self>) -> bool;
    /// Whether an outstanding ask of the app could be reserved for (cached until its asks change).
    fn has_reservable_ask(e: &Engine<Self>, app: &AppOf<Self>) -> bool;

    // The walk's gates.

    /// Count-based delay scheduling thresholds (node, rack), or `None` when off.
    fn locality_delay(e: &Engine<Self>) -> Option<(f64, f64)>;
    /// Whether an AM of `am` may start in `leaf` now.
    fn may_start_am(e: &Engine<Self>, leaf: QueueId, am: Resource) -> bool;
    /// Whether the app may reserve `node` for an ask of `size` at `locality`.
    fn may_reserve(
        e: &Engine<Self>,
        app: AppId,
        size: Resource,
        node: NodeId,
        locality: Locality,
    ) -> bool;
    /// Whether the heartbeat goes on after `count` allocations totalling `assigned`
    /// (`max_to_assign`: half the node's free resources when the heartbeat began).
    fn keep_assigning(
        e: &Engine<Self>,
        assigned: Resource,
        count: i32,
        max_to_assign: Resource,
    ) -> bool;
    /// Whether a walk on `node` may assign anything at all; `false` skips the walk (every app
    /// step would refuse the node, so the decisions are the same, without visiting every
    /// candidate). Default: walk.
    #[inline]
    fn node_may_take(_e: &Engine<Self>, _node: NodeId) -> bool {
        true
    }
    /// After the app in `app_slot` changed its usage by `amount` (`add`: grew) in the
    /// ledger's usage pass (`asks`: its asks changed too, and `App::asks_outstanding` is up
    /// to date). Default: nothing (Capacity keeps its leaves' user figures here).
    #[inline]
    fn usage_charged(
        _e: &mut Engine<Self>,
        _app_slot: u32,
        _amount: Resource,
        _add: bool,
        _asks: bool,
    ) {
    }
    /// After an app's asks changed outside the ledger (`Engine::refresh_app`; its cached
    /// outstanding asks are up to date). Default: nothing.
    #[inline]
    fn asks_changed(_e: &mut Engine<Self>, _app: AppId) {}
    /// Whether a container of `size` (a resource's lanes) fits in a node's `free` resources.
    /// Default: in every lane.
    #[inline]
    fn fits_node(size: &[i64; MAX_RESOURCE_TYPES], free: &Resource) -> bool {
        size.iter().zip(free.values()).all(|(s, f)| s <= f)
    }
    /// Serves one candidate app on the node (one container, or several where the rules serve
    /// an app in a batch); `Assignment::None` must leave the state as it was. Default: the
    /// shared app step (`Engine::assign_app`: keys by priority, locality, allocate or reserve).
    #[inline]
    fn serve_app(e: &mut Engine<Self>, app: AppId, node: NodeId) -> Assignment {
        e.assign_app(app, node, None)
    }

    // Limits on asks.

    /// The largest container an app of `queue` may ask for.
    fn max_container_allocation(e: &Engine<Self>, queue: QueueId) -> Resource;

    // Periodic and global work.

    /// The periodic update.
    fn update(e: &mut Engine<Self>, now: Time);
    /// The update's recomputation of shown figures (demand, shares) for a report, without
    /// anything that acts on time (starvation timers, preemption).
    fn update_shares(e: &mut Engine<Self>, now: Time) {
        Self::update(e, now);
    }
    /// A timer the rules set came due (`at`; the engine's time is `now >= at`).
    fn timer_due(e: &mut Engine<Self>, timer: Self::Timer, at: Time, now: Time);
    /// A container left the objects (any way: completion, release, its app or node leaving,
    /// preemption), before the usage it held drops. Runs on every completion: keep it to one
    /// test when the rules track nothing about containers.
    #[inline]
    fn container_ended(_e: &mut Engine<Self>, _c: &Container) {}
    /// A node heartbeat is about to assign (before its reservation is served and before the
    /// walk): the rules may hand room to apps first. `Some(mark)` asks for
    /// [`Rules::heartbeat_assigned`] with the decision queue's length at this point. Runs on
    /// every heartbeat: keep it to one test when the rules have nothing to hand over.
    #[inline]
    fn heartbeat_starts(_e: &mut Engine<Self>, _node: NodeId) -> Option<usize> {
        None
    }
    /// After a heartbeat that `heartbeat_starts` asked to watch: the decisions from `mark` on
    /// are what the heartbeat did.
    fn heartbeat_assigned(_e: &mut Engine<Self>, _node: NodeId, _mark: usize) {}
    /// The application's priority changed (Hadoop's `updateApplicationPriority`). Default:
    /// ignored (the Fair and FIFO schedulers do not order by application priority).
    fn priority_changed(_e: &mut Engine<Self>, _app: AppId, _priority: i32) {}
    /// `Engine::rebuild_derived` recomputed the shared figures: the rules recompute theirs.
    /// Default: nothing.
    fn rebuild_derived(_e: &mut Engine<Self>) {}
    /// A node was reserved for the app (`added`) or its reservation dropped (whether turned
    /// into an allocation or released), with the reserved size. Runs on every reservation
    /// change only. Default: nothing (Fair and FIFO keep reservations out of queue usage).
    #[inline]
    fn reservation_changed(_e: &mut Engine<Self>, _app: AppId, _size: Resource, _added: bool) {}
    /// A new configuration at `now` (Fair starts resource pools' foreign-container clocks
    /// there); `Err` leaves the state as it was.
    fn reload(e: &mut Engine<Self>, config: SchedulerConfig, now: Time) -> Result<(), SchedError>;
    /// The node set changed (the engine updated the cluster totals).
    fn cluster_changed(e: &mut Engine<Self>);

    // The plan follower (`follower.rs`).

    /// The leaf `name` under a plan queue for the plan follower, created if missing and kept
    /// from queue collection until the follower removes it; `Err` (why) when these rules have
    /// no plan follower. Default: none (FIFO).
    fn plan_leaf(_e: &mut Engine<Self>, name: &str) -> Result<QueueId, String> {
        Err(format!(
            "this scheduler has no plan follower: cannot make reservation queue {name}"
        ))
    }
    /// The resources a plan queue's entitlements are fractions of (Hadoop's
    /// `getPlanResources`). Default: none.
    fn plan_resources(_e: &mut Engine<Self>, _plan: QueueId) -> Resource {
        Resource::ZERO
    }
    /// Sizes a follower's leaf: `capacity` of the plan's `resources` guaranteed, at most `max`
    /// of them (fractions; Hadoop's `setEntitlement`); `reserved` is a reservation leaf's
    /// reserved amount now (none for the plan's default leaf). Default: nothing.
    fn set_entitlement(
        _e: &mut Engine<Self>,
        _leaf: QueueId,
        _capacity: f64,
        _max: f64,
        _resources: Resource,
        _reserved: Option<Resource>,
    ) {
    }
    /// Brings figures shown only in reports up to date.
    fn refresh_reports(e: &mut Engine<Self>);

    // Reports and checks.

    /// An app's fair share in the rules' terms (zero where the rules have none).
    fn app_fair_share(app: &AppOf<Self>) -> Resource;
    /// Why a pending (not runnable) app waits, for the RM's diagnostics.
    fn waiting_reason(_: &Engine<Self>, _: &AppOf<Self>) -> Option<String> {
        None
    }
    /// The app's starvation, where the rules compute it.
    fn app_starvation(e: &Engine<Self>, app: &AppOf<Self>) -> Option<crate::api::AppStarvation>;
    /// The app's containers marked for preemption and still live, in marking order (Hadoop's
    /// strict preemption contract). Default: none (rules that never preempt).
    fn preemption_contract(_e: &Engine<Self>, _app: AppId) -> Vec<weft_types::ContainerId> {
        Vec::new()
    }
    /// What the app's AM is told it could still get (Hadoop's headroom).
    fn headroom(e: &Engine<Self>, app: &AppOf<Self>) -> Resource;
    /// A queue's figures in the rules' terms.
    fn queue_report(e: &Engine<Self>, q: &QueueOf<Self>) -> QueueReport;
    /// Of a leaf's report, what its apps' usage percentages divide by (the fair share unless
    /// the rules say otherwise).
    fn app_usage_basis(report: &QueueReport) -> Resource {
        report.fair_share
    }
    /// The rules' own consistency checks, in words.
    fn verify(e: &Engine<Self>, drift: &mut Vec<String>);
}

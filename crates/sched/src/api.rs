//! The scheduler's driving contract: the events it takes, the decisions it gives, the errors it
//! returns and the plain-data snapshot it shows.

use std::collections::BTreeMap;
use std::sync::Arc;
use thiserror::Error;
use weft_config::{AllocationConfig, SchedulerKind, SchedulerProperties};
use weft_types::{AppId, ContainerId, Duration, Locality, NodeId, Resource, Time};

/// A complete scheduler configuration, per scheduler kind. Every kind has the yarn-site
/// properties (the cluster-wide part, [`ClusterProperties`], is what all kinds share); the rest
/// is the kind's own.
#[derive(Clone, Debug)]
// Built once per start or reload: the size difference between kinds costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum SchedulerConfig {
    /// Hadoop's Fair Scheduler.
    Fair(FairConfig),
    /// Hadoop's FIFO scheduler.
    Fifo(FifoConfig),
    /// Hadoop's Capacity Scheduler.
    Capacity(CapacitySchedulerConfig),
}

/// The Fair Scheduler's configuration: the allocation file and the yarn-site properties.
#[derive(Clone, Debug, Default)]
pub struct FairConfig {
    /// The parsed `fair-scheduler.xml`.
    pub allocations: AllocationConfig,
    /// The yarn-site.xml properties.
    pub properties: SchedulerProperties,
}

/// The FIFO scheduler's configuration: it has no queue configuration, only the yarn-site
/// properties (of which it reads the cluster-wide part).
#[derive(Clone, Debug, Default)]
pub struct FifoConfig {
    /// The yarn-site.xml properties.
    pub properties: SchedulerProperties,
}

/// The Capacity Scheduler's configuration: the parsed capacity-scheduler.xml and the yarn-site
/// properties (of which it reads the cluster-wide part).
#[derive(Clone, Debug)]
pub struct CapacitySchedulerConfig {
    /// The parsed `capacity-scheduler.xml`.
    pub capacity: weft_config::capacity::CapacityConfig,
    /// The yarn-site.xml properties.
    pub properties: SchedulerProperties,
}

impl Default for SchedulerConfig {
    fn default() -> SchedulerConfig {
        SchedulerConfig::Fair(FairConfig::default())
    }
}

impl SchedulerConfig {
    /// A Fair Scheduler configuration.
    pub fn fair(allocations: AllocationConfig, properties: SchedulerProperties) -> SchedulerConfig {
        SchedulerConfig::Fair(FairConfig {
            allocations,
            properties,
        })
    }

    /// The configuration of the scheduler `properties` names
    /// (`yarn.resourcemanager.scheduler.class`); `allocations` is the Fair Scheduler's
    /// allocation file (other kinds ignore it). The Capacity Scheduler is refused here: it needs
    /// its capacity-scheduler.xml (the RM reads it and builds `SchedulerConfig::Capacity`).
    pub fn from_site(
        properties: SchedulerProperties,
        allocations: AllocationConfig,
    ) -> Result<SchedulerConfig, SchedError> {
        match properties.scheduler_kind {
            SchedulerKind::Fair => Ok(SchedulerConfig::fair(allocations, properties)),
            SchedulerKind::Fifo => Ok(SchedulerConfig::Fifo(FifoConfig { properties })),
            SchedulerKind::Capacity => Err(SchedError::ConfigRefused(format!(
                "yarn.resourcemanager.scheduler.class is the Capacity Scheduler ({}), whose configuration is its capacity-scheduler.xml: build SchedulerConfig::Capacity from it",
                SchedulerKind::Capacity.class_name()
            ))),
        }
    }

    /// Which scheduler this configures.
    pub fn kind(&self) -> SchedulerKind {
        match self {
            SchedulerConfig::Fair(_) => SchedulerKind::Fair,
            SchedulerConfig::Fifo(_) => SchedulerKind::Fifo,
            SchedulerConfig::Capacity(_) => SchedulerKind::Capacity,
        }
    }

    /// The yarn-site properties.
    pub fn properties(&self) -> &SchedulerProperties {
        match self {
            SchedulerConfig::Fair(c) => &c.properties,
            SchedulerConfig::Fifo(c) => &c.properties,
            SchedulerConfig::Capacity(c) => &c.properties,
        }
    }

    /// The yarn-site properties, to change.
    pub fn properties_mut(&mut self) -> &mut SchedulerProperties {
        match self {
            SchedulerConfig::Fair(c) => &mut c.properties,
            SchedulerConfig::Fifo(c) => &mut c.properties,
            SchedulerConfig::Capacity(c) => &mut c.properties,
        }
    }

    /// The Fair Scheduler's allocation file (`None` for other kinds).
    pub fn allocations(&self) -> Option<&AllocationConfig> {
        match self {
            SchedulerConfig::Fair(c) => Some(&c.allocations),
            SchedulerConfig::Fifo(_) | SchedulerConfig::Capacity(_) => None,
        }
    }

    /// The cluster-wide properties every kind shares.
    pub fn cluster(&self) -> ClusterProperties {
        ClusterProperties::from_site(self.properties())
    }
}

/// User name -> groups, primary group first (what Hadoop's group mapping service answers).
pub type GroupMapping = BTreeMap<String, Vec<String>>;

/// A request for `count` containers of one size at one priority.
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerAsk {
    /// Request priority: a lower number is served first, as in YARN.
    pub priority: i32,
    /// The size of each container (normalized by the scheduler before it is stored).
    pub resources: Resource,
    /// How many containers.
    pub count: u32,
    /// Preferred hosts (node-local placement).
    pub hosts: Vec<String>,
    /// Preferred racks (rack-local placement).
    pub racks: Vec<String>,
    /// Whether the scheduler may place the containers elsewhere when the preferences cannot be met.
    pub relax_locality: bool,
    /// The driver's own label for these containers, handed back on each one's allocation.
    pub tag: AskTag,
}

/// A driver-defined label on an ask, opaque to the scheduler: it never affects a decision and
/// comes back in [`Decision::Allocated`] for each container the ask yields. Asks under one
/// request key are served oldest first, and a cancel withdraws the newest first, so each
/// container carries the tag of the ask it actually came from.
///
/// The simulator puts a task's run time here; an RM could carry Hadoop's allocation request id
/// or a demand id. [`AskTag::NONE`] (the default) costs nothing to keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AskTag(pub u64);

impl AskTag {
    /// No label.
    pub const NONE: AskTag = AskTag(0);
}

/// An all-or-nothing ask (Weft-only; time-aware-demands spec §3.3 "Gang delivery at run
/// time"): `size` containers of `resources`, handed to the application together in one step or
/// not at all. The core places the whole gang at once when the nodes have room for every
/// member; otherwise only the head gang (the first in the global order: submission time, then
/// the gang's id, then the application's id) holds members as room appears (counted as used,
/// not handed out) until all exist. A gang that cannot be packed on the cluster's nodes even
/// when they are empty is refused when it is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct GangAsk {
    /// The driver's id for the gang, unique within its application (a demand's DemandID).
    pub gang: u64,
    /// Request priority of its containers.
    pub priority: i32,
    /// The size of each member (normalized as any ask is).
    pub resources: Resource,
    /// How many members (at least 1, at most [`MAX_GANG_SIZE`]).
    pub size: u32,
    /// How long a partial hold may last, from its first held member; `None`: no limit.
    pub hold_timeout: Option<Duration>,
    /// What a hold's timeout does.
    pub style: GangStyle,
    /// The driver's label, handed back on each member's `Decision::Allocated`.
    pub tag: AskTag,
}

/// The most members a gang may have (bounds the hold's bookkeeping an AM can make grow).
pub const MAX_GANG_SIZE: u32 = 100_000;

/// What the timeout of a gang's partial hold does (YuniKorn's `gangSchedulingStyle`, made
/// explicit in the decision).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GangStyle {
    /// Fall back (a loose demand): the held members go to the application and the rest
    /// becomes an ordinary ask.
    #[default]
    Soft,
    /// Fail (a strict demand): the held members are released, never seen by the application.
    Hard,
}

impl GangStyle {
    /// The name used in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            GangStyle::Soft => "soft",
            GangStyle::Hard => "hard",
        }
    }
}

/// What happened to a gang, in [`Decision::Gang`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GangChange {
    /// Admitted: it can be packed on the cluster's nodes; it waits for room.
    Admitted,
    /// Refused when asked: even empty, the nodes could not host every member.
    Refused {
        /// Why, e.g. "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members".
        reason: String,
    },
    /// It holds `held` of its `size` members (only one gang holds at a time).
    Holding {
        /// Members held now.
        held: u32,
        /// Members it needs.
        size: u32,
    },
    /// Every member exists: the `size` `Decision::Allocated` of its containers follow at once.
    Delivered {
        /// Members.
        size: u32,
    },
    /// The hold timed out (soft): the `handed` held members' `Decision::Allocated` follow at
    /// once, and `asked` more were asked as ordinary containers.
    FellBack {
        /// Held members handed to the application.
        handed: u32,
        /// Members left to ordinary scheduling.
        asked: u32,
    },
    /// The hold timed out (hard): its `released` held members were released; the gang is gone.
    Failed {
        /// Held members released.
        released: u32,
    },
}

impl GangChange {
    /// The name used in outputs.
    pub fn as_str(&self) -> &'static str {
        match self {
            GangChange::Admitted => "admitted",
            GangChange::Refused { .. } => "refused",
            GangChange::Holding { .. } => "holding",
            GangChange::Delivered { .. } => "delivered",
            GangChange::FellBack { .. } => "fell_back",
            GangChange::Failed { .. } => "failed",
        }
    }
}

/// A gang holding members, as [`Scheduler::gang_holds`](crate::Scheduler::gang_holds) reports
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GangHold {
    /// The application.
    pub app: AppId,
    /// The gang's id.
    pub gang: u64,
    /// Members held.
    pub held: u32,
    /// Members it needs.
    pub size: u32,
    /// When the hold times out (`None`: never).
    pub expires: Option<Time>,
}

/// Why a submission was rejected, as a stable machine-readable code (the scenario contract's
/// `code` field; `Decision::Rejected`'s `reason` is the text a person reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RejectCode {
    /// No placement rule placed the application (a `reject` rule was reached, every rule passed,
    /// or a group rule met a user without groups).
    PlacementRejected,
    /// The requested queue name, or the name a rule produced, is not a valid queue name.
    InvalidQueueName,
    /// The queue the application was placed in is a parent queue, or would have to be created
    /// under a leaf.
    QueueNotLeaf,
    /// The queue would have to be created, and its parent's scheduling policy forbids the new
    /// queue's policy.
    QueuePolicyConflict,
    /// The user may neither submit to the queue nor administer it (`aclSubmitApps`,
    /// `aclAdministerApps`).
    AclDenied,
    /// The AM container's resources are invalid for the queue (a type the queue may never
    /// have, a negative amount).
    InvalidAmResource,
    /// Capacity Scheduler: the system's, the leaf's or the user's `maximum-applications` is
    /// reached.
    MaxApplications,
    /// Capacity Scheduler: the leaf or an ancestor is STOPPED or DRAINING.
    QueueStopped,
    /// Resource pools are on, the queue is bound to none, and `unboundQueues="reject"`
    /// (resource-pools spec §6).
    NoResourcePool,
    /// The queue's resource pool has no hosts (resource-pools spec §6).
    ResourcePoolEmpty,
    /// The application names a reservation whose queue does not exist (yet): the reservation
    /// is not active (Hadoop's `resolveReservationQueueName`).
    ReservationNotActive,
    /// Capacity Scheduler: the application's label expression names a partition its queue
    /// cannot access, or one the cluster does not have (Hadoop's
    /// `InvalidLabelResourceRequestException`).
    LabelNotAccessible,
}

impl RejectCode {
    /// Every code, in declaration order.
    pub const ALL: [RejectCode; 12] = [
        RejectCode::PlacementRejected,
        RejectCode::InvalidQueueName,
        RejectCode::QueueNotLeaf,
        RejectCode::QueuePolicyConflict,
        RejectCode::AclDenied,
        RejectCode::InvalidAmResource,
        RejectCode::MaxApplications,
        RejectCode::QueueStopped,
        RejectCode::NoResourcePool,
        RejectCode::ResourcePoolEmpty,
        RejectCode::ReservationNotActive,
        RejectCode::LabelNotAccessible,
    ];

    /// The code as outputs write it.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectCode::PlacementRejected => "placement_rejected",
            RejectCode::InvalidQueueName => "invalid_queue_name",
            RejectCode::QueueNotLeaf => "queue_not_leaf",
            RejectCode::QueuePolicyConflict => "queue_policy_conflict",
            RejectCode::AclDenied => "acl_denied",
            RejectCode::InvalidAmResource => "invalid_am_resource",
            RejectCode::MaxApplications => "max_applications",
            RejectCode::QueueStopped => "queue_stopped",
            RejectCode::NoResourcePool => "no_resource_pool",
            RejectCode::ResourcePoolEmpty => "resource_pool_empty",
            RejectCode::ReservationNotActive => "reservation_not_active",
            RejectCode::LabelNotAccessible => "label_not_accessible",
        }
    }
}

impl std::fmt::Display for RejectCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a container ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ContainerExit {
    /// The process finished on its own (reported by the node).
    Success,
    /// The application gave the container back.
    Released,
    /// The application finished or was killed while the container ran.
    Killed,
    /// The node was lost.
    Lost,
    /// The scheduler preempted it.
    Preempted,
}

impl ContainerExit {
    /// The name used in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerExit::Success => "success",
            ContainerExit::Released => "released",
            ContainerExit::Killed => "killed",
            ContainerExit::Lost => "lost",
            ContainerExit::Preempted => "preempted",
        }
    }
}

/// How a container ended in the driver's own terms (YARN's exit status and diagnostics). Opaque
/// to the scheduler: it never affects a decision and comes back unchanged in
/// [`Decision::Completed`], so a driver needs no side table to report the end it chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    /// The exit code (YARN's `ContainerExitStatus` or the process's own).
    pub code: i32,
    /// What happened, in words.
    pub diagnostics: String,
}

/// One input to the scheduler. The only way its state changes is `Scheduler::handle(now, event)`.
#[derive(Clone, Debug)]
pub enum Event {
    /// A node joined the cluster.
    NodeAdded {
        /// The driver's id for the node (must be new).
        node: NodeId,
        /// Host name, matched against asks' preferred hosts.
        host: String,
        /// The NM's port (0 when the driver has none, as the simulator's nodes: then only a
        /// resource pool's bare-host entries cover the node).
        port: u16,
        /// Rack path, e.g. `/default-rack`.
        rack: String,
        /// Total resources of the node.
        capability: Resource,
    },
    /// A node left; its containers are lost and its reservation dropped.
    NodeRemoved {
        /// The node.
        node: NodeId,
    },
    /// A node heartbeat: the scheduler assigns containers on that node.
    NodeHeartbeat {
        /// The node.
        node: NodeId,
    },
    /// A running container ended (reported by its node or by the driver).
    ContainerCompleted {
        /// The container.
        container: ContainerId,
        /// Why it ended.
        exit: ContainerExit,
        /// The driver's own account of the end, handed back in its `Decision::Completed`.
        status: Option<ExitStatus>,
    },
    /// An application was submitted: placement rules, ACLs and limits apply.
    AppSubmitted {
        /// The driver's id (must be new; also the final tie-break among apps).
        app: AppId,
        /// The submitting user.
        user: String,
        /// The queue the user asked for, if any.
        queue: Option<String>,
        /// The AM container's size; `None` for an unmanaged AM (no AM container).
        am_resource: Option<Resource>,
    },
    /// The application finished: its containers are released and it leaves its queue.
    AppFinished {
        /// The application.
        app: AppId,
    },
    /// The application was killed by `user` (checked against aclAdministerApps when given).
    AppKilled {
        /// The application.
        app: AppId,
        /// Who asks; `None` is the administrator (no check).
        user: Option<String>,
    },
    /// More outstanding container asks for an application.
    Ask {
        /// The application.
        app: AppId,
        /// What it asks for.
        ask: ContainerAsk,
    },
    /// Withdraw outstanding asks at one priority (or every priority).
    CancelAsks {
        /// The application.
        app: AppId,
        /// Only this priority; `None` = every priority.
        priority: Option<i32>,
        /// At most this many containers; `None` = all of them.
        count: Option<u32>,
    },
    /// The application gives a running container back.
    Release {
        /// The application.
        app: AppId,
        /// The container.
        container: ContainerId,
    },
    /// Move an application to another (existing, leaf) queue.
    Move {
        /// The application.
        app: AppId,
        /// Target queue, with or without the `root.` prefix.
        queue: String,
    },
    /// Swap in a new configuration (already parsed and validated by the caller).
    Reload(Box<SchedulerConfig>),
    /// The user -> groups mapping changed.
    GroupsChanged(GroupMapping),
    /// One user's groups changed (primary first; empty: the user has none now).
    UserGroups {
        /// The user.
        user: String,
        /// The user's groups.
        groups: Vec<String>,
    },
    /// The periodic update: demand, fair shares, runnability (Hadoop's update thread).
    Update,
    /// The driver's wake-up at (or after) the time `Scheduler::poll_timeout` gave: whatever
    /// is due by `now` happens. Harmless at any other time (nothing is due early).
    Timeout,

    // Per-application blacklists.
    /// The application's blacklist changes (Hadoop's `updateBlacklist` on allocate): the walk
    /// gives it no container, and no reservation, on a listed host or on any node of a listed
    /// rack. Names are host names or rack names; additions apply before removals. While the
    /// application waits for its AM container the change goes to the system's list (the AM
    /// blacklist the RM keeps) and only that list applies; once the AM runs, the application's
    /// own list. Refused (nothing applied) if an addition is `*`.
    BlacklistUpdated {
        /// The application.
        app: AppId,
        /// Host or rack names to list.
        additions: Vec<String>,
        /// Host or rack names to take off the list.
        removals: Vec<String>,
    },

    // Lifecycle events of a driver that restarts and retries (the RM).
    /// A container found running on a node after the driver restarted (Hadoop's
    /// `recoverContainersOnNode`): it joins its app and node as it was, charged like any
    /// allocation, and no decision is emitted. Refused when the id is taken, the app or node is
    /// unknown, or it does not fit in the node's unallocated resources. Later allocations get
    /// ids above it ([`Scheduler::next_container_id`](crate::Scheduler::next_container_id)).
    ContainerRecovered {
        /// Its id (must be new).
        container: ContainerId,
        /// The application it runs for.
        app: AppId,
        /// Where it runs.
        node: NodeId,
        /// Its size, taken as it is (it was normalized when first allocated).
        resources: Resource,
        /// The request priority it was allocated at.
        priority: i32,
        /// Whether it is the application's AM container.
        am: bool,
    },
    /// The application's priority changed (Hadoop's `updateApplicationPriority`; a driver
    /// sends it after the submission for an app submitted with a priority). Only the Capacity
    /// Scheduler orders by it.
    AppPriorityChanged {
        /// The application.
        app: AppId,
        /// The new priority (higher is more important); the scheduler caps it.
        priority: i32,
    },
    /// An all-or-nothing ask (see [`GangAsk`]). Refused (`Err`) for an unknown app, an
    /// invalid size or a gang id the app already uses; a gang the nodes cannot pack is not an
    /// error but `Decision::Gang { change: GangChange::Refused, .. }`.
    GangAsk {
        /// The application.
        app: AppId,
        /// The gang.
        ask: GangAsk,
    },
    /// Withdraw a gang: its held members are released unseen (an unknown gang is no error: it
    /// may have been delivered already).
    GangCancelled {
        /// The application.
        app: AppId,
        /// The gang's id.
        gang: u64,
    },
    /// End a gang's wait now, as its hold's timeout would (whether it holds members or not):
    /// soft falls back (held members handed over, the rest asked as ordinary containers),
    /// hard fails (held members released). The driver's own time bound, e.g. a demand's Start
    /// window closing (time-aware-demands §3.4 rows 8-9), where the hold's timeout counts only
    /// from its first held member. An unknown gang is no error: it may have been delivered.
    GangExpired {
        /// The application.
        app: AppId,
        /// The gang's id.
        gang: u64,
    },
    /// The application starts a new attempt after its previous AM ended (Hadoop's attempt
    /// removal then `addApplicationAttempt` without keeping containers across attempts): the
    /// previous attempt's containers are released (`ContainerExit::Killed`), its asks and
    /// reservations dropped and its AM usage returned; the app keeps its queue, its start time
    /// and its place in the order (runnable stays runnable), and asks for the new AM. The
    /// application's own blacklist is forgotten (Hadoop transfers it only when containers are
    /// kept across attempts); the system's list stays.
    AttemptRestarted {
        /// The application.
        app: AppId,
        /// The new AM container's size; `None` for an unmanaged AM.
        am_resource: Option<Resource>,
    },

    // The reservation system.
    /// The reservations of one plan (reservable) queue, as its planner now holds them: the
    /// plan follower gives each active one a leaf of its own under the plan queue and sizes
    /// it, and runs again by itself at each reservation's start, step and end
    /// (`Scheduler::poll_timeout`). Replaces whatever the plan had; an empty list ends every
    /// reservation of the plan. Refused for a queue that is not a parent, or by a scheduler
    /// whose rules have no plan follower (FIFO; Capacity for now).
    PlanChanged(Box<PlanReservations>),
}

/// The reservations of one plan queue ([`Event::PlanChanged`]). The scheduler does not depend
/// on the planner (`crates/plan` depends on nothing but `types`, and rm-core is the one that
/// holds plans): it gets each reservation as plain data, its reserved amount as a step function
/// of time, so it needs no planner to know when the follower must run next.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanReservations {
    /// The plan queue (full name, `root.`-prefixed).
    pub queue: String,
    /// Apps of an ended reservation move to `<plan>-default` (`true`, Hadoop's default
    /// `reservation-move-on-expiry`) or are killed.
    pub move_on_expiry: bool,
    /// The reservations, in any order; ids must differ.
    pub reservations: Vec<PlannedReservation>,
}

/// One reservation of a plan, for the follower.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedReservation {
    /// Its id as Hadoop prints it (`reservation_<ts>_<seq>`): the name of its leaf.
    pub id: String,
    /// Active over `[start, end)`.
    pub start: Time,
    /// The end (exclusive).
    pub end: Time,
    /// What it has reserved from each time on, in time order (before the first step, and
    /// from `end` on, nothing).
    pub steps: Vec<(Time, Resource)>,
    /// It holds gangs (Hadoop's `containsGangs`): its leaf's maximum is its entitlement
    /// rather than the whole plan.
    pub gang: bool,
}

impl PlannedReservation {
    /// The most it reserves at any time (by memory, the follower's measure).
    pub fn peak(&self) -> Resource {
        self.steps
            .iter()
            .map(|(_, r)| *r)
            .max_by_key(|r| r.memory_mb())
            .unwrap_or(Resource::ZERO)
    }

    /// What it has reserved at `t`.
    pub fn reserved_at(&self, t: Time) -> Resource {
        if t < self.start || t >= self.end {
            return Resource::ZERO;
        }
        self.steps
            .iter()
            .take_while(|(at, _)| *at <= t)
            .last()
            .map_or(Resource::ZERO, |(_, r)| *r)
    }

    /// Whether it is active at `t` (Hadoop's `getReservationsAtTime`).
    pub fn is_active_at(&self, t: Time) -> bool {
        self.start <= t && t < self.end
    }
}

/// One output of the scheduler, drained with `Scheduler::poll_decision`.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// The application was placed in `queue`.
    Accepted {
        /// The application.
        app: AppId,
        /// Full queue name.
        queue: String,
    },
    /// The application was refused; `reason` says why in words a person can act on.
    Rejected {
        /// The application.
        app: AppId,
        /// Why.
        reason: String,
        /// Why, as a stable code.
        code: RejectCode,
    },
    /// A container was allocated; the driver launches it.
    Allocated {
        /// The application.
        app: AppId,
        /// The new container.
        container: ContainerId,
        /// Where.
        node: NodeId,
        /// Its size.
        resources: Resource,
        /// How local the placement is.
        locality: Locality,
        /// Whether this is the application's AM container.
        am: bool,
        /// The request priority it satisfied.
        priority: i32,
        /// The tag of the ask it satisfied ([`AskTag::NONE`] for an AM container).
        tag: AskTag,
    },
    /// A container ended; the driver stops it if it still runs.
    Completed {
        /// The application.
        app: AppId,
        /// The container.
        container: ContainerId,
        /// Why.
        exit: ContainerExit,
        /// The status the driver's `Event::ContainerCompleted` carried; `None` when the
        /// scheduler ended the container itself (its app or node left, a release, a new
        /// attempt, a preemption), except a foreign container killed at its resource pool's
        /// `foreignContainerTimeout`: `exit` is `Preempted`, no `Decision::Preempted` comes
        /// first, and this carries YARN's PREEMPTED status with the host-move diagnostic.
        status: Option<ExitStatus>,
    },
    /// A container was marked for preemption (preemption spec A.7, B.6): its app sees it in
    /// [`Scheduler::preemption_contract`](crate::Scheduler::preemption_contract) until it
    /// ends; it is killed at `kill_at` (targeted) or at a later round (global) unless the app
    /// gives it back first.
    PreemptWarning {
        /// The application that will lose the container.
        app: AppId,
        /// The container.
        container: ContainerId,
        /// Where it runs.
        node: NodeId,
        /// The starved application it is taken for (targeted strategy only).
        for_app: Option<AppId>,
        /// When it will be killed (targeted strategy only; global kills it in a later round).
        kill_at: Option<Time>,
    },
    /// A container was preempted. The scheduler has already freed it and a
    /// `Completed { exit: ContainerExit::Preempted, .. }` for it follows at once; this
    /// decision carries what only preemption knows.
    Preempted {
        /// The application that lost it.
        app: AppId,
        /// The container.
        container: ContainerId,
        /// Where it ran.
        node: NodeId,
        /// Its size.
        resources: Resource,
        /// Whether it was the app's AM container.
        am: bool,
        /// The leaf queue it was taken for (targeted: the starved app's queue; global: the
        /// leaf with the largest deficit in the round that warned it).
        for_queue: String,
    },
    /// A gang changed state (see [`GangChange`]).
    Gang {
        /// The application.
        app: AppId,
        /// The gang's id.
        gang: u64,
        /// What happened.
        change: GangChange,
    },
    /// The plan follower took an application out of an ended reservation's leaf: moved it to
    /// the plan's `<plan>-default` (`moved_to`), or killed it (`moved_to: None`: move on
    /// expiry is off, or the move was refused; its containers' `Completed` came first).
    ReservationEnded {
        /// The application.
        app: AppId,
        /// The reservation's leaf (removed).
        queue: String,
        /// Where it went, if it was moved.
        moved_to: Option<String>,
    },
    /// A node was reserved for an application's ask that does not fit there yet.
    Reserved {
        /// The application.
        app: AppId,
        /// The node.
        node: NodeId,
        /// The reserved size.
        resources: Resource,
    },
}

/// Where a submission went, as [`Scheduler::submit`](crate::Scheduler::submit) returns it to
/// its caller (the same outcome is queued as `Decision::Accepted` or `Decision::Rejected`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Placed in `queue` (its full name).
    Accepted {
        /// Full queue name.
        queue: String,
    },
    /// Refused: `reason` in words a person can act on, `code` stable.
    Rejected {
        /// Why.
        reason: String,
        /// Why, as a stable code.
        code: RejectCode,
    },
}

/// Errors of `Scheduler::handle`. A refused event leaves the state exactly as it was.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SchedError {
    /// The event names an application the scheduler does not know (or no longer runs).
    #[error("unknown application {0}")]
    UnknownApp(AppId),
    /// The event names a node the scheduler does not know.
    #[error("unknown node {0}")]
    UnknownNode(NodeId),
    /// A node was refused (its capability would overflow the cluster's total).
    #[error("node {node} refused: {reason}")]
    InvalidNode {
        /// The node.
        node: NodeId,
        /// Why.
        reason: String,
    },
    /// The event names a container the scheduler does not know.
    #[error("unknown container {0}")]
    UnknownContainer(ContainerId),
    /// An id was used twice.
    #[error("{0} already exists")]
    Duplicate(String),
    /// A move was refused.
    #[error("cannot move {app} to {queue}: {reason}")]
    MoveRefused {
        /// The application.
        app: AppId,
        /// The target as given.
        queue: String,
        /// Why.
        reason: String,
    },
    /// A kill was refused.
    #[error("{user} may not kill {app}: {reason}")]
    KillRefused {
        /// The application.
        app: AppId,
        /// Who asked.
        user: String,
        /// Why.
        reason: String,
    },
    /// A new configuration was refused; the old one stays.
    #[error("configuration refused: {0}")]
    ConfigRefused(String),
    /// A plan's reservations were refused (`Event::PlanChanged`); the plan stays as it was.
    #[error("plan of queue {queue} refused: {reason}")]
    PlanRefused {
        /// The plan queue as given.
        queue: String,
        /// Why.
        reason: String,
    },
    /// An ask is invalid (e.g. it asks for a type the queue may never have).
    #[error("invalid ask for {app}: {reason}")]
    InvalidAsk {
        /// The application.
        app: AppId,
        /// Why.
        reason: String,
    },
    /// A blacklist update is invalid (it lists `*`, Hadoop's
    /// InvalidResourceBlacklistRequestException).
    #[error("invalid blacklist update for {app}: {reason}")]
    InvalidBlacklist {
        /// The application.
        app: AppId,
        /// Why.
        reason: String,
    },

    /// A recovered container was refused (it does not fit its node, or its app already has
    /// its AM).
    #[error("cannot recover {container} of {app}: {reason}")]
    RecoveryRefused {
        /// The container.
        container: ContainerId,
        /// Its application.
        app: AppId,
        /// Why.
        reason: String,
    },
}

/// A read-only picture of the scheduler's state, plain data for outputs, REST and UI.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Sum of node capabilities.
    pub cluster_capacity: Resource,
    /// Sum of allocated containers.
    pub cluster_used: Resource,
    /// Sum of outstanding asks (ANY level) of all applications.
    pub cluster_pending: Resource,
    /// Every queue, in tree (depth-first, name) order.
    pub queues: Vec<QueueSnapshot>,
    /// Every live application, by id.
    pub apps: Vec<AppSnapshot>,
    /// Every node, by id.
    pub nodes: Vec<NodeSnapshot>,
}

/// What applications ask for and nodes hold reserved, summed over the cluster: the figures of
/// a [`Snapshot`] that metrics read often, without building one (no strings cloned).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PendingSummary {
    /// Sum of outstanding asks (ANY level) of all applications.
    pub pending: Resource,
    /// Containers asked for and not yet allocated.
    pub pending_containers: u64,
    /// Nodes holding a reservation.
    pub reserved_nodes: u64,
    /// Resources those reservations hold.
    pub reserved: Resource,
}

/// One queue in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSnapshot {
    /// Full name.
    pub name: String,
    /// Leaf or parent.
    pub leaf: bool,
    /// Policy name.
    pub policy: &'static str,
    /// Weight.
    pub weight: f64,
    /// Instantaneous fair share (as of the last update).
    pub fair_share: Resource,
    /// Steady fair share.
    pub steady_fair_share: Resource,
    /// Current usage.
    pub usage: Resource,
    /// Demand (as of the last update).
    pub demand: Resource,
    /// Min share.
    pub min_resources: Resource,
    /// Max share, resolved against the cluster.
    pub max_resources: Resource,
    /// AM usage (leaves).
    pub am_usage: Resource,
    /// Runnable apps (subtree for parents).
    pub running_apps: usize,
    /// Non-runnable apps (subtree for parents).
    pub pending_apps: usize,
    /// Whether the queue was declared in the allocation file.
    pub configured: bool,
    /// The largest container an app of the queue may ask for: `maxContainerAllocation`, own
    /// or inherited, capped by the scheduler's maximum allocation.
    pub max_container_allocation: Resource,
    /// Preemption settings and min-share starvation (Fair Scheduler only).
    pub starvation: Option<QueueStarvation>,
    /// Containers preempted from the queue's apps (the subtree's for a parent) since the
    /// scheduler started (Hadoop's `AggregateContainersPreempted`).
    pub preempted_containers: u64,
}

/// A Capacity Scheduler queue's figures as Hadoop's REST API reports them (capacity spec §9);
/// percentages are 0-100.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityQueueDetails {
    /// Full name.
    pub name: String,
    /// Configured capacity, percent of the parent.
    pub capacity: f64,
    /// Maximum capacity, percent of the parent.
    pub max_capacity: f64,
    /// Capacity, percent of the cluster.
    pub absolute_capacity: f64,
    /// Maximum capacity, percent of the cluster.
    pub absolute_max_capacity: f64,
    /// Usage, percent of the queue's guaranteed resources (may exceed 100).
    pub used_capacity: f64,
    /// Usage, percent of the cluster.
    pub absolute_used_capacity: f64,
    /// `RUNNING`, `DRAINING` or `STOPPED`.
    pub state: &'static str,
    /// The guaranteed resources (`effMin`).
    pub effective_min: Resource,
    /// The elastic limit (`effMax`).
    pub effective_max: Resource,
    /// Leaves: each user with apps in the queue.
    pub users: Vec<CapacityUserDetails>,
    /// Leaves: the current per-user limit before user weights.
    pub user_limit: Option<Resource>,
    /// Leaves: the queue's AM resource limit.
    pub am_limit: Option<Resource>,
    /// Leaves: the AM limit of a user (the first listed user's, else of a new user).
    pub user_am_limit: Option<Resource>,
    /// Leaves: the most applications the queue accepts.
    pub max_applications: Option<i64>,
    /// Leaves: the most applications one user may have in the queue.
    pub max_applications_per_user: Option<i64>,
    /// Resources held in reservations on nodes (included in the used capacities).
    pub reserved: Resource,
    /// AM resources of the queue's activated apps (the subtree's for a parent).
    pub am_used: Resource,
    /// Applications activated (running) in the queue (the subtree's for a parent).
    pub active_apps: usize,
    /// Applications waiting for activation (AM limits) in the queue (the subtree's for a
    /// parent).
    pub pending_apps: usize,
    /// Inter-queue preemption never takes from the queue: the scheduling monitor is off (or
    /// runs without the capacity preemption policy) or the queue sets `disable_preemption`.
    pub preemption_disabled: bool,
    /// What the queue uses, reservations included (the subtree's for a parent).
    pub used: Resource,
    /// Outstanding demand beyond usage (as of the last update).
    pub pending: Resource,
    /// The queue's figures in each labeled partition it can access, by label (these figures
    /// are DEFAULT's); empty without node labels.
    pub by_partition: Vec<(String, CapacityQueueDetails)>,
}

/// One user of a Capacity Scheduler leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityUserDetails {
    /// The user.
    pub user: String,
    /// What the user's apps in the queue use.
    pub usage: Resource,
    /// Activated apps.
    pub running_apps: usize,
    /// Apps waiting for activation (AM limits).
    pub pending_apps: usize,
    /// The user's own limit (the queue's user limit times the user's weight).
    pub user_limit: Resource,
    /// AM resources of the user's activated apps.
    pub am_used: Resource,
    /// Some app of the user has outstanding asks (counts as an active user).
    pub active: bool,
    /// The user's weight (`user-settings.<user>.weight`, default 1).
    pub weight: f64,
}

/// A queue's preemption settings (effective, after inheritance) and, for a leaf, its
/// min-share starvation as of the last update that evaluated it (only updates with
/// preemption on and the cluster's utilization above the threshold do).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueStarvation {
    /// `minSharePreemptionTimeout` in ms; `i64::MAX` means never.
    pub min_share_preemption_timeout_ms: i64,
    /// `fairSharePreemptionTimeout` in ms; `i64::MAX` means never.
    pub fair_share_preemption_timeout_ms: i64,
    /// `fairSharePreemptionThreshold`.
    pub fair_share_preemption_threshold: f32,
    /// Whether containers may be preempted from it (`allowPreemptionFrom` of it and every
    /// ancestor).
    pub preemptable: bool,
    /// Leaves: the last time it was at `min(min share, demand)` (Hadoop's
    /// `lastTimeAtMinShare`); it is min-share starved once this is older than the timeout.
    /// `None` for parents and before the first update with preemption on.
    pub at_min_share_since: Option<Time>,
    /// Leaves: how far usage is below `min(min share, demand)` once that has lasted longer
    /// than the timeout; zero otherwise.
    pub min_share_starvation: Resource,
    /// Leaves: the sum of its apps' fair-share starvation.
    pub fair_share_starvation: Resource,
}

/// An application's starvation (Fair Scheduler only; Hadoop 3.x's per-attempt figures).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AppStarvation {
    /// How far usage is below `min(fair share x threshold, demand)` once that has lasted
    /// longer than the leaf's fair-share timeout; zero otherwise.
    pub fair_share_starvation: Resource,
    /// Its part of the leaf's min-share starvation.
    pub min_share_starvation: Resource,
    /// Hadoop's `isStarved`: usage below its fair share now, or some min-share starvation.
    pub starved: bool,
    /// The last time it was at its fair-share threshold (Hadoop's `lastTimeAtFairShare`;
    /// its start time until first evaluated).
    pub at_fair_share_since: Time,
    /// The last update that found it starved (offered it to the preemption pass).
    pub identified_at: Option<Time>,
    /// Not evaluated again before this time.
    pub next_starvation_check: Time,
    /// Whether its AM container may be preempted (`yarn.scheduler.fair.am.preemption`).
    pub am_preemption: bool,
}

/// One application in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq)]
pub struct AppSnapshot {
    /// The application.
    pub app: AppId,
    /// Its leaf queue.
    pub queue: String,
    /// Its user.
    pub user: String,
    /// `running` or `pending` (waiting for maxRunningApps).
    pub runnable: bool,
    /// Current usage.
    pub usage: Resource,
    /// Demand (as of the last update).
    pub demand: Resource,
    /// Instantaneous fair share.
    pub fair_share: Resource,
    /// Running containers.
    pub running_containers: usize,
    /// Outstanding container asks.
    pub pending_containers: u64,
    /// Whether the AM container runs.
    pub am_running: bool,
    /// Starvation (Fair Scheduler only).
    pub starvation: Option<AppStarvation>,
}

/// One leaf queue's figures, as [`Scheduler::visit_leaf_queues`](crate::Scheduler::visit_leaf_queues) reports them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafQueueStats<'a> {
    /// Full name.
    pub name: &'a str,
    /// Instantaneous fair share (as of the last update).
    pub fair_share: Resource,
    /// What an app's `queueUsagePercentage` is a share of: the fair share under Fair and
    /// FIFO, the queue's effective (guaranteed) capacity under Capacity (Hadoop's
    /// `FiCaSchedulerApp::getResourceUsageReport`).
    pub app_usage_basis: Resource,
    /// Current usage.
    pub usage: Resource,
    /// Demand (as of the last update; capped at the max share, as Hadoop does).
    pub demand: Resource,
    /// Max share, resolved against the cluster.
    pub max_resources: Resource,
    /// Runnable apps.
    pub running_apps: usize,
    /// The queue's resource pool (`""`: DEFAULT, or no pools).
    pub pool: &'a str,
}

/// One resource pool's figures, as [`Scheduler::pool_stats`](crate::Scheduler::pool_stats)
/// reports them (resource-pools spec §7's per-partition accounting).
#[derive(Clone, Debug, PartialEq)]
pub struct PoolStats {
    /// The pool's name (`""`: DEFAULT, the nodes in no pool).
    pub name: String,
    /// Its nodes.
    pub nodes: u32,
    /// Their total resources.
    pub capacity: Resource,
    /// What they have allocated.
    pub used: Resource,
    /// What its leaf queues ask beyond their usage (demand as of the last update).
    pub pending: Resource,
    /// The part of `used` held by foreign containers (apps of other pools left on its nodes
    /// by a host move).
    pub foreign_used: Resource,
}

/// One node in a [`Snapshot`].
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSnapshot {
    /// The node.
    pub node: NodeId,
    /// Host name.
    pub host: String,
    /// Rack.
    pub rack: String,
    /// Total resources.
    pub capacity: Resource,
    /// Allocated resources.
    pub used: Resource,
    /// The reservation held on the node, if any.
    pub reserved: Option<(AppId, Resource)>,
}

/// Shared immutable configuration handle.
pub type ConfigHandle = Arc<SchedulerConfig>;

/// Cluster-wide properties every scheduler shares: how asks are normalized and which resource
/// types exist (yarn-site's `yarn.scheduler.{minimum,maximum,increment}-allocation-*` and the
/// resource-type registry).
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterProperties {
    /// The smallest container.
    pub minimum_allocation: Resource,
    /// The largest container.
    pub maximum_allocation: Resource,
    /// Asks are rounded up to a multiple of this.
    pub increment_allocation: Resource,
    /// The resource types in use.
    pub resource_types: weft_types::ResourceTypes,
    /// `weft.reservation.packability-check` (default true): a gang ask whose members cannot
    /// be packed on the nodes' capacities is refused at admission; off, it is admitted on the
    /// aggregate alone and waits for room.
    pub gang_packability_check: bool,
}

impl ClusterProperties {
    /// The cluster-wide part of the yarn-site properties.
    pub fn from_site(properties: &SchedulerProperties) -> ClusterProperties {
        ClusterProperties {
            minimum_allocation: properties.minimum_allocation,
            maximum_allocation: properties.maximum_allocation,
            increment_allocation: properties.increment_allocation,
            resource_types: properties.resource_types.clone(),
            gang_packability_check: properties.reservation_packability_check,
        }
    }
}

/// A queue right, for checks the RM makes on requests the scheduler does not judge itself
/// (who may move an application where).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueAccess {
    /// May submit applications: `aclSubmitApps` or `aclAdministerApps` of the queue or a parent.
    Submit,
    /// May administer applications: `aclAdministerApps` of the queue or a parent.
    Administer,
}

/// How the heartbeat walk finds its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkMode {
    /// Incrementally maintained candidate sets and aggregates (the production path).
    Fast,
    /// The textbook walk: sort every level with the comparator, recompute usage by recursion.
    Reference,
}

/// Sizes (bytes) of the scheduler's hot structures, as compiled for the scheduler running,
/// and how often the heartbeat walks reached them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// One application attempt (requests for up to two scheduler keys inline).
    pub app_bytes: usize,
    /// Its hot part: the fields before the rarely read ones (`App` is laid out in
    /// declaration order, hot first; the user comes first of the cold ones).
    pub app_hot_bytes: usize,
    /// One queue (with its candidate set's header; the set's entries are apart).
    pub queue_bytes: usize,
    /// Its hot part: the fields the walk, the re-keys and the usage upkeep read (`Queue` is
    /// laid out in declaration order; `runnable_count` starts the cold ones).
    pub queue_hot_bytes: usize,
    /// One request with its scheduler key (an app holds two inline, more on the heap).
    pub request_bytes: usize,
    /// One node.
    pub node_bytes: usize,
    /// One running container.
    pub container_bytes: usize,
    /// A candidate set's header (its entries are in separate heap vectors).
    pub candidate_set_bytes: usize,
    /// One resource vector.
    pub resource_bytes: usize,
    /// The engine itself (the scheduler's shared state and its rules' state).
    pub engine_bytes: usize,
    /// Walks from the root so far (one per container assigned, plus the one per heartbeat
    /// that finds nothing more).
    pub walks: u64,
    /// Queues the walks entered (root included).
    pub queues_visited: u64,
    /// Apps the walks offered the node to (each a read of the app and its requests).
    pub apps_visited: u64,
}

/// A verification round done in slices (`Scheduler::verify_slice`): what it found so far and
/// where it stands. A driver starts one with `VerifyRound::default()` and hands it to every
/// slice until the round is done; events may come between two slices (each slice checks whole
/// entities as they are then).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyRound {
    /// The differences found so far, in words (empty: consistent so far).
    pub drift: Vec<String>,
    /// Where the round stands: the scheduler's business, a driver leaves it alone.
    pub cursor: VerifyCursor,
}

/// Where a [`VerifyRound`] stands: which engine (node partition), which of its phases, and the
/// next table slot to check in that phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyCursor {
    /// The engine: 0 is the only one, or the default partition; then each labeled one.
    pub part: u32,
    /// The engine's phase (the engine's own numbering).
    pub phase: u32,
    /// The next slot of the phase's table.
    pub slot: u32,
}

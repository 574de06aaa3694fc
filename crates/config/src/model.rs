//! The typed configuration: what a valid allocation file and yarn-site properties mean.
//!
//! Values not set in a file are `None` here; the scheduler applies Hadoop's inheritance and
//! defaults when it builds its queues, so that "unset" and "set to the default" stay distinct.

use std::collections::{BTreeMap, BTreeSet};
use weft_types::{Resource, ResourceTypes, MAX_RESOURCE_TYPES, MEMORY, VCORES};

/// A resource amount as configured: absolute, or a fraction of the cluster resolved at use time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConfiguredResource {
    /// Fixed amounts.
    Absolute(Resource),
    /// A fraction (0.0..) of the cluster per resource type, e.g. `50% memory, 25% cpu`.
    Percent([f64; MAX_RESOURCE_TYPES]),
}

impl ConfiguredResource {
    /// Every type unbounded.
    pub const UNBOUNDED: ConfiguredResource = ConfiguredResource::Absolute(Resource::UNBOUNDED);

    /// The amounts against the current cluster capacity (percentages truncate, as Hadoop does).
    pub fn resolve(&self, cluster: Resource) -> Resource {
        match self {
            ConfiguredResource::Absolute(r) => *r,
            ConfiguredResource::Percent(fractions) => {
                let mut out = Resource::ZERO;
                for (i, f) in fractions.iter().enumerate() {
                    out.set(i, (cluster.get(i) as f64 * f) as i64);
                }
                out
            }
        }
    }
}

/// A queue's scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyKind {
    /// Fair sharing of memory (`fair`, Hadoop's FairSharePolicy), the default.
    Fair,
    /// Dominant resource fairness (`drf`).
    Drf,
    /// First in, first out (`fifo`); leaf queues only.
    Fifo,
}

impl PolicyKind {
    /// Parses a policy name the way Hadoop does: the short names in any case, or the full class
    /// name of one of the three built-in policies.
    pub fn parse(text: &str) -> Option<PolicyKind> {
        const PKG: &str = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.";
        let t = text.trim();
        match t.to_ascii_lowercase().as_str() {
            "fair" => return Some(PolicyKind::Fair),
            "drf" => return Some(PolicyKind::Drf),
            "fifo" => return Some(PolicyKind::Fifo),
            _ => {}
        }
        match t.strip_prefix(PKG) {
            Some("FairSharePolicy") => Some(PolicyKind::Fair),
            Some("DominantResourceFairnessPolicy") => Some(PolicyKind::Drf),
            Some("FifoPolicy") => Some(PolicyKind::Fifo),
            _ => None,
        }
    }

    /// The short name (`fair`, `drf`, `fifo`).
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Fair => "fair",
            PolicyKind::Drf => "drf",
            PolicyKind::Fifo => "fifo",
        }
    }

    /// Whether a queue with this policy may have a child with policy `child` (spec §5).
    pub fn allows_child(self, child: PolicyKind, child_is_leaf: bool) -> bool {
        match (self, child) {
            (PolicyKind::Fifo, _) => false,
            (PolicyKind::Fair, PolicyKind::Drf) => false,
            (_, PolicyKind::Fifo) => child_is_leaf,
            _ => true,
        }
    }
}

/// An access control list: "user1,user2 group1,group2", `*` for everyone, " " for no one.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Acl {
    /// Everyone is allowed (`*`).
    pub everyone: bool,
    /// Allowed user names.
    pub users: BTreeSet<String>,
    /// Allowed group names.
    pub groups: BTreeSet<String>,
}

impl Acl {
    /// The ACL that allows everyone.
    pub fn everyone() -> Acl {
        Acl {
            everyone: true,
            ..Acl::default()
        }
    }

    /// The ACL that allows no one.
    pub fn nobody() -> Acl {
        Acl::default()
    }

    /// Parses Hadoop's ACL syntax. The text is NOT trimmed: a leading space means "no users,
    /// these groups", and a single space means no one.
    pub fn parse(text: &str) -> Acl {
        if text.trim() == "*" {
            return Acl::everyone();
        }
        let (users, groups) = match text.split_once(' ') {
            Some((u, g)) => (u, g),
            None => (text, ""),
        };
        let list = |s: &str| -> BTreeSet<String> {
            s.split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        Acl {
            everyone: false,
            users: list(users),
            groups: list(groups),
        }
    }

    /// Whether `user` (member of `groups`) is allowed.
    pub fn allows(&self, user: &str, groups: &[String]) -> bool {
        self.everyone || self.users.contains(user) || groups.iter().any(|g| self.groups.contains(g))
    }
}

/// One `<queue>` (or `<pool>`) element of the allocation file. Every field is as written;
/// `None` means "not set here" (inherit or default).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct QueueConfig {
    /// Full name, always starting with `root` (e.g. `root.a.b`).
    pub name: String,
    /// Declared a parent (`type="parent"`, nested queues, or a reservation plan queue).
    pub is_parent: bool,
    /// `minResources`: missing types are 0.
    pub min_resources: Option<Resource>,
    /// `maxResources`: missing types are unbounded.
    pub max_resources: Option<ConfiguredResource>,
    /// `maxChildResources`: default max share of dynamically created children.
    pub max_child_resources: Option<ConfiguredResource>,
    /// `maxRunningApps`.
    pub max_running_apps: Option<i32>,
    /// `maxAMShare`, already capped at 1.0; -1 disables the check.
    pub max_am_share: Option<f32>,
    /// `maxContainerAllocation`.
    pub max_container_allocation: Option<ConfiguredResource>,
    /// `weight`.
    pub weight: Option<f32>,
    /// `minSharePreemptionTimeout`, in milliseconds.
    pub min_share_preemption_timeout_ms: Option<i64>,
    /// `fairSharePreemptionTimeout`, in milliseconds.
    pub fair_share_preemption_timeout_ms: Option<i64>,
    /// `fairSharePreemptionThreshold`, clamped to [0, 1].
    pub fair_share_preemption_threshold: Option<f32>,
    /// `schedulingPolicy` / `schedulingMode`.
    pub scheduling_policy: Option<PolicyKind>,
    /// `aclSubmitApps`.
    pub acl_submit_apps: Option<Acl>,
    /// `aclAdministerApps`.
    pub acl_administer_apps: Option<Acl>,
    /// `aclAdministerReservations`, kept for the reservation system.
    pub acl_administer_reservations: Option<Acl>,
    /// `aclListReservations`.
    pub acl_list_reservations: Option<Acl>,
    /// `aclSubmitReservations`.
    pub acl_submit_reservations: Option<Acl>,
    /// `<reservation/>`: a reservable (plan) queue.
    pub reservation: bool,
    /// `allowPreemptionFrom`.
    pub allow_preemption_from: Option<bool>,
    /// `<resourcePool>`: the pool this queue and its descendants are bound to explicitly.
    pub resource_pool: Option<String>,
    /// Line of the element in the file (for messages produced later, e.g. policy conflicts).
    pub line: u32,
}

/// The placement rule types of `queuePlacementPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlacementRuleKind {
    /// `specified`: the queue named at submission.
    Specified,
    /// `user`: a queue named after the user.
    User,
    /// `primaryGroup`: a queue named after the user's primary group.
    PrimaryGroup,
    /// `secondaryGroupExistingQueue`: the first existing queue named after one of the user's groups.
    SecondaryGroupExistingQueue,
    /// `nestedUserQueue`: a user queue under the queue its nested rule chooses.
    NestedUserQueue,
    /// `default`: a fixed queue (attribute `queue`, default `root.default`).
    Default,
    /// `reject`: refuse the application.
    Reject,
}

impl PlacementRuleKind {
    /// Parses a rule's `name` attribute (case-sensitive, as in Hadoop's rule factory).
    pub fn parse(name: &str) -> Option<PlacementRuleKind> {
        Some(match name {
            "specified" => PlacementRuleKind::Specified,
            "user" => PlacementRuleKind::User,
            "primaryGroup" => PlacementRuleKind::PrimaryGroup,
            "secondaryGroupExistingQueue" => PlacementRuleKind::SecondaryGroupExistingQueue,
            "nestedUserQueue" => PlacementRuleKind::NestedUserQueue,
            "default" => PlacementRuleKind::Default,
            "reject" => PlacementRuleKind::Reject,
            _ => return None,
        })
    }

    /// The rule's name as written in the file.
    pub fn name(self) -> &'static str {
        match self {
            PlacementRuleKind::Specified => "specified",
            PlacementRuleKind::User => "user",
            PlacementRuleKind::PrimaryGroup => "primaryGroup",
            PlacementRuleKind::SecondaryGroupExistingQueue => "secondaryGroupExistingQueue",
            PlacementRuleKind::NestedUserQueue => "nestedUserQueue",
            PlacementRuleKind::Default => "default",
            PlacementRuleKind::Reject => "reject",
        }
    }
}

/// One `<rule>` of a placement policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementRule {
    /// Which rule.
    pub kind: PlacementRuleKind,
    /// The `create` attribute (default true).
    pub create: bool,
    /// The `queue` attribute of a `default` rule, root-prefixed (`root.default` when absent).
    pub queue: Option<String>,
    /// The nested parent rule, if any.
    pub parent: Option<Box<PlacementRule>>,
}

impl PlacementRule {
    /// Whether evaluation can never continue past this rule (spec §12.1).
    pub fn is_terminal(&self) -> bool {
        match self.kind {
            PlacementRuleKind::Specified | PlacementRuleKind::SecondaryGroupExistingQueue => false,
            PlacementRuleKind::User | PlacementRuleKind::PrimaryGroup => {
                self.create && self.parent.as_ref().is_none_or(|p| p.is_terminal())
            }
            PlacementRuleKind::NestedUserQueue => {
                self.create && self.parent.as_ref().is_some_and(|p| p.is_terminal())
            }
            PlacementRuleKind::Default => self.create,
            PlacementRuleKind::Reject => true,
        }
    }

    /// The policy used when the allocation file has no `queuePlacementPolicy` (spec §12.3).
    pub fn default_policy(
        allow_undeclared_pools: bool,
        user_as_default_queue: bool,
    ) -> Vec<PlacementRule> {
        let rule = |kind, create| PlacementRule {
            kind,
            create,
            queue: None,
            parent: None,
        };
        let mut rules = vec![rule(PlacementRuleKind::Specified, allow_undeclared_pools)];
        if user_as_default_queue {
            rules.push(rule(PlacementRuleKind::User, allow_undeclared_pools));
        }
        if !user_as_default_queue || !allow_undeclared_pools {
            rules.push(rule(PlacementRuleKind::Default, true));
        }
        rules
    }
}

/// A whole allocation file (`fair-scheduler.xml`), validated.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocationConfig {
    /// Every declared queue by full name (`root.a.b`), parents before children in name order.
    /// `root` and `root.default` appear only if the file declares them.
    pub queues: BTreeMap<String, QueueConfig>,
    /// `<user name="..."><maxRunningApps>`.
    pub user_max_apps: BTreeMap<String, i32>,
    /// `userMaxAppsDefault`.
    pub user_max_apps_default: i32,
    /// `queueMaxAppsDefault`.
    pub queue_max_apps_default: i32,
    /// `queueMaxResourcesDefault`.
    pub queue_max_resources_default: ConfiguredResource,
    /// `queueMaxAMShareDefault` (capped at 1.0).
    pub queue_max_am_share_default: f32,
    /// `defaultFairSharePreemptionTimeout` (or legacy `fairSharePreemptionTimeout`), ms.
    pub default_fair_share_preemption_timeout_ms: i64,
    /// `defaultMinSharePreemptionTimeout`, ms.
    pub default_min_share_preemption_timeout_ms: i64,
    /// `defaultFairSharePreemptionThreshold`, clamped to [0, 1].
    pub default_fair_share_preemption_threshold: f32,
    /// `defaultQueueSchedulingPolicy` (never `fifo`).
    pub default_queue_scheduling_policy: PolicyKind,
    /// `queuePlacementPolicy`, when the file has one.
    pub placement_policy: Option<Vec<PlacementRule>>,
    /// `reservation-agent`, for every reservable queue (unset: Hadoop's default,
    /// `AlignedPlannerWithGreedy`).
    pub reservation_agent: Option<crate::reservation::ReservationAgentKind>,
    /// `reservation-policy` (unset: `CapacityOverTimePolicy`).
    pub reservation_policy: Option<crate::reservation::SharingPolicyKind>,
    /// `reservation-planner` (unset: `SimpleCapacityReplanner`).
    pub reservation_planner: Option<crate::reservation::ReplannerKind>,
    /// `<resourcePools>`, when the file declares them (resource pools are off otherwise).
    pub resource_pools: Option<crate::pools::ResourcePools>,
}

impl Default for AllocationConfig {
    fn default() -> Self {
        AllocationConfig {
            queues: BTreeMap::new(),
            user_max_apps: BTreeMap::new(),
            user_max_apps_default: i32::MAX,
            queue_max_apps_default: i32::MAX,
            queue_max_resources_default: ConfiguredResource::UNBOUNDED,
            queue_max_am_share_default: 0.5,
            default_fair_share_preemption_timeout_ms: i64::MAX,
            default_min_share_preemption_timeout_ms: i64::MAX,
            default_fair_share_preemption_threshold: 0.5,
            default_queue_scheduling_policy: PolicyKind::Fair,
            placement_policy: None,
            reservation_agent: None,
            reservation_policy: None,
            reservation_planner: None,
            resource_pools: None,
        }
    }
}

/// Which scheduler the ResourceManager runs (`yarn.resourcemanager.scheduler.class`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchedulerKind {
    /// `org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler` (Weft's
    /// default; Hadoop's is the Capacity Scheduler).
    #[default]
    Fair,
    /// `org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler`.
    Capacity,
    /// `org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler`.
    Fifo,
}

impl SchedulerKind {
    /// Hadoop's class name of the scheduler.
    pub fn class_name(self) -> &'static str {
        match self {
            SchedulerKind::Fair => {
                "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
            }
            SchedulerKind::Capacity => {
                "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
            }
            SchedulerKind::Fifo => {
                "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler"
            }
        }
    }

    /// The short name (`fair`, `capacity`, `fifo`).
    pub fn short_name(self) -> &'static str {
        match self {
            SchedulerKind::Fair => "fair",
            SchedulerKind::Capacity => "capacity",
            SchedulerKind::Fifo => "fifo",
        }
    }

    /// A Hadoop class name or a short name (`fair`, `capacity`, `fifo`, any case).
    pub fn parse(text: &str) -> Result<SchedulerKind, String> {
        let text = text.trim();
        for kind in [
            SchedulerKind::Fair,
            SchedulerKind::Capacity,
            SchedulerKind::Fifo,
        ] {
            if text == kind.class_name() || text.eq_ignore_ascii_case(kind.short_name()) {
                return Ok(kind);
            }
        }
        Err(format!(
            "unknown scheduler '{text}': expected fair, capacity, fifo or one of Hadoop's class names ({}, {}, {})",
            SchedulerKind::Fair.class_name(),
            SchedulerKind::Capacity.class_name(),
            SchedulerKind::Fifo.class_name()
        ))
    }
}

/// How the Fair Scheduler preempts (`weft.scheduler.fair.preemption.strategy`; preemption spec §0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PreemptionStrategy {
    /// Hadoop 3.x: containers are taken for one starved app, on a node where freeing them
    /// makes room for its request, and the freed room is earmarked for it.
    #[default]
    Targeted,
    /// Hadoop 2.7: the summed deficit of starved leaves is taken from the queues the
    /// policies rank most over their share, one container at a time.
    Global,
}

impl PreemptionStrategy {
    /// The property's value for this strategy.
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionStrategy::Targeted => "targeted",
            PreemptionStrategy::Global => "global",
        }
    }

    /// Reads the property's value (surrounding blanks and case ignored).
    pub fn parse(text: &str) -> Result<PreemptionStrategy, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "targeted" => Ok(PreemptionStrategy::Targeted),
            "global" => Ok(PreemptionStrategy::Global),
            _ => Err(format!(
                "unknown preemption strategy '{}': expected targeted or global",
                text.trim()
            )),
        }
    }
}

/// What a Fair reservation leaf is given (`weft.reservation.enforce`; time-aware-demands spec
/// §3.3 "Queue carrier", B7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReservationEnforcement {
    /// Hadoop's Fair follower: the leaf's weight is reserved ÷ plan, nothing more, so the
    /// reservation holds only as far as fair-share convergence and preemption bring it.
    #[default]
    Hadoop,
    /// Weft: the leaf also has a min share of reserved(now), with a min-share preemption
    /// timeout of 0, so preemption (when on) takes the reserved amount back from queues over
    /// their share at the next update.
    Guarantee,
}

impl ReservationEnforcement {
    /// The property's value for this mode.
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationEnforcement::Hadoop => "hadoop",
            ReservationEnforcement::Guarantee => "guarantee",
        }
    }

    /// Reads the property's value (surrounding blanks and case ignored).
    pub fn parse(text: &str) -> Result<ReservationEnforcement, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "hadoop" => Ok(ReservationEnforcement::Hadoop),
            "guarantee" => Ok(ReservationEnforcement::Guarantee),
            _ => Err(format!(
                "unknown reservation enforcement '{}': expected hadoop or guarantee",
                text.trim()
            )),
        }
    }
}

/// The scheduler's yarn-site.xml properties (spec §14.4), with Hadoop's defaults: which
/// scheduler runs, the cluster-wide allocation limits and resource types, and the Fair
/// Scheduler's own properties.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerProperties {
    /// `yarn.resourcemanager.scheduler.class`.
    pub scheduler_kind: SchedulerKind,
    /// `yarn.scheduler.fair.allocation.file`.
    pub allocation_file: String,
    /// `yarn.scheduler.fair.allow-undeclared-pools`.
    pub allow_undeclared_pools: bool,
    /// `yarn.scheduler.fair.user-as-default-queue`.
    pub user_as_default_queue: bool,
    /// `yarn.scheduler.fair.preemption`.
    pub preemption: bool,
    /// `yarn.scheduler.fair.preemption.cluster-utilization-threshold`.
    pub preemption_cluster_utilization_threshold: f32,
    /// `yarn.scheduler.fair.waitTimeBeforeKill`, ms.
    pub wait_time_before_kill_ms: i64,
    /// `yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck`, ms (targeted strategy).
    pub wait_time_before_next_starvation_check_ms: i64,
    /// `weft.scheduler.fair.preemption.strategy` (Weft only): Hadoop 3.x's or 2.7's algorithm.
    pub preemption_strategy: PreemptionStrategy,
    /// `yarn.scheduler.fair.preemptionInterval`, ms: the least gap between two preemption
    /// checks of the global strategy (Hadoop 2.x; 3.x dropped it).
    pub preemption_interval_ms: i64,
    /// `yarn.scheduler.fair.am.preemption`: whether AM containers may be preempted, for
    /// queues without their own entry in `am_preemption`.
    pub am_preemption_default: bool,
    /// `yarn.scheduler.fair.am.preemption.<queue>` entries that were set (they win over
    /// `am_preemption_default`).
    pub am_preemption: BTreeMap<String, bool>,
    /// `yarn.scheduler.fair.assignmultiple`.
    pub assign_multiple: bool,
    /// `yarn.scheduler.fair.dynamic.max.assign`.
    pub dynamic_max_assign: bool,
    /// `yarn.scheduler.fair.max.assign`.
    pub max_assign: i32,
    /// `yarn.scheduler.fair.sizebasedweight`.
    pub size_based_weight: bool,
    /// `yarn.scheduler.fair.update-interval-ms` (negative falls back to 500).
    pub update_interval_ms: i64,
    /// `yarn.scheduler.fair.reservable-nodes`.
    pub reservable_nodes: f32,
    /// `yarn.scheduler.fair.locality.threshold.node` (values above 1 clamp to 1).
    pub locality_threshold_node: f32,
    /// `yarn.scheduler.fair.locality.threshold.rack`.
    pub locality_threshold_rack: f32,
    /// `yarn.scheduler.fair.locality-delay-node-ms` (deprecated).
    pub locality_delay_node_ms: i64,
    /// `yarn.scheduler.fair.locality-delay-rack-ms` (deprecated).
    pub locality_delay_rack_ms: i64,
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`: part of the targeted
    /// preemption's delay before an app's next starvation check (4 heartbeats).
    pub node_heartbeat_interval_ms: i64,
    /// `yarn.scheduler.fair.continuous-scheduling-enabled` (deprecated).
    pub continuous_scheduling_enabled: bool,
    /// `yarn.scheduler.fair.continuous-scheduling-sleep-ms`.
    pub continuous_scheduling_sleep_ms: i64,
    /// `yarn.scheduler.minimum-allocation-mb` / `-vcores` (and custom types).
    pub minimum_allocation: Resource,
    /// `yarn.scheduler.maximum-allocation-mb` / `-vcores`.
    pub maximum_allocation: Resource,
    /// `yarn.scheduler.increment-allocation-mb` / `-vcores`
    /// (and `yarn.resource-types.<name>.increment-allocation`).
    pub increment_allocation: Resource,
    /// `yarn.scheduler.reservation-threshold.increment-multiple`.
    pub reservation_threshold_increment_multiple: f32,
    /// `yarn.cluster.max-application-priority` (0): the highest application priority; a
    /// higher one is lowered to it (the Capacity Scheduler reads it).
    pub max_application_priority: i32,
    /// `yarn.resource-types`: the custom resource types, in order.
    pub resource_types: ResourceTypes,
    /// `yarn.scheduler.fair.no-terminal-rule.check` (migration mode only).
    pub no_terminal_rule_check: bool,
    /// `yarn.resourcemanager.scheduler.monitor.enable` (false): the scheduling monitors'
    /// master switch (the Capacity Scheduler's preemption policy runs only with it on).
    pub scheduler_monitor_enabled: bool,
    /// `yarn.resourcemanager.scheduler.monitor.policies`: the monitors' class names (default
    /// the proportional capacity preemption policy).
    pub scheduler_monitor_policies: Vec<String>,
    /// `weft.reservation.enforce` (Weft only; Fair): what a reservation's leaf is given.
    pub reservation_enforcement: ReservationEnforcement,
    /// `weft.reservation.packability-check` (Weft only, default true; time-aware-demands spec
    /// §3.3 item 5, §7 decision 2): a gang (a demand's, or an RDL stage's min-concurrency
    /// members) must fit on the nodes' capacities, not only in the aggregate. Off: Hadoop's
    /// aggregate-only answer on both doors.
    pub reservation_packability_check: bool,
    /// `weft.reservation.accept-early-submission` (Weft only, default false; time-aware-demands
    /// spec §3.4, §3.7): an app submitted with the id of a reservation that exists but is not
    /// yet active is held in ACCEPTED until the reservation starts (its AM asked the demand
    /// lead before) instead of being rejected as Hadoop does.
    pub reservation_accept_early_submission: bool,
}

impl SchedulerProperties {
    /// Whether AM containers of apps placed in the leaf `queue` (full name) may be preempted:
    /// the queue's own `yarn.scheduler.fair.am.preemption.<queue>` when set, else the global
    /// `yarn.scheduler.fair.am.preemption` (Hadoop's `getAMPreemptionEnabled`). Hadoop reads
    /// it once per attempt, from the queue the app was placed in.
    pub fn am_preemption_enabled(&self, queue: &str) -> bool {
        self.am_preemption
            .get(queue)
            .copied()
            .unwrap_or(self.am_preemption_default)
    }
}

impl Default for SchedulerProperties {
    fn default() -> Self {
        SchedulerProperties {
            scheduler_kind: SchedulerKind::Fair,
            allocation_file: "fair-scheduler.xml".to_string(),
            allow_undeclared_pools: true,
            user_as_default_queue: true,
            preemption: false,
            preemption_cluster_utilization_threshold: 0.8,
            wait_time_before_kill_ms: 15_000,
            wait_time_before_next_starvation_check_ms: 10_000,
            preemption_strategy: PreemptionStrategy::Targeted,
            preemption_interval_ms: 5_000,
            am_preemption_default: true,
            am_preemption: BTreeMap::new(),
            assign_multiple: false,
            dynamic_max_assign: true,
            max_assign: -1,
            size_based_weight: false,
            update_interval_ms: 500,
            reservable_nodes: 0.05,
            locality_threshold_node: -1.0,
            locality_threshold_rack: -1.0,
            locality_delay_node_ms: -1,
            locality_delay_rack_ms: -1,
            node_heartbeat_interval_ms: 1_000,
            continuous_scheduling_enabled: false,
            continuous_scheduling_sleep_ms: 5,
            minimum_allocation: Resource::new(1024, 1),
            maximum_allocation: Resource::UNBOUNDED.with(MEMORY, 8192).with(VCORES, 4),
            increment_allocation: Resource::splat(1).with(MEMORY, 1024),
            reservation_threshold_increment_multiple: 2.0,
            max_application_priority: 0,
            resource_types: ResourceTypes::default(),
            no_terminal_rule_check: false,
            scheduler_monitor_enabled: false,
            scheduler_monitor_policies: vec![PROPORTIONAL_CAPACITY_PREEMPTION_POLICY.to_string()],
            reservation_enforcement: ReservationEnforcement::Hadoop,
            reservation_packability_check: true,
            reservation_accept_early_submission: false,
        }
    }
}

/// The class name of Hadoop's capacity preemption policy
/// (`yarn.resourcemanager.scheduler.monitor.policies`' default).
pub const PROPORTIONAL_CAPACITY_PREEMPTION_POLICY: &str =
    "org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy";

impl SchedulerProperties {
    /// Whether the capacity preemption policy runs: the monitors are on and the policy is
    /// among them (named by its full class name or its simple name).
    pub fn capacity_preemption_monitor(&self) -> bool {
        self.scheduler_monitor_enabled
            && self.scheduler_monitor_policies.iter().any(|p| {
                p == PROPORTIONAL_CAPACITY_PREEMPTION_POLICY
                    || p == "ProportionalCapacityPreemptionPolicy"
            })
    }
}

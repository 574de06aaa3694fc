//! The typed capacity-scheduler.xml: the queue tree with every key resolved (defaults and
//! inheritance applied), and the global settings.

use crate::Acl;
use std::collections::BTreeMap;
use weft_types::Resource;

/// How a queue's guaranteed share (`capacity`) is written.
#[derive(Clone, Debug, PartialEq)]
pub enum CapacityValue {
    /// `12.5`: percent of the parent's capacity (0..=100).
    Percent(f32),
    /// `[memory=10240,vcores=12]`: an absolute amount.
    Absolute(Resource),
    /// `2w` (Hadoop 3.4): share = weight / sum of the siblings' weights.
    Weight(f32),
}

impl CapacityValue {
    /// The mode's name, as messages print it.
    pub fn mode(&self) -> CapacityMode {
        match self {
            CapacityValue::Percent(_) => CapacityMode::Percent,
            CapacityValue::Absolute(_) => CapacityMode::Absolute,
            CapacityValue::Weight(_) => CapacityMode::Weight,
        }
    }
}

/// The three ways of writing a capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CapacityMode {
    /// Percentages of the parent.
    Percent,
    /// Absolute resources.
    Absolute,
    /// Weights among siblings.
    Weight,
}

impl CapacityMode {
    /// "percentage", "absolute resource" or "weight".
    pub fn name(self) -> &'static str {
        match self {
            CapacityMode::Percent => "percentage",
            CapacityMode::Absolute => "absolute resource",
            CapacityMode::Weight => "weight",
        }
    }
}

/// How a queue's elastic limit (`maximum-capacity`) is written.
#[derive(Clone, Debug, PartialEq)]
pub enum MaxCapacityValue {
    /// Percent of the parent (0..=100; unset and `-1` are 100).
    Percent(f32),
    /// An absolute amount.
    Absolute(Resource),
}

/// `RUNNING` or `STOPPED` (configuration cannot say `DRAINING`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueState {
    /// Accepts submissions.
    Running,
    /// Accepts none; removable once it holds no applications.
    Stopped,
}

impl QueueState {
    /// Hadoop's spelling.
    pub fn name(self) -> &'static str {
        match self {
            QueueState::Running => "RUNNING",
            QueueState::Stopped => "STOPPED",
        }
    }
}

/// How a parent orders its children (`ordering-policy` of a parent queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOrdering {
    /// `utilization` (Hadoop's default): least used relative to guarantee first.
    Utilization,
    /// `priority-utilization`: queue priority first, then utilization.
    PriorityUtilization,
}

impl QueueOrdering {
    /// The configuration value.
    pub fn name(self) -> &'static str {
        match self {
            QueueOrdering::Utilization => "utilization",
            QueueOrdering::PriorityUtilization => "priority-utilization",
        }
    }
}

/// How a leaf orders its applications (`ordering-policy` of a leaf queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppOrdering {
    /// `fifo` (default): application priority, then submission order.
    Fifo,
    /// `fair`: least resource usage first.
    Fair,
    /// `fifo-with-partitions`.
    FifoWithPartitions,
    /// `fifo-for-pending-apps` (Hadoop uses it internally for not yet activated apps).
    FifoForPendingApps,
}

impl AppOrdering {
    /// The configuration value.
    pub fn name(self) -> &'static str {
        match self {
            AppOrdering::Fifo => "fifo",
            AppOrdering::Fair => "fair",
            AppOrdering::FifoWithPartitions => "fifo-with-partitions",
            AppOrdering::FifoForPendingApps => "fifo-for-pending-apps",
        }
    }
}

/// Whether a queue holds applications or other queues.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueKind {
    /// A queue with children (indices into [`CapacityConfig::queues`], in `queues` order).
    Parent {
        /// The children in configuration order (the final tie-break when sorting siblings).
        children: Vec<usize>,
        /// How the children are ordered.
        ordering: QueueOrdering,
        /// `allow-zero-capacity-sum`: the children's percentages may sum to 0.
        allow_zero_capacity_sum: bool,
        /// `auto-create-child-queue.enabled` (legacy managed parent; creation itself is not
        /// implemented, the flag matters for refresh rules).
        auto_create_child_queue: bool,
    },
    /// A queue that takes applications.
    Leaf(LeafSettings),
}

/// Settings that only a leaf has.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafSettings {
    /// `ordering-policy` (default `fifo`, not inherited).
    pub ordering: AppOrdering,
    /// `ordering-policy.fair.enable-size-based-weight` (default false).
    pub fair_size_based_weight: bool,
    /// `minimum-user-limit-percent` (default: the global key, itself 100).
    pub minimum_user_limit_percent: f32,
    /// `user-limit-factor` (default: the global key, itself 1.0; -1 = no per-user cap).
    pub user_limit_factor: f32,
    /// `maximum-applications` as configured (unset: derived from capacity, spec §5.5).
    pub maximum_applications: Option<i32>,
    /// `maximum-am-resource-percent`, a fraction (default: the global key, itself 0.1).
    pub maximum_am_resource_percent: f32,
    /// `user-settings.<user>.weight` (inherited from the parent, overridden per user).
    pub user_weights: BTreeMap<String, f32>,
    /// `default-application-priority` (default 0).
    pub default_application_priority: i32,
}

/// One queue with every setting resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct CsQueue {
    /// The full path (`root.eng.batch`).
    pub path: String,
    /// The last component (`batch`).
    pub name: String,
    /// The parent's index (`None` for root).
    pub parent: Option<usize>,
    /// Levels counting root (root is 1).
    pub depth: usize,
    /// Parent or leaf.
    pub kind: QueueKind,
    /// `capacity` (root: 100 percent; unset: 0 percent).
    pub capacity: CapacityValue,
    /// `maximum-capacity` (unset: 100 percent; for an absolute capacity without a maximum,
    /// the parent's absolute maximum when it has one).
    pub maximum_capacity: MaxCapacityValue,
    /// The effective state: configured, else the parent's (root: RUNNING).
    pub state: QueueState,
    /// Whether `state` was written for this queue.
    pub state_configured: bool,
    /// `acl_submit_applications` (root `*`, others no one; access also walks up, spec §3.9).
    pub acl_submit_applications: Acl,
    /// `acl_administer_queue` (same defaults).
    pub acl_administer_queue: Acl,
    /// `priority` (default 0, not inherited).
    pub priority: i32,
    /// `disable_preemption` (inherited; root false).
    pub disable_preemption: bool,
    /// `intra-queue-preemption.disable_preemption` (inherited; root false).
    pub intra_queue_disable_preemption: bool,
    /// `max-parallel-apps` as configured here (unset: the global key; the effective limit
    /// along a branch is the smallest of the ancestors').
    pub max_parallel_apps: Option<i32>,
    /// `maximum-allocation` / `-mb` / `-vcores` (inherited from the parent; `None` is the
    /// cluster's `yarn.scheduler.maximum-allocation-*`). Types not set stay unbounded.
    pub maximum_allocation: Option<Resource>,
    /// `maximum-application-lifetime` in seconds (inherited; <= 0 means none).
    pub maximum_application_lifetime: i64,
    /// `default-application-lifetime` in seconds (inherited; <= 0 means none).
    pub default_application_lifetime: i64,
    /// `accessible-node-labels`, its per-label capacities and `default-node-label-expression`.
    pub labels: QueueLabels,
}

/// Which node labels (exclusive partitions) a queue may use (`accessible-node-labels`); every
/// queue may use DEFAULT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AccessibleLabels {
    /// `*`: every label (root's, and any queue's that inherits it).
    #[default]
    Any,
    /// The labels listed (empty: a single space, DEFAULT only).
    Only(std::collections::BTreeSet<String>),
}

impl AccessibleLabels {
    /// Whether the queue may use partition `label` (`""`: DEFAULT, always).
    pub fn can_access(&self, label: &str) -> bool {
        match self {
            AccessibleLabels::Any => true,
            AccessibleLabels::Only(labels) => label.is_empty() || labels.contains(label),
        }
    }

    /// As Hadoop lists them (`*`, or the labels joined by `,`; empty for DEFAULT only).
    pub fn display(&self) -> String {
        match self {
            AccessibleLabels::Any => "*".to_string(),
            AccessibleLabels::Only(labels) => labels
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// A queue's figures in one labeled partition (`accessible-node-labels.<label>.*`).
#[derive(Clone, Debug, PartialEq)]
pub struct LabelCapacity {
    /// `.capacity`: percent of the parent's capacity in the partition (default 0; root 100).
    pub capacity: f32,
    /// `.maximum-capacity`: percent of the parent's (default 100).
    pub maximum_capacity: f32,
    /// `.maximum-am-resource-percent` (a fraction; `None`: the queue's own).
    pub maximum_am_resource_percent: Option<f32>,
}

impl Default for LabelCapacity {
    fn default() -> Self {
        LabelCapacity {
            capacity: 0.0,
            maximum_capacity: 100.0,
            maximum_am_resource_percent: None,
        }
    }
}

/// A queue's node-label settings (Hadoop's NodeLabel.md, exclusive partitions only).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueLabels {
    /// `accessible-node-labels` (inherited from the parent when unset; root `*`).
    pub accessible: AccessibleLabels,
    /// The per-label settings written for this queue, by label.
    pub per_label: BTreeMap<String, LabelCapacity>,
    /// `default-node-label-expression` (inherited when unset; `None` or empty: DEFAULT): the
    /// partition of every request of the queue's apps that names none.
    pub default_expression: Option<String>,
}

impl QueueLabels {
    /// The queue's settings in partition `label` (the defaults where none are written; a
    /// queue that cannot access it has capacity and maximum 0).
    pub fn in_partition(&self, label: &str, is_root: bool) -> LabelCapacity {
        if is_root {
            return LabelCapacity {
                capacity: 100.0,
                ..LabelCapacity::default()
            };
        }
        if !self.accessible.can_access(label) {
            return LabelCapacity {
                capacity: 0.0,
                maximum_capacity: 0.0,
                maximum_am_resource_percent: None,
            };
        }
        self.per_label.get(label).cloned().unwrap_or_default()
    }

    /// The default partition of the queue's requests (`""`: DEFAULT).
    pub fn default_partition(&self) -> &str {
        self.default_expression.as_deref().unwrap_or("")
    }
}

/// The cluster's exclusive node partitions as the node-label registry holds them (not read from
/// capacity-scheduler.xml: the RM fills it from its registry, the simulator from its nodes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodePartitions {
    /// The labels, sorted (partition `i + 1` is `labels[i]`; 0 is DEFAULT).
    pub labels: Vec<String>,
    /// Each mapped node (`host` for every NM of it, or `host:port`, host lower-cased) -> its
    /// label.
    pub nodes: BTreeMap<String, String>,
}

impl NodePartitions {
    /// Whether there are labels at all (without them the scheduler is exactly as before).
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The label of the NM at `host` and `port` (`""`: DEFAULT). A driver may name the host
    /// `host:port` itself (the RM does).
    pub fn label_of(&self, host: &str, port: u16) -> &str {
        let suffix = format!(":{port}");
        let bare = host.strip_suffix(suffix.as_str()).unwrap_or(host);
        let bare = bare.to_ascii_lowercase();
        self.nodes
            .get(&format!("{bare}:{port}"))
            .or_else(|| self.nodes.get(&bare))
            .map_or("", String::as_str)
    }
}

impl CsQueue {
    /// Whether the queue takes applications.
    pub fn is_leaf(&self) -> bool {
        matches!(self.kind, QueueKind::Leaf(_))
    }

    /// The children's indices (empty for a leaf).
    pub fn children(&self) -> &[usize] {
        match &self.kind {
            QueueKind::Parent { children, .. } => children,
            QueueKind::Leaf(_) => &[],
        }
    }

    /// Whether this is a legacy managed (auto-creating) parent.
    pub fn is_managed_parent(&self) -> bool {
        matches!(
            self.kind,
            QueueKind::Parent {
                auto_create_child_queue: true,
                ..
            }
        )
    }
}

/// Which resource calculator compares resources (`resource-calculator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceCalculator {
    /// `DefaultResourceCalculator` (the default): memory only.
    Default,
    /// `DominantResourceCalculator`: every countable type.
    Dominant,
}

/// One `queue-mappings` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueMapping {
    /// `u` (user) or `g` (group).
    pub kind: MappingKind,
    /// The user or group matched (`%user` = any user).
    pub source: String,
    /// The queue placed into (may hold `%user`, `%primary_group`, `%secondary_group`).
    pub queue: String,
}

/// The source kind of a queue mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingKind {
    /// `u:`.
    User,
    /// `g:`.
    Group,
}

/// The global `yarn.scheduler.capacity.*` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityGlobals {
    /// `maximum-applications` (10000).
    pub maximum_applications: i32,
    /// `maximum-am-resource-percent` (0.1, a fraction).
    pub maximum_am_resource_percent: f32,
    /// `global-queue-max-application` (-1: unset).
    pub global_queue_max_application: i32,
    /// `user-limit-factor` (1.0).
    pub user_limit_factor: f32,
    /// `minimum-user-limit-percent` (100).
    pub minimum_user_limit_percent: f32,
    /// `max-parallel-apps` (unlimited: `i32::MAX`).
    pub max_parallel_apps: i32,
    /// `user.max-parallel-apps` (unlimited).
    pub user_max_parallel_apps: i32,
    /// `user.<user>.max-parallel-apps`.
    pub per_user_max_parallel_apps: BTreeMap<String, i32>,
    /// `resource-calculator` (Default).
    pub resource_calculator: ResourceCalculator,
    /// `node-locality-delay` (40; -1 removes the rack-level wait).
    pub node_locality_delay: i32,
    /// `rack-locality-additional-delay` (-1: Hadoop's formula).
    pub rack_locality_additional_delay: i32,
    /// `rack-locality-full-reset` (true).
    pub rack_locality_full_reset: bool,
    /// `per-node-heartbeat.multiple-assignments-enabled` (true).
    pub multiple_assignments_enabled: bool,
    /// `per-node-heartbeat.maximum-container-assignments` (100; -1 unlimited).
    pub maximum_container_assignments: i32,
    /// `per-node-heartbeat.maximum-offswitch-assignments` (1; values below 1 are 1).
    pub maximum_offswitch_assignments: i32,
    /// `reservations-continue-look-all-nodes` (true).
    pub reservations_continue_look_all_nodes: bool,
    /// `schedule-asynchronously.enable` (false; Weft schedules on heartbeats only).
    pub schedule_asynchronously: bool,
    /// `queue-mappings`, in order (first match wins).
    pub queue_mappings: Vec<QueueMapping>,
    /// `queue-mappings-override.enable` (false).
    pub queue_mappings_override: bool,
    /// `lazy-preemption-enabled` (false).
    pub lazy_preemption_enabled: bool,
    /// `user-metrics.enable` (false).
    pub user_metrics_enabled: bool,
    /// `application.fail-fast` (false).
    pub application_fail_fast: bool,
    /// `queue.auto.refresh.monitoring-interval` in ms (5000; the yarn-site spelling
    /// `yarn.resourcemanager.queue.auto.refresh.monitoring-interval` is read too).
    pub auto_refresh_interval_ms: i64,
}

impl Default for CapacityGlobals {
    fn default() -> Self {
        CapacityGlobals {
            maximum_applications: 10_000,
            maximum_am_resource_percent: 0.1,
            global_queue_max_application: -1,
            user_limit_factor: 1.0,
            minimum_user_limit_percent: 100.0,
            max_parallel_apps: i32::MAX,
            user_max_parallel_apps: i32::MAX,
            per_user_max_parallel_apps: BTreeMap::new(),
            resource_calculator: ResourceCalculator::Default,
            node_locality_delay: 40,
            rack_locality_additional_delay: -1,
            rack_locality_full_reset: true,
            multiple_assignments_enabled: true,
            maximum_container_assignments: 100,
            maximum_offswitch_assignments: 1,
            reservations_continue_look_all_nodes: true,
            schedule_asynchronously: false,
            queue_mappings: Vec::new(),
            queue_mappings_override: false,
            lazy_preemption_enabled: false,
            user_metrics_enabled: false,
            application_fail_fast: false,
            auto_refresh_interval_ms: 5_000,
        }
    }
}

/// The capacity preemption policy's settings (`yarn.resourcemanager.monitor.capacity.
/// preemption.*`, read from the same file; spec §8.1).
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityPreemption {
    /// `monitoring_interval` (3000 ms).
    pub monitoring_interval_ms: i64,
    /// `max_wait_before_kill` (15000 ms).
    pub max_wait_before_kill_ms: i64,
    /// `total_preemption_per_round` (0.1).
    pub total_preemption_per_round: f32,
    /// `max_ignored_over_capacity` (0.1).
    pub max_ignored_over_capacity: f32,
    /// `natural_termination_factor` (0.2).
    pub natural_termination_factor: f32,
    /// `observe_only` (false).
    pub observe_only: bool,
    /// `intra-queue-preemption.enabled` (false).
    pub intra_queue_enabled: bool,
    /// `conservative-drf` (false).
    pub conservative_drf: bool,
}

impl Default for CapacityPreemption {
    fn default() -> Self {
        CapacityPreemption {
            monitoring_interval_ms: 3_000,
            max_wait_before_kill_ms: 15_000,
            total_preemption_per_round: 0.1,
            max_ignored_over_capacity: 0.1,
            natural_termination_factor: 0.2,
            observe_only: false,
            intra_queue_enabled: false,
            conservative_drf: false,
        }
    }
}

/// A parsed and validated capacity-scheduler.xml.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityConfig {
    /// Every queue; index 0 is root, a parent comes before its children.
    pub queues: Vec<CsQueue>,
    /// The global settings.
    pub globals: CapacityGlobals,
    /// The preemption policy's settings.
    pub preemption: CapacityPreemption,
    /// Where each property was written (name -> line, column), for messages about them later
    /// (refresh refusals).
    pub positions: BTreeMap<String, (u32, u32)>,
    /// The reservable leaves (`reservable` true) by path, with their reservation settings.
    pub reservable: BTreeMap<String, crate::reservation::ReservationQueueSettings>,
    /// Each managed parent's template for the leaves it creates, by the parent's path.
    pub leaf_templates: BTreeMap<String, LeafTemplate>,
    /// The node partitions the scheduler serves (from the node-label registry, not the file;
    /// empty after parsing).
    pub partitions: NodePartitions,
}

/// A managed parent's `leaf-queue-template.*` (legacy auto-creation, spec §3.13).
#[derive(Clone, Debug, PartialEq)]
pub struct LeafTemplate {
    /// `leaf-queue-template.capacity` (mandatory).
    pub capacity: CapacityValue,
    /// `leaf-queue-template.maximum-capacity` (unset: 100 percent).
    pub maximum_capacity: MaxCapacityValue,
    /// The other `leaf-queue-template.*` leaf keys, with a leaf's defaults and inheritance.
    pub settings: LeafSettings,
    /// `auto-create-child-queue.max-queues` (default 1000).
    pub max_queues: i32,
}

impl CapacityConfig {
    /// The queue with full path `path`.
    pub fn queue(&self, path: &str) -> Option<&CsQueue> {
        self.index_of(path).map(|i| &self.queues[i])
    }

    /// The index of the queue with full path `path`.
    pub fn index_of(&self, path: &str) -> Option<usize> {
        self.queues.iter().position(|q| q.path == path)
    }

    /// The most applications that may run at once in queue `index` (`max-parallel-apps`): the
    /// smallest of its own and its ancestors' values, the global key where none is set
    /// (spec §3.2, §3.7).
    pub fn effective_max_parallel_apps(&self, index: usize) -> i32 {
        let mut limit: Option<i32> = None;
        let mut at = Some(index);
        while let Some(i) = at {
            let q = &self.queues[i];
            if let Some(own) = q.max_parallel_apps {
                limit = Some(limit.map_or(own, |l| l.min(own)));
            }
            at = q.parent;
        }
        limit.unwrap_or(self.globals.max_parallel_apps)
    }

    /// Adds leaf `name` under the managed parent `parent` (a full path) from the parent's
    /// template (legacy auto-creation, spec §3.13); returns the new leaf's index, or why not.
    ///
    /// Capacity, as `GuaranteedOrZeroCapacityOverTimePolicy` at creation: the template's
    /// percentage while the parent's children with theirs still fit in 100 percent, else 0
    /// (such a leaf's application cap is still derived from the template's capacity, so it
    /// takes apps). Hadoop's policy also re-divides the parent's guarantee over time, by
    /// activation order, and takes it back from idle leaves: not done here.
    pub fn add_auto_created_leaf(&mut self, parent: &str, name: &str) -> Result<usize, String> {
        let Some(pi) = self.index_of(parent) else {
            return Err(format!("no queue {parent}"));
        };
        let Some(template) = self.leaf_templates.get(parent).cloned() else {
            return Err(format!(
                "{parent} is not a managed parent (auto-create-child-queue.enabled)"
            ));
        };
        if name.is_empty() || name.contains('.') || name.trim() != name {
            return Err(format!("'{name}' cannot be a queue name"));
        }
        let p = &self.queues[pi];
        let path = format!("{parent}.{name}");
        if self.index_of(&path).is_some() {
            return Err(format!("{path} already exists"));
        }
        let children = p.children().to_vec();
        if children.len() >= usize::try_from(template.max_queues.max(0)).unwrap_or(0) {
            return Err(format!(
                "Cannot auto create queue {path}. Max Child Queue limit exceeded which is configured as: {} and number of child queues is: {}",
                template.max_queues,
                children.len()
            ));
        }
        let percent = |q: &CsQueue| match q.capacity {
            CapacityValue::Percent(c) => c,
            _ => 0.0,
        };
        let mut settings = template.settings.clone();
        let capacity = match template.capacity {
            CapacityValue::Percent(t) => {
                let used: f32 = children.iter().map(|c| percent(&self.queues[*c])).sum();
                if used + t <= 100.0 + 1e-4 {
                    CapacityValue::Percent(t)
                } else {
                    if settings.maximum_applications.is_none() {
                        // The cap the template's capacity gives (spec §5.5), not 0.
                        let mut fraction = f64::from(t) / 100.0;
                        let mut at = Some(pi);
                        while let Some(i) = at {
                            if let CapacityValue::Percent(c) = self.queues[i].capacity {
                                fraction *= f64::from(c) / 100.0;
                            }
                            at = self.queues[i].parent;
                        }
                        settings.maximum_applications =
                            Some((f64::from(self.globals.maximum_applications) * fraction) as i32);
                    }
                    CapacityValue::Percent(0.0)
                }
            }
            other => other,
        };
        let leaf = CsQueue {
            path,
            name: name.to_string(),
            parent: Some(pi),
            depth: p.depth + 1,
            kind: QueueKind::Leaf(settings),
            capacity,
            maximum_capacity: template.maximum_capacity,
            state: QueueState::Running,
            state_configured: false,
            acl_submit_applications: crate::Acl::nobody(),
            acl_administer_queue: crate::Acl::nobody(),
            priority: 0,
            disable_preemption: p.disable_preemption,
            intra_queue_disable_preemption: p.intra_queue_disable_preemption,
            max_parallel_apps: None,
            maximum_allocation: p.maximum_allocation,
            maximum_application_lifetime: p.maximum_application_lifetime,
            default_application_lifetime: p.default_application_lifetime,
            labels: inherited_labels(&p.labels),
        };
        let index = self.queues.len();
        self.queues.push(leaf);
        if let QueueKind::Parent { children, .. } = &mut self.queues[pi].kind {
            children.push(index);
        }
        Ok(index)
    }

    /// The leaves under managed parents (the auto-created ones), by path.
    pub fn auto_created_leaves(&self) -> Vec<(String, String)> {
        self.queues
            .iter()
            .filter(|q| q.is_leaf())
            .filter_map(|q| {
                let p = &self.queues[q.parent?];
                p.is_managed_parent()
                    .then(|| (p.path.clone(), q.name.clone()))
            })
            .collect()
    }

    /// The leaves, in tree order.
    pub fn leaves(&self) -> impl Iterator<Item = &CsQueue> {
        self.queues.iter().filter(|q| q.is_leaf())
    }
}

/// What a queue created under `parent` (auto-created or a plan's leaf) takes of its labels:
/// the accessible labels and default expression, no per-label capacities.
pub fn inherited_labels(parent: &QueueLabels) -> QueueLabels {
    QueueLabels {
        accessible: parent.accessible.clone(),
        per_label: BTreeMap::new(),
        default_expression: parent.default_expression.clone(),
    }
}

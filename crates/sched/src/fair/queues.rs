//! Fair's reading of the queue tree: the allocation file resolved with Hadoop's defaults and
//! inheritance into the queues' payloads and shared limits, dynamic creation under the policy
//! rules, type changes (spec §1, §5.4, §9, §15).

use crate::lanes::Resource;
use crate::lanes::{resolve, truncate};
use weft_config::{Acl, AllocationConfig, ConfiguredResource, PolicyKind};

use crate::fair::shares::ShareMemo;
use crate::fair::starvation::{LeafStarvation, PreemptionSettings};
use crate::queues::{is_protected, QueueId, QueueTree, DEFAULT_NAME, ROOT, ROOT_NAME};

/// Fair's per-queue state read on every re-key.
#[derive(Clone, Debug)]
pub(crate) struct FairQueue {
    pub(crate) weight: f64,
    pub(crate) min_share: Resource,
    pub(crate) policy: PolicyKind,
}

impl Default for FairQueue {
    fn default() -> FairQueue {
        FairQueue {
            weight: 1.0,
            min_share: Resource::ZERO,
            policy: PolicyKind::Fair,
        }
    }
}

/// Fair's per-queue state read by updates, reloads, reports and the AM check.
#[derive(Clone, Debug)]
pub(crate) struct FairQueueCold {
    pub(crate) fair_share: Resource,
    pub(crate) steady_fair_share: Resource,
    pub(crate) max_am_share: f32,
    pub(crate) max_share_cfg: ConfiguredResource,
    pub(crate) max_child_cfg: Option<ConfiguredResource>,
    pub(crate) max_running_apps: i32,
    /// Own `maxContainerAllocation`, if set (inherited at use).
    pub(crate) max_container_cfg: Option<ConfiguredResource>,
    /// A plan queue of the reservation system.
    pub(crate) reservable: bool,
    /// The last instantaneous share computation among its children or apps.
    pub(crate) share_memo: ShareMemo,
    /// Timeouts, threshold and `allowPreemptionFrom`, resolved with inheritance.
    pub(crate) preemption: PreemptionSettings,
    /// Leaves: min-share starvation as of the last update that evaluated it.
    pub(crate) starvation: LeafStarvation,
    /// Containers preempted from its apps (its subtree's for a parent): Hadoop's
    /// `AggregateContainersPreempted`.
    pub(crate) preempted_containers: u64,
}

impl Default for FairQueueCold {
    fn default() -> FairQueueCold {
        FairQueueCold {
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            max_am_share: 0.5,
            max_share_cfg: ConfiguredResource::UNBOUNDED,
            max_child_cfg: None,
            max_running_apps: i32::MAX,
            max_container_cfg: None,
            reservable: false,
            share_memo: ShareMemo::default(),
            preemption: PreemptionSettings::default(),
            starvation: LeafStarvation::default(),
            preempted_containers: 0,
        }
    }
}

/// The queue tree with Fair's payloads.
pub(crate) type FairTree = QueueTree<FairQueue, FairQueueCold>;
/// One queue with Fair's payloads.
pub(crate) type FairQueueOf = crate::queues::Queue<FairQueue, FairQueueCold>;

/// What percentages resolve against: the cluster, or with per-pool shares each queue's
/// pool's capacity (resource-pools spec §8; root spans the pools and takes the cluster).
#[derive(Clone, Debug, Default)]
pub(crate) struct Capacities {
    pub(crate) cluster: Resource,
    /// Per pool (empty: every queue resolves against the cluster).
    pub(crate) pools: Vec<Resource>,
}

impl Capacities {
    /// The capacity `q`'s percentages resolve against.
    pub(crate) fn of(&self, q: &FairQueueOf) -> Resource {
        if q.parent.is_none() {
            return self.cluster;
        }
        self.pools
            .get(usize::from(q.pool))
            .copied()
            .unwrap_or(self.cluster)
    }
}

/// Sets `max_share` from the configuration and `caps`: `cwMax(maxResources resolved, min
/// share)` (spec §4.4).
pub(crate) fn resolve_max_share(q: &mut FairQueueOf, caps: &Capacities) {
    let cluster = caps.of(q);
    let max = resolve(&q.rules_cold.max_share_cfg, cluster).cw_max(q.rules.min_share);
    q.set_max_share(max);
}

/// Why a queue could not be created or found as a leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum QueueError {
    /// An existing queue on the path is a leaf, or the target is a parent.
    NotALeaf(String),
    /// An ancestor on the path is a leaf, so nothing can be created under it.
    LeafAncestor { name: String, ancestor: String },
    /// The parent's policy does not allow the child's policy.
    PolicyConflict { name: String, parent: String },
    /// The name is malformed.
    InvalidName(String),
    /// The name has more levels (given) than [`weft_config::MAX_QUEUE_DEPTH`].
    TooDeep { name: String, levels: usize },
}

impl QueueError {
    /// The submission's rejection code when placement meets this error.
    pub(crate) fn code(&self) -> crate::api::RejectCode {
        use crate::api::RejectCode;
        match self {
            QueueError::NotALeaf(_) | QueueError::LeafAncestor { .. } => RejectCode::QueueNotLeaf,
            QueueError::PolicyConflict { .. } => RejectCode::QueuePolicyConflict,
            QueueError::InvalidName(_) | QueueError::TooDeep { .. } => RejectCode::InvalidQueueName,
        }
    }
}

impl std::fmt::Display for QueueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueError::NotALeaf(n) => write!(f, "queue {n} is not a leaf queue"),
            QueueError::LeafAncestor { name, ancestor } => write!(
                f,
                "queue {name} cannot be created: {ancestor} is a leaf queue and cannot have children"
            ),
            QueueError::PolicyConflict { name, parent } => write!(
                f,
                "queue {name} cannot be created: the scheduling policy of {parent} does not allow the child's policy"
            ),
            QueueError::InvalidName(n) => write!(f, "invalid queue name '{n}'"),
            QueueError::TooDeep { name, levels } => write!(
                f,
                "queue {name} cannot be created: it is {levels} levels deep counting root, but queues may be nested at most {} levels deep",
                weft_config::MAX_QUEUE_DEPTH
            ),
        }
    }
}

/// A tree with `root` and `root.default`, configured by `alloc`.
pub(crate) fn new_tree(alloc: &AllocationConfig) -> FairTree {
    let mut tree = FairTree::new();
    tree.apply_config(alloc);
    tree
}

impl FairTree {
    /// Applies a (new) allocation file: creates declared queues, marks the others dynamic, and
    /// re-resolves every queue's configuration. Type changes of non-empty queues are deferred
    /// (spec §15); they are retried on every later call.
    pub(crate) fn apply_config(&mut self, alloc: &AllocationConfig) {
        // Root's policy decides which children it may have (e.g. a drf default queue).
        self.get_mut(ROOT).configured = true;
        self.resolve(ROOT, alloc);
        self.ensure_default(alloc);
        self.pending_retype = false;
        for cfg in alloc.queues.values() {
            if cfg.name == ROOT_NAME {
                continue;
            }
            let want_leaf = !cfg.is_parent;
            match self.lookup(&cfg.name) {
                Some(id) if self.get(id).is_leaf == want_leaf => {}
                Some(id) => {
                    if self.get(id).is_empty() && !is_protected(&cfg.name) {
                        self.remove(id);
                        let _ = self.create_path(&cfg.name, want_leaf, alloc, true);
                    } else {
                        self.pending_retype = true;
                    }
                }
                None => {
                    if self.create_path(&cfg.name, want_leaf, alloc, true).is_err() {
                        // e.g. declared under a leaf that still has apps: retried later.
                        self.pending_retype = true;
                    }
                }
            }
        }
        let ids: Vec<QueueId> = self.ids().collect();
        for id in ids {
            let name = self.get(id).name.clone();
            let configured =
                name == ROOT_NAME || name == DEFAULT_NAME || alloc.queues.contains_key(&name);
            self.get_mut(id).configured = configured;
            self.resolve(id, alloc);
        }
        self.structure_changed = true;
    }

    fn ensure_default(&mut self, alloc: &AllocationConfig) {
        if self.lookup(DEFAULT_NAME).is_none() {
            let _ = self.create_path(DEFAULT_NAME, true, alloc, true);
        }
    }

    /// Applies Hadoop's defaults and inheritance to one queue (its parent must be resolved).
    fn resolve(&mut self, id: QueueId, alloc: &AllocationConfig) {
        let (name, parent) = {
            let q = self.get(id);
            (q.name.clone(), q.parent)
        };
        let cfg = alloc.queues.get(&name).cloned().unwrap_or_default();
        let parent_child_max = parent.and_then(|p| self.get(p).rules_cold.max_child_cfg);
        let inherited = match parent {
            Some(p) => self.get(p).rules_cold.preemption,
            None => PreemptionSettings::file_defaults(alloc),
        };
        let is_root = id == ROOT;
        let q = self.get_mut(id);
        q.rules.policy = cfg
            .scheduling_policy
            .unwrap_or(alloc.default_queue_scheduling_policy);
        q.rules.weight = cfg.weight.map_or(1.0, f64::from);
        q.rules.min_share = cfg.min_resources.map_or(Resource::ZERO, truncate);
        q.rules_cold.max_share_cfg = match cfg.max_resources {
            Some(m) => m,
            None if !q.configured => parent_child_max.unwrap_or(alloc.queue_max_resources_default),
            None => alloc.queue_max_resources_default,
        };
        q.rules_cold.max_child_cfg = cfg.max_child_resources;
        q.rules_cold.max_running_apps =
            cfg.max_running_apps.unwrap_or(alloc.queue_max_apps_default);
        q.rules_cold.max_am_share = cfg.max_am_share.unwrap_or(alloc.queue_max_am_share_default);
        q.rules_cold.max_container_cfg = cfg.max_container_allocation;
        let default_acl = if is_root {
            Acl::everyone()
        } else {
            Acl::nobody()
        };
        q.acl_submit = cfg
            .acl_submit_apps
            .clone()
            .unwrap_or_else(|| default_acl.clone());
        q.acl_admin = cfg.acl_administer_apps.clone().unwrap_or(default_acl);
        q.rules_cold.reservable = cfg.reservation;
        q.rules_cold.preemption = inherited.child(&cfg);
    }

    /// Recomputes every max share against the cluster capacity (percentages resolve at use).
    pub(crate) fn resolve_max_shares(&mut self, caps: &Capacities) {
        for q in self.iter_mut() {
            resolve_max_share(q, caps);
        }
        self.refresh_path_bounds();
    }

    /// `resolve_max_shares` after a change of the cluster capacity alone: only percentages
    /// move (every node joining used to re-resolve all 2,000 queues of a large tree).
    pub(crate) fn resolve_relative_max_shares(&mut self, caps: &Capacities) {
        let mut flipped = false;
        for q in self.iter_mut() {
            if matches!(q.rules_cold.max_share_cfg, ConfiguredResource::Percent(_)) {
                let was = q.max_share_unbounded;
                resolve_max_share(q, caps);
                flipped |= was != q.max_share_unbounded;
            }
        }
        if flipped {
            self.refresh_path_bounds();
        }
    }

    /// A reservable (plan) queue takes apps without a reservation in its `<plan>-default` child
    /// (spec §12.4, §16.2); any other name is returned as it is.
    pub(crate) fn plan_default(&self, name: String) -> String {
        match self.lookup(&name) {
            Some(q) if self.get(q).rules_cold.reservable => {
                let leaf = name.rsplit('.').next().unwrap_or("default").to_string();
                format!("{name}.{leaf}-default")
            }
            _ => name,
        }
    }

    /// Finds or creates the leaf `name` (already normalized, `root.`-prefixed) for a submission.
    pub(crate) fn get_or_create_leaf(
        &mut self,
        name: &str,
        alloc: &AllocationConfig,
        caps: &Capacities,
    ) -> Result<QueueId, QueueError> {
        if let Some(id) = self.lookup(name) {
            return if self.get(id).is_leaf {
                Ok(id)
            } else {
                Err(QueueError::NotALeaf(name.to_string()))
            };
        }
        let id = self.create_path(name, true, alloc, false)?;
        let created: Vec<QueueId> = self.path_to_root(id).collect();
        for q in created {
            resolve_max_share(self.get_mut(q), caps);
        }
        self.refresh_path_bounds();
        Ok(id)
    }

    /// Creates `name` and any missing ancestors (as parents). The nearest existing ancestor must
    /// be a parent; a policy its parent does not allow blocks creation (spec §5.4, §15).
    fn create_path(
        &mut self,
        name: &str,
        leaf: bool,
        alloc: &AllocationConfig,
        configured: bool,
    ) -> Result<QueueId, QueueError> {
        let parts: Vec<&str> = name.split('.').collect();
        if parts.first() != Some(&ROOT_NAME) || parts.iter().any(|p| p.is_empty()) {
            return Err(QueueError::InvalidName(name.to_string()));
        }
        // Every walk over the tree may then recurse without running out of stack.
        if parts.len() > weft_config::MAX_QUEUE_DEPTH {
            return Err(QueueError::TooDeep {
                name: name.to_string(),
                levels: parts.len(),
            });
        }
        // Find the nearest existing ancestor and check it can take children.
        let mut existing = 1;
        while existing < parts.len() && self.lookup(&parts[..=existing].join(".")).is_some() {
            existing += 1;
        }
        let ancestor_name = parts[..existing].join(".");
        let ancestor = self
            .lookup(&ancestor_name)
            .ok_or_else(|| QueueError::InvalidName(name.to_string()))?;
        if existing == parts.len() {
            return Ok(ancestor);
        }
        if self.get(ancestor).is_leaf {
            return Err(QueueError::LeafAncestor {
                name: name.to_string(),
                ancestor: ancestor_name,
            });
        }
        // Check every new queue's policy against its parent before creating anything.
        let mut parent_policy = self.get(ancestor).rules.policy;
        for i in existing..parts.len() {
            let qname = parts[..=i].join(".");
            let is_leaf = i + 1 == parts.len() && leaf;
            let policy = alloc
                .queues
                .get(&qname)
                .and_then(|c| c.scheduling_policy)
                .unwrap_or(alloc.default_queue_scheduling_policy);
            if !parent_policy.allows_child(policy, is_leaf)
                || (!is_leaf && policy == PolicyKind::Fifo)
            {
                return Err(QueueError::PolicyConflict {
                    name: qname,
                    parent: parts[..i].join("."),
                });
            }
            parent_policy = policy;
        }
        let mut parent = ancestor;
        for i in existing..parts.len() {
            let qname = parts[..=i].join(".");
            let is_leaf = i + 1 == parts.len() && leaf;
            let declared = configured && alloc.queues.contains_key(&qname);
            let id = self.add_child(parent, qname, is_leaf);
            self.get_mut(id).configured = declared;
            self.resolve(id, alloc);
            parent = id;
        }
        Ok(parent)
    }

    /// The effective per-container maximum of a queue (spec §9.3, Hadoop's
    /// `getMaximumResourceCapability(queue)`): own or nearest ancestor's
    /// `maxContainerAllocation` (a value unbounded in every type counts as unset, as Hadoop
    /// compares it with `unbounded()`), capped by the scheduler's maximum allocation.
    pub(crate) fn max_container_allocation(
        &self,
        id: QueueId,
        scheduler_max: Resource,
        cluster: Resource,
    ) -> Resource {
        for q in self.path_to_root(id) {
            let own = self.get(q).rules_cold.max_container_cfg;
            if let Some(cfg) = own.filter(|c| *c != ConfiguredResource::UNBOUNDED) {
                return resolve(&cfg, cluster).cw_min(scheduler_max);
            }
        }
        scheduler_max
    }
}

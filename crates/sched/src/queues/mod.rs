//! The queue tree: an arena of queues with their resolved configuration and live aggregates.
//!
//! Creation, removal and reconfiguration live here (spec §1, §9, §15); scheduling does not.

use std::collections::{BTreeMap, BTreeSet};
use weft_config::{Acl, AllocationConfig, ConfiguredResource, PolicyKind};
use weft_types::{AppId, Resource};

use crate::fair::shares::ShareMemo;
use crate::order::ordset::OrderedSet;

/// Index of a queue in the arena. Never reused while the scheduler lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct QueueId(pub(crate) u32);

pub(crate) const ROOT: QueueId = QueueId(0);
pub(crate) const ROOT_NAME: &str = "root";
pub(crate) const DEFAULT_NAME: &str = "root.default";

/// One queue: configuration resolved with Hadoop's inheritance, plus live state.
///
/// Laid out in declaration order (`repr(C)`), what every allocation and completion reads first:
/// the walk, the re-keys and the usage upkeep touch 2,000 queues in turn at full scale, and
/// with the compiler's field order their fields were spread over most of the struct's 17 cache
/// lines. Everything from `fair_share` on is read only by updates, reloads, reports and the AM
/// check.
#[repr(C)]
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    pub(crate) parent: Option<QueueId>,
    /// Fast path: the queue's slot in its parent's candidates, if it is one (the set holds
    /// the key).
    pub(crate) parent_slot: Option<u32>,
    pub(crate) weight: f64,
    /// Rank of the name among all queue names: the comparators' final tie-break.
    pub(crate) name_rank: u64,
    /// Fast path: how many of `candidates` could take a reservation (apps starved with an ask
    /// at or above the reservation threshold; queues with a non-zero such count). They are
    /// flagged (`App::reservable_in_leaf`, `Queue::reservable_in_parent`), not kept apart.
    pub(crate) reservable_members: u32,
    pub(crate) is_leaf: bool,
    pub(crate) policy: PolicyKind,
    /// `max_share` is `Resource::UNBOUNDED`: on any cluster below half of that in every lane
    /// no usage can reach it, and the walk skips the check (most queues have no maximum).
    pub(crate) max_share_unbounded: bool,
    /// `max_share_unbounded` holds for this queue and every ancestor (kept by
    /// [`Queues::refresh_path_bounds`]): the walk then checks no level above an app.
    pub(crate) path_unbounded: bool,
    /// Fast path: whether this queue is a reservable member of its parent's candidates.
    pub(crate) reservable_in_parent: bool,
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    pub(crate) min_share: Resource,
    /// Fast path: the children (parent) or apps (leaf) that can be scheduled, in policy order.
    pub(crate) candidates: OrderedSet,
    /// `cwMax(max_share_cfg resolved against the cluster, min_share)` (spec §4.4).
    pub(crate) max_share: Resource,
    pub(crate) am_usage: Resource,

    pub(crate) fair_share: Resource,
    pub(crate) max_am_share: f32,
    /// Runnable apps in the whole subtree (spec §10).
    pub(crate) runnable_count: i32,
    pub(crate) id: QueueId,
    pub(crate) depth: u32,
    /// Declared in the allocation file (static); otherwise created by placement (dynamic).
    pub(crate) configured: bool,
    pub(crate) reservable: bool,
    pub(crate) name: String,
    pub(crate) children: BTreeSet<QueueId>,
    pub(crate) max_share_cfg: ConfiguredResource,
    pub(crate) max_child_cfg: Option<ConfiguredResource>,
    pub(crate) max_running_apps: i32,
    /// Own `maxContainerAllocation`, if set (inherited at use).
    pub(crate) max_container_cfg: Option<ConfiguredResource>,
    pub(crate) acl_submit: Acl,
    pub(crate) acl_admin: Acl,
    pub(crate) steady_fair_share: Resource,
    /// Runnable apps of a leaf, in arrival order.
    pub(crate) runnable_apps: Vec<AppId>,
    /// Waiting (non-runnable) apps of a leaf, in arrival order.
    pub(crate) non_runnable_apps: Vec<AppId>,
    /// The last instantaneous share computation among its children or apps.
    pub(crate) share_memo: ShareMemo,
}

impl Queue {
    /// Sets `max_share` (and whether it is unbounded) from the configuration and `cluster`.
    pub(crate) fn resolve_max_share(&mut self, cluster: Resource) {
        self.max_share = self.max_share_cfg.resolve(cluster).cw_max(self.min_share);
        self.max_share_unbounded =
            crate::objects::app::same_resource(&self.max_share, &Resource::UNBOUNDED);
    }

    fn new(id: QueueId, name: String, parent: Option<QueueId>, is_leaf: bool, depth: u32) -> Queue {
        Queue {
            id,
            name,
            parent,
            children: BTreeSet::new(),
            is_leaf,
            configured: false,
            depth,
            policy: PolicyKind::Fair,
            weight: 1.0,
            min_share: Resource::ZERO,
            max_share_cfg: ConfiguredResource::UNBOUNDED,
            max_share: Resource::UNBOUNDED,
            max_share_unbounded: true,
            path_unbounded: true,
            max_child_cfg: None,
            max_running_apps: i32::MAX,
            max_am_share: 0.5,
            max_container_cfg: None,
            acl_submit: Acl::nobody(),
            acl_admin: Acl::nobody(),
            reservable: false,
            usage: Resource::ZERO,
            demand: Resource::ZERO,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            am_usage: Resource::ZERO,
            runnable_apps: Vec::new(),
            non_runnable_apps: Vec::new(),
            runnable_count: 0,
            name_rank: 0,
            candidates: OrderedSet::new(),
            parent_slot: None,
            reservable_members: 0,
            reservable_in_parent: false,
            share_memo: ShareMemo::default(),
        }
    }

    /// A queue is active when it has runnable apps in its subtree (spec §1).
    pub(crate) fn is_active(&self) -> bool {
        self.runnable_count > 0
    }

    /// No apps and no children: a dynamic queue in this state can be removed.
    pub(crate) fn is_empty(&self) -> bool {
        self.children.is_empty()
            && self.runnable_apps.is_empty()
            && self.non_runnable_apps.is_empty()
    }
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
        }
    }
}

/// The arena of queues with a name index.
#[derive(Clone, Debug)]
pub(crate) struct QueueTree {
    slots: Vec<Option<Queue>>,
    by_name: BTreeMap<String, QueueId>,
    /// Set when queues were added or removed: name ranks and the fast-path order need a rebuild.
    pub(crate) structure_changed: bool,
    /// A declared type change waits for its queue to become empty (retried on every GC tick).
    pub(crate) pending_retype: bool,
}

impl QueueTree {
    /// A tree with `root` and `root.default`, configured by `alloc`.
    pub(crate) fn new(alloc: &AllocationConfig) -> QueueTree {
        let mut tree = QueueTree {
            slots: Vec::new(),
            by_name: BTreeMap::new(),
            structure_changed: true,
            pending_retype: false,
        };
        let root = Queue::new(ROOT, ROOT_NAME.to_string(), None, false, 0);
        tree.slots.push(Some(root));
        tree.by_name.insert(ROOT_NAME.to_string(), ROOT);
        tree.apply_config(alloc);
        tree
    }

    pub(crate) fn get(&self, id: QueueId) -> &Queue {
        match &self.slots[id.0 as usize] {
            Some(q) => q,
            None => panic!("queue {id:?} was removed but is still referenced"),
        }
    }

    pub(crate) fn get_mut(&mut self, id: QueueId) -> &mut Queue {
        match &mut self.slots[id.0 as usize] {
            Some(q) => q,
            None => panic!("queue {id:?} was removed but is still referenced"),
        }
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<QueueId> {
        self.by_name.get(name).copied()
    }

    /// Every live queue, in name order (parents before their children).
    pub(crate) fn ids(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.by_name.values().copied()
    }

    /// One more than the largest queue id in use (ids index `0..id_bound()`).
    pub(crate) fn id_bound(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// The queue and its ancestors, leaf first.
    pub(crate) fn path_to_root(&self, id: QueueId) -> PathToRoot<'_> {
        PathToRoot {
            tree: self,
            next: Some(id),
        }
    }

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
        let parent_child_max = parent.and_then(|p| self.get(p).max_child_cfg);
        let is_root = id == ROOT;
        let q = self.get_mut(id);
        q.policy = cfg
            .scheduling_policy
            .unwrap_or(alloc.default_queue_scheduling_policy);
        q.weight = cfg.weight.map_or(1.0, f64::from);
        q.min_share = cfg.min_resources.unwrap_or(Resource::ZERO);
        q.max_share_cfg = match cfg.max_resources {
            Some(m) => m,
            None if !q.configured => parent_child_max.unwrap_or(alloc.queue_max_resources_default),
            None => alloc.queue_max_resources_default,
        };
        q.max_child_cfg = cfg.max_child_resources;
        q.max_running_apps = cfg.max_running_apps.unwrap_or(alloc.queue_max_apps_default);
        q.max_am_share = cfg.max_am_share.unwrap_or(alloc.queue_max_am_share_default);
        q.max_container_cfg = cfg.max_container_allocation;
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
        q.reservable = cfg.reservation;
    }

    /// Recomputes every max share against the cluster capacity (percentages resolve at use).
    pub(crate) fn resolve_max_shares(&mut self, cluster: Resource) {
        for q in self.slots.iter_mut().flatten() {
            q.resolve_max_share(cluster);
        }
        self.refresh_path_bounds();
    }

    /// `resolve_max_shares` after a change of the cluster capacity alone: only percentages
    /// move (every node joining used to re-resolve all 2,000 queues of a large tree).
    pub(crate) fn resolve_relative_max_shares(&mut self, cluster: Resource) {
        let mut flipped = false;
        for q in self.slots.iter_mut().flatten() {
            if matches!(q.max_share_cfg, ConfiguredResource::Percent(_)) {
                let was = q.max_share_unbounded;
                q.resolve_max_share(cluster);
                flipped |= was != q.max_share_unbounded;
            }
        }
        if flipped {
            self.refresh_path_bounds();
        }
    }

    /// Sets every queue's `path_unbounded` from the max shares, root first.
    pub(crate) fn refresh_path_bounds(&mut self) {
        let mut stack = vec![(ROOT, true)];
        while let Some((id, above)) = stack.pop() {
            let q = self.get_mut(id);
            q.path_unbounded = above && q.max_share_unbounded;
            let flag = q.path_unbounded;
            stack.extend(q.children.iter().map(|c| (*c, flag)));
        }
    }

    /// What `path_unbounded` should be for `id` (for `verify`).
    pub(crate) fn path_unbounded_of(&self, id: QueueId) -> bool {
        self.path_to_root(id)
            .all(|q| self.get(q).max_share_unbounded)
    }

    /// A reservable (plan) queue takes apps without a reservation in its `<plan>-default` child
    /// (spec §12.4, §16.2); any other name is returned as it is.
    pub(crate) fn plan_default(&self, name: String) -> String {
        match self.lookup(&name) {
            Some(q) if self.get(q).reservable => {
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
        cluster: Resource,
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
            self.get_mut(q).resolve_max_share(cluster);
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
        let mut parent_policy = self.get(ancestor).policy;
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
            let id = QueueId(self.slots.len() as u32);
            let mut q = Queue::new(id, qname.clone(), Some(parent), is_leaf, i as u32);
            q.configured = configured && alloc.queues.contains_key(&qname);
            self.slots.push(Some(q));
            self.by_name.insert(qname, id);
            self.get_mut(parent).children.insert(id);
            self.resolve(id, alloc);
            parent = id;
        }
        self.structure_changed = true;
        Ok(parent)
    }

    fn remove(&mut self, id: QueueId) {
        let q = self.get(id);
        debug_assert!(q.is_empty(), "only empty queues are removed");
        let (name, parent) = (q.name.clone(), q.parent);
        if let Some(p) = parent {
            self.get_mut(p).children.remove(&id);
        }
        self.by_name.remove(&name);
        self.slots[id.0 as usize] = None;
        self.structure_changed = true;
    }

    /// Removes empty dynamic queues, cascading to parents that become empty (spec §1).
    pub(crate) fn remove_empty_dynamic(&mut self) {
        loop {
            let victims: Vec<QueueId> = self
                .ids()
                .filter(|id| {
                    let q = self.get(*id);
                    !q.configured && q.is_empty() && *id != ROOT && !is_protected(&q.name)
                })
                .collect();
            if victims.is_empty() {
                return;
            }
            for v in victims {
                self.remove(v);
            }
        }
    }

    /// Recomputes the name ranks used as the final tie-break.
    pub(crate) fn rank_names(&mut self) {
        let order: Vec<QueueId> = self.by_name.values().copied().collect();
        for (rank, id) in order.into_iter().enumerate() {
            self.get_mut(id).name_rank = rank as u64;
        }
    }

    /// The effective per-container maximum of a queue (spec §9.3): own or nearest ancestor's
    /// `maxContainerAllocation`, capped by the scheduler's maximum allocation.
    pub(crate) fn max_container_allocation(
        &self,
        id: QueueId,
        scheduler_max: Resource,
        cluster: Resource,
    ) -> Resource {
        for q in self.path_to_root(id) {
            if let Some(cfg) = self.get(q).max_container_cfg {
                return cfg.resolve(cluster).cw_min(scheduler_max);
            }
        }
        scheduler_max
    }

    /// Whether `user` may do what `acl` selects on queue `id` or any ancestor (spec §13).
    pub(crate) fn allows(
        &self,
        id: QueueId,
        user: &str,
        groups: &[String],
        acl: impl Fn(&Queue) -> &Acl,
    ) -> bool {
        self.path_to_root(id)
            .any(|q| acl(self.get(q)).allows(user, groups))
    }
}

/// `root.default` and its would-be children are never retyped (spec §15).
fn is_protected(name: &str) -> bool {
    name == DEFAULT_NAME || name.starts_with("root.default.")
}

/// Iterator from a queue up to the root.
pub(crate) struct PathToRoot<'a> {
    tree: &'a QueueTree,
    next: Option<QueueId>,
}

impl Iterator for PathToRoot<'_> {
    type Item = QueueId;
    fn next(&mut self) -> Option<QueueId> {
        let cur = self.next?;
        self.next = self.tree.get(cur).parent;
        Some(cur)
    }
}

//! The queue tree skeleton every scheduler shares: an arena of queues with a name index, the
//! shared hot fields the walk and the order read, paths, removal of empty dynamic queues, name
//! ranks and the ACL walk. What a queue's configuration means belongs to the rules (for Fair,
//! `fair/queues.rs` resolves it into the payloads and the shared limits).

use crate::lanes::Resource;
use std::collections::{BTreeMap, BTreeSet};
use weft_config::Acl;
use weft_types::AppId;

use crate::order::ordset::OrderedSet;

/// Index of a queue in the arena. Never reused while the scheduler lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct QueueId(pub(crate) u32);

pub(crate) const ROOT: QueueId = QueueId(0);
pub(crate) const ROOT_NAME: &str = "root";
pub(crate) const DEFAULT_NAME: &str = "root.default";

/// One queue: the shared state, the rules' hot payload `H` right after the shared hot fields,
/// and their cold payload `C` at the end.
///
/// Laid out in declaration order (`repr(C)`), what every allocation and completion reads first:
/// the walk, the re-keys and the usage upkeep touch 2,000 queues in turn at full scale, and
/// with the compiler's field order their fields were spread over most of the struct's 17 cache
/// lines. Everything from `runnable_count` on is read only by updates, reloads, reports and
/// the AM check.
#[repr(C)]
#[derive(Clone, Debug)]
pub(crate) struct Queue<H, C> {
    pub(crate) parent: Option<QueueId>,
    /// Fast path: the queue's slot in its parent's candidates, if it is one (the set holds
    /// the key).
    pub(crate) parent_slot: Option<u32>,
    /// Rank of the name among all queue names: the comparators' final tie-break.
    pub(crate) name_rank: u64,
    /// Fast path: how many of `candidates` could take a reservation (apps the rules call
    /// reservable; queues with a non-zero such count). They are flagged
    /// (`App::reservable_in_leaf`, `Queue::reservable_in_parent`), not kept apart.
    pub(crate) reservable_members: u32,
    pub(crate) is_leaf: bool,
    /// `max_share` is `Resource::UNBOUNDED`: on any cluster below half of that in every lane
    /// no usage can reach it, and the walk skips the check (most queues have no maximum).
    pub(crate) max_share_unbounded: bool,
    /// `max_share_unbounded` holds for this queue and every ancestor (kept by
    /// [`QueueTree::refresh_path_bounds`]): the walk then checks no level above an app.
    pub(crate) path_unbounded: bool,
    /// Fast path: whether this queue is a reservable member of its parent's candidates.
    pub(crate) reservable_in_parent: bool,
    pub(crate) usage: Resource,
    /// Demand as of the rules' last update.
    pub(crate) demand: Resource,
    /// The rules' per-queue state read on every re-key (Fair: weight, min share, policy).
    pub(crate) rules: H,
    /// Fast path: the children (parent) or apps (leaf) that can be scheduled, in rules order.
    pub(crate) candidates: OrderedSet,
    /// The most the subtree may use (Fair: `maxResources` resolved against the cluster).
    pub(crate) max_share: Resource,
    pub(crate) am_usage: Resource,

    /// Runnable apps in the whole subtree.
    pub(crate) runnable_count: i32,
    pub(crate) id: QueueId,
    pub(crate) depth: u32,
    /// The queue's resource pool: 0 for DEFAULT (no pool, or pools off), else the pool's
    /// index in the allocation file plus one. Every queue is in its top-level ancestor's
    /// pool (the allocation file refuses anything else), so it is inherited on creation.
    pub(crate) pool: u16,
    /// Fast path, pools on, root's children only: the slot in root's candidates of its pool.
    pub(crate) pool_slot: Option<u32>,
    /// Declared in the configuration (static); otherwise created by placement (dynamic).
    pub(crate) configured: bool,
    pub(crate) name: String,
    pub(crate) children: BTreeSet<QueueId>,
    pub(crate) acl_submit: Acl,
    pub(crate) acl_admin: Acl,
    /// Runnable apps of a leaf, in arrival order.
    pub(crate) runnable_apps: Vec<AppId>,
    /// Waiting (non-runnable) apps of a leaf, in arrival order.
    pub(crate) non_runnable_apps: Vec<AppId>,
    /// The rules' per-queue state read only by updates, reloads and reports.
    pub(crate) rules_cold: C,
}

impl<H: Default, C: Default> Queue<H, C> {
    fn new(
        id: QueueId,
        name: String,
        parent: Option<QueueId>,
        is_leaf: bool,
        depth: u32,
    ) -> Queue<H, C> {
        Queue {
            id,
            name,
            parent,
            children: BTreeSet::new(),
            is_leaf,
            configured: false,
            depth,
            pool: 0,
            pool_slot: None,
            max_share: Resource::UNBOUNDED,
            max_share_unbounded: true,
            path_unbounded: true,
            acl_submit: Acl::nobody(),
            acl_admin: Acl::nobody(),
            usage: Resource::ZERO,
            demand: Resource::ZERO,
            am_usage: Resource::ZERO,
            runnable_apps: Vec::new(),
            non_runnable_apps: Vec::new(),
            runnable_count: 0,
            name_rank: 0,
            candidates: OrderedSet::new(),
            parent_slot: None,
            reservable_members: 0,
            reservable_in_parent: false,
            rules: H::default(),
            rules_cold: C::default(),
        }
    }
}

impl<H, C> Queue<H, C> {
    /// Sets `max_share` (and whether it is unbounded).
    pub(crate) fn set_max_share(&mut self, max: Resource) {
        self.max_share = max;
        self.max_share_unbounded =
            crate::objects::app::same_resource(&self.max_share, &Resource::UNBOUNDED);
    }

    /// A queue is active when it has runnable apps in its subtree.
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

/// The arena of queues with a name index.
#[derive(Clone, Debug)]
pub(crate) struct QueueTree<H, C> {
    slots: Vec<Option<Queue<H, C>>>,
    by_name: BTreeMap<String, QueueId>,
    /// Set when queues were added or removed: name ranks and the fast-path order need a rebuild.
    pub(crate) structure_changed: bool,
    /// A declared type change waits for its queue to become empty (retried on every GC tick).
    pub(crate) pending_retype: bool,
    /// The resource pools queues bind to (`None`: pools off, every queue in DEFAULT).
    pools: Option<std::sync::Arc<weft_config::pools::ResourcePools>>,
}

impl<H: Default, C: Default> QueueTree<H, C> {
    /// A tree with only `root`.
    pub(crate) fn new() -> QueueTree<H, C> {
        let mut tree = QueueTree {
            slots: Vec::new(),
            by_name: BTreeMap::new(),
            structure_changed: true,
            pending_retype: false,
            pools: None,
        };
        let root = Queue::new(ROOT, ROOT_NAME.to_string(), None, false, 0);
        tree.slots.push(Some(root));
        tree.by_name.insert(ROOT_NAME.to_string(), ROOT);
        tree
    }

    /// Adds `name` as a child of `parent` (the caller checked the name and the parent).
    pub(crate) fn add_child(&mut self, parent: QueueId, name: String, is_leaf: bool) -> QueueId {
        let id = QueueId(self.slots.len() as u32);
        let depth = self.get(parent).depth + 1;
        let pool = self.pool_for(parent, &name);
        let mut q = Queue::new(id, name.clone(), Some(parent), is_leaf, depth);
        q.pool = pool;
        self.slots.push(Some(q));
        self.by_name.insert(name, id);
        self.get_mut(parent).children.insert(id);
        self.structure_changed = true;
        id
    }
}

impl<H, C> QueueTree<H, C> {
    /// The pool of a new child `name` of `parent`: a top-level queue's by the binding rule,
    /// any other's its parent's.
    fn pool_for(&self, parent: QueueId, name: &str) -> u16 {
        if parent != ROOT {
            return self.get(parent).pool;
        }
        let Some(pools) = &self.pools else {
            return 0;
        };
        pools
            .binding(name)
            .and_then(|b| pools.pools.iter().position(|p| p.name == b.pool()))
            .map_or(0, |i| (i + 1) as u16)
    }

    /// Sets the resource pools and re-binds every queue (in name order, where a parent's name
    /// sorts before its children's, so each parent's pool is known first).
    pub(crate) fn set_pools(
        &mut self,
        pools: Option<std::sync::Arc<weft_config::pools::ResourcePools>>,
    ) {
        self.pools = pools;
        let ids: Vec<QueueId> = self.ids().collect();
        for id in ids {
            let q = self.get(id);
            let pool = match q.parent {
                Some(parent) => self.pool_for(parent, &q.name.clone()),
                None => 0,
            };
            self.get_mut(id).pool = pool;
        }
        self.structure_changed = true;
    }

    pub(crate) fn get(&self, id: QueueId) -> &Queue<H, C> {
        match &self.slots[id.0 as usize] {
            Some(q) => q,
            None => panic!("queue {id:?} was removed but is still referenced"),
        }
    }

    pub(crate) fn get_mut(&mut self, id: QueueId) -> &mut Queue<H, C> {
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

    /// Every live queue, in arena order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Queue<H, C>> + '_ {
        self.slots.iter_mut().flatten()
    }

    /// One more than the largest queue id in use (ids index `0..id_bound()`).
    pub(crate) fn id_bound(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.by_name.len()
    }

    /// The queue and its ancestors, leaf first.
    pub(crate) fn path_to_root(&self, id: QueueId) -> PathToRoot<'_, H, C> {
        PathToRoot {
            tree: self,
            next: Some(id),
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

    /// Removes an empty queue.
    pub(crate) fn remove(&mut self, id: QueueId) {
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

    /// Removes empty dynamic queues, cascading to parents that become empty.
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

    /// Whether `user` may do what `acl` selects on queue `id` or any ancestor.
    pub(crate) fn allows(
        &self,
        id: QueueId,
        user: &str,
        groups: &[String],
        acl: impl Fn(&Queue<H, C>) -> &Acl,
    ) -> bool {
        self.path_to_root(id)
            .any(|q| acl(self.get(q)).allows(user, groups))
    }
}

/// `root.default` and its would-be children are never retyped or collected.
pub(crate) fn is_protected(name: &str) -> bool {
    name == DEFAULT_NAME || name.starts_with("root.default.")
}

/// Iterator from a queue up to the root.
pub(crate) struct PathToRoot<'a, H, C> {
    tree: &'a QueueTree<H, C>,
    next: Option<QueueId>,
}

impl<H, C> Iterator for PathToRoot<'_, H, C> {
    type Item = QueueId;
    fn next(&mut self) -> Option<QueueId> {
        let cur = self.next?;
        self.next = self.tree.get(cur).parent;
        Some(cur)
    }
}

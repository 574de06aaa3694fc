//! Trust, but verify: recompute every aggregate and ordering from scratch and report drift.
//!
//! Two forms make the same checks. [`Engine::verify`] does them all at once: tests run it
//! after every event, the simulator periodically. A driver that must not stall for the whole
//! of it (the RM's, at a million containers) runs a round of [`Engine::verify_slice`] calls
//! instead, events coming between them: three slices for the checks of the whole (queues,
//! cluster and pools; the orders; gangs and the rules' own), then the nodes and the apps a
//! bounded number of containers at a time, each entity checked whole within one slice.
//!
//! Running containers: the one-shot form sums them per app and per node in one sequential
//! pass over the container table (walking each list was ~2M dependent cache misses at full
//! scale) and checks each container's links against its neighbours; the sliced form cannot
//! sum the table while events come between slices, so it walks each entity's list within its
//! slice (which also finds a detached cycle, the one corruption the neighbour checks miss).
//! Nothing is formatted unless something drifted.

use crate::api::VerifyCursor;
use crate::lanes::Resource;

use crate::engine::{Engine, WalkMode};
use crate::objects::app::App;
use crate::objects::containers::{Owner, RunList};
use crate::objects::node::Node;
use crate::order::ordset::OrderedSet;
use crate::queues::QueueId;
use crate::rules::{AppOf, Rules};

/// A sliced round's phases over one engine, in order (see [`VerifyCursor::phase`]).
const PHASE_WHOLE: u32 = 0;
const PHASE_ORDERS: u32 = 1;
const PHASE_RULES: u32 = 2;
const PHASE_FOREIGN: u32 = 3;
const PHASE_NODES: u32 = 4;
const PHASE_APPS: u32 = 5;
const PHASE_DONE: u32 = 6;

/// One app's or node's containers as the table holds them (the one-shot form's pass).
#[derive(Clone, Copy)]
struct OwnerSum {
    live: bool,
    /// The owner's resource pool (its queue's, for an app); 0 without pools.
    pool: u16,
    total: Resource,
    count: u32,
}

impl OwnerSum {
    const NONE: OwnerSum = OwnerSum {
        live: false,
        pool: 0,
        total: Resource::ZERO,
        count: 0,
    };
}

fn app_label<X>(a: &App<X>) -> String {
    format!("app {}", a.id)
}

fn node_label(n: &Node) -> String {
    format!("node {}", n.host)
}

impl<R: Rules> Engine<R> {
    /// Every inconsistency between the maintained state and a from-scratch recomputation, in
    /// words. Empty means consistent. Also checks that no node is over its capacity.
    pub(crate) fn verify(&self) -> Vec<String> {
        let mut drift = Vec::new();
        self.verify_whole(&mut drift);
        self.verify_orders(&mut drift);
        self.verify_rules(&mut drift);
        self.verify_container_table(&mut drift);
        self.verify_foreign_usage(&mut drift);
        for n in self.nodes.values() {
            self.verify_node(n, &mut drift);
        }
        for a in self.apps.values() {
            self.verify_app(a, &mut drift);
        }
        drift
    }

    /// One slice of a verification round: the next checks from `cursor` on, up to about
    /// `budget` containers walked (an entity counts one besides; the checks of the whole take
    /// a slice of their own), drift added to `drift`. True when this engine's round is done.
    /// The checks are [`Engine::verify`]'s, made on the state each slice sees.
    pub(crate) fn verify_slice(
        &self,
        cursor: &mut VerifyCursor,
        budget: usize,
        drift: &mut Vec<String>,
    ) -> bool {
        // A budget of 0 would never get past the first entity.
        let budget = budget.max(1);
        let mut spent = 0;
        loop {
            match cursor.phase {
                PHASE_WHOLE => {
                    self.verify_whole(drift);
                    cursor.phase = PHASE_ORDERS;
                    return false;
                }
                PHASE_ORDERS => {
                    self.verify_orders(drift);
                    cursor.phase = PHASE_RULES;
                    return false;
                }
                PHASE_RULES => {
                    self.verify_rules(drift);
                    cursor.phase = PHASE_FOREIGN;
                    return false;
                }
                PHASE_FOREIGN => {
                    cursor.phase = PHASE_NODES;
                    cursor.slot = 0;
                    // A sequential pass over the table, only with pools.
                    if self.pools.is_some() {
                        self.verify_foreign_usage(drift);
                        return false;
                    }
                }
                PHASE_NODES => {
                    while cursor.slot < self.nodes.slot_bound() {
                        if spent >= budget {
                            return false;
                        }
                        if let Some(n) = self.nodes.at(cursor.slot) {
                            spent += 1 + self.verify_node_list(cursor.slot, n, drift);
                            self.verify_node(n, drift);
                        }
                        cursor.slot += 1;
                    }
                    cursor.phase = PHASE_APPS;
                    cursor.slot = 0;
                }
                PHASE_APPS => {
                    while cursor.slot < self.apps.slot_bound() {
                        if spent >= budget {
                            return false;
                        }
                        if let Some(a) = self.apps.at(cursor.slot) {
                            spent += 1 + self.verify_app_list(cursor.slot, a, drift);
                            self.verify_app(a, drift);
                        }
                        cursor.slot += 1;
                    }
                    cursor.phase = PHASE_DONE;
                }
                _ => return true,
            }
        }
    }

    /// The first of the checks of the whole, which need no container (with
    /// [`Engine::verify_orders`] and [`Engine::verify_rules`], a slice each): queues' sums, the
    /// cluster's capacity and use (against the nodes' figures, which the per-node checks hold
    /// to their containers), pools and the leaves' lists.
    fn verify_whole(&self, drift: &mut Vec<String>) {
        let sums = self.subtree_sums();
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let (usage, runnable) = sums
                .get(id.0 as usize)
                .copied()
                .flatten()
                .unwrap_or_else(|| (self.recursive_usage(id), self.recursive_runnable(id)));
            if usage != q.usage {
                drift.push(format!(
                    "queue {} usage {:?}, recomputed {:?}",
                    q.name, q.usage, usage
                ));
            }
            if runnable != q.runnable_count {
                drift.push(format!(
                    "queue {} runnable count {}, recomputed {}",
                    q.name, q.runnable_count, runnable
                ));
            }
            if q.path_unbounded != self.queues.path_unbounded_of(id) {
                drift.push(format!(
                    "queue {}: path_unbounded {} disagrees with the max shares above it",
                    q.name, q.path_unbounded
                ));
            }
        }
        let capacity = self
            .nodes
            .values()
            .try_fold(Resource::ZERO, |sum, n| sum.checked_add(n.capability));
        if capacity != Some(self.cluster) {
            drift.push(format!(
                "cluster capacity {:?}, recomputed from the nodes {capacity:?}",
                self.cluster
            ));
        }
        let used = self
            .nodes
            .values()
            .fold(Resource::ZERO, |sum, n| sum.saturating_add(n.allocated));
        if used != self.cluster_used {
            drift.push(format!(
                "cluster used {:?}, recomputed {:?}",
                self.cluster_used, used
            ));
        }
        self.verify_pools(drift);
        self.verify_leaf_lists(drift);
    }

    /// The fast path's candidate orders (when they are in use and not due for a rebuild).
    fn verify_orders(&self, drift: &mut Vec<String>) {
        if self.walk == WalkMode::Fast && !self.order_dirty {
            self.verify_order(drift);
        }
    }

    /// Gangs and the rules' own state (`Rules::verify`).
    fn verify_rules(&self, drift: &mut Vec<String>) {
        self.verify_gangs(drift);
        R::verify(self, drift);
    }

    /// Each queue's usage and runnable count recomputed from its apps and its children's, by
    /// queue id, in one pass down from root (`None`: not under root).
    fn subtree_sums(&self) -> Vec<Option<(Resource, i32)>> {
        let bound = self
            .queues
            .ids()
            .map(|q| q.0 as usize + 1)
            .max()
            .unwrap_or(0);
        let mut sums = vec![None; bound];
        self.sum_subtree(crate::queues::ROOT, &mut sums);
        sums
    }

    fn sum_subtree(&self, id: QueueId, sums: &mut [Option<(Resource, i32)>]) -> (Resource, i32) {
        let q = self.queues.get(id);
        let mut usage = q
            .runnable_apps
            .iter()
            .chain(q.non_runnable_apps.iter())
            .filter_map(|a| self.apps.get(a))
            .fold(Resource::ZERO, |sum, a| sum.saturating_add(a.usage));
        let mut runnable = q.runnable_apps.len() as i32;
        for c in &q.children {
            let (u, r) = self.sum_subtree(*c, sums);
            usage = usage.saturating_add(u);
            runnable += r;
        }
        if let Some(s) = sums.get_mut(id.0 as usize) {
            *s = Some((usage, runnable));
        }
        (usage, runnable)
    }

    /// A node's own figures: not over its capacity.
    fn verify_node(&self, n: &Node, drift: &mut Vec<String>) {
        if !R::fits_node(n.allocated.values(), &n.capability) {
            drift.push(format!(
                "node {} over capacity: {:?} > {:?}",
                n.host, n.allocated, n.capability
            ));
        }
    }

    /// An app's own figures: its blacklist flag, its outstanding asks, its requests' tags.
    fn verify_app(&self, a: &AppOf<R>, drift: &mut Vec<String>) {
        if a.has_blacklist != a.blacklists.as_ref().is_some_and(|b| !b.is_empty()) {
            drift.push(format!(
                "app {}: blacklist flag {} disagrees with its lists",
                a.id, a.has_blacklist
            ));
        }
        if a.asks_outstanding != a.any_outstanding() {
            drift.push(format!(
                "app {} has outstanding asks: {}, recomputed {}",
                a.id,
                a.asks_outstanding,
                a.any_outstanding()
            ));
        }
        if a.outstanding_asks != a.outstanding() {
            drift.push(format!(
                "app {} outstanding asks {:?}, recomputed {:?}",
                a.id,
                a.outstanding_asks,
                a.outstanding()
            ));
        }
        for (key, r) in a.requests.iter() {
            if let Some(counted) = r.tags.counted() {
                if counted != u64::from(r.any.count) {
                    drift.push(format!(
                        "app {} request {key:?}: ask tags count {counted} containers, the request {}",
                        a.id, r.any.count
                    ));
                }
            }
        }
    }

    /// The one-shot form's container checks, in one sequential pass over the container table:
    /// every container names a live app and node, is linked right on both lists
    /// ([`Engine::links_hold`]) and is flagged foreign exactly when its node is outside its
    /// app's pool; then each app's and node's list starts right, counts its containers and
    /// its usage (allocation) is their sum.
    fn verify_container_table(&self, drift: &mut Vec<String>) {
        let with_pools = self.pools.is_some();
        let mut by_app: Vec<OwnerSum> = (0..self.apps.slot_bound())
            .map(|s| match self.apps.at(s) {
                Some(a) => OwnerSum {
                    live: true,
                    pool: if with_pools {
                        self.queues.get(a.queue).pool
                    } else {
                        0
                    },
                    ..OwnerSum::NONE
                },
                None => OwnerSum::NONE,
            })
            .collect();
        let mut by_node: Vec<OwnerSum> = (0..self.nodes.slot_bound())
            .map(|s| match self.nodes.at(s) {
                Some(n) => OwnerSum {
                    live: true,
                    pool: n.pool,
                    ..OwnerSum::NONE
                },
                None => OwnerSum::NONE,
            })
            .collect();
        let (mut ownerless, mut broken) = (0usize, 0usize);
        let mut first_ownerless = None;
        let mut first_broken = None;
        for slot in 0..self.containers.slot_bound() {
            let Some(c) = self.containers.at(slot) else {
                continue;
            };
            let app = by_app.get_mut(c.app_slot as usize).filter(|s| s.live);
            let app_pool = app.map(|s| {
                s.total = s.total.saturating_add(c.size);
                s.count += 1;
                s.pool
            });
            let node = by_node.get_mut(c.node_slot as usize).filter(|s| s.live);
            let node_pool = node.map(|s| {
                s.total = s.total.saturating_add(c.size);
                s.count += 1;
                s.pool
            });
            let (Some(app_pool), Some(node_pool)) = (app_pool, node_pool) else {
                ownerless += 1;
                first_ownerless.get_or_insert(c.id);
                continue;
            };
            if !self.links_hold(slot, c, Owner::App) || !self.links_hold(slot, c, Owner::Node) {
                broken += 1;
                first_broken.get_or_insert(c.id);
            }
            if with_pools && (app_pool != node_pool) != c.foreign {
                self.foreign_flag_drift(c, drift);
            }
        }
        if let Some(first) = first_ownerless {
            drift.push(format!(
                "{ownerless} containers name an app or node that is not there (the first: {first})"
            ));
        }
        if let Some(first) = first_broken {
            drift.push(format!(
                "{broken} containers are not linked right on their app's or node's list (the first: {first})"
            ));
        }
        for (slot, found) in (0..).zip(&by_node) {
            if let Some(n) = self.nodes.at(slot) {
                let recorded = ("allocated", n.allocated);
                self.verify_table_count(
                    n.running,
                    Owner::Node,
                    slot,
                    found,
                    recorded,
                    || node_label(n),
                    drift,
                );
            }
        }
        for (slot, found) in (0..).zip(&by_app) {
            if let Some(a) = self.apps.at(slot) {
                let recorded = ("usage", a.usage);
                self.verify_table_count(
                    a.running,
                    Owner::App,
                    slot,
                    found,
                    recorded,
                    || app_label(a),
                    drift,
                );
            }
        }
    }

    /// One app's or node's list against what the table pass found naming it.
    #[allow(clippy::too_many_arguments)]
    fn verify_table_count(
        &self,
        list: RunList,
        owner: Owner,
        slot: u32,
        found: &OwnerSum,
        (label, recorded): (&str, Resource),
        what: impl Fn() -> String,
        drift: &mut Vec<String>,
    ) {
        if !self.head_holds(list, owner, slot) {
            drift.push(format!("{}: its list does not start right", what()));
        }
        if found.count as usize != list.len() {
            drift.push(format!(
                "{}: {} running containers name it, its list counts {}",
                what(),
                found.count,
                list.len()
            ));
        }
        if found.total != recorded {
            drift.push(format!(
                "{} {label} {recorded:?}, containers sum {:?}",
                what(),
                found.total
            ));
        }
    }

    /// A container flagged foreign when its node is in its app's pool, or not when outside.
    fn foreign_flag_drift(&self, c: &crate::objects::node::Container, drift: &mut Vec<String>) {
        let (Some(pools), Some(app), Some(node)) = (
            self.pools.as_deref(),
            self.apps.at(c.app_slot),
            self.nodes.at(c.node_slot),
        ) else {
            return;
        };
        let pool = self.queues.get(app.queue).pool;
        drift.push(format!(
            "container {} of app {} (pool {:?}) on node {} of pool {:?} is {}flagged foreign",
            c.id,
            app.id,
            pools.name(pool),
            node.host,
            pools.name(node.pool),
            if c.foreign { "" } else { "not " }
        ));
    }

    /// Each pool's foreign usage is the sum of the containers flagged foreign on its nodes
    /// (a sequential pass over the container table; nothing without pools).
    fn verify_foreign_usage(&self, drift: &mut Vec<String>) {
        let Some(pools) = &self.pools else {
            return;
        };
        let n = pools.capacity.len();
        let mut foreign_used = vec![Resource::ZERO; n];
        for slot in 0..self.containers.slot_bound() {
            let Some(c) = self.containers.at(slot).filter(|c| c.foreign) else {
                continue;
            };
            if let Some(node) = self.nodes.at(c.node_slot) {
                let i = usize::from(node.pool).min(n - 1);
                foreign_used[i] = foreign_used[i].saturating_add(c.size);
            }
        }
        if foreign_used != pools.foreign_used {
            drift.push(format!(
                "pools' foreign usage {:?}, recomputed {foreign_used:?}",
                pools.foreign_used
            ));
        }
    }

    /// The sliced form's walk of a node's list: every container names it, links back, the
    /// walk finds as many as it counts and their sizes add up to its allocation. Returns how
    /// many containers it walked.
    fn verify_node_list(&self, slot: u32, n: &Node, drift: &mut Vec<String>) -> usize {
        let walk = self.walk_list(n.running, Owner::Node, slot, |_| {});
        self.verify_walk(
            &walk,
            n.running,
            ("allocated", n.allocated),
            || node_label(n),
            drift,
        );
        walk.walked
    }

    /// [`Engine::verify_node_list`] for an app's list and usage; with pools, also each
    /// container's foreign flag.
    fn verify_app_list(&self, slot: u32, a: &AppOf<R>, drift: &mut Vec<String>) -> usize {
        let pool = self.pools.as_ref().map(|_| self.queues.get(a.queue).pool);
        let mut misflagged = Vec::new();
        let walk = self.walk_list(a.running, Owner::App, slot, |c| {
            let node_pool = self.nodes.at(c.node_slot).map(|n| n.pool);
            if let (Some(pool), Some(node_pool)) = (pool, node_pool) {
                if (pool != node_pool) != c.foreign {
                    misflagged.push(*c);
                }
            }
        });
        for c in &misflagged {
            self.foreign_flag_drift(c, drift);
        }
        self.verify_walk(&walk, a.running, ("usage", a.usage), || app_label(a), drift);
        walk.walked
    }

    fn verify_walk(
        &self,
        walk: &crate::objects::containers::ListWalk,
        list: RunList,
        (label, recorded): (&str, Resource),
        what: impl Fn() -> String,
        drift: &mut Vec<String>,
    ) {
        if walk.misowned > 0 {
            drift.push(format!(
                "{}: {} containers on its list hold another owner's slot",
                what(),
                walk.misowned
            ));
        }
        if walk.broken_links > 0 {
            drift.push(format!(
                "{}: {} links of its list do not hold",
                what(),
                walk.broken_links
            ));
        }
        if walk.walked != list.len() {
            drift.push(format!(
                "{} lists {} running containers, counts {}",
                what(),
                walk.walked,
                list.len()
            ));
        }
        if walk.total != recorded {
            drift.push(format!(
                "{} {label} {recorded:?}, containers sum {:?}",
                what(),
                walk.total
            ));
        }
    }

    /// Resource pools: each node in the pool its host names, each pool's capacity, usage and
    /// node count equal to its nodes' sums, and root's per-pool orders holding exactly root's
    /// candidates of that pool. (Containers' foreign flags and the pools' foreign usage are
    /// checked with the containers.)
    fn verify_pools(&self, drift: &mut Vec<String>) {
        let Some(pools) = &self.pools else {
            return;
        };
        let n = pools.capacity.len();
        let (mut capacity, mut used, mut count) = (
            vec![Resource::ZERO; n],
            vec![Resource::ZERO; n],
            vec![0u32; n],
        );
        let mut racks = std::collections::BTreeMap::new();
        for node in self.nodes.values() {
            let pool = pools.pool_of_node(&node.host, node.port);
            if pool != node.pool {
                drift.push(format!(
                    "node {} is in pool {:?}, its host belongs to {:?}",
                    node.host,
                    pools.name(node.pool),
                    pools.name(pool)
                ));
            }
            let i = usize::from(node.pool).min(n - 1);
            capacity[i] = capacity[i].saturating_add(node.capability);
            used[i] = used[i].saturating_add(node.allocated);
            count[i] += 1;
            *racks.entry((node.pool, node.rack.clone())).or_insert(0u32) += 1;
        }
        if racks != pools.rack_nodes {
            drift.push(format!(
                "pools' nodes per rack {:?}, recomputed {racks:?}",
                pools.rack_nodes
            ));
        }
        if capacity != pools.capacity || used != pools.used || count != pools.nodes {
            drift.push(format!(
                "pools' capacity {:?} used {:?} nodes {:?}, recomputed {capacity:?} {used:?} {count:?}",
                pools.capacity, pools.used, pools.nodes
            ));
        }
        if self.order_dirty || self.walk != WalkMode::Fast {
            return;
        }
        let root = self.queues.get(crate::queues::ROOT);
        for (pool, set) in pools.root_candidates.iter().enumerate() {
            let mut members: Vec<u64> = set.iter().map(|(_, m)| m).collect();
            let mut expected: Vec<u64> = root
                .candidates
                .iter()
                .map(|(_, m)| m)
                .filter(|m| usize::from(self.queues.get(QueueId(*m as u32)).pool) == pool)
                .collect();
            members.sort_unstable();
            expected.sort_unstable();
            if members != expected {
                drift.push(format!(
                    "root's order of pool {:?} holds queues {members:?}, root's candidates in that pool are {expected:?}",
                    pools.name(pool as u16)
                ));
            }
            let reservable = set
                .iter()
                .filter(|(_, m)| self.queues.get(QueueId(*m as u32)).reservable_in_parent)
                .count() as u32;
            if pools.root_reservable.get(pool) != Some(&reservable) {
                drift.push(format!(
                    "root's order of pool {:?} counts {:?} reservable members, flags say {reservable}",
                    pools.name(pool as u16),
                    pools.root_reservable.get(pool)
                ));
            }
        }
    }

    /// Every app is on exactly one list of exactly one leaf, the one it names (the update's
    /// demand pass relies on it).
    fn verify_leaf_lists(&self, drift: &mut Vec<String>) {
        let mut listed = 0;
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            for a in q.runnable_apps.iter().chain(q.non_runnable_apps.iter()) {
                listed += 1;
                match self.apps.get(a) {
                    Some(app) if app.queue == id && q.is_leaf => {}
                    Some(app) => drift.push(format!(
                        "app {a} is listed in {} but names queue {:?}",
                        q.name, app.queue
                    )),
                    None => drift.push(format!("queue {} lists unknown app {a}", q.name)),
                }
            }
        }
        if listed != self.apps.len() {
            drift.push(format!(
                "{listed} apps on the leaves' lists, {} in the app table",
                self.apps.len()
            ));
        }
    }

    pub(crate) fn recursive_runnable(&self, id: QueueId) -> i32 {
        let q = self.queues.get(id);
        let own = q.runnable_apps.len() as i32;
        own + q
            .children
            .iter()
            .map(|c| self.recursive_runnable(*c))
            .sum::<i32>()
    }

    fn verify_order(&self, drift: &mut Vec<String>) {
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let expected: OrderedSet = if q.is_leaf {
                q.runnable_apps
                    .iter()
                    .filter_map(|a| self.apps.get(a))
                    .filter(|a| R::is_candidate(self, a))
                    .map(|a| {
                        let slot = self.apps.slot_of(&a.id).unwrap_or(u32::MAX);
                        (R::app_key(self, a), u64::from(slot))
                    })
                    .collect()
            } else {
                q.children
                    .iter()
                    .map(|c| self.queues.get(*c))
                    .filter(|c| !c.candidates.is_empty())
                    .map(|c| (R::queue_key(self, id, c), c.id.0 as u64))
                    .collect()
            };
            if expected != q.candidates {
                drift.push(format!(
                    "queue {}: candidate order has {} entries, recomputed {} (or keys differ)",
                    q.name,
                    q.candidates.len(),
                    expected.len()
                ));
            }
            // Every member holds the handle of its own entry.
            for (slot, (_, member)) in q.candidates.iter_slots() {
                let handle = if q.is_leaf {
                    self.apps.at(member as u32).and_then(|a| a.leaf_slot)
                } else {
                    self.queues.get(QueueId(member as u32)).parent_slot
                };
                if handle != Some(slot) {
                    drift.push(format!(
                        "queue {}: member {} holds slot {:?}, its entry is in slot {}",
                        q.name, member, handle, slot
                    ));
                }
            }
            let mut reservable = 0;
            for (_, member) in expected.iter() {
                let (flagged, want) = if q.is_leaf {
                    match self.apps.at(member as u32) {
                        Some(a) => (a.reservable_in_leaf, self.app_reservable(a)),
                        None => (false, false),
                    }
                } else {
                    let c = self.queues.get(QueueId(member as u32));
                    (c.reservable_in_parent, c.reservable_members > 0)
                };
                if flagged != want {
                    drift.push(format!(
                        "queue {}: member {} flagged reservable {}, recomputed {}",
                        q.name, member, flagged, want
                    ));
                }
                reservable += u32::from(want);
            }
            if reservable != q.reservable_members {
                drift.push(format!(
                    "queue {}: {} reservable members counted, recomputed {}",
                    q.name, q.reservable_members, reservable
                ));
            }
        }
        // With every entry's member holding its slot, equal counts leave no stray handle.
        let (mut app_entries, mut queue_entries) = (0, 0);
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            if q.is_leaf {
                app_entries += q.candidates.len();
            } else {
                queue_entries += q.candidates.len();
            }
        }
        let app_handles = self.apps.values().filter(|a| a.leaf_slot.is_some()).count();
        let queue_handles = self
            .queues
            .ids()
            .filter(|q| self.queues.get(*q).parent_slot.is_some())
            .count();
        if (app_handles, queue_handles) != (app_entries, queue_entries) {
            drift.push(format!(
                "{app_handles} apps and {queue_handles} queues hold slots, the sets have \
                 {app_entries} app and {queue_entries} queue entries"
            ));
        }
        let mut sizes = std::collections::BTreeMap::new();
        for a in self.apps.values().filter(|a| a.leaf_slot.is_some()) {
            let mut distinct: Vec<_> = a
                .requests
                .values()
                .filter(|r| r.any.count > 0)
                .map(|r| *r.size.values())
                .collect();
            distinct.sort_unstable();
            distinct.dedup();
            for s in distinct {
                *sizes.entry(s).or_insert(0u32) += 1;
            }
        }
        if sizes != self.pending_sizes {
            drift.push(format!(
                "pending-size index has {} sizes, recomputed {}",
                self.pending_sizes.len(),
                sizes.len()
            ));
        }
    }
}

//! Trust, but verify: recompute every aggregate and ordering from scratch and report drift.
//!
//! Tests run this after every event; a driver may run it periodically and export the result.

use crate::lanes::Resource;

use crate::engine::{Engine, WalkMode};
use crate::objects::containers::{Owner, RunList};
use crate::order::ordset::OrderedSet;
use crate::queues::QueueId;
use crate::rules::Rules;

impl<R: Rules> Engine<R> {
    /// Every inconsistency between the maintained state and a from-scratch recomputation, in
    /// words. Empty means consistent. Also checks that no node is over its capacity.
    pub(crate) fn verify(&self) -> Vec<String> {
        let mut drift = Vec::new();
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let usage = self.recursive_usage(id);
            if usage != q.usage {
                drift.push(format!(
                    "queue {} usage {:?}, recomputed {:?}",
                    q.name, q.usage, usage
                ));
            }
            let runnable = self.recursive_runnable(id);
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
        let mut used = Resource::ZERO;
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
        for n in self.nodes.values() {
            let slot = self.nodes.slot_of(&n.id).unwrap_or(u32::MAX);
            let what = format!("node {}", n.host);
            let sum = self.verify_run_list(
                &what,
                n.running,
                Owner::Node,
                slot,
                ("allocated", n.allocated),
                &mut drift,
            );
            if !R::fits_node(n.allocated.values(), &n.capability) {
                drift.push(format!(
                    "node {} over capacity: {:?} > {:?}",
                    n.host, n.allocated, n.capability
                ));
            }
            used = used.saturating_add(sum);
        }
        if used != self.cluster_used {
            drift.push(format!(
                "cluster used {:?}, recomputed {:?}",
                self.cluster_used, used
            ));
        }
        self.verify_pools(&mut drift);
        for a in self.apps.values() {
            let slot = self.apps.slot_of(&a.id).unwrap_or(u32::MAX);
            let what = format!("app {}", a.id);
            self.verify_run_list(
                &what,
                a.running,
                Owner::App,
                slot,
                ("usage", a.usage),
                &mut drift,
            );
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
        self.verify_leaf_lists(&mut drift);
        if self.walk == WalkMode::Fast && !self.order_dirty {
            self.verify_order(&mut drift);
        }
        self.verify_gangs(&mut drift);
        R::verify(self, &mut drift);
        drift
    }

    /// Resource pools: each node in the pool its host names, each pool's capacity, usage and
    /// node count equal to its nodes' sums, a container flagged foreign exactly when its node
    /// is outside its app's pool, each pool's foreign usage their sum, and
    /// root's per-pool orders holding exactly root's candidates of that pool.
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
        let mut foreign_used = vec![Resource::ZERO; n];
        for app in self.apps.values() {
            let pool = self.queues.get(app.queue).pool;
            for id in self.container_ids(app.running, Owner::App) {
                let Some((c, node)) = self
                    .containers
                    .get(&id)
                    .and_then(|c| Some((c, self.nodes.at(c.node_slot)?)))
                else {
                    continue;
                };
                let outside = pool != node.pool;
                if outside != c.foreign {
                    drift.push(format!(
                        "container {id} of app {} (pool {:?}) on node {} of pool {:?} is {}flagged foreign",
                        app.id,
                        pools.name(pool),
                        node.host,
                        pools.name(node.pool),
                        if c.foreign { "" } else { "not " }
                    ));
                }
                if c.foreign {
                    let i = usize::from(node.pool).min(n - 1);
                    foreign_used[i] = foreign_used[i].saturating_add(c.size);
                }
            }
        }
        if foreign_used != pools.foreign_used {
            drift.push(format!(
                "pools' foreign usage {:?}, recomputed {foreign_used:?}",
                pools.foreign_used
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

    /// One app's or node's list of running containers against what it records: every
    /// container names it (its table `slot`), the walk finds as many as it counts, and their
    /// sizes add up to `recorded` (its usage or allocation, named by the label). Returns the sum.
    fn verify_run_list(
        &self,
        what: &str,
        list: RunList,
        owner: Owner,
        slot: u32,
        (label, recorded): (&str, Resource),
        drift: &mut Vec<String>,
    ) -> Resource {
        let found = self.list_summary(list, owner, slot);
        let (sum, walked, strays) = (found.total, found.walked, found.misowned);
        if strays > 0 {
            drift.push(format!(
                "{what}: {strays} containers on its list hold another owner's slot"
            ));
        }
        if walked != list.len() {
            drift.push(format!(
                "{what} lists {walked} running containers, counts {}",
                list.len()
            ));
        }
        if sum != recorded {
            drift.push(format!(
                "{what} {label} {recorded:?}, containers sum {sum:?}"
            ));
        }
        sum
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

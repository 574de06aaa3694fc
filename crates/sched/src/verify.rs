//! Trust, but verify: recompute every aggregate and ordering from scratch and report drift.
//!
//! Tests run this after every event; a driver may run it periodically and export the result.

use weft_types::Resource;

use crate::ordset::OrderedSet;
use crate::policy::sort_key;
use crate::queues::QueueId;
use crate::running::{Owner, RunList};
use crate::scheduler::{Scheduler, WalkMode};

impl Scheduler {
    /// Every inconsistency between the maintained state and a from-scratch recomputation, in
    /// words. Empty means consistent. Also checks that no node is over its capacity.
    pub fn verify(&self) -> Vec<String> {
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
            if !n.allocated.fits_in(&n.capability) {
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
        drift
    }

    /// Repairs drift: recomputes every figure the scheduler maintains from what it holds (its
    /// running containers, its apps' requests and the queues' app lists): the usage of apps,
    /// nodes, queues and the cluster, the runnable counts, the cached outstanding asks, the
    /// max-share path flags, and the fast path's order (rebuilt before the next heartbeat, as
    /// after a reload). What it cannot recompute (an app listed by the wrong leaf, a node over
    /// its capacity, ask tags that disagree with their request) `verify` keeps reporting.
    pub fn rebuild_derived(&mut self) {
        let app_slots: Vec<u32> = self
            .apps
            .values()
            .filter_map(|a| self.apps.slot_of(&a.id))
            .collect();
        for slot in app_slots {
            let Some(list) = self.apps.at(slot).map(|a| a.running) else {
                continue;
            };
            let usage = self.list_summary(list, Owner::App, slot).total;
            if let Some(a) = self.apps.at_mut(slot) {
                a.usage = usage;
                a.refresh_outstanding();
                a.threshold_ask = None;
            }
        }
        let mut used = Resource::ZERO;
        let node_ids: Vec<_> = self.nodes.values().map(|n| n.id).collect();
        for id in node_ids {
            let Some(slot) = self.nodes.slot_of(&id) else {
                continue;
            };
            let Some(list) = self.nodes.at(slot).map(|n| n.running) else {
                continue;
            };
            let allocated = self.list_summary(list, Owner::Node, slot).total;
            if let Some(n) = self.nodes.at_mut(slot) {
                n.allocated = allocated;
            }
            used = used.saturating_add(allocated);
        }
        self.cluster_used = used;
        self.refresh_root_available();
        let queue_ids: Vec<QueueId> = self.queues.ids().collect();
        for id in queue_ids {
            let usage = self.recursive_usage(id);
            let runnable = self.recursive_runnable(id);
            let q = self.queues.get_mut(id);
            q.usage = usage;
            q.runnable_count = runnable;
        }
        self.queues.refresh_path_bounds();
        self.order_dirty = true;
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

    fn recursive_runnable(&self, id: QueueId) -> i32 {
        let q = self.queues.get(id);
        let own = q.runnable_apps.len() as i32;
        own + q
            .children
            .iter()
            .map(|c| self.recursive_runnable(*c))
            .sum::<i32>()
    }

    fn verify_order(&self, drift: &mut Vec<String>) {
        let ctx = self.policy_context();
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let expected: OrderedSet = if q.is_leaf {
                q.runnable_apps
                    .iter()
                    .filter_map(|a| self.apps.get(a))
                    .filter(|a| Self::is_candidate(a))
                    .map(|a| {
                        let slot = self.apps.slot_of(&a.id).unwrap_or(u32::MAX);
                        (
                            sort_key(q.policy, &Self::app_view(a), &ctx),
                            u64::from(slot),
                        )
                    })
                    .collect()
            } else {
                q.children
                    .iter()
                    .map(|c| self.queues.get(*c))
                    .filter(|c| !c.candidates.is_empty())
                    .map(|c| {
                        (
                            sort_key(q.policy, &Self::queue_view(c, c.usage), &ctx),
                            c.id.0 as u64,
                        )
                    })
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

#[cfg(test)]
mod tests {
    use weft_types::{AppId, NodeId, Resource, Time};

    use crate::api::{AskTag, ContainerAsk, Decision, Event, SchedulerConfig};
    use crate::queues::ROOT;
    use crate::scheduler::Scheduler;

    fn busy_scheduler() -> Scheduler {
        let mut s = Scheduler::new(SchedulerConfig::default(), Default::default());
        let send = |s: &mut Scheduler, e: Event| s.handle(Time(0), e).expect("accepted");
        for n in 1..=2 {
            send(
                &mut s,
                Event::NodeAdded {
                    node: NodeId(n),
                    host: format!("n{n}"),
                    rack: "/r".into(),
                    capability: Resource::new(8192, 8),
                },
            );
        }
        for app in 1..=2 {
            send(
                &mut s,
                Event::AppSubmitted {
                    app: AppId(app),
                    user: format!("u{app}"),
                    queue: None,
                    am_resource: None,
                },
            );
            send(
                &mut s,
                Event::Ask {
                    app: AppId(app),
                    ask: ContainerAsk {
                        priority: 1,
                        resources: Resource::new(1024, 1),
                        count: 6,
                        hosts: vec![],
                        racks: vec![],
                        relax_locality: true,
                        tag: AskTag::NONE,
                    },
                },
            );
        }
        send(&mut s, Event::Update);
        for n in [1, 2, 1] {
            send(&mut s, Event::NodeHeartbeat { node: NodeId(n) });
        }
        while s.poll_decision().is_some() {}
        s
    }

    fn allocations(s: &mut Scheduler, heartbeats: u32) -> Vec<(AppId, NodeId)> {
        for i in 0..heartbeats {
            let node = NodeId(1 + i % 2);
            s.handle(Time(1), Event::NodeHeartbeat { node })
                .expect("heartbeat");
        }
        std::iter::from_fn(|| s.poll_decision())
            .filter_map(|d| match d {
                Decision::Allocated { app, node, .. } => Some((app, node)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_rebuild_repairs_every_drifted_figure_and_decisions_go_on_as_without_drift() {
        let mut healthy = busy_scheduler();
        let mut drifted = busy_scheduler();
        assert_eq!(drifted.verify(), Vec::<String>::new());
        let odd = Resource::new(512, 3);
        drifted.cluster_used = odd;
        drifted.queues.get_mut(ROOT).usage = odd;
        drifted.queues.get_mut(ROOT).runnable_count = 7;
        if let Some(a) = drifted.apps.get_mut(&AppId(1)) {
            a.usage = odd;
            a.outstanding_asks = odd;
        }
        if let Some(n) = drifted.nodes.get_mut(&NodeId(2)) {
            n.allocated = odd;
        }
        let found = drifted.verify();
        for what in [
            "cluster used",
            "queue root usage",
            "queue root runnable count",
            "app app_0001 usage",
            "app app_0001 outstanding asks",
            "node n2 allocated",
        ] {
            assert!(
                found.iter().any(|d| d.contains(what)),
                "{what} not reported: {found:?}"
            );
        }
        drifted.rebuild_derived();
        assert_eq!(drifted.verify(), Vec::<String>::new());
        assert_eq!(allocations(&mut drifted, 6), allocations(&mut healthy, 6));
        assert_eq!(drifted.verify(), Vec::<String>::new());
    }

    #[test]
    fn a_rebuild_of_a_consistent_scheduler_changes_no_decision() {
        let mut a = busy_scheduler();
        let mut b = busy_scheduler();
        b.rebuild_derived();
        assert_eq!(b.verify(), Vec::<String>::new());
        let got = allocations(&mut b, 8);
        assert!(!got.is_empty(), "the asks left are served");
        assert_eq!(got, allocations(&mut a, 8));
    }
}

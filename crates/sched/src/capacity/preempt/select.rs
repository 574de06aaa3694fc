//! The FIFO candidate selector (capacity spec §8.5): per leaf with something to give, its
//! apps in reverse ordering-policy order (fifo: lowest application priority, then youngest,
//! first); per app its reserved nodes, then its live containers from the least important
//! request priority (numerically largest) and newest first, AM containers set aside; then the
//! set-aside AMs, only while they hold more than the leaf's AM share of its guarantee.

use crate::lanes::Resource;
use weft_types::{ContainerId, NodeId};

use super::snapshot::Snapshot;
use crate::capacity::CapacityEngine;
use crate::objects::containers::Owner;

/// What one round selected.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    /// Live containers, in selection order.
    pub(crate) containers: Vec<ContainerId>,
    /// Nodes whose reservation (held by a visited app) is to be dropped at once.
    pub(crate) reserved_nodes: Vec<NodeId>,
}

/// A leaf's amount still to obtain (`None` once obtained: Hadoop removes the partition from
/// its map) and the round's allowance left.
struct Budget {
    to_obtain: Option<Resource>,
    allowed: Resource,
}

impl CapacityEngine {
    /// Selects containers for every leaf's amount to obtain, within `total_allowed`.
    pub(crate) fn select_fifo(&self, snap: &Snapshot, total_allowed: Resource) -> Chosen {
        let mut chosen = Chosen::default();
        let mut allowed = total_allowed;
        for (i, q) in snap.tree.iter().enumerate() {
            if !q.children.is_empty() || q.preemption_disabled {
                continue;
            }
            if !self
                .rules
                .calc
                .gt(&self.cluster, &q.to_obtain, &Resource::ZERO)
            {
                continue;
            }
            let mut budget = Budget {
                to_obtain: Some(q.to_obtain),
                allowed,
            };
            self.select_in_leaf(snap.ids[i], &mut budget, &mut chosen);
            allowed = budget.allowed;
        }
        chosen
    }

    fn select_in_leaf(
        &self,
        leaf: crate::queues::QueueId,
        budget: &mut Budget,
        chosen: &mut Chosen,
    ) {
        let queue = self.queues.get(leaf);
        let mut apps: Vec<_> = queue
            .runnable_apps
            .iter()
            .filter_map(|id| self.apps.get(id))
            .collect();
        apps.sort_by(|a, b| self.cs_compare_apps(leaf, b, a));
        let mut skipped_ams: Vec<(ContainerId, Resource)> = Vec::new();
        let mut skipped_am_size = Resource::ZERO;
        for app in apps {
            if budget.to_obtain.is_none() {
                break;
            }
            for node in &app.reservations {
                if budget.to_obtain.is_none() {
                    break;
                }
                let Some(size) = self
                    .nodes
                    .get(node)
                    .and_then(|n| n.reservation.as_ref())
                    .filter(|r| r.app == app.id)
                    .map(|r| r.size)
                else {
                    continue;
                };
                // Hadoop drops every visited reservation, counted or not.
                self.try_preempt(size, budget);
                chosen.reserved_nodes.push(*node);
            }
            let mut live: Vec<(i32, ContainerId, Resource)> = self
                .container_ids(app.running, Owner::App)
                .into_iter()
                .filter_map(|id| self.containers.get(&id).map(|c| (c.priority, id, c.size)))
                .collect();
            live.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
            for (_, id, size) in live {
                if budget.to_obtain.is_none() {
                    break;
                }
                if app.am_container == Some(id) {
                    skipped_ams.push((id, size));
                    skipped_am_size = skipped_am_size.saturating_add(size);
                    continue;
                }
                if self.try_preempt(size, budget) {
                    chosen.containers.push(id);
                }
            }
        }
        let limits = &queue.rules_cold;
        let am_share = limits.leaf.as_ref().map_or(0.0, |l| l.am_percent);
        let keep = self
            .cluster
            .mul_trunc(queue.rules.abs_capacity)
            .mul_trunc(am_share);
        for (id, size) in skipped_ams {
            if budget.to_obtain.is_none()
                || !self.rules.calc.gt(&self.cluster, &skipped_am_size, &keep)
            {
                break;
            }
            if self.try_preempt(size, budget) {
                chosen.containers.push(id);
                skipped_am_size = skipped_am_size.saturating_sub(size);
            }
        }
    }

    /// `tryPreemptContainerAndDeductResToObtain`, inter-queue (not conservative) DRF rule: a
    /// container is taken when something is still owed, it fits in the round's allowance, and
    /// it reduces some type still owed (a type owed 0 counts as -1, so it never blocks).
    fn try_preempt(&self, size: Resource, budget: &mut Budget) -> bool {
        let calc = self.rules.calc;
        let cluster = self.cluster;
        let Some(mut owed) = budget.to_obtain else {
            return false;
        };
        let types = self.properties.resource_types.len().max(2);
        for i in 0..types {
            if owed.get(i) == 0 {
                owed.set(i, -1);
            }
        }
        let any_owed = if calc.is_dominant() {
            (0..types).any(|i| owed.get(i) > 0)
        } else {
            owed.memory_mb() > 0
        };
        budget.to_obtain = Some(owed);
        if !any_owed || !calc.fits(&size, &budget.allowed) {
            return false;
        }
        let after = owed.saturating_sub(size);
        if !calc.lt(
            &cluster,
            &after.cw_max(Resource::ZERO),
            &owed.cw_max(Resource::ZERO),
        ) {
            return false;
        }
        budget.allowed = budget.allowed.saturating_sub(size);
        budget.to_obtain = if calc.gt(&cluster, &after, &Resource::ZERO) {
            Some(after)
        } else {
            None
        };
        true
    }
}

//! The round's snapshot of the queue tree (capacity spec §8.2 step 1, Hadoop's "TQ"), default
//! partition: what the ideal-allocation pass reads of each queue.

use std::collections::BTreeMap;

use crate::lanes::Resource;

use super::ideal::TempQueue;
use crate::capacity::{Calc, CapacityEngine};
use crate::queues::{QueueId, ROOT};

/// The snapshot: `tree[i]` is the queue `ids[i]` named `names[i]`; root first, each parent
/// before its children.
pub(crate) struct Snapshot {
    pub(crate) tree: Vec<TempQueue>,
    pub(crate) ids: Vec<QueueId>,
    pub(crate) names: Vec<String>,
}

impl CapacityEngine {
    /// Every queue's figures now.
    pub(crate) fn preemption_snapshot(&self) -> Snapshot {
        let mut snap = Snapshot {
            tree: Vec::with_capacity(self.queues.len()),
            ids: Vec::with_capacity(self.queues.len()),
            names: Vec::with_capacity(self.queues.len()),
        };
        self.preemption_snapshot_queue(ROOT, &mut snap);
        snap
    }

    /// Adds `id` and its subtree; returns its index.
    fn preemption_snapshot_queue(&self, id: QueueId, snap: &mut Snapshot) -> usize {
        let q = self.queues.get(id);
        let at = snap.tree.len();
        let (guaranteed, max) = if q.parent.is_none() {
            (self.cluster, self.cluster)
        } else {
            (self.eff_min_of(q), self.eff_max_of(q))
        };
        let preemption_disabled = self
            .rules
            .file
            .queues
            .get(q.rules_cold.index)
            .is_some_and(|c| c.disable_preemption);
        snap.tree.push(TempQueue {
            used: self.used(id),
            guaranteed,
            max,
            preemption_disabled,
            ..TempQueue::default()
        });
        snap.ids.push(id);
        snap.names.push(q.name.clone());
        if q.is_leaf {
            let (pending, deduct_reserved) = self.pending_within_user_limits(id);
            snap.tree[at].pending = pending;
            snap.tree[at].pending_deduct_reserved = deduct_reserved;
            return at;
        }
        let children: Vec<QueueId> = q.children.iter().copied().collect();
        for c in children {
            let child = self.preemption_snapshot_queue(c, snap);
            snap.tree[at].children.push(child);
            let (p, d) = (
                snap.tree[child].pending,
                snap.tree[child].pending_deduct_reserved,
            );
            let parent = &mut snap.tree[at];
            parent.pending = parent.pending.saturating_add(p);
            parent.pending_deduct_reserved = parent.pending_deduct_reserved.saturating_add(d);
        }
        at
    }

    /// A leaf's pending resources considering user limits (Hadoop's
    /// `getTotalPendingResourcesConsideringUserLimit`): each active app's outstanding asks, as
    /// far as its user's headroom to the user limit still covers them; then the same with each
    /// app's reservations deducted from its asks first.
    fn pending_within_user_limits(&self, leaf: QueueId) -> (Resource, Resource) {
        let users = self.leaf_users(leaf);
        let limit = self.user_limit_with(leaf, &users);
        let headroom: BTreeMap<&str, Resource> = users
            .iter()
            .map(|(name, u)| {
                let own = self.user_limit_of(leaf, name, limit);
                (*name, own.saturating_sub(u.used).cw_max(Resource::ZERO))
            })
            .collect();
        let mut plain = headroom.clone();
        let mut deducted = headroom;
        let (mut pending, mut pending_deduct) = (Resource::ZERO, Resource::ZERO);
        for id in &self.queues.get(leaf).runnable_apps {
            let Some(app) = self.apps.get(id) else {
                continue;
            };
            let asks = app.outstanding_asks.cw_max(Resource::ZERO);
            let without_reserved = asks
                .saturating_sub(self.app_reserved(app))
                .cw_max(Resource::ZERO);
            if let Some(room) = plain.get_mut(app.user.as_str()) {
                let take = room.cw_min(asks);
                pending = pending.saturating_add(take);
                *room = room.saturating_sub(take);
            }
            if let Some(room) = deducted.get_mut(app.user.as_str()) {
                let take = room.cw_min(without_reserved);
                pending_deduct = pending_deduct.saturating_add(take);
                *room = room.saturating_sub(take);
            }
        }
        (pending, pending_deduct)
    }
}

impl Snapshot {
    /// The leaf furthest below its ideal (named as what a kill is `for_queue`); root when
    /// none is below.
    pub(crate) fn most_underserved(&self, calc: Calc, cluster: Resource) -> String {
        let mut best: Option<(usize, Resource)> = None;
        for (i, q) in self.tree.iter().enumerate() {
            if !q.children.is_empty() || !calc.gt(&cluster, &q.ideal, &q.used) {
                continue;
            }
            let gap = q.ideal.saturating_sub(q.used);
            if best.is_none_or(|(_, g)| calc.gt(&cluster, &gap, &g)) {
                best = Some((i, gap));
            }
        }
        best.map_or_else(|| self.names[0].clone(), |(i, _)| self.names[i].clone())
    }

    /// Each leaf that has something to give this round: (name, ideal, to obtain).
    pub(crate) fn report(&self) -> Vec<(String, Resource, Resource)> {
        self.tree
            .iter()
            .zip(&self.names)
            .filter(|(q, _)| q.children.is_empty() && q.to_obtain.any_positive())
            .map(|(q, name)| (name.clone(), q.ideal, q.to_obtain))
            .collect()
    }
}

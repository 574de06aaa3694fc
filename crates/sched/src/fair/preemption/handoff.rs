//! Earmarks (preemption spec A.7, A.8; Hadoop 3.x's `FSSchedulerNode.resourcesPreemptedForApp`):
//! room on a node that preemption is freeing for a starved app, and its hand-off at the
//! node's heartbeat, before the reservation step and the normal walk.
//!
//! The walk is the fast path: a heartbeat on a cluster without earmarks costs one test, and
//! on a node without earmarks one map look-up.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::lanes::Resource;
use weft_types::{AppId, NodeId};

use crate::api::Decision;
use crate::fair::policy::calculator_compare;
use crate::fair::FairEngine;
use crate::walk::Assignment;

/// One node's earmarks.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct NodeEarmarks {
    /// Per starved app, in the order the apps first earmarked the node: what is still owed.
    pub(crate) for_apps: Vec<(AppId, Resource)>,
    /// Their sum (Hadoop's `totalResourcesPreempted`): kept out of the room `tryNode` counts.
    pub(crate) total: Resource,
}

/// Every node's earmarks.
#[derive(Clone, Debug, Default)]
pub(crate) struct Earmarks {
    by_node: BTreeMap<NodeId, NodeEarmarks>,
}

impl Earmarks {
    pub(crate) fn is_empty(&self) -> bool {
        self.by_node.is_empty()
    }

    /// The node's earmarks, if it has any.
    pub(crate) fn on(&self, node: NodeId) -> Option<&NodeEarmarks> {
        self.by_node.get(&node)
    }

    /// The node's earmarked total (zero without earmarks).
    pub(crate) fn total_on(&self, node: NodeId) -> Resource {
        self.by_node.get(&node).map_or(Resource::ZERO, |e| e.total)
    }

    /// Whether `app` holds an earmark on `node`.
    pub(crate) fn holds(&self, node: NodeId, app: AppId) -> bool {
        self.by_node
            .get(&node)
            .is_some_and(|e| e.for_apps.iter().any(|(a, _)| *a == app))
    }

    /// Earmarks `amount` more of `node` for `app`.
    pub(crate) fn add(&mut self, node: NodeId, app: AppId, amount: Resource) {
        if amount.is_zero() {
            return;
        }
        let e = self.by_node.entry(node).or_default();
        e.total = e.total.saturating_add(amount);
        match e.for_apps.iter_mut().find(|(a, _)| *a == app) {
            Some((_, owed)) => *owed = owed.saturating_add(amount),
            None => e.for_apps.push((app, amount)),
        }
    }

    /// Drops the entries of `node` that `keep` refuses.
    fn retain_on(&mut self, node: NodeId, mut keep: impl FnMut(AppId, Resource) -> bool) {
        let Some(e) = self.by_node.get_mut(&node) else {
            return;
        };
        let mut total = Resource::ZERO;
        e.for_apps.retain(|(a, owed)| {
            let kept = keep(*a, *owed);
            if kept {
                total = total.saturating_add(*owed);
            }
            kept
        });
        e.total = total;
        if e.for_apps.is_empty() {
            self.by_node.remove(&node);
        }
    }

    /// An allocation of `size` to `app` on `node`: its earmark there shrinks by as much
    /// (component-wise, floored at zero), and goes at zero.
    fn shrink(&mut self, node: NodeId, app: AppId, size: Resource) {
        let Some(e) = self.by_node.get_mut(&node) else {
            return;
        };
        let Some(i) = e.for_apps.iter().position(|(a, _)| *a == app) else {
            return;
        };
        let owed = e.for_apps[i].1;
        let taken = owed.cw_min(size).clamp_non_negative();
        let left = owed.saturating_sub(taken);
        e.total = e.total.saturating_sub(taken);
        if left.is_zero() {
            e.for_apps.remove(i);
        } else {
            e.for_apps[i].1 = left;
        }
        if e.for_apps.is_empty() {
            self.by_node.remove(&node);
        }
    }

    /// Keeps only the nodes `keep` accepts.
    pub(crate) fn retain_nodes(&mut self, mut keep: impl FnMut(NodeId) -> bool) {
        self.by_node.retain(|n, _| keep(*n));
    }
}

impl FairEngine {
    /// Hadoop's `isStarved`: usage below the app's fair share (its leaf's calculator, now) or
    /// some min-share starvation (as of its last evaluation).
    pub(crate) fn is_starved(&self, app: AppId) -> bool {
        let Some(a) = self.apps.get(&app) else {
            return false;
        };
        let leaf = self.queues.get(a.queue);
        let below = calculator_compare(
            leaf.rules.policy,
            a.usage,
            a.rules.fair_share,
            &self.policy_context_of(leaf.pool),
            true,
        ) == Ordering::Less;
        below || a.rules.min_share_starved
    }

    /// `Rules::heartbeat_starts`: hands the node's earmarked room to the apps it is earmarked
    /// for (spec A.8 steps 1-2). `Some(mark)` when the node has earmarks, so that
    /// `heartbeat_assigned` shrinks them by what the heartbeat allocated.
    #[inline]
    pub(crate) fn hand_off_earmarks(&mut self, node: NodeId) -> Option<usize> {
        if self.rules.preemption.earmarks.is_empty() {
            return None;
        }
        self.hand_off_earmarks_on(node)
    }

    /// `hand_off_earmarks` once some node holds earmarks (kept out of the heartbeat's inlined
    /// code).
    #[inline(never)]
    fn hand_off_earmarks_on(&mut self, node: NodeId) -> Option<usize> {
        self.rules.preemption.earmarks.on(node)?;
        self.clean_up_earmarks(node);
        let mark = self.decisions.len();
        let owed: Vec<(AppId, Resource)> = self
            .rules
            .preemption
            .earmarks
            .on(node)
            .map(|e| e.for_apps.clone())
            .unwrap_or_default();
        for (app, mut pending) in owed {
            // Preemption is not pool-aware yet (issue 16 item 5): room freed on another pool's
            // node is never handed to the app, which runs only on its own pool's nodes.
            if self.pools.is_some() && !self.app_may_use_node(app, node) {
                continue;
            }
            while self.apps.contains_key(&app) && !pending.is_zero() {
                match self.assign_app(app, node, None) {
                    // A container of no size would never pay anything off.
                    Assignment::Allocated(size) if !pending.cw_min(size).is_zero() => {
                        pending = pending.saturating_sub(size).clamp_non_negative();
                    }
                    Assignment::Allocated(_)
                    | Assignment::None
                    | Assignment::Reserved
                    | Assignment::QueueBlocked => break,
                }
            }
        }
        Some(mark)
    }

    /// Spec A.8 step 1: entries of apps that are gone, no longer starved, or whose stored
    /// starvations are both none, are dropped.
    fn clean_up_earmarks(&mut self, node: NodeId) {
        let Some(apps) = self
            .rules
            .preemption
            .earmarks
            .on(node)
            .map(|e| e.for_apps.iter().map(|(a, _)| *a).collect::<Vec<_>>())
        else {
            return;
        };
        let keep: Vec<AppId> = apps
            .into_iter()
            .filter(|app| {
                let stored = self
                    .rules
                    .preemption
                    .starvation
                    .by_app
                    .get(app)
                    .is_some_and(|s| {
                        !s.fair_share_starvation.is_zero() || !s.min_share_starvation.is_zero()
                    });
                self.apps.contains_key(app) && self.is_starved(*app) && stored
            })
            .collect();
        self.rules
            .preemption
            .earmarks
            .retain_on(node, |a, _| keep.contains(&a));
    }

    /// `Rules::heartbeat_assigned`: every allocation on the node since `mark` shrinks its
    /// app's earmark there (spec A.8 step 3).
    pub(crate) fn shrink_earmarks(&mut self, node: NodeId, mark: usize) {
        let allocated: Vec<(AppId, Resource)> = self
            .decisions
            .range(mark.min(self.decisions.len())..)
            .filter_map(|d| match d {
                Decision::Allocated {
                    app,
                    node: n,
                    resources,
                    ..
                } if *n == node => Some((*app, crate::lanes::truncate(*resources))),
                _ => None,
            })
            .collect();
        for (app, size) in allocated {
            self.rules.preemption.earmarks.shrink(node, app, size);
        }
    }

    /// Earmarks that disagree with themselves or name a node that is gone, in words.
    pub(crate) fn verify_earmarks(&self, drift: &mut Vec<String>) {
        for (node, e) in &self.rules.preemption.earmarks.by_node {
            if !self.nodes.contains_key(node) {
                drift.push(format!("node {node:?} is gone but holds earmarks"));
            }
            let sum = e
                .for_apps
                .iter()
                .fold(Resource::ZERO, |s, (_, r)| s.saturating_add(*r));
            if sum != e.total {
                drift.push(format!(
                    "node {node:?}: earmarked total {:?}, recomputed {sum:?}",
                    e.total
                ));
            }
            if e.for_apps.is_empty() {
                drift.push(format!("node {node:?}: an empty earmark entry is kept"));
            }
        }
    }
}

//! What the Capacity Scheduler shows: queue rights and each queue's figures as Hadoop's REST
//! API reports them (capacity spec §9: capacities as percentages, state, users and limits).

use crate::api::{CapacityQueueDetails, CapacityUserDetails, QueueAccess};
use crate::lanes::outward;
use crate::lanes::Resource;

use crate::queues::{QueueId, ROOT};

use super::CapacityEngine;

impl CapacityEngine {
    /// Queue rights: `Some(allowed)` for a queue that exists (full path or leaf short name).
    pub(crate) fn cs_queue_access(
        &self,
        queue: &str,
        user: &str,
        access: QueueAccess,
    ) -> Option<bool> {
        let q = self.resolve_queue(queue)?;
        let groups = self.groups.get(user).cloned().unwrap_or_default();
        let admin = self.queues.allows(q, user, &groups, |x| &x.acl_admin);
        Some(match access {
            QueueAccess::Administer => admin,
            QueueAccess::Submit => admin || self.queues.allows(q, user, &groups, |x| &x.acl_submit),
        })
    }

    /// Each queue's Capacity figures, in the snapshot's order (depth first, children by name).
    pub(crate) fn capacity_details(&self) -> Vec<CapacityQueueDetails> {
        let mut out = Vec::new();
        self.details_of(ROOT, &mut out);
        out
    }

    fn details_of(&self, id: QueueId, out: &mut Vec<CapacityQueueDetails>) {
        let calc = self.rules.calc;
        let q = self.queues.get(id);
        let c = &q.rules_cold;
        let used = self.used(id);
        let p = self.cluster;
        let (used_capacity, absolute_used_capacity) = if p.is_zero() {
            (0.0, 0.0)
        } else {
            (
                calc.divide(&p, &used, &self.guaranteed_of(q)),
                calc.divide(&p, &used, &p),
            )
        };
        let (users, user_limit) = if q.is_leaf {
            let limit = self.user_limit(id);
            let users = self
                .leaf_users(id)
                .into_iter()
                .map(|(name, u)| CapacityUserDetails {
                    user: name.to_string(),
                    usage: outward(u.used),
                    running_apps: u.running_apps,
                    pending_apps: u.pending_apps,
                    user_limit: outward(self.user_limit_of(id, name, limit)),
                    am_used: outward(u.am_used),
                    active: u.active,
                    weight: c
                        .leaf
                        .as_ref()
                        .and_then(|l| l.user_weights.get(name).copied())
                        .unwrap_or(1.0),
                })
                .collect();
            (users, Some(limit))
        } else {
            (Vec::new(), None)
        };
        let (am_limit, user_am_limit, max_applications, max_applications_per_user) = match &c.leaf {
            Some(l) => {
                let first_user = users.first().map_or("", |u| u.user.as_str());
                let (queue_limit, user_limit) = self.am_limits(id, first_user);
                (
                    Some(queue_limit),
                    Some(user_limit),
                    Some(l.max_applications),
                    Some(l.max_applications_per_user),
                )
            }
            None => (None, None, None, None),
        };
        let (active_apps, pending_apps) = self.apps_below(id);
        out.push(CapacityQueueDetails {
            name: q.name.clone(),
            capacity: c.capacity * 100.0,
            max_capacity: c.max_capacity * 100.0,
            absolute_capacity: c.abs_capacity * 100.0,
            absolute_max_capacity: c.abs_max_capacity * 100.0,
            used_capacity: finite(used_capacity) * 100.0,
            absolute_used_capacity: finite(absolute_used_capacity) * 100.0,
            state: c.state.name(),
            effective_min: outward(self.eff_min_of(q)),
            effective_max: outward(self.eff_max_of(q)),
            users,
            user_limit: user_limit.map(outward),
            am_limit: am_limit.map(outward),
            user_am_limit: user_am_limit.map(outward),
            max_applications,
            max_applications_per_user,
            reserved: outward(q.rules.reserved),
            am_used: outward(self.subtree_am_used(id)),
            active_apps,
            pending_apps,
            preemption_disabled: !self.rules.preempt.monitor
                || self
                    .rules
                    .file
                    .queues
                    .get(c.index)
                    .is_none_or(|f| f.disable_preemption),
            used: outward(used),
            pending: outward(q.demand.saturating_sub(q.usage).clamp_non_negative()),
            by_partition: Vec::new(),
        });
        let mut children: Vec<QueueId> = q.children.iter().copied().collect();
        children.sort_by(|a, b| self.queues.get(*a).name.cmp(&self.queues.get(*b).name));
        for ch in children {
            self.details_of(ch, out);
        }
    }
}

impl CapacityEngine {
    /// Activated and pending apps in the subtree of `id`.
    fn apps_below(&self, id: QueueId) -> (usize, usize) {
        let mut counts = (0, 0);
        let mut stack = vec![id];
        while let Some(q) = stack.pop() {
            let queue = self.queues.get(q);
            counts.0 += queue.runnable_apps.len();
            counts.1 += queue.non_runnable_apps.len();
            stack.extend(queue.children.iter().copied());
        }
        counts
    }

    /// AM resources of the activated apps in the subtree of `id`.
    fn subtree_am_used(&self, id: QueueId) -> Resource {
        let mut used = Resource::ZERO;
        let mut stack = vec![id];
        while let Some(q) = stack.pop() {
            let queue = self.queues.get(q);
            used = used.saturating_add(queue.am_usage);
            stack.extend(queue.children.iter().copied());
        }
        used
    }
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

//! What the Capacity Scheduler shows: queue rights and each queue's figures as Hadoop's REST
//! API reports them (capacity spec §9: capacities as percentages, state, users and limits).

use crate::api::{CapacityQueueDetails, CapacityUserDetails, QueueAccess};
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
                calc.divide(&p, &used, &q.rules.guaranteed),
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
                    usage: u.used,
                    running_apps: u.running_apps,
                    pending_apps: u.pending_apps,
                    user_limit: self.user_limit_of(id, name, limit),
                })
                .collect();
            (users, Some(limit))
        } else {
            (Vec::new(), None)
        };
        let (am_limit, max_applications) = match &c.leaf {
            Some(l) => (Some(self.am_limits(id, "").0), Some(l.max_applications)),
            None => (None, None),
        };
        out.push(CapacityQueueDetails {
            name: q.name.clone(),
            capacity: c.capacity * 100.0,
            max_capacity: c.max_capacity * 100.0,
            absolute_capacity: c.abs_capacity * 100.0,
            absolute_max_capacity: c.abs_max_capacity * 100.0,
            used_capacity: finite(used_capacity) * 100.0,
            absolute_used_capacity: finite(absolute_used_capacity) * 100.0,
            state: c.state.name(),
            effective_min: c.eff_min,
            effective_max: c.eff_max,
            users,
            user_limit,
            am_limit,
            max_applications,
        });
        let mut children: Vec<QueueId> = q.children.iter().copied().collect();
        children.sort_by(|a, b| self.queues.get(*a).name.cmp(&self.queues.get(*b).name));
        for ch in children {
            self.details_of(ch, out);
        }
    }
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

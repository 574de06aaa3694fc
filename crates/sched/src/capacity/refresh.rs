//! `refreshQueues` (spec §4.2-§4.3): a new capacity-scheduler.xml replaces the running one
//! while the live queues keep their apps, usage and containers.
//!
//! Hadoop's refusals are checked first, as a pure comparison of the two files with the live
//! application counts (`weft_config::capacity::check_refresh`), and the cluster's maximum
//! allocation (`check_maximum_allocations`); a refusal changes nothing. An accepted file can
//! only remove queues that hold no application (a removed queue must be STOPPED, and a STOPPED
//! queue has none), so no app ever changes leaf: queues absent from the new file (or changing
//! between leaf and parent) are dropped, new ones added, and every queue takes its new
//! settings. A queue the new file stops while it still holds apps becomes DRAINING; it stops
//! when its last app leaves (`admission::stop_drained`). Activation runs afterwards, as
//! Hadoop's `updateClusterResource` after a refresh does.
//!
//! Decisions: the resource calculator and `yarn.scheduler.minimum-allocation-*` are read only
//! at startup (spec §4.2; the running ones stay); the per-heartbeat assignment keys take the
//! new file's values (spec §13 point 2).

use std::collections::BTreeMap;

use weft_config::capacity::{
    check_maximum_allocations, check_refresh, CapacityConfig, QueueState, RefreshContext,
};

use crate::api::{CapacitySchedulerConfig, SchedError};
use crate::lanes::truncate;
use crate::queues::{QueueId, ROOT};
use crate::rules::Rules;

use super::setup::{cold_settings, hot_settings};
use super::{Capacity, CapacityEngine, CsState};

impl CapacityEngine {
    /// Applies `config` whole, or refuses it with every reason and changes nothing.
    pub(crate) fn cs_refresh(&mut self, config: CapacitySchedulerConfig) -> Result<(), SchedError> {
        let mut new = config.capacity;
        new.expand_plan_queues();
        // The follower's reservation leaves stay; it resizes or removes them at its next run.
        for (plan, leaf) in self.rules.file.plan_leaves() {
            let index = self.rules.file.index_of(&format!("{plan}.{leaf}"));
            if let (Ok(added), Some(old)) = (new.add_plan_leaf(&plan, &leaf), index) {
                new.queues[added].capacity = self.rules.file.queues[old].capacity.clone();
                new.queues[added].maximum_capacity =
                    self.rules.file.queues[old].maximum_capacity.clone();
            }
        }
        // Auto-created leaves stay while their parent is still a managed parent (Hadoop keeps
        // them across refreshes); they take the new template.
        for (parent, leaf) in self.rules.file.auto_created_leaves() {
            let _ = new.add_auto_created_leaf(&parent, &leaf);
        }
        self.apply_file(
            new,
            config.properties.maximum_allocation,
            config.properties.max_application_priority,
        )
    }

    /// `cs_refresh` once the new file is complete (also how an auto-created leaf joins).
    pub(crate) fn apply_file(
        &mut self,
        new: CapacityConfig,
        cluster_maximum: weft_types::Resource,
        max_priority: i32,
    ) -> Result<(), SchedError> {
        let refused = |d: weft_config::Diagnostics| {
            SchedError::ConfigRefused(format!(
                "Failed to re-init queues (the running queues are kept):\n{d}"
            ))
        };
        check_maximum_allocations(&new, cluster_maximum).map_err(refused)?;
        let apps = self.apps_per_leaf();
        let context = RefreshContext {
            apps: &apps,
            cluster_maximum_allocation: cluster_maximum,
        };
        // The warnings only say that startup-only settings keep their running values.
        check_refresh(&self.rules.file, &new, &context).map_err(refused)?;
        let doomed = self.queues_dropped_by(&new)?;
        for id in doomed {
            self.queues.remove(id);
        }
        self.add_new_queues(&new);
        self.apply_settings(&new);
        self.rules.file = new;
        self.rules.max_priority = max_priority;
        self.rules.blocked_headroom.clear();
        self.properties.maximum_allocation = truncate(cluster_maximum);
        self.queues.rank_names();
        self.derive_capacities();
        self.rules.users.limits_moved();
        Capacity::rebuild_derived(self);
        self.order_dirty = true;
        // Held apps under queues with room now may run (`parallel`); their leaves are among
        // the pending ones `activate_all` visits.
        self.refresh_parallel();
        self.activate_all();
        Ok(())
    }

    /// Pending and running applications per leaf, by full path.
    fn apps_per_leaf(&self) -> BTreeMap<String, u32> {
        self.queues
            .ids()
            .map(|id| self.queues.get(id))
            .filter(|q| q.is_leaf)
            .map(|q| {
                let n = q.runnable_apps.len() + q.non_runnable_apps.len();
                (q.name.clone(), u32::try_from(n).unwrap_or(u32::MAX))
            })
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// The live queues the new file removes or turns between leaf and parent, deepest first.
    /// `check_refresh` has made sure they hold no app; this checks it again, since removing a
    /// queue with apps would lose them.
    fn queues_dropped_by(&self, new: &CapacityConfig) -> Result<Vec<QueueId>, SchedError> {
        let mut doomed: Vec<QueueId> = self
            .queues
            .ids()
            .filter(|id| *id != ROOT)
            .filter(|id| {
                let q = self.queues.get(*id);
                new.queue(&q.name).is_none_or(|n| n.is_leaf() != q.is_leaf)
            })
            .collect();
        doomed.sort_by_key(|id| std::cmp::Reverse(self.queues.get(*id).depth));
        if let Some(busy) = doomed.iter().find(|id| {
            let q = self.queues.get(**id);
            !q.runnable_apps.is_empty() || !q.non_runnable_apps.is_empty()
        }) {
            return Err(SchedError::ConfigRefused(format!(
                "Failed to re-init queues (the running queues are kept): {} still has applications and cannot be removed or converted",
                self.queues.get(*busy).name
            )));
        }
        Ok(doomed)
    }

    /// Adds the queues of `new` the tree does not have (a parent is listed before its children).
    fn add_new_queues(&mut self, new: &CapacityConfig) {
        for q in &new.queues {
            if self.queues.lookup(&q.path).is_some() {
                continue;
            }
            let Some(parent) = q
                .parent
                .and_then(|p| self.queues.lookup(&new.queues[p].path))
            else {
                continue; // root always exists
            };
            self.queues.add_child(parent, q.path.clone(), q.is_leaf());
        }
    }

    /// Every queue takes its settings from `new`; a stopped queue still holding apps drains.
    fn apply_settings(&mut self, new: &CapacityConfig) {
        for (index, q) in new.queues.iter().enumerate() {
            let Some(id) = self.queues.lookup(&q.path) else {
                continue;
            };
            let holds_apps = self.subtree_has_apps(id);
            let queue = self.queues.get_mut(id);
            queue.configured = true;
            queue.acl_submit = q.acl_submit_applications.clone();
            queue.acl_admin = q.acl_administer_queue.clone();
            let reserved = queue.rules.reserved;
            queue.rules = hot_settings(new, index);
            queue.rules.reserved = reserved;
            queue.rules_cold = cold_settings(new, index);
            queue.rules_cold.state = match q.state {
                QueueState::Running => CsState::Running,
                QueueState::Stopped if holds_apps => CsState::Draining,
                QueueState::Stopped => CsState::Stopped,
            };
        }
    }

    fn subtree_has_apps(&self, id: QueueId) -> bool {
        let mut stack = vec![id];
        while let Some(q) = stack.pop() {
            let queue = self.queues.get(q);
            if !queue.runnable_apps.is_empty() || !queue.non_runnable_apps.is_empty() {
                return true;
            }
            stack.extend(queue.children.iter().copied());
        }
        false
    }
}

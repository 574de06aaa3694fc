//! The periodic update (spec §2): demand, instantaneous fair shares, root metrics, and the
//! steady fair shares (spec §4.3) when the cluster or the configuration changed.

use weft_types::{Resource, Time};

use crate::queues::{QueueId, ROOT};
use crate::scheduler::Scheduler;
use crate::shares::{policy_shares, ShareItem, ShareMode};

/// Empty dynamic queues are collected this often (Hadoop's reload-check period).
const QUEUE_GC_INTERVAL_MS: u64 = 10_000;

impl Scheduler {
    pub(crate) fn update(&mut self, now: Time) {
        if now.since(self.last_queue_gc).as_millis() >= QUEUE_GC_INTERVAL_MS {
            self.last_queue_gc = now;
            let before = self.queues.len();
            self.queues.remove_empty_dynamic();
            if self.queues.pending_retype {
                self.steady_dirty = true;
                let config = std::sync::Arc::clone(&self.config);
                self.queues.apply_config(&config.allocations);
                self.queues.resolve_max_shares(self.cluster);
            }
            if self.queues.len() != before {
                self.steady_dirty = true;
            }
        }
        let size_based = self.config.properties.size_based_weight;
        // Apps are re-keyed leaf by leaf right after their shares are set, while they are
        // still in cache (a separate pass over 10,000 apps was a cache miss per app).
        let rekey_inline = !self.queues.structure_changed
            && !self.order_dirty
            && self.walk == crate::WalkMode::Fast;
        self.update_demand(ROOT, size_based);
        self.queues.get_mut(ROOT).fair_share = self.cluster;
        self.compute_fair_shares(ROOT, rekey_inline);
        self.root_available = self.cluster.saturating_sub(self.cluster_used);
        if self.steady_dirty {
            self.compute_steady_shares();
        }
        if self.queues.structure_changed {
            self.order_dirty = true;
        } else if rekey_inline {
            self.rekey_queues();
        }
    }

    /// Recomputes demand bottom-up (spec §3), and each app's weight from its new demand (every
    /// app is in exactly one leaf's lists); returns the queue's demand.
    fn update_demand(&mut self, id: QueueId, size_based: bool) -> Resource {
        let q = self.queues.get(id);
        let mut sum = Resource::ZERO;
        if q.is_leaf {
            for a in q.runnable_apps.iter().chain(q.non_runnable_apps.iter()) {
                if let Some(app) = self.apps.get_mut(a) {
                    app.demand = app.compute_demand();
                    app.weight = if size_based {
                        (app.demand.memory_mb() as f64).ln_1p() / std::f64::consts::LN_2
                    } else {
                        1.0
                    };
                    sum = sum.saturating_add(app.demand);
                }
            }
        } else {
            let children: Vec<QueueId> = q.children.iter().copied().collect();
            for c in children {
                sum = sum.saturating_add(self.update_demand(c, size_based));
            }
        }
        let q = self.queues.get_mut(id);
        q.demand = sum.cw_min(q.max_share);
        q.demand
    }

    /// Instantaneous fair shares top-down (spec §4.2).
    fn compute_fair_shares(&mut self, id: QueueId, rekey_apps: bool) {
        let types = self.resource_types().len();
        let q = self.queues.get(id);
        let (policy, total) = (q.policy, q.fair_share);
        if q.is_leaf {
            let mut items = std::mem::take(&mut self.scratch_items);
            items.clear();
            items.extend(
                q.runnable_apps
                    .iter()
                    .filter_map(|a| self.apps.get(a))
                    .map(|a| ShareItem {
                        weight: a.weight,
                        min_share: Resource::ZERO,
                        max_share: Resource::UNBOUNDED,
                        active: true,
                        start_time: a.start_time,
                        tiebreak: a.id.0,
                    }),
            );
            let q = self.queues.get_mut(id);
            let mut memo = std::mem::take(&mut q.share_memo);
            let apps = std::mem::take(&mut q.runnable_apps);
            let (shares, computed) =
                memo.shares(policy, &items, total, ShareMode::Instantaneous, types);
            // Reused shares were written to these very apps (ids are never reused) at the last
            // update, and only the update writes app shares.
            if computed {
                for (a, s) in apps.iter().zip(shares) {
                    if let (Some(app), Some(s)) = (self.apps.get_mut(a), s) {
                        app.fair_share = *s;
                    }
                }
            }
            if rekey_apps {
                // An update moves demand, weights and fair shares, never asks.
                for a in &apps {
                    self.rekey_app(*a, false);
                }
                let waiting = std::mem::take(&mut self.queues.get_mut(id).non_runnable_apps);
                for a in &waiting {
                    self.rekey_app(*a, false);
                }
                self.queues.get_mut(id).non_runnable_apps = waiting;
            }
            let q = self.queues.get_mut(id);
            q.share_memo = memo;
            q.runnable_apps = apps;
            self.scratch_items = items;
        } else {
            let children: Vec<QueueId> = q.children.iter().copied().collect();
            let items: Vec<ShareItem> =
                children.iter().map(|c| self.queue_share_item(*c)).collect();
            let mut memo = std::mem::take(&mut self.queues.get_mut(id).share_memo);
            let (shares, _) = memo.shares(policy, &items, total, ShareMode::Instantaneous, types);
            for (c, s) in children.iter().zip(shares) {
                if let Some(s) = s {
                    self.queues.get_mut(*c).fair_share = *s;
                }
            }
            self.queues.get_mut(id).share_memo = memo;
            for c in children {
                self.compute_fair_shares(c, rekey_apps);
            }
        }
    }

    fn queue_share_item(&self, id: QueueId) -> ShareItem {
        let q = self.queues.get(id);
        ShareItem {
            weight: q.weight,
            min_share: q.min_share,
            max_share: q.max_share,
            active: q.is_active(),
            start_time: 0,
            tiebreak: q.name_rank,
        }
    }

    /// Steady fair shares top-down over all queues, active or not (spec §4.3).
    pub(crate) fn compute_steady_shares(&mut self) {
        self.queues.get_mut(ROOT).steady_fair_share = self.cluster;
        self.steady_from(ROOT);
        self.steady_dirty = false;
    }

    fn steady_from(&mut self, id: QueueId) {
        let types = self.resource_types().len();
        let q = self.queues.get(id);
        if q.is_leaf {
            return;
        }
        let (policy, total) = (q.policy, q.steady_fair_share);
        let children: Vec<QueueId> = q.children.iter().copied().collect();
        let items: Vec<ShareItem> = children.iter().map(|c| self.queue_share_item(*c)).collect();
        let shares = policy_shares(policy, &items, total, ShareMode::Steady, types);
        for (c, s) in children.iter().zip(shares) {
            if let Some(s) = s {
                self.queues.get_mut(*c).steady_fair_share = s;
            }
            self.steady_from(*c);
        }
    }
}

//! The periodic update (spec §2): demand, instantaneous fair shares, root metrics, and the
//! steady fair shares (spec §4.3) when the cluster or the configuration changed.

use crate::lanes::Resource;
use weft_types::Time;

use crate::fair::shares::{policy_shares, ShareItem, ShareMode};
use crate::fair::FairEngine;
use crate::queues::{QueueId, ROOT};

/// Empty dynamic queues are collected this often (Hadoop's reload-check period).
const QUEUE_GC_INTERVAL_MS: u64 = 10_000;

impl FairEngine {
    /// The update; `with_starvation` is false for a report's recomputation (a snapshot
    /// recomputes shares but never moves a starvation clock, preemption spec §0.4).
    pub(crate) fn update(&mut self, now: Time, with_starvation: bool) {
        if now.since(self.rules.last_queue_gc).as_millis() >= QUEUE_GC_INTERVAL_MS {
            self.rules.last_queue_gc = now;
            let before = self.queues.len();
            self.queues.remove_empty_dynamic();
            if self.queues.pending_retype {
                self.rules.steady_dirty = true;
                let config = std::sync::Arc::clone(&self.rules.config);
                self.queues.apply_config(&config.allocations);
                let caps = self.share_capacities();
                self.queues.resolve_max_shares(&caps);
            }
            if self.queues.len() != before {
                self.rules.steady_dirty = true;
            }
        }
        if with_starvation
            && self.rules.config.properties.preemption
            && self.rules.config.properties.preemption_strategy
                == weft_config::PreemptionStrategy::Global
        {
            crate::fair::preemption::global::before_shares(self, now);
        }
        let size_based = self.rules.config.properties.size_based_weight;
        // Apps are re-keyed in the demand pass, as they are read (going leaf by leaf was a
        // cache miss per app at 10,000 apps), and again only where fair shares changed.
        let rekey_inline = !self.queues.structure_changed
            && !self.order_dirty
            && self.walk == crate::engine::WalkMode::Fast;
        self.update_demands(size_based, rekey_inline);
        self.queues.get_mut(ROOT).rules_cold.fair_share = self.cluster;
        let mut reshared = std::mem::take(&mut self.rules.scratch_slots);
        reshared.clear();
        self.compute_fair_shares(ROOT, &mut reshared);
        if rekey_inline {
            // Keys do not read fair shares; whether an app could reserve does.
            for slot in &reshared {
                self.rekey_app_at(*slot, false);
            }
        }
        self.rules.scratch_slots = reshared;
        self.refresh_root_available();
        if self.rules.steady_dirty {
            self.compute_steady_shares();
        }
        if self.queues.structure_changed {
            self.order_dirty = true;
        } else if rekey_inline {
            self.rekey_queues();
        }
        // Off by default; the update then costs one branch more.
        if with_starvation && self.rules.config.properties.preemption {
            self.update_starvation(now);
            self.preemption_pass(now);
        }
    }

    /// Recomputes demand (spec §3): every app's, with its weight, in one pass over the app
    /// table in storage order (sequential memory; going leaf by leaf looked each of 10,000 apps
    /// up by id), re-keying each app (`rekey`) as it goes, then every queue's bottom-up, capped
    /// at its max share. Every app is in exactly one leaf's lists, the leaf it names (`verify`
    /// checks it), and demands are non-negative, so the saturating sums do not depend on the
    /// order apps are added in. Notes the leaves where an app's weight changed.
    fn update_demands(&mut self, size_based: bool, rekey: bool) {
        let mut by_leaf = std::mem::take(&mut self.rules.scratch_demands);
        by_leaf.clear();
        by_leaf.resize(self.queues.id_bound(), Resource::ZERO);
        let mut reweighted = std::mem::take(&mut self.rules.scratch_reweighted);
        reweighted.clear();
        reweighted.resize(self.queues.id_bound(), false);
        for slot in 0..self.apps.slot_bound() {
            let Some(app) = self.apps.at_mut(slot) else {
                continue;
            };
            app.demand = app.compute_demand();
            let weight = if size_based {
                (app.demand.memory_mb() as f64).ln_1p() / std::f64::consts::LN_2
            } else {
                1.0
            };
            let leaf = app.queue.0 as usize;
            if weight.to_bits() != app.rules.weight.to_bits() {
                app.rules.weight = weight;
                if let Some(flag) = reweighted.get_mut(leaf) {
                    *flag = true;
                }
            }
            if let Some(sum) = by_leaf.get_mut(leaf) {
                *sum = sum.saturating_add(app.demand);
            }
            if rekey {
                self.rekey_app_at(slot, false);
            }
        }
        self.sum_demands(ROOT, &by_leaf);
        self.rules.scratch_demands = by_leaf;
        self.rules.scratch_reweighted = reweighted;
    }

    /// A queue's demand from its apps' (`by_leaf`) or its children's; returns it.
    fn sum_demands(&mut self, id: QueueId, by_leaf: &[Resource]) -> Resource {
        let q = self.queues.get(id);
        let sum = if q.is_leaf {
            by_leaf
                .get(id.0 as usize)
                .copied()
                .unwrap_or(Resource::ZERO)
        } else {
            let children: Vec<QueueId> = q.children.iter().copied().collect();
            children.into_iter().fold(Resource::ZERO, |sum, c| {
                sum.saturating_add(self.sum_demands(c, by_leaf))
            })
        };
        let q = self.queues.get_mut(id);
        q.demand = sum.cw_min(q.max_share);
        q.demand
    }

    /// Instantaneous fair shares top-down (spec §4.2); the slots of apps whose shares were
    /// recomputed are added to `reshared`.
    fn compute_fair_shares(&mut self, id: QueueId, reshared: &mut Vec<u32>) {
        let types = self.properties.resource_types.len();
        let q = self.queues.get(id);
        let (policy, total) = (q.rules.policy, q.rules_cold.fair_share);
        if q.is_leaf {
            // A leaf's share inputs are its runnable apps (by id, in order: an app's start time
            // is fixed) and their weights: while those and the total stay the same, the shares
            // written at the last update still hold, and no app needs to be read.
            let reweighted = self.rules.scratch_reweighted.get(id.0 as usize) == Some(&true);
            if !reweighted
                && q.rules_cold.share_memo.holds_apps(
                    policy,
                    ShareMode::Instantaneous,
                    types,
                    total,
                    &q.runnable_apps,
                )
            {
                return;
            }
            let start = reshared.len();
            reshared.extend(q.runnable_apps.iter().filter_map(|a| self.apps.slot_of(a)));
            let mut items = std::mem::take(&mut self.rules.scratch_items);
            items.clear();
            items.extend(
                reshared[start..]
                    .iter()
                    .filter_map(|s| self.apps.at(*s))
                    .map(|a| ShareItem {
                        weight: a.rules.weight,
                        min_share: Resource::ZERO,
                        max_share: Resource::UNBOUNDED,
                        active: true,
                        start_time: a.start_time,
                        tiebreak: a.id.0,
                    }),
            );
            let mut memo = std::mem::take(&mut self.queues.get_mut(id).rules_cold.share_memo);
            let (shares, computed) =
                memo.shares(policy, &items, total, ShareMode::Instantaneous, types);
            // Reused shares were written to these very apps (ids are never reused) at the last
            // update, and only the update writes app shares.
            if computed {
                for (slot, s) in reshared[start..].iter().zip(shares) {
                    if let (Some(app), Some(s)) = (self.apps.at_mut(*slot), s) {
                        app.rules.fair_share = *s;
                    }
                }
            } else {
                reshared.truncate(start);
            }
            self.queues.get_mut(id).rules_cold.share_memo = memo;
            self.rules.scratch_items = items;
        } else {
            let children: Vec<QueueId> = q.children.iter().copied().collect();
            if id == ROOT && self.pools.as_ref().is_some_and(|p| p.per_pool_shares()) {
                self.root_shares_per_pool(&children, ShareMode::Instantaneous);
            } else {
                let items: Vec<ShareItem> =
                    children.iter().map(|c| self.queue_share_item(*c)).collect();
                let mut memo = std::mem::take(&mut self.queues.get_mut(id).rules_cold.share_memo);
                let (shares, _) =
                    memo.shares(policy, &items, total, ShareMode::Instantaneous, types);
                for (c, s) in children.iter().zip(shares) {
                    if let Some(s) = s {
                        self.queues.get_mut(*c).rules_cold.fair_share = *s;
                    }
                }
                self.queues.get_mut(id).rules_cold.share_memo = memo;
            }
            for c in children {
                self.compute_fair_shares(c, reshared);
            }
        }
    }

    fn queue_share_item(&self, id: QueueId) -> ShareItem {
        let q = self.queues.get(id);
        ShareItem {
            weight: q.rules.weight,
            min_share: q.rules.min_share,
            max_share: q.max_share,
            active: q.is_active(),
            start_time: 0,
            tiebreak: q.name_rank,
        }
    }

    /// Steady fair shares top-down over all queues, active or not (spec §4.3).
    pub(crate) fn compute_steady_shares(&mut self) {
        self.queues.get_mut(ROOT).rules_cold.steady_fair_share = self.cluster;
        self.steady_from(ROOT);
        self.rules.steady_dirty = false;
    }

    fn steady_from(&mut self, id: QueueId) {
        let types = self.properties.resource_types.len();
        let q = self.queues.get(id);
        if q.is_leaf {
            return;
        }
        let (policy, total) = (q.rules.policy, q.rules_cold.steady_fair_share);
        let children: Vec<QueueId> = q.children.iter().copied().collect();
        if id == ROOT && self.pools.as_ref().is_some_and(|p| p.per_pool_shares()) {
            self.root_shares_per_pool(&children, ShareMode::Steady);
        } else {
            let items: Vec<ShareItem> =
                children.iter().map(|c| self.queue_share_item(*c)).collect();
            let shares = policy_shares(policy, &items, total, ShareMode::Steady, types);
            for (c, s) in children.iter().zip(shares) {
                if let Some(s) = s {
                    self.queues.get_mut(*c).rules_cold.steady_fair_share = s;
                }
            }
        }
        for c in children {
            self.steady_from(c);
        }
    }

    /// Root's shares with per-pool shares (resource-pools spec §8): root's children are split
    /// by pool, and each pool's capacity is shared among its own top-level queues by root's
    /// policy; DRF inside a pool compares against that pool's capacity. Under
    /// `unboundQueues="reject"` queues in no pool get nothing (their apps are refused), so
    /// DEFAULT's capacity is shared only when unbound queues run there.
    fn root_shares_per_pool(&mut self, children: &[QueueId], mode: ShareMode) {
        let Some(pools) = &self.pools else {
            return;
        };
        let (capacity, default_runs) = (pools.capacity.clone(), pools.unbound_run_in_default());
        let types = self.properties.resource_types.len();
        let policy = self.queues.get(ROOT).rules.policy;
        for (pool, total) in capacity.iter().enumerate() {
            let members: Vec<QueueId> = children
                .iter()
                .copied()
                .filter(|c| usize::from(self.queues.get(*c).pool) == pool)
                .collect();
            if members.is_empty() {
                continue;
            }
            let total = if pool == 0 && !default_runs {
                Resource::ZERO
            } else {
                *total
            };
            let items: Vec<ShareItem> = members.iter().map(|c| self.queue_share_item(*c)).collect();
            let shares = policy_shares(policy, &items, total, mode, types);
            for (c, s) in members.iter().zip(shares) {
                let Some(share) = s else {
                    continue;
                };
                let cold = &mut self.queues.get_mut(*c).rules_cold;
                match mode {
                    ShareMode::Instantaneous => cold.fair_share = share,
                    ShareMode::Steady => cold.steady_fair_share = share,
                }
            }
        }
    }
}

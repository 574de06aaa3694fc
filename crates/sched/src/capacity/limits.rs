//! The limits of one leaf (spec §5.6-§5.8, §6.2): the queue limit handed down the path, user
//! limits, headroom and AM limits. Each is computed when asked, from the queues' usage and the
//! leaf's apps (`user_limit_from` also from the fast walk's kept users, `user_cache.rs`);
//! `Engine::used` reads the walk's usage (the maintained aggregate, or the recursive sum in
//! the reference walk).
//!
//! Decisions (spec §13 and what Weft does not model yet):
//! * A queue's used resources include its subtree's reservations (§1.4; `CsHot::reserved`,
//!   kept by `Rules::reservation_changed`), a user's its apps' reservations; the ledger's
//!   `usage` stays allocations only, as for every scheduler, and apps' figures exclude them.
//! * `blockedHeadroom` (§6.2 step 5): a leaf whose head app's ask exceeds its headroom keeps
//!   that headroom from its later siblings for the rest of the walk (its parent's limit for
//!   them shrinks by it); Weft adds it to the leaf's parent only, not further up (a parent
//!   passing its children's blocked headroom on is not modelled).
//! * A user is active while one of its apps in the leaf (activated or not) has outstanding
//!   asks; the AM limit's user count adds users whose apps are all pending (§5.8).

use std::collections::BTreeMap;

use crate::lanes::Resource;

use crate::queues::{QueueId, ROOT};

use super::CapacityEngine;

/// One user of a leaf, as the limits see it.
#[derive(Clone, Debug, Default)]
pub(crate) struct LeafUser {
    pub(crate) used: Resource,
    /// Some app of the user has outstanding asks.
    pub(crate) active: bool,
    /// Apps of the user that are activated (runnable).
    pub(crate) running_apps: usize,
    /// Apps of the user still pending activation.
    pub(crate) pending_apps: usize,
    /// AM resources of the user's activated apps.
    pub(crate) am_used: Resource,
}

/// A leaf's limit as handed down from the root (spec §6.2, §5.7).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafLimit {
    /// `queueCurrentLimit`: the parent's limit for the leaf, capped by its rounded maximum.
    pub(crate) limit: Resource,
    /// Some queue on the path (or the leaf) is at or over its limit: nothing may be assigned.
    pub(crate) refused: bool,
    /// The leaf's used resources (as `Engine::used` gives them).
    pub(crate) used: Resource,
    /// What every queue on the path may still take before its effective maximum: per type,
    /// the least of `effMax − used` over the path (root: the cluster). An allocation of
    /// `size` releasing `released` keeps every queue within its maximum (spec §6.11) iff
    /// `size − released` fits in it, so the app step checks the maximums without a second
    /// walk up the path.
    pub(crate) room_to_max: Resource,
}

impl CapacityEngine {
    /// A queue's used resources as the walk sees it: allocations and reservations (spec §1.4),
    /// the maintained aggregates, or recursive sums in the reference walk.
    pub(crate) fn used(&self, q: QueueId) -> Resource {
        match self.walk {
            crate::engine::WalkMode::Fast => {
                let queue = self.queues.get(q);
                queue.usage.saturating_add(queue.rules.reserved)
            }
            crate::engine::WalkMode::Reference => self
                .recursive_usage(q)
                .saturating_add(self.recursive_reserved(q)),
        }
    }

    /// What the app holds reserved on nodes (Hadoop's `currentReservation`).
    pub(crate) fn app_reserved(&self, app: &crate::rules::AppOf<super::Capacity>) -> Resource {
        app.reservations
            .iter()
            .filter_map(|n| self.nodes.get(n).and_then(|n| n.reservation.as_ref()))
            .filter(|r| r.app == app.id)
            .fold(Resource::ZERO, |sum, r| sum.saturating_add(r.size))
    }

    /// The reservations of the subtree's apps, summed from the nodes' reservations.
    pub(crate) fn recursive_reserved(&self, q: QueueId) -> Resource {
        let queue = self.queues.get(q);
        let mut sum = Resource::ZERO;
        for a in queue
            .runnable_apps
            .iter()
            .chain(queue.non_runnable_apps.iter())
        {
            if let Some(app) = self.apps.get(a) {
                sum = sum.saturating_add(self.app_reserved(app));
            }
        }
        for c in &queue.children {
            sum = sum.saturating_add(self.recursive_reserved(*c));
        }
        sum
    }

    /// The queue's effective maximum (root: the cluster).
    fn eff_max(&self, q: QueueId) -> Resource {
        if q == ROOT {
            self.cluster
        } else {
            self.eff_max_of(self.queues.get(q))
        }
    }

    /// Spec §6.2 steps 4-5 from the root down to `leaf`: each parent refuses when its usage
    /// reaches `min(its maximum, the limit it was handed)`, and hands each child
    /// `roundDown(parentLimit − used(parent) + used(child))`; the leaf's limit is that capped by
    /// `roundDown(effMax(leaf))` (§5.7).
    pub(crate) fn leaf_limit(&self, leaf: QueueId) -> LeafLimit {
        self.leaf_limit_unreserving(leaf, Resource::ZERO)
    }

    /// A queue's reservations (maintained, or summed in the reference walk).
    pub(crate) fn reserved_of(&self, q: QueueId) -> Resource {
        match self.walk {
            crate::engine::WalkMode::Fast => self.queues.get(q).rules.reserved,
            crate::engine::WalkMode::Reference => self.recursive_reserved(q),
        }
    }

    /// [`Self::leaf_limit`] for an app holding `app_reserved`: with continue looking
    /// (`reservations-continue-look-all-nodes`), a queue at its limit still lets an allocation
    /// through when releasing reservations would bring it back under (spec §6.2 step 4: a parent
    /// may release its subtree's reservations, the leaf the app's own).
    pub(crate) fn leaf_limit_unreserving(
        &self,
        leaf: QueueId,
        app_reserved: Resource,
    ) -> LeafLimit {
        if !self.rules.calc.is_dominant() && self.walk == crate::engine::WalkMode::Fast {
            return self.leaf_limit_memory(leaf, app_reserved);
        }
        let calc = self.rules.calc;
        let p = self.cluster;
        let step = self.properties.minimum_allocation;
        // Root first, without an allocation (no queue is deeper than MAX_QUEUE_DEPTH).
        let mut up = [ROOT; weft_config::MAX_QUEUE_DEPTH];
        let mut depth = 0;
        for q in self.queues.path_to_root(leaf).take(up.len()) {
            up[depth] = q;
            depth += 1;
        }
        let path = &mut up[..depth];
        path.reverse();
        let path = &*path;
        let mut limit = p;
        let mut refused = false;
        let mut room_to_max = Resource::UNBOUNDED;
        // Each level's used resources, read once: a parent's child is the next level.
        let mut used = path.first().map_or(Resource::ZERO, |q| self.used(*q));
        for (i, q) in path.iter().enumerate() {
            let max = self.eff_max(*q);
            room_to_max = room_to_max.cw_min(max.saturating_sub(used));
            if i + 1 == path.len() {
                let own = calc.round_down(max, step);
                let limit = calc.min(&p, own, limit);
                refused |= self.over_limit(used, limit, app_reserved);
                return LeafLimit {
                    limit,
                    refused,
                    used,
                    room_to_max,
                };
            }
            let parent_limit = calc.min(&p, limit, max);
            refused |= self.over_limit(used, parent_limit, self.reserved_of(*q));
            let child = self.used(path[i + 1]);
            let blocked = if self.rules.blocked_headroom.is_empty() {
                Resource::ZERO
            } else {
                self.rules
                    .blocked_headroom
                    .get(q)
                    .copied()
                    .unwrap_or(Resource::ZERO)
            };
            limit = calc.round_down(
                parent_limit
                    .saturating_sub(blocked)
                    .saturating_sub(used)
                    .saturating_add(child),
                step,
            );
            used = child;
        }
        LeafLimit {
            limit,
            refused,
            used,
            room_to_max,
        }
    }

    /// [`Self::leaf_limit_unreserving`] on the fast walk under the Default calculator, which
    /// compares, rounds and picks by memory alone: the same steps on the memory figures only
    /// (the limit in the calculator's shape, `Calc::memory`; the room to the maximums with
    /// memory alone bounded). The reference walk keeps the general form, so the differential
    /// tests compare the two.
    fn leaf_limit_memory(&self, leaf: QueueId, app_reserved: Resource) -> LeafLimit {
        let step = self.properties.minimum_allocation.memory_mb();
        let cluster = self.cluster.memory_mb();
        let continue_looking = self.rules.file.globals.reservations_continue_look_all_nodes;
        // `over_limit` on memory.
        let over = |used: i64, limit: i64, could_unreserve: i64| {
            used >= limit
                && !(continue_looking
                    && could_unreserve > 0
                    && used.saturating_sub(could_unreserve) < limit)
        };
        let mut up = [ROOT; weft_config::MAX_QUEUE_DEPTH];
        let mut depth = 0;
        for q in self.queues.path_to_root(leaf).take(up.len()) {
            up[depth] = q;
            depth += 1;
        }
        let path = &mut up[..depth];
        path.reverse();
        let path = &*path;
        let used_mb = |q: &crate::rules::QueueOf<super::Capacity>| {
            q.usage
                .memory_mb()
                .saturating_add(q.rules.reserved.memory_mb())
        };
        let mut limit = cluster;
        let mut refused = false;
        let mut room = i64::MAX;
        let Some(first) = path.first() else {
            return LeafLimit {
                limit: self.cluster,
                refused: false,
                used: Resource::ZERO,
                room_to_max: Resource::UNBOUNDED,
            };
        };
        let mut queue = self.queues.get(*first);
        let mut used = used_mb(queue);
        for (i, q) in path.iter().enumerate() {
            let max = if *q == ROOT {
                cluster
            } else {
                self.eff_max_of(queue).memory_mb()
            };
            room = room.min(max.saturating_sub(used));
            let Some(next) = path.get(i + 1) else {
                limit = limit.min(super::calc::Calc::round_down_value(max, step));
                refused |= over(used, limit, app_reserved.memory_mb());
                break;
            };
            let parent_limit = limit.min(max);
            refused |= over(used, parent_limit, queue.rules.reserved.memory_mb());
            let child = self.queues.get(*next);
            let child_used = used_mb(child);
            let blocked = if self.rules.blocked_headroom.is_empty() {
                0
            } else {
                self.rules
                    .blocked_headroom
                    .get(q)
                    .map_or(0, |r| r.memory_mb())
            };
            limit = super::calc::Calc::round_down_value(
                parent_limit
                    .saturating_sub(blocked)
                    .saturating_sub(used)
                    .saturating_add(child_used),
                step,
            );
            used = child_used;
            queue = child;
        }
        let mut room_to_max = Resource::UNBOUNDED;
        room_to_max.set(weft_types::MEMORY, room);
        LeafLimit {
            limit: super::calc::Calc::memory(limit),
            refused,
            used: self.used(leaf),
            room_to_max,
        }
    }

    /// `used >= limit`, unless continue looking and releasing `could_unreserve` would bring
    /// `used` under it.
    fn over_limit(&self, used: Resource, limit: Resource, could_unreserve: Resource) -> bool {
        let calc = self.rules.calc;
        let p = &self.cluster;
        if !calc.ge(p, &used, &limit) {
            return false;
        }
        let continue_looking = self.rules.file.globals.reservations_continue_look_all_nodes;
        !(continue_looking
            && calc.gt(p, &could_unreserve, &Resource::ZERO)
            && calc.lt(p, &used.saturating_sub(could_unreserve), &limit))
    }

    /// The users of a leaf with their usage and apps.
    pub(crate) fn leaf_users(&self, leaf: QueueId) -> BTreeMap<&str, LeafUser> {
        let q = self.queues.get(leaf);
        let mut users: BTreeMap<&str, LeafUser> = BTreeMap::new();
        for id in q.runnable_apps.iter().chain(q.non_runnable_apps.iter()) {
            let Some(a) = self.apps.get(id) else {
                continue;
            };
            let u = users.entry(a.user.as_str()).or_default();
            u.used = u
                .used
                .saturating_add(a.usage)
                .saturating_add(self.app_reserved(a));
            u.active |= a.has_outstanding_asks();
            if a.runnable {
                u.running_apps += 1;
                u.am_used = u
                    .am_used
                    .saturating_add(a.am_resource.unwrap_or(Resource::ZERO));
            } else {
                u.pending_apps += 1;
            }
        }
        users
    }

    /// A user's weight in the leaf (`user-settings.<user>.weight`, default 1).
    pub(crate) fn user_weight(&self, leaf: QueueId, user: &str) -> f64 {
        self.queues
            .get(leaf)
            .rules_cold
            .leaf
            .as_ref()
            .and_then(|l| l.user_weights.get(user).copied())
            .unwrap_or(1.0)
    }

    /// The leaf's user limit before weights, for active users (spec §5.6, exactly):
    /// `max(⌈(used by active users + minAlloc) / Σ active weights⌉, ⌈currentCap × MULP / 100⌉)`,
    /// at most `ULF × queueCap` (or the rounded maximum when ULF is -1 or the guarantee is
    /// none), rounded up to the minimum allocation.
    pub(crate) fn user_limit(&self, leaf: QueueId) -> Resource {
        self.user_limit_with(leaf, &self.leaf_users(leaf))
    }

    /// [`Self::user_limit`] from the leaf's users as [`Self::leaf_users`] lists them.
    pub(crate) fn user_limit_with(
        &self,
        leaf: QueueId,
        users: &BTreeMap<&str, LeafUser>,
    ) -> Resource {
        self.user_limit_from(
            leaf,
            users.iter().map(|(name, u)| (*name, u.used, u.active)),
        )
    }

    /// [`Self::user_limit`] from the leaf's users in name order, each as (name, used,
    /// active).
    pub(crate) fn user_limit_from<'u>(
        &self,
        leaf: QueueId,
        users: impl Iterator<Item = (&'u str, Resource, bool)> + Clone,
    ) -> Resource {
        let calc = self.rules.calc;
        let p = self.cluster;
        let step = self.properties.minimum_allocation;
        let q = self.queues.get(leaf);
        let Some(limits) = q.rules_cold.leaf.as_ref() else {
            return Resource::ZERO;
        };
        let eff_min = self.eff_min_of(q);
        let queue_cap = calc.max(&p, eff_min, step);
        let usage_ratio: f64 = users
            .clone()
            .map(|(_, used, _)| calc.ratio(&used, &p))
            .filter(|r| r.is_finite())
            .sum();
        let consumed = calc.multiply_normalize_up(p, usage_ratio, step);
        let current_cap = if calc.lt(&p, &consumed, &queue_cap) {
            queue_cap
        } else {
            consumed.saturating_add(step)
        };
        let mut active_used = Resource::ZERO;
        let mut weights = 0.0;
        for (name, used, active) in users {
            if active {
                active_used = active_used.saturating_add(used);
                weights += self.user_weight(leaf, name);
            }
        }
        let by_users = calc.divide_and_ceil(active_used.saturating_add(step), weights);
        let by_percent = calc.divide_and_ceil(
            calc.multiply_round_down(current_cap, limits.minimum_user_limit_percent),
            100.0,
        );
        let limit = calc.max(&p, by_users, by_percent);
        let max_limit = if limits.user_limit_factor == -1.0 || calc_is_none(&calc, &eff_min) {
            calc.round_down(self.eff_max_of(q), step)
        } else {
            calc.multiply_round_down(queue_cap, limits.user_limit_factor)
        };
        calc.round_up(calc.min(&p, limit, max_limit), step)
    }

    /// [`Self::user_limit_from`] under the Default calculator, which compares, rounds and picks
    /// by memory alone: the same steps on the users' memory (in name order, as the sum of
    /// ratios is taken), the result in the calculator's shape. The fast walk's kept limit
    /// (`user_cache.rs`); `verify` and the reference walk compute the general form.
    pub(crate) fn user_limit_memory<'u>(
        &self,
        leaf: QueueId,
        users: impl Iterator<Item = (&'u str, i64, bool)> + Clone,
    ) -> Resource {
        use super::calc::Calc;
        let cluster = self.cluster.memory_mb();
        let step = self.properties.minimum_allocation.memory_mb();
        let q = self.queues.get(leaf);
        let Some(limits) = q.rules_cold.leaf.as_ref() else {
            return Resource::ZERO;
        };
        let eff_min = self.eff_min_of(q).memory_mb();
        let queue_cap = eff_min.max(step);
        let usage_ratio: f64 = users
            .clone()
            .map(|(_, used, _)| used as f64 / cluster as f64)
            .filter(|r| r.is_finite())
            .sum();
        let consumed = Calc::round_up_value((cluster as f64 * usage_ratio + 0.5) as i64, step);
        let current_cap = if consumed < queue_cap {
            queue_cap
        } else {
            consumed.saturating_add(step)
        };
        let mut active_used = 0i64;
        let mut weights = 0.0;
        for (name, used, active) in users {
            if active {
                active_used = active_used.saturating_add(used);
                weights += self.user_weight(leaf, name);
            }
        }
        let divide_and_ceil = |v: i64, n: f64| {
            if n == 0.0 {
                0
            } else {
                (v as f64 / n).ceil() as i64
            }
        };
        let by_users = divide_and_ceil(active_used.saturating_add(step), weights);
        let by_percent = divide_and_ceil(
            (current_cap as f64 * limits.minimum_user_limit_percent) as i64,
            100.0,
        );
        let limit = by_users.max(by_percent);
        let max_limit = if limits.user_limit_factor == -1.0 || eff_min == 0 {
            Calc::round_down_value(self.eff_max_of(q).memory_mb(), step)
        } else {
            (queue_cap as f64 * limits.user_limit_factor) as i64
        };
        Calc::memory(Calc::round_up_value(limit.min(max_limit), step))
    }

    /// `user`'s own limit in the leaf: the leaf's user limit times the user's weight,
    /// normalized down (spec §5.6, §13.6: down, as Hadoop's code).
    pub(crate) fn user_limit_of(&self, leaf: QueueId, user: &str, limit: Resource) -> Resource {
        let weight = self.user_weight(leaf, user);
        self.rules
            .calc
            .multiply_normalize_down(limit, weight, self.properties.minimum_allocation)
    }

    /// The headroom an AM of `user` in `leaf` is told (spec §5.7).
    pub(crate) fn cs_headroom(&self, leaf: QueueId, user: &str) -> Resource {
        let calc = self.rules.calc;
        let step = self.properties.minimum_allocation;
        let limit = self.user_limit_of(leaf, user, self.user_limit(leaf));
        let users = self.leaf_users(leaf);
        let used_user = users.get(user).map_or(Resource::ZERO, |u| u.used);
        let queue_limit = self.leaf_limit(leaf).limit;
        let room = limit.saturating_sub(used_user).clamp_non_negative().cw_min(
            queue_limit
                .saturating_sub(self.used(leaf))
                .clamp_non_negative(),
        );
        let headroom = calc.round_down(room, step);
        let free = self.cluster.saturating_sub(self.cluster_used);
        calc.min(&self.cluster, free, headroom)
    }

    /// The leaf's AM limit and `user`'s AM limit in it (spec §5.8).
    pub(crate) fn am_limits(&self, leaf: QueueId, user: &str) -> (Resource, Resource) {
        let calc = self.rules.calc;
        let step = self.properties.minimum_allocation;
        let q = self.queues.get(leaf);
        let Some(limits) = q.rules_cold.leaf.as_ref() else {
            return (Resource::ZERO, Resource::ZERO);
        };
        let eff_min = self.eff_min_of(q);
        let current = self.leaf_limit(leaf).limit;
        let usable = if calc.fits(&eff_min, &current) {
            current
        } else {
            eff_min
        };
        let am_limit = calc.multiply_normalize_up(usable, limits.am_percent, step);
        let users = self.leaf_users(leaf);
        let counted = users
            .values()
            .filter(|u| u.active || u.running_apps == 0)
            .count()
            .max(1);
        let effective = (limits.minimum_user_limit_percent / 100.0).max(1.0 / counted as f64);
        let weighted = (effective * self.user_weight(leaf, user)).min(1.0);
        let factor = if limits.user_limit_factor == -1.0 {
            limits.am_percent
        } else {
            limits.am_percent * weighted * limits.user_limit_factor
        };
        let user_am = calc.multiply_normalize_up(eff_min, factor, step);
        (am_limit, calc.min(&self.cluster, user_am, am_limit))
    }
}

/// Whether `r` is none for the calculator (Default: no memory).
fn calc_is_none(calc: &super::calc::Calc, r: &Resource) -> bool {
    if calc.is_dominant() {
        r.is_zero()
    } else {
        r.memory_mb() == 0
    }
}

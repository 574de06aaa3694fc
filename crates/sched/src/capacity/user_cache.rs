//! Hadoop's user-limit cache (`LeafQueue`'s `userLimitsCache`): within one node heartbeat a
//! leaf's user limit and its users' used resources are computed once, at the leaf's first app
//! visit, and reused by every later visit of the heartbeat until something in that leaf changes.
//!
//! What may change them during a heartbeat: an allocation or a reservation in the leaf (its
//! users' usage, an app running out of asks and so its user going inactive), and reservations
//! made or released (`Rules::reservation_changed`). Each drops the leaf's entry. Everything
//! else (completions, asks, submissions, node and configuration changes) happens between
//! heartbeats, so the whole cache is dropped when a heartbeat starts and when it ends, and
//! reports, headroom and activation between heartbeats never read it. The reference walk never
//! uses it: it computes every limit from scratch (`limits.rs`), so the differential tests
//! compare the cache against recomputation.

use std::collections::BTreeMap;

use weft_types::Resource;

use crate::engine::WalkMode;
use crate::queues::QueueId;

use super::CapacityEngine;

/// One leaf's figures for the current heartbeat.
#[derive(Clone, Debug, Default)]
pub(crate) struct LeafUserFigures {
    /// The leaf's user limit before weights (`limits.rs` `user_limit`).
    pub(crate) user_limit: Resource,
    /// Each user's used resources in the leaf (allocations and reservations).
    pub(crate) used: Vec<(String, Resource)>,
}

impl LeafUserFigures {
    fn used_by(&self, user: &str) -> Resource {
        self.used
            .iter()
            .find(|(u, _)| u == user)
            .map_or(Resource::ZERO, |(_, r)| *r)
    }
}

/// The cache: per leaf, its figures while valid.
#[derive(Clone, Debug, Default)]
pub(crate) struct UserLimitCache {
    leaves: BTreeMap<QueueId, LeafUserFigures>,
}

impl UserLimitCache {
    /// Drops every entry (a heartbeat starts or ends).
    pub(crate) fn clear(&mut self) {
        self.leaves.clear();
    }

    /// Drops `leaf`'s entry (something in it changed).
    pub(crate) fn invalidate(&mut self, leaf: QueueId) {
        self.leaves.remove(&leaf);
    }
}

impl CapacityEngine {
    /// The leaf's figures computed from scratch: its user limit before weights and its users'
    /// used resources.
    fn leaf_user_figures(&self, leaf: QueueId) -> LeafUserFigures {
        let users = self.leaf_users(leaf);
        LeafUserFigures {
            user_limit: self.user_limit_with(leaf, &users),
            used: users
                .iter()
                .map(|(name, u)| ((*name).to_string(), u.used))
                .collect(),
        }
    }

    /// `user`'s figures in `leaf` for an app visit: the leaf's user limit before weights and
    /// what the user uses there. The fast walk reads them from the cache (filling it on a
    /// miss); the reference walk recomputes them.
    pub(crate) fn user_figures(&mut self, leaf: QueueId, user: &str) -> (Resource, Resource) {
        if self.walk == WalkMode::Reference {
            let figures = self.leaf_user_figures(leaf);
            return (figures.user_limit, figures.used_by(user));
        }
        if let Some(figures) = self.rules.user_cache.leaves.get(&leaf) {
            return (figures.user_limit, figures.used_by(user));
        }
        let figures = self.leaf_user_figures(leaf);
        let found = (figures.user_limit, figures.used_by(user));
        self.rules.user_cache.leaves.insert(leaf, figures);
        found
    }

    /// Compares every cached entry with a recomputation (for `verify`, which may run while a
    /// heartbeat is open in tests that check between walks).
    pub(crate) fn verify_user_cache(&self, drift: &mut Vec<String>) {
        for (leaf, cached) in &self.rules.user_cache.leaves {
            let fresh = self.leaf_user_figures(*leaf);
            let same_users = cached.used.len() == fresh.used.len()
                && cached
                    .used
                    .iter()
                    .zip(&fresh.used)
                    .all(|(a, b)| a.0 == b.0 && crate::objects::app::same_resource(&a.1, &b.1));
            if !crate::objects::app::same_resource(&cached.user_limit, &fresh.user_limit)
                || !same_users
            {
                drift.push(format!(
                    "leaf {}: cached user figures {cached:?}, recomputed {fresh:?}",
                    self.queues.get(*leaf).name
                ));
            }
        }
    }
}

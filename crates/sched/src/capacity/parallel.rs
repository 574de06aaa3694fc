//! `max-parallel-apps` (spec §3.7, §7.2; Hadoop's `CSMaxRunningAppsEnforcer`): how many apps
//! may be runnable at once in each queue's subtree (`<queue>.max-parallel-apps`, else the global
//! `max-parallel-apps`; root and parents too) and per user across the scheduler
//! (`user.<name>.max-parallel-apps`, else `user.max-parallel-apps`). All unlimited by default.
//!
//! An app over a limit is accepted but *held*: it sits in its leaf's pending list flagged
//! `CsApp::held`, and activation (the AM limits, §7.3) skips it. When a runnable (not held) app
//! leaves, held apps are made runnable as Hadoop's `updateRunnabilityOnAppRemoval` does: the
//! candidates are the held apps of the leaves under the highest queue on the app's path that
//! has just gained room (walking down only through queues with room) plus the user's held
//! apps when the user has just gained room; they are tried oldest first (start time, then
//! id), each made runnable if every limit lets it, and no more are made runnable than there
//! were candidate lists (Hadoop's bound). A refresh tries every held app under queues with
//! room, without that bound (`updateRunnabilityOnReload`). A move keeps the app's state (a
//! moved attempt is not re-checked in Hadoop) and carries its count to the new path.
//!
//! Counts: per queue the apps of its subtree that are not held, per user likewise, kept in
//! `Capacity::parallel`; `verify` recomputes them.
//!
//! Difference from Hadoop: a held app counts as pending in reports and in the AM limits' user
//! count (Hadoop lists non-runnable apps apart from pending ones).

use std::collections::BTreeMap;

use weft_types::AppId;

use crate::queues::QueueId;

use super::CapacityEngine;

/// Runnable (not held) apps per queue subtree and per user.
#[derive(Clone, Debug, Default)]
pub(crate) struct ParallelCounts {
    queues: BTreeMap<QueueId, i32>,
    users: BTreeMap<String, i32>,
}

impl ParallelCounts {
    fn of_queue(&self, q: QueueId) -> i32 {
        self.queues.get(&q).copied().unwrap_or(0)
    }

    fn of_user(&self, user: &str) -> i32 {
        self.users.get(user).copied().unwrap_or(0)
    }
}

impl CapacityEngine {
    /// `max-parallel-apps` of queue `q`: its own, else the global default.
    fn queue_parallel_limit(&self, q: QueueId) -> i32 {
        let file = &self.rules.file;
        file.queues
            .get(self.queues.get(q).rules_cold.index)
            .and_then(|c| c.max_parallel_apps)
            .unwrap_or(file.globals.max_parallel_apps)
    }

    /// `user.<user>.max-parallel-apps`, else `user.max-parallel-apps`.
    fn user_parallel_limit(&self, user: &str) -> i32 {
        let g = &self.rules.file.globals;
        g.per_user_max_parallel_apps
            .get(user)
            .copied()
            .unwrap_or(g.user_max_parallel_apps)
    }

    /// Whether one more app of `user` in `leaf` may be runnable.
    fn may_run_parallel(&self, leaf: QueueId, user: &str) -> bool {
        let counts = &self.rules.parallel;
        counts.of_user(user) < self.user_parallel_limit(user)
            && self
                .queues
                .path_to_root(leaf)
                .all(|q| counts.of_queue(q) < self.queue_parallel_limit(q))
    }

    /// Counts (`add`) or uncounts a runnable app of `user` along `leaf`'s path; `user` only
    /// when given (a move keeps the user's count).
    fn count_parallel(&mut self, leaf: QueueId, user: Option<&str>, add: bool) {
        let step = if add { 1 } else { -1 };
        let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
        let counts = &mut self.rules.parallel;
        for q in path {
            let n = counts.queues.entry(q).or_insert(0);
            *n += step;
            if *n == 0 {
                counts.queues.remove(&q);
            }
        }
        if let Some(user) = user {
            let n = counts.users.entry(user.to_string()).or_insert(0);
            *n += step;
            if *n == 0 {
                counts.users.remove(user);
            }
        }
    }

    /// A newly accepted app: runnable if every limit lets it, else held. Returns whether held.
    pub(crate) fn admit_parallel(&mut self, app: AppId) -> bool {
        let Some(a) = self.apps.get(&app) else {
            return false;
        };
        let (leaf, user) = (a.queue, a.user.clone());
        let held = !self.may_run_parallel(leaf, &user);
        if !held {
            self.count_parallel(leaf, Some(&user), true);
        }
        if let Some(a) = self.apps.get_mut(&app) {
            a.rules.held = held;
        }
        held
    }

    /// The app (still in its leaf) is leaving: a runnable one frees its place and held apps
    /// may take it; the leaves whose apps were made runnable are returned for activation.
    pub(crate) fn leave_parallel(&mut self, app: AppId) -> Vec<QueueId> {
        let Some(a) = self.apps.get(&app) else {
            return Vec::new();
        };
        let (leaf, user, held) = (a.queue, a.user.clone(), a.rules.held);
        if held {
            return Vec::new();
        }
        self.count_parallel(leaf, Some(&user), false);
        let counts = &self.rules.parallel;
        let mut highest = None;
        for q in self.queues.path_to_root(leaf) {
            if counts.of_queue(q) == self.queue_parallel_limit(q).saturating_sub(1) {
                highest = Some(q);
            }
        }
        let mut lists = 0;
        let mut candidates: Vec<AppId> = Vec::new();
        if let Some(top) = highest {
            self.gather_held(top, &mut candidates, &mut lists);
        }
        if counts.of_user(&user) == self.user_parallel_limit(&user).saturating_sub(1) {
            lists += 1;
            candidates.extend(
                self.apps
                    .values()
                    .filter(|a| a.rules.held && a.user == user && a.id != app)
                    .map(|a| a.id),
            );
        }
        self.release_held(candidates, lists)
    }

    /// The app moves from `old` to `new` (leaves): its count follows it.
    pub(crate) fn move_parallel(&mut self, app: AppId, old: QueueId, new: QueueId) {
        if self.apps.get(&app).is_some_and(|a| !a.rules.held) {
            self.count_parallel(old, None, false);
            self.count_parallel(new, None, true);
        }
    }

    /// After a refresh: every held app under queues with room is tried.
    pub(crate) fn refresh_parallel(&mut self) {
        let mut candidates = Vec::new();
        let mut lists = 0;
        self.gather_held(crate::queues::ROOT, &mut candidates, &mut lists);
        self.release_held(candidates, usize::MAX);
    }

    /// Hadoop's `gatherPossiblyRunnableAppLists`: the held apps of every leaf under `q`
    /// reached through queues with room (one list per leaf).
    fn gather_held(&self, q: QueueId, out: &mut Vec<AppId>, lists: &mut usize) {
        if self.rules.parallel.of_queue(q) >= self.queue_parallel_limit(q) {
            return;
        }
        let queue = self.queues.get(q);
        if queue.is_leaf {
            *lists += 1;
            out.extend(
                queue
                    .non_runnable_apps
                    .iter()
                    .filter(|id| self.apps.get(id).is_some_and(|a| a.rules.held)),
            );
            return;
        }
        for c in &queue.children {
            self.gather_held(*c, out, lists);
        }
    }

    /// Makes runnable, oldest first, the candidates every limit lets in, at most `bound` of
    /// them; returns their leaves.
    fn release_held(&mut self, mut candidates: Vec<AppId>, bound: usize) -> Vec<QueueId> {
        candidates.sort_by_key(|id| (self.apps.get(id).map_or(u64::MAX, |a| a.start_time), *id));
        candidates.dedup();
        let mut released = 0;
        let mut leaves = Vec::new();
        for id in candidates {
            if released >= bound {
                break;
            }
            let Some(a) = self.apps.get(&id) else {
                continue;
            };
            let (leaf, user) = (a.queue, a.user.clone());
            if !self.may_run_parallel(leaf, &user) {
                continue;
            }
            self.count_parallel(leaf, Some(&user), true);
            if let Some(a) = self.apps.get_mut(&id) {
                a.rules.held = false;
            }
            released += 1;
            if !leaves.contains(&leaf) {
                leaves.push(leaf);
            }
        }
        leaves
    }

    /// The counts summed again from the apps (`rebuild_derived`).
    pub(crate) fn rebuild_parallel(&mut self) {
        *self.rules.parallel = ParallelCounts::default();
        let runnable: Vec<(QueueId, String)> = self
            .apps
            .values()
            .filter(|a| !a.rules.held)
            .map(|a| (a.queue, a.user.clone()))
            .collect();
        for (leaf, user) in runnable {
            self.count_parallel(leaf, Some(&user), true);
        }
    }

    /// Compares the kept counts with their recomputation.
    pub(crate) fn verify_parallel(&self, drift: &mut Vec<String>) {
        let mut fresh = ParallelCounts::default();
        for a in self.apps.values().filter(|a| !a.rules.held) {
            for q in self.queues.path_to_root(a.queue) {
                *fresh.queues.entry(q).or_insert(0) += 1;
            }
            *fresh.users.entry(a.user.clone()).or_insert(0) += 1;
        }
        let kept = &self.rules.parallel;
        if fresh.queues != kept.queues || fresh.users != kept.users {
            drift.push(format!(
                "max-parallel-apps counts: kept {kept:?}, recomputed {fresh:?}"
            ));
        }
    }
}

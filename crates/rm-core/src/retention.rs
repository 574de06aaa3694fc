//! Retention of completed applications (Hadoop's `RMAppManager` limits): the oldest completed
//! apps beyond `yarn.resourcemanager.state-store.max-completed-applications` are removed from
//! the store, and beyond `yarn.resourcemanager.max-completed-applications` from memory too, so
//! neither grows with the cluster's history.

use std::collections::VecDeque;

use weft_store::Write;
use weft_types::yarn_id::ApplicationId;

use crate::core::RmCore;

/// Hadoop 3's default for both limits (`DEFAULT_RM_MAX_COMPLETED_APPLICATIONS`).
pub const DEFAULT_MAX_COMPLETED_APPS: usize = 1000;

/// Completed apps in the order they completed: those still in memory, and of them those still
/// in the store (always the newest ones, since the store keeps no more than memory).
#[derive(Debug, Default)]
pub(crate) struct Completed {
    in_memory: VecDeque<ApplicationId>,
    in_store: VecDeque<ApplicationId>,
}

impl RmCore {
    /// Records that `id` completed and evicts what the limits no longer allow.
    pub(crate) fn app_completed(&mut self, id: ApplicationId) {
        if let Some(app) = self.apps.get_mut(&id) {
            app.release_buffers();
        }
        self.completed.in_memory.push_back(id);
        self.completed.in_store.push_back(id);
        self.enforce_retention();
    }

    /// The `i`-th completed app still in memory, oldest first.
    pub(crate) fn completed_app_at(&self, i: usize) -> Option<ApplicationId> {
        self.completed.in_memory.get(i).copied()
    }

    /// Sorts the recovered completed apps by completion (then id) and applies the limits.
    pub(crate) fn retain_recovered(&mut self) {
        let mut done: Vec<(weft_types::Time, ApplicationId)> = self
            .apps
            .values()
            .filter(|a| a.state.is_final())
            .map(|a| (a.finish_time.unwrap_or(a.submit_time), a.id))
            .collect();
        done.sort();
        self.completed.in_memory = done.iter().map(|(_, id)| *id).collect();
        self.completed.in_store = self.completed.in_memory.clone();
        self.ended_total.next_completed = 0;
        self.enforce_retention();
    }

    fn enforce_retention(&mut self) {
        // Hadoop lowers the store's limit to memory's: the store never holds an app that a
        // restart would bring back after memory dropped it.
        let store_max = self
            .config
            .store_max_completed_apps
            .min(self.config.max_completed_apps);
        let mut removed = Vec::new();
        while self.completed.in_store.len() > store_max {
            if let Some(id) = self.completed.in_store.pop_front() {
                removed.push(Write::RemoveApp(id.seq));
                removed.extend(
                    self.evictable_demands(id)
                        .into_iter()
                        .map(Write::RemoveDemand),
                );
            }
        }
        if !removed.is_empty() {
            self.persist(removed);
        }
        while self.completed.in_memory.len() > self.config.max_completed_apps {
            if let Some(id) = self.completed.in_memory.pop_front() {
                self.ended_total.next_completed = self.ended_total.next_completed.saturating_sub(1);
                if let Some(app) = self.apps.remove(&id) {
                    self.forget_ended(app.ended.len());
                }
                for key in self.evictable_demands(id) {
                    self.demands.by_key.remove(&key);
                }
            }
        }
    }

    /// The demands of a completed app that may leave with it: all of them (they ended with
    /// the app) except one a live demand still names in its OrderBy, which keeps answering
    /// for its successor.
    fn evictable_demands(&self, app: ApplicationId) -> Vec<String> {
        let prefix = format!("{app}/");
        let ended: Vec<&String> = self
            .demands
            .by_key
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter(|(_, d)| d.state().is_final())
            .map(|(key, _)| key)
            .collect();
        if ended.is_empty() {
            return Vec::new();
        }
        let named = self.named_by_live_demands();
        ended
            .into_iter()
            .filter(|key| !named.contains(key.as_str()))
            .cloned()
            .collect()
    }
}

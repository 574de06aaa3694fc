//! maxRunningApps for queues and users (spec §10): which apps may run, and who runs next.
//!
//! Nothing a user submits fails because of these limits: an app over a limit waits, counts in
//! demand, and is promoted in start-time order when room appears.

use weft_types::AppId;

use crate::fair::FairEngine;
use crate::queues::QueueId;

/// Per-user running count and waiting apps.
#[derive(Clone, Debug, Default)]
pub(crate) struct UserState {
    pub(crate) runnable: i32,
    pub(crate) waiting: Vec<AppId>,
}

impl FairEngine {
    fn user_max_apps(&self, user: &str) -> i32 {
        let alloc = &self.rules.config.allocations;
        alloc
            .user_max_apps
            .get(user)
            .copied()
            .unwrap_or(alloc.user_max_apps_default)
    }

    fn user_runnable(&self, user: &str) -> i32 {
        self.rules.users.get(user).map_or(0, |u| u.runnable)
    }

    /// Whether an app of `user` in `leaf` could run now: user limit first, then the leaf and
    /// every ancestor.
    pub(crate) fn can_app_be_runnable(&self, leaf: QueueId, user: &str) -> bool {
        if self.user_runnable(user) >= self.user_max_apps(user) {
            return false;
        }
        self.queues.path_to_root(leaf).all(|q| {
            let q = self.queues.get(q);
            q.runnable_count < q.rules_cold.max_running_apps
        })
    }

    /// Puts a newly submitted (or moved) app in its leaf, runnable or waiting.
    pub(crate) fn add_app_to_queue(&mut self, id: AppId) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let (leaf, user) = (app.queue, app.user.clone());
        if self.can_app_be_runnable(leaf, &user) {
            self.queues.get_mut(leaf).runnable_apps.push(id);
            self.track_runnable(id);
        } else {
            self.queues.get_mut(leaf).non_runnable_apps.push(id);
            self.rules.users.entry(user).or_default().waiting.push(id);
        }
    }

    pub(crate) fn track_runnable(&mut self, id: AppId) {
        let Some(app) = self.apps.get_mut(&id) else {
            return;
        };
        app.runnable = true;
        let (leaf, user) = (app.queue, app.user.clone());
        self.rules.users.entry(user).or_default().runnable += 1;
        let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
        for q in path {
            self.queues.get_mut(q).runnable_count += 1;
        }
    }

    pub(crate) fn untrack_runnable(&mut self, id: AppId) {
        let Some(app) = self.apps.get_mut(&id) else {
            return;
        };
        app.runnable = false;
        let (leaf, user) = (app.queue, app.user.clone());
        if let Some(u) = self.rules.users.get_mut(&user) {
            u.runnable -= 1;
        }
        let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
        for q in path {
            self.queues.get_mut(q).runnable_count -= 1;
        }
    }

    /// Takes an app out of its leaf (finish, kill or move), releasing its AM usage, and promotes
    /// waiting apps when this freed a slot (spec §10).
    pub(crate) fn remove_app_from_queue(&mut self, id: AppId) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let (leaf, user, runnable) = (app.queue, app.user.clone(), app.runnable);
        let am = app.am_resource.filter(|_| app.am_running);
        let q = self.queues.get_mut(leaf);
        if runnable {
            q.runnable_apps.retain(|a| *a != id);
            if let Some(am) = am {
                q.am_usage = q.am_usage.saturating_sub(am);
            }
            self.untrack_runnable(id);
            self.promote_after_removal(leaf, &user);
        } else {
            q.non_runnable_apps.retain(|a| *a != id);
            if let Some(u) = self.rules.users.get_mut(&user) {
                u.waiting.retain(|a| *a != id);
            }
        }
    }

    /// Promotion after a runnable app left `leaf` (finished, killed or moved away).
    pub(crate) fn promote_after_removal(&mut self, leaf: QueueId, user: &str) {
        let mut highest = None;
        for q in self.queues.path_to_root(leaf) {
            let queue = self.queues.get(q);
            if queue.runnable_count == queue.rules_cold.max_running_apps.saturating_sub(1) {
                highest = Some(q);
            }
        }
        let mut lists = Vec::new();
        if let Some(q) = highest {
            self.gather_waiting_lists(q, &mut lists);
        }
        if self.user_runnable(user) == self.user_max_apps(user).saturating_sub(1) {
            if let Some(u) = self.rules.users.get(user) {
                lists.push(u.waiting.clone());
            }
        }
        let cap = lists.len();
        self.promote(lists, cap);
    }

    /// Waiting lists of every leaf under `q` reachable through queues below their limit.
    fn gather_waiting_lists(&self, q: QueueId, out: &mut Vec<Vec<AppId>>) {
        let queue = self.queues.get(q);
        if queue.runnable_count >= queue.rules_cold.max_running_apps {
            return;
        }
        if queue.is_leaf {
            out.push(queue.non_runnable_apps.clone());
        } else {
            for c in &queue.children {
                self.gather_waiting_lists(*c, out);
            }
        }
    }

    /// Merges the lists by start time and promotes apps that can run, at most `cap` of them.
    fn promote(&mut self, lists: Vec<Vec<AppId>>, cap: usize) {
        let mut merged: Vec<(u64, AppId)> = lists
            .into_iter()
            .flatten()
            .filter_map(|id| self.apps.get(&id).map(|a| (a.start_time, id)))
            .collect();
        merged.sort();
        merged.dedup();
        let mut promoted = 0;
        for (_, id) in merged {
            if promoted >= cap {
                break;
            }
            let Some(app) = self.apps.get(&id) else {
                continue;
            };
            if app.runnable {
                continue;
            }
            let (leaf, user) = (app.queue, app.user.clone());
            if !self.can_app_be_runnable(leaf, &user) {
                continue;
            }
            let q = self.queues.get_mut(leaf);
            q.non_runnable_apps.retain(|a| *a != id);
            q.runnable_apps.push(id);
            if let Some(u) = self.rules.users.get_mut(&user) {
                u.waiting.retain(|a| *a != id);
            }
            self.track_runnable(id);
            self.refresh_app(id);
            promoted += 1;
        }
    }

    /// After a reload, promote every waiting app that now fits, in start-time order.
    pub(crate) fn update_runnability_on_reload(&mut self) {
        let mut lists = Vec::new();
        self.gather_waiting_lists(crate::queues::ROOT, &mut lists);
        self.promote(lists, usize::MAX);
    }
}

//! Moving an application between leaf queues (spec §16).

use crate::lanes::Resource;
use weft_types::AppId;

use crate::api::{QueueAccess, SchedError};
use crate::fair::FairEngine;
use crate::queues::QueueId;

impl FairEngine {
    /// Whether `user` has `access` to the queue named `queue` (with or without `root.`);
    /// `None` when no such queue exists.
    pub(crate) fn queue_access(
        &self,
        queue: &str,
        user: &str,
        access: QueueAccess,
    ) -> Option<bool> {
        let name = crate::fair::placement::normalize_queue_name(queue).ok()?;
        let id = self.queues.lookup(&self.queues.plan_default(name))?;
        let groups = self.groups.get(user).cloned().unwrap_or_default();
        let admin = self.queues.allows(id, user, &groups, |q| &q.acl_admin);
        Some(match access {
            QueueAccess::Administer => admin,
            QueueAccess::Submit => {
                admin || self.queues.allows(id, user, &groups, |q| &q.acl_submit)
            }
        })
    }

    pub(crate) fn move_app(&mut self, id: AppId, target: &str) -> Result<(), SchedError> {
        let refuse = |reason: String| SchedError::MoveRefused {
            app: id,
            queue: target.to_string(),
            reason,
        };
        let Some(app) = self.apps.get(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let name = crate::fair::placement::normalize_queue_name(target)
            .map_err(|e| refuse(e.to_string()))?;
        let name = self.queues.plan_default(name);
        let new = match self.queues.lookup(&name) {
            Some(q) if self.queues.get(q).is_leaf => q,
            _ => {
                return Err(refuse(format!(
                    "queue {name} not found or is not a leaf queue"
                )))
            }
        };
        let old = app.queue;
        if old == new {
            return Ok(());
        }
        if let Some(pools) = &self.pools {
            let (from, to) = (self.queues.get(old).pool, self.queues.get(new).pool);
            // Containers and reservations sit on the old pool's nodes (spec §6, moves).
            if from != to && (app.usage != Resource::ZERO || !app.reservations.is_empty()) {
                let show = |p: u16| match pools.name(p) {
                    "" => "(no pool)".to_string(),
                    name => name.to_string(),
                };
                return Err(refuse(format!(
                    "cannot move {id} from resource pool {} to {} while it has running containers",
                    show(from),
                    show(to)
                )));
            }
        }
        let was_runnable = app.runnable;
        let usage = app.usage;
        if was_runnable {
            let lca = self.lowest_common_ancestor(old, new);
            for q in self
                .queues
                .path_to_root(new)
                .take_while(|q| Some(*q) != lca)
            {
                let queue = self.queues.get(q);
                if queue.runnable_count >= queue.rules_cold.max_running_apps {
                    return Err(refuse(format!(
                        "moving would exceed maxRunningApps ({}) of queue {}",
                        queue.rules_cold.max_running_apps, queue.name
                    )));
                }
                if !queue.usage.saturating_add(usage).fits_in(&queue.max_share) {
                    return Err(refuse(format!(
                        "the application's usage {:?} would exceed maxResources {:?} of queue {} (usage {:?})",
                        usage, queue.max_share, queue.name, queue.usage
                    )));
                }
            }
        }
        let user = app.user.clone();
        // A runnable app already counts in its user's and its common ancestors' totals, and the
        // queues between the target and the common ancestor were checked above, so it stays
        // runnable (spec §16.3: user limits are not re-checked). Hadoop re-runs the full check
        // here and fails the move with an internal error when the user is at their limit; we
        // take the spec's reading.
        let now_runnable = was_runnable || self.can_app_be_runnable(new, &user);
        let am = app.am_resource.filter(|_| app.am_running);

        // Out of the old queue (runnable bookkeeping and AM usage go with it).
        self.detach_app(id);
        {
            let q = self.queues.get_mut(old);
            if was_runnable {
                q.runnable_apps.retain(|a| *a != id);
                if let Some(am) = am {
                    q.am_usage = q.am_usage.saturating_sub(am);
                }
            } else {
                q.non_runnable_apps.retain(|a| *a != id);
            }
        }
        self.add_queue_usage(old, usage, false);
        if was_runnable {
            self.untrack_runnable(id);
        } else if let Some(u) = self.rules.users.get_mut(&user) {
            u.waiting.retain(|a| *a != id);
        }

        // Into the new one.
        if let Some(app) = self.apps.get_mut(&id) {
            app.queue = new;
            app.threshold_ask = None;
        }
        {
            let q = self.queues.get_mut(new);
            if now_runnable {
                q.runnable_apps.push(id);
                if let Some(am) = am {
                    q.am_usage = q.am_usage.saturating_add(am);
                }
            } else {
                q.non_runnable_apps.push(id);
            }
        }
        self.add_queue_usage(new, usage, true);
        if now_runnable {
            self.track_runnable(id);
        } else {
            self.rules
                .users
                .entry(user.clone())
                .or_default()
                .waiting
                .push(id);
        }
        self.refresh_queue_path(old);
        self.refresh_app(id);
        if was_runnable {
            self.promote_after_removal(old, &user);
        }
        Ok(())
    }

    /// The deepest queue that is an ancestor of both (by dot-delimited name prefix).
    fn lowest_common_ancestor(&self, a: QueueId, b: QueueId) -> Option<QueueId> {
        let ancestors_a: Vec<QueueId> = self.queues.path_to_root(a).collect();
        self.queues
            .path_to_root(b)
            .find(|q| ancestors_a.contains(q))
    }
}

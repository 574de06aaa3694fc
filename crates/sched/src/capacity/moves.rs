//! Moving an application between leaves (spec §7.5, Hadoop's `CapacityScheduler`
//! `preValidateMoveApplication` and `moveApplication`).
//!
//! Checked before anything changes, as Hadoop: the target is an existing leaf (by full path or
//! a leaf's short name, as a submission names it), the app's owner may submit there (Hadoop
//! checks this in the RM's client service; the core checks it too so the simulator's moves
//! obey it), and the target takes the app as it would a new submission
//! (`validate_submit`: the leaf and its ancestors RUNNING, the leaf's `maximum-applications`
//! and the owner's per-user cap). There is no room check: usage moves even if it takes the
//! target past its maximum capacity (Hadoop's Capacity Scheduler has none, unlike the Fair
//! Scheduler's `maxResources` check); the target then gets nothing until usage drops.
//!
//! Then the app's containers and reservations are detached from the old path (queue usage,
//! reserved resources, the kept users) and attached to the new one, and the attempt leaves the
//! old leaf's lists and joins the target's pending list: activation there decides, under the
//! target's AM limits, whether it is active again (Hadoop's `submitApplicationAttempt`); its
//! asks come along (they live in the app) and are scheduled from the target once it is active.
//! A move keeps the app's `max-parallel-apps` state: a held app stays held, a runnable one
//! stays runnable even past the target's limits (Hadoop skips the check for a moved attempt).
//! The old leaf re-runs activation and a draining source may stop.
//!
//! Differences from Hadoop: moving an app to the leaf it is in succeeds without a check
//! (Hadoop would count the app twice against the leaf's caps); reservation plan queues and
//! node-label partitions are not modelled (no `handleMoveToPlanQueue`, no partition check).

use weft_types::AppId;

use crate::api::SchedError;
use crate::queues::QueueId;

use super::CapacityEngine;

impl CapacityEngine {
    pub(crate) fn cs_move(&mut self, id: AppId, target: &str) -> Result<(), SchedError> {
        let refuse = |reason: String| SchedError::MoveRefused {
            app: id,
            queue: target.to_string(),
            reason,
        };
        let Some(app) = self.apps.get(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let (old, user) = (app.queue, app.user.clone());
        let name = target.trim();
        let Some(new) = self.resolve_queue(name) else {
            return Err(refuse(format!("The specified Queue: {name} doesn't exist")));
        };
        let queue = self.queues.get(new);
        if !queue.is_leaf {
            return Err(refuse(format!(
                "The specified Queue: {} is not a Leaf Queue.",
                queue.name
            )));
        }
        if new == old {
            return Ok(());
        }
        let groups = self.groups.get(&user).cloned().unwrap_or_default();
        if !self.queues.allows(new, &user, &groups, |q| &q.acl_submit)
            && !self.queues.allows(new, &user, &groups, |q| &q.acl_admin)
        {
            return Err(refuse(format!(
                "User {user} does not have permission to submit {id} to queue {}: not allowed by acl_submit_applications or acl_administer_queue of the queue or its parents",
                queue.name
            )));
        }
        self.validate_submit(id, &user, new)
            .map_err(|(_, why)| refuse(why))?;
        self.move_between(id, old, new);
        Ok(())
    }

    /// Carries out a checked move of `id` from leaf `old` to leaf `new`.
    fn move_between(&mut self, id: AppId, old: QueueId, new: QueueId) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let was_active = app.runnable;
        let usage = app.usage;
        let reserved = self.app_reserved(app);
        let am = app.am_resource.filter(|_| app.am_running && was_active);

        // Out of the old leaf: its users, its sets, its lists and the old path's figures.
        self.keep_left(id);
        self.detach_app(id);
        let q = self.queues.get_mut(old);
        q.runnable_apps.retain(|a| *a != id);
        q.non_runnable_apps.retain(|a| *a != id);
        if let Some(am) = am {
            q.am_usage = q.am_usage.saturating_sub(am);
        }
        let old_path: Vec<QueueId> = self.queues.path_to_root(old).collect();
        for p in &old_path {
            let queue = self.queues.get_mut(*p);
            if was_active {
                queue.runnable_count -= 1;
            }
            queue.usage = queue.usage.saturating_sub(usage);
            queue.rules.reserved = queue.rules.reserved.saturating_sub(reserved);
        }

        self.move_parallel(id, old, new);

        // Into the new one, pending until its activation says otherwise.
        if let Some(a) = self.apps.get_mut(&id) {
            a.queue = new;
            a.runnable = false;
            a.threshold_ask = None;
        }
        let new_path: Vec<QueueId> = self.queues.path_to_root(new).collect();
        for p in &new_path {
            let queue = self.queues.get_mut(*p);
            queue.usage = queue.usage.saturating_add(usage);
            queue.rules.reserved = queue.rules.reserved.saturating_add(reserved);
        }
        self.queues.get_mut(new).non_runnable_apps.push(id);
        self.keep_joined(id);
        self.refresh_app(id);
        self.refresh_queue_path(old);
        self.activate(new);
        self.activate(old);
        self.stop_drained(old);
    }
}

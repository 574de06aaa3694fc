//! Submission, activation and leaving (spec §7.1-§7.4).
//!
//! A submission names a queue by full path (`root.eng.batch`) or by its short name (a leaf's is
//! unique in 3.3, checked at load); none means `default`. Checks in Hadoop's order, the first failing
//! decides: the submit ACL (submit or administer on the leaf or an ancestor; Weft has no
//! `yarn.acl.enable` switch, as for the Fair Scheduler, so ACLs always apply and the shipped
//! root `*` lets everyone in), the system's `maximum-applications`, unknown queue, parent
//! queue, the leaf's and then an ancestor's state, the leaf's and then the user's application
//! cap. An accepted app waits (pending) until the AM limits let it in; it is never rejected for
//! them (§7.3).
//!
//! Queue mappings (`mapping`) may replace the requested queue before any check.
//!
//! `max-parallel-apps` holds an accepted app back before activation (`parallel`).
//!
//! Not modelled yet: auto-created leaves, application-priority ACLs.

use crate::lanes::Resource;
use weft_types::AppId;

use crate::api::RejectCode;
use crate::queues::QueueId;
use crate::rules::AppOf;

use super::{Capacity, CapacityEngine, CsState};

impl CapacityEngine {
    /// The queue a name means: a full path, else a leaf's short name, else `parent.leaf` with
    /// the parent's short name.
    pub(crate) fn resolve_queue(&self, name: &str) -> Option<QueueId> {
        if let Some(q) = self.queues.lookup(name) {
            return Some(q);
        }
        if let Some((parent, leaf)) = name.rsplit_once('.') {
            // `parent.leaf` with the parent by its short name (a mapping's `p.%user`, Hadoop's
            // placement context of parent and leaf).
            let p = self.resolve_queue(parent)?;
            if parent.contains('.') || self.queues.get(p).is_leaf {
                return None;
            }
            return self
                .queues
                .lookup(&format!("{}.{leaf}", self.queues.get(p).name));
        }
        // Leaf short names are unique (checked at load); a parent's short name is taken when
        // no leaf has it, so a submission to it is refused as a parent, as Hadoop's.
        let short = |q: &QueueId| self.queues.get(*q).name.rsplit('.').next() == Some(name);
        self.queues
            .ids()
            .find(|q| self.queues.get(*q).is_leaf && short(q))
            .or_else(|| self.queues.ids().find(short))
    }

    /// Spec §7.1: where the app goes, or why it is rejected.
    pub(crate) fn cs_place(
        &self,
        app: AppId,
        user: &str,
        requested: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)> {
        let name = requested
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("default");
        let mapped = self
            .mapped_queue(app, user, name)
            .map_err(|why| (RejectCode::PlacementRejected, why))?;
        let name = mapped.as_deref().unwrap_or(name);
        let queue = self.resolve_queue(name).map(|q| self.plan_default_of(q));
        if let Some(q) = queue {
            let groups = self.groups.get(user).cloned().unwrap_or_default();
            if !self.queues.allows(q, user, &groups, |x| &x.acl_submit)
                && !self.queues.allows(q, user, &groups, |x| &x.acl_admin)
            {
                return Err((
                    RejectCode::AclDenied,
                    format!(
                        "User {user} does not have permission to submit {app} to queue {}: not allowed by acl_submit_applications or acl_administer_queue of the queue or its parents",
                        self.queues.get(q).name
                    ),
                ));
            }
        }
        let system = i64::from(self.rules.file.globals.maximum_applications);
        if self.apps.len() as i64 >= system {
            return Err((
                RejectCode::MaxApplications,
                format!("Maximum system application limit reached,cannot accept submission of application: {app} (yarn.scheduler.capacity.maximum-applications is {system})"),
            ));
        }
        let Some(q) = queue else {
            return Err((
                RejectCode::PlacementRejected,
                format!("Application {app} submitted by user {user} to unknown queue: {name}"),
            ));
        };
        self.validate_submit(app, user, q)?;
        Ok(q)
    }

    /// Spec §7.1 steps c-h (Hadoop's `LeafQueue.validateSubmitApplication`): whether leaf `q`
    /// takes one more application of `user`; a move checks its target the same way (§7.5).
    pub(crate) fn validate_submit(
        &self,
        app: AppId,
        user: &str,
        q: QueueId,
    ) -> Result<(), (RejectCode, String)> {
        let leaf = self.queues.get(q);
        if !leaf.is_leaf {
            return Err((
                RejectCode::QueueNotLeaf,
                format!(
                    "Application {app} submitted by user : {user} to non-leaf queue : {}",
                    leaf.name
                ),
            ));
        }
        if leaf.rules_cold.state != CsState::Running {
            return Err(stopped(app, &leaf.name, leaf.rules_cold.state));
        }
        let Some(limits) = leaf.rules_cold.leaf.as_ref() else {
            return Err((
                RejectCode::QueueNotLeaf,
                format!("queue {} is not a leaf", leaf.name),
            ));
        };
        let apps = (leaf.runnable_apps.len() + leaf.non_runnable_apps.len()) as i64;
        if apps >= limits.max_applications {
            return Err((
                RejectCode::MaxApplications,
                format!(
                    "Queue {} already has {apps} applications, cannot accept submission of application: {app}",
                    leaf.name
                ),
            ));
        }
        let of_user = self
            .leaf_users(q)
            .get(user)
            .map_or(0, |u| (u.running_apps + u.pending_apps) as i64);
        if of_user >= limits.max_applications_per_user {
            return Err((
                RejectCode::MaxApplications,
                format!(
                    "Queue {} already has {of_user} applications from user {user} cannot accept submission of application: {app}",
                    leaf.name
                ),
            ));
        }
        let mut up = leaf.parent;
        while let Some(p) = up {
            let parent = self.queues.get(p);
            if parent.rules_cold.state != CsState::Running {
                return Err(stopped(app, &parent.name, parent.rules_cold.state));
            }
            up = parent.parent;
        }
        Ok(())
    }

    /// A newly accepted app starts pending; activation may let it (and others) in at once.
    pub(crate) fn cs_admit(&mut self, app: AppId) {
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        a.runnable = false;
        let leaf = a.queue;
        // Spec §7.6: submitted without a priority, an app takes its leaf's default, lowered to
        // the cluster's maximum (`Event::AppPriorityChanged` sets another).
        if let Some(l) = self.queues.get(leaf).rules_cold.leaf.as_ref() {
            let priority = l.default_priority.min(self.rules.max_priority);
            if let Some(a) = self.apps.get_mut(&app) {
                a.rules.priority = priority;
            }
        }
        self.queues.get_mut(leaf).non_runnable_apps.push(app);
        self.keep_joined(app);
        // Spec §7.2: over a `max-parallel-apps` limit it is held (activation skips it).
        self.admit_parallel(app);
        self.activate(leaf);
    }

    /// The app leaves its leaf's lists; pending apps may now be activated, and a draining leaf
    /// with no apps left stops (spec §1.2, §7.4).
    pub(crate) fn cs_leave(&mut self, app: AppId) {
        self.keep_left(app);
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        let (leaf, runnable) = (a.queue, a.runnable);
        // Only an active app's AM counts in the leaf's AM usage (`activate` charges it).
        let am = a.am_resource.filter(|_| a.am_running && runnable);
        let q = self.queues.get_mut(leaf);
        if let Some(am) = am {
            q.am_usage = q.am_usage.saturating_sub(am);
        }
        q.runnable_apps.retain(|x| *x != app);
        q.non_runnable_apps.retain(|x| *x != app);
        if runnable {
            let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
            for p in path {
                self.queues.get_mut(p).runnable_count -= 1;
            }
        }
        let released = self.leave_parallel(app);
        if let Some(a) = self.apps.get_mut(&app) {
            a.runnable = false;
            a.rules.held = false;
        }
        self.activate(leaf);
        for other in released {
            if other != leaf {
                self.activate(other);
            }
        }
        self.stop_drained(leaf);
    }

    /// Draining queues from `leaf` up whose subtree holds no app become STOPPED.
    pub(crate) fn stop_drained(&mut self, leaf: QueueId) {
        let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
        for q in path {
            // Only a draining queue can stop: the subtree is counted for those alone (root's
            // subtree is the whole tree, and every app that leaves passes here).
            if self.queues.get(q).rules_cold.state != CsState::Draining {
                continue;
            }
            let (running, pending) = self.subtree_counts(q);
            if running + pending == 0 {
                self.queues.get_mut(q).rules_cold.state = CsState::Stopped;
            }
        }
    }

    fn subtree_counts(&self, q: QueueId) -> (usize, usize) {
        let queue = self.queues.get(q);
        let mut counts = (queue.runnable_apps.len(), queue.non_runnable_apps.len());
        for c in &queue.children {
            let (r, p) = self.subtree_counts(*c);
            counts.0 += r;
            counts.1 += p;
        }
        counts
    }

    /// Activates the leaf's pending apps the AM limits allow (spec §7.3): in order of
    /// application priority (higher first) then id, each whose AM fits the queue's and its
    /// user's AM limit, skipping (not stopping at) those that do not; the first AM of a queue
    /// with no AM usage always goes in.
    pub(crate) fn activate(&mut self, leaf: QueueId) {
        self.note_pending(leaf);
        if self.cluster.is_zero() {
            // Hadoop waits for the next cluster update ("cluster resource is empty").
            return;
        }
        let calc = self.rules.calc;
        let mut pending: Vec<(i32, AppId)> = self
            .queues
            .get(leaf)
            .non_runnable_apps
            .iter()
            .filter_map(|id| self.apps.get(id))
            .filter(|a| !a.rules.held)
            .map(|a| (a.rules.priority, a.id))
            .collect();
        pending.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (_, id) in pending {
            let Some(a) = self.apps.get(&id) else {
                continue;
            };
            let check = self.am_check(leaf, a);
            let escape = self.queues.get(leaf).runnable_apps.is_empty() || check.queue_am.is_zero();
            if check.exceeded(calc).is_some() && !escape {
                continue;
            }
            // An app whose AM already runs (moved here, or recovered while pending) brings
            // its AM into the leaf's AM usage now; others are charged when their AM starts.
            let running_am = self
                .apps
                .get(&id)
                .and_then(|a| a.am_resource.filter(|_| a.am_running));
            let q = self.queues.get_mut(leaf);
            q.non_runnable_apps.retain(|x| *x != id);
            q.runnable_apps.push(id);
            if let Some(am) = running_am {
                q.am_usage = q.am_usage.saturating_add(am);
            }
            if let Some(a) = self.apps.get_mut(&id) {
                a.runnable = true;
            }
            let path: Vec<QueueId> = self.queues.path_to_root(leaf).collect();
            for p in path {
                self.queues.get_mut(p).runnable_count += 1;
            }
            self.refresh_app(id);
        }
        self.note_pending(leaf);
    }

    /// Why a pending app is not active (spec §7.3), as Hadoop's diagnostics put it
    /// (`CSAMContainerLaunchDiagnosticsConstants`, with `LeafQueue`'s details): the cluster
    /// is empty, its AM does not fit the queue's or its user's AM limit, or it is held by
    /// `max-parallel-apps`. Computed when asked, from the same figures activation uses.
    pub(crate) fn waiting_reason_of(&self, a: &AppOf<Capacity>) -> Option<String> {
        const INACTIVE: &str = "Application is added to the scheduler and is not yet activated.";
        if a.rules.held {
            return Some(format!(
                "{INACTIVE} Its queue or user is at its max-parallel-apps limit; it starts when a running application of theirs ends."
            ));
        }
        if self.cluster.is_zero() {
            return Some(format!(
                "{INACTIVE} Skipping AM assignment as cluster resource is empty."
            ));
        }
        let c = self.am_check(a.queue, a);
        // Fits now: activation runs at the next change (submission, end, node, refresh).
        let which = c.exceeded(self.rules.calc)?;
        Some(format!(
            "{INACTIVE} {which} Details : AM Partition = <DEFAULT_PARTITION>; AM Resource Request = {:?}; Queue Resource Limit for AM = {:?}; User AM Resource Limit of the queue = {:?}; Queue AM Resource Usage = {:?};",
            c.am, c.am_limit, c.user_am_limit, c.queue_am
        ))
    }

    /// The figures activation judges an app's AM by (spec §7.3).
    fn am_check(&self, leaf: QueueId, a: &AppOf<Capacity>) -> AmCheck {
        let queue_am = self
            .queues
            .get(leaf)
            .runnable_apps
            .iter()
            .filter_map(|x| self.apps.get(x))
            .map(|x| x.am_resource.unwrap_or(Resource::ZERO))
            .fold(Resource::ZERO, Resource::saturating_add);
        let (am_limit, user_am_limit) = self.am_limits(leaf, &a.user);
        let user_am = self
            .leaf_users(leaf)
            .get(a.user.as_str())
            .map_or(Resource::ZERO, |u| u.am_used);
        AmCheck {
            am: a.am_resource.unwrap_or(Resource::ZERO),
            queue_am,
            am_limit,
            user_am,
            user_am_limit,
        }
    }

    /// Keeps `Capacity::pending_leaves` after the leaf's pending list changed.
    fn note_pending(&mut self, leaf: QueueId) {
        if self.queues.get(leaf).non_runnable_apps.is_empty() {
            self.rules.pending_leaves.remove(&leaf);
        } else {
            self.rules.pending_leaves.insert(leaf);
        }
    }

    /// Re-runs activation in every leaf with pending apps, in id order (the cluster or the
    /// configuration changed; a leaf without pending apps has nothing to activate).
    pub(crate) fn activate_all(&mut self) {
        if self.rules.pending_leaves.is_empty() {
            return;
        }
        let leaves: Vec<QueueId> = self.rules.pending_leaves.iter().copied().collect();
        for leaf in leaves {
            self.activate(leaf);
        }
    }
}

/// `Queue <path> is STOPPED. Cannot accept submission of application: <appId>` (the same
/// words for a draining queue, as Hadoop's).
fn stopped(app: AppId, queue: &str, state: CsState) -> (RejectCode, String) {
    (
        RejectCode::QueueStopped,
        format!(
            "Queue {queue} is STOPPED. Cannot accept submission of application: {app} (its state is {})",
            state.name()
        ),
    )
}

/// An app's AM against its leaf's and its user's AM limits.
struct AmCheck {
    am: Resource,
    queue_am: Resource,
    am_limit: Resource,
    user_am: Resource,
    user_am_limit: Resource,
}

impl AmCheck {
    /// Which limit the AM would exceed, in Hadoop's diagnostics words (`None`: it fits).
    fn exceeded(&self, calc: super::calc::Calc) -> Option<&'static str> {
        if !calc.fits(&self.am.saturating_add(self.queue_am), &self.am_limit) {
            Some("Queue's AM resource limit exceeded.")
        } else if !calc.fits(&self.am.saturating_add(self.user_am), &self.user_am_limit) {
            Some("User's AM resource limit exceeded.")
        } else {
            None
        }
    }
}

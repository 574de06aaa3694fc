//! Application and attempt lifecycles: new ids, submission, kill, move, AM launch, attempt
//! failure and retry, final states; and their store records.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use weft_sched::{Event, Placement, QueueAccess, RejectCode, SchedError};
use weft_store::{
    AppState, ApplicationRecord, AttemptRecord, AttemptState, FinalStatus, ResourceRecord, Write,
};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{AppId, Resource, Time};

use crate::core::{App, Attempt, ContainerState, RmCore};
use crate::model::*;
use crate::node_table::NodeKey;
use crate::RmError;

/// A token only the RM (holding `secret`) can compute for `attempt`. The core has no RNG, so the
/// driver's entropy comes in as the secret; SipHash keyed by it makes tokens unguessable
/// without it. The tokens are persisted, so the hash's exact algorithm need not be stable.
pub(crate) fn derive_token(secret: u128, attempt: &AttemptId) -> String {
    let half = |domain: u8| {
        #[allow(deprecated)]
        let mut h = std::hash::SipHasher::new_with_keys(secret as u64, (secret >> 64) as u64);
        domain.hash(&mut h);
        attempt.to_string().hash(&mut h);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

pub(crate) fn resource_record(r: Resource) -> ResourceRecord {
    ResourceRecord {
        memory_mb: r.memory_mb().max(0) as u64,
        vcores: r.vcores().clamp(0, u32::MAX as i64) as u32,
    }
}

/// Application ids reserved in the store at a time: a new id writes only when it crosses the
/// stored ceiling. A durable commit per `new-application` was one of ~3 per app at seed 003's
/// churn (~100 apps a second, stop 36); a restart now skips up to this many ids instead.
pub(crate) const APP_ID_BLOCK: u64 = 1024;

impl RmCore {
    /// Reserves a new application id (REST `new-application`). Nothing exists until it is
    /// submitted, but the store holds a ceiling above every id handed out (raised a block at
    /// a time), so no id is ever handed out again after a restart (the cluster timestamp
    /// stays the same; the ids continue from the ceiling).
    pub fn new_application(&mut self, _now: Time) -> ApplicationId {
        let id = ApplicationId {
            cluster_ts: self.cluster_ts,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        if self.next_seq > self.app_id_ceiling {
            self.app_id_ceiling = self.next_seq.saturating_add(APP_ID_BLOCK - 1);
            self.persist_meta();
        }
        id
    }

    /// Submits an application under an id from [`RmCore::new_application`]. A submission that
    /// is invalid in itself (no user, no command, an AM above the maximum) is an error and
    /// records nothing. One the scheduler refuses (placement rules, queue ACLs) is accepted and
    /// ends FAILED at once with the scheduler's reason, as Hadoop's Fair Scheduler rejects an
    /// application after submission (`APP_REJECTED`).
    pub fn submit(&mut self, now: Time, id: ApplicationId, sub: Submission) -> Result<(), RmError> {
        if id.cluster_ts != self.cluster_ts || id.seq == 0 || id.seq >= self.next_seq {
            return Err(RmError::NotIssued(id.to_string()));
        }
        if self.apps.contains_key(&id) {
            return Err(RmError::AlreadySubmitted(id.to_string()));
        }
        if sub.unmanaged_am {
            return Err(RmError::Unsupported("unmanaged AMs".to_string()));
        }
        crate::limits::check_submission(&sub)?;
        if sub.user.is_empty() {
            return Err(RmError::InvalidRequest(
                "the submission names no user".into(),
            ));
        }
        if sub.launch.commands.iter().all(|c| c.trim().is_empty()) {
            return Err(RmError::InvalidRequest(
                "the AM container spec has no command".into(),
            ));
        }
        self.check_size("AM container", sub.am_resource)?;
        let max_attempts = match sub.max_attempts {
            0 => self.config.max_attempts,
            n => n.min(self.config.max_attempts),
        };
        // An app with a demand has its AM asked at the demand's time (`demands::am_gate`).
        let am_now = sub.demand.is_none().then_some(sub.am_resource);
        let mut placement = match &sub.reservation_id {
            // Hadoop's `resolveReservationQueueName`: into the reservation's queue, refused
            // while the reservation is not active.
            Some(reservation) => self.sched.submit_with_reservation(
                now,
                AppId(id.seq),
                sub.user.clone(),
                sub.queue.clone(),
                am_now,
                reservation,
            )?,
            None => self.sched.submit(
                now,
                AppId(id.seq),
                sub.user.clone(),
                sub.queue.clone(),
                am_now,
            )?,
        };
        self.drain(now);
        // `weft.reservation.accept-early-submission`: a reservation that exists but starts
        // later holds the app in its plan's default leaf instead (`early_submission`).
        let mut early = None;
        if let Placement::Rejected {
            code: RejectCode::ReservationNotActive,
            ..
        } = &placement
        {
            let waits_for = sub
                .reservation_id
                .as_deref()
                .and_then(|r| self.early_reservation(now, r));
            if let Some(reservation) = waits_for {
                // The rejection left nothing behind in the scheduler.
                placement = self.sched.submit(
                    now,
                    AppId(id.seq),
                    sub.user.clone(),
                    sub.queue.clone(),
                    None,
                )?;
                self.drain(now);
                early = Some(reservation);
            }
        }
        let queue = match placement {
            Placement::Accepted { queue } => queue,
            Placement::Rejected { reason, code } => {
                self.record_rejected(now, id, sub, max_attempts, &reason, code);
                return Ok(());
            }
        };
        self.tell_priority(now, AppId(id.seq), sub.priority)?;
        let mut app = App {
            id,
            sub,
            queue,
            state: AppState::Accepted,
            final_status: FinalStatus::Undefined,
            diagnostics: String::new(),
            submit_time: now,
            launch_time: None,
            finish_time: None,
            max_attempts,
            attempts: Vec::new(),
            progress: 0.0,
            in_sched: true,
            nodes_used: Default::default(),
            ended_usage: Default::default(),
            ended: Default::default(),
        };
        let attempt = self.make_attempt(now, &app);
        app.attempts.push(attempt);
        let writes = vec![
            Write::PutApp(app_record(&app)),
            Write::PutAttempt(attempt_record(&app, app.attempts.len() - 1)),
        ];
        self.apps.insert(id, app);
        self.persist(writes);
        if let Some(reservation) = early {
            self.hold_for_reservation(now, id, reservation, false);
        }
        self.admit_app_demands(now, id)
    }

    /// Records an application the scheduler refused: FAILED, with the reason, no attempt.
    fn record_rejected(
        &mut self,
        now: Time,
        id: ApplicationId,
        sub: Submission,
        max_attempts: u32,
        reason: &str,
        code: RejectCode,
    ) {
        let queue = sub.queue.clone().unwrap_or_default();
        let app = App {
            id,
            sub,
            queue,
            state: AppState::Failed,
            final_status: FinalStatus::Failed,
            // The scheduler names the app by its own id; the user knows the YARN one.
            diagnostics: format!(
                "Application {id} was rejected by the scheduler ({code}): {}",
                reason.replace(&AppId(id.seq).to_string(), &id.to_string())
            ),
            submit_time: now,
            launch_time: None,
            finish_time: Some(now),
            max_attempts,
            attempts: Vec::new(),
            progress: 0.0,
            in_sched: false,
            nodes_used: Default::default(),
            ended_usage: Default::default(),
            ended: Default::default(),
        };
        let writes = vec![Write::PutApp(app_record(&app))];
        self.apps.insert(id, app);
        self.persist(writes);
        // A refused app is a completed one: it counts against the retention limits.
        self.app_completed(id);
    }

    /// Refuses sizes that are not positive or above the maximum allocation.
    pub(crate) fn check_size(&self, what: &str, r: Resource) -> Result<(), RmError> {
        if r.memory_mb() <= 0 || r.vcores() <= 0 {
            return Err(RmError::InvalidRequest(format!(
                "{what} must have positive memory and vcores, got {}",
                show(r)
            )));
        }
        let max = self.maximum_allocation();
        if r.memory_mb() > max.memory_mb() || r.vcores() > max.vcores() {
            return Err(RmError::AboveMaximum {
                what: what.to_string(),
                asked: show(r),
                max: show(max),
            });
        }
        Ok(())
    }

    pub(crate) fn make_attempt(&self, now: Time, app: &App) -> Attempt {
        let id = AttemptId {
            app: app.id,
            attempt: app.attempts.len() as u32 + 1,
        };
        Attempt {
            id,
            token: derive_token(self.config.token_secret, &id),
            state: AttemptState::Scheduled,
            final_status: FinalStatus::Undefined,
            am_container: None,
            am_node: None,
            am_exit: None,
            am_rpc: None,
            tracking_url: None,
            next_n: 1,
            last_contact: now,
            start_time: now,
            finish_time: None,
            diagnostics: String::new(),
            new_containers: Default::default(),
            completed: Default::default(),
            asked: Default::default(),
            blacklist: BTreeSet::new(),
            nodes_seen: self.node_changes.len(),
            nm_tokens_sent: Default::default(),
            gangs: Default::default(),
            preempted: Default::default(),
        }
    }

    /// Kills an application as `user` (`None` = administrator). Killing a finished app is a
    /// no-op. Returns the app's state afterwards.
    pub fn kill(
        &mut self,
        now: Time,
        id: ApplicationId,
        user: Option<&str>,
    ) -> Result<AppState, RmError> {
        let app = self
            .apps
            .get(&id)
            .ok_or_else(|| RmError::UnknownApp(id.to_string()))?;
        if app.state.is_final() {
            return Ok(app.state);
        }
        // The scheduler ends the app's containers (it may refuse the kill first); they are
        // reported as YARN reports a kill by the ResourceManager.
        let result = self.sched.handle(
            now,
            Event::AppKilled {
                app: AppId(id.seq),
                user: user.map(str::to_string),
            },
        );
        if let Err(e) = result {
            return Err(match e {
                SchedError::KillRefused { .. } => RmError::Forbidden(with_full_id(&e, id)),
                e => RmError::Scheduler(e),
            });
        }
        let who = user.unwrap_or("an administrator");
        self.finish_app(
            now,
            id,
            AppState::Killed,
            FinalStatus::Killed,
            format!("Application killed by user {who}"),
            false,
        );
        Ok(AppState::Killed)
    }

    /// Moves a live application to another leaf queue as `caller` (`None` = the RM itself);
    /// returns the new queue's full name. As Hadoop's `moveApplicationAcrossQueues`: the caller
    /// must be allowed to modify the app (its owner, an administrator of its queue, or a
    /// cluster administrator) and the owner must be allowed to submit to the target queue.
    pub fn move_app(
        &mut self,
        now: Time,
        id: ApplicationId,
        queue: &str,
        caller: Option<&str>,
    ) -> Result<String, RmError> {
        let app = self
            .apps
            .get(&id)
            .ok_or_else(|| RmError::UnknownApp(id.to_string()))?;
        if app.state.is_final() {
            return Err(RmError::FinalState {
                app: id.to_string(),
                state: format!("{:?}", app.state).to_uppercase(),
            });
        }
        let owner = app.sub.user.clone();
        if let Some(user) = caller {
            let may_modify = user == owner
                || self.is_admin(user)
                || self
                    .sched
                    .queue_access(&app.queue, user, QueueAccess::Administer)
                    == Some(true);
            if !may_modify {
                return Err(RmError::Forbidden(format!(
                    "user {user} cannot move application {id}: not its owner ({owner}), not allowed by aclAdministerApps of queue {} or its parents, and not in yarn.admin.acl",
                    app.queue
                )));
            }
        }
        if self.sched.queue_access(queue, &owner, QueueAccess::Submit) == Some(false) {
            return Err(RmError::Forbidden(format!(
                "cannot move application {id} to queue {queue}: its owner {owner} may not submit applications there (aclSubmitApps or aclAdministerApps of the queue or its parents)"
            )));
        }
        let seq = AppId(id.seq);
        self.sched
            .handle(
                now,
                Event::Move {
                    app: seq,
                    queue: queue.to_string(),
                },
            )
            .map_err(|e| match e {
                SchedError::MoveRefused { .. } => RmError::MoveRefused(with_full_id(&e, id)),
                e => RmError::Scheduler(e),
            })?;
        self.drain(now);
        let name = self.sched.queue_name(seq).unwrap_or(queue).to_string();
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(RmError::UnknownApp(id.to_string()));
        };
        app.queue = name.clone();
        let record = app_record(app);
        self.persist(vec![Write::PutApp(record)]);
        Ok(name)
    }

    /// Hands a submitted priority to the scheduler (only the Capacity Scheduler orders by it).
    /// Zero is also what a submission without one carries, so it is not sent: the leaf's
    /// `default-application-priority` stays in force.
    pub(crate) fn tell_priority(
        &mut self,
        now: Time,
        app: AppId,
        priority: i32,
    ) -> Result<(), RmError> {
        if priority == 0 {
            return Ok(());
        }
        self.sched
            .handle(now, Event::AppPriorityChanged { app, priority })?;
        self.drain(now);
        Ok(())
    }

    /// Changes a running application's priority (Hadoop's `updateApplicationPriority`): the
    /// caller must own it, administer its queue or be a cluster administrator (`None` is the
    /// RM itself). The priority is capped at `yarn.cluster.max-application-priority`; returns
    /// the priority in force. Only the Capacity Scheduler orders by priority, so the others
    /// refuse the change.
    pub fn update_priority(
        &mut self,
        now: Time,
        id: ApplicationId,
        priority: i32,
        caller: Option<&str>,
    ) -> Result<i32, RmError> {
        let app = self
            .apps
            .get(&id)
            .ok_or_else(|| RmError::UnknownApp(id.to_string()))?;
        if app.state.is_final() {
            return Err(RmError::FinalState {
                app: id.to_string(),
                state: format!("{:?}", app.state).to_uppercase(),
            });
        }
        let kind = self.sched.kind();
        if kind != weft_sched::SchedulerKind::Capacity {
            return Err(RmError::Unsupported(format!(
                "changing an application's priority under the {} scheduler (only the Capacity Scheduler orders applications by priority)",
                kind.short_name()
            )));
        }
        let owner = app.sub.user.clone();
        if let Some(user) = caller {
            let may_modify = user == owner
                || self.is_admin(user)
                || self
                    .sched
                    .queue_access(&app.queue, user, QueueAccess::Administer)
                    == Some(true);
            if !may_modify {
                return Err(RmError::Forbidden(format!(
                    "user {user} cannot change the priority of application {id}: not its owner ({owner}), not allowed by acl_administer_queue of queue {} or its parents, and not in yarn.admin.acl",
                    app.queue
                )));
            }
        }
        let capped = priority.min(self.config.scheduler.properties().max_application_priority);
        self.sched.handle(
            now,
            Event::AppPriorityChanged {
                app: AppId(id.seq),
                priority: capped,
            },
        )?;
        self.drain(now);
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(RmError::UnknownApp(id.to_string()));
        };
        app.sub.priority = capped;
        let record = app_record(app);
        self.persist(vec![Write::PutApp(record)]);
        Ok(capped)
    }

    /// Ends every container of app `id` here, with YARN's `status` and `diagnostics`, but
    /// `lingering` (the finished AM left to exit by itself, which ends as SUCCESS): the
    /// scheduler frees each as it ends, so a removal that follows finds none.
    ///
    /// The nodes' next heartbeat replies stop them (`containers_to_cleanup`, with the app in
    /// `applications_to_cleanup`), as YARN's RM does for an app's task containers; only a
    /// live AM container is also stopped through its NM at once (YARN's AMLauncher
    /// cleanup). One StopContainers call per node the app ran on made an end-of-run storm of
    /// 10,000 finishing apps cost more than the finishes themselves.
    fn end_app_containers(
        &mut self,
        now: Time,
        id: ApplicationId,
        status: i32,
        diagnostics: &str,
        lingering: Option<ContainerId>,
    ) {
        let ids: Vec<(ContainerId, NodeKey)> = self
            .containers
            .of_app(id)
            .map(|(c, container)| (c, container.node))
            .collect();
        if let Some(app) = self.apps.get_mut(&id) {
            app.ended.expect(ids.len());
        }
        for (c, node) in ids {
            if Some(c) == lingering {
                self.container_done(now, c, exit::SUCCESS, String::new(), false);
            } else if self.containers.contains_key(&c) {
                let am = self.is_am_container(c);
                self.container_done(now, c, status, diagnostics.to_string(), false);
                self.stop_on_node(node, c, am);
            }
        }
    }

    /// The AM container of the current attempt was allocated: launch it.
    pub(crate) fn am_allocated(
        &mut self,
        now: Time,
        id: ContainerId,
        node_key: NodeKey,
        resource: Resource,
    ) {
        let scheduler_address = self.config.scheduler_address.clone();
        let node_address = self.address_of(node_key);
        let node = self.nodes.id_of(node_key).to_string();
        let Some(app) = self.apps.get_mut(&id.app) else {
            return;
        };
        let max_attempts = app.max_attempts;
        let submit_time = app.submit_time;
        let user = app.sub.user.clone();
        let mut launch = app.sub.launch.clone();
        if app.launch_time.is_none() {
            app.launch_time = Some(now);
        }
        let Some(attempt) = app.attempts.last_mut() else {
            return;
        };
        attempt.am_container = Some(id);
        attempt.am_node = Some(node.clone());
        attempt.state = AttemptState::Launched;
        attempt.last_contact = now;
        let env = &mut launch.environment;
        env.insert("WEFT_AM_TOKEN".into(), attempt.token.clone());
        env.insert("APPLICATION_ATTEMPT_ID".into(), attempt.id.to_string());
        env.insert("CONTAINER_ID".into(), id.to_string());
        env.insert("APPLICATION_ID".into(), id.app.to_string());
        env.insert("WEFT_RM_SCHEDULER_ADDRESS".into(), scheduler_address);
        env.insert("MAX_APP_ATTEMPTS".into(), max_attempts.to_string());
        env.insert(
            "APP_SUBMIT_TIME_ENV".into(),
            submit_time.as_millis().to_string(),
        );
        // Hadoop's AMLauncher gives every AM the web proxy's path for its app (ProxyUriUtils);
        // Spark's AM builds its UI filter's redirect from it and warns without it.
        env.insert(
            "APPLICATION_WEB_PROXY_BASE".into(),
            format!("/proxy/{}", id.app),
        );
        let attempt_id = attempt.id;
        if let Some(c) = self.containers.get_mut(&id) {
            c.state = ContainerState::Acquired;
        }
        let record = attempt_record(app, app.attempts.len() - 1);
        self.persist(vec![Write::PutAttempt(record)]);
        let container_token = self.container_token(now, id, &node, &user, resource);
        let nm_token = self.nm_token(attempt_id, &node, &user).token;
        self.outputs.push_back(Output::LaunchAm(Box::new(AmLaunch {
            node_id: node,
            node_address,
            container: id,
            attempt: attempt_id,
            user,
            resource,
            launch,
            container_token,
            nm_token,
        })));
    }

    /// The driver could not start an AM container: the attempt fails (and is retried).
    pub fn am_launch_failed(&mut self, now: Time, container: ContainerId, diagnostics: &str) {
        self.container_done(
            now,
            container,
            exit::ABORTED,
            format!("AM container launch failed: {diagnostics}"),
            true,
        );
        self.drain(now);
    }

    /// The current attempt of `id` failed: retry with a new attempt, or fail the app.
    pub(crate) fn attempt_failed(&mut self, now: Time, id: ApplicationId, diag: String) {
        let Some(app) = self.apps.get_mut(&id) else {
            return;
        };
        let Some(attempt) = app.attempts.last_mut() else {
            return;
        };
        if attempt.state.is_final() {
            return;
        }
        attempt.state = AttemptState::Failed;
        attempt.final_status = FinalStatus::Failed;
        attempt.finish_time = Some(now);
        attempt.diagnostics = diag.clone();
        let am = attempt.am_container;
        let attempt_id = attempt.id;
        let failures = app.counted_failures();
        let max = app.max_attempts;
        let mut writes = vec![Write::PutAttempt(attempt_record(
            app,
            app.attempts.len() - 1,
        ))];
        if let Some(am) = am {
            self.container_done(now, am, exit::ABORTED, diag.clone(), true);
        }
        if failures >= max {
            self.persist(writes);
            let msg = format!(
                "Application {id} failed {failures} times (global limit {}; local limit {max}) due to: {diag}",
                self.config.max_attempts
            );
            self.finish_app(now, id, AppState::Failed, FinalStatus::Failed, msg, true);
            return;
        }
        // A new attempt: the scheduler releases the old one's containers and asks for the new
        // AM; the app keeps its queue, start time and place in the order.
        self.demands_attempt_lost(now, attempt_id);
        self.end_app_containers(
            now,
            id,
            exit::KILLED_BY_RESOURCEMANAGER,
            "Container of a failed attempt killed by the ResourceManager",
            None,
        );
        let seq = AppId(id.seq);
        let Some(am_resource) = self.apps.get(&id).map(|a| a.sub.am_resource) else {
            return;
        };
        let restarted = self.sched.handle(
            now,
            Event::AttemptRestarted {
                app: seq,
                am_resource: Some(am_resource),
            },
        );
        self.drain(now);
        match restarted {
            Ok(()) => {
                let Some(app) = self.apps.get(&id) else {
                    return;
                };
                let attempt = self.make_attempt(now, app);
                let Some(app) = self.apps.get_mut(&id) else {
                    return;
                };
                app.attempts.push(attempt);
                writes.push(Write::PutApp(app_record(app)));
                writes.push(Write::PutAttempt(attempt_record(
                    app,
                    app.attempts.len() - 1,
                )));
                self.persist(writes);
                self.demands_attempt_restarted(now, id);
            }
            Err(e) => {
                self.persist(writes);
                let msg = format!(
                    "Application {id} could not start attempt {} after {attempt_id} failed ({diag}): {}",
                    attempt_id.attempt + 1,
                    with_full_id(&e, id)
                );
                self.finish_app(now, id, AppState::Failed, FinalStatus::Failed, msg, true);
            }
        }
    }

    /// Moves an app to a final state: the scheduler drops it (`remove`), its containers end,
    /// its nodes clean up, and the records are persisted.
    pub(crate) fn finish_app(
        &mut self,
        now: Time,
        id: ApplicationId,
        state: AppState,
        final_status: FinalStatus,
        diagnostics: String,
        remove: bool,
    ) {
        let Some(app) = self.apps.get_mut(&id) else {
            return;
        };
        let newly_completed = !app.state.is_final();
        app.state = state;
        app.final_status = final_status;
        app.finish_time = Some(now);
        app.diagnostics = diagnostics.clone();
        if state == AppState::Finished {
            app.progress = 1.0;
        }
        let in_sched = std::mem::replace(&mut app.in_sched, false);
        let mut lingering = None;
        if let Some(attempt) = app.attempts.last_mut() {
            if !attempt.state.is_final() {
                attempt.state = match state {
                    AppState::Killed => AttemptState::Killed,
                    AppState::Finished => AttemptState::Finished,
                    _ => AttemptState::Failed,
                };
                attempt.finish_time = Some(now);
                if state == AppState::Finished {
                    attempt.final_status = final_status;
                    lingering = attempt.am_container;
                } else {
                    attempt.diagnostics = diagnostics;
                }
            }
        }
        let nodes: Vec<NodeKey> = app.nodes_used.iter().collect();
        let mut writes = vec![Write::PutApp(app_record(app))];
        if !app.attempts.is_empty() {
            writes.push(Write::PutAttempt(attempt_record(
                app,
                app.attempts.len() - 1,
            )));
        }
        // A finished AM is left to exit by itself; its node cleans up when it has, or after
        // the AM expiry.
        let mut am_node = None;
        if let Some(am) = lingering {
            if let Some(key) = self.containers.get(&am).map(|c| c.node) {
                am_node = Some(key);
                let counted = self.nodes.at_mut(key).is_some_and(|n| {
                    let running = n.containers.reported(&am) == Some(true);
                    n.lingering_running += u32::from(running);
                    running
                });
                let node = self.nodes.id_of(key).to_string();
                self.lingering_am
                    .insert(am, (node, now + self.config.am_expiry, counted));
            }
        }
        // What the scheduler already ended (a kill) is reported as it ended; the rest ends
        // here as a completed application's, before the scheduler lets the app go.
        self.drain(now);
        self.end_app_containers(
            now,
            id,
            exit::KILLED_AFTER_APP_COMPLETION,
            "Container killed on application completion",
            lingering,
        );
        if remove && in_sched {
            let _ = self
                .sched
                .handle(now, Event::AppFinished { app: AppId(id.seq) });
        }
        self.drain(now);
        for n in nodes {
            if Some(n) == am_node {
                continue;
            }
            if let Some(node) = self.nodes.at_mut(n) {
                node.to_cleanup.insert(id);
            }
        }
        self.persist(writes);
        self.demands_app_ended(now, id, state);
        if newly_completed {
            self.app_completed(id);
        }
    }

    /// The pending AM cleanup of a finished app happens now (its AM container ended or
    /// outstayed its welcome).
    pub(crate) fn end_lingering_am(&mut self, container: ContainerId, stop: bool) {
        if let Some((node, _, counted)) = self.lingering_am.remove(&container) {
            if let Some(n) = self.nodes.get_mut(&node) {
                if counted {
                    n.lingering_running = n.lingering_running.saturating_sub(1);
                }
                n.to_cleanup.insert(container.app);
                if stop {
                    n.to_stop.insert(container);
                    let address = n.address.clone();
                    let output = self.stop_output(&node, address, container);
                    self.outputs.push_back(output);
                }
            }
        }
    }
}

/// The store record of an application.
/// A scheduler refusal about `id`, worded with YARN's full application id
/// (`application_<ts>_0003`) instead of the scheduler's internal short one: users and REST
/// clients only ever see the full id.
fn with_full_id(e: &SchedError, id: ApplicationId) -> String {
    match e {
        SchedError::MoveRefused { queue, reason, .. } => {
            format!("cannot move {id} to {queue}: {reason}")
        }
        SchedError::KillRefused { user, reason, .. } => {
            format!("{user} may not kill {id}: {reason}")
        }
        other => other
            .to_string()
            .replace(&AppId(id.seq).to_string(), &id.to_string()),
    }
}

pub(crate) fn app_record(app: &App) -> ApplicationRecord {
    ApplicationRecord {
        app_id: app.id.seq,
        cluster_timestamp: app.id.cluster_ts,
        name: app.sub.name.clone(),
        user: app.sub.user.clone(),
        requested_queue: app.sub.queue.clone().unwrap_or_default(),
        queue: app.queue.clone(),
        application_type: app.sub.application_type.clone(),
        priority: app.sub.priority,
        max_attempts: app.max_attempts,
        submit_time_ms: app.submit_time.as_millis(),
        start_time_ms: app.submit_time.as_millis(),
        finish_time_ms: app.finish_time.map(Time::as_millis),
        am_launch: app.sub.launch.clone(),
        am_resource: resource_record(app.sub.am_resource),
        state: app.state,
        final_status: app.final_status,
        diagnostics: app.diagnostics.clone(),
        tags: app.sub.tags.clone(),
        memory_mb_ms: app.ended_usage.memory_mb_ms,
        vcore_ms: app.ended_usage.vcore_ms,
        reservation_id: app.sub.reservation_id.clone(),
        weft_demand: app.sub.demand.as_ref().map(ToString::to_string),
    }
}

/// The store record of attempt `index` of `app`.
pub(crate) fn attempt_record(app: &App, index: usize) -> AttemptRecord {
    let a = &app.attempts[index];
    let mut record = AttemptRecord {
        app_id: app.id.seq,
        attempt: a.id.attempt,
        am_container_id: a.am_container.map(|c| c.to_string()),
        am_node_id: a.am_node.clone(),
        state: a.state,
        final_status: a.final_status,
        diagnostics: a.diagnostics.clone(),
        start_time_ms: a.start_time.as_millis(),
        finish_time_ms: a.finish_time.map(Time::as_millis),
        am_exit_status: a.am_exit,
        am_token: a.token.clone(),
        tracking_url: a.tracking_url.clone(),
        preempted_memory_mb: 0,
        preempted_vcores: 0,
        preempted_am_containers: 0,
        preempted_non_am_containers: 0,
        preempted_memory_mb_ms: 0,
        preempted_vcore_ms: 0,
        // An ended attempt is owed nothing: the next one asks for itself.
        gangs: if a.state.is_final() {
            Vec::new()
        } else {
            a.gangs.values().map(crate::am_gangs::gang_record).collect()
        },
    };
    a.preempted.fill_record(&mut record);
    record
}

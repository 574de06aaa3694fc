//! Rebuilding the RM from the store after a restart (work-preserving: running AMs re-register
//! with their persisted tokens, NMs re-register with their running containers).

use std::collections::BTreeSet;

use weft_sched::Placement;
use weft_store::{AppState, AttemptRecord, AttemptState, FinalStatus, RecoveredState, Write};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{AppId, Resource, Time};

use crate::apps::{app_record, attempt_record};
use crate::core::{App, Attempt, RmConfig, RmCore, UsageMs, EPOCH_STRIDE};
use crate::model::Submission;
use crate::RmError;

impl RmCore {
    /// Rebuilds an RM from what the store holds. With no stored counters this is a first start
    /// with `first_start_ts` as the cluster timestamp. Otherwise the epoch goes up by one, live
    /// applications go back to the scheduler in their queues, and their current attempts wait
    /// (AM expiry from `now`) for their AMs to re-register. Emits a `Persist` of the counters
    /// (and of any app that could not be placed again, now FAILED).
    pub fn recover(
        config: RmConfig,
        state: RecoveredState,
        first_start_ts: u64,
        now: Time,
    ) -> Result<RmCore, RmError> {
        let Some(meta) = state.meta else {
            return Ok(RmCore::new(config, first_start_ts, now));
        };
        let epoch = meta.epoch + 1;
        let mut core = RmCore::empty(config, meta.cluster_timestamp, epoch, now);
        core.restore_node_labels(now, &state.node_labels)?;
        core.restore_reservations(&state.reservations, state.next_reservation_seq)?;
        core.reservations.replan_after = now + crate::plan_follower::RECOVERY_REPLAN_WAIT;
        // The reservations' queues exist before their apps come back into them.
        core.follow_plans(now);
        core.next_seq = meta.next_app_seq.max(1);
        for rec in state.apps {
            let id = ApplicationId {
                cluster_ts: rec.app.cluster_timestamp,
                seq: rec.app.app_id,
            };
            core.next_seq = core.next_seq.max(id.seq + 1);
            let r = &rec.app;
            let sub = Submission {
                name: r.name.clone(),
                user: r.user.clone(),
                queue: (!r.requested_queue.is_empty()).then(|| r.requested_queue.clone()),
                application_type: r.application_type.clone(),
                tags: r.tags.clone(),
                priority: r.priority,
                max_attempts: r.max_attempts,
                am_resource: Resource::new(
                    r.am_resource.memory_mb as i64,
                    r.am_resource.vcores as i64,
                ),
                unmanaged_am: false,
                launch: r.am_launch.clone(),
                reservation_id: r.reservation_id.clone(),
                demand: r
                    .weft_demand
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text).ok()),
            };
            let mut app = App {
                id,
                sub,
                queue: r.queue.clone(),
                state: r.state,
                final_status: r.final_status,
                diagnostics: r.diagnostics.clone(),
                submit_time: Time(r.submit_time_ms),
                launch_time: None,
                finish_time: r.finish_time_ms.map(Time),
                max_attempts: r.max_attempts.max(1),
                attempts: Vec::new(),
                progress: if r.state == AppState::Finished {
                    1.0
                } else {
                    0.0
                },
                in_sched: false,
                nodes_used: Default::default(),
                ended_usage: UsageMs {
                    memory_mb_ms: r.memory_mb_ms,
                    vcore_ms: r.vcore_ms,
                },
                ended: Default::default(),
            };
            for a in &rec.attempts {
                app.attempts.push(attempt_from(id, a, epoch, now)?);
            }
            let live = !app.state.is_final();
            core.apps.insert(id, app);
            if live {
                core.resume(now, id);
            }
        }
        // A recovered gang waits for its nodes at most as long as a node may stay silent
        // before it is lost.
        core.gang_reask.until =
            Some(now + core.config.nm_expiry.max(core.config.am_recovery_grace));
        core.restore_demands(now, &state.demands)?;
        core.ask_recovered_gangs(now);
        core.ask_due_ams(now);
        // No id is handed out yet: the next one raises the ceiling by a block.
        core.app_id_ceiling = core.next_seq;
        core.persist_meta();
        core.retain_recovered();
        Ok(core)
    }

    /// A recovered app of a reservation goes back into the reservation's queue while it is
    /// active, and into its plan's default queue once it is not (Hadoop's failover rule with
    /// move-on-expiry, the default).
    fn resume_into_reservation(
        &mut self,
        now: Time,
        id: ApplicationId,
        user: String,
        reservation: &str,
        am_resource: Option<Resource>,
    ) -> Result<Placement, weft_sched::SchedError> {
        let requested = self.apps.get(&id).and_then(|a| a.sub.queue.clone());
        let placed = self.sched.submit_with_reservation(
            now,
            AppId(id.seq),
            user.clone(),
            requested.clone(),
            am_resource,
            reservation,
        )?;
        match placed {
            Placement::Rejected {
                code: weft_sched::RejectCode::ReservationNotActive,
                ..
            } => {
                // The rejection left nothing behind in the scheduler.
                self.drain(now);
                self.sched
                    .submit(now, AppId(id.seq), user, requested, am_resource)
            }
            other => Ok(other),
        }
    }

    /// Puts a live recovered application back into the scheduler.
    fn resume(&mut self, now: Time, id: ApplicationId) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let current_live = app.current().filter(|t| !t.state.is_final());
        // An attempt whose AM container exists keeps it (the AM may still run); otherwise the
        // scheduler allocates a new AM container.
        let am_running = current_live.is_some_and(|t| t.am_container.is_some());
        let needs_attempt = current_live.is_none();
        // An AM held for its demand's time is held again (`demands::am_gate`); asked at once
        // if that time has passed.
        let gate = match &app.sub.demand {
            Some(demand) if !am_running => crate::demands::gating_demand_key(id, demand),
            _ => None,
        };
        // An app held for its reservation's start is held again (`early_submission`).
        let early = app
            .sub
            .reservation_id
            .as_deref()
            .and_then(|r| self.early_reservation(now, r));
        let am_resource =
            (!am_running && gate.is_none() && early.is_none()).then_some(app.sub.am_resource);
        if let Some(key) = gate {
            self.demands.am_gates.insert(id, key);
        }
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        if let Some(t) = current_live {
            if let Some(am) = t.am_container {
                let node = t.am_node.clone().unwrap_or_default();
                let deadline = now + self.config.am_recovery_grace;
                self.unconfirmed_am.insert(id, (am, node, deadline));
            }
        }
        let (user, queue) = (app.sub.user.clone(), app.queue.clone());
        let priority = app.sub.priority;
        let placement = match app.sub.reservation_id.clone() {
            Some(reservation) => {
                self.resume_into_reservation(now, id, user, &reservation, am_resource)
            }
            None => self
                .sched
                .submit(now, AppId(id.seq), user, Some(queue), am_resource),
        };
        self.drain(now);
        let reason = match placement {
            Ok(Placement::Accepted { queue }) => {
                // Only an unknown app is refused, and this one was just accepted.
                let _ = self.tell_priority(now, AppId(id.seq), priority);
                let attempt =
                    needs_attempt.then(|| self.apps.get(&id).map(|a| self.make_attempt(now, a)));
                let Some(app) = self.apps.get_mut(&id) else {
                    return;
                };
                app.queue = queue;
                app.in_sched = true;
                if let Some(Some(a)) = attempt {
                    app.attempts.push(a);
                    let writes = vec![
                        Write::PutApp(app_record(app)),
                        Write::PutAttempt(attempt_record(app, app.attempts.len() - 1)),
                    ];
                    self.persist(writes);
                }
                if let Some(reservation) = early {
                    self.hold_for_reservation(now, id, reservation, am_running);
                }
                return;
            }
            Ok(Placement::Rejected { reason, code }) => format!("{reason} ({code})"),
            Err(e) => e.to_string(),
        };
        self.finish_app(
            now,
            id,
            AppState::Failed,
            FinalStatus::Failed,
            format!("application {id} could not be recovered: {reason}"),
            false,
        );
    }
}

fn attempt_from(
    app: ApplicationId,
    r: &AttemptRecord,
    epoch: u64,
    now: Time,
) -> Result<Attempt, RmError> {
    let am_container = match &r.am_container_id {
        Some(s) => Some(
            s.parse::<ContainerId>()
                .map_err(|e| RmError::Corrupt(format!("attempt {} of {app}: {e}", r.attempt)))?,
        ),
        None => None,
    };
    Ok(Attempt {
        id: AttemptId {
            app,
            attempt: r.attempt,
        },
        token: r.am_token.clone(),
        // An AM registered with the RM before the restart registers again (Hadoop's AMs
        // resync: ApplicationMasterNotRegisteredException), whether or not its record was
        // written after it registered, and then resends what the RM lost.
        state: if r.state == AttemptState::Running {
            AttemptState::Launched
        } else {
            r.state
        },
        final_status: r.final_status,
        am_container,
        am_node: r.am_node_id.clone(),
        am_exit: r.am_exit_status,
        am_rpc: None,
        tracking_url: r.tracking_url.clone(),
        next_n: epoch * EPOCH_STRIDE + 1,
        last_contact: now,
        start_time: Time(r.start_time_ms),
        finish_time: r.finish_time_ms.map(Time),
        diagnostics: r.diagnostics.clone(),
        new_containers: Default::default(),
        completed: Default::default(),
        asked: Default::default(),
        blacklist: BTreeSet::new(),
        nodes_seen: 0,
        nm_tokens_sent: Default::default(),
        preempted: crate::preemption::PreemptedTally::from_record(r),
        gangs: r
            .gangs
            .iter()
            .map(|g| {
                crate::am_gangs::gang_from_record(g)
                    .map(|ask| (ask.gang, ask))
                    .map_err(|why| {
                        RmError::Corrupt(format!("attempt {} of {app}: {why}", r.attempt))
                    })
            })
            .collect::<Result<_, _>>()?,
    })
}

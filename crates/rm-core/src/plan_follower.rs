//! rm-core's half of Hadoop's plan follower (`AbstractSchedulerPlanFollower.synchronizePlan`,
//! time-aware-demands spec §2.1): once per plan step, each plan takes the queue's current
//! share as its capacity, the replanner drops reservations (newest first) where that capacity
//! no longer covers them, and reservations that ended a policy window ago are archived; every
//! drop is persisted, and a demand whose reservation the replanner dropped is failed or planned
//! again (`demands::planning`). The scheduler's half (the reservation leaves and their sizes) is
//! `weft_sched`'s follower, told each plan's reservations with `Event::PlanChanged` whenever
//! they change: the scheduler does not depend on the planner, so the event carries plain data
//! (each reservation's skyline as steps), and the scheduler runs at their change points itself.

use weft_sched::{Event, PlanReservations, PlannedReservation};
use weft_store::{AppState, FinalStatus, Write};
use weft_types::yarn_id::ApplicationId;
use weft_types::{AppId, Duration, Time};

use crate::apps::app_record;

/// Hadoop's `yarn.resourcemanager.reservation-system.planfollower.time-step` default: the
/// plans' periodic work runs this often.
pub(crate) const PLAN_STEP: Duration = Duration(1_000);

/// Hadoop's `yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms` default: after a
/// recovery the replanner waits this long for the nodes to come back.
pub(crate) const RECOVERY_REPLAN_WAIT: Duration = Duration(10_000);

impl crate::RmCore {
    /// The plans' periodic work, at most once per [`PLAN_STEP`] and only when a queue is
    /// reservable: capacity from the scheduler's current shares, `replan` per plan (each drop a
    /// `Write::RemoveReservation`), `archive_completed` (likewise), then the scheduler told of
    /// any plan whose reservations changed.
    pub(crate) fn tick_plans(&mut self, now: Time) {
        if self.reservations.queues().next().is_none() || now < self.reservations.next_tick {
            return;
        }
        self.reservations.next_tick = now + PLAN_STEP;
        self.refresh_plans(now);
        // Nodes come back one by one after a restart: a plan measured meanwhile would look
        // short and lose its reservations. Hadoop's RM waits
        // `work-preserving-recovery.scheduling-wait-ms` before it schedules; the replanner
        // waits as long, and never replans an empty cluster.
        let replan = now >= self.reservations.replan_after
            && self.sched.cluster_capacity() != weft_types::Resource::ZERO;
        let mut removed = Vec::new();
        let mut replanned = Vec::new();
        let loose = self.loose_demand_reservations();
        for (_, pq) in self.reservations.plan_queues() {
            let window = Duration(u64::try_from(pq.settings.enforcement_window_ms).unwrap_or(0));
            // Refusals leave the plan as it was; the next step tries again.
            let dropped = if replan {
                weft_plan::replan_loose_first(&mut pq.plan, now, window, &|id| loose.contains(id))
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            replanned.extend(dropped.iter().map(|r| r.id));
            removed.extend(dropped.into_iter().map(|r| r.id));
            if let Ok(archived) = pq.plan.archive_completed(now) {
                removed.extend(archived.into_iter().map(|r| r.id));
            }
        }
        for id in &removed {
            self.reservations.forget(id);
        }
        self.persist(
            removed
                .iter()
                .map(|id| Write::RemoveReservation(id.to_string()))
                .collect(),
        );
        if !replanned.is_empty() {
            // The capacity was set above.
            self.demands.plan_capacity_fresh = true;
            self.demand_reservations_dropped(now, &replanned);
        }
        self.follow_plans(now);
    }

    /// Tells the scheduler every plan whose reservations changed since it was last told (a
    /// plan no longer reservable is told it has none, which ends its leaves).
    pub(crate) fn follow_plans(&mut self, now: Time) {
        let mut changed = Vec::new();
        let of_demands: std::collections::BTreeSet<String> = self
            .demands
            .by_key
            .values()
            .filter_map(|d| d.plan.as_ref().map(|p| p.reservation.to_string()))
            .collect();
        for (queue, pq) in self.reservations.plan_queues_ref() {
            let current = plan_event(queue, pq, &of_demands);
            if self.reservations.followed.get(queue.as_str()) != Some(&current) {
                changed.push(current);
            }
        }
        let gone: Vec<String> = self
            .reservations
            .followed
            .keys()
            .filter(|q| self.reservations.plan(q).is_none())
            .cloned()
            .collect();
        for queue in gone {
            self.reservations.followed.remove(&queue);
            changed.push(PlanReservations {
                queue,
                move_on_expiry: true,
                reservations: Vec::new(),
            });
        }
        for plan in changed {
            // The Fair and Capacity schedulers follow plans; FIFO refuses and nothing changes.
            if self
                .sched
                .handle(now, Event::PlanChanged(Box::new(plan.clone())))
                .is_ok()
                && self.reservations.plan(&plan.queue).is_some()
            {
                self.reservations.followed.insert(plan.queue.clone(), plan);
            }
        }
        self.drain(now);
    }

    /// `Decision::ReservationEnded`: the app's queue is now the plan's default (moved), or
    /// it was killed as Hadoop's `killAllAppsInQueue` kills it.
    pub(crate) fn reservation_ended(
        &mut self,
        now: Time,
        app: AppId,
        queue: &str,
        moved_to: Option<String>,
    ) {
        let id = ApplicationId {
            cluster_ts: self.cluster_ts,
            seq: app.0,
        };
        match moved_to {
            Some(to) => {
                let Some(a) = self.apps.get_mut(&id) else {
                    return;
                };
                a.queue = to;
                let record = app_record(a);
                self.persist(vec![Write::PutApp(record)]);
            }
            None => {
                if let Some(a) = self.apps.get_mut(&id) {
                    // The scheduler already let it go.
                    a.in_sched = false;
                }
                self.finish_app(
                    now,
                    id,
                    AppState::Killed,
                    FinalStatus::Killed,
                    format!("Application killed due to expiry of reservation queue {queue}."),
                    false,
                );
            }
        }
    }
}

/// What the scheduler's follower needs of a plan: each reservation's interval, skyline and
/// whether it holds gangs. A demand's reservation is never capped as a gang: the demand's
/// gang is delivered whole by the scheduler's gang asks, and its leaf also holds the app's
/// AM and other asks, so a cap at exactly the gang's size would leave the gang no room to be
/// placed (the `weft sim deadline` runs of stop 29: every planned maps gang waited to its
/// deadline on an idle cluster).
fn plan_event(
    queue: &str,
    pq: &crate::reservations::PlanQueue,
    of_demands: &std::collections::BTreeSet<String>,
) -> PlanReservations {
    PlanReservations {
        queue: queue.to_string(),
        move_on_expiry: pq.settings.move_on_expiry,
        reservations: pq
            .plan
            .reservations()
            .map(|r| PlannedReservation {
                id: r.id.to_string(),
                start: r.start,
                end: r.end,
                steps: r.allocation.steps().collect(),
                gang: r.has_gang() && !of_demands.contains(&r.id.to_string()),
            })
            .collect(),
    }
}

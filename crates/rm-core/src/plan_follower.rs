//! rm-core's half of Hadoop's plan follower (`AbstractSchedulerPlanFollower.synchronizePlan`,
//! time-aware-demands spec §2.1): once per plan step, each plan takes the queue's current
//! share as its capacity, the replanner drops reservations (newest first) where that capacity
//! no longer covers them, and reservations that ended a policy window ago are archived; every
//! drop is persisted, and a demand whose reservation the replanner dropped is failed or planned
//! again (`demands::planning`). The scheduler's half (the reservation leaves and their sizes) is
//! `weft_sched`'s follower, told each plan's reservations with `Event::PlanChanged` whenever
//! they change: the scheduler does not depend on the planner, so the event carries plain data
//! (each reservation's skyline as steps), and the scheduler runs at their change points itself.

use std::collections::BTreeMap;

use weft_sched::{Event, PlanReservations, PlannedReservation};
use weft_store::{AppState, FinalStatus, Write};
use weft_types::{AppId, Duration, Resource, Time};

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
        let of_demands = self.demand_reservations();
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

    /// The reservations of planned demands, by id, with what the demand carrier adds to the
    /// follower's view of each (`demands/carrier.rs`): an AM demand's app is carried into the
    /// leaf, so the leaf opens one lead before the planned start (when the demand goes
    /// ALLOCATING) and its entitlement adds the app's AM container, which the leaf holds too.
    fn demand_reservations(&self) -> BTreeMap<String, Option<Carried>> {
        self.demands
            .by_key
            .values()
            .filter_map(|d| {
                let plan = d.plan.as_ref()?;
                let carried = match d.scope {
                    crate::demands::Scope::App(app) => self.apps.get(&app).map(|a| Carried {
                        lead: self
                            .reservations
                            .plan(&plan.queue)
                            .map_or(Duration(0), |p| self.demand_lead(p.step())),
                        am: a.sub.am_resource,
                    }),
                    crate::demands::Scope::User(_) => None,
                };
                Some((plan.reservation.to_string(), carried))
            })
            .collect()
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
        let id = self.app_key(app);
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

/// The demand carrier's time-bounded floor (spec §3.3 "Demand carrier"), as the follower
/// sees it: the reservation's leaf from `lead` before its planned start, sized to what is
/// reserved plus the carried app's AM.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Carried {
    /// The demand's lead (`RmCore::demand_lead`): waitTimeBeforeKill + 2 heartbeats, so that
    /// preemption warned at activation has killed and the freed room is handed over by the
    /// planned start.
    lead: Duration,
    /// The carried app's AM container: it moves into the leaf with the app and counts against
    /// the leaf's min share, so without it the demand's last container would wait for
    /// fair-share convergence instead of min-share preemption.
    am: Resource,
}

/// What the scheduler's follower needs of a plan: each reservation's interval, skyline and
/// whether it holds gangs. A demand's reservation is never capped as a gang: the demand's
/// gang is delivered whole by the scheduler's gang asks, and its leaf also holds the app's AM
/// and other asks, so a cap at exactly the gang's size would leave the gang no room to be
/// placed (the `weft sim deadline` runs of stop 29: every planned maps gang waited to its
/// deadline on an idle cluster). An AM demand's reservation is the carrier's view
/// ([`Carried`]); the plan itself keeps the reservation as placed.
fn plan_event(
    queue: &str,
    pq: &crate::reservations::PlanQueue,
    of_demands: &BTreeMap<String, Option<Carried>>,
) -> PlanReservations {
    PlanReservations {
        queue: queue.to_string(),
        move_on_expiry: pq.settings.move_on_expiry,
        reservations: pq
            .plan
            .reservations()
            .map(|r| {
                let id = r.id.to_string();
                let demand = of_demands.get(&id);
                let followed = PlannedReservation {
                    gang: r.has_gang() && demand.is_none(),
                    id,
                    start: r.start,
                    end: r.end,
                    steps: r.allocation.steps().collect(),
                };
                match demand {
                    Some(Some(carried)) => carried_view(followed, *carried),
                    _ => followed,
                }
            })
            .collect(),
    }
}

/// `r` opened `lead` early at its starting amount, every amount raised by the AM (a zero
/// step stays zero: the skyline's end).
fn carried_view(mut r: PlannedReservation, carried: Carried) -> PlannedReservation {
    let first = r
        .steps
        .iter()
        .find(|(t, _)| *t >= r.start)
        .map_or(Resource::ZERO, |(_, v)| *v);
    for (_, v) in &mut r.steps {
        if !v.is_zero() {
            *v = v.saturating_add(carried.am);
        }
    }
    let open = Time(r.start.as_millis().saturating_sub(carried.lead.0));
    if open < r.start && !first.is_zero() {
        r.steps.insert(0, (open, first.saturating_add(carried.am)));
        r.start = open;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gb(n: i64) -> Resource {
        Resource::new(n * 1024, n)
    }

    /// A reservation of 8 GB over [600 s, 1,200 s), then 4 GB to 2,400 s, as the plan's
    /// skyline gives it (its end a zero step).
    fn placed() -> PlannedReservation {
        PlannedReservation {
            id: "reservation_1_0001".into(),
            start: Time(600_000),
            end: Time(2_400_000),
            steps: vec![
                (Time(600_000), gb(8)),
                (Time(1_200_000), gb(4)),
                (Time(2_400_000), Resource::ZERO),
            ],
            gang: false,
        }
    }

    #[test]
    fn the_carried_view_opens_one_lead_early_at_the_first_amount_plus_the_am() {
        let view = carried_view(
            placed(),
            Carried {
                lead: Duration(17_000),
                am: gb(1),
            },
        );
        assert_eq!((view.start, view.end), (Time(583_000), Time(2_400_000)));
        assert_eq!(
            view.steps,
            vec![
                (Time(583_000), gb(9)),
                (Time(600_000), gb(9)),
                (Time(1_200_000), gb(5)),
                (Time(2_400_000), Resource::ZERO),
            ]
        );
        assert_eq!(view.reserved_at(Time(583_000)), gb(9));
        assert_eq!(view.reserved_at(Time(582_999)), Resource::ZERO);
    }

    #[test]
    fn a_lead_past_time_zero_opens_at_zero_and_no_lead_keeps_the_start() {
        let early = PlannedReservation {
            start: Time(5_000),
            steps: vec![(Time(5_000), gb(2)), (Time(9_000), Resource::ZERO)],
            end: Time(9_000),
            ..placed()
        };
        let view = carried_view(
            early.clone(),
            Carried {
                lead: Duration(17_000),
                am: Resource::ZERO,
            },
        );
        assert_eq!((view.start, view.steps[0]), (Time(0), (Time(0), gb(2))));
        let view = carried_view(
            early,
            Carried {
                lead: Duration(0),
                am: gb(1),
            },
        );
        assert_eq!(view.start, Time(5_000));
        assert_eq!(
            view.steps,
            vec![(Time(5_000), gb(3)), (Time(9_000), Resource::ZERO)]
        );
    }
}

//! Demands that need a plan (spec §3.3): placed by the plan of the reservable queue above
//! theirs as a real reservation of that plan, so the plan follower gives the reservation its
//! leaf and entitlement, the replanner may drop it, and the committed skyline shows it.
//!
//! The mapping (§3.3's table): one R_ALL stage of `num-containers` × the request's size, in
//! gangs of `min-concurrency` (the whole demand for `Gang: true`, g for `Gang: g`, else 1),
//! each for the Duration rounded up to the plan step; `arrival` = the earliest Start (and after
//! planned predecessors' ends), `deadline` = min(DeadLine, Start's end + Duration), or one
//! plan step past `arrival` + Duration when Start has no end and there is no DeadLine (start at
//! `arrival`). Demands are placed by the greedy agent from the arrival (Hadoop's
//! favor-early), whatever the queue's agent: a demand wants the earliest start its conditions
//! allow, and the spec leaves exact placements free (§7, decision 8).

use weft_demand_lang::window::Bound;
use weft_demand_lang::{DemandExpr, Gang, Strategy};
use weft_plan::{Interpreter, PlanError, ReservationDefinition, ReservationId, ReservationRequest};
use weft_store::{DemandPlanRecord, DemandState, Write};
use weft_types::{Duration, Resource, Time};

use super::{Demand, DemandReason};
use crate::reservations::ReservationError;
use crate::RmCore;

/// How far past its window a loose demand that found no room there is searched for a later
/// start (`deferred`): one day, the sharing policy's default window.
pub(crate) const DEFER_HORIZON: Duration = Duration(86_400_000);

/// A demand's place in a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DemandPlan {
    pub(crate) reservation: ReservationId,
    /// The plan's queue (full name).
    pub(crate) queue: String,
    /// The first instant the reservation holds resources.
    pub(crate) start: Time,
    /// Where its resources end.
    pub(crate) end: Time,
}

impl DemandPlan {
    pub(crate) fn to_record(&self) -> DemandPlanRecord {
        DemandPlanRecord {
            reservation_id: self.reservation.to_string(),
            queue: self.queue.clone(),
            start_ms: self.start.as_millis(),
            end_ms: self.end.as_millis(),
        }
    }

    pub(crate) fn from_record(record: &DemandPlanRecord) -> Result<DemandPlan, String> {
        Ok(DemandPlan {
            reservation: record
                .reservation_id
                .parse()
                .map_err(|e| format!("its reservation: {e}"))?,
            queue: record.queue.clone(),
            start: Time(record.start_ms),
            end: Time(record.end_ms),
        })
    }
}

/// What the planner made of a demand at admission (§3.4 rows 2-3).
pub(crate) enum Admission {
    /// Its queue is under no reservable queue, or nothing needs planning: decided as before.
    NoPlan,
    /// Placed inside its conditions (`planned`) or, loose, after them (`deferred`).
    Placed(DemandPlan, DemandReason),
    /// Not placed: FAILED with this reason and detail.
    Refused(DemandReason, String),
    /// Loose and placed nowhere: it runs best-effort.
    BestEffort(String),
}

/// The lower bound OrderBy puts on a start when its predecessors are planned: AND takes the
/// latest planned end, OR the earliest; NOT bounds from above only. `Err` names a predecessor
/// that is neither planned nor finished.
fn after_predecessors(
    expr: &DemandExpr,
    end_of: &dyn Fn(&weft_demand_lang::DemandRef) -> Result<Option<u64>, u64>,
) -> Result<Option<u64>, u64> {
    match expr {
        DemandExpr::Ref(reference) => end_of(reference),
        DemandExpr::And(branches) => {
            let mut latest = None;
            for branch in branches {
                if let Some(end) = after_predecessors(branch, end_of)? {
                    latest = Some(latest.map_or(end, |l: u64| l.max(end)));
                }
            }
            Ok(latest)
        }
        DemandExpr::Or(branches) => {
            let mut earliest: Option<Option<u64>> = None;
            let mut unplanned = None;
            for branch in branches {
                match after_predecessors(branch, end_of) {
                    Ok(end) => {
                        earliest = Some(match (earliest, end) {
                            (None, e) => e,
                            (Some(None), _) | (_, None) => None,
                            (Some(Some(a)), Some(b)) => Some(a.min(b)),
                        })
                    }
                    Err(id) => unplanned = unplanned.or(Some(id)),
                }
            }
            match (earliest, unplanned) {
                (Some(end), _) => Ok(end),
                (None, Some(id)) => Err(id),
                (None, None) => Ok(None),
            }
        }
        DemandExpr::Not(_) => Ok(None),
    }
}

impl RmCore {
    /// The lead time (§3.3): a planned demand goes ALLOCATING this long before its planned
    /// start, max(plan step, waitTimeBeforeKill + 2 × the NM heartbeat interval), so that
    /// preemption can clear room for it by then.
    pub(crate) fn demand_lead(&self, step: Duration) -> Duration {
        let properties = self.config.scheduler.properties();
        let ms = |v: i64| u64::try_from(v).unwrap_or(0);
        let preemption = ms(properties.wait_time_before_kill_ms)
            .saturating_add(ms(properties.node_heartbeat_interval_ms).saturating_mul(2));
        Duration(step.0.max(preemption))
    }

    /// The reservable queue whose plan a demand in `queue` is placed by: the queue itself or
    /// its nearest reservable ancestor (`prod`, `root.prod`, `root.prod.prod-default` all find
    /// `root.prod`).
    pub(crate) fn plan_queue_of(&self, queue: &str) -> Option<String> {
        let rooted = if queue == "root" || queue.starts_with("root.") {
            queue.to_owned()
        } else {
            format!("root.{queue}")
        };
        self.reservations
            .queues()
            .filter(|plan| rooted == *plan || rooted.starts_with(&format!("{plan}.")))
            .max_by_key(|plan| plan.len())
            .map(str::to_owned)
    }

    /// Whether a strict Start or DeadLine bounds the demand in time.
    pub(crate) fn strictly_timed(&self, d: &Demand) -> bool {
        let default = self.config.demand_default_strategy;
        let strict = |s: Option<Strategy>| s == Some(Strategy::Strict);
        strict(d.spec.start.as_ref().map(|f| d.spec.effective(f, default)))
            || (d.times.deadline.at.is_some()
                && strict(
                    d.spec
                        .deadline
                        .as_ref()
                        .map(|f| d.spec.effective(f, default)),
                ))
    }

    /// The planned end of each predecessor `d`'s OrderBy names, or `Err(id)` for one neither
    /// planned nor finished (a finished one puts no bound).
    fn predecessors_bound(&self, d: &Demand) -> Result<Option<u64>, u64> {
        let Some(order) = &d.spec.order_by else {
            return Ok(None);
        };
        let end_of = |reference: &weft_demand_lang::DemandRef| {
            let p = d
                .scope
                .target(reference)
                .and_then(|key| self.demands.by_key.get(&key));
            match p {
                Some(p) if p.state() == DemandState::Finished => Ok(None),
                Some(p) => match &p.plan {
                    Some(plan) if !p.state().is_final() => Ok(Some(plan.end.as_millis())),
                    _ => Err(reference.demand),
                },
                None => Err(reference.demand),
            }
        };
        after_predecessors(&order.value, &end_of)
    }

    /// The definition that places `d` from `arrival` (epoch ms, at least now) on, within its
    /// conditions; `None` when it has no Duration.
    fn demand_definition(
        &self,
        d: &Demand,
        arrival: u64,
        step: Duration,
    ) -> Option<ReservationDefinition> {
        let length = match d.times.lease? {
            Bound::AfterStart(ms) => ms,
            Bound::At(end) => end.saturating_sub(arrival),
        };
        let duration = length.div_ceil(step.0.max(1)).saturating_mul(step.0.max(1));
        let window_end = d.times.start.as_ref().and_then(|w| w.latest_end());
        let deadline = match (d.times.deadline.at, window_end) {
            (Some(at), Some(end)) => at.min(end.saturating_add(duration)),
            (Some(at), None) => at,
            (None, Some(end)) => end.saturating_add(duration),
            (None, None) => arrival.saturating_add(step.0).saturating_add(duration),
        };
        let containers = u32::try_from(d.requested()).unwrap_or(u32::MAX);
        let concurrency = match d.spec.gang {
            Gang::Off => 1,
            Gang::All => containers,
            Gang::Size(g) => u32::try_from(g).unwrap_or(u32::MAX),
        };
        let size = Resource::new(
            i64::try_from(d.spec.request.memory_mb).unwrap_or(i64::MAX),
            i64::try_from(d.spec.request.vcores).unwrap_or(i64::MAX),
        );
        Some(ReservationDefinition {
            arrival: Time(arrival),
            deadline: Time(deadline),
            name: d.key.clone(),
            priority: 0,
            recurrence: None,
            interpreter: Interpreter::All,
            requests: vec![ReservationRequest {
                capability: size,
                num_containers: containers,
                concurrency,
                duration: Duration(duration),
            }],
        })
    }

    /// Places `definition` for `user` in `plan_queue`'s plan under a fresh id, persisted.
    fn place_reservation(
        &mut self,
        now: Time,
        user: &str,
        plan_queue: &str,
        definition: &ReservationDefinition,
    ) -> Result<DemandPlan, ReservationError> {
        if !std::mem::replace(&mut self.demands.plan_capacity_fresh, true) {
            self.refresh_plans(now);
        }
        let id = self.reservations.new_id();
        self.persist(vec![Write::ReservationSequence(
            self.reservations.next_sequence(),
        )]);
        self.reservations
            .submit_demand(now, user, plan_queue, id, definition)?;
        self.persist_reservation(Some(id));
        self.demands.plans_changed = true;
        let r = self
            .reservations
            .find(&id)
            .ok_or(ReservationError::Unknown(id))?;
        Ok(DemandPlan {
            reservation: id,
            queue: plan_queue.to_owned(),
            start: r.allocation.earliest_start().unwrap_or(r.start),
            end: r.allocation.latest_end().unwrap_or(r.end),
        })
    }

    /// Rows 2-3 with a planner: where `d` goes in its plan, if it needs one (§3.3).
    pub(crate) fn plan_admission(&mut self, now: Time, key: &str, needs_plan: bool) -> Admission {
        let Some(d) = self.demands.by_key.get(key) else {
            return Admission::NoPlan;
        };
        let Some(plan_queue) = self.plan_queue_of(&d.queue) else {
            return Admission::NoPlan;
        };
        let default = self.config.demand_default_strategy;
        let ordered = d.spec.order_by.is_some();
        let order_strict = d
            .spec
            .order_by
            .as_ref()
            .is_some_and(|f| d.spec.effective(f, default) == Strategy::Strict);
        // Only OrderBy-relative (no time bound): planned when its predecessors are.
        let ordered_only = ordered && d.spec.duration.is_some();
        if !(needs_plan || ordered_only) {
            return Admission::NoPlan;
        }
        let strict = self.strictly_timed(d);
        let after = match self.predecessors_bound(d) {
            Ok(after) => after,
            Err(predecessor) if strict && order_strict => {
                return Admission::Refused(
                    DemandReason::Unplannable,
                    format!("cannot guarantee: predecessor {predecessor} is not planned"),
                )
            }
            // Not planned now: planned by time alone, or (only ordered) not at all.
            Err(_) if needs_plan => None,
            Err(_) => return Admission::NoPlan,
        };
        let arrival = d
            .times
            .earliest_start
            .max(now.as_millis())
            .max(after.unwrap_or(0));
        let Some(step) = self.reservations.plan(&plan_queue).map(|p| p.step()) else {
            return Admission::NoPlan;
        };
        let Some(definition) = self.demand_definition(d, arrival, step) else {
            return Admission::NoPlan;
        };
        let user = d.user.clone();
        // An OrderBy-only demand takes its OrderBy's strategy.
        let strict_order_only = ordered && order_strict && !needs_plan;
        let loose = !(strict || strict_order_only);
        let first = self.place_reservation(now, &user, &plan_queue, &definition);
        match first {
            Ok(plan) => Admission::Placed(plan, DemandReason::Planned),
            Err(ReservationError::Plan(PlanError::Policy { violation, .. })) => {
                Admission::Refused(DemandReason::Quota, violation.to_string())
            }
            Err(e) if !loose => Admission::Refused(
                DemandReason::Unplannable,
                format!(
                    "no room in plan {plan_queue} between {} and {} ms: {e}",
                    definition.arrival.as_millis(),
                    definition.deadline.as_millis()
                ),
            ),
            Err(e) => self.defer(now, key, &plan_queue, definition, step, e),
        }
    }

    /// A loose demand with no room inside its conditions: the earliest start the plan finds
    /// within [`DEFER_HORIZON`] after them (`deferred`), else best-effort.
    fn defer(
        &mut self,
        now: Time,
        key: &str,
        plan_queue: &str,
        inside: ReservationDefinition,
        step: Duration,
        why: ReservationError,
    ) -> Admission {
        let Some(d) = self.demands.by_key.get(key) else {
            return Admission::NoPlan;
        };
        let length = inside.requests.first().map_or(0, |r| r.duration.0);
        let arrival = inside
            .deadline
            .as_millis()
            .saturating_sub(length)
            .max(inside.arrival.as_millis())
            .max(now.as_millis());
        let Some(mut later) = self.demand_definition(d, arrival, step) else {
            return Admission::NoPlan;
        };
        later.arrival = Time(arrival);
        later.deadline = Time(
            arrival
                .saturating_add(length)
                .saturating_add(DEFER_HORIZON.0),
        );
        let user = d.user.clone();
        match self.place_reservation(now, &user, plan_queue, &later) {
            Ok(plan) => Admission::Placed(plan, DemandReason::Deferred),
            Err(ReservationError::Plan(PlanError::Policy { violation, .. })) => {
                Admission::Refused(DemandReason::Quota, violation.to_string())
            }
            Err(e) => Admission::BestEffort(format!(
                "no room in plan {plan_queue} inside its conditions ({why}) nor in the {} h after them ({e})",
                DEFER_HORIZON.0 / 3_600_000
            )),
        }
    }

    /// The least the plan leaves `key`'s user over the window the demand would be placed in
    /// (the dry run's sharing-policy headroom); `None` without a plan or a Duration.
    pub(crate) fn plan_headroom(&mut self, now: Time, key: &str) -> Option<Resource> {
        let d = self.demands.by_key.get(key)?;
        let plan_queue = self.plan_queue_of(&d.queue)?;
        if !std::mem::replace(&mut self.demands.plan_capacity_fresh, true) {
            self.refresh_plans(now);
        }
        let d = self.demands.by_key.get(key)?;
        let plan = self.reservations.plan(&plan_queue)?;
        let arrival = d.times.earliest_start.max(now.as_millis());
        let definition = self.demand_definition(d, arrival, plan.step())?;
        let (from, to) = (definition.arrival, definition.deadline);
        Some(
            plan.available_for(&d.user, None, from, to)
                .min_over(from, to),
        )
    }

    /// The key of the demand whose reservation `id` is (REST's `weft-demand`).
    pub fn demand_of_reservation(&self, id: &ReservationId) -> Option<String> {
        self.demands
            .by_key
            .values()
            .find(|d| d.plan.as_ref().is_some_and(|p| p.reservation == *id))
            .map(|d| d.key.clone())
    }

    /// The reservations of live loose demands: the replanner drops them first (§3.5).
    pub(crate) fn loose_demand_reservations(&self) -> std::collections::BTreeSet<ReservationId> {
        self.demands
            .by_key
            .values()
            .filter(|d| !d.state().is_final() && !self.strictly_timed(d))
            .filter_map(|d| d.plan.as_ref().map(|p| p.reservation))
            .collect()
    }

    /// A demand that ended gives its reservation back (C12: the committed skyline drops).
    pub(crate) fn release_demand_plan(&mut self, now: Time, key: &str) {
        let Some(plan) = self.demands.by_key.get(key).and_then(|d| d.plan.clone()) else {
            return;
        };
        self.uncarry_demand_app(now, key);
        if self.reservations.delete(Some(plan.reservation)).is_ok() {
            self.persist(vec![Write::RemoveReservation(plan.reservation.to_string())]);
            self.demands.plans_changed = true;
        }
    }

    /// The replanner dropped these reservations (§3.4 rows 4 and 6): a strict demand waiting
    /// for its plan fails `capacity_lost`; a loose one is planned again from now
    /// (`replanned`), or runs best-effort. A demand already running keeps running without its
    /// reservation.
    pub(crate) fn demand_reservations_dropped(&mut self, now: Time, dropped: &[ReservationId]) {
        let owners: Vec<String> = self
            .demands
            .by_key
            .values()
            .filter(|d| !d.state().is_final())
            .filter(|d| {
                d.plan
                    .as_ref()
                    .is_some_and(|p| dropped.contains(&p.reservation))
            })
            .map(|d| d.key.clone())
            .collect();
        for key in owners {
            let Some(d) = self.demands.by_key.get(&key) else {
                continue;
            };
            let strict = self.strictly_timed(d);
            let waiting = d.state() == DemandState::Accepted;
            let lost = self
                .demands
                .by_key
                .get_mut(&key)
                .and_then(|d| d.plan.take());
            let detail = lost.map_or_else(String::new, |p| {
                format!("the replanner dropped reservation {}", p.reservation)
            });
            if !waiting {
                self.persist_demand(&key);
                continue;
            }
            if strict {
                self.demand_transition(
                    now,
                    &key,
                    DemandState::Failed,
                    DemandReason::CapacityLost,
                    detail,
                );
                continue;
            }
            let (reason, detail) = match self.plan_admission(now, &key, true) {
                Admission::Placed(plan, _) => {
                    let detail =
                        format!("{detail}; planned again at {} ms", plan.start.as_millis());
                    if let Some(d) = self.demands.by_key.get_mut(&key) {
                        d.plan = Some(plan);
                    }
                    (DemandReason::Replanned, detail)
                }
                Admission::Refused(_, why) | Admission::BestEffort(why) => {
                    (DemandReason::BestEffort, format!("{detail}; {why}"))
                }
                Admission::NoPlan => (DemandReason::BestEffort, detail),
            };
            self.demand_transition(now, &key, DemandState::Accepted, reason, detail);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_demand_lang::DemandRef;

    fn reference(demand: u64) -> DemandExpr {
        DemandExpr::Ref(DemandRef {
            owner: None,
            demand,
            outcome: None,
        })
    }

    #[test]
    fn and_waits_for_the_latest_planned_end_or_the_earliest_and_not_bounds_nothing() {
        let ends = |r: &DemandRef| match r.demand {
            1 => Ok(Some(100)),
            2 => Ok(Some(300)),
            3 => Ok(None),
            other => Err(other),
        };
        let and = DemandExpr::And(vec![reference(1), reference(2), reference(3)]);
        assert_eq!(after_predecessors(&and, &ends), Ok(Some(300)));
        let or = DemandExpr::Or(vec![reference(2), reference(1), reference(9)]);
        assert_eq!(after_predecessors(&or, &ends), Ok(Some(100)));
        let with_unplanned = DemandExpr::And(vec![reference(1), reference(9)]);
        assert_eq!(after_predecessors(&with_unplanned, &ends), Err(9));
        let not = DemandExpr::Not(Box::new(reference(9)));
        assert_eq!(after_predecessors(&not, &ends), Ok(None));
    }
}

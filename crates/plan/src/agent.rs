//! The greedy reservation agent (Hadoop's `GreedyReservationAgent`: an `IterativePlanner` with
//! unconstrained stage windows and `StageAllocatorGreedyRLE`).
//!
//! Stages are placed one at a time. With `favor_early` (Hadoop's
//! `yarn.resourcemanager.reservation-system.favor-early-allocation`, default **true**, so left
//! to right from the arrival despite the class's javadoc, which describes the older
//! right-to-left-only agent) the stages go first to last, each gang batch as early as it fits;
//! otherwise last to first, each as late as it fits. Within a stage, gangs are placed in
//! batches: as many as fit over the whole duration at the current edge, then the edge moves
//! past the most constraining piece of the plan.

use weft_types::{Duration, Resource, Time, MAX_RESOURCE_TYPES};

use crate::plan::{Plan, PlanError, Reservation};
use crate::rdl::{
    Interpreter, ReservationDefinition, ReservationId, ReservationRequest, ValidationContext,
};
use crate::skyline::Skyline;

/// Hadoop's greedy agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GreedyAgent {
    /// Place left to right from the arrival (true, Hadoop's default) or right to left from the
    /// deadline.
    pub favor_early: bool,
}

impl Default for GreedyAgent {
    fn default() -> Self {
        GreedyAgent { favor_early: true }
    }
}

/// Where a definition would go: the reservation's span and its resources over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The arrival rounded up to the step.
    pub start: Time,
    /// The deadline rounded up to the step.
    pub end: Time,
    /// The resources over time.
    pub allocation: Skyline,
}

/// One batch of gangs placed together: `resources` over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Batch {
    start: Time,
    end: Time,
    resources: Resource,
}

impl GreedyAgent {
    /// Places a new reservation in the plan, or says why it cannot.
    pub fn create(
        &self,
        plan: &mut Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<(), PlanError> {
        if plan.reservation(&id).is_some() {
            return Err(PlanError::DuplicateReservation(id));
        }
        let placement = self.place(plan, id, user, definition, now)?;
        plan.add(reservation(id, user, definition, placement), now)
    }

    /// Replaces a reservation with a new definition; the old one counts as free while the new
    /// one is planned, and stays untouched if the new one is refused.
    pub fn update(
        &self,
        plan: &mut Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<(), PlanError> {
        let Some(old) = plan.reservation(&id) else {
            return Err(PlanError::UnknownReservation(id));
        };
        if old.user != user {
            return Err(PlanError::MismatchedUser {
                old: old.user.clone(),
                new: user.to_string(),
            });
        }
        let placement = self.place(plan, id, user, definition, now)?;
        plan.update(reservation(id, user, definition, placement), now)
    }

    /// Removes a reservation.
    pub fn delete(&self, plan: &mut Plan, id: &ReservationId) -> Result<Reservation, PlanError> {
        plan.delete(id)
    }

    /// Computes where `definition` would go without changing the plan (the dry run). If `id`
    /// is already in the plan its resources count as free (an update).
    pub fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<Placement, PlanError> {
        let step = plan.step().0;
        let window_capacity = if definition.arrival < definition.deadline {
            plan.capacity()
                .max_over(definition.arrival, definition.deadline)
        } else {
            plan.capacity().value_at(definition.arrival)
        };
        definition.validate(&ValidationContext {
            capacity: window_capacity,
            maximum_allocation: plan.config().maximum_allocation,
            max_periodicity: plan.config().max_periodicity,
            now,
        })?;
        if definition.recurrence.is_some() {
            return Err(PlanError::RecurringNotPlanned(id));
        }
        // Weft aligns stage windows to the step as the spec and Hadoop's first planner do;
        // Hadoop's current `StageExecutionIntervalUnconstrained` passes the raw arrival and
        // deadline, which can place gangs off the step grid.
        let arrival = round_up(definition.arrival, step);
        let deadline = round_down(definition.deadline, step);
        let replacing = plan.reservation(&id).map(|r| r.id);
        let mut available = plan
            .available_for(user, replacing.as_ref())
            .clip(arrival, deadline);
        let mut job = Skyline::new();
        let stages: Vec<(usize, &ReservationRequest)> = if self.favor_early {
            definition.requests.iter().enumerate().collect()
        } else {
            definition.requests.iter().enumerate().rev().collect()
        };
        let ordered = matches!(
            definition.interpreter,
            Interpreter::Order | Interpreter::OrderNoGap
        );
        let mut placed_any = false;
        for (index, rr) in stages {
            let (lo, hi) = match (ordered, self.favor_early) {
                (true, true) => (job.latest_end().unwrap_or(arrival).max(arrival), deadline),
                (true, false) => (
                    arrival,
                    job.earliest_start().unwrap_or(deadline).min(deadline),
                ),
                (false, _) => (arrival, deadline),
            };
            let mut trial = available.clone();
            let Some(batches) = self.allocate_stage(&mut trial, rr, lo, hi, step) else {
                if definition.interpreter == Interpreter::Any {
                    continue;
                }
                return Err(PlanError::CannotSatisfy { stage: Some(index) });
            };
            if definition.interpreter == Interpreter::OrderNoGap
                && !respects_no_gap(&job, &batches, self.favor_early)
            {
                return Err(PlanError::NoGap { stage: index });
            }
            for b in &batches {
                job.add(b.start, b.end, b.resources)?;
            }
            available = trial;
            placed_any = true;
            if definition.interpreter == Interpreter::Any {
                break;
            }
        }
        if !placed_any || job.is_empty() {
            return Err(PlanError::CannotSatisfy { stage: None });
        }
        Ok(Placement {
            start: arrival,
            end: round_up(definition.deadline, step),
            allocation: job,
        })
    }

    /// Places every gang of `rr` inside `[lo, hi)` against `available`, which it reduces by
    /// what it places; `None` when the gangs do not all fit.
    ///
    /// Each round takes the `duration`-long span at the current edge, fits as many gangs as
    /// its scarcest piece allows, and moves the edge to the far side of the last scarcest
    /// piece (never further than one duration). Hadoop does the same on a copy of the plan
    /// that it does not reduce within a stage, so a later round can overlap an earlier one
    /// and the policy then refuses the overcommit; Weft reduces its copy and never proposes
    /// one.
    fn allocate_stage(
        &self,
        available: &mut Skyline,
        rr: &ReservationRequest,
        lo: Time,
        hi: Time,
        step: u64,
    ) -> Option<Vec<Batch>> {
        let duration = round_up_duration(rr.duration, step);
        let gang = rr.gang()?;
        let mut remaining = u64::from(rr.gang_count());
        let mut batches = Vec::new();
        let (mut lo, mut hi) = (lo, hi);
        while remaining > 0 && lo.0.checked_add(duration)? <= hi.0 {
            let (start, end) = if self.favor_early {
                (lo, Time(lo.0 + duration))
            } else {
                (Time(hi.0 - duration), hi)
            };
            let pieces = available.segments(start, end);
            let mut fit = remaining;
            let mut scarcest = if self.favor_early { end } else { start };
            let ordered: Vec<_> = if self.favor_early {
                pieces.iter().collect()
            } else {
                pieces.iter().rev().collect()
            };
            for piece in ordered {
                let here = gangs_that_fit(piece.value, gang).min(remaining);
                if here <= fit {
                    fit = here;
                    scarcest = if self.favor_early {
                        piece.end
                    } else {
                        piece.start
                    };
                }
            }
            if fit > 0 {
                let resources = crate::rdl::scale(gang, i64::try_from(fit).ok()?)?;
                available.add(start, end, negate(resources)?).ok()?;
                batches.push(Batch {
                    start,
                    end,
                    resources,
                });
                remaining -= fit;
            }
            if remaining == 0 {
                break;
            }
            if self.favor_early {
                lo = scarcest.min(end);
            } else {
                hi = scarcest.max(start);
            }
        }
        (remaining == 0).then_some(batches)
    }
}

fn reservation(
    id: ReservationId,
    user: &str,
    definition: &ReservationDefinition,
    placement: Placement,
) -> Reservation {
    Reservation {
        id,
        user: user.to_string(),
        definition: definition.clone(),
        start: placement.start,
        end: placement.end,
        allocation: placement.allocation,
        acceptance_order: 0,
        acceptance_time: Time::ZERO,
    }
}

/// How many whole gangs fit in `available` (none when any needed component is not positive).
fn gangs_that_fit(available: Resource, gang: Resource) -> u64 {
    let mut fit = u64::MAX;
    for i in 0..MAX_RESOURCE_TYPES {
        let need = gang.get(i);
        if need > 0 {
            let have = available.get(i);
            if have <= 0 {
                return 0;
            }
            fit = fit.min((have / need) as u64);
        }
    }
    fit
}

fn negate(r: Resource) -> Option<Resource> {
    Resource::ZERO.checked_sub(r)
}

/// Hadoop's R_ORDER_NO_GAP test: the stage touches what is already placed (on the side the
/// agent moves from), and its batches form one block without holes (every endpoint but the
/// outer two is shared by two batches).
fn respects_no_gap(job: &Skyline, batches: &[Batch], favor_early: bool) -> bool {
    let (Some(stage_start), Some(stage_end)) = (
        batches.iter().map(|b| b.start).min(),
        batches.iter().map(|b| b.end).max(),
    ) else {
        return false;
    };
    let touches = if favor_early {
        job.latest_end().is_none_or(|end| end >= stage_start)
    } else {
        job.earliest_start().is_none_or(|start| stage_end >= start)
    };
    let mut endpoints: Vec<Time> = Vec::new();
    for b in batches.iter().filter(|b| b.resources != Resource::ZERO) {
        for t in [b.start, b.end] {
            if let Some(pos) = endpoints.iter().position(|e| *e == t) {
                endpoints.swap_remove(pos);
            } else {
                endpoints.push(t);
            }
        }
    }
    touches && endpoints.len() == 2
}

fn round_up(t: Time, step: u64) -> Time {
    Time(t.0.div_ceil(step).saturating_mul(step))
}

fn round_down(t: Time, step: u64) -> Time {
    Time(t.0 / step * step)
}

fn round_up_duration(d: Duration, step: u64) -> u64 {
    d.0.div_ceil(step).saturating_mul(step)
}

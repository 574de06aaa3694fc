//! Hadoop's `IterativePlanner`: the stages are placed one at a time (first to last when
//! favouring early placement, last to first otherwise), each inside a window, by a stage
//! allocator, against the plan with the stages already placed taken out.
//!
//! * R_ANY: the first stage (in placement order) that fits is the reservation.
//! * R_ALL: every stage within [arrival, deadline).
//! * R_ORDER: each stage after the ones placed before it (or before the ones placed after it,
//!   right to left); gaps allowed.
//! * R_ORDER_NO_GAP: as R_ORDER, and the stage must touch its neighbour and be one block
//!   (Hadoop checks the stage the allocator found; it does not search for a gap-free chain).

use weft_types::{Duration, Resource, Time};

use super::{aligned, greedy, Placement};
use crate::plan::{Plan, PlanError};
use crate::rdl::{
    Interpreter, ReservationDefinition, ReservationId, ReservationRequest, ValidationContext,
};
use crate::skyline::{MergeOp, Skyline};

/// How each stage's window is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StageWindows {
    /// Hadoop's `StageExecutionIntervalUnconstrained`: the whole window left by the stages
    /// already placed.
    Unconstrained,
    /// Hadoop's `StageExecutionIntervalByDemand`: for ORDER kinds, each stage gets its
    /// duration plus a share of the slack proportional to its weight (duration × memory ×
    /// containers) among the stages not yet placed.
    ByDemand,
}

/// How a stage's gangs are placed inside its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StageAllocator {
    /// Hadoop's `StageAllocatorGreedyRLE`.
    Greedy,
    /// Hadoop's `StageAllocatorLowCostAligned`.
    LowCostAligned {
        /// The smoothness factor (at least 1).
        smoothness: u32,
    },
}

/// One batch of gangs placed together: `resources` over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Batch {
    pub(super) start: Time,
    pub(super) end: Time,
    pub(super) resources: Resource,
}

/// What a stage allocator works against while one definition is planned.
pub(super) struct Workspace {
    /// What this reservation may still use at each instant (capacity minus the rest of the
    /// plan, within the user's share, minus the stages placed so far).
    pub(super) available: Skyline,
    /// Everything the plan would hold (the rest of the plan plus the stages placed so far),
    /// for the aligned allocator's cost.
    pub(super) load: Skyline,
    /// The plan's capacity.
    pub(super) capacity: Skyline,
}

impl Workspace {
    /// Records a batch: less available, more load.
    pub(super) fn take(&mut self, batch: &Batch) -> Option<()> {
        let negative = Resource::ZERO.checked_sub(batch.resources)?;
        self.available.add(batch.start, batch.end, negative).ok()?;
        self.load
            .add(batch.start, batch.end, batch.resources)
            .ok()?;
        Some(())
    }
}

/// Hadoop's iterative planner, parameterised as its agents use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct IterativePlanner {
    pub(super) favor_early: bool,
    pub(super) windows: StageWindows,
    pub(super) allocator: StageAllocator,
}

impl IterativePlanner {
    /// Validates `definition` and computes its allocation; the sharing policy is not checked
    /// here (the agents do it).
    pub(super) fn place(
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
        let replacing = plan.reservation(&id);
        let mut load = plan.committed().clone();
        if let Some(old) = replacing {
            load = Skyline::merge(&load, &old.allocation, MergeOp::Subtract);
        }
        let mut work = Workspace {
            available: plan.available_for(user, replacing.map(|r| &r.id), arrival, deadline),
            load,
            capacity: plan.capacity().clone(),
        };
        let order: Vec<usize> = if self.favor_early {
            (0..definition.requests.len()).collect()
        } else {
            (0..definition.requests.len()).rev().collect()
        };
        let mut job = Skyline::new();
        let mut placed_any = false;
        for (position, &index) in order.iter().enumerate() {
            let rr = &definition.requests[index];
            let (lo, hi) = self.stage_window(
                definition,
                &order[position..],
                &job,
                arrival,
                deadline,
                step,
            );
            let mut trial = Workspace {
                available: work.available.clone(),
                load: work.load.clone(),
                capacity: work.capacity.clone(),
            };
            let batches = if lo < hi {
                self.allocate(&mut trial, rr, lo, hi, step)
            } else {
                None
            };
            let Some(batches) = batches else {
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
            work = trial;
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

    fn allocate(
        &self,
        work: &mut Workspace,
        rr: &ReservationRequest,
        lo: Time,
        hi: Time,
        step: u64,
    ) -> Option<Vec<Batch>> {
        let duration = round_up_duration(rr.duration, step);
        match self.allocator {
            StageAllocator::Greedy => {
                greedy::allocate(work, rr, lo, hi, duration, self.favor_early)
            }
            StageAllocator::LowCostAligned { smoothness } => aligned::allocate(
                work,
                rr,
                lo,
                hi,
                duration,
                step,
                self.favor_early,
                smoothness,
            ),
        }
    }

    /// The window of the stage `remaining[0]`; `remaining` lists it and the stages still to
    /// place after it, in placement order.
    fn stage_window(
        &self,
        definition: &ReservationDefinition,
        remaining: &[usize],
        job: &Skyline,
        arrival: Time,
        deadline: Time,
        step: u64,
    ) -> (Time, Time) {
        let ordered = matches!(
            definition.interpreter,
            Interpreter::Order | Interpreter::OrderNoGap
        );
        if !ordered {
            return (arrival, deadline);
        }
        let (lo, hi) = if self.favor_early {
            (job.latest_end().unwrap_or(arrival).max(arrival), deadline)
        } else {
            (
                arrival,
                job.earliest_start().unwrap_or(deadline).min(deadline),
            )
        };
        if self.windows == StageWindows::Unconstrained {
            return (lo, hi);
        }
        let current = &definition.requests[remaining[0]];
        let weight = |rr: &ReservationRequest| {
            rr.duration.0 as f64 * rr.capability.memory_mb() as f64 * f64::from(rr.num_containers)
        };
        let total_weight: f64 = remaining
            .iter()
            .map(|i| weight(&definition.requests[*i]))
            .sum();
        let total_duration: u64 = remaining
            .iter()
            .map(|i| round_up_duration(definition.requests[*i].duration, step))
            .fold(0u64, u64::saturating_add);
        let share = if total_weight > 0.0 {
            weight(current) / total_weight
        } else {
            0.0
        };
        let window = hi.0.saturating_sub(lo.0) as i128;
        let slack = window - i128::from(total_duration);
        let own = i128::from(round_up_duration(current.duration, step));
        // As Hadoop: the slack (negative when the stages cannot all fit) is shared by weight,
        // truncated, then realigned to the step.
        let span = own + (slack as f64 * share) as i128;
        let span = u64::try_from(span.max(0)).unwrap_or(0);
        if self.favor_early {
            (
                lo,
                round_down(Time(lo.0.saturating_add(span)), step).min(hi),
            )
        } else {
            (round_up(Time(hi.0.saturating_sub(span)), step).max(lo), hi)
        }
    }
}

/// Hadoop's R_ORDER_NO_GAP test: the stage touches what is already placed (on the side the
/// planner moves from), and its batches form one block without holes (every endpoint but the
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

/// How many whole gangs fit in `available` (none when any needed component is not positive).
pub(super) fn gangs_that_fit(available: Resource, gang: Resource) -> u64 {
    let mut fit = u64::MAX;
    for i in 0..weft_types::MAX_RESOURCE_TYPES {
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

pub(super) fn round_up(t: Time, step: u64) -> Time {
    Time(t.0.div_ceil(step).saturating_mul(step))
}

pub(super) fn round_down(t: Time, step: u64) -> Time {
    Time(t.0 / step * step)
}

pub(super) fn round_up_duration(d: Duration, step: u64) -> u64 {
    d.0.div_ceil(step).saturating_mul(step)
}

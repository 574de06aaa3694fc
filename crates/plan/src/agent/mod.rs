//! Reservation agents: what places a definition in a plan.
//!
//! Both are Hadoop's `IterativePlanner` (stages placed one at a time, see [`iterative`]) with a
//! way to bound each stage's window and a stage allocator:
//! * [`GreedyAgent`] (Hadoop's `GreedyReservationAgent`): unconstrained windows and the greedy
//!   allocator ([`greedy`]).
//! * [`AlignedPlannerWithGreedy`], Hadoop's default: windows shared out by demand and the
//!   low-cost aligned allocator ([`aligned`]); when that fails, the greedy agent.
//!
//! `favor_early` is Hadoop's `yarn.resourcemanager.reservation-system.favor-early-allocation`,
//! default **true**: left to right from the arrival, despite `GreedyReservationAgent`'s javadoc,
//! which describes the older right-to-left-only agent. False places from the deadline.

mod aligned;
mod greedy;
mod iterative;

use weft_types::Time;

use crate::plan::{Plan, PlanError, Reservation};
use crate::rdl::{ReservationDefinition, ReservationId};
use crate::skyline::Skyline;
use iterative::{IterativePlanner, StageAllocator, StageWindows};

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

/// What every agent offers: a dry run, and create, update and delete through it.
pub trait ReservationAgent {
    /// Where `definition` would go, already checked against the plan's sharing policy, without
    /// changing the plan. If `id` is in the plan its resources count as free (an update).
    fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<Placement, PlanError>;

    /// Places a new reservation, or says why it cannot; a refusal changes nothing.
    fn create(
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
    fn update(
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
    fn delete(&self, plan: &mut Plan, id: &ReservationId) -> Result<Reservation, PlanError> {
        plan.delete(id)
    }
}

/// Hadoop's `GreedyReservationAgent`.
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

impl ReservationAgent for GreedyAgent {
    fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<Placement, PlanError> {
        let planner = IterativePlanner {
            favor_early: self.favor_early,
            windows: StageWindows::Unconstrained,
            allocator: StageAllocator::Greedy,
        };
        checked(
            plan,
            id,
            user,
            definition,
            planner.place(plan, id, user, definition, now)?,
        )
    }
}

/// Hadoop's `AlignedPlannerWithGreedy`, its default agent: the low-cost aligned planner, then
/// the greedy agent if that fails for any reason (Hadoop's `TryManyReservationAgents`, which
/// reports the last agent's error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignedPlannerWithGreedy {
    /// As [`GreedyAgent::favor_early`]; both planners use it.
    pub favor_early: bool,
    /// `yarn.resourcemanager.reservation-system.smoothness-factor` (default 10): the larger,
    /// the fewer gangs each round of the aligned allocator places at once.
    pub smoothness_factor: u32,
}

impl Default for AlignedPlannerWithGreedy {
    fn default() -> Self {
        AlignedPlannerWithGreedy {
            favor_early: true,
            smoothness_factor: 10,
        }
    }
}

impl ReservationAgent for AlignedPlannerWithGreedy {
    fn place(
        &self,
        plan: &Plan,
        id: ReservationId,
        user: &str,
        definition: &ReservationDefinition,
        now: Time,
    ) -> Result<Placement, PlanError> {
        let aligned = IterativePlanner {
            favor_early: self.favor_early,
            windows: StageWindows::ByDemand,
            allocator: StageAllocator::LowCostAligned {
                smoothness: self.smoothness_factor.max(1),
            },
        };
        aligned
            .place(plan, id, user, definition, now)
            .and_then(|p| checked(plan, id, user, definition, p))
            .or_else(|_| {
                GreedyAgent {
                    favor_early: self.favor_early,
                }
                .place(plan, id, user, definition, now)
            })
    }
}

/// The placement, once the plan's sharing policy accepts it.
fn checked(
    plan: &Plan,
    id: ReservationId,
    user: &str,
    definition: &ReservationDefinition,
    placement: Placement,
) -> Result<Placement, PlanError> {
    plan.check(&reservation(id, user, definition, placement.clone()))?;
    Ok(placement)
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

//! Hadoop's `SimpleCapacityReplanner`: when the plan's capacity falls below what it has
//! committed, drop reservations until it fits again.
//!
//! It scans from `now` to the earlier of the last reservation's end and `now` plus the
//! enforcement window (`reservation-enforcement-window`, default 1 h). At the first instant over
//! capacity it deletes the reservations holding at that instant, newest accepted first, until
//! the instant fits, then scans on. As in Hadoop, a reservation holding at that instant is
//! dropped in turn even if it reserves nothing then. Weft's demands add "loose before strict"
//! ahead of recency (spec §3.5, [`replan_loose_first`]); every RDL reservation is strict, so
//! for them this is Hadoop's order exactly.

use weft_types::{Duration, Time};

use crate::plan::{Plan, PlanError, Reservation};
use crate::rdl::ReservationId;
use crate::skyline::{MergeOp, Skyline};

/// Hadoop's default `reservation-enforcement-window`: one hour.
pub const DEFAULT_ENFORCEMENT_WINDOW: Duration = Duration(3_600_000);

/// Drops reservations, newest first, until the plan fits its capacity over
/// `[now, min(last end, now + enforcement_window))`; returns them in the order dropped.
pub fn replan(
    plan: &mut Plan,
    now: Time,
    enforcement_window: Duration,
) -> Result<Vec<Reservation>, PlanError> {
    replan_loose_first(plan, now, enforcement_window, &|_| false)
}

/// As [`replan`], but at each instant over capacity the reservations `loose` picks go first
/// (newest first among them), then the others newest first: spec §3.5's "loose before strict"
/// for the reservations of Weft's loose demands.
pub fn replan_loose_first(
    plan: &mut Plan,
    now: Time,
    enforcement_window: Duration,
    loose: &dyn Fn(&ReservationId) -> bool,
) -> Result<Vec<Reservation>, PlanError> {
    let mut dropped = Vec::new();
    let last_end = plan.reservations().map(|r| r.end).max().unwrap_or(now);
    let horizon = last_end.min(now + enforcement_window);
    while let Some(at) = first_excess(plan, now, horizon) {
        let mut holding: Vec<(bool, u64, _)> = plan
            .active_at(at)
            .map(|r| (loose(&r.id), r.acceptance_order, r.id))
            .collect();
        holding.sort_by(|a, b| b.cmp(a));
        let before = dropped.len();
        for (_, _, id) in holding {
            dropped.push(plan.delete(&id)?);
            if !is_over(plan, at) {
                break;
            }
        }
        if dropped.len() == before {
            // Over capacity with nothing holding there cannot happen (committed resources
            // belong to reservations); stop rather than loop.
            break;
        }
    }
    Ok(dropped)
}

fn is_over(plan: &Plan, at: Time) -> bool {
    let excess = plan
        .committed()
        .value_at(at)
        .saturating_sub(plan.capacity().value_at(at));
    excess.values().iter().any(|v| *v > 0)
}

fn first_excess(plan: &Plan, from: Time, to: Time) -> Option<Time> {
    let excess = Skyline::merge(plan.committed(), plan.capacity(), MergeOp::Subtract);
    excess
        .segments(from, to)
        .into_iter()
        .find(|seg| seg.value.values().iter().any(|v| *v > 0))
        .map(|seg| seg.start)
}

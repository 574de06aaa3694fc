//! Hadoop's `StageAllocatorLowCostAligned`: gangs go to the cheapest of the stage's
//! duration-long slots, a few at a time.
//!
//! The window is cut into back-to-back slots of one duration, aligned to the arrival (left to
//! right) or to the deadline (right to left). A slot's cost is the plan's load over it (what the
//! plan already holds plus what this reservation has placed), as the dominant share of the
//! capacity summed per step. Each round places up to `max(gangs ÷ slots, 1) ÷ smoothness`
//! (at least one) gangs in the cheapest slot that can take one, ties going to the slot nearer
//! the favoured end, then re-costs that slot. Aligned slots never overlap, so a stage's
//! allocation is a set of whole slots.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use weft_types::{Time, MAX_RESOURCE_TYPES};

use super::iterative::{gangs_that_fit, Batch, Workspace};
use crate::rdl::{scale, ReservationRequest};

/// Places every gang of `rr` in aligned slots of `[lo, hi)`; `None` when they do not all fit.
#[allow(clippy::too_many_arguments)]
pub(super) fn allocate(
    work: &mut Workspace,
    rr: &ReservationRequest,
    lo: Time,
    hi: Time,
    duration: u64,
    step: u64,
    favor_early: bool,
    smoothness: u32,
) -> Option<Vec<Batch>> {
    let gang = rr.gang()?;
    let slots_in_window = hi.0.saturating_sub(lo.0) / duration;
    if slots_in_window == 0 {
        return None;
    }
    let mut remaining = u64::from(rr.gang_count());
    let per_round = ((remaining / slots_in_window).max(1) / u64::from(smoothness)).max(1);
    let mut queue: BTreeSet<Slot> = BTreeSet::new();
    for k in 0..slots_in_window {
        let (start, end) = if favor_early {
            let start = lo.0 + k * duration;
            (Time(start), Time(start + duration))
        } else {
            let end = hi.0 - k * duration;
            (Time(end - duration), Time(end))
        };
        let slot = Slot::measure(work, start, end, step, favor_early, gang);
        if slot.fit > 0 {
            queue.insert(slot);
        }
    }
    let mut batches: Vec<Batch> = Vec::new();
    while remaining > 0 {
        let best = queue.pop_first()?;
        let n = per_round.min(remaining).min(best.fit);
        let batch = Batch {
            start: best.start,
            end: best.end,
            resources: scale(gang, i64::try_from(n).ok()?)?,
        };
        work.take(&batch)?;
        batches.push(batch);
        remaining -= n;
        let again = Slot::measure(work, best.start, best.end, step, favor_early, gang);
        if again.fit > 0 {
            queue.insert(again);
        }
    }
    Some(merge_same_slot(batches))
}

/// Batches placed in the same slot in different rounds, as one batch (Hadoop keeps the
/// stage's allocation as a skyline, where they are one piece).
fn merge_same_slot(batches: Vec<Batch>) -> Vec<Batch> {
    let mut merged: Vec<Batch> = Vec::new();
    for b in batches {
        match merged
            .iter_mut()
            .find(|m| m.start == b.start && m.end == b.end)
        {
            Some(m) => m.resources = m.resources.saturating_add(b.resources),
            None => merged.push(b),
        }
    }
    merged.sort_by_key(|b| b.start);
    merged
}

/// One slot with its cost and how many gangs it can still take.
#[derive(Clone, Copy, Debug)]
struct Slot {
    cost: f64,
    start: Time,
    end: Time,
    fit: u64,
    favor_early: bool,
}

impl Slot {
    fn measure(
        work: &Workspace,
        start: Time,
        end: Time,
        step: u64,
        favor_early: bool,
        gang: weft_types::Resource,
    ) -> Slot {
        let fit = work
            .available
            .segments(start, end)
            .iter()
            .map(|p| gangs_that_fit(p.value, gang))
            .min()
            .unwrap_or(0);
        Slot {
            cost: cost(work, start, end, step),
            start,
            end,
            fit,
            favor_early,
        }
    }
}

/// The plan's load over `[start, end)` as dominant shares of the capacity, summed per step
/// (Hadoop's `calcCostOfLoad` is the resource calculator's ratio).
fn cost(work: &Workspace, start: Time, end: Time, step: u64) -> f64 {
    let mut total = 0.0;
    for load in work.load.segments(start, end) {
        for cap in work.capacity.segments(load.start, load.end) {
            let mut share: f64 = 0.0;
            for i in 0..MAX_RESOURCE_TYPES {
                let c = cap.value.get(i);
                if c > 0 {
                    share = share.max(load.value.get(i) as f64 / c as f64);
                }
            }
            total += share * (cap.end.0 - cap.start.0) as f64 / step as f64;
        }
    }
    total
}

// Cheapest first; among equal costs the slot nearer the favoured end (Hadoop compares end
// times, ascending when favouring early placement). Slots of one stage never share an end.
impl Ord for Slot {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cost.total_cmp(&other.cost).then_with(|| {
            if self.favor_early {
                self.end.cmp(&other.end)
            } else {
                other.end.cmp(&self.end)
            }
        })
    }
}

impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Slot {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Slot {}

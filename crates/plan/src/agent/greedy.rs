//! Hadoop's `StageAllocatorGreedyRLE`: gangs placed in batches at the window's edge.
//!
//! Each round takes the `duration`-long span at the current edge, fits as many gangs as its
//! scarcest piece allows, and moves the edge to the far side of the last scarcest piece (never
//! further than one duration). Hadoop does the same on a copy of the plan that it does not
//! reduce within a stage, so a later round can overlap an earlier one and its policy then
//! refuses the overcommit; Weft reduces its copy and never proposes one.

use weft_types::Time;

use super::iterative::{gangs_that_fit, Batch, Workspace};
use crate::rdl::{scale, ReservationRequest};

/// Places every gang of `rr` inside `[lo, hi)`; `None` when they do not all fit.
pub(super) fn allocate(
    work: &mut Workspace,
    rr: &ReservationRequest,
    lo: Time,
    hi: Time,
    duration: u64,
    favor_early: bool,
) -> Option<Vec<Batch>> {
    let gang = rr.gang()?;
    let mut remaining = u64::from(rr.gang_count());
    let mut batches = Vec::new();
    let (mut lo, mut hi) = (lo, hi);
    while remaining > 0 && lo.0.checked_add(duration)? <= hi.0 {
        let (start, end) = if favor_early {
            (lo, Time(lo.0 + duration))
        } else {
            (Time(hi.0 - duration), hi)
        };
        let mut pieces = work.available.segments(start, end);
        if !favor_early {
            pieces.reverse();
        }
        let mut fit = remaining;
        let mut scarcest = if favor_early { end } else { start };
        for piece in &pieces {
            let here = gangs_that_fit(piece.value, gang).min(remaining);
            if here <= fit {
                fit = here;
                scarcest = if favor_early { piece.end } else { piece.start };
            }
        }
        if fit > 0 {
            let batch = Batch {
                start,
                end,
                resources: scale(gang, i64::try_from(fit).ok()?)?,
            };
            work.take(&batch)?;
            batches.push(batch);
            remaining -= fit;
        }
        if remaining == 0 {
            break;
        }
        if favor_early {
            lo = scarcest.min(end);
        } else {
            hi = scarcest.max(start);
        }
    }
    (remaining == 0).then_some(batches)
}

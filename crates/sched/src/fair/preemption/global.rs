//! Part B (global strategy, Hadoop 2.7): the summed deficit of starved leaves taken from the
//! queues the policies rank most over their share, one container at a time, warned first and
//! killed in a later round (preemption spec B.1-B.10).
//!
//! The seam is called from the update (`preemption_pass`, after the shares and starvation);
//! the shared layer in `marks.rs` marks (`mark_for_preemption`), kills
//! (`kill_for_preemption`) and reads what is marked (`marked_of_app`,
//! `marked_total_of_app`, `net_usage_of_app`).

use weft_types::Time;

use crate::fair::FairEngine;

/// One global preemption check at `now` (Part B; not built yet: nothing is preempted).
pub(crate) fn preemption_round(_e: &mut FairEngine, _now: Time) {}

/// The global strategy's work before demand and fair shares are recomputed (B.1 step 1: the
/// queue timers read the previous update's shares). Not built yet.
pub(crate) fn before_shares(_e: &mut FairEngine, _now: Time) {}

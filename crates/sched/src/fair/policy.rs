//! Scheduling policy comparators (spec §5). Owned by the shares helper.
//!
//! Two forms of each ordering live here: [`compare`], the reference comparator written straight
//! from the spec (signum of double differences, like Hadoop), and [`sort_key`], a precomputed
//! [`SortKey`] whose `Ord` gives exactly the same answer, so the scheduler can keep children in a
//! `BTreeSet` keyed by it. The property tests in `policy/tests.rs` hold the two together.
//!
//! Where Hadoop's comparators would not be a total order (NaN weights, 0/0 ratios, negative
//! demand, all impossible in a running cluster), we pick one consistent reading and document it:
//! a NaN weight counts as 0, a 0/0 ratio counts as 0, and a demand <= 0 counts as "no demand".
//! A key depends on the cluster resource under `drf`: keys must be rebuilt when it changes.

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use std::cmp::Ordering;
use weft_config::PolicyKind;

mod calc;
mod drf;
mod fair;
#[cfg(all(test, not(weft_two_lanes)))]
mod tests;

pub(crate) use crate::order::key::SortKey;
use crate::order::key::{ordered_bits, KEY_LEVELS};
pub(crate) use calc::{
    at_least_threshold, calculator_compare, is_starved_for_reservation, usage_over_fair_share,
};

/// What a comparator looks at for one schedulable (queue or app).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SchedView {
    /// Demand as of the last update.
    pub(crate) demand: Resource,
    /// Current usage.
    pub(crate) usage: Resource,
    /// Min share (none for apps).
    pub(crate) min_share: Resource,
    /// Weight.
    pub(crate) weight: f64,
    /// Start time (0 for queues).
    pub(crate) start_time: u64,
    /// Final tie-break: the rank of the queue's name among all names, or the app id.
    pub(crate) tiebreak: u64,
}

/// Cluster-wide inputs of the comparators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PolicyContext {
    /// Cluster capacity (drf shares are fractions of it).
    pub(crate) cluster: Resource,
    /// How many resource types are in use.
    pub(crate) resource_types: usize,
}

impl PolicyContext {
    /// The resource types the drf arithmetic looks at: at least memory, at most what a
    /// [`Resource`] holds.
    fn types(&self) -> usize {
        self.resource_types.clamp(1, MAX_RESOURCE_TYPES)
    }
}

/// The reference comparator, written straight from the spec: `Less` means `a` is served first.
pub(crate) fn compare(
    policy: PolicyKind,
    a: &SchedView,
    b: &SchedView,
    ctx: &PolicyContext,
) -> Ordering {
    let fairness = match policy {
        PolicyKind::Fair => fair::compare(a, b),
        PolicyKind::Drf => drf::compare(a, b, ctx),
        PolicyKind::Fifo => Ordering::Equal,
    };
    fairness
        .then_with(|| a.start_time.cmp(&b.start_time))
        .then_with(|| a.tiebreak.cmp(&b.tiebreak))
}

/// The fast path's key for `v`: `sort_key(a).cmp(&sort_key(b)) == compare(a, b)` for all views
/// under the same policy and context.
pub(crate) fn sort_key(policy: PolicyKind, v: &SchedView, ctx: &PolicyContext) -> SortKey {
    let levels = match policy {
        PolicyKind::Fair => fair::key(v),
        PolicyKind::Drf => drf::key(v, ctx),
        PolicyKind::Fifo => [0; KEY_LEVELS],
    };
    SortKey::new(levels, v.start_time, v.tiebreak)
}

/// [`sort_key`] under `fair` from the numbers that policy reads (the re-keys' hot path: no
/// view, no context).
#[inline]
pub(crate) fn fair_sort_key(
    demand_mb: i64,
    usage_mb: i64,
    min_share_mb: i64,
    weight: f64,
    start_time: u64,
    tiebreak: u64,
) -> SortKey {
    let w = if weight.is_nan() { 0.0 } else { weight };
    SortKey::new(
        fair::key_of(demand_mb, usage_mb, min_share_mb, w),
        start_time,
        tiebreak,
    )
}

/// Hadoop's `(int) Math.signum(x)`: NaN gives 0, i.e. a tie.
fn signum(x: f64) -> Ordering {
    if x > 0.0 {
        Ordering::Greater
    } else if x < 0.0 {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// The weight the comparators use: NaN counts as 0 so that every ordering stays total.
fn weight_of(v: &SchedView) -> f64 {
    if v.weight.is_nan() {
        0.0
    } else {
        v.weight
    }
}

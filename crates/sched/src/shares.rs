//! Fair share computation (Hadoop's ComputeFairShares, spec §4). Owned by the shares helper.

use weft_config::PolicyKind;
use weft_types::Resource;

/// Which fair share is being computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShareMode {
    /// Instantaneous: inactive queues get 0.
    Instantaneous,
    /// Steady: activity is ignored.
    Steady,
}

/// One schedulable's inputs to a share computation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShareItem {
    /// Weight (already including size-based weighting for apps).
    pub(crate) weight: f64,
    /// Min share (none for apps).
    pub(crate) min_share: Resource,
    /// Max share, resolved (unbounded for apps).
    pub(crate) max_share: Resource,
    /// A queue that is active, or any app (apps are always active).
    pub(crate) active: bool,
    /// Start time (fifo gives everything to the earliest).
    pub(crate) start_time: u64,
    /// Final tie-break among equal start times (app id).
    pub(crate) tiebreak: u64,
}

/// Computes the shares of `items` out of `total` under `policy` (spec §4, §5.3).
/// Returns one entry per item; `None` means "leave this item's share as it was" (fifo).
pub(crate) fn policy_shares(
    policy: PolicyKind,
    items: &[ShareItem],
    total: Resource,
    mode: ShareMode,
    resource_types: usize,
) -> Vec<Option<Resource>> {
    let _ = (policy, total, mode, resource_types);
    vec![None; items.len()]
}

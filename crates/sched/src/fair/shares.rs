//! Fair share computation (Hadoop's ComputeFairShares, spec §4). Owned by the shares helper.
//!
//! Everything here is a pure function of its inputs: the scheduler core gathers a parent's
//! children (or a leaf's runnable apps) into [`ShareItem`]s, calls [`policy_shares`] and writes the
//! results back. The arithmetic deliberately mirrors Hadoop's, quirks included (truncation, the
//! final share taken from the binary search's upper bound, saturating sums), because fair shares
//! are observable through preemption and reservations.

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_config::PolicyKind;
use weft_types::MEMORY;

#[cfg(all(test, not(weft_two_lanes)))]
mod tests;

/// Binary search steps of the weight-to-resource ratio search (Hadoop's constant).
const SEARCH_ITERATIONS: usize = 25;

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
///
/// * `fair`: memory only; every other component of each share is 0.
/// * `drf`: every resource type below `resource_types` independently (each its own search);
///   components at or above `resource_types` are 0.
/// * `fifo`: in instantaneous mode the item with the earliest `(start_time, tiebreak)` gets all
///   of `total` and every other entry is `None`; in steady mode every entry is `None` (fifo
///   queues are leaves and only queues have steady shares).
pub(crate) fn policy_shares(
    policy: PolicyKind,
    items: &[ShareItem],
    total: Resource,
    mode: ShareMode,
    resource_types: usize,
) -> Vec<Option<Resource>> {
    match policy {
        PolicyKind::Fair => per_type_shares(items, total, mode, 1),
        // Memory is always in use, even if a caller says no type is.
        PolicyKind::Drf => per_type_shares(items, total, mode, resource_types.max(1)),
        PolicyKind::Fifo => fifo_shares(items, total, mode),
    }
}

/// The last share computation of one queue, reused while its inputs stay the same (shares are
/// a pure function of them, and between two updates most queues see exactly the same inputs).
#[derive(Clone, Debug, Default)]
pub(crate) struct ShareMemo {
    inputs: Option<(PolicyKind, ShareMode, usize, Resource)>,
    items: Vec<ShareItem>,
    shares: Vec<Option<Resource>>,
}

impl ShareMemo {
    /// [`policy_shares`] of these inputs, computed only if they differ from the last call's,
    /// and whether they were computed (false: the last call's shares, reused).
    pub(crate) fn shares(
        &mut self,
        policy: PolicyKind,
        items: &[ShareItem],
        total: Resource,
        mode: ShareMode,
        resource_types: usize,
    ) -> (&[Option<Resource>], bool) {
        let inputs = Some((policy, mode, resource_types, total));
        let same = self.inputs == inputs
            && self.items.len() == items.len()
            && self.items.iter().zip(items).all(|(a, b)| a.same_as(b));
        if !same {
            self.shares = policy_shares(policy, items, total, mode, resource_types);
            self.items.clear();
            self.items.extend_from_slice(items);
            self.inputs = inputs;
        }
        (&self.shares, !same)
    }

    /// Whether the last call computed shares for exactly these apps, in this order, with these
    /// inputs, judging the apps by id: an app's item holds its id as the tie-break and a start
    /// time fixed at submission; its weight is the caller's to vouch for.
    pub(crate) fn holds_apps(
        &self,
        policy: PolicyKind,
        mode: ShareMode,
        resource_types: usize,
        total: Resource,
        apps: &[weft_types::AppId],
    ) -> bool {
        self.inputs == Some((policy, mode, resource_types, total))
            && self.items.len() == apps.len()
            && self.items.iter().zip(apps).all(|(i, a)| i.tiebreak == a.0)
    }
}

impl ShareItem {
    /// Equal inputs, bit for bit (a NaN weight equals itself).
    fn same_as(&self, other: &ShareItem) -> bool {
        self.weight.to_bits() == other.weight.to_bits()
            && crate::objects::app::same_resource(&self.min_share, &other.min_share)
            && crate::objects::app::same_resource(&self.max_share, &other.max_share)
            && self.active == other.active
            && self.start_time == other.start_time
            && self.tiebreak == other.tiebreak
    }
}

/// Runs [`compute_shares`] for types `0..types` (memory is type 0) and assembles the vectors.
fn per_type_shares(
    items: &[ShareItem],
    total: Resource,
    mode: ShareMode,
    types: usize,
) -> Vec<Option<Resource>> {
    let mut out = vec![Resource::ZERO; items.len()];
    for t in MEMORY..types.min(MAX_RESOURCE_TYPES) {
        let shares = compute_shares(items, total.get(t), t, mode);
        for (r, s) in out.iter_mut().zip(shares) {
            r.set(t, s);
        }
    }
    out.into_iter().map(Some).collect()
}

/// Fifo's "share": the whole total to the earliest item (spec §5.3).
fn fifo_shares(items: &[ShareItem], total: Resource, mode: ShareMode) -> Vec<Option<Resource>> {
    let mut out = vec![None; items.len()];
    if mode == ShareMode::Instantaneous {
        let earliest = items
            .iter()
            .enumerate()
            .min_by_key(|(_, it)| (it.start_time, it.tiebreak))
            .map(|(i, _)| i);
        if let Some(i) = earliest {
            out[i] = Some(total);
        }
    }
    out
}

/// Computes the shares of resource type `t` for `items` out of `total` (spec §4.1, exactly).
///
/// 1. Fixed shares: max share <= 0, or an inactive item in instantaneous mode, gets 0; a weight
///    <= 0 (or NaN, which Hadoop never produces) gets `max(min share, 0)`.
/// 2. The rest ("flexible") share `avail = min(sum of their maxima, max(total - fixed, 0))` through
///    a weight-to-resource ratio `R`: `share(s, R) = trunc(min(max(w R, min), max))`. `R` is
///    bounded by doubling from 1, then narrowed by 25 bisection steps, and the final shares
///    use the upper bound. Because of truncation the flexible shares may add up to more than
///    `avail` (two equal items splitting 1 get 1 each); that mirrors Hadoop.
///
/// All sums saturate at `i64::MAX` like Hadoop's `safeAdd`. Returns one share per item.
pub(crate) fn compute_shares(
    items: &[ShareItem],
    total: i64,
    t: usize,
    mode: ShareMode,
) -> Vec<i64> {
    let mut shares = vec![0_i64; items.len()];
    let mut flexible: Vec<usize> = Vec::with_capacity(items.len());
    let mut taken: i64 = 0;
    for (i, item) in items.iter().enumerate() {
        match fixed_share(item, t, mode) {
            Some(s) => {
                shares[i] = s;
                taken = taken.saturating_add(s);
            }
            None => flexible.push(i),
        }
    }
    if flexible.is_empty() {
        return shares;
    }

    let flex: Vec<&ShareItem> = flexible.iter().map(|&i| &items[i]).collect();
    let total_max = flex
        .iter()
        .fold(0_i64, |acc, it| acc.saturating_add(it.max_share.get(t)));
    let avail = total_max.min(total.saturating_sub(taken).max(0));

    // Terminates: at R = +inf every flexible share is its max, so used(R) = total_max >= avail.
    let mut r_max = 1.0_f64;
    while used(&flex, r_max, t) < avail {
        r_max *= 2.0;
    }
    let mut left = 0.0_f64;
    let mut right = r_max;
    for _ in 0..SEARCH_ITERATIONS {
        let mid = (left + right) / 2.0;
        let u = used(&flex, mid, t);
        if u == avail {
            right = mid;
            break;
        } else if u < avail {
            left = mid;
        } else {
            right = mid;
        }
    }
    for (&i, it) in flexible.iter().zip(&flex) {
        shares[i] = share_at(it, right, t);
    }
    shares
}

/// The share of `item` if it does not take part in the ratio search, else `None`.
fn fixed_share(item: &ShareItem, t: usize, mode: ShareMode) -> Option<i64> {
    if item.max_share.get(t) <= 0 {
        return Some(0);
    }
    if mode == ShareMode::Instantaneous && !item.active {
        return Some(0);
    }
    // NaN counts as zero: Hadoop would let a NaN weight into the search, where it would never
    // use anything and the doubling loop would spin forever.
    if item.weight.is_nan() || item.weight <= 0.0 {
        return Some(item.min_share.get(t).max(0));
    }
    None
}

/// Total resources the flexible items would use at ratio `r` (saturating).
fn used(flex: &[&ShareItem], r: f64, t: usize) -> i64 {
    flex.iter()
        .fold(0_i64, |acc, it| acc.saturating_add(share_at(it, r, t)))
}

/// One item's share at ratio `r`: clamp `w r` into `[min, max]` (max wins) and truncate.
/// `as i64` truncates toward zero and saturates, like Java's `(long)` cast.
fn share_at(item: &ShareItem, r: f64, t: usize) -> i64 {
    let mut share = item.weight * r;
    let min = item.min_share.get(t) as f64;
    let max = item.max_share.get(t) as f64;
    if share < min {
        share = min;
    }
    if share > max {
        share = max;
    }
    share as i64
}

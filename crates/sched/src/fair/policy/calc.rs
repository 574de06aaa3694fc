//! Resource comparisons "under the policy's calculator" (Hadoop's ResourceCalculator as chosen
//! by each SchedulingPolicy): memory only for `fair` and `fifo` (DefaultResourceCalculator),
//! dominant shares for `drf` (DominantResourceCalculator).

use super::{signum, PolicyContext};
use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use std::cmp::Ordering;
use weft_config::PolicyKind;
use weft_types::MEMORY;

/// Hadoop's `checkIfUsageOverFairShare` (spec §5.1, §5.2): `fair` asks whether memory usage is
/// above the fair share's memory, `drf` whether usage does not fit in the fair share in some
/// component. Hadoop's `fifo` throws here; it is only ever asked of a parent's policy and a
/// parent cannot be `fifo`, so `fifo` answers like its (memory) calculator.
#[allow(dead_code)] // Preemption (the next round) asks this; tested here already.
pub(crate) fn usage_over_fair_share(
    policy: PolicyKind,
    usage: Resource,
    fair_share: Resource,
) -> bool {
    match policy {
        PolicyKind::Fair | PolicyKind::Fifo => usage.memory_mb() > fair_share.memory_mb(),
        PolicyKind::Drf => !usage.fits_in(&fair_share),
    }
}

/// Whether `usage` is strictly below `fair_share` under the policy's calculator, as Hadoop's
/// `FSAppAttempt.isStarvedForFairShare` asks it (`calculator.compare(cluster, usage, share,
/// singleType = true) < 0`). This is the fair-share half of "the app is starved" that gates
/// reservations (spec §6.4); min-share starvation is the caller's other half.
///
/// * `fair` / `fifo`: memory usage below the fair share's memory.
/// * `drf`: the largest usage share below the fair share's largest share (each share being
///   amount / cluster amount over the types in use); when the cluster has none of some type,
///   Hadoop falls back to component-wise dominance: below iff smaller in some component and
///   larger in none.
pub(crate) fn is_starved_for_reservation(
    policy: PolicyKind,
    usage: Resource,
    fair_share: Resource,
    ctx: &PolicyContext,
) -> bool {
    calculator_compare(policy, usage, fair_share, ctx, true) == Ordering::Less
}

/// Whether `ask` is at least the reservation threshold under the policy's calculator (Hadoop's
/// `FairScheduler.isAtLeastReservationThreshold`: `Resources.greaterThanOrEqual(calculator,
/// cluster, ask, threshold)`, spec §6.6).
///
/// * `fair` / `fifo`: `ask.memory >= threshold.memory`.
/// * `drf`: compares the descending-sorted share vectors lexicographically (the dominant share
///   first, then the next largest, ...); with a cluster lacking some type, component-wise
///   dominance as in [`is_starved_for_reservation`] (incomparable vectors count as equal, so
///   they pass).
pub(crate) fn at_least_threshold(
    policy: PolicyKind,
    ask: Resource,
    threshold: Resource,
    ctx: &PolicyContext,
) -> bool {
    calculator_compare(policy, ask, threshold, ctx, false) != Ordering::Less
}

/// Hadoop's `ResourceCalculator.compare(cluster, lhs, rhs, singleType)` for each policy.
pub(crate) fn calculator_compare(
    policy: PolicyKind,
    lhs: Resource,
    rhs: Resource,
    ctx: &PolicyContext,
    single_type: bool,
) -> Ordering {
    match policy {
        PolicyKind::Fair | PolicyKind::Fifo => lhs.memory_mb().cmp(&rhs.memory_mb()),
        PolicyKind::Drf => dominant_compare(lhs, rhs, ctx, single_type),
    }
}

/// DominantResourceCalculator's comparison over the resource types in use.
fn dominant_compare(
    lhs: Resource,
    rhs: Resource,
    ctx: &PolicyContext,
    single_type: bool,
) -> Ordering {
    let n = ctx.types();
    let types = MEMORY..n;
    if types.clone().all(|i| lhs.get(i) == rhs.get(i)) {
        return Ordering::Equal;
    }
    if types.clone().any(|i| ctx.cluster.get(i) == 0) {
        return componentwise(lhs, rhs, n);
    }
    let mut ls = [0.0_f64; MAX_RESOURCE_TYPES];
    let mut rs = [0.0_f64; MAX_RESOURCE_TYPES];
    for i in types {
        let c = ctx.cluster.get(i) as f64;
        ls[i] = lhs.get(i) as f64 / c;
        rs[i] = rhs.get(i) as f64 / c;
    }
    if single_type {
        // Hadoop's running maximum starts at 0, so negative shares never count.
        let max = |s: &[f64]| s.iter().fold(0.0_f64, |m, &x| if x > m { x } else { m });
        return signum(max(&ls[..n]) - max(&rs[..n]));
    }
    let desc = |a: &f64, b: &f64| b.partial_cmp(a).unwrap_or(Ordering::Equal);
    ls[..n].sort_by(desc);
    rs[..n].sort_by(desc);
    ls[..n]
        .iter()
        .zip(&rs[..n])
        .map(|(l, r)| signum(l - r))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

/// Greater if larger in some component and smaller in none; Less the other way; else Equal.
fn componentwise(lhs: Resource, rhs: Resource, n: usize) -> Ordering {
    let greater = (MEMORY..n).any(|i| lhs.get(i) > rhs.get(i));
    let smaller = (MEMORY..n).any(|i| lhs.get(i) < rhs.get(i));
    match (greater, smaller) {
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

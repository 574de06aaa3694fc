//! The `fair` comparator (spec §5.1, Hadoop's FairSharePolicy): memory only.

use super::{ordered_bits, signum, weight_of, SchedView, KEY_LEVELS};
use std::cmp::Ordering;

/// Levels 1-3 of spec §5.1 (start time and tie-break are applied by the caller).
pub(super) fn compare(a: &SchedView, b: &SchedView) -> Ordering {
    compare_demand(a, b)
        .then_with(|| compare_min_share(a, b))
        .then_with(|| compare_usage_to_weight(a, b))
}

/// A schedulable without memory demand goes after one with demand.
fn compare_demand(a: &SchedView, b: &SchedView) -> Ordering {
    match (has_demand(a), has_demand(b)) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// Needy (usage below min(min share, demand)) first; two needy ones by usage / min share.
fn compare_min_share(a: &SchedView, b: &SchedView) -> Ordering {
    match (needy(a), needy(b)) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => Ordering::Equal,
        (true, true) => signum(min_share_ratio(a) - min_share_ratio(b)),
    }
}

/// Usage / weight, smaller first; a zero weight loses to a positive one, and two equal
/// non-positive weights fall back to raw usage. Unequal non-positive weights compare by
/// negated weight, as Hadoop does (the larger weight first).
fn compare_usage_to_weight(a: &SchedView, b: &SchedView) -> Ordering {
    let (wa, wb) = (weight_of(a), weight_of(b));
    let (ua, ub) = (usage(a), usage(b));
    let (ra, rb) = if wa > 0.0 && wb > 0.0 {
        (ua / wa, ub / wb)
    } else if wa == wb {
        (ua, ub)
    } else {
        (-wa, -wb)
    };
    signum(ra - rb)
}

/// The key: [demand class, needy class, needy ratio, weight class, primary, secondary].
///
/// Each level is a total order whose ties are exactly the comparator's ties: non-needy views
/// all share the ratio word 0, positive weights compare only by usage / weight, and
/// non-positive weights by (negated weight, usage).
pub(super) fn key(v: &SchedView) -> [u64; KEY_LEVELS] {
    key_of(
        v.demand.memory_mb(),
        v.usage.memory_mb(),
        v.min_share.memory_mb(),
        weight_of(v),
    )
}

/// [`key`] from the only numbers it reads: memory demand, usage and min share, and the weight
/// (NaN already read as 0). The re-keys call this directly, without building a view.
#[inline]
pub(super) fn key_of(demand_mb: i64, usage_mb: i64, min_mb: i64, w: f64) -> [u64; KEY_LEVELS] {
    let mut k = [0; KEY_LEVELS];
    k[0] = u64::from(demand_mb <= 0);
    let effective_min = min_mb.min(demand_mb);
    let is_needy = usage_mb < effective_min;
    k[1] = u64::from(!is_needy);
    let usage = usage_mb as f64;
    if is_needy {
        let ratio = if effective_min > 1 {
            usage / effective_min as f64
        } else {
            usage
        };
        k[2] = ordered_bits(ratio);
    }
    if w > 0.0 {
        k[4] = ordered_bits(usage / w);
    } else {
        k[3] = 1;
        k[4] = ordered_bits(-w);
        k[5] = ordered_bits(usage);
    }
    k
}

/// Memory demand above zero (a negative demand, which cannot occur, counts as none).
fn has_demand(v: &SchedView) -> bool {
    v.demand.memory_mb() > 0
}

/// The min share that counts: never more than the demand.
fn effective_min_share(v: &SchedView) -> i64 {
    v.min_share.memory_mb().min(v.demand.memory_mb())
}

fn needy(v: &SchedView) -> bool {
    v.usage.memory_mb() < effective_min_share(v)
}

/// Usage over the effective min share, dividing only when that is above 1 (as Hadoop does).
fn min_share_ratio(v: &SchedView) -> f64 {
    let m = effective_min_share(v);
    if m > 1 {
        usage(v) / m as f64
    } else {
        usage(v)
    }
}

fn usage(v: &SchedView) -> f64 {
    v.usage.memory_mb() as f64
}

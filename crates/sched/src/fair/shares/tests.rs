//! Scenarios of Hadoop's TestComputeFairShares / TestFairSchedulerFairShare, with the expected
//! numbers worked out by hand from spec §4.1 (the bisection steps are noted where they matter).

use super::*;
use proptest::prelude::*;
use weft_types::VCORES;

/// An always-active item with min share `min` and max share `max` (memory and vcores alike).
fn item(min: i64, max: i64, weight: f64) -> ShareItem {
    ShareItem {
        weight,
        min_share: Resource::new(min, min),
        max_share: Resource::new(max, max),
        active: true,
        start_time: 0,
        tiebreak: 0,
    }
}

fn unbounded(min: i64, weight: f64) -> ShareItem {
    ShareItem {
        max_share: Resource::UNBOUNDED,
        ..item(min, 0, weight)
    }
}

fn mem(items: &[ShareItem], total: i64) -> Vec<i64> {
    compute_shares(items, total, MEMORY, ShareMode::Instantaneous)
}

#[test]
fn equal_sharing() {
    // rMax doubles to 16 (used 64 >= 40); mid 8 -> 32 <, mid 12 -> 48 >, mid 10 -> 40 == stop.
    let items = vec![unbounded(0, 1.0); 4];
    assert_eq!(mem(&items, 40), vec![10, 10, 10, 10]);
}

#[test]
fn low_max_shares() {
    let items = [
        item(0, 100, 1.0),
        item(0, 50, 1.0),
        item(0, 11, 1.0),
        item(0, 3, 1.0),
    ];
    assert_eq!(mem(&items, 40), vec![13, 13, 11, 3]);
}

#[test]
fn min_shares() {
    // rMax = 1 (used 41 >= 40); mid 0.5 -> 20 + 18 + 0 + 2 == 40, so R = 0.5.
    let items = [
        unbounded(20, 1.0),
        unbounded(18, 1.0),
        unbounded(0, 1.0),
        unbounded(2, 1.0),
    ];
    assert_eq!(mem(&items, 40), vec![20, 18, 0, 2]);
}

#[test]
fn weighted_sharing() {
    let items = [
        unbounded(0, 2.0),
        unbounded(0, 1.0),
        unbounded(0, 1.0),
        unbounded(0, 0.5),
    ];
    assert_eq!(mem(&items, 45), vec![20, 10, 10, 5]);
}

#[test]
fn weighted_sharing_with_max_shares() {
    let items = [
        item(0, 10, 2.0),
        item(0, 11, 1.0),
        item(0, 30, 1.0),
        item(0, 20, 0.5),
    ];
    assert_eq!(mem(&items, 45), vec![10, 11, 16, 8]);
}

#[test]
fn weighted_sharing_with_min_shares() {
    let items = [
        unbounded(20, 2.0),
        unbounded(0, 1.0),
        unbounded(5, 1.0),
        unbounded(15, 0.5),
    ];
    assert_eq!(mem(&items, 45), vec![20, 5, 5, 15]);
}

#[test]
fn large_shares() {
    let m = 1_000_000;
    let items = vec![unbounded(0, 1.0); 4];
    assert_eq!(mem(&items, 40 * m), vec![10 * m; 4]);
}

#[test]
fn empty_list() {
    assert!(mem(&[], 40).is_empty());
    assert!(policy_shares(
        PolicyKind::Fifo,
        &[],
        Resource::new(1, 1),
        ShareMode::Instantaneous,
        2
    )
    .is_empty());
}

#[test]
fn cpu_type_is_independent_of_memory() {
    let items = [
        unbounded(20, 2.0),
        unbounded(0, 1.0),
        unbounded(5, 1.0),
        unbounded(15, 0.5),
    ];
    let cpu = compute_shares(&items, 45, VCORES, ShareMode::Instantaneous);
    assert_eq!(cpu, vec![20, 5, 5, 15]);
}

#[test]
fn min_shares_exceeding_total_are_all_honoured() {
    // used(1) = 60 >= 40 so rMax = 1 and R shrinks towards 0; every item keeps its min.
    let items = [unbounded(30, 1.0), unbounded(30, 1.0)];
    assert_eq!(mem(&items, 40), vec![30, 30]);
}

#[test]
fn zero_weights_get_their_min_share_and_truncation_overshoots() {
    // Fixed: 5 and 0, so 15 is left for the two flexible items. rMax = 8 (used 16 >= 15) and
    // every mid below 8 uses 14 < 15, so `right` stays 8: each flexible item gets 8 (sum 16).
    let items = [
        unbounded(5, 0.0),
        unbounded(0, 0.0),
        unbounded(0, 1.0),
        unbounded(0, 1.0),
    ];
    assert_eq!(mem(&items, 20), vec![5, 0, 8, 8]);
    // A negative weight behaves like zero; a negative min share is floored at 0.
    let items = [unbounded(-3, -1.0), unbounded(4, 0.0), unbounded(0, 1.0)];
    assert_eq!(mem(&items, 10), vec![0, 4, 6]);
}

#[test]
fn zero_max_and_inactive_are_fixed_at_zero() {
    let mut inactive = unbounded(50, 1.0);
    inactive.active = false;
    let items = [item(10, 0, 1.0), inactive, unbounded(0, 1.0)];
    // Instantaneous: only the last one is flexible and takes everything.
    assert_eq!(mem(&items, 100), vec![0, 0, 100]);
    // Steady ignores activity (the zero max still fixes the first at 0): the inactive one keeps
    // its min of 50 while R < 50, so the two split 100 evenly at R = 50.
    let steady = compute_shares(&items, 100, MEMORY, ShareMode::Steady);
    assert_eq!(steady, vec![0, 50, 50]);
}

#[test]
fn fixed_shares_reduce_what_is_available() {
    // The zero-weight min (70) is taken first; 30 remains for the flexible pair.
    let items = [unbounded(70, 0.0), unbounded(0, 1.0), unbounded(0, 2.0)];
    assert_eq!(mem(&items, 100), vec![70, 10, 20]);
    // Fixed shares above the total leave nothing (avail is floored at 0): R -> 0.
    let items = [unbounded(170, 0.0), unbounded(0, 1.0), unbounded(0, 2.0)];
    assert_eq!(mem(&items, 100), vec![170, 0, 0]);
}

#[test]
fn values_near_i64_max_saturate_instead_of_overflowing() {
    // Hadoop's "no infinite loop" test with long values: two min shares of Long.MAX.
    let items = [unbounded(i64::MAX, 1.0), unbounded(i64::MAX, 1.0)];
    assert_eq!(mem(&items, i64::MAX), vec![i64::MAX, i64::MAX]);
    // Four unbounded items over Long.MAX: rMax = 2^61 makes used saturate at Long.MAX; every
    // mid below it uses < Long.MAX, so R stays 2^61.
    let items = vec![unbounded(0, 1.0); 4];
    assert_eq!(mem(&items, i64::MAX), vec![1_i64 << 61; 4]);
    // Saturating fixed sum: two zero-weight items with huge mins.
    let items = [
        unbounded(i64::MAX, 0.0),
        unbounded(i64::MAX, 0.0),
        unbounded(0, 1.0),
    ];
    assert_eq!(mem(&items, 1000), vec![i64::MAX, i64::MAX, 0]);
}

#[test]
fn drf_truncation_gives_each_of_two_one_vcore() {
    // TestFairSchedulerFairShare's DRF case: 1 vcore between two equal children. Every mid
    // below 1 uses 0 < 1, so `right` stays at rMax = 1 and both get 1.
    let items = [unbounded(0, 1.0), unbounded(0, 1.0)];
    let out = policy_shares(
        PolicyKind::Drf,
        &items,
        Resource::new(8192, 1),
        ShareMode::Instantaneous,
        2,
    );
    assert_eq!(out, vec![Some(Resource::new(4096, 1)); 2]);
}

#[test]
fn fair_policy_sets_memory_only() {
    let items = [unbounded(0, 1.0), unbounded(0, 1.0)];
    let out = policy_shares(
        PolicyKind::Fair,
        &items,
        Resource::new(8192, 8).with(2, 4),
        ShareMode::Instantaneous,
        3,
    );
    assert_eq!(out, vec![Some(Resource::new(4096, 0)); 2]);
}

#[test]
fn drf_covers_custom_types_below_resource_types_only() {
    let items = [unbounded(0, 1.0), unbounded(0, 3.0)];
    let total = Resource::new(400, 40).with(2, 8).with(3, 100);
    let out = policy_shares(PolicyKind::Drf, &items, total, ShareMode::Steady, 3);
    assert_eq!(
        out,
        vec![
            Some(Resource::new(100, 10).with(2, 2)),
            Some(Resource::new(300, 30).with(2, 6)),
        ]
    );
}

#[test]
fn fifo_gives_everything_to_the_earliest() {
    let mut a = unbounded(0, 1.0);
    a.start_time = 5;
    a.tiebreak = 1;
    let mut b = a;
    b.start_time = 3;
    b.tiebreak = 9;
    let mut c = a;
    c.start_time = 3;
    c.tiebreak = 2;
    let total = Resource::new(1000, 10);
    let out = policy_shares(
        PolicyKind::Fifo,
        &[a, b, c],
        total,
        ShareMode::Instantaneous,
        2,
    );
    assert_eq!(out, vec![None, None, Some(total)]);
    let steady = policy_shares(PolicyKind::Fifo, &[a, b, c], total, ShareMode::Steady, 2);
    assert_eq!(steady, vec![None, None, None]);
}

#[test]
fn steady_share_example_of_spec_4_3() {
    // root{parentA w=8 {4 leaves}, parentB w=1 {2 leaves}, default w=1}, 16384 MB.
    // Root level: bisection ends at R = 1638.5 where 13108 + 1638 + 1638 == 16384.
    let q = |w: f64| ShareItem {
        active: false,
        ..unbounded(0, w)
    };
    let cluster = Resource::new(16384, 16);
    let root = policy_shares(
        PolicyKind::Fair,
        &[q(8.0), q(1.0), q(1.0)],
        cluster,
        ShareMode::Steady,
        2,
    );
    let mems: Vec<i64> = root.iter().flatten().map(|r| r.memory_mb()).collect();
    assert_eq!(mems, vec![13108, 1638, 1638]);

    let a_leaves = compute_shares(&[q(1.0); 4], mems[0], MEMORY, ShareMode::Steady);
    assert_eq!(a_leaves, vec![3277; 4]); // 0.2 x 16384 = 3276.8
    let b_leaves = compute_shares(&[q(1.0); 2], mems[1], MEMORY, ShareMode::Steady);
    assert_eq!(b_leaves, vec![819; 2]); // 0.05 x 16384 = 819.2

    // The same queues, all inactive, get nothing instantaneously.
    let inst = compute_shares(&[q(8.0), q(1.0)], 16384, MEMORY, ShareMode::Instantaneous);
    assert_eq!(inst, vec![0, 0]);
}

proptest! {
    /// With positive weights, unbounded maxima and mins that fit, every share honours its min
    /// and the shares add up to the total, overshooting by less than one unit per item.
    #[test]
    fn fair_shares_sum_to_total_within_n(
        specs in prop::collection::vec((0.1_f64..10.0, 0_i64..2_000), 1..8),
        extra in 0_i64..(1 << 20),
    ) {
        let items: Vec<ShareItem> = specs.iter().map(|&(w, m)| unbounded(m, w)).collect();
        let min_sum: i64 = specs.iter().map(|s| s.1).sum();
        let total = min_sum + extra;
        let out = policy_shares(
            PolicyKind::Fair,
            &items,
            Resource::new(total, 0),
            ShareMode::Instantaneous,
            2,
        );
        let shares: Vec<i64> = out.iter().map(|r| r.map_or(-1, |r| r.memory_mb())).collect();
        let sum: i64 = shares.iter().sum();
        let n = items.len() as i64;
        prop_assert!(sum >= total && sum < total + n, "sum {} total {} n {}", sum, total, n);
        for (s, it) in shares.iter().zip(&items) {
            prop_assert!(*s >= it.min_share.memory_mb());
        }
    }
}

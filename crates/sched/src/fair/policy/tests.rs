//! Comparator scenarios (after Hadoop's TestFairSharePolicy, TestDominantResourceFairnessPolicy,
//! TestSchedulingPolicy) and the properties that tie [`sort_key`] to [`compare`].

use super::calc::usage_over_fair_share;
use super::*;
use proptest::prelude::*;
use weft_config::PolicyKind::{Drf, Fair, Fifo};

fn view(usage: Resource, min_share: Resource, weight: f64) -> SchedView {
    SchedView {
        demand: Resource::new(1 << 30, 1 << 20),
        usage,
        min_share,
        weight,
        start_time: 0,
        tiebreak: 0,
    }
}

fn mem(usage: i64) -> SchedView {
    view(Resource::new(usage, 0), Resource::ZERO, 1.0)
}

fn ctx(mem: i64, vcores: i64) -> PolicyContext {
    PolicyContext {
        cluster: Resource::new(mem, vcores),
        resource_types: 2,
    }
}

/// Asserts `a` is served before `b`, by both the comparator and the key, in both directions.
fn assert_first(policy: PolicyKind, a: &SchedView, b: &SchedView, c: &PolicyContext) {
    assert_eq!(
        compare(policy, a, b, c),
        Ordering::Less,
        "compare {a:?} {b:?}"
    );
    assert_eq!(
        compare(policy, b, a, c),
        Ordering::Greater,
        "compare {b:?} {a:?}"
    );
    assert!(
        sort_key(policy, a, c) < sort_key(policy, b, c),
        "key {a:?} {b:?}"
    );
}

#[test]
fn fair_no_demand_goes_last() {
    let c = ctx(8192, 8);
    let mut idle = mem(0);
    idle.demand = Resource::ZERO;
    idle.tiebreak = 0;
    let mut busy = mem(4096);
    busy.tiebreak = 1;
    assert_first(Fair, &busy, &idle, &c);
}

#[test]
fn fair_min_share_neediness() {
    let c = ctx(8192, 8);
    // Hadoop's example: A has 8 of a min share of 10, B 50 of 100: B (50%) before A (80%).
    let a = view(Resource::new(8, 0), Resource::new(10, 0), 1.0);
    let mut b = view(Resource::new(50, 0), Resource::new(100, 0), 1.0);
    b.tiebreak = 1;
    assert_first(Fair, &b, &a, &c);
    // A needy schedulable goes before a non-needy one with far less usage.
    let mut low = mem(1);
    low.tiebreak = 2;
    assert_first(Fair, &b, &low, &c);
    // The min share counts only up to the demand: min 100 with demand 10 and usage 20 is
    // not needy, so plain usage decides against a usage of 15.
    let mut capped = view(Resource::new(20, 0), Resource::new(100, 0), 1.0);
    capped.demand = Resource::new(10, 0);
    assert_first(Fair, &mem(15), &capped, &c);
    // With an effective min share of 1 the ratio is the raw usage (0 here) rather than 0/1.
    let mut tiny = view(Resource::ZERO, Resource::new(1, 0), 1.0);
    tiny.tiebreak = 5;
    let mut half = view(Resource::new(1, 0), Resource::new(4, 0), 1.0);
    half.tiebreak = 4;
    assert_first(Fair, &tiny, &half, &c);
}

#[test]
fn fair_usage_to_weight_and_zero_weights() {
    let c = ctx(8192, 8);
    let mut heavy = view(Resource::new(3000, 0), Resource::ZERO, 2.0);
    heavy.tiebreak = 1;
    assert_first(Fair, &heavy, &mem(2000), &c); // 1500 < 2000
                                                // A zero weight goes after any positive weight, whatever the usage.
    let mut zero = view(Resource::ZERO, Resource::ZERO, 0.0);
    zero.tiebreak = 0;
    let mut big = mem(1 << 20);
    big.tiebreak = 9;
    assert_first(Fair, &big, &zero, &c);
    // Two zero weights compare raw usage; -0.0 is the same weight as 0.0.
    let mut zero2 = view(Resource::new(5, 0), Resource::ZERO, -0.0);
    zero2.tiebreak = 0;
    zero.tiebreak = 1;
    assert_first(Fair, &zero, &zero2, &c);
    // A NaN weight reads as 0.
    let nan = view(Resource::new(5, 0), Resource::ZERO, f64::NAN);
    assert_eq!(compare(Fair, &nan, &zero2, &c), Ordering::Equal);
    assert_eq!(sort_key(Fair, &nan, &c), sort_key(Fair, &zero2, &c));
}

#[test]
fn ties_fall_to_start_time_then_tiebreak() {
    let c = ctx(8192, 8);
    for policy in [Fair, Drf, Fifo] {
        let mut a = mem(100);
        let mut b = mem(100);
        a.start_time = 5;
        a.tiebreak = 1;
        b.start_time = 7;
        b.tiebreak = 0;
        assert_first(policy, &a, &b, &c);
        b.start_time = 5;
        assert_first(policy, &b, &a, &c);
        assert_eq!(compare(policy, &a, &a, &c), Ordering::Equal);
    }
}

#[test]
fn fifo_ignores_usage_and_shares() {
    let c = ctx(8192, 8);
    let mut early = view(Resource::new(8000, 8), Resource::ZERO, 0.0);
    early.start_time = 1;
    early.tiebreak = 9;
    let mut late = mem(0);
    late.start_time = 2;
    assert_first(Fifo, &early, &late, &c);
}

#[test]
fn drf_scenarios() {
    let u = |m, v| Resource::new(m, v);
    let s = |m, v| view(u(m, v), Resource::ZERO, 1.0);
    let sw = |m, v, w| view(u(m, v), Resource::ZERO, w);
    let sm = |m, v, mm, mv| view(u(m, v), u(mm, mv), 1.0);
    let later = |mut v: SchedView| {
        v.tiebreak = 1;
        v
    };
    // Same dominant resource.
    assert_first(Drf, &s(1000, 1), &later(s(2000, 1)), &ctx(8000, 4));
    // Different dominant resources: 4000/8000 = 0.5 < 5/8.
    assert_first(Drf, &s(4000, 3), &later(s(2000, 5)), &ctx(8000, 8));
    // One is needy (its dominant vcores 5 < min 6).
    assert_first(
        Drf,
        &sm(2000, 5, 0, 6),
        &later(sm(4000, 3, 0, 0)),
        &ctx(8000, 8),
    );
    // Neither needy with zero min shares: dominant shares 0.25 vs 0.5.
    assert_first(Drf, &s(2000, 5), &later(s(4000, 3)), &ctx(8000, 100));
    // Both needy: dominant min share ratios 2/3 vs 4/5.
    assert_first(
        Drf,
        &sm(2000, 5, 3000, 6),
        &later(sm(4000, 3, 5000, 4)),
        &ctx(8000, 100),
    );
    // Weights divide the shares.
    assert_first(Drf, &sw(3000, 1, 2.0), &later(s(2000, 1)), &ctx(8000, 8));
    assert_first(Drf, &sw(1000, 3, 2.0), &later(s(1000, 2)), &ctx(8000, 8));
    assert_first(Drf, &sw(1000, 3, 2.0), &later(s(2000, 1)), &ctx(8000, 8));
    assert_first(Drf, &sw(3000, 1, 2.0), &later(s(1000, 2)), &ctx(8000, 8));
    // Equal dominant shares: the non-dominant share decides.
    assert_first(Drf, &s(4000, 1), &later(s(4000, 2)), &ctx(8000, 8));
    // Cluster changes flip the order: [1/2, 1/5] vs [1/4, 2/5], then [1/4, 1/6] vs [1/8, 1/3].
    assert_first(Drf, &s(1000, 2), &later(s(2000, 1)), &ctx(4000, 5));
    assert_first(Drf, &later(s(2000, 1)), &s(1000, 2), &ctx(8000, 6));
    // A zero weight goes after everyone, even with no usage.
    assert_first(Drf, &later(s(8000, 8)), &sw(0, 0, 0.0), &ctx(8000, 8));
}

#[test]
fn drf_neediness_uses_each_ones_own_usage() {
    // Hadoop's old two-type comparator tested b's min share against a's usage: here a uses
    // 100 vcores (dominant) and b's dominant vcores usage 1 is below its min of 2, so b is
    // needy and goes first; the buggy form would have found b not needy.
    let c = ctx(1000, 200);
    let a = view(Resource::new(0, 100), Resource::ZERO, 1.0);
    let mut b = view(Resource::new(0, 1), Resource::new(0, 2), 1.0);
    b.tiebreak = 1;
    assert_first(Drf, &b, &a, &c);
}

#[test]
fn drf_positional_form_with_custom_types() {
    let c = PolicyContext {
        cluster: Resource::new(100, 10).with(2, 10),
        resource_types: 3,
    };
    // Shares a = [0.1, 0.5, 0.4], b = [0.3, 0.2, 0.5]: sorted 0.5/0.4/0.1 vs 0.5/0.3/0.2, so
    // the first position ties and b's second (0.3) beats a's (0.4).
    let a = view(Resource::new(10, 5).with(2, 4), Resource::ZERO, 1.0);
    let mut b = view(Resource::new(30, 2).with(2, 5), Resource::ZERO, 1.0);
    b.tiebreak = 1;
    assert_first(Drf, &b, &a, &c);
    // Only the types in use count: with two, a = [0.1, 0.5] and b = [0.3, 0.2].
    let two = PolicyContext {
        resource_types: 2,
        ..c
    };
    assert_first(Drf, &b, &a, &two);
    let mut a1 = a;
    a1.usage = Resource::new(10, 1).with(2, 10);
    assert_first(Drf, &a1, &b, &two);
}

#[test]
fn usage_over_fair_share_per_policy() {
    let share = Resource::new(1000, 10);
    assert!(usage_over_fair_share(Fair, Resource::new(1001, 0), share));
    assert!(!usage_over_fair_share(Fair, Resource::new(1000, 99), share));
    assert!(usage_over_fair_share(Drf, Resource::new(1000, 11), share));
    assert!(!usage_over_fair_share(Drf, Resource::new(1000, 10), share));
}

#[test]
fn starvation_under_each_calculator() {
    let c = ctx(10_000, 100);
    let share = Resource::new(5000, 10);
    assert!(is_starved_for_reservation(
        Fair,
        Resource::new(4999, 99),
        share,
        &c
    ));
    assert!(!is_starved_for_reservation(
        Fifo,
        Resource::new(5000, 0),
        share,
        &c
    ));
    // drf: dominant 0.4 (memory) < fair share's 0.5.
    assert!(is_starved_for_reservation(
        Drf,
        Resource::new(4000, 30),
        share,
        &c
    ));
    // drf: dominant vcores 0.6 > 0.5 although memory is below.
    assert!(!is_starved_for_reservation(
        Drf,
        Resource::new(1000, 60),
        share,
        &c
    ));
    // Single type: equal dominant shares are not "below", whatever the other type says.
    assert!(!is_starved_for_reservation(
        Drf,
        Resource::new(5000, 1),
        share,
        &c
    ));
    assert!(!is_starved_for_reservation(Drf, share, share, &c));
    // A cluster with no vcores falls back to component-wise dominance.
    let empty = ctx(10_000, 0);
    assert!(is_starved_for_reservation(
        Drf,
        Resource::new(1, 10),
        share,
        &empty
    ));
    assert!(!is_starved_for_reservation(
        Drf,
        Resource::new(1, 11),
        share,
        &empty
    ));
}

#[test]
fn reservation_threshold_under_each_calculator() {
    let c = ctx(8192, 8);
    let threshold = Resource::new(2048, 2);
    assert!(at_least_threshold(
        Fair,
        Resource::new(2048, 1),
        threshold,
        &c
    ));
    assert!(!at_least_threshold(
        Fifo,
        Resource::new(2047, 8),
        threshold,
        &c
    ));
    // drf: the threshold's shares are [0.25, 0.25]; (1024, 2) has [0.125, 0.25], so its
    // dominant share ties and its second share is smaller.
    assert!(!at_least_threshold(
        Drf,
        Resource::new(1024, 1),
        threshold,
        &c
    ));
    assert!(!at_least_threshold(
        Drf,
        Resource::new(1024, 2),
        threshold,
        &c
    ));
    assert!(at_least_threshold(
        Drf,
        Resource::new(1024, 3),
        threshold,
        &c
    ));
    assert!(at_least_threshold(
        Drf,
        Resource::new(512, 4),
        threshold,
        &c
    ));
    // Equal dominant shares: the second share decides (non-single-type comparison).
    assert!(!at_least_threshold(
        Drf,
        Resource::new(2048, 1),
        threshold,
        &c
    ));
    assert!(at_least_threshold(Drf, threshold, threshold, &c));
    // Component-wise fallback: incomparable vectors count as equal, so they pass.
    let no_cpu = ctx(8192, 0);
    assert!(at_least_threshold(
        Drf,
        Resource::new(4096, 1),
        threshold,
        &no_cpu
    ));
    assert!(!at_least_threshold(
        Drf,
        Resource::new(2048, 1),
        threshold,
        &no_cpu
    ));
}

fn amount() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => 0_i64..4,
        1 => Just(-1_i64),
        1 => Just(1_i64 << 40),
        1 => Just(i64::MAX),
    ]
}

fn resource() -> impl Strategy<Value = Resource> {
    prop::array::uniform6(amount()).prop_map(|vals| {
        let mut r = Resource::ZERO;
        for (i, v) in vals.into_iter().enumerate() {
            r.set(i, v);
        }
        r
    })
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(0.5),
        Just(1.0),
        Just(2.0),
        Just(-1.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(1e-300),
        0.01_f64..10.0,
    ]
}

prop_compose! {
    fn sched_view()(
        demand in resource(),
        usage in resource(),
        min_share in resource(),
        weight in weight(),
        start_time in 0_u64..3,
        tiebreak in 0_u64..3,
    ) -> SchedView {
        SchedView { demand, usage, min_share, weight, start_time, tiebreak }
    }
}

prop_compose! {
    fn context()(
        cluster in resource(),
        resource_types in 0_usize..=MAX_RESOURCE_TYPES + 1,
    ) -> PolicyContext {
        PolicyContext { cluster, resource_types }
    }
}

fn policy() -> impl Strategy<Value = PolicyKind> {
    prop_oneof![Just(Fair), Just(Drf), Just(Fifo)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The crux of the fast path: key order is exactly the reference comparator's order.
    #[test]
    fn key_order_equals_compare(p in policy(), c in context(), a in sched_view(), b in sched_view()) {
        let expected = compare(p, &a, &b, &c);
        prop_assert_eq!(sort_key(p, &a, &c).cmp(&sort_key(p, &b, &c)), expected);
    }

    /// The fair key built from scalars is the view's key, and folded keys order as the keys
    /// do (the ordered sets compare folded words whenever both keys fold).
    #[test]
    fn fair_scalar_and_folded_keys_agree(c in context(), a in sched_view(), b in sched_view()) {
        let scalar = |v: &SchedView| fair_sort_key(
            v.demand.memory_mb(), v.usage.memory_mb(), v.min_share.memory_mb(), v.weight,
            v.start_time, v.tiebreak,
        );
        let (ka, kb) = (sort_key(Fair, &a, &c), sort_key(Fair, &b, &c));
        prop_assert_eq!(scalar(&a), ka);
        prop_assert_eq!(scalar(&b), kb);
        if let (Some(pa), Some(pb)) = (ka.packed(), kb.packed()) {
            prop_assert_eq!(pa.cmp(&pb), ka.cmp(&kb));
            prop_assert_ne!(pa, u128::MAX);
            // The sets keep only the word of a folded key.
            prop_assert_eq!(SortKey::from_packed(pa), ka);
            prop_assert_eq!(SortKey::from_packed(pb), kb);
        }
    }

    /// The comparator is a total order: reflexive, antisymmetric and transitive.
    #[test]
    fn compare_is_a_total_order(
        p in policy(),
        c in context(),
        a in sched_view(),
        b in sched_view(),
        d in sched_view(),
    ) {
        prop_assert_eq!(compare(p, &a, &a, &c), Ordering::Equal);
        prop_assert_eq!(compare(p, &a, &b, &c), compare(p, &b, &a, &c).reverse());
        let v = [a, b, d];
        for x in &v {
            for y in &v {
                for z in &v {
                    let xy = compare(p, x, y, &c);
                    let yz = compare(p, y, z, &c);
                    if xy != Ordering::Greater && yz != Ordering::Greater {
                        let xz = compare(p, x, z, &c);
                        prop_assert_ne!(xz, Ordering::Greater);
                        if xy == Ordering::Equal && yz == Ordering::Equal {
                            prop_assert_eq!(xz, Ordering::Equal);
                        }
                    }
                }
            }
        }
    }
}

/// A common `fair` key (not needy, positive weight, small start time and tie-break) folds, and
/// unfolds to itself; a needy one does not fold.
#[test]
fn common_fair_keys_fold_and_unfold() {
    let key = fair_sort_key(8192, 4096, 0, 2.0, 1_700_000_000_000 >> 4, 4242);
    let word = key.packed().expect("a plain fair key folds");
    assert_eq!(SortKey::from_packed(word), key);
    let needy = fair_sort_key(8192, 1024, 4096, 1.0, 0, 1);
    assert_eq!(needy.packed(), None);
}

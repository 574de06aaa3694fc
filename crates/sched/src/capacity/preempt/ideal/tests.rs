//! The ideal-allocation arithmetic on small trees, every figure derived by hand from capacity
//! spec §8.3-§8.4 (derivations beside each test). Memory and vcores are plain units here.

use crate::lanes::Resource;
use weft_config::capacity::ResourceCalculator;

use super::{compute, Knobs, TempQueue};
use crate::capacity::Calc;

fn r(memory: i64, vcores: i64) -> Resource {
    Resource::new(memory, vcores)
}

fn leaf(guaranteed: Resource, max: Resource, used: Resource, pending: Resource) -> TempQueue {
    TempQueue {
        used,
        pending,
        pending_deduct_reserved: pending,
        guaranteed,
        max,
        ..TempQueue::default()
    }
}

/// Root over `leaves`, its used and pending the leaves' sums.
fn tree(cluster: Resource, leaves: Vec<TempQueue>) -> Vec<TempQueue> {
    let used = leaves
        .iter()
        .fold(Resource::ZERO, |s, q| s.saturating_add(q.used));
    let pending = leaves
        .iter()
        .fold(Resource::ZERO, |s, q| s.saturating_add(q.pending));
    let mut root = leaf(cluster, cluster, used, pending);
    root.children = (1..=leaves.len()).collect();
    let mut out = vec![root];
    out.extend(leaves);
    out
}

fn knobs(total_allowed: Resource) -> Knobs {
    Knobs {
        total_allowed,
        max_ignored_over_capacity: 0.1,
        natural_termination_factor: 0.2,
    }
}

fn default_calc() -> Calc {
    Calc::new(ResourceCalculator::Default, 2)
}

fn memory(tree: &[TempQueue], f: impl Fn(&TempQueue) -> Resource) -> Vec<i64> {
    tree[1..].iter().map(|q| f(q).memory_mb()).collect()
}

/// Cluster 100; a (guaranteed 30) uses 60, b (30) uses 30 and wants 20 more, c (40) uses 10
/// and wants 10 more. Start: a = min(30, 60) = 30, b = 30, c = 10; unassigned 30.
/// Pass 1 (shares .3/.3/.4; ratios 1, 1, .25): c is offered 30 × .4 = 12, takes its demand
/// 10 -> 20; unassigned 20. Pass 2: c (ratio .5) is offered 8, needs nothing more, leaves.
/// Pass 3: a and b tie at ratio 1 (shares .5/.5 of 20): a takes 10 (-> 40), b takes nothing
/// (a leaf never grows past max(used, guaranteed) = 30). Pass 4: a takes the last 10 -> 50.
/// Needed 60 − 50 = 10, not above the round's cap 10: scale 1. a keeps max(min(60, 30), 50) =
/// 50 and is over it by 10; 60 > 30 × 1.1 = 33 (outside the dead zone), so this round takes
/// 10 × 0.2 = 2.
#[test]
fn default_calculator_water_fills_by_guarantee() {
    let cluster = r(100, 100);
    let mut t = tree(
        cluster,
        vec![
            leaf(r(30, 30), cluster, r(60, 1), r(0, 0)),
            leaf(r(30, 30), cluster, r(30, 1), r(20, 1)),
            leaf(r(40, 40), cluster, r(10, 1), r(10, 1)),
        ],
    );
    compute(&mut t, default_calc(), cluster, knobs(r(10, 10)));
    assert_eq!(memory(&t, |q| q.ideal), vec![50, 30, 20]);
    assert_eq!(memory(&t, |q| q.to_be_preempted), vec![10, 0, 0]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![2, 0, 0]);
}

/// As above with the round's cap 4 (below the 10 needed): scale 4 / 10 = .4, a's excess
/// becomes trunc(10 × .4) = 4 and this round takes 4 × .2 = .8, normalized up to 1.
#[test]
fn the_round_cap_scales_every_excess_down() {
    let cluster = r(100, 100);
    let mut t = tree(
        cluster,
        vec![
            leaf(r(30, 30), cluster, r(60, 1), r(0, 0)),
            leaf(r(30, 30), cluster, r(30, 1), r(20, 1)),
            leaf(r(40, 40), cluster, r(10, 1), r(10, 1)),
        ],
    );
    compute(&mut t, default_calc(), cluster, knobs(r(4, 4)));
    assert_eq!(memory(&t, |q| q.to_be_preempted), vec![4, 0, 0]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![1, 0, 0]);
}

/// a (guaranteed 50) uses 90; b (50, maximum 20) uses 10 and wants 80. Start a = 50, b = 10,
/// unassigned 40. b (ratio .2) is offered 40 × .5 = 20 but its maximum leaves room for 10 ->
/// 20; next pass it is offered 15 and takes nothing (at its maximum). a takes the other 30 ->
/// 80. a is over by 10 (scale 1 with cap 10), outside the dead zone (90 > 55): 2 this round.
/// Without the maximum b (always the lower ratio) grows 10 -> 30 -> 40 -> 45 ... to its
/// max(used, guaranteed) = 50 and a keeps 50: a is over by 40 and gives 40 × .2 = 8.
#[test]
fn maximum_capacity_limits_a_starved_queues_ideal() {
    let cluster = r(100, 100);
    let mut t = tree(
        cluster,
        vec![
            leaf(r(50, 50), cluster, r(90, 1), r(0, 0)),
            leaf(r(50, 50), r(20, 20), r(10, 1), r(80, 1)),
        ],
    );
    compute(&mut t, default_calc(), cluster, knobs(r(10, 10)));
    assert_eq!(memory(&t, |q| q.ideal), vec![80, 20]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![2, 0]);

    t[2].max = cluster;
    compute(&mut t, default_calc(), cluster, knobs(r(100, 100)));
    assert_eq!(memory(&t, |q| q.ideal), vec![50, 50]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![8, 0]);
}

/// a (guaranteed 30, preemption disabled) uses 60: its extra 30 is untouchable, so it starts
/// (and stays) at 30 + 30 = 60. b (30) uses 40, c (40) uses 0 and wants 40. Unassigned 10
/// goes to c in passes of 10 × 4/7 -> 6, 4 × 4/7 -> 2, 2 × 4/7 -> 1, 1 × 4/7 -> 1 (Default
/// rounds half up): c 10. b keeps max(min(40, 30), 30) = 30 and is over by 10; 40 > 33: 2
/// this round. a gives nothing.
#[test]
fn a_protected_leaf_keeps_its_extra_and_others_give() {
    let cluster = r(100, 100);
    let mut protected = leaf(r(30, 30), cluster, r(60, 1), r(0, 0));
    protected.preemption_disabled = true;
    let mut t = tree(
        cluster,
        vec![
            protected,
            leaf(r(30, 30), cluster, r(40, 1), r(0, 0)),
            leaf(r(40, 40), cluster, r(0, 0), r(40, 1)),
        ],
    );
    compute(&mut t, default_calc(), cluster, knobs(r(10, 10)));
    assert_eq!(memory(&t, |q| q.untouchable), vec![30, 0, 0]);
    assert_eq!(memory(&t, |q| q.ideal), vec![60, 30, 10]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![0, 2, 0]);
}

/// Within the dead zone: a (guaranteed 50) uses 55, not above 50 × 1.1 = 55, so although b
/// (50, using 45, wanting 10) is below its ideal, a gives nothing. At 56 it would.
#[test]
fn the_dead_zone_protects_a_queue_slightly_over() {
    let cluster = r(100, 100);
    let mut t = tree(
        cluster,
        vec![
            leaf(r(50, 50), cluster, r(55, 1), r(0, 0)),
            leaf(r(50, 50), cluster, r(45, 1), r(10, 1)),
        ],
    );
    compute(&mut t, default_calc(), cluster, knobs(r(100, 100)));
    assert_eq!(memory(&t, |q| q.to_be_preempted), vec![5, 0]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![0, 0]);
}

/// Dominant calculator, cluster (100, 100); a (guaranteed (50, 50)) uses (80, 20), b (50,
/// 50) uses (20, 20) and wants (40, 60). Start a = cwMin(guaranteed, used) = (50, 20), b =
/// (20, 20), unassigned (30, 60).
/// Pass 1: ratios a .5/.5 = 1, b .2/.5 = .4: b is offered ⌈(30, 60) × .5⌉ = (15, 30); its
/// room to max(used, guaranteed) is (30, 30), its demand (40, 60): takes (15, 30) -> (35, 50);
/// unassigned (15, 30).
/// Pass 2: both at ratio 1. a is offered (8, 15); its room is (80, 20) − (50, 20) = (30, 0),
/// which compares larger (dominant .3 against .15), so it takes (8, 15) -> (58, 35);
/// unassigned (7, 15). b is offered (8, 15) from the pass's (15, 30); its room (15, 0) ties
/// on the dominant share and is smaller on the second: takes (15, 0) -> (50, 50); unassigned
/// cwMax((−8, 15), 0) = (0, 15).
/// Pass 3: b (ratio 1 < a's 1.16) is offered (0, 8) with no room left: takes nothing.
/// Pass 4: a is offered (0, 15) and takes it -> (58, 50); unassigned 0.
/// a is over its ideal by (22, −30) (needed .22 of the cluster, under the cap .5: scale 1):
/// it keeps max_rc(min_rc((80, 20), (50, 50)), (58, 50)) = (58, 50); (80, 20) > (55, 55) so
/// outside the dead zone; this round ⌈(22, −30) × .2⌉ = (5, −6).
#[test]
fn dominant_calculator_compares_whole_vectors_by_dominant_share() {
    let cluster = r(100, 100);
    let mut t = tree(
        cluster,
        vec![
            leaf(r(50, 50), cluster, r(80, 20), r(0, 0)),
            leaf(r(50, 50), cluster, r(20, 20), r(40, 60)),
        ],
    );
    let calc = Calc::new(ResourceCalculator::Dominant, 2);
    compute(&mut t, calc, cluster, knobs(r(50, 50)));
    assert_eq!(t[1].ideal, r(58, 50));
    assert_eq!(t[2].ideal, r(50, 50));
    assert_eq!(t[1].to_be_preempted, r(22, -30));
    assert_eq!(t[1].to_obtain, r(5, -6));
    assert_eq!(t[2].to_obtain, Resource::ZERO);
}

/// A leaf over its guarantee under a parent within its own is protected (#testHierarchical):
/// p (guaranteed 50) holds a1 (25) using 40 and a2 (25) using 0; q (50) uses 50 and wants 50
/// more. Root level: p starts at its use 40, q at 50, unassigned 10; p (ratio .8) is offered
/// 5 and needs nothing (no pending below it), q takes nothing (a leaf stops at max(used,
/// guaranteed) = 50): p's ideal is 40. Inside p (40 to share): a1 starts at its guarantee 25,
/// a2 at 0, unassigned 15; a1 is offered all 15 and takes them (its use 40): no one is over.
/// q wants more but no queue gives: over-capacity leaves of a parent within its guarantee
/// keep what they hold.
#[test]
fn a_leaf_over_its_guarantee_under_a_parent_within_its_own_is_protected() {
    let cluster = r(100, 100);
    let a1 = leaf(r(25, 25), cluster, r(40, 1), r(0, 0));
    let a2 = leaf(r(25, 25), cluster, r(0, 0), r(0, 0));
    let mut p = leaf(r(50, 50), cluster, r(40, 1), r(0, 0));
    p.children = vec![3, 4];
    let q = leaf(r(50, 50), cluster, r(50, 1), r(50, 1));
    let mut root = leaf(cluster, cluster, r(90, 1), r(50, 1));
    root.children = vec![1, 2];
    let mut t = vec![root, p, q, a1, a2];
    compute(&mut t, default_calc(), cluster, knobs(r(100, 100)));
    assert_eq!(memory(&t, |q| q.ideal), vec![40, 50, 40, 0]);
    assert_eq!(memory(&t, |q| q.to_obtain), vec![0, 0, 0, 0]);
}

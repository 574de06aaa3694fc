//! The proportional policy's arithmetic (capacity spec §8.3-§8.4), over a snapshot of the
//! queue tree: each queue's preemptable and untouchable extra, the ideal allocation handed
//! down from the root level by level (water-filling the unassigned resources by guarantee,
//! capped by maximum capacity and demand), how much each queue is over it, and how much of
//! that each leaf gives back this round (dead zone, natural termination).
//!
//! Pure: no engine, so the unit tests below derive every figure by hand.

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};

use crate::capacity::Calc;

/// Safety bound on the water-filling passes of one level: each pass either gives some queue
/// at least one unit or ends, so real trees stop long before.
const MAX_PASSES: usize = 1 << 20;

/// One queue of the snapshot (Hadoop's `TempQueuePerPartition`, default partition only).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TempQueue {
    /// Indices of the children in the snapshot (empty for a leaf).
    pub(crate) children: Vec<usize>,
    /// Used resources, reservations included (spec §1.4).
    pub(crate) used: Resource,
    /// Pending considering user limits (a parent: the sum of its children's).
    pub(crate) pending: Resource,
    /// The same with each app's reservations deducted from its pending first.
    pub(crate) pending_deduct_reserved: Resource,
    /// `effMin` (root: the cluster).
    pub(crate) guaranteed: Resource,
    /// `effMax` (root: the cluster).
    pub(crate) max: Resource,
    /// `disable_preemption` (inherited).
    pub(crate) preemption_disabled: bool,
    // Computed by [`compute`]:
    pub(crate) untouchable: Resource,
    pub(crate) preemptable: Resource,
    pub(crate) ideal: Resource,
    /// What the queue is over its ideal (scaled to the round's cap).
    pub(crate) to_be_preempted: Resource,
    /// What the leaf gives back this round (0 for parents and protected leaves).
    pub(crate) to_obtain: Resource,
}

impl TempQueue {
    fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }
}

/// The round's settings the arithmetic reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Knobs {
    /// `totalPreemptionAllowed`: the cluster times `total_preemption_per_round`.
    pub(crate) total_allowed: Resource,
    /// `max_ignored_over_capacity` (the dead zone).
    pub(crate) max_ignored_over_capacity: f64,
    /// `natural_termination_factor`.
    pub(crate) natural_termination_factor: f64,
}

/// Fills every computed field of `tree` (index 0 is root, a parent before its children).
pub(crate) fn compute(tree: &mut [TempQueue], calc: Calc, cluster: Resource, knobs: Knobs) {
    if tree.is_empty() {
        return;
    }
    update_extras(tree, calc, cluster, 0);
    tree[0].ideal = tree[0].guaranteed;
    let mut level = vec![0usize];
    while let Some(parent) = level.pop() {
        let children = tree[parent].children.clone();
        if children.is_empty() {
            continue;
        }
        let tot = tree[parent].ideal;
        distribute(tree, &children, tot, calc, knobs.total_allowed);
        level.extend(children);
    }
    for q in tree.iter_mut() {
        q.to_obtain = Resource::ZERO;
        if !q.is_leaf() || q.preemption_disabled {
            continue;
        }
        let dead_zone = q
            .guaranteed
            .mul_trunc(1.0 + knobs.max_ignored_over_capacity);
        if !calc.gt(&cluster, &q.used, &dead_zone) {
            continue;
        }
        q.to_obtain = if calc.gt(&cluster, &q.to_be_preempted, &Resource::ZERO) {
            calc.multiply_normalize_up(
                q.to_be_preempted,
                knobs.natural_termination_factor,
                Resource::new(1, 1),
            )
        } else {
            q.to_be_preempted
        };
    }
}

/// `updatePreemptableExtras`, bottom up: what a queue holds over its guarantee, split into
/// what preemption may take (a leaf's extra unless it is protected; a parent's up to its
/// children's preemptable) and what it may not.
fn update_extras(tree: &mut [TempQueue], calc: Calc, cluster: Resource, at: usize) {
    let children = tree[at].children.clone();
    for c in &children {
        update_extras(tree, calc, cluster, *c);
    }
    let q = &tree[at];
    let mut extra = q.used.saturating_sub(q.guaranteed);
    if calc.lt(&cluster, &extra, &Resource::ZERO) {
        extra = Resource::ZERO;
    }
    let (untouchable, preemptable) = if children.is_empty() {
        if q.preemption_disabled {
            (extra, Resource::ZERO)
        } else {
            (Resource::ZERO, extra)
        }
    } else {
        let below = children.iter().fold(Resource::ZERO, |sum, c| {
            sum.saturating_add(tree[*c].preemptable)
        });
        let untouchable = if calc.ge(&cluster, &below, &extra) {
            Resource::ZERO
        } else {
            extra.saturating_sub(below)
        };
        (untouchable, calc.min(&cluster, below, extra))
    };
    let q = &mut tree[at];
    q.untouchable = untouchable;
    q.preemptable = preemptable;
}

/// `computeIdealResourceDistribution` for the children of one parent, whose ideal is `tot`.
fn distribute(
    tree: &mut [TempQueue],
    queues: &[usize],
    tot: Resource,
    calc: Calc,
    total_allowed: Resource,
) {
    let mut unassigned = tot;
    let (with_guarantee, without): (Vec<usize>, Vec<usize>) = queues
        .iter()
        .partition(|q| calc.gt(&tot, &tree[**q].guaranteed, &Resource::ZERO));
    fixpoint(tree, &with_guarantee, tot, &mut unassigned, calc, false);
    if !without.is_empty() && calc.gt(&tot, &unassigned, &Resource::ZERO) {
        fixpoint(tree, &without, tot, &mut unassigned, calc, true);
    }
    let mut needed = Resource::ZERO;
    for q in queues {
        let t = &tree[*q];
        if calc.gt(&tot, &t.used, &t.ideal) {
            needed = needed.saturating_add(t.used.saturating_sub(t.ideal));
        }
    }
    let scale = if calc.gt(&tot, &needed, &total_allowed) {
        calc.divide(&tot, &total_allowed, &needed)
    } else {
        1.0
    };
    for q in queues {
        let t = &mut tree[*q];
        // Killable containers (lazy preemption) are not modelled: used is what is kept.
        let min_keep = calc.max(
            &tot,
            calc.min(&tot, t.used.saturating_add(t.pending), t.guaranteed),
            t.ideal,
        );
        t.to_be_preempted = if calc.gt(&tot, &t.used, &min_keep) {
            t.used.saturating_sub(min_keep).mul_trunc(scale)
        } else {
            Resource::ZERO
        };
    }
}

/// `computeFixpointAllocation`: each queue starts from what it uses (at most its guarantee
/// plus what it may not lose); then, while resources are left, the most under-served queues
/// (lowest ideal over guarantee; all equal for the zero-guarantee group) are offered their
/// share of what is left and keep what they accept.
fn fixpoint(
    tree: &mut [TempQueue],
    queues: &[usize],
    tot: Resource,
    unassigned: &mut Resource,
    calc: Calc,
    equal_shares: bool,
) {
    let mut hungry: Vec<usize> = Vec::new();
    for q in queues {
        let t = &mut tree[*q];
        t.ideal = if calc.gt(&tot, &t.used, &t.guaranteed) {
            t.guaranteed.cw_min(t.used).saturating_add(t.untouchable)
        } else {
            t.used
        };
        *unassigned = unassigned.saturating_sub(t.ideal);
        if calc.lt(
            &tot,
            &t.ideal,
            &t.used.saturating_add(t.pending_deduct_reserved),
        ) {
            hungry.push(*q);
        }
    }
    let mut passes = 0;
    while !hungry.is_empty() && calc.gt(&tot, unassigned, &Resource::ZERO) && passes < MAX_PASSES {
        passes += 1;
        let shares = normalized_shares(tree, &hungry, equal_shares);
        let ratio = |q: usize| ideal_over_guaranteed(calc, tot, &tree[q]);
        let least = hungry
            .iter()
            .map(|q| ratio(*q))
            .fold(f64::INFINITY, f64::min);
        let (taken, rest): (Vec<(usize, [f64; MAX_RESOURCE_TYPES])>, Vec<_>) = hungry
            .iter()
            .copied()
            .zip(shares)
            .partition(|(q, _)| ratio(*q) == least);
        hungry = rest.into_iter().map(|(q, _)| q).collect();
        let for_round = *unassigned;
        for (q, share) in taken {
            if !unassigned.any_positive() {
                break;
            }
            let offer = multiply_normalize_up_by(calc, for_round, &share);
            let accepted = accept(tree, q, offer, tot, calc);
            tree[q].ideal = tree[q].ideal.saturating_add(accepted);
            if calc.gt(&tot, &accepted, &Resource::ZERO) {
                hungry.push(q);
            }
            *unassigned = unassigned.saturating_sub(accepted).cw_max(Resource::ZERO);
        }
    }
}

/// `TempQueuePerPartition.offer`: what a queue takes of `offer`: no more than its maximum
/// allows, than its use and demand need, and, for a leaf, than brings it to
/// max(used, guaranteed) (so queues over their guarantee never take from each other).
fn accept(tree: &[TempQueue], q: usize, offer: Resource, tot: Resource, calc: Calc) -> Resource {
    let t = &tree[q];
    let below_max = t.max.saturating_sub(t.ideal).cw_max(Resource::ZERO);
    let wanted = t
        .used
        .saturating_add(t.pending_deduct_reserved)
        .saturating_sub(t.ideal);
    let mut accepted = calc.min(&tot, below_max, calc.min(&tot, offer, wanted));
    if t.is_leaf() {
        let room = calc.max(
            &tot,
            calc.max(&tot, t.used, t.guaranteed).saturating_sub(t.ideal),
            Resource::ZERO,
        );
        accepted = calc.min(&tot, accepted, room);
    }
    accepted.cw_max(Resource::ZERO)
}

/// `ideal / guaranteed` by the calculator; a queue without a guarantee sorts last.
fn ideal_over_guaranteed(calc: Calc, tot: Resource, q: &TempQueue) -> f64 {
    if calc.gt(&tot, &q.guaranteed, &Resource::ZERO) {
        calc.divide(&tot, &q.ideal, &q.guaranteed)
    } else {
        f64::from(i32::MAX)
    }
}

/// Each hungry queue's share of what is left, per type: its guarantee over the hungry
/// queues' total guarantee, or one over their number.
fn normalized_shares(
    tree: &[TempQueue],
    hungry: &[usize],
    equal_shares: bool,
) -> Vec<[f64; MAX_RESOURCE_TYPES]> {
    if equal_shares {
        let each = 1.0 / hungry.len() as f64;
        return vec![[each; MAX_RESOURCE_TYPES]; hungry.len()];
    }
    let total = hungry.iter().fold(Resource::ZERO, |sum, q| {
        sum.saturating_add(tree[*q].guaranteed)
    });
    hungry
        .iter()
        .map(|q| {
            let mut share = [0.0; MAX_RESOURCE_TYPES];
            for (i, s) in share.iter_mut().enumerate() {
                if total.get(i) > 0 {
                    *s = tree[*q].guaranteed.get(i) as f64 / total.get(i) as f64;
                }
            }
            share
        })
        .collect()
}

/// `multiplyAndNormalizeUp(r, by[], step (1, 1))`: Default rounds memory half up (the
/// calculator's own rule), Dominant takes the ceiling of every type.
fn multiply_normalize_up_by(calc: Calc, r: Resource, by: &[f64; MAX_RESOURCE_TYPES]) -> Resource {
    if !calc.is_dominant() {
        return calc.multiply_normalize_up(r, by[0], Resource::new(1, 1));
    }
    let mut out = Resource::ZERO;
    for (i, f) in by.iter().enumerate() {
        out.set(i, (r.get(i) as f64 * f).ceil() as i64);
    }
    out
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests;

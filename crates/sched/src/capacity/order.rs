//! Orders (spec §6.3, §6.5): the fast path's keys and the reference walk's comparators, written
//! apart so the differential test compares two readings of the spec.
//!
//! Siblings: a child with a positive absolute capacity before one without; then the used value
//! (`usedCapacity`, or `absoluteUsedCapacity` between zero-capacity children) ascending; under
//! `priority-utilization`, between two children on the same side of their guarantee (both
//! below 1.0 or both at or above it) the higher priority first, which as a key is (side,
//! priority descending, used); then the larger absolute capacity; then configuration order.
//! Decision (spec §13.10): the tie on equal use compares absolute capacities in every mode,
//! also between two absolute-minimum children (whose absolute capacities follow their minimums).
//!
//! Apps: `fifo` by application priority (higher first), then application id; `fair` by memory
//! used ascending (over log2(1 + demand) with size-based weight), then application id.

use std::cmp::Ordering;

use crate::lanes::Resource;

use crate::order::key::{ordered_bits, SortKey, KEY_LEVELS};
use crate::queues::QueueId;
use crate::rules::{AppOf, QueueOf};

use super::{Capacity, CapacityEngine};

/// A queue's used value for ordering: used capacity, or absolute used capacity when its
/// absolute capacity is 0; 0 on an empty cluster.
fn used_value(e: &CapacityEngine, q: &QueueOf<Capacity>, used: Resource) -> f64 {
    let p = e.cluster;
    if p.is_zero() {
        return 0.0;
    }
    let calc = e.rules.calc;
    let v = if q.rules.abs_capacity > 0.0 {
        calc.divide(&p, &used, &e.guaranteed_of(q))
    } else {
        calc.divide(&p, &used, &p)
    };
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// [`used_value`] for the fast path's key, from the queue's kept usage and reservations:
/// under the Default calculator (which divides memory by memory) on memory alone, without
/// adding the whole vectors first.
fn kept_used_value(e: &CapacityEngine, q: &QueueOf<Capacity>) -> f64 {
    if e.rules.calc.is_dominant() {
        return used_value(e, q, q.usage.saturating_add(q.rules.reserved));
    }
    let p = e.cluster;
    if p.is_zero() {
        return 0.0;
    }
    let used = q
        .usage
        .memory_mb()
        .saturating_add(q.rules.reserved.memory_mb());
    let by = if q.rules.abs_capacity > 0.0 {
        e.guaranteed_of(q).memory_mb()
    } else {
        p.memory_mb()
    };
    let v = used as f64 / by as f64;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// Whether `parent` orders its children by priority-utilization.
fn by_priority(e: &CapacityEngine, parent: QueueId) -> bool {
    e.queues.get(parent).rules.children_by_priority
}

fn inverted_priority(priority: i32) -> u64 {
    (i64::from(i32::MAX) - i64::from(priority)) as u64
}

/// An app's fair-ordering magnitude.
fn magnitude(app: &AppOf<Capacity>, size_based: bool) -> f64 {
    let used = app.usage.memory_mb() as f64;
    if !size_based {
        return used;
    }
    let demand = used + app.outstanding_asks.memory_mb() as f64;
    let weight = (1.0 + demand).log2();
    if weight > 0.0 {
        used / weight
    } else {
        used
    }
}

impl CapacityEngine {
    /// The queue's key in its parent's candidates, from its kept usage and reservations.
    pub(crate) fn cs_queue_key(&self, parent: QueueId, q: &QueueOf<Capacity>) -> SortKey {
        let value = kept_used_value(self, q);
        if !by_priority(self, parent) {
            // (zero capacity, used, then absolute capacity descending and configuration order,
            // which `tie_rank` numbers): one word (`SortKey::two_level`), as the used value is
            // never negative.
            return SortKey::two_level(
                q.rules.abs_capacity <= 0.0,
                ordered_bits(value),
                q.rules.tie_rank,
            );
        }
        let mut levels = [0u64; KEY_LEVELS];
        levels[0] = u64::from(q.rules.abs_capacity <= 0.0);
        levels[1] = u64::from(value >= 1.0);
        levels[2] = inverted_priority(q.rules.priority);
        levels[3] = ordered_bits(value);
        levels[4] = u64::MAX - ordered_bits(q.rules.abs_capacity);
        SortKey::new(levels, 0, q.rules.config_rank)
    }

    /// One word (`SortKey::two_level`): the inverted priority with the top bit set, or the
    /// magnitude (never negative), then the application id.
    pub(crate) fn cs_app_key(&self, app: &AppOf<Capacity>) -> SortKey {
        let leaf = &self.queues.get(app.queue).rules;
        let value = if leaf.fair_leaf {
            ordered_bits(magnitude(app, leaf.size_based))
        } else {
            (1 << 63) | inverted_priority(app.rules.priority)
        };
        SortKey::two_level(false, value, app.id.0)
    }

    pub(crate) fn cs_compare_apps(
        &self,
        leaf: QueueId,
        a: &AppOf<Capacity>,
        b: &AppOf<Capacity>,
    ) -> Ordering {
        let rules = &self.queues.get(leaf).rules;
        let first = if rules.fair_leaf {
            magnitude(a, rules.size_based).total_cmp(&magnitude(b, rules.size_based))
        } else {
            b.rules.priority.cmp(&a.rules.priority)
        };
        first.then(a.id.cmp(&b.id))
    }

    pub(crate) fn cs_compare_queues(
        &self,
        parent: QueueId,
        (a, used_a): (&QueueOf<Capacity>, Resource),
        (b, used_b): (&QueueOf<Capacity>, Resource),
    ) -> Ordering {
        let (pos_a, pos_b) = (a.rules.abs_capacity > 0.0, b.rules.abs_capacity > 0.0);
        if pos_a != pos_b {
            return if pos_a {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let used_a = used_a.saturating_add(self.recursive_reserved(a.id));
        let used_b = used_b.saturating_add(self.recursive_reserved(b.id));
        let (va, vb) = (used_value(self, a, used_a), used_value(self, b, used_b));
        let by_use = va.total_cmp(&vb);
        let used = if by_priority(self, parent) && a.rules.priority != b.rules.priority {
            if (va < 1.0) == (vb < 1.0) {
                b.rules.priority.cmp(&a.rules.priority)
            } else {
                by_use
            }
        } else {
            by_use
        };
        used.then_with(|| b.rules.abs_capacity.total_cmp(&a.rules.abs_capacity))
            .then(a.rules.config_rank.cmp(&b.rules.config_rank))
    }
}

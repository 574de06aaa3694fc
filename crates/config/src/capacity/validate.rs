//! The load-time rules over the whole tree (spec §3.3, §3.5, §3.8, §4.1): sibling capacity
//! modes and sums, capacity against maximum capacity, absolute minimums and maximums, distinct
//! leaf names, states, and queue mappings that name queues.

use super::model::*;
use super::reader::Reader;
use super::PREFIX;
use std::collections::BTreeMap;
use weft_types::{Resource, MAX_RESOURCE_TYPES};

/// Hadoop's precision for a sum of sibling percentages (as fractions: 0.05 percent).
const SUM_EPSILON: f64 = 0.0005;
/// Hadoop's precision when comparing a capacity with its maximum (as fractions).
const CAPACITY_EPSILON: f64 = 0.0001;

/// Runs every rule, reporting each problem at the property it concerns.
pub(super) fn check(r: &mut Reader, config: &CapacityConfig) {
    let queues = &config.queues;
    let calc = config.globals.resource_calculator;
    for q in queues {
        if !q.children().is_empty() {
            siblings(r, queues, q, calc);
        }
        if let Some(p) = q.parent {
            absolute_bounds(r, q, &queues[p], calc);
            if q.state_configured
                && q.state == QueueState::Running
                && queues[p].state != QueueState::Running
            {
                r.error(
                    &key(q, "state"),
                    format!(
                        "The parent queue:{} cannot be STOPPED as the child queue:{} is in RUNNING state.",
                        queues[p].path, q.path
                    ),
                );
            }
        }
    }
    fractions(r, queues);
    distinct_leaf_names(r, queues);
    mappings(r, config);
}

fn key(q: &CsQueue, suffix: &str) -> String {
    format!("{PREFIX}{}.{suffix}", q.path)
}

/// The capacity property of `q` when written, else its parent's `queues` property (which
/// created it), so that every message has a place.
fn capacity_key(r: &Reader, queues: &[CsQueue], q: &CsQueue) -> String {
    let own = key(q, "capacity");
    match q.parent {
        Some(p) if r.pos(&own) == (0, 0) => key(&queues[p], "queues"),
        _ => own,
    }
}

fn siblings(r: &mut Reader, queues: &[CsQueue], parent: &CsQueue, calc: ResourceCalculator) {
    let children: Vec<&CsQueue> = parent.children().iter().map(|&c| &queues[c]).collect();
    let list_key = key(parent, "queues");
    // A capacity already refused says nothing about its siblings.
    if children.iter().any(|c| r.has_error(&key(c, "capacity")))
        || r.has_error(&key(parent, "capacity"))
    {
        return;
    }
    let mut modes: BTreeMap<CapacityMode, Vec<&str>> = BTreeMap::new();
    for c in &children {
        modes.entry(c.capacity.mode()).or_default().push(&c.name);
    }
    if modes.len() > 1 {
        let details: Vec<String> = modes
            .iter()
            .map(|(mode, names)| format!("{} ({})", mode.name(), names.join(", ")))
            .collect();
        r.error(
            &list_key,
            format!(
                "Parent queue '{}' have children queue used mixed of weight mode, percentage and absolute mode, it is not allowed, please double check, details: {}",
                parent.path,
                details.join("; ")
            ),
        );
        return;
    }
    let Some(&mode) = modes.keys().next() else {
        return;
    };
    let parent_absolute = matches!(parent.capacity, CapacityValue::Absolute(_));
    if parent.parent.is_some() && parent_absolute != (mode == CapacityMode::Absolute) {
        r.error(
            &list_key,
            format!(
                "Parent={}: When absolute minResource is used, we must make sure both parent and child all use absolute minResource (the parent uses {}, its children {})",
                parent.path,
                parent.capacity.mode().name(),
                mode.name()
            ),
        );
        return;
    }
    match mode {
        CapacityMode::Percent => percent_sum(r, parent, &children, &list_key),
        CapacityMode::Absolute => absolute_sum(r, parent, &children, &list_key, calc),
        CapacityMode::Weight => {}
    }
}

fn percent_sum(r: &mut Reader, parent: &CsQueue, children: &[&CsQueue], list_key: &str) {
    let sum: f64 = children
        .iter()
        .map(|c| match c.capacity {
            CapacityValue::Percent(p) => f64::from(p) / 100.0,
            _ => 0.0,
        })
        .sum();
    let allow_zero = matches!(
        parent.kind,
        QueueKind::Parent {
            allow_zero_capacity_sum: true,
            ..
        }
    );
    let parent_zero = match parent.capacity {
        CapacityValue::Percent(p) => parent.parent.is_some() && p == 0.0,
        CapacityValue::Weight(w) => w == 0.0,
        CapacityValue::Absolute(_) => false,
    };
    let weight_parent = matches!(parent.capacity, CapacityValue::Weight(_));
    let shown = (sum * 1e6).round() / 1e6;
    if (sum - 1.0).abs() <= SUM_EPSILON {
        if parent_zero && !allow_zero {
            r.error(
                list_key,
                format!(
                    "Illegal capacity sum of {shown} for children of queue {}: the queue has zero capacity, but child queues have positive capacities (set {PREFIX}{}.allow-zero-capacity-sum to true to allow it)",
                    parent.path, parent.path
                ),
            );
        }
    } else if sum.abs() <= SUM_EPSILON && sum == 0.0 {
        if !(parent_zero || allow_zero || weight_parent) {
            r.error(
                list_key,
                format!(
                    "Illegal capacity sum of 0 for children of queue {} for label=. It should be either 0 or 1.0 (a sum of 0 needs a parent of capacity 0 or {PREFIX}{}.allow-zero-capacity-sum = true)",
                    parent.path, parent.path
                ),
            );
        }
    } else {
        r.error(
            list_key,
            format!(
                "Illegal capacity sum of {shown} for children of queue {} for label=. It should be either 0 or 1.0 (the children's capacities add up to {}%, not 100%)",
                parent.path,
                (sum * 100.0 * 1e4).round() / 1e4
            ),
        );
    }
}

fn absolute_sum(
    r: &mut Reader,
    parent: &CsQueue,
    children: &[&CsQueue],
    list_key: &str,
    calc: ResourceCalculator,
) {
    let CapacityValue::Absolute(parent_min) = parent.capacity else {
        return; // root: the cluster's size is not known here; the scheduler scales down.
    };
    let sum = children
        .iter()
        .fold(Resource::ZERO, |acc, c| match c.capacity {
            CapacityValue::Absolute(m) => acc.saturating_add(m),
            _ => acc,
        });
    if greater(calc, &sum, &parent_min) {
        r.error(
            list_key,
            format!(
                "Parent Queues capacity: {} is less than to its children:{} for queue:{}",
                show(&parent_min),
                show(&sum),
                parent.path
            ),
        );
    }
}

/// Absolute minimum against maximum, and maximum against the parent's absolute maximum.
fn absolute_bounds(r: &mut Reader, q: &CsQueue, parent: &CsQueue, calc: ResourceCalculator) {
    let max_key = key(q, "maximum-capacity");
    if let (CapacityValue::Absolute(min), MaxCapacityValue::Absolute(max)) =
        (&q.capacity, &q.maximum_capacity)
    {
        if greater(calc, min, max) {
            r.error(
                &max_key,
                format!(
                    "Min resource configuration {} is greater than its max value:{} in queue:{}",
                    show(min),
                    show(max),
                    q.path
                ),
            );
        }
    }
    if let (MaxCapacityValue::Absolute(max), MaxCapacityValue::Absolute(parent_max)) =
        (&q.maximum_capacity, &parent.maximum_capacity)
    {
        if greater(calc, max, parent_max) {
            r.error(
                &max_key,
                format!(
                    "Max resource configuration {} is greater than parents max value:{} in queue:{}",
                    show(max),
                    show(parent_max),
                    q.path
                ),
            );
        }
    }
}

/// Percentage and weight capacities as fractions of the cluster: capacity <= maximum capacity
/// for each queue, and the same for the absolute fractions along the path (spec §3.5, §5.1).
fn fractions(r: &mut Reader, queues: &[CsQueue]) {
    // (capacity, absolute capacity, absolute maximum); NaN where a value is absolute.
    let mut abs: Vec<(f64, f64)> = Vec::with_capacity(queues.len());
    for q in queues {
        let (parent_cap, parent_max) = q.parent.map_or((1.0, 1.0), |p| abs[p]);
        let cap = match q.capacity {
            _ if q.parent.is_none() => 1.0,
            CapacityValue::Percent(p) => f64::from(p) / 100.0,
            CapacityValue::Weight(w) => {
                let siblings = q.parent.map_or(&[][..], |p| queues[p].children());
                let total: f64 = siblings
                    .iter()
                    .map(|&s| match queues[s].capacity {
                        CapacityValue::Weight(w) => f64::from(w),
                        _ => 0.0,
                    })
                    .sum();
                if total > 0.0 {
                    f64::from(w) / total
                } else {
                    0.0
                }
            }
            CapacityValue::Absolute(_) => f64::NAN,
        };
        let max = match q.maximum_capacity {
            MaxCapacityValue::Percent(m) => f64::from(m) / 100.0,
            MaxCapacityValue::Absolute(_) => f64::NAN,
        };
        let (abs_cap, abs_max) = (cap * parent_cap, max * parent_max);
        abs.push((abs_cap, abs_max));
        let refused = r.has_error(&key(q, "capacity")) || r.has_error(&key(q, "maximum-capacity"));
        if q.parent.is_none() || cap.is_nan() || max.is_nan() || refused {
            continue;
        }
        let place = if r.pos(&key(q, "maximum-capacity")) != (0, 0) {
            key(q, "maximum-capacity")
        } else {
            capacity_key(r, queues, q)
        };
        if cap > max + CAPACITY_EPSILON {
            r.error(
                &place,
                format!(
                    "Illegal queue capacity setting, (capacity={}) > (maximum-capacity={}) for queue {}. When label=[]",
                    round(cap),
                    round(max),
                    q.path
                ),
            );
        } else if abs_cap > abs_max + CAPACITY_EPSILON {
            r.error(
                &place,
                format!(
                    "Illegal queue capacity setting (abs-capacity={}) > (abs-maximum-capacity={}) for queue=[{}],label=[]",
                    round(abs_cap),
                    round(abs_max),
                    q.path
                ),
            );
        }
    }
}

/// Hadoop 3.3 refuses two leaves with the same name (clients may submit by short name).
fn distinct_leaf_names(r: &mut Reader, queues: &[CsQueue]) {
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    for q in queues.iter().filter(|q| q.is_leaf()) {
        match first.get(q.name.as_str()) {
            Some(other) => {
                let place = q
                    .parent
                    .map_or_else(|| key(q, "queues"), |p| key(&queues[p], "queues"));
                r.error(
                    &place,
                    format!(
                        "Two leaf queues were named {}. Leaf queue names must be distinct ({other} and {})",
                        q.name, q.path
                    ),
                );
            }
            None => {
                first.insert(&q.name, &q.path);
            }
        }
    }
}

/// A mapping to a fixed queue must name a leaf, by full path or by its (unique) short name;
/// targets built from `%user`, `%primary_group` or `%secondary_group` are checked at placement.
fn mappings(r: &mut Reader, config: &CapacityConfig) {
    let name = format!("{PREFIX}queue-mappings");
    for m in &config.globals.queue_mappings {
        if m.queue.contains('%') {
            continue;
        }
        let target = config.queue(&m.queue).or_else(|| {
            config
                .queues
                .iter()
                .find(|q| q.is_leaf() && q.name == m.queue)
        });
        if !target.is_some_and(CsQueue::is_leaf) {
            r.error(
                &name,
                format!(
                    "mapping contains invalid or non-leaf queue {} (entry {})",
                    m.queue,
                    display_mapping(m)
                ),
            );
        }
    }
}

fn display_mapping(m: &QueueMapping) -> String {
    let kind = match m.kind {
        MappingKind::User => "u",
        MappingKind::Group => "g",
    };
    format!("{kind}:{}:{}", m.source, m.queue)
}

/// `a > b` as the calculator compares: memory alone, or any type.
pub(crate) fn greater(calc: ResourceCalculator, a: &Resource, b: &Resource) -> bool {
    match calc {
        ResourceCalculator::Default => a.memory_mb() > b.memory_mb(),
        ResourceCalculator::Dominant => (0..MAX_RESOURCE_TYPES).any(|i| a.get(i) > b.get(i)),
    }
}

/// Hadoop's `<memory:10240, vCores:12>`.
pub(crate) fn show(r: &Resource) -> String {
    format!("<memory:{}, vCores:{}>", r.memory_mb(), r.vcores())
}

fn round(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

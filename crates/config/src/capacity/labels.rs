//! Node labels on Capacity queues (Hadoop's NodeLabel.md, exclusive partitions only):
//! `accessible-node-labels` with its per-label `capacity`, `maximum-capacity` and
//! `maximum-am-resource-percent`, and `default-node-label-expression`, read per queue and
//! checked over the tree with Hadoop's messages. Non-exclusive lending is not modelled.

use super::model::{AccessibleLabels, CapacityConfig, CsQueue, LabelCapacity, QueueLabels};
use super::reader::Reader;
use super::PREFIX;
use std::collections::{BTreeMap, BTreeSet};

/// Hadoop's precision for a sum of sibling percentages (as fractions).
const SUM_EPSILON: f64 = 0.0005;

/// Reads the queue's label keys; unset ones are inherited from `parent` (root: `*`).
pub(super) fn read(r: &mut Reader, path: &str, parent: Option<&CsQueue>) -> QueueLabels {
    let key = |suffix: &str| format!("{PREFIX}{path}.{suffix}");
    let inherited = parent.map_or(AccessibleLabels::Any, |p| p.labels.accessible.clone());
    let accessible = match r.get(&key("accessible-node-labels")) {
        None => inherited,
        Some(_) if parent.is_none() => {
            r.warn(
                &key("accessible-node-labels"),
                "root can always access every label (*); ignored".to_string(),
            );
            AccessibleLabels::Any
        }
        Some(v) => parse_accessible(&v),
    };
    let prefix = key("accessible-node-labels.");
    let mut per_label: BTreeMap<String, LabelCapacity> = BTreeMap::new();
    for name in r.names_with_prefix(&prefix) {
        let Some((label, setting)) = name[prefix.len()..].split_once('.') else {
            continue;
        };
        if !matches!(
            setting,
            "capacity" | "maximum-capacity" | "maximum-am-resource-percent"
        ) {
            // Left unread: the unused-key warning names it.
            continue;
        }
        let entry = per_label.entry(label.to_string()).or_default();
        match setting {
            "capacity" => {
                if let Some(v) = percent(r, &name) {
                    entry.capacity = v;
                }
            }
            "maximum-capacity" => {
                if let Some(v) = percent(r, &name) {
                    // -1, as for the queue's own maximum, means 100.
                    entry.maximum_capacity = if v < 0.0 { 100.0 } else { v };
                }
            }
            "maximum-am-resource-percent" => {
                let v = r.float(&name, 0.1);
                if !(0.0..=1.0).contains(&v) {
                    r.error(
                        &name,
                        format!("{v} is not a fraction from 0 to 1 (0.1 means 10%)"),
                    );
                }
                entry.maximum_am_resource_percent = Some(v);
            }
            _ => {}
        }
    }
    let default_expression = match r.get(&key("default-node-label-expression")) {
        Some(v) => {
            let v = v.trim().to_string();
            if v.contains("&&") || v.contains(',') || v.contains('|') {
                r.error(
                    &key("default-node-label-expression"),
                    format!("'{v}': a node label expression names one label (Weft has exclusive partitions only)"),
                );
            }
            Some(v)
        }
        None => parent.and_then(|p| p.labels.default_expression.clone()),
    };
    QueueLabels {
        accessible,
        per_label,
        default_expression,
    }
}

/// `*`, a comma list, or blank (DEFAULT only).
fn parse_accessible(value: &str) -> AccessibleLabels {
    let labels: BTreeSet<String> = value
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    if labels.contains("*") {
        AccessibleLabels::Any
    } else {
        AccessibleLabels::Only(labels)
    }
}

/// A label percentage (0..=100, or -1 where a maximum allows it); absolute resources are
/// refused (Weft reads percentages per label only).
fn percent(r: &mut Reader, name: &str) -> Option<f32> {
    let raw = r.get(name)?;
    match raw.trim().parse::<f32>() {
        Ok(v) if (0.0..=100.0).contains(&v) || v == -1.0 => Some(v),
        Ok(v) => {
            r.error(name, format!("{v} is not a percentage from 0 to 100"));
            None
        }
        Err(_) => {
            r.error(
                name,
                format!("'{}' is not a percentage (per-label capacities are percentages of the parent's capacity in the label)", raw.trim()),
            );
            None
        }
    }
}

/// Every label the file names (in accessible lists and per-label keys).
pub fn named_labels(config: &CapacityConfig) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for q in &config.queues {
        if let AccessibleLabels::Only(labels) = &q.labels.accessible {
            all.extend(labels.iter().cloned());
        }
        all.extend(q.labels.per_label.keys().cloned());
    }
    all
}

/// The tree-wide rules: a child's labels within its parent's, the default expression
/// accessible, capacity within maximum per label, and siblings' capacities summing to 100 in
/// each label their parent has settings for (or 0 under a parent with none there).
pub(super) fn check(r: &mut Reader, config: &CapacityConfig) {
    let queues = &config.queues;
    for q in queues {
        let key = |suffix: &str| format!("{PREFIX}{}.{suffix}", q.path);
        if let Some(p) = q.parent.map(|p| &queues[p]) {
            if let Some(message) = subset_problem(&q.labels.accessible, &p.labels.accessible) {
                r.error(&key("accessible-node-labels"), message);
            }
        }
        if let Some(expr) = q.labels.default_expression.as_deref() {
            if !q.labels.accessible.can_access(expr) {
                let place = if r.is_set(&key("default-node-label-expression")) {
                    key("default-node-label-expression")
                } else {
                    key("accessible-node-labels")
                };
                r.error(
                    &place,
                    format!(
                        "Invalid default label expression of  queue={} doesn't have permission to access all labels in default label expression. labelExpression of resource request={expr}. Queue labels={}",
                        q.path,
                        q.labels.accessible.display()
                    ),
                );
            }
        }
        for (label, c) in &q.labels.per_label {
            if !q.labels.accessible.can_access(label) {
                r.warn(
                    &key(&format!("accessible-node-labels.{label}.capacity")),
                    format!(
                        "queue {} cannot access label {label} (accessible-node-labels is '{}'): its settings for the label have no effect",
                        q.path,
                        q.labels.accessible.display()
                    ),
                );
                continue;
            }
            if c.capacity > c.maximum_capacity + 0.01 {
                r.error(
                    &key(&format!("accessible-node-labels.{label}.maximum-capacity")),
                    format!(
                        "Illegal queue capacity setting, (capacity={}) > (maximum-capacity={}) for queue {}. When label=[{label}]",
                        f64::from(c.capacity) / 100.0,
                        f64::from(c.maximum_capacity) / 100.0,
                        q.path
                    ),
                );
            }
        }
    }
    // As Hadoop's `ParentQueue`, a parent's children are summed in the labels the parent has
    // settings for (root's capacity in each is 100).
    for parent in queues.iter().filter(|q| !q.children().is_empty()) {
        for label in parent.labels.per_label.keys() {
            if !parent.labels.accessible.can_access(label) {
                continue;
            }
            let own = parent
                .labels
                .in_partition(label, parent.parent.is_none())
                .capacity;
            let sum: f64 = parent
                .children()
                .iter()
                .map(|&c| f64::from(queues[c].labels.in_partition(label, false).capacity) / 100.0)
                .sum();
            let ok = if own > 0.0 {
                (sum - 1.0).abs() <= SUM_EPSILON
            } else {
                sum <= SUM_EPSILON
            };
            if !ok {
                let shown = (sum * 1e6).round() / 1e6;
                r.error(
                    &format!("{PREFIX}{}.queues", parent.path),
                    format!(
                        "Illegal capacity sum of {shown} for children of queue {} for label={label}. It should be either 0 or 1.0 (the children's {PREFIX}<child>.accessible-node-labels.{label}.capacity add up to {}%, and {} has {own}% of {label})",
                        parent.path,
                        (sum * 100.0 * 1e4).round() / 1e4,
                        parent.path
                    ),
                );
            }
        }
    }
}

/// Hadoop's check that a child's accessible labels are within its parent's.
fn subset_problem(child: &AccessibleLabels, parent: &AccessibleLabels) -> Option<String> {
    let AccessibleLabels::Only(parent_labels) = parent else {
        return None;
    };
    match child {
        AccessibleLabels::Any => Some(
            "Parent's accessible queue is not ANY(*), but child's accessible queue is *"
                .to_string(),
        ),
        AccessibleLabels::Only(own) => {
            let diff: Vec<&str> = own.difference(parent_labels).map(String::as_str).collect();
            (!diff.is_empty()).then(|| {
                format!(
                    "Some labels of child queue is not a subset of parent queue, these labels=[{}]",
                    diff.join(",")
                )
            })
        }
    }
}

#[cfg(test)]
mod tests;

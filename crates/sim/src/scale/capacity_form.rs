//! A workload's queue tree under the Capacity Scheduler: the capacity-scheduler.xml equivalent
//! to its fair-scheduler.xml, so `--scheduler capacity` runs the same pressure on the same tree.
//!
//! Equivalence, key by key:
//! * the same queues, parents and leaves (root's children are the file's top-level queues);
//!   Hadoop 3.3 wants leaf names unique across the tree, so a leaf whose short name another
//!   leaf shares is renamed `<parent>_<leaf>` under the same parent (`root.p00.q00` becomes
//!   `root.p00.p00_q00`), and the workload's apps are sent to the new names ([`rename_queues`]);
//! * each queue's `capacity` is its weight's share of its siblings' weights (Fair's default
//!   weight 1 gives equal shares), written to 4 decimals with the rounding put on the last
//!   sibling, so every level sums to exactly 100;
//! * `maximum-capacity` 100 everywhere: like a Fair leaf with no `maxResources`, a leaf may
//!   grow over its guarantee up to the whole cluster while others leave room;
//! * `user-limit-factor` is `100 / (the smallest leaf's absolute capacity in percent)`, rounded
//!   up: the user limit is capped at ULF times the leaf's guarantee, so this lets one user fill
//!   its leaf up to its maximum capacity (the whole cluster). With Hadoop's default of 1 a
//!   user would stop at the leaf's guarantee, and a cluster whose demand is uneven across
//!   leaves (apps finishing and being replaced, leaves with one user each as in the presets)
//!   would be left partly idle while asks are pending;
//! * `maximum-am-resource-percent` 1.0, as the presets' `queueMaxAMShareDefault` -1: the AM
//!   share never keeps an app pending;
//! * `maximum-applications` 10,000,000 (split by absolute capacity: 5,000 per leaf at 2,000
//!   leaves): Hadoop's 10,000 would give each of 2,000 leaves 5 apps, exactly the meituan
//!   preset's concurrency, and reject its replacements;
//! * per node heartbeat: multiple assignments on, `maximum-container-assignments` -1 and
//!   `maximum-offswitch-assignments` 1,000,000, as the presets' `max.assign` -1: a heartbeat may
//!   fill its node with off-switch containers (Hadoop's default of 1 off-switch container per
//!   heartbeat would make the heartbeat rate, not the scheduler, the limit).

use std::collections::BTreeMap;

use weft_config::AllocationConfig;

use crate::workload::{AppSource, Workload};

/// `yarn.scheduler.capacity.` (every key's prefix).
const PREFIX: &str = "yarn.scheduler.capacity.";

/// Each queue's children in the tree `allocations` declares, by full name (`root` included
/// even when the file does not declare it).
fn children_of(allocations: &AllocationConfig) -> BTreeMap<String, Vec<String>> {
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    children.entry("root".to_string()).or_default();
    for name in allocations.queues.keys() {
        if name == "root" {
            continue;
        }
        // Ancestors the file leaves implicit (a nested queue's parent) are declared too.
        let mut child = name.as_str();
        while let Some((parent, _)) = child.rsplit_once('.') {
            let siblings = children.entry(parent.to_string()).or_default();
            if !siblings.iter().any(|s| s == child) {
                siblings.push(child.to_string());
            }
            children.entry(child.to_string()).or_default();
            child = parent;
        }
    }
    children
}

/// Siblings' capacities in percent, from their weights, to 4 decimals, summing to exactly 100.
fn shares(weights: &[f64]) -> Vec<f64> {
    let total: f64 = weights.iter().sum();
    let n = weights.len();
    let mut out: Vec<f64> = weights
        .iter()
        .map(|w| {
            if total > 0.0 {
                (w / total * 100.0 * 1e4).floor() / 1e4
            } else {
                (100.0 / n as f64 * 1e4).floor() / 1e4
            }
        })
        .collect();
    let rest = 100.0 - out.iter().take(n.saturating_sub(1)).sum::<f64>();
    if let Some(last) = out.last_mut() {
        *last = (rest * 1e4).round() / 1e4;
    }
    out
}

/// The short name of a full queue name.
fn short_name(full: &str) -> &str {
    full.rsplit_once('.').map_or(full, |(_, s)| s)
}

/// The Capacity form of a Fair queue tree: the capacity-scheduler.xml text, and the leaves
/// renamed to keep leaf names unique (old full name to new full name).
#[derive(Clone, Debug)]
pub struct CapacityForm {
    /// The capacity-scheduler.xml text.
    pub xml: String,
    /// Renamed leaves.
    pub renamed: BTreeMap<String, String>,
}

/// Leaves whose short name another leaf shares, renamed `<parent short>_<leaf short>`.
fn unique_leaf_names(children: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, String> {
    let leaves: Vec<&String> = children
        .iter()
        .filter(|(name, kids)| kids.is_empty() && name.as_str() != "root")
        .map(|(name, _)| name)
        .collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for leaf in &leaves {
        *count.entry(short_name(leaf)).or_default() += 1;
    }
    leaves
        .into_iter()
        .filter(|leaf| count.get(short_name(leaf)).is_some_and(|n| *n > 1))
        .filter_map(|leaf| {
            let (parent, short) = leaf.rsplit_once('.')?;
            Some((
                leaf.clone(),
                format!("{parent}.{}_{short}", short_name(parent)),
            ))
        })
        .collect()
}

/// Sends the workload's apps to the renamed leaves.
pub fn rename_queues(workload: &mut Workload, renamed: &BTreeMap<String, String>) {
    let rename = |q: &mut String| {
        if let Some(new) = renamed.get(q.as_str()) {
            q.clone_from(new);
        }
    };
    match &mut workload.apps {
        AppSource::ClosedLoop(cl) => cl.queues.iter_mut().for_each(rename),
        AppSource::Trace(plans) => plans
            .iter_mut()
            .filter_map(|p| p.queue.as_mut())
            .for_each(rename),
    }
}

/// The Capacity form of `allocations` (see the module's description).
pub fn capacity_form(allocations: &AllocationConfig) -> CapacityForm {
    let mut children = children_of(allocations);
    let renamed = unique_leaf_names(&children);
    for kids in children.values_mut() {
        for kid in kids.iter_mut() {
            if let Some(new) = renamed.get(kid.as_str()) {
                kid.clone_from(new);
            }
        }
    }
    let original: BTreeMap<&str, &str> = renamed
        .iter()
        .map(|(old, new)| (new.as_str(), old.as_str()))
        .collect();
    let weight = |name: &str| {
        let name = original.get(name).copied().unwrap_or(name);
        allocations
            .queues
            .get(name)
            .and_then(|q| q.weight)
            .map_or(1.0, f64::from)
    };
    let mut props: Vec<(String, String)> = Vec::new();
    let mut smallest_leaf = 100.0_f64;
    // (queue, its absolute capacity in percent), parents before children.
    let mut stack: Vec<(String, f64)> = vec![("root".to_string(), 100.0)];
    while let Some((queue, absolute)) = stack.pop() {
        let kids = children.get(&queue).map_or(&[][..], Vec::as_slice);
        if kids.is_empty() {
            smallest_leaf = smallest_leaf.min(absolute);
            continue;
        }
        let short: Vec<&str> = kids.iter().map(|k| short_name(k)).collect();
        props.push((format!("{PREFIX}{queue}.queues"), short.join(",")));
        let weights: Vec<f64> = kids.iter().map(|k| weight(k)).collect();
        for (kid, share) in kids.iter().zip(shares(&weights)) {
            props.push((format!("{PREFIX}{kid}.capacity"), format!("{share}")));
            props.push((format!("{PREFIX}{kid}.maximum-capacity"), "100".to_string()));
            stack.push((kid.clone(), absolute * share / 100.0));
        }
    }
    // Rounded to 6 decimals first, so 100 / 0.05 (not exact in binary) is 2000, not 2001.
    let user_limit_factor = ((100.0 / smallest_leaf.max(1e-9) * 1e6).round() / 1e6)
        .ceil()
        .max(1.0);
    let globals = [
        ("user-limit-factor", format!("{user_limit_factor}")),
        ("maximum-am-resource-percent", "1.0".to_string()),
        ("maximum-applications", "10000000".to_string()),
        (
            "per-node-heartbeat.multiple-assignments-enabled",
            "true".to_string(),
        ),
        (
            "per-node-heartbeat.maximum-container-assignments",
            "-1".to_string(),
        ),
        (
            "per-node-heartbeat.maximum-offswitch-assignments",
            "1000000".to_string(),
        ),
    ];
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    let globals = globals
        .into_iter()
        .map(|(k, v)| (format!("{PREFIX}{k}"), v));
    for (name, value) in globals.chain(props) {
        xml.push_str(&format!(
            "  <property><name>{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    CapacityForm { xml, renamed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{allocations_for, leaf_queues};
    use weft_config::capacity::QueueKind;
    use weft_types::ResourceTypes;

    fn parsed(leaves: &[String]) -> weft_config::capacity::CapacityConfig {
        let (fair, _) = weft_config::alloc_file::parse_allocations_with(
            &allocations_for(leaves),
            &ResourceTypes::default(),
            weft_config::alloc_file::AllocationOptions::default(),
        )
        .expect("the preset's allocation file parses");
        let xml = capacity_form(&fair).xml;
        let (config, _) = weft_config::capacity::parse_capacity(&xml, &ResourceTypes::default())
            .unwrap_or_else(|e| panic!("the generated file is valid: {e}\n{xml}"));
        config
    }

    #[test]
    fn shares_sum_to_100_for_uneven_splits() {
        for n in [1usize, 3, 7, 40, 2000] {
            let s = shares(&vec![1.0; n]);
            let sum: f64 = s.iter().sum();
            assert!((sum - 100.0).abs() < 1e-6, "{n} siblings sum to {sum}");
        }
        assert_eq!(shares(&[1.0, 3.0]), vec![25.0, 75.0]);
    }

    #[test]
    fn the_meituan_tree_becomes_the_same_capacity_tree() {
        // Full scale: 2,000 leaves under 50 parents of 40 leaves.
        let leaves = leaf_queues(50, 2_000);
        let config = parsed(&leaves);
        let leaf_names: Vec<&str> = config
            .queues
            .iter()
            .filter(|q| matches!(q.kind, QueueKind::Leaf(_)))
            .map(|q| q.path.as_str())
            .collect();
        assert_eq!(leaf_names.len(), 2_000);
        assert!(
            leaf_names.contains(&"root.p00.p00_q00") && leaf_names.contains(&"root.p49.p49_q39"),
            "leaves keep their parent and take unique names"
        );
        let leaf = config
            .queues
            .iter()
            .find(|q| q.path == "root.p07.p07_q12")
            .expect("a leaf");
        // 2% of root times 2.5% of its parent: 0.05% of the cluster; ULF 100 / 0.05.
        let QueueKind::Leaf(settings) = &leaf.kind else {
            panic!("root.p07.p07_q12 is a leaf");
        };
        assert_eq!(settings.user_limit_factor, 2000.0);
        assert!((settings.maximum_am_resource_percent - 1.0).abs() < 1e-6);
    }
}

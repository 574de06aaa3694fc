//! The cluster's topology: SLS nodes files, and topology derived from a trace's hosts.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use weft_types::{Resource, MEMORY, VCORES};

use super::json::{Ctx, Node, Source};
use super::TraceError;
use crate::workload::{AppPlan, WorkloadNode};
use crate::DEFAULT_RACK;

/// Parses an SLS nodes file (`-nodes`): concatenated objects
/// `{"rack": "rack1", "nodes": [{"node": "node1", "memory-mb": 8192, "vcores": 8}, ...]}`.
///
/// Rack names get a leading `/` when they lack one (SLS prefixes it). Node objects without a
/// `node` name (the Hadoop sample ends with `{}`) are skipped; a host listed twice keeps its
/// first entry, as SLS's set of nodes does. `memory-mb` and `vcores` override `default_node`;
/// `labels` are ignored (node labels are not modelled).
pub fn parse_nodes_file(
    text: &str,
    file: &str,
    default_node: Resource,
) -> Result<Vec<WorkloadNode>, TraceError> {
    let src = Source::new(text, file);
    let mut nodes = Vec::new();
    let mut seen = HashSet::new();
    for (i, item) in src.items()?.iter().enumerate() {
        let ctx = Ctx::new(&src, format!("rack entry {}", i + 1), item);
        let root = Node::root(&item.value);
        root.object(&ctx)?;
        let rack = match root.get("rack") {
            Some(r) => normalise_rack(&r.text(&ctx)?),
            None => DEFAULT_RACK.to_string(),
        };
        let Some(list) = root.get("nodes") else {
            return Err(ctx.missing(&root, "nodes"));
        };
        for entry in list.elements(&ctx)? {
            entry.object(&ctx)?;
            let Some(name) = entry.get("node") else {
                continue;
            };
            let host = name.text(&ctx)?.trim().to_string();
            if host.is_empty() {
                return Err(ctx.err(name.path(), "the node name is empty"));
            }
            let mut capability = default_node;
            for (key, index) in [("memory-mb", MEMORY), ("vcores", VCORES)] {
                if let Some(v) = entry.get(key) {
                    let amount = v.non_negative(&ctx)?;
                    capability.set(index, i64::try_from(amount).unwrap_or(i64::MAX));
                }
            }
            if seen.insert(host.clone()) {
                nodes.push(WorkloadNode {
                    host,
                    rack: rack.clone(),
                    capability,
                });
            }
        }
    }
    if nodes.is_empty() {
        return Err(TraceError::file(file, "the nodes file lists no nodes"));
    }
    Ok(nodes)
}

/// The topology SLS derives when no nodes file is given: one node of `default_node` for every
/// host a task names, in the host's rack. Sorted by rack then host, numbers in names compared
/// as numbers (`node2` before `node10`), so the result does not depend on trace order. A host
/// named under two racks keeps the first rack seen.
pub fn nodes_from_trace(apps: &[AppPlan], default_node: Resource) -> Vec<WorkloadNode> {
    let mut racks: BTreeMap<&str, &str> = BTreeMap::new();
    let groups = apps
        .iter()
        .flat_map(|a| a.stages.iter())
        .flat_map(|s| s.groups.iter());
    for g in groups {
        if let Some(host) = g.host.as_deref() {
            racks
                .entry(host)
                .or_insert_with(|| g.rack.as_deref().unwrap_or(DEFAULT_RACK));
        }
    }
    let mut nodes: Vec<WorkloadNode> = racks
        .into_iter()
        .map(|(host, rack)| WorkloadNode {
            host: host.to_string(),
            rack: rack.to_string(),
            capability: default_node,
        })
        .collect();
    nodes.sort_by(|a, b| natural_cmp(&a.rack, &b.rack).then_with(|| natural_cmp(&a.host, &b.host)));
    nodes
}

/// Splits SLS's `"/rack/host"` (or deeper `"/core/tor/host"`) into rack path and host name,
/// as Hadoop's `NodeBase` does; a bare host is in the default rack.
pub fn split_host(full: &str) -> (String, String) {
    let full = full.trim();
    match full.rfind('/') {
        Some(i) => {
            let rack = &full[..i];
            let rack = if rack.is_empty() {
                DEFAULT_RACK.to_string()
            } else {
                normalise_rack(rack)
            };
            (rack, full[i + 1..].to_string())
        }
        None => (DEFAULT_RACK.to_string(), full.to_string()),
    }
}

/// `rack1` -> `/rack1`; `/rack1` unchanged.
pub(crate) fn normalise_rack(rack: &str) -> String {
    let rack = rack.trim();
    if rack.starts_with('/') {
        rack.to_string()
    } else {
        format!("/{rack}")
    }
}

/// Compares names so that runs of digits compare by value: `node2 < node10`.
pub(crate) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a, b);
    loop {
        match (x.chars().next(), y.chars().next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (nx, rx) = split_digits(x);
                let (ny, ry) = split_digits(y);
                let (tx, ty) = (nx.trim_start_matches('0'), ny.trim_start_matches('0'));
                let ord = tx.len().cmp(&ty.len()).then_with(|| tx.cmp(ty));
                if ord != Ordering::Equal {
                    return ord;
                }
                x = rx;
                y = ry;
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x = &x[c.len_utf8()..];
                y = &y[d.len_utf8()..];
            }
        }
    }
}

fn split_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_into_rack_and_name() {
        assert_eq!(
            split_host("/default-rack/node1"),
            ("/default-rack".into(), "node1".into())
        );
        assert_eq!(split_host("/a/b/h"), ("/a/b".into(), "h".into()));
        assert_eq!(split_host("h"), (DEFAULT_RACK.into(), "h".into()));
        assert_eq!(split_host("/h"), (DEFAULT_RACK.into(), "h".into()));
    }

    #[test]
    fn natural_order_compares_numbers_by_value() {
        let mut v = vec!["node10", "node2", "node1", "a", "node02x"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, vec!["a", "node1", "node2", "node02x", "node10"]);
    }

    #[test]
    fn node_overrides_and_missing_nodes_list() {
        let text =
            r#"{"rack": "/r", "nodes": [{"node": "h1", "memory-mb": 2048}, {"node": "h1"}]}"#;
        let nodes = parse_nodes_file(text, "n.json", Resource::new(1024, 4)).unwrap();
        assert_eq!(nodes.len(), 1);
        assert_eq!(nodes[0].capability, Resource::new(2048, 4));
        assert_eq!(nodes[0].rack, "/r");
        let e = parse_nodes_file("{\"rack\": \"r\"}", "n.json", Resource::new(1, 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "n.json: rack entry 1 (line 1): nodes: missing (it is required)"
        );
    }
}

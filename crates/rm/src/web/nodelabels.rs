//! `/cluster/nodelabels`: the cluster's node labels (resource pools are exclusive partitions)
//! with Hadoop's columns (Label Name, Label Type, Num Of Active NMs linking to the nodes page
//! filtered by the label, Total Resource) and DEFAULT as `<DEFAULT_PARTITION>`; Weft adds each
//! label's source and the resources its active NMs have allocated.

use weft_rm_core::{NodeInfo, NodeState};
use weft_types::Resource;

use super::html::{self, esc, Page};
use super::View;

/// Hadoop's name for the partition of unlabelled nodes.
pub(crate) const DEFAULT_PARTITION: &str = "<DEFAULT_PARTITION>";

/// `<memory:8192, vCores:8>`, as Hadoop's page prints a resource.
fn resource(r: Resource) -> String {
    format!("<memory:{}, vCores:{}>", r.memory_mb(), r.vcores())
}

/// The label's active NMs (RUNNING ones), its total and allocated resources.
fn active(nodes: &[NodeInfo], label: Option<&str>) -> (usize, Resource, Resource) {
    nodes
        .iter()
        .filter(|n| n.state == NodeState::Running && n.label.as_deref() == label)
        .fold((0, Resource::ZERO, Resource::ZERO), |(c, t, u), n| {
            (
                c + 1,
                t.saturating_add(n.capability),
                u.saturating_add(n.used),
            )
        })
}

/// The node-labels page.
pub(crate) fn page(v: &View) -> Page {
    let mut rows = Vec::with_capacity(v.labels.len() + 1);
    let row = |name: &str, filter: &str, kind: &str, source: &str, label: Option<&str>| {
        let (count, total, used) = active(&v.nodes, label);
        vec![
            esc(name),
            esc(kind),
            format!(
                "<a href=\"/cluster/nodes?node.label={}\">{count}</a>",
                html::url_encode(filter)
            ),
            esc(&resource(total)),
            esc(&resource(used)),
            esc(source),
        ]
    };
    rows.push(row(DEFAULT_PARTITION, "", "Exclusive Partition", "", None));
    for l in &v.labels {
        let kind = if l.exclusive {
            "Exclusive Partition"
        } else {
            "Non Exclusive Partition"
        };
        rows.push(row(
            &l.name,
            &l.name,
            kind,
            l.source.as_str(),
            Some(l.name.as_str()),
        ));
    }
    let live = html::table(
        "nodelabels",
        &[
            "Label Name",
            "Label Type",
            "Num Of Active NMs",
            "Total Resource",
            "Used Resource",
            "Source",
        ],
        &rows,
        "No node labels.",
    );
    Page {
        title: "Node Labels".into(),
        nav: "/cluster/nodelabels",
        head: String::new(),
        live,
    }
}

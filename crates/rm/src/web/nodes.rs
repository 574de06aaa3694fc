//! `/cluster/nodes`: every node the RM knows, with its partition (resource pool), state,
//! usage and health.

use weft_rm_core::NodeInfo;
use weft_types::Time;

use super::html::{self, badge, esc, Bar, Page};
use super::View;

/// The nodes page; with `label`, only the nodes of that partition (`""`: DEFAULT).
pub(crate) fn page(v: &View, label: Option<&str>, now: Time) -> Page {
    let mut nodes: Vec<&NodeInfo> = v
        .nodes
        .iter()
        .filter(|n| label.is_none_or(|l| n.label.as_deref().unwrap_or("") == l))
        .collect();
    nodes.sort_by(|a, b| a.state.cmp(&b.state).then(a.node_id.cmp(&b.node_id)));
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let web = if n.http_address.is_empty() {
                "<span class=\"muted\">-</span>".to_string()
            } else {
                format!(
                    "<a href=\"http://{0}/ws/v1/node/info\">{0}</a>",
                    esc(&n.http_address)
                )
            };
            let bar = |used: i64, total: i64, f: fn(i64) -> String| {
                Bar {
                    value: used,
                    total,
                    fair: None,
                    steady: None,
                    label: format!("{} <small>of {}</small>", f(used), f(total)),
                    tip: format!("{} of {} allocated", f(used), f(total)),
                }
                .html()
            };
            let ago = now.as_millis().saturating_sub(n.last_heartbeat.as_millis());
            vec![
                esc(&n.node_id),
                esc(&n.rack),
                node_label(n.label.as_deref()),
                badge(n.state.as_str()),
                esc(&n.address),
                web,
                n.containers.to_string(),
                bar(n.used.memory_mb(), n.capability.memory_mb(), html::mem),
                bar(n.used.vcores(), n.capability.vcores(), html::count),
                format!(
                    "<span title=\"{}\">{} ago</span>",
                    html::date_time(Some(n.last_heartbeat)),
                    html::span(ago)
                ),
                html::long_text(&n.health_report),
            ]
        })
        .collect();
    let live = html::table(
        "nodes",
        &[
            "Node",
            "Rack",
            "Node Labels",
            "State",
            "Address",
            "Web address",
            "Containers",
            "Memory",
            "vCores",
            "Last heartbeat",
            "Health report",
        ],
        &rows,
        "No NodeManager has registered yet.",
    );
    let title = match label {
        Some("") => format!("Nodes of {}", super::nodelabels::DEFAULT_PARTITION),
        Some(l) => format!("Nodes labelled {l}"),
        None => "Nodes".to_string(),
    };
    Page {
        title,
        nav: "/cluster/nodes",
        head: String::new(),
        live,
    }
}

/// A node's partition: its label, or a dash for DEFAULT.
fn node_label(label: Option<&str>) -> String {
    match label {
        Some(l) => format!("<span class=\"pool\">{}</span>", esc(l)),
        // Hadoop's page leaves it empty; the tip names the partition.
        None => "<span class=\"muted\" title=\"&lt;DEFAULT_PARTITION&gt;\">-</span>".to_string(),
    }
}

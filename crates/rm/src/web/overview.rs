//! `/cluster`: capacity, usage and pending demand, applications and nodes by state, and the
//! most recent applications.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_rm_core::{AppState, NodeState};
use weft_types::Time;

use super::html::{self, badge, url_encode, Bar, Page};
use super::{apps, state_name, View};

/// Every application state, in lifecycle order.
pub(crate) const APP_STATES: [AppState; 7] = [
    AppState::New,
    AppState::Submitted,
    AppState::Accepted,
    AppState::Running,
    AppState::Finished,
    AppState::Failed,
    AppState::Killed,
];

/// Every node state.
pub(crate) const NODE_STATES: [NodeState; 5] = [
    NodeState::Running,
    NodeState::Unhealthy,
    NodeState::Lost,
    NodeState::Decommissioned,
    NodeState::Shutdown,
];

/// How many recent applications the overview lists.
const RECENT: usize = 10;

/// The overview page.
pub(crate) fn page(v: &View, now: Time) -> Page {
    let snap = &v.snapshot;
    let (cap, used, pending) = (
        snap.cluster_capacity,
        snap.cluster_used,
        snap.cluster_pending,
    );
    let containers: u32 = v.nodes.iter().map(|n| n.containers).sum();
    let pending_containers: u64 = snap.apps.iter().map(|a| a.pending_containers).sum();
    let mut live = String::from("<section class=\"cards\">");
    let resource_card =
        |title: &str, used: i64, total: i64, pending: i64, fmt: fn(i64) -> String| {
            let bar = Bar {
                value: used,
                total,
                fair: None,
                steady: None,
                label: format!("{:.0}%", html::pct(used, total)),
                tip: format!("{} of {} allocated", fmt(used), fmt(total)),
            };
            format!(
            "<div class=\"card\"><h2>{title}</h2><div class=\"big\">{} <small>of {}</small></div>{}\
<dl class=\"kv\"><dt>Available</dt><dd>{}</dd><dt>Pending</dt><dd>{}</dd></dl></div>",
            fmt(used),
            fmt(total),
            bar.html(),
            fmt((total - used).max(0)),
            fmt(pending),
        )
        };
    live.push_str(&resource_card(
        "Memory",
        used.memory_mb(),
        cap.memory_mb(),
        pending.memory_mb(),
        html::mem,
    ));
    live.push_str(&resource_card(
        "vCores",
        used.vcores(),
        cap.vcores(),
        pending.vcores(),
        html::count,
    ));
    let _ = write!(
        live,
        "<div class=\"card\"><h2>Containers</h2><div class=\"big\">{containers} <small>running</small></div>\
<dl class=\"kv\"><dt>Pending asks</dt><dd>{pending_containers}</dd><dt>Allocated since start</dt><dd>{}</dd></dl></div>",
        v.allocations
    );
    live.push_str("</section><section class=\"cards\">");

    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    for a in &v.apps {
        *by_state.entry(state_name(a.state)).or_default() += 1;
    }
    live.push_str(
        "<div class=\"card wide\"><h2>Applications</h2><ul class=\"counts\" id=\"apps-by-state\">",
    );
    for st in APP_STATES {
        let name = state_name(st);
        let n = by_state.get(&name).copied().unwrap_or(0);
        let _ = write!(
            live,
            "<li><a href=\"/cluster/apps?state={}\">{}<b>{n}</b></a></li>",
            url_encode(&name),
            badge(&name)
        );
    }
    let _ = write!(
        live,
        "</ul><p class=\"muted\">{} applications in total</p></div>",
        v.apps.len()
    );

    let mut nodes: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &v.nodes {
        *nodes.entry(n.state.as_str()).or_default() += 1;
    }
    live.push_str(
        "<div class=\"card wide\"><h2>Nodes</h2><ul class=\"counts\" id=\"nodes-by-state\">",
    );
    for st in NODE_STATES {
        let n = nodes.get(st.as_str()).copied().unwrap_or(0);
        let _ = write!(
            live,
            "<li><a href=\"/cluster/nodes\">{}<b>{n}</b></a></li>",
            badge(st.as_str())
        );
    }
    live.push_str("</ul></div></section>");

    let mut recent: Vec<&weft_rm_core::AppReport> = v.apps.iter().collect();
    recent.sort_by(|a, b| b.submit_time.cmp(&a.submit_time).then(b.id.cmp(&a.id)));
    recent.truncate(RECENT);
    let _ = write!(
        live,
        "<section><h2>Recent applications <a class=\"more\" href=\"/cluster/apps\">all {} →</a></h2>{}</section>",
        v.apps.len(),
        apps::table(&recent, now, "No applications yet. Submit one with weft dshell.")
    );
    Page {
        title: "Cluster overview".into(),
        nav: "/cluster",
        head: String::new(),
        live,
    }
}

//! `/cluster/scheduler` under the Capacity Scheduler: the queue tree, each queue's usage of the
//! cluster against its guaranteed capacity and its maximum capacity (bars with the two as
//! markers), its capacities as Hadoop reports them, a leaf's apps, user limit settings, AM limit
//! and users; then the applications, active or pending (waiting for the AM limits).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_rm_core::AppReport;
use weft_sched::CapacityQueueDetails;
use weft_types::Resource;

use super::apps::MAX_ROWS;
use super::html::{self, esc, url_encode, Bar, Page};
use super::scheduler::apps_section_page;
use super::View;

/// The Capacity Scheduler's page.
pub(crate) fn page(v: &View) -> Page {
    let snap = &v.snapshot;
    let cap = snap.cluster_capacity;
    let mut live = format!(
        "<section class=\"summary\"><span><b>Capacity Scheduler</b></span>\
<span>Capacity <b>{}</b></span><span>Used <b>{}</b></span><span>Pending <b>{}</b></span>\
<span class=\"legend\"><i class=\"swatch used\"></i>used \
<i class=\"swatch over\"></i>over capacity \
<i class=\"swatch fair\"></i>capacity (guaranteed) \
<i class=\"swatch steady\"></i>maximum capacity</span></section>",
        html::res(cap),
        html::res(snap.cluster_used),
        html::res(snap.cluster_pending),
    );
    let _ = write!(
        live,
        "<div class=\"scroll\"><table class=\"grid queues\" id=\"queues\"><thead><tr><th>Queue</th>\
<th>State</th><th>Memory<br><small>used · capacity · max</small></th><th>vCores</th>\
<th title=\"Configured capacity and maximum capacity, percent of the parent; below, percent of the cluster\">Capacity<br><small>of parent · max</small></th>\
<th title=\"Used resources over the queue's guaranteed resources; below, percent of the cluster\">Used<br><small>of capacity</small></th>\
<th>Apps<br><small>active / pending</small></th>\
<th title=\"minimum-user-limit-percent and user-limit-factor; below, the current per-user limit and the AM resources used of the AM limit\">Limits<br><small>users · AM</small></th>\
<th>Users</th></tr></thead><tbody>",
    );
    let usage: BTreeMap<&str, Resource> = snap
        .queues
        .iter()
        .map(|q| (q.name.as_str(), q.usage))
        .collect();
    let settings = user_limit_settings(v);
    for d in &v.capacity {
        let used = usage
            .get(d.name.as_str())
            .copied()
            .unwrap_or(Resource::ZERO)
            .saturating_add(d.reserved);
        live.push_str(&queue_row(d, used, cap, settings.get(d.name.as_str())));
    }
    live.push_str("</tbody></table></div>");

    let reports: BTreeMap<u64, &AppReport> = v.apps.iter().map(|r| (r.id.seq, r)).collect();
    let rows: Vec<Vec<String>> = snap
        .apps
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            let report = reports.get(&a.app.0);
            let id = report.map_or_else(|| a.app.to_string(), |r| r.id.to_string());
            let name = report.map_or("", |r| r.name.as_str());
            let priority = report.map_or(0, |r| r.priority);
            vec![
                format!(
                    "<a href=\"/cluster/app/{}\">{}</a>",
                    url_encode(&id),
                    esc(&id)
                ),
                esc(name),
                esc(&a.queue),
                esc(&a.user),
                priority.to_string(),
                if a.runnable {
                    html::badge("ACTIVE")
                } else {
                    html::badge("PENDING")
                },
                html::res(a.usage),
                html::res(a.demand),
                format!("{} / {}", a.running_containers, a.pending_containers),
            ]
        })
        .collect();
    apps_section_page(
        live,
        snap.apps.len(),
        &[
            "Application",
            "Name",
            "Queue",
            "User",
            "Priority",
            "<span title=\"Pending applications wait for the queue's and the user's AM limits\">State</span>",
            "Usage",
            "Demand",
            "Containers<br><small>running / asked</small>",
        ],
        &rows,
    )
}

/// Each leaf's `minimum-user-limit-percent` and `user-limit-factor` from the file in force.
fn user_limit_settings(v: &View) -> BTreeMap<&str, (f32, f32)> {
    let Some(file) = &v.capacity_file else {
        return BTreeMap::new();
    };
    file.queues
        .iter()
        .filter_map(|q| match &q.kind {
            weft_config::capacity::QueueKind::Leaf(l) => Some((
                q.path.as_str(),
                (l.minimum_user_limit_percent, l.user_limit_factor),
            )),
            weft_config::capacity::QueueKind::Parent { .. } => None,
        })
        .collect()
}

/// One queue: its name indented by depth, bars against the cluster with the guaranteed and
/// maximum capacities as markers (vcores too: the bars show resources, whatever the
/// calculator compares).
fn queue_row(
    d: &CapacityQueueDetails,
    used: Resource,
    cap: Resource,
    user_limits: Option<&(f32, f32)>,
) -> String {
    let depth = d.name.matches('.').count();
    let short = d.name.rsplit('.').next().unwrap_or(&d.name);
    let leaf = d.user_limit.is_some();
    let bar = |used: i64, min: i64, max: i64, total: i64, f: fn(i64) -> String| {
        Bar {
            value: used,
            total,
            fair: Some(min),
            steady: Some(max),
            label: format!(
                "{} <small>· {} · {}</small>",
                f(used),
                f(min),
                f(max)
            ),
            tip: format!(
                "used {} · guaranteed capacity {} · maximum capacity {} (bar scale: the cluster, {})",
                f(used),
                f(min),
                f(max),
                f(total)
            ),
        }
        .html()
    };
    let memory = bar(
        used.memory_mb(),
        d.effective_min.memory_mb(),
        d.effective_max.memory_mb(),
        cap.memory_mb(),
        html::mem,
    );
    let vcores = bar(
        used.vcores(),
        d.effective_min.vcores(),
        d.effective_max.vcores(),
        cap.vcores(),
        html::count,
    );
    let dash = || "<span class=\"muted\">-</span>".to_string();
    let limits = match (d.user_limit, user_limits, d.am_limit) {
        (Some(limit), Some((mulp, ulf)), Some(am)) => format!(
            "{mulp}% · factor {ulf}<div class=\"muted small\">user {}</div><div class=\"muted small\">AM {} / {}</div>",
            html::mem(limit.memory_mb()),
            html::mem(d.am_used.memory_mb()),
            html::mem(am.memory_mb())
        ),
        _ => dash(),
    };
    let users = if leaf && !d.users.is_empty() {
        d.users
            .iter()
            .map(|u| {
                format!(
                    "<div class=\"user\" title=\"{active} user: {running} active, {pending} pending apps; uses {used} of its limit {limit}\"><b>{name}</b> {used} <small>/ {limit}</small></div>",
                    active = if u.active { "an active" } else { "an idle" },
                    running = u.running_apps,
                    pending = u.pending_apps,
                    name = esc(&u.user),
                    used = html::mem(u.usage.memory_mb()),
                    limit = html::mem(u.user_limit.memory_mb()),
                )
            })
            .collect::<String>()
    } else {
        dash()
    };
    format!(
        "<tr class=\"queue {kind}\" data-queue=\"{name}\"><td class=\"qname\" style=\"padding-left:{pad}rem\" title=\"{name}\">\
<span class=\"qicon\"></span>{short}</td><td>{state}</td>\
<td class=\"bar\">{memory}</td><td class=\"bar\">{vcores}</td>\
<td class=\"num\">{capacity:.1}% · {max:.1}%<div class=\"muted small\">abs {abs:.1}% · {abs_max:.1}%</div></td>\
<td class=\"num\">{used_capacity:.1}%<div class=\"muted small\">abs {abs_used:.1}%</div></td>\
<td class=\"num\">{active} / {pending}</td><td>{limits}</td><td>{users}</td></tr>",
        kind = if leaf { "leaf" } else { "parent" },
        name = esc(&d.name),
        pad = 0.6 + 1.4 * depth as f64,
        short = esc(short),
        state = html::badge(d.state),
        capacity = d.capacity,
        max = d.max_capacity,
        used_capacity = d.used_capacity,
        abs = d.absolute_capacity,
        abs_used = d.absolute_used_capacity,
        abs_max = d.absolute_max_capacity,
        active = d.active_apps,
        pending = d.pending_apps,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_sched::CapacityUserDetails;

    fn leaf(name: &str) -> CapacityQueueDetails {
        CapacityQueueDetails {
            name: name.into(),
            capacity: 60.0,
            max_capacity: 100.0,
            absolute_capacity: 60.0,
            absolute_max_capacity: 100.0,
            used_capacity: 41.7,
            absolute_used_capacity: 25.0,
            state: "DRAINING",
            effective_min: Resource::new(4915, 4),
            effective_max: Resource::new(8192, 8),
            users: vec![CapacityUserDetails {
                user: "alice<script>".into(),
                usage: Resource::new(2048, 2),
                running_apps: 1,
                pending_apps: 0,
                user_limit: Resource::new(5120, 1),
                am_used: Resource::new(1024, 1),
                active: true,
                weight: 1.0,
            }],
            user_limit: Some(Resource::new(5120, 1)),
            am_limit: Some(Resource::new(1024, 1)),
            user_am_limit: Some(Resource::new(1024, 1)),
            max_applications: Some(6000),
            max_applications_per_user: Some(6000),
            reserved: Resource::ZERO,
            am_used: Resource::new(1024, 1),
            active_apps: 1,
            pending_apps: 2,
            preemption_disabled: true,
            used: Resource::new(2048, 2),
            pending: Resource::ZERO,
            by_partition: Vec::new(),
        }
    }

    #[test]
    fn a_leaf_row_shows_its_bars_capacities_limits_and_users() {
        let row = queue_row(
            &leaf("root.a"),
            Resource::new(2048, 2),
            Resource::new(8192, 8),
            Some(&(25.0, 2.0)),
        );
        // Memory bar: 2 GB used of the 8 GB cluster, capacity marker at 4915 MB (60%).
        assert!(row.contains("style=\"width:25.00%\""), "{row}");
        assert!(row.contains("mark fair\" style=\"left:60.00%"), "{row}");
        assert!(row.contains("mark steady\" style=\"left:100.00%"), "{row}");
        assert!(row.contains("s-draining"), "{row}");
        assert!(row.contains("60.0% · 100.0%"), "{row}");
        assert!(row.contains("41.7%"), "{row}");
        assert!(row.contains("1 / 2"), "active / pending: {row}");
        assert!(row.contains("25% · factor 2"), "{row}");
        assert!(
            row.contains("alice&lt;script&gt;"),
            "user names are escaped: {row}"
        );
        assert!(!row.contains("<script>"), "{row}");
        assert!(row.contains("padding-left:2rem"), "depth 1: {row}");
    }
}

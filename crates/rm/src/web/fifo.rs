//! `/cluster/scheduler` under the FIFO scheduler: its one queue (`default`), its usage of the
//! cluster, and the applications in the order FIFO serves them. No shares, weights or
//! policies: FIFO has none.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_rm_core::AppReport;
use weft_types::Resource;

use super::apps::MAX_ROWS;
use super::html::{self, esc, url_encode, Bar, Page};
use super::scheduler::apps_section_page;
use super::View;

/// The FIFO scheduler's page.
pub(crate) fn page(v: &View) -> Page {
    let snap = &v.snapshot;
    let cap = snap.cluster_capacity;
    let mut live = format!(
        "<section class=\"summary\"><span><b>FIFO Scheduler</b></span>\
<span>Capacity <b>{}</b></span><span>Used <b>{}</b></span><span>Pending <b>{}</b></span>\
<span class=\"muted\">one queue; applications served in submission order; only memory is checked</span></section>",
        html::res(cap),
        html::res(snap.cluster_used),
        html::res(snap.cluster_pending),
    );
    let _ = write!(
        live,
        "<div class=\"scroll\"><table class=\"grid queues\" id=\"queues\"><thead><tr><th>Queue</th>\
<th>State</th><th>Memory</th><th>vCores</th><th>Used capacity</th>\
<th>Apps<br><small>running</small></th><th>Containers<br><small>running / asked</small></th>\
</tr></thead><tbody>{}</tbody></table></div>",
        queue_row(v, cap)
    );
    // FIFO serves apps in id order, which is the snapshot's order.
    let reports: BTreeMap<u64, &AppReport> = v.apps.iter().map(|r| (r.id.seq, r)).collect();
    let rows: Vec<Vec<String>> = snap
        .apps
        .iter()
        .take(MAX_ROWS)
        .enumerate()
        .map(|(turn, a)| {
            let report = reports.get(&a.app.0);
            let id = report.map_or_else(|| a.app.to_string(), |r| r.id.to_string());
            let name = report.map_or("", |r| r.name.as_str());
            vec![
                (turn + 1).to_string(),
                format!(
                    "<a href=\"/cluster/app/{}\">{}</a>",
                    url_encode(&id),
                    esc(&id)
                ),
                esc(name),
                esc(&a.user),
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
            "Turn",
            "Application",
            "Name",
            "User",
            "Usage",
            "Demand",
            "Containers<br><small>running / asked</small>",
        ],
        &rows,
    )
}

/// The one queue's row: bars against the cluster (vcores may exceed it: FIFO checks memory
/// only, as Hadoop's DefaultResourceCalculator).
fn queue_row(v: &View, cap: Resource) -> String {
    let snap = &v.snapshot;
    let used = snap.cluster_used;
    let bar = |value: i64, total: i64, f: fn(i64) -> String, what: &str| {
        Bar {
            value,
            total,
            fair: None,
            steady: None,
            label: format!("{} <small>of {}</small>", f(value), f(total)),
            tip: format!("{} {what} used of the cluster's {}", f(value), f(total)),
        }
        .html()
    };
    let running: u64 = snap.apps.iter().map(|a| a.running_containers as u64).sum();
    let asked: u64 = snap.apps.iter().map(|a| a.pending_containers).sum();
    format!(
        "<tr class=\"queue leaf\" data-queue=\"root.default\"><td class=\"qname\" title=\"root.default\">\
<span class=\"qicon\"></span>default<div class=\"muted small\">demand {demand}</div></td>\
<td>{state}</td><td class=\"bar\">{memory}</td><td class=\"bar\">{vcores}</td>\
<td class=\"num\">{used_pct:.1}%</td><td class=\"num\">{apps}</td><td class=\"num\">{running} / {asked}</td></tr>",
        demand = html::res(snap.cluster_pending.saturating_add(used)),
        state = html::badge("RUNNING"),
        memory = bar(used.memory_mb(), cap.memory_mb(), html::mem, "memory"),
        vcores = bar(used.vcores(), cap.vcores(), html::count, "vcores"),
        used_pct = html::pct(used.memory_mb(), cap.memory_mb()),
        apps = snap.apps.len(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_sched::{AppSnapshot, QueueSnapshot, SchedulerKind, Snapshot};
    use weft_types::{AppId, ResourceTypes, Time};

    fn app(seq: u64, running: usize) -> AppSnapshot {
        AppSnapshot {
            app: AppId(seq),
            queue: "root.default".into(),
            user: "u".into(),
            runnable: true,
            usage: Resource::new(1024 * running as i64, running as i64),
            demand: Resource::new(4096, 4),
            fair_share: Resource::ZERO,
            running_containers: running,
            pending_containers: 4 - running as u64,
            am_running: true,
            starvation: None,
        }
    }

    fn queue(name: &str, leaf: bool) -> QueueSnapshot {
        QueueSnapshot {
            name: name.into(),
            leaf,
            policy: "fifo",
            weight: 1.0,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            usage: Resource::new(4096, 4),
            demand: Resource::new(8192, 8),
            min_resources: Resource::ZERO,
            max_resources: Resource::UNBOUNDED,
            am_usage: Resource::ZERO,
            running_apps: 2,
            pending_apps: 0,
            configured: true,
            max_container_allocation: Resource::new(8192, 8),
            starvation: None,
            preempted_containers: 0,
        }
    }

    #[test]
    fn one_queue_its_usage_and_no_fair_share_columns() {
        let view = View {
            kind: SchedulerKind::Fifo,
            snapshot: Snapshot {
                cluster_capacity: Resource::new(16_384, 16),
                cluster_used: Resource::new(4096, 4),
                cluster_pending: Resource::new(4096, 4),
                queues: vec![queue("root", false), queue("root.default", true)],
                apps: vec![app(1, 3), app(2, 1)],
                nodes: Vec::new(),
            },
            apps: Vec::new(),
            nodes: Vec::new(),
            counts: Default::default(),
            pending: Default::default(),
            labels: Vec::new(),
            types: ResourceTypes::default(),
            allocations: 4,
            capacity: Vec::new(),
            capacity_file: None,
            pools: Vec::new(),
            queue_pools: BTreeMap::new(),
            demand_counts: Vec::new(),
            demand_outcomes: Default::default(),
            plan_ratios: Vec::new(),
        };
        let html = super::super::scheduler::page(&view, Time(0)).live;
        assert!(html.contains("<b>FIFO Scheduler</b>"), "{html}");
        assert_eq!(html.matches("<tr class=\"queue").count(), 1, "{html}");
        assert!(html.contains("data-queue=\"root.default\""), "{html}");
        // 4 GB of 16 GB: 25%, and both apps' containers.
        assert!(html.contains("<td class=\"num\">25.0%</td>"), "{html}");
        assert!(html.contains("<td class=\"num\">4 / 4</td>"), "{html}");
        for fair_only in ["fair share", "Weight", "Policy", "Fair share", "steady"] {
            assert!(!html.contains(fair_only), "{fair_only} in {html}");
        }
        // Apps in the order FIFO serves them.
        let apps = html.split("id=\"sched-apps\"").nth(1).expect("apps table");
        let (first, second) = (apps.find(">app_0001<"), apps.find(">app_0002<"));
        assert!(first.is_some() && first < second, "{apps}");
    }
}

//! `/cluster/scheduler`: the Fair Scheduler's queue tree, each queue's usage against its
//! instantaneous and steady fair shares, its limits and apps; then the apps the scheduler holds.
//! Under the FIFO and Capacity schedulers, their own pages (`web/fifo`, `web/capacity`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use weft_rm_core::AppReport;
use weft_sched::{QueueSnapshot, SchedulerKind};
use weft_types::{Resource, Time};

use super::apps::MAX_ROWS;
use super::html::{self, esc, url_encode, Bar, Page};
use super::View;

/// The scheduler page of the scheduler that runs.
pub(crate) fn page(v: &View, _now: Time) -> Page {
    match v.kind {
        SchedulerKind::Fifo => super::fifo::page(v),
        SchedulerKind::Capacity => super::capacity::page(v),
        SchedulerKind::Fair => fair_page(v),
    }
}

/// The Fair Scheduler's page.
fn fair_page(v: &View) -> Page {
    let snap = &v.snapshot;
    let cap = snap.cluster_capacity;
    let mut live = format!(
        "<section class=\"summary\"><span><b>Fair Scheduler</b></span>\
<span>Capacity <b>{}</b></span><span>Used <b>{}</b></span><span>Pending <b>{}</b></span>\
<span class=\"legend\"><i class=\"swatch used\"></i>used \
<i class=\"swatch over\"></i>over fair share \
<i class=\"swatch fair\"></i>fair share \
<i class=\"swatch steady\"></i>steady fair share</span></section>",
        html::res(cap),
        html::res(snap.cluster_used),
        html::res(snap.cluster_pending),
    );
    // Said once in the header rather than on every row: only DRF shares vcores.
    let memory_only: BTreeSet<&str> = snap
        .queues
        .iter()
        .filter(|q| !shares_vcores(q.policy))
        .map(|q| q.policy)
        .collect();
    let vcores_note = if memory_only.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = memory_only.into_iter().collect();
        format!(
            "<br><small title=\"The {0} policy shares memory only: its queues have no vcore fair share\">usage only: not shared by {0}</small>",
            esc(&names.join(" or "))
        )
    };
    if v.pools.is_empty() {
        let rows: String = snap
            .queues
            .iter()
            .map(|q| queue_row(q, cap, None))
            .collect();
        live.push_str(&queue_table("queues", &vcores_note, &rows));
    } else {
        live.push_str(&pool_sections(v, &vcores_note));
    }
    let policies: BTreeMap<&str, &str> = snap
        .queues
        .iter()
        .map(|q| (q.name.as_str(), q.policy))
        .collect();

    // The scheduler numbers apps by their YARN sequence number.
    let reports: BTreeMap<u64, &AppReport> = v.apps.iter().map(|r| (r.id.seq, r)).collect();
    let rows: Vec<Vec<String>> = snap
        .apps
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            let report = reports.get(&a.app.0);
            let id = report.map_or_else(|| a.app.to_string(), |r| r.id.to_string());
            let name = report.map_or("", |r| r.name.as_str());
            vec![
                format!(
                    "<a href=\"/cluster/app/{}\">{}</a>",
                    url_encode(&id),
                    esc(&id)
                ),
                esc(name),
                esc(&a.queue),
                esc(&a.user),
                if a.runnable {
                    html::badge("RUNNABLE")
                } else {
                    html::badge("WAITING")
                },
                html::res(a.usage),
                // An app's vcore share is 0 under fair and fifo (they share memory only).
                if policies
                    .get(a.queue.as_str())
                    .is_some_and(|p| shares_vcores(p))
                {
                    html::res(a.fair_share)
                } else {
                    html::mem(a.fair_share.memory_mb())
                },
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
            "Runnable",
            "Usage",
            "Fair share",
            "Demand",
            "Containers<br><small>running / asked</small>",
        ],
        &rows,
    )
}

/// The queue table with `id` around `rows`.
fn queue_table(id: &str, vcores_note: &str, rows: &str) -> String {
    format!(
        "<div class=\"scroll\"><table class=\"grid queues\" id=\"{id}\"><thead><tr><th>Queue</th><th>Memory</th>\
<th>vCores{vcores_note}</th><th>Apps<br><small>running / pending</small></th><th>Min</th><th>Max</th>\
<th>Weight</th><th>Policy</th><th>Preemptable</th>\
<th title=\"Containers preempted from the queue's applications (its subtree's for a parent) since the RM started\">Preempted<br><small>containers</small></th></tr></thead><tbody>{rows}</tbody></table></div>",
        id = esc(id),
    )
}

/// With resource pools (resource-pools spec §13): one section per pool, DEFAULT first, its
/// header the pool's nodes, capacity, usage, pending demand, foreign usage and utilisation,
/// then its queues (root spans every pool and is left out) with bars against the pool's
/// capacity, each row badged with the pool. DEFAULT holds the queues bound to no pool; it is
/// left out when it has neither nodes nor queues.
fn pool_sections(v: &View, vcores_note: &str) -> String {
    let mut out = String::new();
    for (i, p) in v.pools.iter().enumerate() {
        let shown = if p.name.is_empty() {
            "<DEFAULT_PARTITION>"
        } else {
            p.name.as_str()
        };
        let rows: String = v
            .snapshot
            .queues
            .iter()
            .filter(|q| q.name != "root")
            .filter(|q| v.queue_pools.get(&q.name).map_or("", String::as_str) == p.name)
            .map(|q| queue_row(q, p.capacity, Some(shown)))
            .collect();
        if rows.is_empty() && p.nodes == 0 {
            continue;
        }
        let fraction = |i: usize| {
            let c = p.capacity.get(i);
            if c > 0 {
                p.used.get(i) as f64 / c as f64
            } else {
                0.0
            }
        };
        let utilization = 100.0 * fraction(0).max(fraction(1));
        let _ = write!(
            out,
            "<section class=\"pool\" data-pool=\"{name}\"><h2>Resource pool {title}</h2>\
<div class=\"summary\"><span>Nodes <b>{nodes}</b></span><span>Capacity <b>{capacity}</b></span>\
<span>Used <b>{used}</b></span><span>Pending <b>{pending}</b></span>\
<span title=\"Held by other pools' applications left on this pool's nodes by a host move\">Foreign <b>{foreign}</b></span>\
<span>Utilisation <b>{utilization:.1}%</b></span></div>{table}</section>",
            name = esc(&p.name),
            title = esc(shown),
            nodes = p.nodes,
            capacity = html::res(p.capacity),
            used = html::res(p.used),
            pending = html::res(p.pending),
            foreign = html::res(p.foreign_used),
            table = queue_table(&format!("queues-{i}"), vcores_note, &rows),
        );
    }
    out
}

/// One queue as a table row: its name indented by depth, bars for memory and vcores against
/// `cap` (the cluster, or the queue's resource pool), and the pool's badge when given.
fn queue_row(q: &QueueSnapshot, cap: Resource, pool: Option<&str>) -> String {
    let depth = q.name.matches('.').count();
    let short = q.name.rsplit('.').next().unwrap_or(&q.name);
    let kind = if q.leaf { "leaf" } else { "parent" };
    let scale = if pool.is_some() {
        "the pool"
    } else {
        "the cluster"
    };
    let bar = |used: i64, fair: i64, steady: i64, total: i64, f: fn(i64) -> String| {
        Bar {
            value: used,
            total,
            fair: Some(fair),
            steady: Some(steady),
            label: format!(
                "{} <small>· fair {} · steady {}</small>",
                f(used),
                f(fair),
                f(steady)
            ),
            tip: format!(
                "used {} · fair share {} · steady fair share {} (bar scale: {}, {})",
                f(used),
                f(fair),
                f(steady),
                scale,
                f(total)
            ),
        }
        .html()
    };
    let memory = bar(
        q.usage.memory_mb(),
        q.fair_share.memory_mb(),
        q.steady_fair_share.memory_mb(),
        cap.memory_mb(),
        html::mem,
    );
    // Only DRF shares vcores; under fair and fifo a queue's vcore shares are 0 by design, so
    // markers (and "over fair share") would mislead.
    let vcores = if shares_vcores(q.policy) {
        bar(
            q.usage.vcores(),
            q.fair_share.vcores(),
            q.steady_fair_share.vcores(),
            cap.vcores(),
            html::count,
        )
    } else {
        Bar {
            value: q.usage.vcores(),
            total: cap.vcores(),
            fair: None,
            steady: None,
            label: format!(
                "{} <small>of {} in {scale}</small>",
                q.usage.vcores(),
                cap.vcores(),
            ),
            tip: format!(
                "{} vcores used; the {} policy shares memory only",
                q.usage.vcores(),
                q.policy
            ),
        }
        .html()
    };
    let mut configured = if q.configured {
        String::new()
    } else {
        " <span class=\"tag\" title=\"Created by a placement rule, not in the allocation file\">dynamic</span>".to_string()
    };
    if let Some(pool) = pool {
        let _ = write!(
            configured,
            " <span class=\"tag pool\" title=\"Resource pool\">{}</span>",
            esc(pool)
        );
    }
    format!(
        "<tr class=\"queue {kind}\" data-queue=\"{name}\"><td class=\"qname\" style=\"padding-left:{pad}rem\" title=\"{name}\">\
<span class=\"qicon\"></span>{short}{configured}<div class=\"muted small\">demand {demand}</div></td>\
<td class=\"bar\">{memory}</td><td class=\"bar\">{vcores}</td>\
<td class=\"num\">{running} / {pending}</td><td>{min}</td><td>{max}</td><td class=\"num\">{weight}</td><td>{policy}</td>\
<td>{preemptable}</td><td class=\"num\">{preempted}</td></tr>",
        name = esc(&q.name),
        pad = 0.6 + 1.4 * depth as f64,
        short = esc(short),
        demand = html::res(q.demand),
        running = q.running_apps,
        pending = q.pending_apps,
        min = limit(q.min_resources),
        max = limit(q.max_resources),
        weight = trim_weight(q.weight),
        policy = esc(q.policy),
        // Hadoop's "Preemptable": allowPreemptionFrom of the queue and every ancestor.
        preemptable = if q.starvation.is_some_and(|s| s.preemptable) {
            "yes"
        } else {
            "no"
        },
        preempted = q.preempted_containers,
    )
}

/// Whether a scheduling policy shares vcores (only DRF does).
fn shares_vcores(policy: &str) -> bool {
    policy.eq_ignore_ascii_case("drf")
}

/// A min or max share on one line (it never wraps); `-` for none, `unlimited` for unbounded.
fn limit(r: Resource) -> String {
    if r.is_zero() {
        return "<span class=\"muted\">-</span>".to_string();
    }
    if r.memory_mb() >= html::UNBOUNDED && r.vcores() >= html::UNBOUNDED {
        return "<span class=\"muted limit\">unlimited</span>".to_string();
    }
    format!("<span class=\"limit\">{}</span>", html::res(r))
}

fn trim_weight(w: f64) -> String {
    let s = format!("{w:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The page's last section, the scheduler's applications (the first [`MAX_ROWS`] rows of
/// `total`), and the page around `live`: the same for every scheduler kind.
pub(super) fn apps_section_page(
    mut live: String,
    total: usize,
    headers: &[&str],
    rows: &[Vec<String>],
) -> Page {
    let shown = if total > MAX_ROWS {
        format!(" <small class=\"muted\">(first {MAX_ROWS} of {total})</small>")
    } else {
        String::new()
    };
    let _ = write!(
        live,
        "<section><h2>Applications in the scheduler{shown}</h2>{}</section>",
        html::table(
            "sched-apps",
            headers,
            rows,
            "No application is waiting or running.",
        )
    );
    Page {
        title: "Scheduler".into(),
        nav: "/cluster/scheduler",
        head: String::new(),
        live,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_sched::{AppSnapshot, Snapshot};
    use weft_types::{AppId, ResourceTypes};

    fn queue(name: &str, leaf: bool, policy: &'static str) -> QueueSnapshot {
        QueueSnapshot {
            name: name.into(),
            leaf,
            policy,
            weight: 1.0,
            fair_share: Resource::new(4096, 0),
            steady_fair_share: Resource::new(4096, 0),
            usage: Resource::new(2048, 2),
            demand: Resource::new(3072, 3),
            min_resources: Resource::ZERO,
            max_resources: Resource::new(10_240, 12),
            am_usage: Resource::ZERO,
            running_apps: 1,
            pending_apps: 0,
            configured: true,
            max_container_allocation: Resource::new(8192, 4),
            starvation: None,
            preempted_containers: 0,
        }
    }

    fn app(queue: &str, seq: u64) -> AppSnapshot {
        AppSnapshot {
            app: AppId(seq),
            queue: queue.into(),
            user: "u".into(),
            runnable: true,
            usage: Resource::new(2048, 2),
            demand: Resource::new(2048, 2),
            fair_share: Resource::new(3072, 3),
            running_containers: 2,
            pending_containers: 0,
            am_running: true,
            starvation: None,
        }
    }

    /// Resource pools (spec §13): a section per pool with its figures and its queues only,
    /// badged, bars against the pool; DEFAULT without nodes or queues is left out; root is in
    /// no section.
    #[test]
    fn with_pools_the_queues_are_grouped_by_pool() {
        let pool = |name: &str, nodes: u32| weft_sched::PoolStats {
            name: name.into(),
            nodes,
            capacity: Resource::new(8192 * i64::from(nodes), 8 * i64::from(nodes)),
            used: Resource::new(2048, 2),
            pending: Resource::ZERO,
            foreign_used: Resource::new(1024, 1),
        };
        let view = View {
            kind: SchedulerKind::Fair,
            snapshot: Snapshot {
                cluster_capacity: Resource::new(24_576, 24),
                cluster_used: Resource::new(4096, 4),
                cluster_pending: Resource::ZERO,
                queues: vec![
                    queue("root", false, "fair"),
                    queue("root.pool1_a", true, "fair"),
                    queue("root.pool2_b", true, "drf"),
                ],
                apps: Vec::new(),
                nodes: Vec::new(),
            },
            apps: Vec::new(),
            nodes: Vec::new(),
            counts: Default::default(),
            pending: Default::default(),
            labels: Vec::new(),
            types: ResourceTypes::default(),
            allocations: 0,
            capacity: Vec::new(),
            capacity_file: None,
            demand_counts: Vec::new(),
            demand_outcomes: Default::default(),
            plan_ratios: Vec::new(),
            pools: vec![pool("", 0), pool("pool1", 2), pool("pool2", 1)],
            queue_pools: [
                ("root.pool1_a".to_string(), "pool1".to_string()),
                ("root.pool2_b".to_string(), "pool2".to_string()),
            ]
            .into_iter()
            .collect(),
        };
        let html = page(&view, Time(0)).live;
        assert!(!html.contains("data-pool=\"\""), "DEFAULT is empty: {html}");
        let section = |pool: &str| {
            let start = html
                .find(&format!("data-pool=\"{pool}\""))
                .unwrap_or_else(|| panic!("no section for {pool}: {html}"));
            let end = start + html[start..].find("</section>").expect("section end");
            &html[start..end]
        };
        let pool1 = section("pool1");
        assert!(pool1.contains("data-queue=\"root.pool1_a\""), "{pool1}");
        assert!(!pool1.contains("data-queue=\"root.pool2_b\""), "{pool1}");
        assert!(pool1.contains("<span class=\"tag pool\" title=\"Resource pool\">pool1</span>"));
        assert!(pool1.contains("Nodes <b>2</b>"), "{pool1}");
        assert!(
            pool1.contains("Utilisation <b>12.5%</b>"),
            "2048 of 16384 MB: {pool1}"
        );
        assert!(pool1.contains("bar scale: the pool"), "{pool1}");
        let pool2 = section("pool2");
        assert!(pool2.contains("data-queue=\"root.pool2_b\""), "{pool2}");
        assert!(
            !html.contains("data-queue=\"root\""),
            "root spans the pools"
        );
    }

    #[test]
    fn vcores_are_said_unshared_once_and_fair_apps_show_no_vcore_share() {
        let view = View {
            kind: SchedulerKind::Fair,
            snapshot: Snapshot {
                cluster_capacity: Resource::new(16_384, 16),
                cluster_used: Resource::new(4096, 4),
                cluster_pending: Resource::ZERO,
                queues: vec![
                    queue("root", false, "fair"),
                    queue("root.a", true, "fair"),
                    queue("root.b", true, "drf"),
                ],
                apps: vec![app("root.a", 1), app("root.b", 2)],
                nodes: Vec::new(),
            },
            apps: Vec::new(),
            nodes: Vec::new(),
            counts: Default::default(),
            pending: Default::default(),
            labels: Vec::new(),
            types: ResourceTypes::default(),
            allocations: 0,
            capacity: Vec::new(),
            capacity_file: None,
            pools: Vec::new(),
            queue_pools: BTreeMap::new(),
            demand_counts: Vec::new(),
            demand_outcomes: Default::default(),
            plan_ratios: Vec::new(),
        };
        let html = page(&view, Time(0)).live;
        assert_eq!(
            html.matches("not shared by fair").count(),
            1,
            "once, in the header: {html}"
        );
        // The fair app's share is memory only; the DRF app's has its vcores.
        assert!(html.contains("<td>3 GB</td>"), "{html}");
        assert!(html.contains("<td>3 GB · 3 vcores</td>"), "{html}");
        let apps = html.split("id=\"sched-apps\"").nth(1).expect("apps table");
        assert!(!apps.contains("· 0 vcores"), "{apps}");
        // A max share stays on one line.
        assert!(
            html.contains("<span class=\"limit\">10 GB · 12 vcores</span>"),
            "{html}"
        );
    }

    #[test]
    fn each_queue_says_whether_it_is_preemptable_and_how_many_it_lost() {
        let settings = |preemptable| weft_sched::QueueStarvation {
            min_share_preemption_timeout_ms: i64::MAX,
            fair_share_preemption_timeout_ms: i64::MAX,
            fair_share_preemption_threshold: 0.5,
            preemptable,
            at_min_share_since: None,
            min_share_starvation: Resource::ZERO,
            fair_share_starvation: Resource::ZERO,
        };
        let mut a = queue("root.a", true, "fair");
        a.starvation = Some(settings(true));
        a.preempted_containers = 4;
        let mut b = queue("root.b", true, "fair");
        b.starvation = Some(settings(false));
        let row = |q: &QueueSnapshot| queue_row(q, Resource::new(16_384, 16), None);
        assert!(
            row(&a).ends_with("<td>yes</td><td class=\"num\">4</td></tr>"),
            "{}",
            row(&a)
        );
        assert!(
            row(&b).ends_with("<td>no</td><td class=\"num\">0</td></tr>"),
            "{}",
            row(&b)
        );
    }
}

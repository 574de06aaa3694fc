//! `/metrics`: the RM's figures in Prometheus' text exposition format (version 0.0.4).
//! Every family is documented in `crates/rm/METRICS.md`; the HELP lines say the same briefly.

use std::fmt::Write as _;

use weft_sched::SchedulerKind;
use weft_types::Resource;

use crate::driver::DriverStats;
use crate::reload::ReloadStatus;
use crate::web::{state_name, View};
use crate::web::{APP_STATES, NODE_STATES};

/// A text exposition being written.
struct Out {
    text: String,
}

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{k}=\"{}\"", label_value(v));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {}", number(value));
    }

    /// One sample per resource type of `r`.
    fn resource(&mut self, name: &str, labels: &[(&str, &str)], r: Resource, v: &View) {
        for i in 0..v.types.len() {
            let mut all = labels.to_vec();
            all.push(("resource", v.types.name(i)));
            self.sample(name, &all, capped(r.get(i)));
        }
    }
}

/// Unbounded limits (`i64::MAX`) are exported as +Inf rather than a meaningless huge number.
fn capped(v: i64) -> f64 {
    if v >= crate::web::UNBOUNDED {
        f64::INFINITY
    } else {
        v as f64
    }
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_string()
    } else if v == f64::INFINITY {
        "+Inf".to_string()
    } else if v == f64::NEG_INFINITY {
        "-Inf".to_string()
    } else {
        format!("{v}")
    }
}

/// Escapes a label value: backslash, double quote and newline.
fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Every demand state, in lifecycle order.
const DEMAND_STATES: [weft_rm_core::DemandState; 7] = [
    weft_rm_core::DemandState::New,
    weft_rm_core::DemandState::Accepted,
    weft_rm_core::DemandState::Allocating,
    weft_rm_core::DemandState::Allocated,
    weft_rm_core::DemandState::Monitoring,
    weft_rm_core::DemandState::Finished,
    weft_rm_core::DemandState::Failed,
];

/// The whole exposition.
pub(crate) fn render(
    v: &View,
    stats: &DriverStats,
    started_on_ms: u64,
    reloads: &ReloadStatus,
) -> String {
    let mut o = Out {
        text: String::with_capacity(16 * 1024),
    };
    let snap = &v.snapshot;

    o.family(
        "weft_rm_start_time_seconds",
        "gauge",
        "When this ResourceManager started, in seconds since the Unix epoch.",
    );
    o.sample(
        "weft_rm_start_time_seconds",
        &[],
        started_on_ms as f64 / 1000.0,
    );

    o.family(
        "weft_cluster_capacity",
        "gauge",
        "Total resources of usable nodes (memory-mb in MB, vcores, custom types in their units).",
    );
    o.resource("weft_cluster_capacity", &[], snap.cluster_capacity, v);
    o.family(
        "weft_cluster_allocated",
        "gauge",
        "Resources held by allocated containers.",
    );
    o.resource("weft_cluster_allocated", &[], snap.cluster_used, v);
    o.family(
        "weft_cluster_available",
        "gauge",
        "Capacity minus allocated resources.",
    );
    o.resource(
        "weft_cluster_available",
        &[],
        snap.cluster_capacity.saturating_sub(snap.cluster_used),
        v,
    );
    o.family(
        "weft_cluster_pending",
        "gauge",
        "Resources asked for by applications and not yet allocated.",
    );
    o.resource("weft_cluster_pending", &[], snap.cluster_pending, v);

    o.family(
        "weft_cluster_containers_running",
        "gauge",
        "Live containers on the nodes.",
    );
    o.sample(
        "weft_cluster_containers_running",
        &[],
        v.counts.containers_on_nodes as f64,
    );
    o.family(
        "weft_cluster_containers_pending",
        "gauge",
        "Containers asked for by applications and not yet allocated.",
    );
    o.sample(
        "weft_cluster_containers_pending",
        &[],
        v.pending.pending_containers as f64,
    );
    o.family(
        "weft_cluster_reserved_nodes",
        "gauge",
        "Nodes holding a reservation for an application's ask.",
    );
    o.sample(
        "weft_cluster_reserved_nodes",
        &[],
        v.pending.reserved_nodes as f64,
    );

    o.family("weft_cluster_nodes", "gauge", "Nodes by state.");
    for st in NODE_STATES {
        let n = v.counts.nodes_in(st);
        o.sample("weft_cluster_nodes", &[("state", st.as_str())], n as f64);
    }

    o.family(
        "weft_cluster_apps",
        "gauge",
        "Applications the ResourceManager knows, by state.",
    );
    for st in APP_STATES {
        let n = v.counts.apps_in(st);
        o.sample("weft_cluster_apps", &[("state", &state_name(st))], n as f64);
    }

    o.family(
        "weft_demands",
        "gauge",
        "Time-aware demands (Weft only) by state and the reason of their last transition.",
    );
    // Every state has a sample: a state no demand is in reads 0 without a reason label.
    for state in DEMAND_STATES {
        let name = weft_rm_core::demand_state_name(state);
        let mut any = false;
        for (_, reason, n) in v.demand_counts.iter().filter(|(s, _, _)| *s == state) {
            any = true;
            let labels = [("state", name), ("reason", reason.as_str())];
            o.sample("weft_demands", &labels, *n as f64);
        }
        if !any {
            o.sample("weft_demands", &[("state", name)], 0.0);
        }
    }

    let outcomes = v.demand_outcomes;
    o.family(
        "weft_demand_deadline_total",
        "counter",
        "Demands with a deadline that ended since the RM started: hit (FINISHED in time) or miss (late, deadline_missed, deadline_unreachable).",
    );
    o.sample(
        "weft_demand_deadline_total",
        &[("outcome", "hit")],
        outcomes.deadline_hit as f64,
    );
    o.sample(
        "weft_demand_deadline_total",
        &[("outcome", "miss")],
        outcomes.deadline_miss as f64,
    );
    o.family(
        "weft_claim_expired_total",
        "counter",
        "Demands failed claim_expired since the RM started (containers allocated and not launched within ClaimTimeout).",
    );
    o.sample(
        "weft_claim_expired_total",
        &[],
        outcomes.claim_expired as f64,
    );
    if !v.plan_ratios.is_empty() {
        o.family(
            "weft_plan_committed_ratio",
            "gauge",
            "Each reservable queue's plan: the larger of committed memory and vcores over the plan's capacity now.",
        );
        for (plan, ratio) in &v.plan_ratios {
            o.sample("weft_plan_committed_ratio", &[("plan", plan)], *ratio);
        }
    }

    scheduler_info(&mut o, v.kind);
    queue_families(&mut o, v);
    pool_families(&mut o, v);
    timing_families(&mut o, v, stats);
    reload_families(&mut o, reloads);
    o.text
}

/// Reads one figure of a resource pool.
type PoolFigure = fn(&weft_sched::PoolStats) -> Resource;

/// Per resource pool (label `pool`, `<DEFAULT_PARTITION>` for the nodes in no pool); none
/// without pools.
fn pool_families(o: &mut Out, v: &View) {
    if v.pools.is_empty() {
        return;
    }
    let name = |p: &weft_sched::PoolStats| {
        if p.name.is_empty() {
            "<DEFAULT_PARTITION>".to_string()
        } else {
            p.name.clone()
        }
    };
    o.family(
        "weft_pool_nodes",
        "gauge",
        "Nodes in the resource pool (usable or not).",
    );
    for p in &v.pools {
        o.sample("weft_pool_nodes", &[("pool", &name(p))], f64::from(p.nodes));
    }
    let families: [(&str, &str, PoolFigure); 4] = [
        (
            "weft_pool_capacity",
            "Total resources of the pool's nodes.",
            |p| p.capacity,
        ),
        (
            "weft_pool_allocated",
            "Resources held by containers on the pool's nodes (foreign ones included).",
            |p| p.used,
        ),
        (
            "weft_pool_pending",
            "Resources the pool's queues ask for beyond their usage (as of the last scheduler update).",
            |p| p.pending,
        ),
        (
            "weft_pool_foreign_allocated",
            "Resources held on the pool's nodes by containers of other pools' applications, left there by a host move.",
            |p| p.foreign_used,
        ),
    ];
    for (family, help, figure) in families {
        o.family(family, "gauge", help);
        for p in &v.pools {
            o.resource(family, &[("pool", &name(p))], figure(p), v);
        }
    }
}

fn reload_families(o: &mut Out, r: &ReloadStatus) {
    o.family(
        "weft_allocation_reload_success",
        "gauge",
        "1 if the last read of the allocation file loaded, 0 while it is refused (the old queues stay).",
    );
    let ok = if r.error.is_none() { 1.0 } else { 0.0 };
    o.sample("weft_allocation_reload_success", &[], ok);
    o.family(
        "weft_allocation_reload_timestamp_seconds",
        "gauge",
        "When the allocation file was last read (startup or reload), Unix seconds.",
    );
    o.sample(
        "weft_allocation_reload_timestamp_seconds",
        &[],
        r.last_attempt_ms as f64 / 1000.0,
    );
    o.family(
        "weft_allocation_reload_success_timestamp_seconds",
        "gauge",
        "When the allocation file last loaded successfully, Unix seconds.",
    );
    o.sample(
        "weft_allocation_reload_success_timestamp_seconds",
        &[],
        r.last_success_ms as f64 / 1000.0,
    );
    o.family(
        "weft_allocation_reload_errors_total",
        "counter",
        "Allocation-file reloads refused since the ResourceManager started.",
    );
    o.sample(
        "weft_allocation_reload_errors_total",
        &[],
        r.errors_total as f64,
    );
}

/// Which scheduler runs, as an info gauge (always 1; the labels carry the value), so dashboards
/// can tell a FIFO cluster's figures from a Fair one's.
fn scheduler_info(o: &mut Out, kind: SchedulerKind) {
    o.family(
        "weft_scheduler_info",
        "gauge",
        "The scheduler this ResourceManager runs: kind (fair, capacity or fifo) and Hadoop's class name; always 1.",
    );
    o.sample(
        "weft_scheduler_info",
        &[("kind", kind.short_name()), ("class", kind.class_name())],
        1.0,
    );
}

/// Queue families only the Fair Scheduler has figures for (shares, configured limits,
/// weights, maxRunningApps): left out under FIFO rather than exported as zeros.
const FAIR_ONLY_QUEUE_FAMILIES: [&str; 8] = [
    "weft_queue_fair_share",
    "weft_queue_steady_fair_share",
    "weft_queue_min_resources",
    "weft_queue_max_resources",
    "weft_queue_apps_pending",
    "weft_queue_weight",
    "weft_queue_preemptable",
    "weft_queue_containers_preempted_total",
];

fn queue_families(o: &mut Out, v: &View) {
    // Capacity's pending apps wait for the AM limits: the family means the same (waiting to
    // run), so it is exported there too.
    let exported = |name: &str| {
        v.kind == SchedulerKind::Fair
            || !FAIR_ONLY_QUEUE_FAMILIES.contains(&name)
            || (v.kind == SchedulerKind::Capacity && name == "weft_queue_apps_pending")
    };
    type Field = fn(&weft_sched::QueueSnapshot) -> Resource;
    let resources: [(&str, &str, Field); 7] = [
        (
            "weft_queue_fair_share",
            "Instantaneous fair share of the queue (as of the last scheduler update).",
            |q| q.fair_share,
        ),
        (
            "weft_queue_steady_fair_share",
            "Steady fair share of the queue (its share of the whole cluster by weight).",
            |q| q.steady_fair_share,
        ),
        (
            "weft_queue_usage",
            "Resources held by the queue's containers.",
            |q| q.usage,
        ),
        (
            "weft_queue_demand",
            "Usage plus outstanding asks of the queue's apps (as of the last update).",
            |q| q.demand,
        ),
        (
            "weft_queue_min_resources",
            "The queue's configured minimum share.",
            |q| q.min_resources,
        ),
        (
            "weft_queue_max_resources",
            "The queue's maximum share, resolved against the cluster (+Inf when unbounded).",
            |q| q.max_resources,
        ),
        (
            "weft_queue_am_usage",
            "Resources held by ApplicationMaster containers in the queue.",
            |q| q.am_usage,
        ),
    ];
    for (name, help, field) in resources.into_iter().filter(|f| exported(f.0)) {
        o.family(name, "gauge", help);
        for q in &v.snapshot.queues {
            o.resource(name, &[("queue", &q.name)], field(q), v);
        }
    }
    type Count = fn(&weft_sched::QueueSnapshot) -> f64;
    let counts: [(&str, &str, Count); 3] = [
        (
            "weft_queue_apps_running",
            "Runnable applications in the queue (its subtree for parents).",
            |q| q.running_apps as f64,
        ),
        (
            "weft_queue_apps_pending",
            "Applications waiting to run: for the queue's maxRunningApps (Fair) or its AM limits (Capacity); its subtree for parents.",
            |q| q.pending_apps as f64,
        ),
        ("weft_queue_weight", "The queue's weight.", |q| q.weight),
    ];
    for (name, help, field) in counts.into_iter().filter(|f| exported(f.0)) {
        o.family(name, "gauge", help);
        for q in &v.snapshot.queues {
            o.sample(name, &[("queue", &q.name)], field(q));
        }
    }
    if v.kind == SchedulerKind::Fair {
        preemption_families(o, v);
    }
    if v.kind == SchedulerKind::Capacity {
        capacity_families(o, v);
    }
}

/// The Capacity Scheduler's per-queue capacities as its REST API reports them (percent).
fn capacity_families(o: &mut Out, v: &View) {
    type Figure = fn(&weft_sched::CapacityQueueDetails) -> f64;
    let figures: [(&str, &str, Figure); 6] = [
        (
            "weft_queue_capacity_percent",
            "Capacity Scheduler: the queue's configured capacity, percent of its parent.",
            |d| d.capacity,
        ),
        (
            "weft_queue_max_capacity_percent",
            "Capacity Scheduler: the queue's maximum capacity, percent of its parent.",
            |d| d.max_capacity,
        ),
        (
            "weft_queue_absolute_capacity_percent",
            "Capacity Scheduler: the queue's guaranteed capacity, percent of the cluster.",
            |d| d.absolute_capacity,
        ),
        (
            "weft_queue_absolute_max_capacity_percent",
            "Capacity Scheduler: the queue's maximum capacity, percent of the cluster.",
            |d| d.absolute_max_capacity,
        ),
        (
            "weft_queue_used_capacity_percent",
            "Capacity Scheduler: used resources (reservations included), percent of the queue's guaranteed resources; above 100 when elastic.",
            |d| d.used_capacity,
        ),
        (
            "weft_queue_absolute_used_capacity_percent",
            "Capacity Scheduler: used resources (reservations included), percent of the cluster.",
            |d| d.absolute_used_capacity,
        ),
    ];
    for (name, help, figure) in figures {
        o.family(name, "gauge", help);
        for d in &v.capacity {
            o.sample(name, &[("queue", &d.name)], figure(d));
        }
    }
    o.family(
        "weft_queue_state",
        "gauge",
        "Capacity Scheduler: 1 for the queue's state (RUNNING, DRAINING or STOPPED), 0 for the others.",
    );
    for d in &v.capacity {
        for state in ["RUNNING", "DRAINING", "STOPPED"] {
            let on = if d.state == state { 1.0 } else { 0.0 };
            o.sample(
                "weft_queue_state",
                &[("queue", &d.name), ("state", state)],
                on,
            );
        }
    }
    o.family(
        "weft_queue_user_limit",
        "gauge",
        "Capacity Scheduler: a leaf's current per-user limit (before user weights).",
    );
    for d in &v.capacity {
        if let Some(limit) = d.user_limit {
            o.resource("weft_queue_user_limit", &[("queue", &d.name)], limit, v);
        }
    }
}

/// The Fair Scheduler's preemption per queue (Hadoop's `AggregateContainersPreempted` queue
/// metric and `isPreemptable`) and the cluster's total, which is the root queue's count.
fn preemption_families(o: &mut Out, v: &View) {
    o.family(
        "weft_queue_preemptable",
        "gauge",
        "1 if the scheduler may preempt containers of the queue (allowPreemptionFrom of it and every ancestor), else 0.",
    );
    for q in &v.snapshot.queues {
        // The Fair Scheduler reports its settings for every queue.
        let flag = q.starvation.is_some_and(|s| s.preemptable);
        o.sample(
            "weft_queue_preemptable",
            &[("queue", &q.name)],
            if flag { 1.0 } else { 0.0 },
        );
    }
    o.family(
        "weft_queue_containers_preempted_total",
        "counter",
        "Containers preempted from the queue's applications (its subtree for parents) since the ResourceManager started.",
    );
    for q in &v.snapshot.queues {
        o.sample(
            "weft_queue_containers_preempted_total",
            &[("queue", &q.name)],
            q.preempted_containers as f64,
        );
    }
    o.family(
        "weft_cluster_containers_preempted_total",
        "counter",
        "Containers the scheduler preempted since the ResourceManager started.",
    );
    let total = v
        .snapshot
        .queues
        .iter()
        .find(|q| q.name == "root")
        .map_or(0, |q| q.preempted_containers);
    o.sample("weft_cluster_containers_preempted_total", &[], total as f64);
}

fn timing_families(o: &mut Out, v: &View, stats: &DriverStats) {
    o.family(
        "weft_scheduler_allocations_total",
        "counter",
        "Containers the scheduler allocated since the ResourceManager started.",
    );
    o.sample(
        "weft_scheduler_allocations_total",
        &[],
        v.allocations as f64,
    );
    o.family(
        "weft_scheduler_calls_total",
        "counter",
        "Calls into the scheduler core by kind: the handler that sent the work (module.function), tick, or update.",
    );
    for k in &stats.kinds {
        o.sample(
            "weft_scheduler_calls_total",
            &[("kind", &k.kind)],
            k.calls as f64,
        );
    }
    o.family(
        "weft_scheduler_call_seconds_total",
        "counter",
        "Seconds spent in the scheduler core by kind (see weft_scheduler_calls_total).",
    );
    for k in &stats.kinds {
        o.sample(
            "weft_scheduler_call_seconds_total",
            &[("kind", &k.kind)],
            k.seconds,
        );
    }
    o.family(
        "weft_scheduler_update_duration_seconds",
        "gauge",
        "How long the last periodic scheduler update (fair shares, demand, runnability) took.",
    );
    o.sample(
        "weft_scheduler_update_duration_seconds",
        &[],
        stats.last_update_seconds,
    );
    verification(o, stats);
    o.family(
        "weft_store_writes_total",
        "counter",
        "State store transactions written by the driver.",
    );
    o.sample("weft_store_writes_total", &[], stats.store_writes as f64);
    o.family(
        "weft_store_write_seconds_total",
        "counter",
        "Seconds spent writing state store transactions.",
    );
    o.sample(
        "weft_store_write_seconds_total",
        &[],
        stats.store_write_seconds,
    );
}

/// The periodic verification of the scheduler's state (`weft.scheduler.verify-interval-ms`).
fn verification(o: &mut Out, stats: &DriverStats) {
    let v = &stats.verify;
    o.family(
        "weft_scheduler_verifications_total",
        "counter",
        "Periodic verifications of the scheduler's state (every aggregate and order recomputed from scratch).",
    );
    o.sample("weft_scheduler_verifications_total", &[], v.runs as f64);
    o.family(
        "weft_scheduler_verify_drift",
        "gauge",
        "Differences the last verification found between the scheduler's state and its recomputation (0: consistent).",
    );
    o.sample("weft_scheduler_verify_drift", &[], v.last_drift as f64);
    o.family(
        "weft_scheduler_verify_drift_total",
        "counter",
        "Differences found by all verifications; each was repaired by rebuilding the derived state.",
    );
    o.sample(
        "weft_scheduler_verify_drift_total",
        &[],
        v.drift_total as f64,
    );
    o.family(
        "weft_scheduler_verify_duration_seconds",
        "gauge",
        "How long the last verification took, all its slices together.",
    );
    o.sample(
        "weft_scheduler_verify_duration_seconds",
        &[],
        v.last_seconds,
    );
    o.family(
        "weft_scheduler_verify_slice_max_seconds",
        "gauge",
        "How long the last verification's longest slice took (the longest it held the driver up).",
    );
    o.sample(
        "weft_scheduler_verify_slice_max_seconds",
        &[],
        v.last_longest_slice_seconds,
    );
    o.family(
        "weft_scheduler_verify_slices",
        "gauge",
        "How many slices the last verification ran in.",
    );
    o.sample("weft_scheduler_verify_slices", &[], v.last_slices as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn label_values_and_special_numbers_follow_the_format() {
        assert_eq!(label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(capped(i64::MAX), f64::INFINITY);
    }

    #[test]
    fn a_refused_reload_shows_in_the_reload_families() {
        let mut o = Out {
            text: String::new(),
        };
        let refused = ReloadStatus {
            file: None,
            last_attempt_ms: 5_000,
            last_success_ms: 2_000,
            error: Some("fair-scheduler.xml: line 3: bad".into()),
            errors_total: 2,
        };
        reload_families(&mut o, &refused);
        for line in [
            "weft_allocation_reload_success 0\n",
            "weft_allocation_reload_timestamp_seconds 5\n",
            "weft_allocation_reload_success_timestamp_seconds 2\n",
            "weft_allocation_reload_errors_total 2\n",
            "# TYPE weft_allocation_reload_errors_total counter\n",
        ] {
            assert!(o.text.contains(line), "{line:?} missing in:\n{}", o.text);
        }
        let mut o = Out {
            text: String::new(),
        };
        reload_families(&mut o, &ReloadStatus::loaded_at_start(None, 1_000));
        assert!(
            o.text.contains("weft_allocation_reload_success 1\n"),
            "{}",
            o.text
        );
    }

    fn view(kind: SchedulerKind) -> View {
        let queue = |name: &str, leaf: bool| weft_sched::QueueSnapshot {
            name: name.into(),
            leaf,
            policy: "fifo",
            weight: 1.0,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            usage: Resource::new(2048, 2),
            demand: Resource::new(3072, 3),
            min_resources: Resource::ZERO,
            max_resources: Resource::UNBOUNDED,
            am_usage: Resource::new(1024, 1),
            running_apps: 1,
            pending_apps: 0,
            configured: true,
            max_container_allocation: Resource::new(8192, 8),
            starvation: None,
            preempted_containers: 0,
        };
        View {
            kind,
            snapshot: weft_sched::Snapshot {
                cluster_capacity: Resource::new(8192, 8),
                cluster_used: Resource::new(2048, 2),
                cluster_pending: Resource::ZERO,
                queues: vec![queue("root", false), queue("root.default", true)],
                apps: Vec::new(),
                nodes: Vec::new(),
            },
            apps: Vec::new(),
            nodes: Vec::new(),
            counts: Default::default(),
            pending: Default::default(),
            labels: Vec::new(),
            types: weft_types::ResourceTypes::default(),
            allocations: 0,
            capacity: Vec::new(),
            capacity_file: None,
            pools: Vec::new(),
            queue_pools: BTreeMap::new(),
            demand_counts: Vec::new(),
            demand_outcomes: Default::default(),
            plan_ratios: Vec::new(),
        }
    }

    fn families(kind: SchedulerKind) -> String {
        let mut o = Out {
            text: String::new(),
        };
        let v = view(kind);
        scheduler_info(&mut o, v.kind);
        queue_families(&mut o, &v);
        o.text
    }

    /// Resource pools: one sample per pool (DEFAULT named `<DEFAULT_PARTITION>`) of nodes,
    /// capacity, allocation, pending and foreign allocation; none without pools.
    #[test]
    fn pools_export_their_nodes_usage_pending_and_foreign_usage() {
        let mut v = view(SchedulerKind::Fair);
        let mut o = Out {
            text: String::new(),
        };
        pool_families(&mut o, &v);
        assert_eq!(o.text, "", "no pools, no pool families");
        let pool = |name: &str, nodes: u32, used: i64, foreign: i64| weft_sched::PoolStats {
            name: name.into(),
            nodes,
            capacity: Resource::new(8192 * i64::from(nodes), 8 * i64::from(nodes)),
            used: Resource::new(used, used / 1024),
            pending: Resource::new(3072, 3),
            foreign_used: Resource::new(foreign, foreign / 1024),
        };
        v.pools = vec![pool("", 1, 0, 0), pool("pool2", 3, 8192, 4096)];
        pool_families(&mut o, &v);
        for line in [
            "weft_pool_nodes{pool=\"<DEFAULT_PARTITION>\"} 1\n",
            "weft_pool_nodes{pool=\"pool2\"} 3\n",
            "weft_pool_capacity{pool=\"pool2\",resource=\"memory-mb\"} 24576\n",
            "weft_pool_allocated{pool=\"pool2\",resource=\"vcores\"} 8\n",
            "weft_pool_pending{pool=\"<DEFAULT_PARTITION>\",resource=\"memory-mb\"} 3072\n",
            "weft_pool_foreign_allocated{pool=\"pool2\",resource=\"memory-mb\"} 4096\n",
            "# TYPE weft_pool_foreign_allocated gauge\n",
        ] {
            assert!(o.text.contains(line), "{line:?} missing in:\n{}", o.text);
        }
    }

    #[test]
    fn the_scheduler_kind_is_an_info_gauge_and_fifo_exports_no_shares() {
        let fifo = families(SchedulerKind::Fifo);
        assert!(
            fifo.contains("weft_scheduler_info{kind=\"fifo\",class=\"org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler\"} 1\n"),
            "{fifo}"
        );
        assert!(
            fifo.contains("weft_queue_usage{queue=\"root.default\",resource=\"memory-mb\"} 2048\n"),
            "{fifo}"
        );
        assert!(fifo.contains("weft_queue_apps_running{queue=\"root.default\"} 1\n"));
        for name in FAIR_ONLY_QUEUE_FAMILIES {
            assert!(!fifo.contains(name), "{name} under FIFO:\n{fifo}");
        }
        let fair = families(SchedulerKind::Fair);
        assert!(
            fair.contains("weft_scheduler_info{kind=\"fair\","),
            "{fair}"
        );
        for name in FAIR_ONLY_QUEUE_FAMILIES {
            assert!(
                fair.contains(&format!("# TYPE {name} gauge\n"))
                    || fair.contains(&format!("# TYPE {name} counter\n")),
                "{name}:\n{fair}"
            );
        }
    }

    #[test]
    fn capacity_queues_export_their_capacities_state_and_user_limit() {
        let xml = "<configuration>\
            <property><name>yarn.scheduler.capacity.root.queues</name><value>default,b</value></property>\
            <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>60</value></property>\
            <property><name>yarn.scheduler.capacity.root.b.capacity</name><value>40</value></property>\
            <property><name>yarn.scheduler.capacity.root.b.state</name><value>STOPPED</value></property>\
            </configuration>";
        let (capacity, _) =
            weft_config::capacity::parse_capacity(xml, &Default::default()).expect("valid");
        let mut s = weft_sched::Scheduler::new(
            weft_sched::SchedulerConfig::Capacity(weft_sched::CapacitySchedulerConfig {
                capacity,
                properties: Default::default(),
            }),
            Default::default(),
        );
        s.handle(
            weft_types::Time(0),
            weft_sched::Event::NodeAdded {
                node: weft_types::NodeId(0),
                host: "h".into(),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        )
        .expect("node");
        let mut v = view(SchedulerKind::Capacity);
        v.capacity = s.capacity_details();
        let mut o = Out {
            text: String::new(),
        };
        queue_families(&mut o, &v);
        let text = o.text;
        for line in [
            "weft_queue_capacity_percent{queue=\"root.default\"} 60\n",
            "weft_queue_absolute_capacity_percent{queue=\"root.b\"} 40\n",
            "weft_queue_max_capacity_percent{queue=\"root\"} 100\n",
            "weft_queue_state{queue=\"root.b\",state=\"STOPPED\"} 1\n",
            "weft_queue_state{queue=\"root.b\",state=\"RUNNING\"} 0\n",
            "weft_queue_apps_pending{queue=\"root.default\"} 0\n",
            // Leaves have a user limit, parents none.
            "weft_queue_user_limit{queue=\"root.default\",resource=\"memory-mb\"}",
        ] {
            assert!(text.contains(line), "{line:?} missing in:\n{text}");
        }
        assert!(!text.contains("weft_queue_fair_share"), "{text}");
        assert!(
            !text.contains("weft_queue_user_limit{queue=\"root\""),
            "{text}"
        );
    }

    #[test]
    fn preemption_counts_per_queue_and_for_the_cluster() {
        let mut v = view(SchedulerKind::Fair);
        let settings = |preemptable| weft_sched::QueueStarvation {
            min_share_preemption_timeout_ms: i64::MAX,
            fair_share_preemption_timeout_ms: i64::MAX,
            fair_share_preemption_threshold: 0.5,
            preemptable,
            at_min_share_since: None,
            min_share_starvation: Resource::ZERO,
            fair_share_starvation: Resource::ZERO,
        };
        v.snapshot.queues[0].starvation = Some(settings(true));
        v.snapshot.queues[0].preempted_containers = 3;
        v.snapshot.queues[1].starvation = Some(settings(false));
        v.snapshot.queues[1].preempted_containers = 3;
        let mut o = Out {
            text: String::new(),
        };
        queue_families(&mut o, &v);
        for line in [
            "# TYPE weft_queue_containers_preempted_total counter\n",
            "weft_queue_containers_preempted_total{queue=\"root\"} 3\n",
            "weft_queue_containers_preempted_total{queue=\"root.default\"} 3\n",
            "weft_queue_preemptable{queue=\"root\"} 1\n",
            "weft_queue_preemptable{queue=\"root.default\"} 0\n",
            "# TYPE weft_cluster_containers_preempted_total counter\n",
            "weft_cluster_containers_preempted_total 3\n",
        ] {
            assert!(o.text.contains(line), "{line:?} missing in:\n{}", o.text);
        }
    }
}

//! End-to-end checks of the scale driver on small workloads.

use super::*;
use crate::workload::{AppPlan, ClosedLoop, Stage, TaskGroup, WorkloadNode};
use crate::ZeroClock;
use weft_types::{Resource, ResourceTypes};

fn nodes(n: usize) -> Vec<WorkloadNode> {
    (0..n)
        .map(|i| WorkloadNode {
            host: format!("h{i}"),
            rack: format!("/r{}", i % 2),
            capability: Resource::new(8192, 8),
        })
        .collect()
}

fn workload(apps: AppSource, end: Option<Time>) -> Workload {
    Workload {
        name: "test".into(),
        nodes: nodes(4),
        allocations_xml: Some(
            "<allocations><queue name=\"a\"/><queue name=\"b\"/></allocations>".into(),
        ),
        properties: vec![("yarn.scheduler.fair.assignmultiple".into(), "true".into())],
        resource_types: ResourceTypes::default(),
        heartbeat_interval: Duration::from_millis(1000),
        update_interval: Duration::from_millis(500),
        end,
        apps,
    }
}

fn closed_loop() -> ClosedLoop {
    ClosedLoop {
        concurrent: 6,
        queues: vec!["root.a".into(), "root.b".into()],
        users: vec!["u1".into(), "u2".into()],
        am: Some(Resource::new(1024, 1)),
        container: Resource::new(1024, 1),
        tasks_per_app: (5, 20),
        task_duration_ms: (2_000, 6_000),
        priority: 1,
        initial_spread: Duration::from_millis(0),
        seed: 3,
    }
}

fn run(w: &Workload, walk: WalkMode) -> ScaleReport {
    let (config, warnings) = workload_config(w, "test").expect("valid config");
    assert!(warnings.is_empty(), "{warnings:?}");
    let options = ScaleOptions {
        walk,
        verify_every: Some(Duration::from_secs(1)),
        ..ScaleOptions::default()
    };
    run_scale(w, config, &mut ZeroClock, &options, &mut |_, _| {}).expect("runs")
}

#[test]
fn a_closed_loop_keeps_its_apps_running_and_the_cluster_busy() {
    let w = workload(AppSource::ClosedLoop(closed_loop()), Some(Time(120_000)));
    let r = run(&w, WalkMode::Fast);
    assert_eq!(r.drift, 0, "{:?}", r.drift_examples);
    assert!(r.apps_finished > 6, "apps finish and are replaced: {r:?}");
    assert_eq!(r.apps, r.apps_finished + 6, "the loop holds 6 live apps");
    assert!(r.time_to_90pct_ms.is_some(), "demand exceeds 32 slots");
    assert_eq!(
        r.samples.len(),
        121,
        "one sample a second, both ends included"
    );
    assert!(r.samples.iter().all(|s| s.usage <= 1.0));
    assert_eq!(r.valid_schedule_minutes.len(), 2);
    // Seed 003's definition: a minute is valid when, at every sample in it, usage is at least
    // 90% or no queue has valid pending demand.
    for (m, valid) in r.valid_schedule_minutes.iter().enumerate() {
        let expected = r
            .samples
            .iter()
            .filter(|s| s.t_ms.saturating_sub(1) / 60_000 == m as u64)
            .all(|s| s.usage >= 0.9 || !s.valid_pending);
        assert_eq!(*valid, u8::from(expected), "minute {m}");
    }
    assert_eq!(
        r.valid_schedule_minutes[0], 0,
        "the ramp-up minute starts empty"
    );
}

#[test]
fn the_reference_walk_makes_the_same_decisions() {
    let w = workload(AppSource::ClosedLoop(closed_loop()), Some(Time(60_000)));
    let fast = run(&w, WalkMode::Fast);
    let reference = run(&w, WalkMode::Reference);
    assert_eq!(fast.allocations, reference.allocations);
    assert_eq!(fast.samples, reference.samples);
    assert_eq!(fast.waits_ms, reference.waits_ms);
}

#[test]
fn a_trace_runs_to_completion_with_stages_in_order() {
    let task = |priority, count, ms| TaskGroup {
        priority,
        resource: Resource::new(2048, 1),
        count,
        duration: Duration::from_millis(ms),
        host: Some("h1".into()),
        rack: Some("/r1".into()),
    };
    let plans = (0..5)
        .map(|i| AppPlan {
            submit: Time(i * 3_000),
            name: format!("job{i}"),
            user: "u".into(),
            queue: Some("root.a".into()),
            am: Some(Resource::new(1024, 1)),
            stages: vec![
                Stage {
                    groups: vec![task(20, 10, 4_000)],
                },
                Stage {
                    groups: vec![task(10, 2, 1_000)],
                },
            ],
        })
        .collect();
    let w = workload(AppSource::Trace(plans), None);
    let r = run(&w, WalkMode::Fast);
    assert_eq!(r.drift, 0, "{:?}", r.drift_examples);
    assert_eq!((r.apps, r.apps_finished), (5, 5));
    assert_eq!(r.allocations, 5 * (1 + 10 + 2));
    // Maps (4 s) must finish before reduces (1 s) start: at least 5 s per app.
    assert!(r.completion_p50_ms >= 5_000, "{}", r.completion_p50_ms);
    let last = r.samples.last().expect("samples");
    assert_eq!((last.pending_containers, last.live_apps), (0, 0));
}

/// The preemption preset under each strategy: containers are preempted, the work they had done
/// is counted as lost, every preempted task is asked again (every job still finishes, which
/// needs each of its tasks to complete), and the starved leaves reach their share.
#[test]
fn preempted_tasks_are_asked_again_and_their_work_is_counted_as_lost() {
    for strategy in ["targeted", "global"] {
        let mut w = crate::presets::preset("preemption", 0.05, 1).expect("known preset");
        w.properties.push((
            "weft.scheduler.fair.preemption.strategy".into(),
            strategy.into(),
        ));
        let r = run(&w, WalkMode::Fast);
        assert!(r.preempted_containers > 0, "{strategy}: {r:?}");
        assert!(r.preempt_warnings >= r.preempted_containers, "{strategy}");
        assert!(r.work_lost_container_seconds > 0.0, "{strategy}");
        assert_eq!((r.apps, r.apps_finished), (4, 4), "{strategy}");
        assert!(
            r.starved_episodes >= 3,
            "{strategy}: the three late jobs were starved"
        );
        assert_eq!(r.starved_at_end, 0, "{strategy}");
        assert!(r.starved_to_share_p50_ms > 0, "{strategy}");
        assert_eq!(r.drift, 0, "{strategy}: {:?}", r.drift_examples);
        // Every task container was allocated once, plus once more per preemption (the re-ask).
        let AppSource::Trace(plans) = &w.apps else {
            panic!("the preset is a trace");
        };
        let tasks: u64 = plans.iter().map(AppPlan::task_count).sum();
        assert_eq!(
            r.allocations - r.am_allocations,
            tasks + r.preempted_containers - r.preempted_am_containers,
            "{strategy}"
        );
    }
}

#[test]
fn comparison_rows_put_each_run_in_its_column() {
    let mut w = crate::presets::preset("preemption", 0.05, 1).expect("known preset");
    w.properties.push((
        "weft.scheduler.fair.preemption.strategy".into(),
        "global".into(),
    ));
    let global = run(&w, WalkMode::Fast);
    let rows = present::comparison_rows(&[("one", &global), ("two", &global)]);
    assert_eq!(
        rows[0],
        ("strategy".to_string(), vec!["one".into(), "two".into()])
    );
    let preempted = rows
        .iter()
        .find(|(k, _)| k == "containers preempted")
        .expect("a preempted row");
    assert_eq!(
        preempted.1,
        vec![global.preempted_containers.to_string(); 2]
    );
}

/// The meituan preset at 1% (120 nodes, 20 leaves under 4 parents) for 20 s, without pools or
/// split into 4 pools (one parent each).
fn meituan_small(pools: u32) -> ScaleReport {
    let mut params = crate::presets::MeituanParams::full().scaled(0.01);
    params.parents = 4;
    params.end = Duration::from_secs(20);
    let params = params.with_pools(pools).expect("enough nodes and queues");
    let w = params.workload(1);
    let (config, warnings) = workload_config(&w, "the preset").expect("valid config");
    assert!(warnings.is_empty(), "{warnings:?}");
    run_scale(
        &w,
        config,
        &mut ZeroClock,
        &ScaleOptions::default(),
        &mut |_, _| {},
    )
    .expect("runs")
}

#[test]
fn pools_narrow_each_heartbeat_to_its_pools_queues_and_report_per_pool_figures() {
    let whole = meituan_small(0);
    let pooled = meituan_small(4);
    for r in [&whole, &pooled] {
        assert_eq!(r.drift, 0, "{:?}", r.drift_examples);
        assert!(r.samples.iter().all(|s| s.usage <= 1.0));
        assert!(r.allocations > 1000, "the cluster fills: {}", r.allocations);
        assert!(r.queues_visited > 0);
    }
    assert!(whole.pools.is_empty());
    assert_eq!(whole.pool_aware_valid_schedule_per_min, None);
    // Each walk of the pooled run may descend to its pool's one parent only; without pools to
    // any of the four parents with demand (all four have it while the cluster is loaded).
    let walks_whole = whole.top_level_reachable_per_heartbeat;
    let walks_pooled = pooled.top_level_reachable_per_heartbeat;
    assert!(
        walks_pooled * 3.0 < walks_whole,
        "pooled {walks_pooled} vs whole {walks_whole}"
    );
    let names: Vec<&str> = pooled.pools.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["", "pool0", "pool1", "pool2", "pool3"]);
    let nodes: Vec<u32> = pooled.pools.iter().map(|p| p.nodes).collect();
    assert_eq!(nodes, [0, 30, 30, 30, 30]);
    for p in &pooled.pools[1..] {
        assert_eq!(p.capacity_vcores, 30 * 100);
        assert!(p.usage_last > 0.9 && p.usage_last <= 1.0, "{p:?}");
        assert!(p.pending_mb > 0, "demand exceeds every pool: {p:?}");
        assert_eq!(p.valid_schedule_minutes.len(), 1);
    }
    assert!(pooled.pool_aware_valid_schedule_per_min.is_some());
    // Scenario 31's bound, heartbeat by heartbeat: no walk enters more queues than the node's
    // pool holds (root, its parent and 5 leaves: 7 of the tree's 26, which has root.default too).
    for r in [&whole, &pooled] {
        assert_eq!(r.walk_bound.walks_beyond_pool, 0, "{:?}", r.walk_bound);
        assert_eq!(r.walk_bound.tree_queues, 26);
        assert!(r.walk_bound.walks > r.walk_bound.heartbeats);
    }
    assert_eq!(whole.walk_bound.pool_queues_per_heartbeat, 26.0);
    assert_eq!(pooled.walk_bound.pool_queues_per_heartbeat, 7.0);
    assert!(
        pooled.walk_bound.widest_walk <= 7,
        "{:?}",
        pooled.walk_bound
    );
}

/// Resource-pools spec §14 scenario 31 (heartbeat cost): the meituan preset at 5% split into
/// 20 pools, for 30 s of virtual time. No node over its capacity and no drift (verification
/// every 10 s), and no heartbeat's walk enters more queues than its node's pool holds.
#[test]
fn scenario_31_no_walk_leaves_its_nodes_pool() {
    let mut params = crate::presets::MeituanParams::full().scaled(0.05);
    params.end = Duration::from_secs(30);
    let params = params.with_pools(20).expect("enough nodes and queues");
    let w = params.workload(1);
    let (config, warnings) = workload_config(&w, "the preset").expect("valid config");
    assert!(warnings.is_empty(), "{warnings:?}");
    // Each verification also as a sliced round (the RM's form), in slices of 50 containers.
    let options = ScaleOptions {
        verify_every: Some(Duration::from_secs(10)),
        verify_slice_budget: Some(50),
        ..ScaleOptions::default()
    };
    let r = run_scale(&w, config, &mut ZeroClock, &options, &mut |_, _| {}).expect("runs");
    assert_eq!(r.drift, 0, "{:?}", r.drift_examples);
    assert!(
        r.sliced_rounds >= 3 && r.slices > r.sliced_rounds * 10,
        "{} sliced rounds in {} slices",
        r.sliced_rounds,
        r.slices
    );
    assert!(r.samples.iter().all(|s| s.usage <= 1.0));
    assert!(r.allocations > 1000, "the cluster fills: {}", r.allocations);
    let b = &r.walk_bound;
    assert_eq!(b.walks_beyond_pool, 0, "{b:?}");
    assert!(b.heartbeats > 10_000, "{b:?}");
    // Each pool holds a twentieth of the tree's leaves (plus root and its parents): far less
    // than the tree a walk without pools may enter.
    assert!(
        b.pool_queues_per_heartbeat * 10.0 < b.tree_queues as f64,
        "{b:?}"
    );
    assert!(
        b.widest_walk as f64 <= b.pool_queues_per_heartbeat.ceil(),
        "{b:?}"
    );
}

/// The footprint figures come from the run's own walk counters: every allocation was offered
/// by a walk, each entering root, a parent and a leaf at least, and an app offered the node.
#[test]
fn footprint_weighs_the_walks_visits_by_the_structures_sizes() {
    let r = meituan_small(0);
    let f = &r.footprint;
    let heartbeats = r.walk_bound.heartbeats as f64;
    assert!(
        f.app_bytes > 0 && f.queue_bytes > 0 && f.node_bytes > 0,
        "{f:?}"
    );
    assert_eq!(
        f.walks_per_heartbeat,
        r.walk_bound.walks as f64 / heartbeats
    );
    assert_eq!(
        f.queues_visited_per_heartbeat,
        r.queues_visited_per_heartbeat
    );
    let allocations_per_heartbeat = r.allocations as f64 / heartbeats;
    assert!(
        f.apps_visited_per_heartbeat >= allocations_per_heartbeat,
        "{f:?}"
    );
    assert!(
        f.queues_visited_per_heartbeat >= 3.0 * allocations_per_heartbeat,
        "{f:?}"
    );
    let bytes = f.queues_visited_per_heartbeat * f.queue_bytes as f64
        + f.apps_visited_per_heartbeat * f.app_bytes as f64
        + f.node_bytes as f64;
    assert!(
        (f.visited_bytes_per_heartbeat - bytes).abs() < 1e-6 * bytes,
        "{f:?}"
    );
}

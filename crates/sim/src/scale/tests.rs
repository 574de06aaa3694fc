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

//! The presets under the Capacity Scheduler (`--scheduler capacity`): the capacity-scheduler.xml
//! generated from the preset's tree runs with no drift and keeps the cluster busy.

use weft_sched::{SchedulerConfig, SchedulerKind, WalkMode};
use weft_sim::presets::preset;
use weft_sim::scale::{run_scale, workload_config_for, ScaleOptions};
use weft_sim::ZeroClock;
use weft_types::{Duration, Time};

fn run_under_capacity(
    name: &str,
    scale: f64,
    end: Option<Time>,
) -> weft_sim::scale::metrics::ScaleReport {
    let workload = preset(name, scale, 0).expect("preset");
    let prepared =
        workload_config_for(&workload, "preset", SchedulerKind::Capacity).expect("config");
    assert!(prepared.warnings.is_empty(), "{:?}", prepared.warnings);
    assert!(
        matches!(prepared.config, SchedulerConfig::Capacity(_)),
        "the Capacity Scheduler runs"
    );
    let options = ScaleOptions {
        walk: WalkMode::Fast,
        verify_every: Some(Duration::from_secs(5)),
        end_override: end,
        ..ScaleOptions::default()
    };
    run_scale(
        &prepared.workload,
        prepared.config,
        &mut ZeroClock,
        &options,
        &mut |_, _| {},
    )
    .expect("the run completes")
}

#[test]
fn meituan_under_capacity_fills_the_cluster_without_drift() {
    // 1%: 120 nodes of 100 containers, 20 leaves under one parent, 100 apps.
    let report = run_under_capacity("meituan", 0.01, Some(Time::ZERO + Duration::from_secs(30)));
    assert_eq!(report.drift, 0, "{:?}", report.drift_examples);
    assert_eq!(report.apps_rejected, 0);
    assert_eq!(report.queues, 20, "every leaf got apps");
    assert!(
        report.time_to_99pct_ms.is_some(),
        "demand above capacity fills the cluster under the user-limit factor chosen"
    );
    // The cluster holds 12,000 containers at once (tasks run 40 s, longer than the run).
    assert!(
        report.allocations >= 12_000,
        "{} allocations",
        report.allocations
    );
    assert!(report.samples.iter().all(|s| s.usage <= 1.0));
}

#[test]
fn small_under_capacity_runs_every_app_without_drift() {
    let report = run_under_capacity("small", 0.2, None);
    assert_eq!(report.drift, 0, "{:?}", report.drift_examples);
    assert_eq!(report.apps_rejected, 0);
    assert_eq!(
        report.apps_finished, report.apps,
        "the trace ran to its end"
    );
    assert!(
        report.allocations > report.apps,
        "tasks beyond the AMs were allocated"
    );
}

/// Seed 001's picture (`--preset preemption`) under the Capacity Scheduler with the
/// scheduling monitor on: the big job gives back what the later queues are owed, every
/// preempted task is asked for again and run (so each preemption is one more allocation than
/// the same run without the monitor), no AM is taken and every app finishes without drift.
#[test]
fn the_preemption_preset_under_capacity_preemption_reruns_what_it_takes() {
    let run = |monitor: bool| {
        let workload = preset("preemption", 1.0, 0).expect("preset");
        let mut prepared =
            workload_config_for(&workload, "preset", SchedulerKind::Capacity).expect("config");
        if let SchedulerConfig::Capacity(c) = &mut prepared.config {
            c.properties.scheduler_monitor_enabled = monitor;
        }
        let options = ScaleOptions {
            walk: WalkMode::Fast,
            verify_every: Some(Duration::from_secs(5)),
            ..ScaleOptions::default()
        };
        run_scale(
            &prepared.workload,
            prepared.config,
            &mut ZeroClock,
            &options,
            &mut |_, _| {},
        )
        .expect("the run completes")
    };
    let (off, on) = (run(false), run(true));
    assert_eq!(off.preempted_containers, 0);
    assert_eq!(on.drift, 0, "{:?}", on.drift_examples);
    assert_eq!(on.apps_finished, on.apps, "every app finished");
    assert!(
        on.preempted_containers > 0,
        "the monitor took something back"
    );
    assert_eq!(on.preempt_warnings, on.preempted_containers);
    assert_eq!(on.preempted_am_containers, 0);
    assert_eq!(
        on.allocations,
        off.allocations + on.preempted_containers,
        "each preempted task ran again"
    );
}

//! CI smoke test of the production-scale simulator: seed 003's preset at 5% scale, run to the
//! preset's end and then drained. Asserts correctness only (never speed): verification finds no
//! drift (which includes "no node over its capacity"), the cluster fills, and every app ends.

use weft_sched::WalkMode;
use weft_sim::presets::preset;
use weft_sim::scale::{run_scale, workload_config, ScaleOptions};
use weft_sim::ZeroClock;
use weft_types::Duration;

#[test]
fn meituan_at_five_percent_runs_clean_and_every_app_finishes() {
    let workload = preset("meituan", 0.05, 0).expect("preset");
    let (config, warnings) = workload_config(&workload, "preset").expect("config");
    assert!(warnings.is_empty(), "{warnings:?}");
    let options = ScaleOptions {
        walk: WalkMode::Fast,
        verify_every: Some(Duration::from_secs(10)),
        drain: true,
        ..ScaleOptions::default()
    };
    let mut samples = 0;
    let report = run_scale(&workload, config, &mut ZeroClock, &options, &mut |_, _| {
        samples += 1
    })
    .expect("the run completes");
    assert_eq!(report.drift, 0, "{:?}", report.drift_examples);
    assert_eq!(report.nodes, 600);
    assert_eq!(report.apps_rejected, 0);
    assert_eq!(
        report.apps_finished, report.apps,
        "every app finished after the drain"
    );
    assert!(
        report.apps > 500,
        "finished apps were replaced during the run"
    );
    assert!(
        report.time_to_90pct_ms.is_some(),
        "demand above capacity fills the cluster"
    );
    assert!(report.virtual_ms > 120_000, "the drain ran past the end");
    let last = report.samples.last().expect("samples");
    assert_eq!((last.live_apps, last.pending_containers), (0, 0));
    assert!(report.samples.iter().all(|s| s.usage <= 1.0));
    assert_eq!(
        samples,
        report.samples.len() - 1,
        "progress at every sample but the final one"
    );
}

//! The bench against a real RM (in this process, on 127.0.0.1 with ephemeral ports): a short
//! run with a few simulated NMs must allocate, churn and report no errors. Speed is not checked.

use std::time::Duration;

use clap::Parser;
use weft_rm::RmArgs;
use weft_rmbench::{bench, RmBenchArgs};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: RmBenchArgs,
}

#[test]
fn a_short_run_allocates_and_churns_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("rm.toml");
    std::fs::write(
        &config,
        "heartbeat_interval_ms = 100\n[properties]\n\"yarn.scheduler.fair.assignmultiple\" = true\n",
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rm = runtime
        .block_on(weft_rm::start(RmArgs {
            config: Some(config),
            data_dir: Some(dir.path().join("data")),
            scheduler_address: Some("127.0.0.1:0".into()),
            client_address: Some("127.0.0.1:0".into()),
            tracker_address: Some("127.0.0.1:0".into()),
            web_address: Some("127.0.0.1:0".into()),
            ..RmArgs::default()
        }))
        .unwrap();
    let (scheduler, tracker, web) = (
        rm.scheduler.to_string(),
        rm.tracker.to_string(),
        rm.web.to_string(),
    );
    let args = Cli::parse_from([
        "rm-bench",
        "--rm-scheduler",
        &scheduler,
        "--rm-tracker",
        &tracker,
        "--rm-web",
        &web,
        "--nms",
        "4",
        "--node-memory-mb",
        "8192",
        "--node-vcores",
        "8",
        "--warmup",
        "500ms",
        "--duration",
        "1500ms",
    ])
    .bench;
    let report = bench(&args).unwrap();
    runtime.block_on(rm.stop());
    runtime.shutdown_timeout(Duration::from_secs(2));

    assert_eq!(report.errors, 0, "errors: {:?}", report.first_errors);
    assert_eq!(report.heartbeat_ms, 100, "the NMs follow the RM's interval");
    assert!(report.heartbeats > 0);
    assert!(report.allocated > 0, "{}", report.text());
    assert!(report.completions_reported > 0, "{}", report.text());
    assert_eq!(report.unroutable, 0);
    assert_eq!(report.resyncs, 0);
    assert!(report.allocated_total >= report.allocated);
    assert!(report.peak_1s > 0);
    // Every container lives until its node's next heartbeat, so a node can hand out at most
    // its 8 slots per heartbeat.
    assert!(
        report.allocated as f64 <= report.heartbeat_bound_per_sec * report.window_s + 8.0 * 4.0
    );
}

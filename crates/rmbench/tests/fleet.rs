//! A tiny preset run against a real RM in this process (127.0.0.1, ephemeral ports): apps with
//! a few short tasks complete and are replaced, the figures come per minute, and nothing errs.

use std::time::Duration;

use clap::Parser;
use weft_rm::RmArgs;
use weft_rmbench::{fleet, RmBenchArgs};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: RmBenchArgs,
}

#[test]
fn short_apps_complete_and_are_replaced_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    // The RM gets the preset's allocation file and properties, as a child RM would.
    let workload = weft_sim::presets::preset("meituan", 0.002, 1).unwrap();
    let allocations = dir.path().join("fair-scheduler.xml");
    std::fs::write(&allocations, workload.allocations_xml.unwrap()).unwrap();
    let mut config = format!(
        "allocations = {:?}\nheartbeat_interval_ms = 200\n[properties]\n",
        allocations.display().to_string()
    );
    for (k, v) in &workload.properties {
        config.push_str(&format!("{k:?} = {v:?}\n"));
    }
    let config_path = dir.path().join("rm.toml");
    std::fs::write(&config_path, config).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rm = runtime
        .block_on(weft_rm::start(RmArgs {
            config: Some(config_path),
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
        "--preset",
        "meituan",
        "--scale",
        "0.002",
        "--tasks-per-app",
        "2-3",
        "--container-ms",
        "300",
        "--am-interval-ms",
        "200",
        "--observe-every",
        "500ms",
        "--warmup",
        "1s",
        "--duration",
        "4s",
    ])
    .bench;
    let report = fleet(&args).unwrap();
    runtime.block_on(rm.stop());
    runtime.shutdown_timeout(Duration::from_secs(2));

    let text = report.text();
    assert_eq!(report.errors, 0, "{text}");
    assert_eq!((report.nodes, report.apps, report.queues), (24, 20, 4));
    assert_eq!(report.heartbeat_ms, 200, "the NMs follow the RM's interval");
    assert!(
        report.apps_completed > 0 && report.apps_submitted > 20,
        "apps complete and are replaced: {text}"
    );
    assert_eq!(
        report.apps_completed + report.apps_stopped,
        report.apps_submitted,
        "every app submitted ended through its AM: {text}"
    );
    assert_eq!(
        (report.apps_failed, report.apps_unfinished),
        (0, 0),
        "{text}"
    );
    assert_eq!(report.minutes.len(), 1, "{text}");
    assert!(report.minutes[0].observations >= 5, "{text}");
    assert!(report.minutes[0].valid_schedule.is_some(), "{text}");
    assert!(
        report.allocated > 0 && report.heartbeat_latency.count > 0,
        "{text}"
    );
    assert!(report.allocate_latency.count > 0, "{text}");
    assert_eq!(report.unroutable, 0);
}

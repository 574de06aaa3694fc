//! `weft rm-bench` starting its own `weft rm` child (ephemeral ports, temp data dir): a short
//! run with a few simulated NMs allocates, churns and reports no errors. Speed is not checked.

use std::process::Command;

#[test]
fn rm_bench_drives_a_child_rm_and_reports_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args([
            "rm-bench",
            "--nms",
            "3",
            "--node-memory-mb",
            "8192",
            "--node-vcores",
            "8",
            "--heartbeat-ms",
            "100",
            "--warmup",
            "500ms",
            "--duration",
            "1500ms",
            "--json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["nms"], 3);
    assert_eq!(
        report["heartbeat_ms"], 100,
        "the RM was configured by the bench"
    );
    assert!(report["allocated"].as_u64().unwrap() > 0, "{report:#}");
    assert!(report["completions_reported"].as_u64().unwrap() > 0);
    assert!(
        report["cpu"]["rm_cores"].as_f64().is_some(),
        "the child's CPU is read"
    );
    assert_eq!(report["rm_warnings"], serde_json::json!([]), "{report:#}");
}

/// Seed 003's shape at scale 0.05 (600 NMs, 500 AMs, 100 queues), correctness only: every app
/// submitted ends through its AM and the RM lists none unfinished, nothing errs. Bounded: the
/// bench stops itself; this kills it if it has not within the limit.
#[test]
fn rm_bench_preset_meituan_smoke_at_scale_0_05() {
    use std::time::Duration;
    const LIMIT: Duration = Duration::from_secs(240);
    const POLL: Duration = Duration::from_millis(200);
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out.json"), dir.path().join("err.txt"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args([
            "rm-bench",
            "--preset",
            "meituan",
            "--scale",
            "0.05",
            "--warmup",
            "2s",
            "--duration",
            "10s",
            "--scrape-every",
            "2s",
            "--json",
        ])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut polls = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        polls += 1;
        // Counted in sleeps (at least LIMIT of wall time; no clock read in tests).
        if POLL * polls > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("weft rm-bench --preset meituan --scale 0.05 ran over {LIMIT:?}");
        }
        std::thread::sleep(POLL);
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        status.success(),
        "stdout: {stdout}\nstderr: {}",
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(
        (&report["nodes"], &report["apps"], &report["queues"]),
        (
            &serde_json::json!(600),
            &serde_json::json!(500),
            &serde_json::json!(100)
        )
    );
    let count = |k: &str| report[k].as_u64().unwrap();
    assert!(count("apps_submitted") >= 500, "{report:#}");
    assert_eq!(
        count("apps_completed") + count("apps_stopped"),
        count("apps_submitted"),
        "every app ended through its AM: {report:#}"
    );
    assert_eq!(count("apps_failed"), 0, "{report:#}");
    assert_eq!(count("apps_unfinished"), 0, "{report:#}");
    assert!(count("allocated") > 0, "{report:#}");
    assert_eq!(count("unroutable"), 0);
    assert_eq!(count("resyncs"), 0);
    assert!(
        report["minutes"][0]["valid_schedule"].is_boolean(),
        "{report:#}"
    );
    assert!(report["rm_peak_rss_mib"].as_f64().is_some(), "{report:#}");
    // The timeline: a row per second of the 12 s run and its wind-down (the warm-up included, so it holds at
    // least the measured window's figures), and driver intervals read off the RM's /metrics
    // every 2 s.
    let timeline = &report["timeline"];
    assert_eq!(timeline["row_seconds"], 1, "{timeline:#}");
    let rows = timeline["rows"].as_array().unwrap();
    let stop_s = timeline["stop_s"].as_f64().unwrap();
    assert!((12.0..13.0).contains(&stop_s), "{timeline:#}");
    // Rows go on through the wind-down (bounded by the bench's 60 s).
    assert!((12..=13 + 60).contains(&rows.len()), "{timeline:#}");
    let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert!(sum("allocated") >= count("allocated"), "{timeline:#}");
    assert!(sum("heartbeats_sent") >= report["heartbeat_latency"]["count"].as_u64().unwrap());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["at_s"], i as u64, "{r:#}");
        assert!(
            r["heartbeat"]["p50_ms"].as_f64().unwrap()
                <= r["heartbeat"]["max_ms"].as_f64().unwrap()
        );
    }
    // The last row may end after the last tick; every other row has the RM's CPU.
    let with_cpu = rows
        .iter()
        .filter(|r| r["rm_cores"].as_f64().is_some())
        .count();
    assert!(with_cpu + 1 >= rows.len(), "{timeline:#}");
    let driver = timeline["driver"].as_array().unwrap();
    assert!(!driver.is_empty(), "{timeline:#}");
    assert!(
        driver
            .iter()
            .any(|d| d["heartbeats"].as_f64().unwrap() > 0.0),
        "the driver ran heartbeats: {timeline:#}"
    );
    assert_eq!(timeline["scrape"]["failures"], 0, "{timeline:#}");
}

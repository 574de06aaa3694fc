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

//! Every fuzz target runs for a bounded time (`WEFT_FUZZ_MS` per target, default 3000) and must
//! find no crash. Prints executions per target; a crash fails with its message and input.

use std::time::Duration;

use weft_fuzz::targets::{run, TARGETS};

fn budget() -> Duration {
    let ms = std::env::var("WEFT_FUZZ_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    Duration::from_millis(ms)
}

fn check(name: &str) {
    let report = run(name, budget(), 0x5eed).expect("a known target");
    println!(
        "fuzz {name}: {} executions, {} crashes",
        report.executions,
        report.crashes.len()
    );
    assert!(report.executions > 0, "{name} ran nothing");
    if let Some(crash) = report.crashes.first() {
        let shown: String = String::from_utf8_lossy(&crash.input)
            .chars()
            .take(2000)
            .collect();
        panic!(
            "{name} crashed {} time(s); first: {}\ninput ({} bytes): {shown:?}",
            report.crashes.len(),
            crash.message,
            crash.input.len()
        );
    }
}

#[test]
fn alloc_file() {
    check(TARGETS[0]);
}

#[test]
fn yarn_site() {
    check(TARGETS[1]);
}

#[test]
fn scenario() {
    check(TARGETS[2]);
}

#[test]
fn rest_json() {
    check(TARGETS[3]);
}

#[test]
fn grpc() {
    check(TARGETS[4]);
}

#[test]
fn demand_parse() {
    check(TARGETS[5]);
}

#[test]
fn hadoop_ipc_frame() {
    check(TARGETS[6]);
}

//! Runs the built `weft` binary on scenario files, as users and outside checks do.

use std::path::PathBuf;
use std::process::{Command, Output};

/// A scratch directory for this test's files, unique per test name.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn weft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .unwrap()
}

const SMALL: &str = r#"name = "small"

[[nodes]]
host = "n"
count = 2
resources = "4096 mb, 4 vcores"

[[events]]
at = "0s"
type = "submit"
app = "app1"
user = "alice"

[[events]]
at = "0s"
type = "ask"
app = "app1"
resources = "1024 mb, 1 vcores"
count = 1
duration = "3s"
"#;

#[test]
fn runs_a_scenario_and_prints_json_lines() {
    let dir = scratch("small");
    let file = dir.join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let out = weft(&["sim", "run", "--deterministic", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"type":"accepted","at_ms":0,"app":"app1","queue":"root.alice"}"#,
            r#"{"type":"allocated","at_ms":0,"app":"app1","container":"c_0001","node":"n1","resources":{"memory_mb":1024,"vcores":1},"locality":"off_switch","am":false,"priority":0}"#,
            r#"{"type":"completed","at_ms":3000,"app":"app1","container":"c_0001","exit":"success"}"#,
            r#"{"type":"summary","at_ms":4000,"allocations":1,"scheduler_cpu_ms":0.0}"#,
        ],
        "{stdout}"
    );
    // Deterministic mode is byte-identical from run to run.
    let again = weft(&["sim", "run", "--deterministic", file.to_str().unwrap()]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), stdout);
}

#[test]
fn a_malformed_scenario_exits_2_naming_the_line() {
    let dir = scratch("malformed");
    let file = dir.join("bad.toml");
    let text = SMALL.replace("duration = \"3s\"", "durration = \"3s\"");
    std::fs::write(&file, text).unwrap();
    let out = weft(&["sim", "run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.toml: line 20, field events[1].durration: unknown field (did you mean 'duration'?)"),
        "{stderr}"
    );
}

#[test]
fn an_invalid_initial_configuration_exits_2_naming_the_embedded_line() {
    let dir = scratch("badconfig");
    let file = dir.join("conf.toml");
    let text = format!(
        "allocations = '''\n<allocations>\n  <queue name=\"a\">\n    <weight>heavy</weight>\n  </queue>\n</allocations>\n'''\n{SMALL}"
    );
    std::fs::write(&file, text).unwrap();
    let out = weft(&["sim", "run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The weight is on line 3 of the embedded text, which is line 4 of the scenario file.
    assert!(
        stderr.contains("conf.toml: allocations (line 4 of the scenario file): line 3, column"),
        "{stderr}"
    );
    assert!(stderr.contains("heavy"), "{stderr}");
}

#[test]
fn allocations_file_is_read_relative_to_the_scenario() {
    let dir = scratch("allocfile");
    std::fs::create_dir_all(dir.join("conf")).unwrap();
    std::fs::write(
        dir.join("conf/fs.xml"),
        "<allocations>\n  <queue name=\"a\"><weight>2.0</weight></queue>\n</allocations>\n",
    )
    .unwrap();
    let text = format!(
        "allocations_file = \"conf/fs.xml\"\n{}\n[[events]]\nat = \"1s\"\ntype = \"snapshot\"\n",
        SMALL.replace("user = \"alice\"", "user = \"alice\"\nqueue = \"a\"")
    );
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let out = weft(&["sim", "run", "--deterministic", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with(r#"{"type":"accepted","at_ms":0,"app":"app1","queue":"root.a"}"#),
        "{stdout}"
    );
    let snapshot = stdout
        .lines()
        .find(|l| l.contains(r#""type":"snapshot""#))
        .unwrap();
    assert!(
        snapshot.contains(r#"{"name":"root.a","leaf":true,"policy":"fair","weight":2.0,"#),
        "{snapshot}"
    );
}

/// On a terminal (forced here with `--summary always`: tests have no tty) the JSON lines are
/// followed by a human summary; piped output (the default in tests) stays JSON lines only.
#[test]
fn a_summary_follows_the_json_lines_on_request_and_never_when_piped() {
    let dir = scratch("summary");
    let file = dir.join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let path = file.to_str().unwrap();
    let piped = weft(&["sim", "run", "--deterministic", path]);
    assert!(piped.status.success());
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(
        piped.lines().all(|l| l.starts_with('{')),
        "piped output is JSON lines only:\n{piped}"
    );
    let out = weft(&["sim", "run", "--deterministic", "--summary", "always", path]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with(&piped),
        "the JSON lines come first, unchanged:\n{stdout}"
    );
    let summary = &stdout[piped.len()..];
    assert!(
        summary.contains(&format!(
            "Summary of {path}: 4.0 s simulated, 1 apps, 1 containers allocated, scheduler CPU 0.0 ms\n"
        )),
        "{summary}"
    );
    let row: Vec<&str> = summary
        .lines()
        .find(|l| l.trim_start().starts_with("app1 "))
        .expect("a row for app1")
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        ["app1", "root.alice", "0.0", "s", "0.0", "s", "1", "1", "0"]
    );
    let never = weft(&["sim", "run", "--deterministic", "--summary", "never", path]);
    assert_eq!(String::from_utf8(never.stdout).unwrap(), piped);
}

#[test]
fn an_ignored_key_is_a_warning_on_stderr_naming_its_line() {
    let dir = scratch("ignored");
    let file = dir.join("w.toml");
    // `allocations` written after the [properties] header lands inside that table.
    let text = format!(
        "{SMALL}\n[properties]\n\"yarn.scheduler.fair.assignmultiple\" = \"true\"\nallocations = '''\n<allocations/>\n'''\n"
    );
    std::fs::write(&file, text).unwrap();
    let out = weft(&["sim", "run", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a warning does not stop the run: {stderr}"
    );
    assert!(
        stderr.contains("w.toml: line 24, field properties.allocations: 'allocations' is a top-level scenario key"),
        "{stderr}"
    );
}

/// A `driver = "rm"` file goes through the RM core: its demand's transitions are printed, and
/// a demand-only event in a file without the driver exits 2 naming the file, line and field.
#[test]
fn runs_an_rm_driven_scenario_and_refuses_a_demand_without_the_driver() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testkit/scenarios/demand-c9.toml"
    );
    let out = weft(&["sim", "run", "--summary", "never", file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(r#""type":"demand_state","at_ms":31000,"app":"lazy","demand":2,"from":"ALLOCATED","to":"FAILED","reason":"claim_expired""#),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .last()
            .unwrap_or("")
            .starts_with(r#"{"type":"summary","at_ms":601000"#),
        "{stdout}"
    );

    let dir = scratch("no-driver");
    let bad = dir.join("no-driver.toml");
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("driver = \"rm\"\n", "");
    std::fs::write(&bad, &text).unwrap();
    let out = weft(&["sim", "run", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .position(|l| l == "type = \"demand\"")
        .map(|i| i - 1)
        .unwrap_or(0);
    assert!(
        stderr.contains(&format!(
            "line {line}, field events[1].type: event type 'demand' needs the RM core"
        )),
        "{stderr}"
    );
}

//! Time-aware demands over the AM protocol, end to end (issue 17 item 5 and its Done-when
//! line): a real RM and NM on 127.0.0.1 and three `weft dshell` runs, each one demand.
//! The first runs a long command. The second has OrderBy after the first and a (loose) deadline:
//! the RM asks for its container only once the first demand FINISHED, so it starts after the
//! first command ended, shown by the RM's container times and by the processes' own
//! timestamps. The third is strict, ordered after the first, with a deadline it cannot meet
//! while the first still runs: it fails `deadline_unreachable` (REST and `weft demand status`
//! say so) and its command never runs. A fourth run overruns a strict Duration: warned through
//! the preemption message, killed `waitTimeBeforeKill` later (C13 strict).

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::{wait_for, Cluster, Options, WEFT};
use serde_json::Value;

const MB: &str = "256";
/// How long the first command runs: the others are submitted while it does.
const FIRST_TASK_S: u64 = 25;

/// A strict deadline with a Duration needs a plan, and no planner exists yet: the RM admits
/// such demands best-effort (`weft.demand.admit-unplanned`) so that the strict deadline's
/// run-time check is what fails the third demand.
const RM_PROPERTIES: &str = r#""weft.demand.admit-unplanned" = "true""#;

fn demand(c: &Cluster, key: &str) -> Value {
    let (status, body) = c.get(&format!("/ws/v1/cluster/demands/{key}"));
    assert_eq!(status, 200, "{body}");
    body.get("demand").cloned().unwrap_or(body)
}

fn state(d: &Value) -> (String, String) {
    (
        d["state"].as_str().unwrap_or_default().to_owned(),
        d["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The RM's reports of the app's non-AM containers (its first attempt).
fn task_containers(c: &Cluster, app: &str) -> Vec<Value> {
    let (_, attempts) = c.get(&format!("/ws/v1/cluster/apps/{app}/appattempts"));
    let attempt = attempts
        .pointer("/appAttempts/appAttempt/0/appAttemptId")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no attempt of {app}: {attempts}"))
        .to_owned();
    let (_, list) = c.get(&format!(
        "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers"
    ));
    list.pointer("/containers/container")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        // The AM container is number 1.
        .filter(|c| !c["containerId"].as_str().unwrap_or("").ends_with("_000001"))
        .collect()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The `<event> <ns>` lines a command wrote into `file`.
fn stamp(file: &Path, event: &str) -> Option<u128> {
    std::fs::read_to_string(file)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{event} ")))
        .and_then(|ns| ns.trim().parse().ok())
}

#[test]
fn an_ordered_demand_starts_after_its_predecessor_and_a_strict_one_fails_its_deadline() {
    let opts = Options {
        rm_properties: RM_PROPERTIES,
        ..Options::default()
    };
    let c = Cluster::start(1, 2048, &opts);
    let work = c.path("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let first_file = work.join("first");
    let second_file = work.join("second");
    let third_file = work.join("third");
    let sized = |rest: &[&str]| -> Vec<String> {
        ["-master_memory", MB, "-container_memory", MB]
            .iter()
            .chain(rest)
            .map(|s| s.to_string())
            .collect()
    };

    let first_cmd = format!(
        "echo start $(date +%s%N) >> {f}; sleep {FIRST_TASK_S}; echo end $(date +%s%N) >> {f}",
        f = first_file.display()
    );
    let first_args = sized(&["--demand_id", "1", "-shell_command", &first_cmd]);
    let mut first = c.dshell("first", &args(&first_args));
    let a = c.submitted_app(&mut first);
    let a_key = format!("{a}/1");
    // Its command runs: the demand is claimed (watched, since others will follow it).
    wait_for(
        Duration::from_secs(60),
        "the first command to start",
        || stamp(&first_file, "start"),
    );

    let second_cmd = format!("echo start $(date +%s%N) >> {}", second_file.display());
    let second_args = sized(&[
        "--after",
        &a,
        "--deadline",
        "+5m",
        "--duration",
        "30s",
        "-shell_command",
        &second_cmd,
    ]);
    let mut second = c.dshell("second", &args(&second_args));
    let b = c.submitted_app(&mut second);
    let b_key = format!("{b}/1");

    let third_cmd = format!("echo start $(date +%s%N) >> {}", third_file.display());
    let third_args = sized(&[
        "--after",
        &a,
        "--deadline",
        "+4s",
        "--duration",
        "3s",
        "--strict",
        "-shell_command",
        &third_cmd,
    ]);
    let mut third = c.dshell("third", &args(&third_args));
    let t = c.submitted_app(&mut third);
    let t_key = format!("{t}/1");

    // The second waits on the first: admitted, nothing asked.
    wait_for(Duration::from_secs(60), "the second demand to wait", || {
        let (status, body) = c.get(&format!("/ws/v1/cluster/demands/{b_key}"));
        (status == 200).then_some(())?;
        let d = body.get("demand").cloned().unwrap_or(body);
        (state(&d) == ("ACCEPTED".into(), "best_effort".into())).then_some(())
    });

    // The strict one cannot end in time once now + Duration passes its deadline.
    let t_done = c.wait_app_state(
        &t,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(60),
    );
    let td = demand(&c, &t_key);
    assert_eq!(
        state(&td),
        ("FAILED".into(), "deadline_unreachable".into()),
        "{td}"
    );
    assert_eq!(
        t_done["finalStatus"],
        "FAILED",
        "{t_done}\n{}",
        third.output()
    );
    assert!(
        t_done["diagnostics"]
            .as_str()
            .is_some_and(|d| d.contains("deadline_unreachable")),
        "{t_done}"
    );
    assert_eq!(td["containers"]["allocated"], 0, "{td}");
    // `weft demand status` shows the reason and its detail.
    let out = Command::new(WEFT)
        .args([
            "demand",
            "status",
            &t_key,
            "--rm",
            &format!("http://{}", c.web),
        ])
        .env_remove("WEFT_RM")
        .env_remove("HADOOP_CONF_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("weft demand status");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("State : FAILED"), "{text}");
    assert!(text.contains("Reason : deadline_unreachable"), "{text}");
    assert!(
        text.contains("now + Duration ends after the DeadLine"),
        "{text}"
    );

    // The first ends; only then does the second start.
    let a_done = c.wait_app_state(
        &a,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(
        a_done["finalStatus"],
        "SUCCEEDED",
        "{a_done}\n{}",
        first.output()
    );
    let b_done = c.wait_app_state(
        &b,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(
        b_done["finalStatus"],
        "SUCCEEDED",
        "{b_done}\n{}",
        second.output()
    );
    assert!(first.wait(Duration::from_secs(30)).success());
    assert!(second.wait(Duration::from_secs(30)).success());
    assert!(!third.wait(Duration::from_secs(30)).success());

    assert_eq!(state(&demand(&c, &a_key)), ("FINISHED".into(), "ok".into()));
    let bd = demand(&c, &b_key);
    assert_eq!(state(&bd), ("FINISHED".into(), "ok".into()), "{bd}");

    // The RM's container times: the second's container was allocated after the first's ended.
    let a_tasks = task_containers(&c, &a);
    let b_tasks = task_containers(&c, &b);
    assert_eq!(
        (a_tasks.len(), b_tasks.len()),
        (1, 1),
        "{a_tasks:?} {b_tasks:?}"
    );
    let a_finished = a_tasks[0]["finishedTime"].as_u64().expect("finished");
    let b_started = b_tasks[0]["startedTime"].as_u64().expect("started");
    assert!(
        a_finished > 0 && b_started >= a_finished,
        "{a_tasks:?} {b_tasks:?}"
    );
    assert_eq!(
        bd["first-allocation"].as_u64(),
        Some(b_started),
        "START is the container's allocation: {bd}"
    );
    // The processes' own clocks agree.
    let a_end = stamp(&first_file, "end").expect("the first command ended");
    let b_start = stamp(&second_file, "start").expect("the second command ran");
    assert!(
        b_start > a_end,
        "second started at {b_start} ns, first ended at {a_end} ns"
    );
    // The strict one's command never ran.
    assert!(stamp(&third_file, "start").is_none());
    // The AM logged its demand's states as the RM reported them.
    let log = second.output();
    assert!(
        log.contains(&format!("Its containers run as demand {b_key}")),
        "{log}"
    );
}

/// C13 strict end to end: one dshell command that sleeps far past its strict 2 s Duration.
/// At the lease's end the RM warns (the demand stays MONITORING with `duration_exceeded`, and
/// the AM, told through its allocate answer's preemption message, logs the warning); the
/// container is killed no earlier than `waitTimeBeforeKill` (15 s) after the warning, by the
/// RM's own timeline, and the demand and the app end FAILED with the reason.
#[test]
fn a_strict_duration_warns_the_am_then_kills_after_the_grace() {
    let c = Cluster::start(1, 2048, &Options::default());
    let cmd_args: Vec<String> = [
        "-master_memory",
        MB,
        "-container_memory",
        MB,
        "--duration",
        "2s",
        "--strict",
        "-shell_command",
        "sleep 120",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut run = c.dshell("overrun", &args(&cmd_args));
    let app = c.submitted_app(&mut run);
    let key = format!("{app}/1");
    wait_for(Duration::from_secs(60), "the lease's warning", || {
        let (status, body) = c.get(&format!("/ws/v1/cluster/demands/{key}"));
        (status == 200).then_some(())?;
        let d = body.get("demand").cloned().unwrap_or(body);
        (state(&d) == ("MONITORING".into(), "duration_exceeded".into())).then_some(())
    });
    let done = c.wait_app_state(
        &app,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(done["finalStatus"], "FAILED", "{done}\n{}", run.output());
    let d = demand(&c, &key);
    assert_eq!(
        state(&d),
        ("FAILED".into(), "duration_exceeded".into()),
        "{d}"
    );
    let at = |reason: &str, state: &str| -> u64 {
        d["timeline"]
            .as_array()
            .and_then(|t| {
                t.iter()
                    .find(|e| e["state"] == state && e["reason"] == reason)
            })
            .and_then(|e| e["at"].as_u64())
            .unwrap_or_else(|| panic!("no {state} {reason} in {d}"))
    };
    let warned = at("duration_exceeded", "MONITORING");
    let killed = at("duration_exceeded", "FAILED");
    assert!(
        killed >= warned + 15_000,
        "warned {warned}, killed {killed}"
    );
    assert!(!run.wait(Duration::from_secs(30)).success());
    let out = run.output();
    assert!(
        out.contains("1 containers still ran 15000 ms after the warning: killed"),
        "{out}"
    );
    // The AM (its container's stdout on the NM) was told through the preemption message.
    let am = am_log(&c, &app);
    assert!(am.contains("unless it ends first"), "{am}");
}

/// Every file named `stdout` below `dir` (the NMs' container logs).
fn stdout_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            stdout_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "stdout") {
            out.push(p);
        }
    }
}

/// The AM's log of `app`: the container stdout under the app's directory that says the AM
/// registered.
fn am_log(c: &Cluster, app: &str) -> String {
    let mut files = Vec::new();
    stdout_files(c.dir.path(), &mut files);
    files
        .iter()
        .filter(|p| p.to_string_lossy().contains(app))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .find(|text| text.contains("registered"))
        .unwrap_or_default()
}

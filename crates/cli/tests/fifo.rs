//! The FIFO scheduler end to end: `weft up --scheduler fifo` as real processes on 127.0.0.1
//! with ephemeral ports, a dshell job on it, and what the REST API, the CLI verbs, the web UI
//! and /metrics say of its one queue. Every wait is bounded; the harness kills what it started.

// The harness serves several test files; this one uses only part of it.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::path::Path;
use std::time::Duration;

use harness::{alive, wait_for, Proc};
use nix::sys::signal::Signal;
use serde_json::{json, Value};

const MINUTE: Duration = Duration::from_secs(60);

/// `weft up --scheduler fifo` with two 2 GB NMs; returns it and its ready file's JSON.
fn fifo_up(dir: &Path) -> (Proc, Value) {
    harness::weft_up(
        dir,
        &[
            "--scheduler",
            "fifo",
            "--nms",
            "2",
            "--nm-memory-mb",
            "2048",
        ],
    )
}

/// GET a path of the RM at `web`: (status, JSON body or Null).
fn get(web: &str, path: &str) -> (u16, Value) {
    let (status, text) = harness::get_text(web, path);
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// PUT JSON to a path of the RM at `web`: (status, JSON body or Null).
fn put(web: &str, path: &str, body: &Value) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{web}{path}");
    let mut r = agent
        .put(&url)
        .send_json(body)
        .unwrap_or_else(|e| panic!("PUT {url}: {e}"));
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Starts `weft dshell` against `web` in the background.
fn start_dshell(dir: &Path, web: &str, name: &str, args: &[&str]) -> Proc {
    let mut all: Vec<String> = vec![
        "dshell".into(),
        "-rm".into(),
        format!("http://{web}"),
        "-timeout".into(),
        "120000".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    Proc::spawn(
        &format!("dshell {name}"),
        &all,
        &dir.join(format!("dshell-{name}.out")),
    )
}

/// Runs a client verb against the RM at `web` to its end.
fn weft(web: &str, args: &[&str]) -> std::process::Output {
    let rm = format!("http://{web}");
    std::process::Command::new(harness::WEFT)
        .args(args)
        .args(["--rm", rm.as_str()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run weft")
}

/// The application id a dshell printed once it submitted.
fn submitted_app(dshell: &mut Proc) -> String {
    wait_for(MINUTE, "the dshell to submit", || {
        if let Some(status) = dshell.try_status() {
            panic!("dshell exited ({status}) early:\n{}", dshell.output());
        }
        dshell
            .output()
            .lines()
            .find_map(|l| l.strip_prefix("Submitted application "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
    })
}

#[test]
fn weft_up_runs_the_fifo_scheduler_end_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut up, ready) = fifo_up(dir.path());
    let web = ready["web"].as_str().expect("web").to_string();

    // The summary says which scheduler runs and that there is no allocation file; none is
    // written (the FIFO scheduler would refuse its reloads).
    let out = up.output();
    assert!(
        out.contains("scheduler    FIFO  (one queue, default; no allocation file"),
        "{out}"
    );
    assert!(!out.contains("allocations  "), "{out}");
    assert!(!dir.path().join("data/fair-scheduler.xml").exists());

    // A dshell job succeeds. It names a queue FIFO does not have: as Hadoop's FIFO
    // scheduler (capacity-scheduler spec §10.1), the submission is accepted and runs in
    // `default`.
    let mut ok = start_dshell(
        dir.path(),
        &web,
        "ok",
        &[
            "-num_containers",
            "3",
            "-queue",
            "prod",
            "-shell_command",
            "echo hello",
        ],
    );
    assert!(ok.wait(MINUTE).success(), "{}", ok.output());
    let (status, apps) = get(&web, "/ws/v1/cluster/apps");
    assert_eq!(status, 200, "{apps}");
    let app = &apps["apps"]["app"][0];
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}");
    assert_eq!(app["queue"], "root.default", "{app}");

    // A job that keeps its AM and one container running.
    let mut sleeper = start_dshell(
        dir.path(),
        &web,
        "sleeper",
        &["-num_containers", "1", "-shell_command", "sleep 300"],
    );
    let id = submitted_app(&mut sleeper);
    let running = wait_for(MINUTE, "the AM and its container to run", || {
        let (_, v) = get(&web, &format!("/ws/v1/cluster/apps/{id}"));
        (v["app"]["runningContainers"] == 2).then(|| v["app"].clone())
    });
    let used_mb = running["allocatedMB"].as_i64().expect("allocatedMB");

    // REST: Hadoop's flat fifoScheduler object, its figures those of the two 2 GB nodes.
    let (status, v) = get(&web, "/ws/v1/cluster/scheduler");
    assert_eq!(status, 200, "{v}");
    let info = &v["scheduler"]["schedulerInfo"];
    assert_eq!(info["type"], "fifoScheduler", "{v}");
    assert_eq!(info["capacity"], 1.0, "{v}");
    assert_eq!(info["qstate"], "RUNNING", "{v}");
    assert_eq!(info["numNodes"], 2, "{v}");
    assert_eq!(info["totalNodeCapacity"], 4096, "{v}");
    assert_eq!(info["usedNodeCapacity"], used_mb, "{v}");
    assert_eq!(info["availNodeCapacity"], 4096 - used_mb, "{v}");
    assert_eq!(info["numContainers"], 2, "{v}");
    assert_eq!(info["usedCapacity"], used_mb as f64 / 4096.0, "{v}");
    assert_eq!(info["minQueueMemoryCapacity"], 1024, "{v}");
    assert_eq!(info["maxQueueMemoryCapacity"], 8192, "{v}");
    let (_, doc) = get(&web, "/openapi.json");
    assert!(
        doc["components"]["schemas"]["FifoSchedulerInfo"].is_object(),
        "/openapi.json describes the FIFO shape"
    );

    // The CLI: `queue -status` reports the one queue, and knows no other.
    let status = weft(&web, &["queue", "-status", "default"]);
    let report = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{status:?}");
    let current = used_mb as f64 / 4096.0 * 100.0;
    assert!(
        report.contains(&format!(
            "Queue Name : default\n\tQueue Path : root.default\n\tState : RUNNING\n\tCapacity : 100.00%\n\tCurrent Capacity : {current:.2}%\n\tMaximum Capacity : 100.00%\n"
        )),
        "{report}"
    );
    let other = weft(&web, &["queue", "-status", "prod"]);
    assert_ne!(other.status.code(), Some(0), "{other:?}");
    let listed = weft(&web, &["queue", "-list", "all"]);
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(table.starts_with("1 queues were found\n"), "{table}");

    // The web UI's scheduler page: the one queue, no share columns.
    let (status, page) = harness::get_text(&web, "/cluster/scheduler?fragment=1");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<b>FIFO Scheduler</b>"), "{page}");
    assert_eq!(page.matches("<tr class=\"queue").count(), 1, "{page}");
    assert!(page.contains("data-queue=\"root.default\""), "{page}");
    assert!(page.contains(&id), "the running app is listed: {page}");
    assert!(!page.contains("fair share"), "{page}");

    // /metrics says which scheduler runs, and exports no fair shares.
    let (status, metrics) = harness::get_text(&web, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    assert!(
        metrics.contains("weft_scheduler_info{kind=\"fifo\",class=\"org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "weft_queue_usage{{queue=\"root.default\",resource=\"memory-mb\"}} {used_mb}\n"
        )),
        "{metrics}"
    );
    assert!(!metrics.contains("weft_queue_fair_share"), "{metrics}");

    // A move, a Fair-only feature: `-movetoqueue` fails with the RM's reason.
    let moved = weft(
        &web,
        &["application", "-movetoqueue", &id, "-queue", "prod"],
    );
    assert_ne!(moved.status.code(), Some(0), "{moved:?}");
    let stderr = String::from_utf8_lossy(&moved.stderr);
    assert!(
        stderr.contains(
            "the FIFO scheduler (FifoScheduler) does not support moving apps between queues"
        ),
        "{stderr}"
    );
    let (_, v) = get(&web, &format!("/ws/v1/cluster/apps/{id}"));
    assert_eq!(v["app"]["queue"], "root.default", "{v}");

    let (status, v) = put(
        &web,
        &format!("/ws/v1/cluster/apps/{id}/state"),
        &json!({"state": "KILLED"}),
    );
    assert!(status == 200 || status == 202, "{status} {v}");
    assert!(!sleeper.wait(MINUTE).success(), "{}", sleeper.output());

    let pids: Vec<i32> = std::iter::once(&ready["rm_pid"])
        .chain(
            ready["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .map(|n| &n["pid"]),
        )
        .map(|p| p.as_i64().expect("pid") as i32)
        .collect();
    up.signal(Signal::SIGTERM);
    let status = up.wait(Duration::from_secs(30));
    let out = up.output();
    assert!(status.success(), "{out}");
    assert!(out.contains("Cluster stopped"), "{out}");
    assert!(pids.iter().all(|p| !alive(*p)), "daemons left: {pids:?}");
}

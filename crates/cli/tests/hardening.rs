//! Hostile or careless input against real daemons (`weft rm`, `weft nm` on 127.0.0.1 with
//! ephemeral ports): the RM refuses it with a clear message and keeps serving.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

use harness::{wait_for, Cluster, Options, Proc};
use serde_json::{json, Value};

/// Every queue name in a `/ws/v1/cluster/scheduler` queue object and below (iteratively).
fn queue_names(scheduler: &Value) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending = vec![&scheduler["scheduler"]["schedulerInfo"]["rootQueue"]];
    while let Some(q) = pending.pop() {
        if let Some(name) = q["queueName"].as_str() {
            names.push(name.to_string());
        }
        if let Some(children) = q["childQueues"]["queue"].as_array() {
            pending.extend(children);
        }
    }
    names.sort();
    names
}

/// An allocation file with `levels` queues nested under root.
fn nested_allocations(levels: usize) -> String {
    format!(
        "<allocations>\n<queue name=\"root\">\n{}{}</queue>\n</allocations>\n",
        "<queue name=\"q\">\n".repeat(levels),
        "</queue>".repeat(levels)
    )
}

#[test]
fn a_too_deep_allocation_file_is_refused_on_reload_and_the_old_queues_keep_serving() {
    let c = Cluster::rm_only(&Options::default());
    let (status, before) = c.get("/ws/v1/cluster/scheduler");
    assert_eq!(status, 200, "{before}");
    let old_queues = queue_names(&before);
    assert!(
        old_queues.contains(&"root.prod".to_string()),
        "{old_queues:?}"
    );

    // ~800 levels used to be accepted and crash the next GET; 1,000 crashed the reload itself.
    for levels in [800, 1_000, 100_000] {
        std::fs::write(c.path("fair-scheduler.xml"), nested_allocations(levels)).unwrap();
        let (status, body) = c.put("/ws/v1/cluster/admin/refresh-queues", &json!({}));
        let message = body["RemoteException"]["message"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(status, 400, "{levels} levels: {body}");
        assert!(
            message.contains("fair-scheduler.xml") && message.contains("line 102"),
            "{levels} levels: the refusal names the file and line: {message}"
        );
        assert!(message.contains("at most 100 levels"), "{message}");
        let (status, after) = c.get("/ws/v1/cluster/scheduler");
        assert_eq!(
            status, 200,
            "{levels} levels: the scheduler page still answers"
        );
        assert_eq!(queue_names(&after), old_queues, "the old queues stay");
    }
    // The file watcher sees the last file too, and refuses it the same way.
    let rm_log = c.path("rm-1.log");
    wait_for(
        Duration::from_secs(10),
        "the watcher's refusal in the RM log",
        || {
            harness::read(&rm_log)
                .contains("at most 100 levels")
                .then_some(())
        },
    );
    let (status, after) = c.get("/ws/v1/cluster/scheduler");
    assert_eq!(status, 200);
    assert_eq!(queue_names(&after), old_queues);
}

#[test]
fn a_node_offering_more_than_the_maximum_is_refused_and_scheduling_goes_on() {
    let mut c = Cluster::rm_only(&Options::default());
    let log = c.path("nm-huge.log");
    let p = |name: &str| c.path(name).display().to_string();
    let args: Vec<String> = [
        "nm",
        "--rm-tracker",
        &c.tracker,
        "--address",
        "127.0.0.1:0",
        "--web-address",
        "127.0.0.1:0",
        "--hostname",
        "hugehost",
        "--data-dir",
        &p("nm-huge"),
        "--memory-mb",
        &i64::MAX.to_string(),
        "--vcores",
        "8",
        "--no-cgroups",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let huge = Proc::spawn("huge NM", &args, &log);
    let refusal = wait_for(Duration::from_secs(30), "the RM's refusal", || {
        let out = huge.output();
        out.contains("a node may offer").then_some(out)
    });
    assert!(
        refusal.contains("9223372036854775807 MB of memory"),
        "the refusal names the value: {refusal}"
    );

    c.add_nm(4096, true);
    c.wait_nodes_running(1);
    let (status, nodes) = c.get("/ws/v1/cluster/nodes");
    assert_eq!(status, 200);
    assert_eq!(
        nodes["nodes"]["node"].as_array().map(Vec::len),
        Some(1),
        "only the valid node is known: {nodes}"
    );
    let (_, metrics) = c.get("/ws/v1/cluster/metrics");
    assert_eq!(
        metrics["clusterMetrics"]["totalMB"], 4096,
        "the total is exactly the valid node: {metrics}"
    );
    let mut dshell = c.dshell(
        "after-huge",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-shell_command",
            "true",
        ],
    );
    let status = dshell.wait(Duration::from_secs(60));
    assert!(status.success(), "{}", dshell.output());
}

/// A size-limited tmpfs mounted for one test, unmounted when dropped.
struct SmallFs {
    path: std::path::PathBuf,
}

impl SmallFs {
    /// Mounts a tmpfs of `size` (e.g. "8m") at `path`; `None` (the test is skipped) where
    /// mounting is not possible, e.g. without root.
    fn mount(path: &std::path::Path, size: &str) -> Option<SmallFs> {
        std::fs::create_dir_all(path).ok()?;
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .status()
            .ok()?;
        status.success().then(|| SmallFs {
            path: path.to_path_buf(),
        })
    }

    /// Fills the file system with `filler` until it is full.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write as _;
        let filler = self.path.join("filler");
        let mut f = std::fs::File::create(&filler).expect("filler");
        let chunk = vec![0x5a_u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        // Smaller writes take the last partial chunk.
        while f.write_all(&chunk[..512]).is_ok() {}
        let _ = f.sync_all();
        filler
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// POST JSON (or nothing): (status, JSON body or Null); status 0 if the RM did not answer.
fn post(web: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let url = format!("http://{web}{path}");
    let request = agent()
        .post(&url)
        .header("Content-Type", "application/json");
    let result = match body {
        Some(b) => request.send(b.to_string()),
        None => request.send_empty(),
    };
    match result {
        Ok(mut r) => {
            let text = r.body_mut().read_to_string().unwrap_or_default();
            (
                r.status().as_u16(),
                serde_json::from_str(&text).unwrap_or(Value::Null),
            )
        }
        Err(_) => (0, Value::Null),
    }
}

fn get(web: &str, path: &str) -> (u16, Value) {
    match agent().get(&format!("http://{web}{path}")).call() {
        Ok(mut r) => {
            let text = r.body_mut().read_to_string().unwrap_or_default();
            (
                r.status().as_u16(),
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        }
        Err(_) => (0, Value::Null),
    }
}

/// `weft rm` with its store in `data`, every port ephemeral; returns it and its web address.
fn start_rm(
    dir: &std::path::Path,
    data: &std::path::Path,
    run: usize,
    extra: &[&str],
) -> (Proc, String) {
    let (rm, ready) = harness::start_lone_rm(dir, &format!("rm-{run}"), data, extra, &[]);
    let web = ready["web"].as_str().expect("web address").to_string();
    (rm, web)
}

fn app_submission(id: &str, padding: usize) -> Value {
    json!({
        "application-id": id,
        "application-name": "fill",
        "am-container-spec": {"commands": {"command": format!("sleep 100 # {}", "x".repeat(padding))}},
        "resource": {"memory": 1024, "vCores": 1},
    })
}

fn listed_ids(web: &str) -> Vec<String> {
    let (status, apps) = get(web, "/ws/v1/cluster/apps");
    assert_eq!(status, 200, "{apps}");
    let mut ids: Vec<String> = apps["apps"]["app"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn a_full_disk_stops_the_rm_and_a_restart_serves_exactly_what_was_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fs) = SmallFs::mount(&dir.path().join("store"), "8m") else {
        eprintln!(
            "SKIPPED: cannot mount a tmpfs here (needs root); the full-disk test did not run"
        );
        return;
    };
    let (mut rm, web) = start_rm(dir.path(), &fs.path, 1, &[]);
    let mut acknowledged = Vec::new();
    let mut handed_out = Vec::new();
    let mut submit = || -> Result<(), (u16, Value)> {
        let (status, body) = post(&web, "/ws/v1/cluster/apps/new-application", None);
        if status != 200 {
            return Err((status, body));
        }
        let id = body["application-id"].as_str().expect("id").to_string();
        handed_out.push(id.clone());
        let (status, body) = post(
            &web,
            "/ws/v1/cluster/apps",
            Some(&app_submission(&id, 16 * 1024)),
        );
        if status != 202 {
            return Err((status, body));
        }
        acknowledged.push(id);
        Ok(())
    };
    for _ in 0..3 {
        submit().expect("submissions before the disk fills are accepted");
    }
    let filler = fs.fill();
    let refused = (0..3_000).find_map(|_| submit().err());
    let (status, body) = refused.expect("the store filled up within 3,000 submissions");
    assert_eq!(status, 503, "the refused write answers 503: {body}");

    wait_for(Duration::from_secs(10), "/readyz to turn red", || {
        (get(&web, "/readyz").0 != 200).then_some(())
    });
    let exit = rm.wait(Duration::from_secs(20));
    assert!(!exit.success(), "the RM stops with an error");
    let out = rm.output();
    assert!(
        out.contains("state store failed") && out.contains("No space left on device"),
        "the RM says why it stopped:\n{out}"
    );

    std::fs::remove_file(&filler).expect("free the space");
    let (_rm2, web) = start_rm(dir.path(), &fs.path, 2, &[]);
    acknowledged.sort();
    assert_eq!(
        listed_ids(&web),
        acknowledged,
        "exactly the acknowledged submissions survive"
    );
    let (status, body) = post(&web, "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200, "{body}");
    let next = body["application-id"].as_str().expect("id").to_string();
    assert!(
        handed_out.iter().all(|old| *old < next),
        "{next} was not handed out before ({} ids were)",
        handed_out.len()
    );
}

#[test]
fn the_rm_refuses_to_start_on_an_emptied_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (mut rm, web) = start_rm(dir.path(), &data, 1, &[]);
    let (status, _) = post(&web, "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200);
    rm.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(rm.wait(Duration::from_secs(20)).success());

    let file = data.join("rm-state.redb");
    std::fs::write(&file, b"").expect("empty the store");
    let args = harness::lone_rm_args(&data, &[]);
    let mut again = Proc::spawn("RM", &args, &dir.path().join("rm-2.log"));
    let exit = again.wait(Duration::from_secs(20));
    let out = again.output();
    assert!(
        !exit.success(),
        "the RM must not start as a new cluster:\n{out}"
    );
    assert!(
        out.contains(&file.display().to_string()) && out.contains("empty (0 bytes)"),
        "the refusal names the file:\n{out}"
    );
}

fn put(web: &str, path: &str, body: &Value) -> (u16, Value) {
    let url = format!("http://{web}{path}");
    match agent().put(&url).send_json(body) {
        Ok(mut r) => {
            let text = r.body_mut().read_to_string().unwrap_or_default();
            (
                r.status().as_u16(),
                serde_json::from_str(&text).unwrap_or(Value::Null),
            )
        }
        Err(_) => (0, Value::Null),
    }
}

#[test]
fn completed_apps_are_retained_up_to_the_limit_and_oversized_fields_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("rm.toml");
    std::fs::write(
        &config,
        "[properties]\n\"yarn.resourcemanager.max-completed-applications\" = \"2\"\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let config_arg = config.display().to_string();
    let (mut rm, web) = start_rm(dir.path(), &data, 1, &["--config", &config_arg]);

    let new_id = || {
        let (status, body) = post(&web, "/ws/v1/cluster/apps/new-application", None);
        assert_eq!(status, 200, "{body}");
        body["application-id"].as_str().expect("id").to_string()
    };
    // A 1.9 MB name used to be kept whole in memory, in the store and in every listing.
    let id = new_id();
    let mut big = app_submission(&id, 0);
    big["application-name"] = json!("n".repeat(1_900_000));
    let (status, body) = post(&web, "/ws/v1/cluster/apps", Some(&big));
    assert_eq!(status, 400, "{body}");
    let message = body["RemoteException"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("application-name is too large"),
        "{message}"
    );
    assert!(listed_ids(&web).is_empty(), "nothing was recorded");

    let mut killed = Vec::new();
    for _ in 0..4 {
        let id = new_id();
        let (status, body) = post(&web, "/ws/v1/cluster/apps", Some(&app_submission(&id, 0)));
        assert_eq!(status, 202, "{body}");
        let (status, body) = put(
            &web,
            &format!("/ws/v1/cluster/apps/{id}/state"),
            &json!({"state": "KILLED"}),
        );
        assert!(status == 200 || status == 202, "kill {id}: {status} {body}");
        killed.push(id);
    }
    let newest = killed[2..].to_vec();
    assert_eq!(
        listed_ids(&web),
        newest,
        "only the 2 newest completed apps are kept"
    );
    rm.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(rm.wait(Duration::from_secs(20)).success());
    let (_rm, web) = start_rm(dir.path(), &data, 2, &["--config", &config_arg]);
    assert_eq!(listed_ids(&web), newest, "and only they are in the store");
}

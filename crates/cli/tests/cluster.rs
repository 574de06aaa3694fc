//! End-to-end tests of a real cluster: `weft rm`, `weft nm`, `weft dshell` and `weft up` as
//! processes on 127.0.0.1 with ephemeral ports, each test in its own temporary directory.
//! Every wait is bounded; the harness kills whatever a test started, even when it fails.

#[path = "cluster/harness.rs"]
mod harness;

use std::path::Path;
use std::time::Duration;

use harness::{alive, app_processes, read, wait_for, Cluster, Options, Proc};
use nix::sys::signal::Signal;
use serde_json::{json, Value};

const MINUTE: Duration = Duration::from_secs(60);

/// The shared directory the containers of a test write into.
fn work_dir(c: &Cluster) -> String {
    let work = c.path("work");
    std::fs::create_dir_all(&work).expect("work dir");
    work.display().to_string()
}

/// Files in `dir` ending with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// A container command that records its pid and then sleeps for good.
fn sleeper(work: &str) -> String {
    format!("echo $$ > {work}/$CONTAINER_ID.pid; exec sleep 300")
}

/// Waits until `n` containers recorded live pids.
fn wait_pids(c: &Cluster, n: usize) -> Vec<i32> {
    let work = c.path("work");
    wait_for(MINUTE, &format!("{n} running containers"), || {
        let pids = Cluster::recorded_pids(&work);
        (pids.len() >= n && pids.iter().all(|p| alive(*p))).then_some(pids)
    })
}

#[test]
fn dshell_runs_the_command_in_every_container_and_fails_when_it_fails() {
    let c = Cluster::start(2, 4096, &Options::default());
    let work = work_dir(&c);
    let cmd = format!("touch {work}/$CONTAINER_ID.ran && hostname");
    let mut ok = c.dshell(
        "ok",
        &[
            "-num_containers",
            "4",
            "-container_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let status = ok.wait(MINUTE);
    let out = ok.output();
    assert!(status.success(), "dshell failed:\n{out}");
    let ran = files_ending(&c.path("work"), ".ran");
    assert_eq!(ran.len(), 4, "files: {ran:?}\n{out}");
    assert!(ran.iter().all(|f| f.starts_with("container_")), "{ran:?}");
    assert!(out.contains("4 of 4 containers succeeded"), "{out}");

    let mut bad = c.dshell(
        "bad",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-shell_command",
            "exit 3",
        ],
    );
    let status = bad.wait(MINUTE);
    let out = bad.output();
    assert!(
        !status.success(),
        "a failing command must fail dshell:\n{out}"
    );
    assert!(out.contains("exit code 3"), "{out}");
}

#[test]
fn killing_an_app_kills_its_processes() {
    let c = Cluster::start(1, 4096, &Options::default());
    let work = work_dir(&c);
    let cmd = sleeper(&work);
    let mut d = c.dshell(
        "kill",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let id = c.submitted_app(&mut d);
    let pids = wait_pids(&c, 2);
    c.wait_app_state(&id, &["RUNNING"], MINUTE);
    assert!(
        app_processes(&id).len() >= 3,
        "the AM and two containers should run"
    );

    let (status, v) = c.put(
        &format!("/ws/v1/cluster/apps/{id}/state"),
        &json!({"state": "KILLED"}),
    );
    assert!(status == 200 || status == 202, "kill: {status} {v}");
    let app = c.wait_app_state(&id, &["KILLED"], Duration::from_secs(20));
    assert_eq!(app["finalStatus"], "KILLED", "{app}");
    wait_for(
        Duration::from_secs(20),
        "the app's processes to be gone",
        || (pids.iter().all(|p| !alive(*p)) && app_processes(&id).is_empty()).then_some(()),
    );
    let status = d.wait(Duration::from_secs(20));
    assert!(!status.success(), "{}", d.output());
}

#[test]
fn moving_an_app_changes_its_queue() {
    let c = Cluster::start(1, 4096, &Options::default());
    let work = work_dir(&c);
    let cmd = sleeper(&work);
    let mut d = c.dshell(
        "move",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-queue",
            "default",
            "-shell_command",
            &cmd,
        ],
    );
    let id = c.submitted_app(&mut d);
    let app = c.wait_app_state(&id, &["RUNNING"], MINUTE);
    assert_eq!(app["queue"], "root.default", "{app}");

    let queue_path = format!("/ws/v1/cluster/apps/{id}/queue");
    let (status, v) = c.put(&queue_path, &json!({"queue": "prod"}));
    assert_eq!(status, 200, "move: {v}");
    assert_eq!(c.app(&id)["queue"], "root.prod");
    assert_eq!(c.get(&queue_path).1["queue"], "root.prod");

    // A move to a queue that does not exist is refused and changes nothing.
    let (status, v) = c.put(&queue_path, &json!({"queue": "root.nosuch"}));
    assert!((400..500).contains(&status), "{status} {v}");
    assert!(v["RemoteException"]["message"].is_string(), "{v}");
    assert_eq!(c.app(&id)["queue"], "root.prod");

    let (status, _) = c.put(
        &format!("/ws/v1/cluster/apps/{id}/state"),
        &json!({"state": "KILLED"}),
    );
    assert!(status == 200 || status == 202);
    c.wait_app_state(&id, &["KILLED"], Duration::from_secs(20));
}

/// `{id: state}` of every app the RM lists.
fn app_states(c: &Cluster) -> Vec<(String, String)> {
    let (status, v) = c.get("/ws/v1/cluster/apps");
    assert_eq!(status, 200, "{v}");
    let mut apps: Vec<(String, String)> = v["apps"]["app"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|app| {
                    (
                        app["id"].as_str().unwrap_or_default().to_string(),
                        app["state"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    apps.sort();
    apps
}

/// Crashes the RM (`kill -9`) while one app has finished and another's container runs, restarts
/// it on the same data directory and addresses, and checks that nothing was lost. Returns the
/// dshell client that followed the running app, once it has ended.
fn rm_restart_scenario() -> Proc {
    let mut c = Cluster::start(1, 4096, &Options::default());
    let work = work_dir(&c);

    // One app that has finished before the crash...
    let mut quick = c.dshell(
        "quick",
        &["-container_memory", "128", "-shell_command", "true"],
    );
    assert!(quick.wait(MINUTE).success(), "{}", quick.output());
    // ...and one whose container outlives the RM.
    let cmd =
        format!("echo $$ > {work}/$CONTAINER_ID.pid; sleep 12; touch {work}/$CONTAINER_ID.done");
    let mut long = c.dshell(
        "long",
        &["-container_memory", "128", "-shell_command", &cmd],
    );
    let id = c.submitted_app(&mut long);
    let pids = wait_pids(&c, 1);
    let attempt = c.wait_app_state(&id, &["RUNNING"], MINUTE)["currentAppAttemptId"].clone();
    let before = app_states(&c);
    assert_eq!(before.len(), 2, "{before:?}");

    c.kill9_rm();
    std::thread::sleep(Duration::from_millis(500));
    assert!(alive(pids[0]), "the container must survive the RM");
    c.restart_rm();

    let after = app_states(&c);
    let ids = |v: &[(String, String)]| v.iter().map(|(i, _)| i.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&after), ids(&before), "every app is still there");
    assert!(
        after
            .iter()
            .any(|(i, s)| *i == id && s != "FAILED" && s != "KILLED"),
        "the running app is not failed by the restart: {after:?}"
    );
    assert!(
        after.iter().any(|(i, s)| *i != id && s == "FINISHED"),
        "the finished app stays finished: {after:?}"
    );
    assert!(alive(pids[0]), "the container keeps running");
    c.wait_nodes_running(1);

    let app = c.wait_app_state(&id, &["FINISHED", "FAILED", "KILLED"], MINUTE);
    assert_eq!(app["finalStatus"], "SUCCEEDED", "{app}\n{}", c.rm_logs());
    assert_eq!(
        app["currentAppAttemptId"], attempt,
        "the AM re-registered: no new attempt"
    );
    let done = files_ending(&c.path("work"), ".done");
    let started = files_ending(&c.path("work"), ".pid");
    assert_eq!(done.len(), 1, "the container ran to its end: {done:?}");
    assert_eq!(started.len(), 1, "and was not run again: {started:?}");
    long.wait(MINUTE);
    long
}

#[test]
fn rm_kill_9_and_restart_keeps_every_app_and_the_running_containers() {
    rm_restart_scenario();
}

#[test]
fn the_dshell_client_follows_its_app_across_an_rm_restart() {
    let mut long = rm_restart_scenario();
    let status = long.wait(MINUTE);
    assert!(status.success(), "{}", long.output());
}

#[test]
fn a_killed_nm_becomes_lost_and_the_am_learns_of_it() {
    let opts = Options {
        nm_expiry_ms: 2_000,
        ..Options::default()
    };
    let mut c = Cluster::rm_only(&opts);
    // A node with room for the AM only, so the containers must go to the second node.
    c.add_nm(256, false);
    c.wait_nodes_running(1);
    let work = work_dir(&c);
    let cmd = sleeper(&work);
    let mut d = c.dshell(
        "lost",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "512",
            "-master_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let id = c.submitted_app(&mut d);
    c.wait_app_state(&id, &["RUNNING"], MINUTE);
    let victim = c.add_nm(4096, false);
    c.wait_nodes_running(2);
    wait_pids(&c, 2);
    let node_id = c.nms[victim].node_id.clone();

    c.nms[victim].proc.kill9();
    wait_for(MINUTE, "the node to be LOST", || {
        c.node(&node_id).filter(|n| n["state"] == "LOST")
    });
    let status = d.wait(MINUTE);
    let out = d.output();
    eprintln!("{out}");
    assert!(!status.success(), "{out}");
    assert!(
        out.contains(&node_id) && out.to_lowercase().contains("lost"),
        "the AM's report names the lost node:\n{out}"
    );
}

fn over_memory(no_cgroups: bool) {
    let opts = Options {
        no_cgroups,
        ..Options::default()
    };
    let c = Cluster::start(1, 4096, &opts);
    // `tail` keeps its whole input until EOF, so it holds 400 MB for as long as `sleep` runs.
    let mut d = c.dshell(
        "memory",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-shell_command",
            "(head -c 400m /dev/zero; sleep 30) | tail",
        ],
    );
    let status = d.wait(MINUTE);
    let out = d.output();
    eprintln!("{out}");
    assert!(!status.success(), "{out}");
    assert!(
        out.contains("killed: memory") && out.contains("over limit"),
        "dshell says why the container was stopped:\n{out}"
    );
}

#[test]
fn a_container_over_its_memory_limit_is_stopped_by_the_monitor() {
    over_memory(true);
}

#[test]
fn a_container_over_its_memory_limit_is_stopped_with_cgroups_where_available() {
    over_memory(false);
}

/// Starts `weft up` with ephemeral ports; returns it and its ready file's JSON.
fn weft_up(dir: &Path) -> (Proc, Value) {
    harness::weft_up(dir, &["--nms", "2", "--nm-memory-mb", "2048"])
}

fn pids_of(v: &Value) -> Vec<i32> {
    let mut pids = vec![v["rm_pid"].as_i64().expect("rm pid")];
    pids.extend(
        v["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| n["pid"].as_i64().expect("nm pid")),
    );
    pids.into_iter().map(|p| p as i32).collect()
}

#[test]
fn weft_up_starts_a_cluster_prints_its_addresses_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut up, v) = weft_up(dir.path());
    let web = v["web"].as_str().expect("web").to_string();
    let out = up.output();
    assert!(out.contains(&format!("http://{web}/cluster")), "{out}");
    assert!(
        out.contains(v["scheduler"].as_str().expect("scheduler")),
        "{out}"
    );
    assert!(
        out.contains(v["tracker"].as_str().expect("tracker")),
        "{out}"
    );
    assert!(out.contains("NodeManager 1"), "{out}");
    // A command the shell can run as printed (the binary's path: the test runs elsewhere),
    // and how to put it on PATH.
    assert!(
        out.contains(&format!("  {} dshell -rm http://{web} ", harness::WEFT)),
        "{out}"
    );
    assert!(out.contains("To type just `weft`: export PATH="), "{out}");
    // Every daemon advertises the one host: node ids and NM web addresses (the UI's log
    // links) use it, not the machine's host name.
    for n in v["nodes"].as_array().expect("nodes") {
        let id = n["node_id"].as_str().expect("node id");
        assert!(id.starts_with("127.0.0.1:"), "{n}");
    }
    assert!(dir.path().join("data/fair-scheduler.xml").is_file());

    // The cluster takes work.
    let mut d = Proc::spawn(
        "dshell",
        &[
            "dshell".to_string(),
            "-rm".to_string(),
            format!("http://{web}"),
            "-num_containers".to_string(),
            "2".to_string(),
            "-queue".to_string(),
            "prod".to_string(),
            "-shell_command".to_string(),
            "echo hello".to_string(),
        ],
        &dir.path().join("dshell.out"),
    );
    let status = d.wait(MINUTE);
    assert!(status.success(), "{}", d.output());

    // A broken edit of the allocation file is told in this terminal (not only in rm.log), and
    // so is the fix.
    let allocations = dir.path().join("data/fair-scheduler.xml");
    let good = read(&allocations);
    std::fs::write(&allocations, "<allocations><queue name=\"root\">").expect("break the file");
    wait_for(MINUTE, "weft up to report the refused file", || {
        up.output()
            .contains("Allocation file refused: ")
            .then_some(())
    });
    let out = up.output();
    assert!(
        out.contains("The ResourceManager keeps the previous queues"),
        "{out}"
    );
    std::fs::write(
        &allocations,
        good.replace(
            "<queue name=\"dev\">",
            "<queue name=\"etl\"/>\n    <queue name=\"dev\">",
        ),
    )
    .expect("fix the file");
    wait_for(MINUTE, "weft up to report the fixed file", || {
        up.output()
            .contains("loaded: the new queues are in force.")
            .then_some(())
    });

    let pids = pids_of(&v);
    up.signal(Signal::SIGTERM);
    let status = up.wait(Duration::from_secs(30));
    let out = up.output();
    assert!(status.success(), "{out}");
    assert!(out.contains("Cluster stopped"), "{out}");
    assert!(pids.iter().all(|p| !alive(*p)), "daemons left: {pids:?}");
    let rm_log = read(&dir.path().join("data/logs/rm.log"));
    assert!(
        rm_log.contains("shutting down"),
        "the RM stopped cleanly:\n{rm_log}"
    );
}

#[test]
fn weft_up_stops_everything_and_fails_when_a_daemon_dies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut up, v) = weft_up(dir.path());
    let pids = pids_of(&v);
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pids[1]), Signal::SIGKILL);
    let status = up.wait(Duration::from_secs(30));
    let out = up.output();
    assert!(!status.success(), "{out}");
    assert!(out.contains("NodeManager 0 exited unexpectedly"), "{out}");
    assert!(
        pids.iter().all(|p| !alive(*p)),
        "daemons left: {pids:?}\n{out}"
    );
}

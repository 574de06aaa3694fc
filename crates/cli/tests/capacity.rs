//! The Capacity Scheduler end to end: `weft up --scheduler capacity` as real processes on
//! 127.0.0.1 with ephemeral ports, two users' dshell jobs in one leaf held at the user limit the
//! formula gives, what the REST API, the CLI verbs, the web UI and /metrics say of the queues,
//! a refused refresh, and the unchanged Python client yarn-api-client reading the queues. Every
//! wait is bounded; the harness kills what it started.

// The harness serves several test files; this one uses only part of it.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::{alive, wait_for, Proc};
use nix::sys::signal::Signal;
use serde_json::{json, Value};

const MINUTE: Duration = Duration::from_secs(60);

/// One leaf, `shared`, whose two users each hit the user limit (derivation in the test), and an
/// idle sibling `other`. The AM limits let each user start its one AM.
const QUEUES: &str = r#"<?xml version="1.0"?>
<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>shared,other</value></property>
  <property><name>yarn.scheduler.capacity.root.shared.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.shared.maximum-capacity</name><value>100</value></property>
  <property><name>yarn.scheduler.capacity.root.shared.minimum-user-limit-percent</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.shared.user-limit-factor</name><value>0.5</value></property>
  <property><name>yarn.scheduler.capacity.root.shared.maximum-am-resource-percent</name><value>0.5</value></property>
  <property><name>yarn.scheduler.capacity.root.other.capacity</name><value>50</value></property>
</configuration>
"#;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `weft up --scheduler capacity` with two 4 GB NMs and the queues in `conf`; returns it and
/// its ready file's JSON.
fn capacity_up(dir: &Path, conf: &Path) -> (Proc, Value) {
    let conf = conf.display().to_string();
    harness::weft_up(
        dir,
        &[
            "--scheduler",
            "capacity",
            "--conf-dir",
            &conf,
            "--nms",
            "2",
            "--nm-memory-mb",
            "4096",
        ],
    )
}

/// GET a path of the RM at `web`: (status, JSON body or Null).
fn get(web: &str, path: &str) -> (u16, Value) {
    let (status, text) = harness::get_text(web, path);
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Starts `weft dshell` as `user` against `web` in the background.
fn start_dshell(dir: &Path, web: &str, user: &str, args: &[&str]) -> Proc {
    let mut all: Vec<String> = vec![
        "dshell".into(),
        "-rm".into(),
        format!("http://{web}"),
        "-timeout".into(),
        "300000".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    Proc::spawn_env(
        &format!("dshell of {user}"),
        &all,
        &dir.join(format!("dshell-{user}.out")),
        &[("HADOOP_USER_NAME", user)],
    )
}

/// Runs a client verb against the RM at `web` to its end.
fn weft(web: &str, args: &[&str]) -> std::process::Output {
    let rm = format!("http://{web}");
    Command::new(harness::WEFT)
        .args(args)
        .args(["--rm", rm.as_str()])
        .stdin(Stdio::null())
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

/// The leaf `shared` in the scheduler answer.
fn shared(web: &str) -> Value {
    let (status, v) = get(web, "/ws/v1/cluster/scheduler");
    assert_eq!(status, 200, "{v}");
    v["scheduler"]["schedulerInfo"]["queues"]["queue"]
        .as_array()
        .and_then(|qs| qs.iter().find(|q| q["queueName"] == "shared"))
        .cloned()
        .unwrap_or_else(|| panic!("no leaf shared in {v}"))
}

/// Each user of `shared` with the memory it holds, by name.
fn users_memory(leaf: &Value) -> Vec<(String, i64)> {
    let mut users: Vec<(String, i64)> = leaf["users"]["user"]
        .as_array()
        .map(|us| {
            us.iter()
                .map(|u| {
                    (
                        u["username"].as_str().unwrap_or_default().to_string(),
                        u["resourcesUsed"]["memory"].as_i64().unwrap_or(-1),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    users.sort();
    users
}

#[test]
fn weft_up_runs_the_capacity_scheduler_and_two_users_hit_the_user_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(&conf).expect("conf dir");
    std::fs::write(conf.join("capacity-scheduler.xml"), QUEUES).expect("queues");
    let (mut up, ready) = capacity_up(dir.path(), &conf);
    let web = ready["web"].as_str().expect("web").to_string();
    let out = up.output();
    assert!(out.contains("scheduler    Capacity"), "{out}");
    assert!(
        out.contains(&format!(
            "queues       {}",
            conf.join("capacity-scheduler.xml").display()
        )),
        "{out}"
    );
    assert!(
        !dir.path().join("data/capacity-scheduler.xml").exists(),
        "the user's file is used; no default is written"
    );

    // The user limit in `shared`, by capacity spec 5.6 (DefaultResourceCalculator: memory only;
    // minAlloc 1024 MB, yarn-site's default; cluster P = 2 x 4096 = 8192 MB):
    //   effMin     = trunc(8192 x 50%) = 4096; queueCap = max(4096, 1024) = 4096
    //   currentCap >= queueCap = 4096, so the MULP term is ceil(4096 x 50 / 100) = 2048 at
    //              least, and the active-users term ceil((used of active users + 1024) / n)
    //              only raises the max above it
    //   maxUL      = multiplyAndRoundDown(queueCap, ULF 0.5) = 2048
    //   UL         = roundUp(min(max(.., >= 2048), 2048), 1024) = 2048 MB for each user,
    //              whichever user is active, so the order the apps start in does not matter
    // The limit is soft by one container (a user is served while used <= UL): 0 -> 1024 (the
    // AM), 1024 -> 2048, 2048 -> 3072, then 3072 > 2048 stops it. Each user peaks at 3072 MB,
    // three 1024 MB containers (AM + 2 tasks) of the four tasks it asks for. Nothing else
    // binds: the two users hold 6144 MB, below the queue's maximum (100% = 8192 MB) and the
    // cluster. AM limits (5.8): the queue's is 50% of 8192 = 4096 MB; a user's is
    // roundUp(4096 x 0.5 x max(0.5, 1/users) x 0.5) = 1024 MB, room for the one AM each.
    let task = [
        "-num_containers",
        "4",
        "-container_memory",
        "1024",
        "-queue",
        "shared",
        "-shell_command",
        "sleep 600",
    ];
    let mut alice = start_dshell(dir.path(), &web, "alice", &task);
    let alice_app = submitted_app(&mut alice);
    let mut bob = start_dshell(dir.path(), &web, "bob", &task);
    let bob_app = submitted_app(&mut bob);
    let expected = vec![("alice".to_string(), 3072), ("bob".to_string(), 3072)];
    wait_for(MINUTE, "both users to reach the user limit", || {
        (users_memory(&shared(&web)) == expected).then_some(())
    });
    // Held there: several NM heartbeats (1 s apart) later, neither user got a fourth container
    // though both still ask.
    std::thread::sleep(Duration::from_secs(4));
    let leaf = shared(&web);
    assert_eq!(users_memory(&leaf), expected, "{leaf}");
    for user in leaf["users"]["user"].as_array().expect("users") {
        assert_eq!(user["userResourceLimit"]["memory"], 2048, "{user}");
        assert_eq!(user["numActiveApplications"], 1, "{user}");
    }
    for app in [&alice_app, &bob_app] {
        let (_, v) = get(&web, &format!("/ws/v1/cluster/apps/{app}"));
        assert_eq!(v["app"]["runningContainers"], 3, "{v}");
        assert_eq!(v["app"]["queue"], "root.shared", "{v}");
    }
    assert_eq!(
        (
            &leaf["numActiveApplications"],
            &leaf["numPendingApplications"]
        ),
        (&json!(2), &json!(0))
    );
    assert_eq!(
        (&leaf["userLimit"], &leaf["userLimitFactor"]),
        (&json!(50), &json!(0.5))
    );
    // 6144 of the guaranteed 4096: 150%; of the cluster: 75%.
    assert_eq!(leaf["usedCapacity"], 150.0, "{leaf}");
    assert_eq!(leaf["absoluteUsedCapacity"], 75.0, "{leaf}");

    // The CLI prints the capacity figures, for one queue and for all.
    let status = weft(&web, &["queue", "-status", "shared"]);
    let report = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{status:?}");
    assert!(
        report.contains(
            "Queue Name : shared\n\tQueue Path : root.shared\n\tState : RUNNING\n\tCapacity : 50.00%\n\tCurrent Capacity : 150.00%\n\tMaximum Capacity : 100.00%\n"
        ),
        "{report}"
    );
    let listed = weft(&web, &["queue", "-list", "all"]);
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(table.starts_with("3 queues were found\n"), "{table}");
    assert!(table.contains("| shared "), "{table}");

    // The web UI's scheduler page in Capacity form.
    let (status, page) = harness::get_text(&web, "/cluster/scheduler?fragment=1");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("<b>Capacity Scheduler</b>"), "{page}");
    assert_eq!(page.matches("<tr class=\"queue").count(), 3, "{page}");
    assert!(page.contains("50% · factor 0.5"), "{page}");

    // /metrics: the leaf's capacities and its user limit; every family METRICS.md marks
    // Capacity-only is there.
    let (status, metrics) = harness::get_text(&web, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    let doc = std::fs::read_to_string(workspace().join("crates/rm/METRICS.md")).expect("doc");
    let capacity_only: Vec<&str> = doc
        .lines()
        .filter(|l| l.starts_with("| `weft_") && l.contains("| *Capacity.*"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(capacity_only.len(), 8, "{capacity_only:?}");
    for family in capacity_only {
        assert!(
            metrics.contains(&format!("# TYPE {family} gauge\n")),
            "{family} missing in:\n{metrics}"
        );
    }
    for line in [
        "weft_scheduler_info{kind=\"capacity\",",
        "weft_queue_capacity_percent{queue=\"root.shared\"} 50\n",
        "weft_queue_used_capacity_percent{queue=\"root.shared\"} 150\n",
        "weft_queue_user_limit{queue=\"root.shared\",resource=\"memory-mb\"} 2048\n",
        "weft_queue_usage{queue=\"root.shared\",resource=\"memory-mb\"} 6144\n",
    ] {
        assert!(metrics.contains(line), "{line:?} missing in:\n{metrics}");
    }

    // A refresh that deletes the running leaf is refused: by rmadmin, and by the file watch,
    // which `weft up` reports; the queues stay as they were.
    let before = shared(&web);
    let deleted = QUEUES
        .replace("<value>shared,other</value>", "<value>other</value>")
        .replace(
            "root.other.capacity</name><value>50",
            "root.other.capacity</name><value>100",
        );
    std::fs::write(conf.join("capacity-scheduler.xml"), &deleted).expect("edit");
    let refresh = weft(&web, &["rmadmin", "-refreshQueues"]);
    assert_ne!(refresh.status.code(), Some(0), "{refresh:?}");
    let refusal = "root.shared cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING";
    let stderr = String::from_utf8_lossy(&refresh.stderr);
    assert!(stderr.contains(refusal), "{stderr}");
    wait_for(MINUTE, "weft up to report the refused file", || {
        up.output().contains(refusal).then_some(())
    });
    let after = shared(&web);
    assert_eq!(
        (&after["capacity"], &after["state"], users_memory(&after)),
        (&before["capacity"], &before["state"], users_memory(&before)),
    );
    std::fs::write(conf.join("capacity-scheduler.xml"), QUEUES).expect("restore");
    let refresh = weft(&web, &["rmadmin", "-refreshQueues"]);
    assert_eq!(refresh.status.code(), Some(0), "{refresh:?}");

    // The Python client, unchanged, reads the capacity scheduler's queues.
    let python = workspace().join("target/test-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps (it installs yarn-api-client into target/test-venv)",
        python.display()
    );
    let script = workspace().join("tests/python/yarn_api_client_capacity_check.py");
    let check = Command::new(&python)
        .arg(&script)
        .arg(format!("http://{web}"))
        .stdin(Stdio::null())
        .output()
        .expect("run the yarn-api-client check");
    assert!(
        check.status.success(),
        "yarn-api-client capacity check failed:\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );

    for app in [&alice_app, &bob_app] {
        let (status, v) = kill_app(&web, &format!("/ws/v1/cluster/apps/{app}/state"));
        assert!(status == 200 || status == 202, "{status} {v}");
    }
    assert!(!alice.wait(MINUTE).success(), "{}", alice.output());
    assert!(!bob.wait(MINUTE).success(), "{}", bob.output());

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

/// Kills an app through REST: (status, JSON body or Null).
fn kill_app(web: &str, path: &str) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{web}{path}");
    let mut r = agent
        .put(&url)
        .send_json(json!({"state": "KILLED"}))
        .unwrap_or_else(|e| panic!("PUT {url}: {e}"));
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

//! Capacity Scheduler node labels end to end (issue 16 item 6): `weft up --scheduler capacity
//! --nms 3` as real processes on 127.0.0.1 with ephemeral ports; an admin adds label `gpu` with
//! `weft rmadmin -addToClusterNodeLabels` and maps two NMs to it with `-replaceLabelsOnNode`;
//! a dshell job in `gpu_q` (whose `default-node-label-expression` is gpu) runs only on those two
//! NMs, one in `etl` (DEFAULT only) only on the third; REST, `weft queue -status` and rmadmin's
//! refusal to remove a label a queue lists say so. Every wait is bounded; the harness kills
//! what it started.

// The harness serves several test files; this one uses only part of it.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use harness::{wait_for, Proc};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

/// gpu_q reaches gpu (all of it) and submits there; etl reaches DEFAULT only (a single space).
/// DEFAULT is split evenly; AMs may take half of a queue.
const QUEUES: &str = r#"<?xml version="1.0"?>
<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>gpu_q,etl</value></property>
  <property><name>yarn.scheduler.capacity.root.gpu_q.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.etl.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.etl.user-limit-factor</name><value>2</value></property>
  <property><name>yarn.scheduler.capacity.maximum-am-resource-percent</name><value>0.5</value></property>
  <property><name>yarn.scheduler.capacity.root.accessible-node-labels.gpu.capacity</name><value>100</value></property>
  <property><name>yarn.scheduler.capacity.root.gpu_q.accessible-node-labels</name><value>gpu</value></property>
  <property><name>yarn.scheduler.capacity.root.gpu_q.accessible-node-labels.gpu.capacity</name><value>100</value></property>
  <property><name>yarn.scheduler.capacity.root.gpu_q.default-node-label-expression</name><value>gpu</value></property>
  <property><name>yarn.scheduler.capacity.root.etl.accessible-node-labels</name><value> </value></property>
</configuration>
"#;

/// Small containers, node labels changeable through rmadmin and REST.
const RM_CONFIG: &str = r#"[properties]
"yarn.scheduler.minimum-allocation-mb" = "64"
"yarn.scheduler.increment-allocation-mb" = "64"
"yarn.node-labels.enabled" = "true"
"weft.scheduler.verify-interval-ms" = "200"
"#;

fn get(web: &str, path: &str) -> Value {
    let (status, text) = harness::get_text(web, path);
    assert_eq!(status, 200, "GET {path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
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

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A dshell job of 3 tasks of 256 MB and one second in `queue`.
fn dshell(dir: &Path, web: &str, name: &str, queue: &str) -> Proc {
    let args: Vec<String> = [
        "dshell",
        "-rm",
        &format!("http://{web}"),
        "-timeout",
        "120000",
        "-queue",
        queue,
        "-master_memory",
        "256",
        "-container_memory",
        "256",
        "-num_containers",
        "3",
        "-shell_command",
        "sleep 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Proc::spawn(
        &format!("dshell {name}"),
        &args,
        &dir.join(format!("dshell-{name}.out")),
    )
}

/// The application id a dshell printed once it submitted.
fn submitted_app(dshell: &mut Proc) -> String {
    wait_for(MINUTE, "the dshell to submit", || {
        dshell
            .output()
            .lines()
            .find_map(|l| l.strip_prefix("Submitted application "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
            .or_else(|| {
                let status = dshell.try_status()?;
                panic!("dshell exited ({status}) early:\n{}", dshell.output())
            })
    })
}

fn wait_final(web: &str, app: &str) -> Value {
    wait_for(Duration::from_secs(90), &format!("{app} to end"), || {
        let v = get(web, &format!("/ws/v1/cluster/apps/{app}"));
        let state = v["app"]["state"].as_str().unwrap_or("").to_string();
        ["FINISHED", "FAILED", "KILLED"]
            .contains(&state.as_str())
            .then(|| v["app"].clone())
    })
}

/// The NMs every container of the app's first attempt ran on, its AM's included.
fn nodes_used(web: &str, app: &str) -> BTreeSet<String> {
    let attempt = format!(
        "appattempt_{}_000001",
        app.trim_start_matches("application_")
    );
    let a = get(web, &format!("/ws/v1/cluster/apps/{app}/appattempts"));
    let mut nodes: BTreeSet<String> = a["appAttempts"]["appAttempt"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["nodeId"].as_str().map(str::to_string))
        .collect();
    let c = get(
        web,
        &format!("/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers"),
    );
    let containers = c["containers"]["container"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(containers.len() >= 4, "the AM and 3 tasks: {c}");
    nodes.extend(
        containers
            .iter()
            .filter_map(|x| x["nodeId"].as_str().map(str::to_string)),
    );
    nodes
}

/// The queue named `name` in a capacity `/scheduler` answer.
fn queue<'a>(scheduler: &'a Value, name: &str) -> &'a Value {
    scheduler["scheduler"]["schedulerInfo"]["queues"]["queue"]
        .as_array()
        .and_then(|qs| qs.iter().find(|q| q["queueName"] == name))
        .unwrap_or_else(|| panic!("queue {name} in {scheduler}"))
}

#[test]
fn a_labeled_queue_runs_on_its_labels_nodes_and_a_queue_without_it_stays_off_them() {
    let dir = tempfile::Builder::new()
        .prefix("weft-caplabels-")
        .tempdir()
        .unwrap();
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("capacity-scheduler.xml"), QUEUES).unwrap();
    let rm_config = dir.path().join("rm.toml");
    std::fs::write(&rm_config, RM_CONFIG).unwrap();
    let (conf, rm_config) = (conf.display().to_string(), rm_config.display().to_string());
    let (mut up, v) = harness::weft_up(
        dir.path(),
        &[
            "--scheduler",
            "capacity",
            "--conf-dir",
            &conf,
            "--rm-config",
            &rm_config,
            "--nms",
            "3",
            "--nm-memory-mb",
            "1024",
        ],
    );
    let web = v["web"].as_str().expect("web").to_string();
    let nodes: Vec<String> = v["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["node_id"].as_str().expect("node id").to_string())
        .collect();
    assert_eq!(nodes.len(), 3);

    ok(
        &weft(&web, &["rmadmin", "-addToClusterNodeLabels", "gpu"]),
        "addToClusterNodeLabels",
    );
    let mapping = format!("{}=gpu {}=gpu", nodes[0], nodes[1]);
    ok(
        &weft(&web, &["rmadmin", "-replaceLabelsOnNode", &mapping]),
        "replaceLabelsOnNode",
    );
    let listed = ok(&weft(&web, &["cluster", "-lnl"]), "cluster -lnl");
    assert_eq!(listed.trim(), "Node Labels: <gpu:exclusivity=true>");

    // One job per queue, at once: gpu_q's only on the gpu NMs, etl's only on the third.
    let mut gpu = dshell(dir.path(), &web, "gpu", "gpu_q");
    let mut etl = dshell(dir.path(), &web, "etl", "etl");
    let gpu_app = submitted_app(&mut gpu);
    let etl_app = submitted_app(&mut etl);
    for (app, proc, allowed, label) in [
        (&gpu_app, &mut gpu, &nodes[0..2], "gpu"),
        (&etl_app, &mut etl, &nodes[2..3], ""),
    ] {
        let done = wait_final(&web, app);
        assert_eq!(
            done["finalStatus"],
            "SUCCEEDED",
            "{done}\n{}",
            proc.output()
        );
        assert_eq!(done["appNodeLabelExpression"], label, "{done}");
        let used = nodes_used(&web, app);
        assert!(
            used.iter().all(|n| allowed.contains(n)),
            "{app} ran on {used:?}, allowed {allowed:?}"
        );
        assert!(proc.wait(MINUTE).success(), "{}", proc.output());
    }

    // REST: gpu_q's figures in DEFAULT and gpu, its labels; etl's DEFAULT only.
    let scheduler = get(&web, "/ws/v1/cluster/scheduler");
    let gpu_q = queue(&scheduler, "gpu_q");
    assert_eq!(gpu_q["nodeLabels"], serde_json::json!(["gpu"]));
    assert_eq!(gpu_q["defaultNodeLabelExpression"], "gpu");
    let partitions = gpu_q["capacities"]["queueCapacitiesByPartition"]
        .as_array()
        .expect("partitions");
    let names: Vec<&str> = partitions
        .iter()
        .filter_map(|p| p["partitionName"].as_str())
        .collect();
    assert_eq!(names, ["", "gpu"], "{gpu_q}");
    assert_eq!(partitions[1]["capacity"], 100.0);
    assert_eq!(partitions[1]["absoluteCapacity"], 100.0);
    assert_eq!(partitions[1]["effectiveMinResource"]["memory"], 2048);
    let etl_q = queue(&scheduler, "etl");
    assert_eq!(etl_q["nodeLabels"], serde_json::json!([]));
    assert_eq!(
        etl_q["capacities"]["queueCapacitiesByPartition"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    // The CLI: queue -status shows the labels, rmadmin refuses to remove one a queue lists.
    let status = ok(&weft(&web, &["queue", "-status", "gpu_q"]), "queue -status");
    assert!(
        status.contains("\tDefault Node Label expression : gpu\n\tAccessible Node Labels : gpu\n"),
        "{status}"
    );
    let refused = weft(&web, &["rmadmin", "-removeFromClusterNodeLabels", "gpu"]);
    assert_eq!(refused.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("Cannot remove label=gpu, because queue=gpu_q is using this label"),
        "{stderr}"
    );

    up.signal(nix::sys::signal::Signal::SIGTERM);
    up.wait(MINUTE);
}

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

//! Hadoop's node-label endpoints over the RM's registry, in-process on 127.0.0.1 with
//! ephemeral ports: the allocation file's pools read as exclusive labels, admins map nodes into
//! a pool that lists no hosts, refusals change nothing, and the mappings survive a restart.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::runtime::Runtime;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::*;
use weft_rm::{RmArgs, RunningRm};

const ALLOCATIONS: &str = r#"<allocations>
  <resourcePools>
    <resourcePool name="pa"><host>n1</host></resourcePool>
    <resourcePool name="pb"/>
  </resourcePools>
  <queue name="pa_q"/>
  <queue name="pb_q"/>
</allocations>"#;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn start(rt: &Runtime, dir: &Path) -> RunningRm {
    let alloc = dir.join("fair-scheduler.xml");
    std::fs::write(&alloc, ALLOCATIONS).unwrap();
    let config = dir.join("rm.toml");
    std::fs::write(
        &config,
        "[properties]\n\"yarn.admin.acl\" = \"admin\"\n\"yarn.node-labels.enabled\" = \"true\"\n",
    )
    .unwrap();
    let args = RmArgs {
        config: Some(config),
        allocations: Some(alloc),
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ..RmArgs::default()
    };
    rt.block_on(weft_rm::start(args)).unwrap()
}

fn call(rm: &RunningRm, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{}{path}", rm.web);
    let result = match (method, body) {
        ("GET", _) => agent.get(&url).call(),
        ("POST", Some(b)) => agent.post(&url).send_json(b),
        ("POST", None) => agent.post(&url).send_empty(),
        _ => panic!("unsupported"),
    };
    let mut r = result.expect("the RM answers");
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Registers NMs `n1:1` and `n2:1` (no container is ever started on them).
fn register_nodes(rt: &Runtime, rm: &RunningRm) {
    let mut client = rt
        .block_on(ResourceTrackerClient::connect(format!(
            "http://{}",
            rm.tracker
        )))
        .unwrap();
    for (id, port) in [("n1:1", 41001), ("n2:1", 41002)] {
        rt.block_on(client.register_node_manager(RegisterNodeManagerRequest {
            node_id: id.into(),
            address: format!("127.0.0.1:{port}"),
            total_capability: Some(Resource::new(8192, 8)),
            ..Default::default()
        }))
        .unwrap();
    }
}

fn message(v: &Value) -> &str {
    v["RemoteException"]["message"].as_str().unwrap_or("")
}

#[test]
fn labels_are_read_changed_refused_and_kept_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let rm = start(&rt, dir.path());
    register_nodes(&rt, &rm);
    const C: &str = "/ws/v1/cluster";

    let (status, v) = call(&rm, "GET", &format!("{C}/get-node-labels"), None);
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v,
        json!({"nodeLabelsInfo": {"nodeLabelInfo": [
            {"name": "pa", "exclusivity": true},
            {"name": "pb", "exclusivity": true},
        ]}})
    );
    let (_, v) = call(&rm, "GET", &format!("{C}/nodes/n1:1"), None);
    assert_eq!(v["node"]["nodeLabels"], json!(["pa"]), "the file places n1");

    // Admins only: 401 for anyone else, and nothing added.
    let gpu = json!({"nodeLabelInfo": [{"name": "gpu", "exclusivity": "true"}]});
    let (status, v) = call(
        &rm,
        "POST",
        &format!("{C}/add-node-labels?user.name=eve"),
        Some(gpu.clone()),
    );
    assert_eq!(status, 401, "{v}");
    assert_eq!(v["RemoteException"]["exception"], "AuthorizationException");
    let (status, v) = call(
        &rm,
        "POST",
        &format!("{C}/add-node-labels?user.name=admin"),
        Some(gpu),
    );
    assert_eq!(status, 200, "{v}");

    // Refusals: each a 400 naming the problem, nothing changed.
    for (path, expected) in [
        ("nodes/n9:1/replace-labels?labels=pb", "unknown node n9:1"),
        (
            "nodes/n1:1/replace-labels?labels=pb",
            "host n1:1 belongs to resource pool pa defined in the allocation file",
        ),
        (
            "nodes/n2:1/replace-labels?labels=pa",
            "label pa is owned by the allocation file",
        ),
        (
            "nodes/n2:1/replace-labels?labels=zz",
            "unknown node label zz",
        ),
        (
            "remove-node-labels?labels=pb",
            "label pb is owned by the allocation file",
        ),
    ] {
        let (status, v) = call(&rm, "POST", &format!("{C}/{path}&user.name=admin"), None);
        assert_eq!(status, 400, "{path}: {v}");
        assert!(message(&v).contains(expected), "{path}: {v}");
    }
    let (_, v) = call(&rm, "GET", &format!("{C}/get-node-to-labels"), None);
    assert_eq!(
        v,
        json!({"nodeToLabelsInfo": {"nodeToLabels": {
            "n1:1": {"nodeLabelInfo": [{"name": "pa", "exclusivity": true}]},
        }}})
    );

    // n2 joins pb, which lists no hosts in the file.
    let (status, v) = call(
        &rm,
        "POST",
        &format!("{C}/nodes/n2:1/replace-labels?labels=pb&user.name=admin"),
        None,
    );
    assert_eq!(status, 200, "{v}");
    let (_, v) = call(&rm, "GET", &format!("{C}/label-mappings?labels=pb"), None);
    assert_eq!(
        v,
        json!({"labelsToNodesInfo": {"labelsToNodes": {"pb": {"nodes": ["n2:1"]}}}})
    );
    let (_, v) = call(&rm, "GET", &format!("{C}/nodes/n2:1/get-labels"), None);
    assert_eq!(
        v,
        json!({"nodeLabelsInfo": {"nodeLabelInfo": [{"name": "pb", "exclusivity": true}]}})
    );
    let (_, v) = call(&rm, "GET", &format!("{C}/nodes"), None);
    let labels: Vec<&Value> = v["nodes"]["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["nodeLabels"])
        .collect();
    assert_eq!(labels, [&json!(["pa"]), &json!(["pb"])]);
    let (_, before) = call(&rm, "GET", &format!("{C}/get-node-to-labels"), None);
    let (_, labels_before) = call(&rm, "GET", &format!("{C}/get-node-labels"), None);

    rt.block_on(rm.stop());
    let rm = start(&rt, dir.path());
    let (_, after) = call(&rm, "GET", &format!("{C}/get-node-labels"), None);
    assert_eq!(after, labels_before, "gpu is kept in the store");
    register_nodes(&rt, &rm);
    let (_, after) = call(&rm, "GET", &format!("{C}/get-node-to-labels"), None);
    assert_eq!(after, before, "the mapping is kept in the store");
    rt.block_on(rm.stop());
}

//! An in-process RM running the FIFO scheduler (`--scheduler fifo`), driven over REST on
//! 127.0.0.1 with ephemeral ports: where a submission naming another queue goes, how a move
//! (a Fair-only feature) and a priority change are refused, and the `fifoScheduler` answer of an empty cluster.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_rm::{RmArgs, RunningRm};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn fifo_rm(rt: &tokio::runtime::Runtime, dir: &Path) -> RunningRm {
    rt.block_on(weft_rm::start(RmArgs {
        scheduler: Some("fifo".into()),
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ..RmArgs::default()
    }))
    .unwrap()
}

/// One REST call: (status, JSON body).
fn call(rm: &RunningRm, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{}{path}", rm.web);
    let result = match (method, body) {
        ("GET", _) => agent.get(&url).call(),
        ("POST", None) => agent.post(&url).send_empty(),
        ("POST", Some(b)) => agent.post(&url).send_json(b),
        ("PUT", Some(b)) => agent.put(&url).send_json(b),
        _ => panic!("unsupported call {method} {path}"),
    };
    let mut r = result.expect("the RM answers");
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[test]
fn fifo_places_every_submission_in_default_and_refuses_moves() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let rm = fifo_rm(&rt, dir.path());

    // An empty cluster: the flat FIFO answer, 0.0 used rather than NaN.
    let (status, v) = call(&rm, "GET", "/ws/v1/cluster/scheduler", None);
    assert_eq!(status, 200, "{v}");
    let info = &v["scheduler"]["schedulerInfo"];
    assert_eq!(info["type"], "fifoScheduler", "{v}");
    assert_eq!(
        (&info["numNodes"], &info["usedCapacity"]),
        (&json!(0), &json!(0.0)),
        "{v}"
    );

    // A submission naming a queue FIFO does not have is accepted and placed in `default`
    // (capacity-scheduler spec §10.1: Hadoop's FIFO scheduler ignores the queue it is given).
    let (status, v) = call(&rm, "POST", "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200, "{v}");
    let id = v["application-id"].as_str().unwrap().to_string();
    let submission = json!({
        "application-id": id,
        "application-name": "t",
        "queue": "prod",
        "am-container-spec": {"commands": {"command": "sleep 100"}},
        "resource": {"memory": 1024, "vCores": 1},
    });
    let (status, v) = call(&rm, "POST", "/ws/v1/cluster/apps", Some(submission));
    assert_eq!(status, 202, "{v}");
    let app_path = format!("/ws/v1/cluster/apps/{id}");
    let (_, v) = call(&rm, "GET", &app_path, None);
    assert_eq!(v["app"]["queue"], "root.default", "{v}");
    assert_eq!(v["app"]["state"], "ACCEPTED", "{v}");

    // A move is a Fair Scheduler feature: 400 with Hadoop's reason, and nothing changes,
    // whatever the target (even the queue the app is in).
    for target in ["prod", "default", "root.default"] {
        let (status, v) = call(
            &rm,
            "PUT",
            &format!("{app_path}/queue"),
            Some(json!({"queue": target})),
        );
        assert_eq!(status, 400, "{target}: {v}");
        let e = &v["RemoteException"];
        assert_eq!(e["exception"], "BadRequestException", "{v}");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(
                "cannot move {id} to {target}: the FIFO scheduler (FifoScheduler) does not support moving apps between queues"
            )),
            "{message}"
        );
    }
    let (_, v) = call(&rm, "GET", &format!("{app_path}/queue"), None);
    assert_eq!(v, json!({"queue": "root.default"}));

    // Application priorities are not FIFO's either: a change is refused, naming it.
    let (status, v) = call(
        &rm,
        "PUT",
        &format!("{app_path}/priority"),
        Some(json!({"priority": 5})),
    );
    assert_eq!(status, 400, "{v}");
    let message = v["RemoteException"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Weft's FIFO scheduler"), "{message}");

    rt.block_on(rm.stop());
}

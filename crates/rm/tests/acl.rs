//! Who may move applications and reload the queues: the RM in-process on 127.0.0.1 with
//! ephemeral ports, driven over REST as different users.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_rm::{RmArgs, RunningRm};

/// `restricted` admits only bob; `open` everyone; carol administers `open`. Nobody may submit
/// or administer through root, so the leaves' ACLs decide.
const ALLOCATIONS: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps> </aclAdministerApps>
    <queue name="open"><aclSubmitApps>*</aclSubmitApps><aclAdministerApps>carol</aclAdministerApps></queue>
    <queue name="other"><aclSubmitApps>*</aclSubmitApps></queue>
    <queue name="restricted"><aclSubmitApps>bob</aclSubmitApps></queue>
  </queue>
</allocations>"#;

fn start(dir: &Path, admin_acl: Option<&str>) -> (tokio::runtime::Runtime, RunningRm) {
    let alloc = dir.join("fair-scheduler.xml");
    std::fs::write(&alloc, ALLOCATIONS).unwrap();
    let config = dir.join("rm.toml");
    let props = admin_acl.map_or(String::new(), |a| format!("\"yarn.admin.acl\" = \"{a}\"\n"));
    std::fs::write(&config, format!("[properties]\n{props}")).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
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
    let rm = rt.block_on(weft_rm::start(args)).unwrap();
    (rt, rm)
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
        ("PUT", Some(b)) => agent.put(&url).send_json(b),
        ("PUT", None) => agent.put(&url).send_empty(),
        _ => panic!("unsupported"),
    };
    let mut r = result.expect("the RM answers");
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Submits as `user` to `queue`; returns the app id.
fn submit(rm: &RunningRm, user: &str, queue: &str) -> String {
    let (status, v) = call(rm, "POST", "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200, "{v}");
    let id = v["application-id"].as_str().unwrap().to_string();
    let body = json!({
        "application-id": id,
        "queue": queue,
        "am-container-spec": {"commands": {"command": "sleep 100"}},
        "resource": {"memory": 1024, "vCores": 1},
    });
    let path = format!("/ws/v1/cluster/apps?user.name={user}");
    let (status, v) = call(rm, "POST", &path, Some(body));
    assert_eq!(status, 202, "{v}");
    id
}

fn move_as(rm: &RunningRm, user: Option<&str>, id: &str, queue: &str) -> (u16, Value) {
    let who = user.map_or(String::new(), |u| format!("?user.name={u}"));
    let path = format!("/ws/v1/cluster/apps/{id}/queue{who}");
    call(rm, "PUT", &path, Some(json!({ "queue": queue })))
}

fn queue_of(rm: &RunningRm, id: &str) -> Value {
    call(rm, "GET", &format!("/ws/v1/cluster/apps/{id}"), None).1["app"]["queue"].clone()
}

fn forbidden(reply: (u16, Value), says: &str) {
    let (status, v) = reply;
    assert_eq!(status, 403, "{v}");
    assert_eq!(
        v["RemoteException"]["exception"], "ForbiddenException",
        "{v}"
    );
    let message = v["RemoteException"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{message}");
}

#[test]
fn moves_need_the_right_to_modify_and_the_owners_submit_acl() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, rm) = start(dir.path(), Some("admin"));
    let app = submit(&rm, "alice", "open");

    // Strangers, including the anonymous web user, may not move alice's app.
    forbidden(move_as(&rm, None, &app, "other"), "user dr.who cannot move");
    forbidden(
        move_as(&rm, Some("mallory"), &app, "other"),
        "not its owner",
    );
    assert_eq!(queue_of(&rm, &app), "root.open");
    // Not even the owner may move it where she may not submit.
    forbidden(
        move_as(&rm, Some("alice"), &app, "restricted"),
        "its owner alice may not submit",
    );
    // Nor an administrator.
    forbidden(
        move_as(&rm, Some("admin"), &app, "root.restricted"),
        "may not submit",
    );
    assert_eq!(queue_of(&rm, &app), "root.open");
    // The owner, the queue's administrator and the cluster administrator may.
    assert_eq!(move_as(&rm, Some("alice"), &app, "other").0, 200);
    assert_eq!(queue_of(&rm, &app), "root.other");
    assert_eq!(move_as(&rm, Some("admin"), &app, "open").0, 200);
    assert_eq!(move_as(&rm, Some("carol"), &app, "other").0, 200);
    assert_eq!(queue_of(&rm, &app), "root.other");
    // carol administers only `open`: from `other` the app is out of her reach.
    forbidden(move_as(&rm, Some("carol"), &app, "open"), "cannot move");
}

#[test]
fn refreshing_the_queues_needs_the_admin_acl() {
    let dir = tempfile::tempdir().unwrap();
    let (_rt, rm) = start(dir.path(), Some("admin"));
    let path = "/ws/v1/cluster/admin/refresh-queues";
    forbidden(call(&rm, "PUT", path, None), "not in yarn.admin.acl");
    forbidden(
        call(&rm, "PUT", &format!("{path}?user.name=alice"), None),
        "user alice",
    );
    let (status, v) = call(&rm, "PUT", &format!("{path}?user.name=admin"), None);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["refreshQueues"]["reloaded"], true);

    // Hadoop's default yarn.admin.acl is `*`: everyone administers the cluster.
    let dir = tempfile::tempdir().unwrap();
    let (_rt, rm) = start(dir.path(), None);
    assert_eq!(call(&rm, "PUT", path, None).0, 200);
}

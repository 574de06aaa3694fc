//! The RM in-process on 127.0.0.1 with ephemeral ports: REST error paths change nothing, state
//! survives a restart, the allocation file reloads, and a fake NM and AM run an app end to end.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use support::FakeNm;
use tokio::runtime::Runtime;
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::container_management_server::ContainerManagementServer;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::*;
use weft_rm::{RmArgs, RunningRm};

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn args(dir: &Path) -> RmArgs {
    RmArgs {
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ready_file: Some(dir.join("ready.json")),
        allocations_poll_ms: Some(50),
        ..RmArgs::default()
    }
}

struct Http {
    agent: ureq::Agent,
    base: String,
}

impl Http {
    fn new(rm: &RunningRm) -> Http {
        Http {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(10)))
                .build()
                .into(),
            base: format!("http://{}", rm.web),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value, Option<String>) {
        let url = format!("{}{path}", self.base);
        let result = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("POST", Some(b)) => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(b),
            ("POST", None) => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send_empty(),
            ("PUT", Some(b)) => self
                .agent
                .put(&url)
                .header("Content-Type", "application/json")
                .send(b),
            _ => panic!("unsupported"),
        };
        let mut r = result.expect("the RM answers");
        let location = r
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = r.body_mut().read_to_string().unwrap_or_default();
        let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (r.status().as_u16(), json, location)
    }

    fn new_app(&self) -> String {
        let (status, body, _) = self.call("POST", "/ws/v1/cluster/apps/new-application", None);
        assert_eq!(status, 200, "{body}");
        body["application-id"].as_str().unwrap().to_string()
    }

    fn submission(id: &str, queue: &str) -> String {
        json!({
            "application-id": id,
            "application-name": "t",
            "queue": queue,
            "am-container-spec": {"commands": {"command": "sleep 100"}},
            "resource": {"memory": 1024, "vCores": 1},
        })
        .to_string()
    }
}

/// POSTs `len` bytes of JSON-looking padding, ignoring a refusal mid-send; (status, JSON body).
fn oversized_post(addr: &str, path: &str, len: usize) -> (u16, Value) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let _ = s.write_all(&vec![b' '; len]);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    )
}

fn remote_exception(body: &Value) -> (&str, &str) {
    let e = &body["RemoteException"];
    (
        e["exception"].as_str().unwrap_or(""),
        e["message"].as_str().unwrap_or(""),
    )
}

#[test]
fn rest_error_paths_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let alloc = dir.path().join("fair-scheduler.xml");
    std::fs::write(
        &alloc,
        r#"<allocations><queue name="ok"/>
           <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
           </allocations>"#,
    )
    .unwrap();
    let mut a = args(dir.path());
    a.allocations = Some(alloc);
    let rt = runtime();
    let rm = rt.block_on(weft_rm::start(a)).unwrap();
    let ready: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("ready.json")).unwrap())
            .unwrap();
    assert_eq!(ready["web"], rm.web.to_string());
    let http = Http::new(&rm);

    let (status, _, _) = http.call("GET", "/cluster", None);
    assert_eq!(status, 200);
    let (status, body, _) = http.call("GET", "/ws/v1/cluster/info", None);
    assert_eq!(status, 200);
    assert_eq!(body["clusterInfo"]["state"], "STARTED");

    let (status, body, _) = http.call("GET", "/ws/v1/cluster/apps/application_1_0042", None);
    assert_eq!(status, 404);
    assert_eq!(remote_exception(&body).0, "NotFoundException");
    assert!(remote_exception(&body).1.contains("application_1_0042"));
    let (status, body, _) = http.call("GET", "/ws/v1/cluster/apps/nonsense", None);
    assert_eq!(
        (status, remote_exception(&body).0),
        (400, "BadRequestException")
    );

    let id = http.new_app();
    let (status, body, _) = http.call("POST", "/ws/v1/cluster/apps", Some("{not json"));
    assert_eq!(status, 400, "{body}");
    assert!(remote_exception(&body).1.contains("malformed JSON"));
    // Hadoop's Fair Scheduler takes a submission its placement rules (or a queue ACL) refuse
    // and fails the app with the reason.
    let refused = http.new_app();
    let (status, body, _) = http.call(
        "POST",
        "/ws/v1/cluster/apps",
        Some(&Http::submission(&refused, "root.forbidden")),
    );
    assert_eq!(status, 202, "{body}");
    let (_, body, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{refused}"), None);
    assert_eq!(
        (&body["app"]["state"], &body["app"]["finalStatus"]),
        (&json!("FAILED"), &json!("FAILED")),
        "{body}"
    );
    assert!(
        body["app"]["diagnostics"]
            .as_str()
            .is_some_and(|d| d.contains("rejected by the scheduler (placement_rejected)")),
        "{body}"
    );
    // A body over the size limit gets a RemoteException like every other error (the RM may
    // answer before the body is sent, so the request goes over a raw socket).
    let (status, body) = oversized_post(&rm.web.to_string(), "/ws/v1/cluster/apps", 3 << 20);
    assert_eq!(status, 413, "{body}");
    assert_eq!(
        remote_exception(&body).0,
        "WebApplicationException",
        "{body}"
    );
    assert!(!remote_exception(&body).1.is_empty(), "{body}");
    let big = json!({"application-id": id, "am-container-spec": {"commands": {"command": "x"}}, "resource": {"memory": 1 << 30, "vCores": 1}});
    let (status, body, _) = http.call("POST", "/ws/v1/cluster/apps", Some(&big.to_string()));
    assert_eq!(status, 400, "{body}");
    assert!(
        remote_exception(&body).1.contains("maximum allocation"),
        "{body}"
    );
    let (status, _, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(status, 404, "invalid submissions leave no app");
    let (_, body, _) = http.call("GET", "/ws/v1/cluster/apps", None);
    assert_eq!(
        body["apps"]["app"].as_array().map(Vec::len),
        Some(1),
        "{body}"
    );

    // The same id still works for a good submission.
    let (status, _, location) = http.call(
        "POST",
        "/ws/v1/cluster/apps",
        Some(&Http::submission(&id, "root.ok")),
    );
    assert_eq!(status, 202);
    assert!(location
        .unwrap()
        .ends_with(&format!("/ws/v1/cluster/apps/{id}")));
    let (status, body, _) = http.call(
        "POST",
        "/ws/v1/cluster/apps",
        Some(&Http::submission(&id, "root.ok")),
    );
    assert_eq!(status, 400, "twice: {body}");

    let state = format!("/ws/v1/cluster/apps/{id}/state");
    let (status, body, _) = http.call("PUT", &state, Some(r#"{"state":"RUNNING"}"#));
    assert_eq!(status, 400);
    assert!(remote_exception(&body).1.contains("Only 'KILLED'"));
    let (status, _, _) = http.call("PUT", &state, Some("{"));
    assert_eq!(status, 400);
    let queue = format!("/ws/v1/cluster/apps/{id}/queue");
    let (status, _, _) = http.call("PUT", &queue, Some(r#"{"queue":"root"}"#));
    assert_eq!(status, 400);
    let (_, body, _) = http.call("GET", &queue, None);
    assert_eq!(body, json!({"queue": "root.ok"}));
    let (_, body, _) = http.call("GET", &state, None);
    assert_eq!(body, json!({"state": "ACCEPTED"}));

    let (status, body, _) = http.call("PUT", &state, Some(r#"{"state":"KILLED"}"#));
    assert_eq!((status, body), (200, json!({"state": "KILLED"})));
    let (_, body, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(body["app"]["state"], "KILLED");
    assert_eq!(body["app"]["finalStatus"], "KILLED");
    let (status, _, _) = http.call("PUT", &queue, Some(r#"{"queue":"root.ok"}"#));
    assert_eq!(status, 400, "a finished app cannot move");
    let (status, body, _) = http.call("GET", "/ws/v1/no/such/path", None);
    assert_eq!(
        (status, remote_exception(&body).0),
        (404, "NotFoundException")
    );
    rt.block_on(rm.stop());
}

#[test]
fn apps_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let rm = rt.block_on(weft_rm::start(args(dir.path()))).unwrap();
    let http = Http::new(&rm);
    let id = http.new_app();
    let (status, _, _) = http.call(
        "POST",
        "/ws/v1/cluster/apps",
        Some(&Http::submission(&id, "root.default")),
    );
    assert_eq!(status, 202);
    let (_, before, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    rt.block_on(rm.stop());

    let rm = rt.block_on(weft_rm::start(args(dir.path()))).unwrap();
    let http = Http::new(&rm);
    let (status, after, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(status, 200, "{after}");
    for key in [
        "id",
        "queue",
        "state",
        "user",
        "name",
        "clusterId",
        "startedTime",
    ] {
        assert_eq!(after["app"][key], before["app"][key], "{key}");
    }
    let next = http.new_app();
    let seq = |id: &str| id.rsplit('_').next().and_then(|s| s.parse::<u64>().ok());
    assert!(
        seq(&next) > seq(&id),
        "{next}: ids continue above {id} after a restart (from the stored ceiling)"
    );
    assert_eq!(
        next.split('_').nth(1),
        id.split('_').nth(1),
        "same cluster timestamp"
    );
    rt.block_on(rm.stop());
}

#[test]
fn allocation_file_reloads_and_bad_files_keep_the_old_queues() {
    let dir = tempfile::tempdir().unwrap();
    let alloc = dir.path().join("fair-scheduler.xml");
    std::fs::write(&alloc, r#"<allocations><queue name="a"/></allocations>"#).unwrap();
    let mut a = args(dir.path());
    a.allocations = Some(alloc.clone());
    let rt = runtime();
    let rm = rt.block_on(weft_rm::start(a)).unwrap();
    let http = Http::new(&rm);
    let id = http.new_app();
    assert_eq!(
        http.call(
            "POST",
            "/ws/v1/cluster/apps",
            Some(&Http::submission(&id, "root.a"))
        )
        .0,
        202
    );
    let queue = format!("/ws/v1/cluster/apps/{id}/queue");

    std::fs::write(&alloc, "<allocations><queue name=").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(http.call("GET", &queue, None).1, json!({"queue": "root.a"}));

    std::fs::write(&alloc, r#"<allocations><queue name="a"/><queue name="b"><maxRunningApps>5</maxRunningApps></queue></allocations>"#).unwrap();
    let mut tries = 0; // bounded: at most 500 polls
    loop {
        let (status, body, _) = http.call("PUT", &queue, Some(r#"{"queue":"root.b"}"#));
        if status == 200 {
            assert_eq!(body, json!({"queue": "root.b"}));
            break;
        }
        assert!(
            {
                tries += 1;
                tries < 500
            },
            "the new queue never appeared: {body}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    rt.block_on(rm.stop());
}

#[test]
fn an_app_runs_end_to_end_through_the_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let rm = rt.block_on(weft_rm::start(args(dir.path()))).unwrap();
    let http = Http::new(&rm);
    let nm = FakeNm::default();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let nm_addr = listener.local_addr().unwrap();
    let service = nm.clone();
    rt.spawn(async move {
        tonic::transport::Server::builder()
            .add_service(ContainerManagementServer::new(service))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
            .await
    });
    let node_id = format!("nm-host:{}", nm_addr.port());
    let tracker = format!("http://{}", rm.tracker);
    let mut rt_client = rt
        .block_on(ResourceTrackerClient::connect(tracker))
        .unwrap();
    // The registration secret the RM returns; heartbeats must carry it.
    let secret = std::cell::RefCell::new(String::new());
    let heartbeat = |c: &mut ResourceTrackerClient<_>, statuses: Vec<ContainerStatus>| {
        rt.block_on(c.node_heartbeat(NodeHeartbeatRequest {
            node_id: node_id.clone(),
            node_secret: secret.borrow().clone(),
            container_statuses: statuses,
            node_health_status: Some(NodeHealthStatus {
                is_node_healthy: true,
                ..Default::default()
            }),
            ..Default::default()
        }))
        .unwrap()
        .into_inner()
    };
    assert_eq!(
        heartbeat(&mut rt_client, Vec::new()).node_action,
        NodeAction::Resync as i32
    );
    let registered = rt
        .block_on(rt_client.register_node_manager(RegisterNodeManagerRequest {
            node_id: node_id.clone(),
            address: nm_addr.to_string(),
            total_capability: Some(Resource::new(8192, 8)),
            ..Default::default()
        }))
        .unwrap()
        .into_inner();
    assert!(!registered.node_secret.is_empty());
    *secret.borrow_mut() = registered.node_secret;
    let (_, nodes, _) = http.call("GET", "/ws/v1/cluster/nodes", None);
    assert_eq!(nodes["nodes"]["node"][0]["id"], node_id.as_str());
    assert_eq!(nodes["nodes"]["node"][0]["state"], "RUNNING");
    assert_eq!(
        nodes["nodes"]["node"][0]["totalResource"],
        json!({"memory": 8192, "vCores": 8})
    );
    let (status, _, _) = http.call("GET", "/ws/v1/cluster/nodes/nope:1", None);
    assert_eq!(status, 404);
    // A malformed heartbeat is refused.
    let bad = rt.block_on(rt_client.node_heartbeat(NodeHeartbeatRequest {
        node_id: node_id.clone(),
        node_secret: secret.borrow().clone(),
        container_statuses: vec![ContainerStatus {
            container_id: "bogus".into(),
            ..Default::default()
        }],
        ..Default::default()
    }));
    assert_eq!(bad.unwrap_err().code(), tonic::Code::InvalidArgument);

    let id = http.new_app();
    assert_eq!(
        http.call(
            "POST",
            "/ws/v1/cluster/apps",
            Some(&Http::submission(&id, "root.default"))
        )
        .0,
        202
    );
    let mut tries = 0; // bounded: at most 500 polls
    let launch = loop {
        heartbeat(&mut rt_client, Vec::new());
        if let Some(l) = nm.started.lock().unwrap().first().cloned() {
            break l;
        }
        assert!(
            {
                tries += 1;
                tries < 500
            },
            "the AM was never launched"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let env = launch.container_launch_context.unwrap().environment;
    assert_eq!(env["CONTAINER_ID"], launch.container_id);
    assert_eq!(env["WEFT_RM_SCHEDULER_ADDRESS"], rm.scheduler.to_string());
    let creds = AmCredentials {
        attempt_id: env["APPLICATION_ATTEMPT_ID"].clone(),
        token: env["WEFT_AM_TOKEN"].clone(),
    };
    let mut am = rt
        .block_on(ApplicationMasterProtocolClient::connect(format!(
            "http://{}",
            rm.scheduler
        )))
        .unwrap();
    let forged = AmCredentials {
        token: "forged".into(),
        ..creds.clone()
    };
    let denied = rt.block_on(
        am.register_application_master(
            forged
                .request(RegisterApplicationMasterRequest::default())
                .unwrap(),
        ),
    );
    assert_eq!(denied.unwrap_err().code(), tonic::Code::PermissionDenied);
    let unauth = rt.block_on(am.allocate(AllocateRequest::default()));
    assert_eq!(unauth.unwrap_err().code(), tonic::Code::PermissionDenied);
    rt.block_on(
        am.register_application_master(
            creds
                .request(RegisterApplicationMasterRequest {
                    host: "am".into(),
                    rpc_port: 1,
                    tracking_url: String::new(),
                })
                .unwrap(),
        ),
    )
    .unwrap();
    let (_, body, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(body["app"]["state"], "RUNNING");

    let ask = ResourceRequest {
        priority: 1,
        resource_name: "*".into(),
        capability: Some(Resource::new(1024, 1)),
        num_containers: 2,
        relax_locality: Some(true),
        ..Default::default()
    };
    let mut allocated = Vec::new();
    let mut first = true;
    let mut tries = 0; // bounded: at most 500 polls
    while allocated.len() < 2 {
        let req = AllocateRequest {
            ask: if first { vec![ask.clone()] } else { Vec::new() },
            ..Default::default()
        };
        first = false;
        let resp = rt
            .block_on(am.allocate(creds.request(req).unwrap()))
            .unwrap()
            .into_inner();
        allocated.extend(resp.allocated_containers);
        heartbeat(&mut rt_client, Vec::new());
        assert!(
            {
                tries += 1;
                tries < 500
            },
            "containers never came"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(allocated
        .iter()
        .all(|c| c.node_id == node_id && c.node_address == nm_addr.to_string()));
    // One container ends on the node; the AM hears of it, and the NM is told it may forget it.
    let ack = heartbeat(
        &mut rt_client,
        vec![ContainerStatus {
            container_id: allocated[0].container_id.clone(),
            state: ContainerState::Complete as i32,
            exit_status: 7,
            diagnostics: "exit 7".into(),
            capability: None,
        }],
    );
    assert_eq!(
        ack.containers_to_be_removed_from_nm,
        vec![allocated[0].container_id.clone()]
    );
    let resp = rt
        .block_on(am.allocate(creds.request(AllocateRequest::default()).unwrap()))
        .unwrap()
        .into_inner();
    assert_eq!(resp.completed_container_statuses.len(), 1);
    assert_eq!(resp.completed_container_statuses[0].exit_status, 7);
    rt.block_on(
        am.finish_application_master(
            creds
                .request(FinishApplicationMasterRequest {
                    final_application_status: FinalApplicationStatus::Succeeded as i32,
                    diagnostics: "done".into(),
                    tracking_url: String::new(),
                })
                .unwrap(),
        ),
    )
    .unwrap();
    let (_, body, _) = http.call("GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(body["app"]["state"], "FINISHED");
    assert_eq!(body["app"]["finalStatus"], "SUCCEEDED");
    let reply = heartbeat(&mut rt_client, Vec::new());
    assert_eq!(
        reply.containers_to_cleanup,
        vec![allocated[1].container_id.clone()]
    );
    rt.block_on(rm.stop());
}

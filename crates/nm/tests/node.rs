//! The NodeManager in-process against a fake resource tracker: register, heartbeat,
//! container management, completion reporting and acknowledgement, RESYNC, RM-driven
//! cleanup and shutdown.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tonic::transport::server::TcpIncoming;
use tonic::{Code, Request, Response, Status};
use weft_nm::{CgroupMode, NmConfig, NodeManager};
use weft_proto::exit_status;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::resource_tracker_server::{ResourceTracker, ResourceTrackerServer};
use weft_proto::v1::{
    ContainerLaunchContext, ContainerState, ContainerStatus, GetContainerStatusesRequest,
    NodeAction, NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeManagerRequest,
    RegisterNodeManagerResponse, Resource, StartContainerRequest, StartContainersRequest,
    StopContainersRequest, UnRegisterNodeManagerRequest, UnRegisterNodeManagerResponse,
};

const APP: &str = "application_1700000000000_0001";

#[derive(Debug)]
enum Event {
    Registered(RegisterNodeManagerRequest),
    Heartbeat(NodeHeartbeatRequest),
    Unregistered(String),
}

/// What the fake RM answers next.
#[derive(Debug, Default)]
struct Script {
    resync_next: bool,
    acknowledge: Vec<String>,
    cleanup_next: Vec<String>,
}

#[derive(Clone)]
struct FakeTracker {
    events: mpsc::UnboundedSender<Event>,
    script: Arc<Mutex<Script>>,
}

#[tonic::async_trait]
impl ResourceTracker for FakeTracker {
    async fn register_node_manager(
        &self,
        request: Request<RegisterNodeManagerRequest>,
    ) -> Result<Response<RegisterNodeManagerResponse>, Status> {
        let _ = self.events.send(Event::Registered(request.into_inner()));
        Ok(Response::new(RegisterNodeManagerResponse {
            node_action: NodeAction::Normal as i32,
            rm_identifier: 1_700_000_000_000,
            heartbeat_interval_ms: 100,
            ..Default::default()
        }))
    }

    async fn node_heartbeat(
        &self,
        request: Request<NodeHeartbeatRequest>,
    ) -> Result<Response<NodeHeartbeatResponse>, Status> {
        let req = request.into_inner();
        let response_id = req.response_id + 1;
        let _ = self.events.send(Event::Heartbeat(req));
        let mut script = self.script.lock().unwrap();
        let action = if std::mem::take(&mut script.resync_next) {
            NodeAction::Resync
        } else {
            NodeAction::Normal
        };
        Ok(Response::new(NodeHeartbeatResponse {
            response_id,
            node_action: action as i32,
            containers_to_cleanup: std::mem::take(&mut script.cleanup_next),
            containers_to_be_removed_from_nm: script.acknowledge.clone(),
            next_heartbeat_interval_ms: 100,
            ..Default::default()
        }))
    }

    async fn un_register_node_manager(
        &self,
        request: Request<UnRegisterNodeManagerRequest>,
    ) -> Result<Response<UnRegisterNodeManagerResponse>, Status> {
        let _ = self
            .events
            .send(Event::Unregistered(request.into_inner().node_id));
        Ok(Response::new(UnRegisterNodeManagerResponse {}))
    }
}

async fn fake_tracker() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<Event>,
    Arc<Mutex<Script>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    let script = Arc::new(Mutex::new(Script::default()));
    let svc = FakeTracker {
        events: tx,
        script: Arc::clone(&script),
    };
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(ResourceTrackerServer::new(svc))
            .serve_with_incoming(TcpIncoming::from(listener)),
    );
    (addr, rx, script)
}

/// The next event matching `pick`, within a bounded time.
async fn next_matching<T>(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    what: &str,
    mut pick: impl FnMut(Event) -> Option<T>,
) -> T {
    let found = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(event) = rx.recv().await {
            if let Some(t) = pick(event) {
                return t;
            }
        }
        panic!("fake tracker stopped");
    })
    .await;
    found.unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

fn status_of<'a>(statuses: &'a [ContainerStatus], id: &str) -> Option<&'a ContainerStatus> {
    statuses.iter().find(|s| s.container_id == id)
}

async fn heartbeat_with_completed(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    id: &str,
) -> ContainerStatus {
    next_matching(rx, &format!("COMPLETE status of {id}"), |e| match e {
        Event::Heartbeat(hb) => status_of(&hb.container_statuses, id)
            .filter(|s| s.state == ContainerState::Complete as i32)
            .cloned(),
        _ => None,
    })
    .await
}

fn start_request(id: &str, command: &str) -> StartContainerRequest {
    StartContainerRequest {
        container_id: id.into(),
        application_id: APP.into(),
        user: "alice".into(),
        resource: Some(Resource::new(128, 1)),
        container_launch_context: Some(ContainerLaunchContext {
            command: vec![command.into()],
            ..Default::default()
        }),
        container_token: String::new(),
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|t| {
        !matches!(
            t.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next()),
            Some("Z") | Some("X")
        )
    })
}

async fn read_pid(path: &Path) -> i32 {
    for _ in 0..400 {
        if let Ok(t) = std::fs::read_to_string(path) {
            if let Ok(pid) = t.trim().parse() {
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never written", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_heartbeat_start_complete_resync_and_shutdown() {
    let (rm, mut events, script) = fake_tracker().await;
    let dir = tempfile::tempdir().unwrap();
    let nm = NodeManager::start(NmConfig {
        rm_tracker: rm.to_string(),
        bind: "127.0.0.1:0".parse().unwrap(),
        hostname: "testhost".into(),
        memory_mb: 4096,
        vcores: 4,
        rack: "/rack-a".into(),
        local_dir: dir.path().join("local"),
        log_dir: dir.path().join("logs"),
        cgroups: CgroupMode::disabled("test"),
        kill_grace: Duration::from_millis(250),
        monitor_interval: Duration::from_millis(100),
        web_bind: Some("127.0.0.1:0".parse().unwrap()),
    })
    .await
    .unwrap();

    // Registration carries the node's identity and capacity.
    let reg = next_matching(&mut events, "registration", |e| match e {
        Event::Registered(r) => Some(r),
        _ => None,
    })
    .await;
    assert_eq!(reg.node_id, format!("testhost:{}", nm.address().port()));
    assert_eq!(reg.node_id, nm.node_id());
    assert_eq!(reg.address, nm.address().to_string());
    let web = nm.web_address().expect("web service");
    assert!(
        web.starts_with("127.0.0.1:") && !web.ends_with(":0"),
        "{web}"
    );
    assert_eq!(reg.http_address, web);
    assert_eq!(reg.total_capability, Some(Resource::new(4096, 4)));
    assert_eq!(reg.rack, "/rack-a");
    assert!(reg.container_statuses.is_empty());

    let mut client = ContainerManagementClient::connect(format!("http://{}", nm.address()))
        .await
        .unwrap();

    // Malformed as a whole: a clear error.
    let err = client
        .start_containers(StartContainersRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    // One good and one bad container in the same request.
    let c1 = "container_1700000000000_0001_01_000001";
    let mut bad = start_request("container_1700000000000_0001_01_000099", "true");
    bad.application_id = "application_1700000000000_0002".into();
    let reply = client
        .start_containers(StartContainersRequest {
            start_container_request: vec![start_request(c1, "echo hi > out.txt"), bad],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.succeeded_requests, vec![c1.to_string()]);
    assert_eq!(reply.failed_requests.len(), 1);
    assert!(reply.failed_requests[0]
        .exception
        .contains("does not match"));

    // Its completion arrives in a heartbeat and the file it wrote is there.
    let done = heartbeat_with_completed(&mut events, c1).await;
    assert_eq!(done.exit_status, 0);
    assert_eq!(done.capability, Some(Resource::new(128, 1)));
    let work = dir
        .path()
        .join(format!("local/usercache/alice/appcache/{APP}/{c1}"));
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "hi\n"
    );

    // Starting the same container again is refused; the refused one never ran.
    let again = client
        .start_containers(StartContainersRequest {
            start_container_request: vec![start_request(c1, "true")],
        })
        .await
        .unwrap()
        .into_inner();
    assert!(again.succeeded_requests.is_empty());
    let statuses = client
        .get_container_statuses(GetContainerStatusesRequest {
            container_id: vec![c1.into(), "container_1700000000000_0001_01_000099".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(statuses.status.len(), 1);
    assert_eq!(statuses.failed_requests.len(), 1);

    // Once the RM acknowledges it, it is no longer reported.
    script.lock().unwrap().acknowledge = vec![c1.into()];
    let mut quiet = 0;
    while quiet < 2 {
        let hb = next_matching(&mut events, "heartbeat", |e| match e {
            Event::Heartbeat(hb) => Some(hb),
            _ => None,
        })
        .await;
        if status_of(&hb.container_statuses, c1).is_none() {
            quiet += 1;
        } else {
            assert_eq!(quiet, 0, "an acknowledged completion was reported again");
        }
    }

    // A running container survives a RESYNC and is reported at re-registration.
    let c2 = "container_1700000000000_0001_01_000002";
    let reply = client
        .start_containers(StartContainersRequest {
            start_container_request: vec![start_request(c2, "echo $$ > pid; sleep 300")],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.succeeded_requests, vec![c2.to_string()]);
    let c2_pid = read_pid(
        &dir.path()
            .join(format!("local/usercache/alice/appcache/{APP}/{c2}/pid")),
    )
    .await;
    script.lock().unwrap().resync_next = true;
    let rereg = next_matching(&mut events, "re-registration", |e| match e {
        Event::Registered(r) => Some(r),
        _ => None,
    })
    .await;
    let running: Vec<_> = rereg
        .container_statuses
        .iter()
        .filter(|s| s.container_state == ContainerState::Running as i32)
        .map(|s| s.container_id.clone())
        .collect();
    assert_eq!(running, vec![c2.to_string()]);
    assert_eq!(rereg.running_applications, vec![APP.to_string()]);
    assert!(alive(c2_pid));

    // The AM stops it (an unknown id beside it fails alone).
    let stop = client
        .stop_containers(StopContainersRequest {
            container_id: vec![c2.into(), "container_1700000000000_0001_01_000077".into()],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stop.succeeded_requests, vec![c2.to_string()]);
    assert_eq!(stop.failed_requests.len(), 1);
    let done = heartbeat_with_completed(&mut events, c2).await;
    assert_eq!(done.exit_status, exit_status::KILLED_BY_APPMASTER);
    assert!(!alive(c2_pid));

    // The RM asks for a container to be cleaned up.
    let c3 = "container_1700000000000_0001_01_000003";
    client
        .start_containers(StartContainersRequest {
            start_container_request: vec![start_request(c3, "sleep 300")],
        })
        .await
        .unwrap();
    script.lock().unwrap().cleanup_next = vec![c3.into()];
    let done = heartbeat_with_completed(&mut events, c3).await;
    assert_eq!(done.exit_status, exit_status::KILLED_BY_RESOURCEMANAGER);

    // Shutdown stops what still runs and unregisters.
    let c4 = "container_1700000000000_0001_01_000004";
    client
        .start_containers(StartContainersRequest {
            start_container_request: vec![start_request(
                c4,
                "echo $$ > pid; sleep 300 & sleep 300",
            )],
        })
        .await
        .unwrap();
    let c4_pid = read_pid(
        &dir.path()
            .join(format!("local/usercache/alice/appcache/{APP}/{c4}/pid")),
    )
    .await;
    let node_id = nm.node_id().to_string();
    tokio::time::timeout(Duration::from_secs(20), nm.shutdown())
        .await
        .unwrap();
    let gone = next_matching(&mut events, "unregistration", |e| match e {
        Event::Unregistered(id) => Some(id),
        _ => None,
    })
    .await;
    assert_eq!(gone, node_id);
    assert!(!alive(c4_pid), "container outlived the NodeManager");
}

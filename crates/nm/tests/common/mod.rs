//! What the NodeManager tests share: a fake resource tracker that hands out a master key, and
//! tokens signed with it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use weft_nm::{CgroupMode, NmConfig, NodeManager};
use weft_proto::auth::with_nm_token;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::resource_tracker_server::{ResourceTracker, ResourceTrackerServer};
use weft_proto::v1::MasterKey as WireKey;
use weft_proto::v1::{
    NodeAction, NodeHeartbeatRequest, NodeHeartbeatResponse, RegisterNodeManagerRequest,
    RegisterNodeManagerResponse, UnRegisterNodeManagerRequest, UnRegisterNodeManagerResponse,
};
use weft_proto::v1::{StartContainerRequest, StartContainersRequest};
use weft_tokens::{ContainerTokenIdentifier, MasterKey, NmTokenIdentifier};

pub(crate) const APP: &str = "application_1700000000000_0001";
pub(crate) const ATTEMPT: &str = "appattempt_1700000000000_0001_000001";

/// The key the fake RM hands out at registration.
pub(crate) fn key() -> MasterKey {
    MasterKey::derive(77, 0)
}

/// An NM token of `attempt` on `node`, signed with `key`.
pub(crate) fn nm_token_of(attempt: &str, node: &str, key: &MasterKey) -> String {
    NmTokenIdentifier {
        attempt: attempt.parse().unwrap(),
        node_id: node.into(),
        user: "alice".into(),
        key_id: 0,
    }
    .issue(key)
}

/// `message` with the test app's NM token for `node`.
pub(crate) fn as_am<T>(message: T, node: &str) -> Request<T> {
    with_nm_token(message, &nm_token_of(ATTEMPT, node, &key())).unwrap()
}

/// A container token for `id` on `node`: 128 MB, 1 vcore, for alice, valid for a minute.
pub(crate) fn container_token(id: &str, node: &str) -> String {
    ContainerTokenIdentifier {
        container: id.parse().unwrap(),
        node_id: node.into(),
        user: "alice".into(),
        memory_mb: 128,
        vcores: 1,
        expiry_ms: now_ms() + 60_000,
        key_id: 0,
    }
    .issue(&key())
}

/// The NM checks expiry against the wall clock, so the test's tokens must too.
#[allow(clippy::disallowed_methods)]
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[derive(Debug)]
pub(crate) enum Event {
    Registered(RegisterNodeManagerRequest),
    Heartbeat(NodeHeartbeatRequest),
    Unregistered(String),
}

/// What the fake RM answers next.
#[derive(Debug, Default)]
pub(crate) struct Script {
    pub(crate) resync_next: bool,
    pub(crate) acknowledge: Vec<String>,
    pub(crate) cleanup_next: Vec<String>,
    /// The next reply asks for every running container's status.
    pub(crate) send_all_next: bool,
}

#[derive(Clone)]
pub(crate) struct FakeTracker {
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
            container_token_master_key: Some(WireKey::from_key(&key())),
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
            send_all_statuses: std::mem::take(&mut script.send_all_next),
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

pub(crate) async fn fake_tracker() -> (
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
pub(crate) async fn next_matching<T>(
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

/// A NodeManager with a fake RM, once it holds the RM's key: (nm, client, events, temp dir).
pub(crate) async fn started_nm(
    web: bool,
) -> (
    NodeManager,
    ContainerManagementClient<tonic::transport::Channel>,
    mpsc::UnboundedReceiver<Event>,
    tempfile::TempDir,
) {
    let (rm, mut events, _script) = fake_tracker().await;
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
        web_bind: web.then(|| "127.0.0.1:0".parse().unwrap()),
        hadoop_bind: None,
        java_home: None,
    })
    .await
    .unwrap();
    next_matching(&mut events, "first heartbeat", |e| match e {
        Event::Heartbeat(_) => Some(()),
        _ => None,
    })
    .await;
    let client = ContainerManagementClient::connect(format!("http://{}", nm.address()))
        .await
        .unwrap();
    (nm, client, events, dir)
}

pub(crate) fn one(req: StartContainerRequest) -> StartContainersRequest {
    StartContainersRequest {
        start_container_request: vec![req],
    }
}

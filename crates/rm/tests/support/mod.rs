//! What the RM's integration tests share: a fake NodeManager's container manager, an RM
//! started in-process with every address ephemeral (with a node's connection to it in
//! `node_setup`, with a registered AM in `am_setup`), and REST posts.
#![allow(dead_code)] // each test binary uses its own part

pub(crate) mod am_setup;
pub(crate) mod node_setup;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::runtime::Runtime;
use weft_proto::v1::container_management_server::ContainerManagementServer;

use weft_proto::v1::container_management_server::ContainerManagement;
use weft_proto::v1::*;

/// A fake NM's container manager that records what it is asked to start.
#[derive(Clone, Default)]
pub(crate) struct FakeNm {
    pub(crate) started: Arc<Mutex<Vec<StartContainerRequest>>>,
}

#[tonic::async_trait]
impl ContainerManagement for FakeNm {
    async fn start_containers(
        &self,
        request: tonic::Request<StartContainersRequest>,
    ) -> Result<tonic::Response<StartContainersResponse>, tonic::Status> {
        let req = request.into_inner();
        let ids = req
            .start_container_request
            .iter()
            .map(|r| r.container_id.clone())
            .collect();
        self.started
            .lock()
            .unwrap()
            .extend(req.start_container_request);
        Ok(tonic::Response::new(StartContainersResponse {
            succeeded_requests: ids,
            failed_requests: Vec::new(),
        }))
    }
    async fn stop_containers(
        &self,
        request: tonic::Request<StopContainersRequest>,
    ) -> Result<tonic::Response<StopContainersResponse>, tonic::Status> {
        Ok(tonic::Response::new(StopContainersResponse {
            succeeded_requests: request.into_inner().container_id,
            failed_requests: Vec::new(),
        }))
    }
    async fn get_container_statuses(
        &self,
        _: tonic::Request<GetContainerStatusesRequest>,
    ) -> Result<tonic::Response<GetContainerStatusesResponse>, tonic::Status> {
        Ok(tonic::Response::new(GetContainerStatusesResponse::default()))
    }
}

/// A two-thread runtime for an in-process RM.
pub(crate) fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// An RM on 127.0.0.1 with ephemeral ports and its data in `dir`, assigning as many containers
/// per heartbeat as fit, answering Allocate with at most `cap` containers.
pub(crate) fn start_rm(rt: &Runtime, dir: &Path, cap: usize) -> weft_rm::RunningRm {
    start_rm_with(rt, dir, cap, "")
}

/// [`start_rm`] with the `properties` lines (`"key" = value`, each ending in a newline) added
/// to the configuration's [properties] table.
pub(crate) fn start_rm_with(
    rt: &Runtime,
    dir: &Path,
    cap: usize,
    properties: &str,
) -> weft_rm::RunningRm {
    let config = dir.join("rm.toml");
    std::fs::write(
        &config,
        format!(
            "[properties]\n\
             \"weft.resourcemanager.am.allocate.max-containers\" = {cap}\n\
             \"yarn.scheduler.fair.assignmultiple\" = true\n\
             \"yarn.scheduler.fair.dynamic.max.assign\" = false\n\
             \"yarn.scheduler.fair.max.assign\" = -1\n\
             \"yarn.scheduler.fair.update-interval-ms\" = 20\n\
             {properties}"
        ),
    )
    .unwrap();
    rt.block_on(weft_rm::start(weft_rm::RmArgs {
        config: Some(config),
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ..weft_rm::RmArgs::default()
    }))
    .unwrap()
}

/// A [`FakeNm`] serving Weft's container-management gRPC on 127.0.0.1, and its address.
pub(crate) fn serve_fake_nm(rt: &Runtime) -> (FakeNm, SocketAddr) {
    let nm = FakeNm::default();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let service = nm.clone();
    rt.spawn(async move {
        tonic::transport::Server::builder()
            .add_service(ContainerManagementServer::new(service))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
            .await
    });
    (nm, addr)
}

/// POSTs to the RM's REST API and returns the JSON answer (null when empty).
pub(crate) fn post(agent: &ureq::Agent, url: &str, body: Option<Value>) -> Value {
    let mut r = match body {
        Some(b) => agent.post(url).send_json(&b),
        None => agent.post(url).send_empty(),
    }
    .expect("the RM answers");
    assert!(r.status().is_success(), "{url}: {}", r.status());
    let text = r.body_mut().read_to_string().unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A REST agent with a 10 s limit per call.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

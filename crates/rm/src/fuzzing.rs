//! An in-process RM for fuzzing its request decoding (`crates/fuzz`): the REST and web routers,
//! the gRPC services and the Hadoop IPC client protocol over a real driver and core with an
//! in-memory store, called directly without sockets. Not part of the daemon's interface.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use prost::Message as _;
use tokio::runtime::Runtime;
use tokio::sync::watch;
use tonic::metadata::MetadataValue;
use tower_service::Service as _;
use weft_proto::auth::{AM_TOKEN_METADATA, ATTEMPT_ID_METADATA};
use weft_proto::v1::application_master_protocol_server::ApplicationMasterProtocol;
use weft_proto::v1::resource_tracker_server::ResourceTracker;
use weft_proto::v1::*;
use weft_rm_core::{RmConfig, RmCore};
use weft_sched::SchedulerConfig;
use weft_store::MemoryStore;
use weft_types::{ResourceTypes, Time};

use crate::{am_service, driver, rest, tracker, web};

/// Which gRPC request a fuzz input is decoded as.
#[derive(Clone, Copy, Debug)]
pub enum GrpcRequest {
    /// `RegisterNodeManager`.
    RegisterNode,
    /// `NodeHeartbeat`.
    NodeHeartbeat,
    /// `UnRegisterNodeManager`.
    UnregisterNode,
    /// `RegisterApplicationMaster` (with syntactically valid AM credentials).
    RegisterAm,
    /// `Allocate` (with syntactically valid AM credentials).
    Allocate,
    /// `FinishApplicationMaster` (with syntactically valid AM credentials).
    FinishAm,
}

impl GrpcRequest {
    /// Every kind, for choosing one from a fuzz input's first byte.
    pub const ALL: [GrpcRequest; 6] = [
        GrpcRequest::RegisterNode,
        GrpcRequest::NodeHeartbeat,
        GrpcRequest::UnregisterNode,
        GrpcRequest::RegisterAm,
        GrpcRequest::Allocate,
        GrpcRequest::FinishAm,
    ];
}

/// A running in-process RM; dropping it stops the driver.
pub struct Harness {
    runtime: Runtime,
    router: axum::Router,
    tracker: tracker::Tracker,
    am: am_service::AmService,
    hadoop_client: crate::hadoop::ClientProtocol,
    stop: watch::Sender<bool>,
}

impl Harness {
    /// An RM with the default scheduler configuration and an in-memory store.
    pub fn new() -> std::io::Result<Harness> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let types = ResourceTypes::default();
        let core = RmCore::new(RmConfig::new(SchedulerConfig::default()), 1, Time(1));
        let (driver, driver_loop, _) = driver::new(
            core,
            Arc::new(MemoryStore::new()),
            Duration::from_millis(20),
            types.clone(),
            Default::default(),
        );
        let (stop, stop_rx) = watch::channel(false);
        runtime.spawn(driver_loop.run(stop_rx));
        let state = rest::Rest {
            driver: driver.clone(),
            cluster_ts: 1,
            started_on: 1,
            refresher: Default::default(),
        };
        let router = rest::router(state.clone()).merge(web::router(state));
        Ok(Harness {
            runtime,
            router,
            tracker: tracker::Tracker {
                driver: driver.clone(),
                types: types.clone(),
                heartbeat_interval_ms: 1000,
                rm_identifier: 1,
                deferred_node_updates: true,
                framed_transport: true,
            },
            hadoop_client: crate::hadoop::ClientProtocol {
                driver: driver.clone(),
                web: "127.0.0.1:8088".to_string(),
            },
            am: am_service::AmService {
                driver,
                types,
                rm_identifier: 1,
                allocate_stream: true,
                framed_transport: true,
            },
            stop,
        })
    }

    /// Sends one HTTP request through the routers; returns the status code, or `None` when the
    /// request could not even be built (e.g. a path that is not a URI).
    pub fn http(&mut self, method: &str, path_and_query: &str, body: &[u8]) -> Option<u16> {
        let request = Request::builder()
            .method(method)
            .uri(path_and_query)
            .header("content-type", "application/json")
            .body(Body::from(body.to_vec()))
            .ok()?;
        let future = self.router.call(request);
        let response = self.runtime.block_on(future).ok()?;
        let status = response.status().as_u16();
        // Reading the body runs the rest of the handler's rendering.
        let _ = self
            .runtime
            .block_on(axum::body::to_bytes(response.into_body(), 64 << 20));
        Some(status)
    }

    /// Decodes `bytes` as the given gRPC request and, if it decodes, hands it to the service.
    /// Returns whether it decoded.
    pub fn grpc(&mut self, kind: GrpcRequest, bytes: &[u8]) -> bool {
        fn with_am_credentials<T>(message: T) -> tonic::Request<T> {
            let mut request = tonic::Request::new(message);
            let metadata = request.metadata_mut();
            metadata.insert(
                ATTEMPT_ID_METADATA,
                MetadataValue::from_static("appattempt_1_0001_000001"),
            );
            metadata.insert(AM_TOKEN_METADATA, MetadataValue::from_static("not-a-token"));
            request
        }
        let (tracker, am) = (&self.tracker, &self.am);
        match kind {
            GrpcRequest::RegisterNode => match RegisterNodeManagerRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self
                        .runtime
                        .block_on(tracker.register_node_manager(tonic::Request::new(m)));
                    true
                }
                Err(_) => false,
            },
            GrpcRequest::NodeHeartbeat => match NodeHeartbeatRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self
                        .runtime
                        .block_on(tracker.node_heartbeat(tonic::Request::new(m)));
                    true
                }
                Err(_) => false,
            },
            GrpcRequest::UnregisterNode => match UnRegisterNodeManagerRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self
                        .runtime
                        .block_on(tracker.un_register_node_manager(tonic::Request::new(m)));
                    true
                }
                Err(_) => false,
            },
            GrpcRequest::RegisterAm => match RegisterApplicationMasterRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self
                        .runtime
                        .block_on(am.register_application_master(with_am_credentials(m)));
                    true
                }
                Err(_) => false,
            },
            GrpcRequest::Allocate => match AllocateRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self.runtime.block_on(am.allocate(with_am_credentials(m)));
                    true
                }
                Err(_) => false,
            },
            GrpcRequest::FinishAm => match FinishApplicationMasterRequest::decode(bytes) {
                Ok(m) => {
                    let _ = self
                        .runtime
                        .block_on(am.finish_application_master(with_am_credentials(m)));
                    true
                }
                Err(_) => false,
            },
        }
    }
}

impl Harness {
    /// Runs one ApplicationClientProtocol call (Hadoop IPC) as user `fuzz`: `request` is the
    /// encoded request message of `method`. Returns whether it answered without an exception.
    pub fn hadoop_client(&mut self, method: &str, request: &[u8]) -> bool {
        use weft_hadoop_ipc::Protocol as _;
        let caller = weft_hadoop_ipc::Caller {
            user: "fuzz".to_string(),
            real_user: None,
            peer: std::net::SocketAddr::from(([127, 0, 0, 1], 1)),
        };
        let call = self.hadoop_client.call(caller, method, request.to_vec());
        self.runtime.block_on(call).is_ok()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

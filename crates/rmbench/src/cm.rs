//! The simulated NMs' one ContainerManagement server. The RM launches the AM container through
//! it; the bench captures the AM's credentials from the launch environment and plays the AM
//! itself. Every simulated node registers a distinct loopback IP on this server's port, so the
//! address a call arrives on says which node it is for.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tonic::transport::server::TcpIncoming;
use tonic::transport::Server;
use tonic::{Request, Response, Status};
use weft_proto::auth::{
    ENV_AM_TOKEN, ENV_APPLICATION_ATTEMPT_ID, ENV_CONTAINER_ID, ENV_RM_SCHEDULER_ADDRESS,
};
use weft_proto::v1::container_management_server::{ContainerManagement, ContainerManagementServer};
use weft_proto::v1::{
    ContainerExceptionMap, GetContainerStatusesRequest, GetContainerStatusesResponse,
    StartContainersRequest, StartContainersResponse, StopContainersRequest, StopContainersResponse,
};

use crate::error::BenchError;
use crate::shared::{index_of_address, Launched, Shared};

/// What the RM put in the AM container's launch context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AmLaunch {
    /// The AM container.
    pub(crate) container_id: String,
    /// The attempt (from `APPLICATION_ATTEMPT_ID`).
    pub(crate) attempt_id: String,
    /// The attempt's secret (`WEFT_AM_TOKEN`).
    pub(crate) token: String,
    /// The AM service (`WEFT_RM_SCHEDULER_ADDRESS`), if given.
    pub(crate) scheduler: Option<String>,
    /// Which simulated node runs it.
    pub(crate) node: Option<usize>,
}

/// Reads the AM's credentials out of a launch environment; `None` when it is not an AM launch.
pub(crate) fn am_launch(
    container_id: &str,
    env: &HashMap<String, String>,
    node: Option<usize>,
) -> Option<AmLaunch> {
    let token = env.get(ENV_AM_TOKEN)?.clone();
    let attempt_id = env.get(ENV_APPLICATION_ATTEMPT_ID)?.clone();
    let container_id = env
        .get(ENV_CONTAINER_ID)
        .cloned()
        .unwrap_or_else(|| container_id.to_string());
    Some(AmLaunch {
        container_id,
        attempt_id,
        token,
        scheduler: env.get(ENV_RM_SCHEDULER_ADDRESS).cloned(),
        node,
    })
}

struct Service {
    shared: Arc<Shared>,
    am: mpsc::UnboundedSender<AmLaunch>,
}

#[tonic::async_trait]
impl ContainerManagement for Service {
    async fn start_containers(
        &self,
        request: Request<StartContainersRequest>,
    ) -> Result<Response<StartContainersResponse>, Status> {
        let node = request.local_addr().and_then(index_of_address);
        let mut reply = StartContainersResponse::default();
        for r in request.into_inner().start_container_request {
            // Only the RM's AM launches come here; they carry the allocation's token as an
            // AM's starts do (the bench does not check signatures: it holds no key).
            if r.container_token.is_empty() {
                reply.failed_requests.push(ContainerExceptionMap {
                    container_id: r.container_id,
                    exception: "no container token".into(),
                });
                continue;
            }
            let Some(node) = node else {
                reply.failed_requests.push(ContainerExceptionMap {
                    container_id: r.container_id,
                    exception: "the bench cannot tell which simulated node this is for".into(),
                });
                continue;
            };
            let env = r
                .container_launch_context
                .map(|c| c.environment)
                .unwrap_or_default();
            let am = am_launch(&r.container_id, &env, Some(node));
            self.shared.launch(
                node,
                [Launched {
                    id: r.container_id.clone(),
                    at: crate::clock::now(),
                    forever: am.is_some(),
                    size: None,
                }],
            );
            if let Some(am) = am {
                let _ = self.am.send(am);
            }
            reply.succeeded_requests.push(r.container_id);
        }
        Ok(Response::new(reply))
    }

    async fn stop_containers(
        &self,
        request: Request<StopContainersRequest>,
    ) -> Result<Response<StopContainersResponse>, Status> {
        // Nothing runs for real: the RM's heartbeat reply carries the stop as well, and the
        // simulated node ends the container there.
        Ok(Response::new(StopContainersResponse {
            succeeded_requests: request.into_inner().container_id,
            failed_requests: Vec::new(),
        }))
    }

    async fn get_container_statuses(
        &self,
        _request: Request<GetContainerStatusesRequest>,
    ) -> Result<Response<GetContainerStatusesResponse>, Status> {
        Ok(Response::new(GetContainerStatusesResponse::default()))
    }
}

/// Connections the kernel holds for the server before it accepts them (the kernel caps it at
/// `net.core.somaxconn`). When thousands of apps start together the RM opens a connection per
/// AM launch; with tokio's default of 1,024 the queue overflowed, the kernel dropped the
/// handshakes' last ACKs (`TcpExtListenOverflows`), and the RM's launches failed with
/// "StartContainers: transport error".
const ACCEPT_BACKLOG: u32 = 65_535;

fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// Binds the server on every local address (so each node's loopback IP reaches it) and serves
/// until `stop`. Returns the port and the stream of AM launches.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) -> Result<(u16, mpsc::UnboundedReceiver<AmLaunch>), BenchError> {
    let listener = listen(SocketAddr::from(([0, 0, 0, 0], 0))).map_err(BenchError::io(
        "cannot bind the container-management server",
    ))?;
    let port = listener
        .local_addr()
        .map_err(BenchError::io("container-management server address"))?
        .port();
    let (tx, rx) = mpsc::unbounded_channel();
    let service = Service { shared, am: tx };
    tokio::spawn(async move {
        let _ = Server::builder()
            .add_service(ContainerManagementServer::new(service))
            .serve_with_incoming_shutdown(
                TcpIncoming::from(listener).with_nodelay(Some(true)),
                async move {
                    let _ = stop.wait_for(|s| *s).await;
                },
            )
            .await;
    });
    Ok((port, rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn am_credentials_come_from_the_launch_environment() {
        let mut env = HashMap::new();
        env.insert(ENV_AM_TOKEN.to_string(), "tok".to_string());
        env.insert(
            ENV_APPLICATION_ATTEMPT_ID.to_string(),
            "appattempt_1_0001_000001".to_string(),
        );
        env.insert(
            ENV_RM_SCHEDULER_ADDRESS.to_string(),
            "127.0.0.1:8030".to_string(),
        );
        let am = am_launch("container_1_0001_01_000001", &env, Some(3)).unwrap();
        assert_eq!(am.token, "tok");
        assert_eq!(am.attempt_id, "appattempt_1_0001_000001");
        assert_eq!(am.container_id, "container_1_0001_01_000001");
        assert_eq!(am.scheduler.as_deref(), Some("127.0.0.1:8030"));
        assert_eq!(am.node, Some(3));
        env.remove(ENV_AM_TOKEN);
        assert_eq!(am_launch("c", &env, None), None);
    }
}

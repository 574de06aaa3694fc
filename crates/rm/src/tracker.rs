//! The resource tracker (YARN's `ResourceTracker`, port 8031): NM registration, heartbeats,
//! unregistration. A malformed request gets INVALID_ARGUMENT and changes nothing.

use tonic::{Request, Response, Status};
use weft_proto::v1::resource_tracker_server::ResourceTracker;
use weft_proto::v1::{
    ContainerState, ContainerStatus, MasterKey as WireKey, NmContainerStatus as WireNmStatus,
    NodeAction as WireAction, NodeHeartbeatRequest, NodeHeartbeatResponse,
    RegisterNodeManagerRequest, RegisterNodeManagerResponse, UnRegisterNodeManagerRequest,
    UnRegisterNodeManagerResponse,
};
use weft_rm_core::{
    NmContainerState, NmContainerStatus, NodeAction, NodeRegistration, NodeStatus, RmError,
};
use weft_types::yarn_id::ContainerId;
use weft_types::{Resource, ResourceTypes};

use crate::driver::Driver;
use crate::status::{driver_status, rm_status};

/// The service.
pub(crate) struct Tracker {
    pub(crate) driver: Driver,
    pub(crate) types: ResourceTypes,
    pub(crate) heartbeat_interval_ms: i64,
    pub(crate) rm_identifier: i64,
    /// Heartbeats answered before the node's scheduling pass
    /// (`Settings::deferred_node_updates`).
    pub(crate) deferred_node_updates: bool,
    /// Whether the RM serves the framed transport (`framed_transport`), told at registration.
    pub(crate) framed_transport: bool,
}

fn container_id(s: &str) -> Result<ContainerId, Status> {
    s.parse::<ContainerId>()
        .map_err(|e| Status::invalid_argument(e.to_string()))
}

fn state(code: i32) -> NmContainerState {
    if code == ContainerState::Complete as i32 {
        NmContainerState::Complete
    } else {
        NmContainerState::Running
    }
}

fn resource(
    r: Option<&weft_proto::v1::Resource>,
    types: &ResourceTypes,
) -> Result<Resource, Status> {
    match r {
        Some(r) => r
            .to_types(types)
            .map_err(|e| Status::invalid_argument(e.to_string())),
        None => Ok(Resource::ZERO),
    }
}

fn from_register(s: &WireNmStatus, types: &ResourceTypes) -> Result<NmContainerStatus, Status> {
    Ok(NmContainerStatus {
        container: container_id(&s.container_id)?,
        state: state(s.container_state),
        exit_status: s.container_exit_status,
        diagnostics: s.diagnostics.clone(),
        resource: resource(s.resource.as_ref(), types)?,
    })
}

/// A heartbeat's status, taken apart rather than copied; a completed one's id goes to
/// `acknowledged` (the NM may forget it once told: YARN's containersToBeRemovedFromNM).
fn from_heartbeat(
    s: ContainerStatus,
    types: &ResourceTypes,
    acknowledged: &mut Vec<String>,
) -> Result<NmContainerStatus, Status> {
    let status = NmContainerStatus {
        container: container_id(&s.container_id)?,
        state: state(s.state),
        exit_status: s.exit_status,
        diagnostics: s.diagnostics,
        resource: resource(s.capability.as_ref(), types)?,
    };
    if status.state == NmContainerState::Complete {
        acknowledged.push(s.container_id);
    }
    Ok(status)
}

fn action(a: NodeAction) -> i32 {
    (match a {
        NodeAction::Normal => WireAction::Normal,
        NodeAction::Resync => WireAction::Resync,
        NodeAction::Shutdown => WireAction::Shutdown,
    }) as i32
}

#[tonic::async_trait]
impl ResourceTracker for Tracker {
    async fn register_node_manager(
        &self,
        request: Request<RegisterNodeManagerRequest>,
    ) -> Result<Response<RegisterNodeManagerResponse>, Status> {
        let req = request.into_inner();
        let capability = req
            .total_capability
            .as_ref()
            .ok_or_else(|| Status::invalid_argument("total_capability is required"))?
            .to_types(&self.types)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let containers = req
            .container_statuses
            .iter()
            .map(|s| from_register(s, &self.types))
            .collect::<Result<Vec<_>, _>>()?;
        let reg = NodeRegistration {
            node_id: req.node_id.clone(),
            address: req.address.clone(),
            http_address: req.http_address.clone(),
            hadoop_address: req.hadoop_address.clone(),
            capability,
            rack: req.rack.clone(),
            containers,
            secret: req.node_secret.clone(),
        };
        let node = req.node_id.clone();
        let result = self
            .driver
            .call(move |core, now| {
                let id = reg.node_id.clone();
                core.node_register(now, reg).map(|()| {
                    let secret = core.node_secret(&id).unwrap_or_default();
                    (core.current_master_key(), secret)
                })
            })
            .await
            .map_err(driver_status)?;
        match result {
            Ok((key, node_secret)) => {
                tracing::info!(%node, address = %req.address, "node registered");
                Ok(Response::new(RegisterNodeManagerResponse {
                    node_action: WireAction::Normal as i32,
                    rm_identifier: self.rm_identifier,
                    heartbeat_interval_ms: self.heartbeat_interval_ms,
                    container_token_master_key: Some(WireKey::from_key(&key)),
                    node_secret,
                    heartbeat_stream: true,
                    framed_transport: self.framed_transport,
                    ..Default::default()
                }))
            }
            Err(RmError::InvalidNode(m)) if m.contains("decommissioned") => {
                Ok(Response::new(RegisterNodeManagerResponse {
                    node_action: WireAction::Shutdown as i32,
                    rm_identifier: self.rm_identifier,
                    diagnostics_message: m,
                    ..Default::default()
                }))
            }
            Err(e) => Err(rm_status(&e)),
        }
    }

    async fn node_heartbeat(
        &self,
        request: Request<NodeHeartbeatRequest>,
    ) -> Result<Response<NodeHeartbeatResponse>, Status> {
        node_heartbeat(self, request.into_inner())
            .await
            .map(Response::new)
    }

    async fn un_register_node_manager(
        &self,
        request: Request<UnRegisterNodeManagerRequest>,
    ) -> Result<Response<UnRegisterNodeManagerResponse>, Status> {
        let req = request.into_inner();
        let node = req.node_id.clone();
        self.driver
            .call(move |core, now| core.node_unregister(now, &req.node_id, &req.node_secret))
            .await
            .map_err(driver_status)?
            .map_err(|e| rm_status(&e))?;
        tracing::info!(%node, "node unregistered");
        Ok(Response::new(UnRegisterNodeManagerResponse {}))
    }
}

/// Whether a heartbeat's answer shows the NM nothing a write could have decided: carry on as
/// before, nothing to stop or clean up, no new key. Such an answer need not wait for the
/// store (`Driver::call_periodic_unordered`).
fn reveals_nothing(reply: &Result<weft_rm_core::HeartbeatReply, weft_rm_core::RmError>) -> bool {
    matches!(reply, Ok(r) if r.action == Some(weft_rm_core::NodeAction::Normal)
        && r.containers_to_stop.is_empty()
        && r.apps_to_cleanup.is_empty()
        && r.master_key.is_none())
}

/// One heartbeat as NodeHeartbeat and the heartbeat stream (`heartbeat_stream`) answer it.
/// (A free function: the driver's timing label, `tracker.node_heartbeat`, comes from its
/// path.)
pub(crate) async fn node_heartbeat(
    tracker: &Tracker,
    mut req: NodeHeartbeatRequest,
) -> Result<NodeHeartbeatResponse, Status> {
    // Completed statuses the RM has taken in: the NM may forget them once told (YARN's
    // containersToBeRemovedFromNM), or it would report them in every heartbeat forever.
    let mut acknowledged = Vec::new();
    let containers = std::mem::take(&mut req.container_statuses)
        .into_iter()
        .map(|s| from_heartbeat(s, &tracker.types, &mut acknowledged))
        .collect::<Result<Vec<_>, _>>()?;
    // A heartbeat without a health status is taken as healthy.
    let (healthy, health_report) = req.node_health_status.map_or((true, String::new()), |h| {
        (h.is_node_healthy, h.health_report)
    });
    let status = NodeStatus {
        healthy,
        health_report,
        containers,
        last_key_id: req.last_known_master_key_id,
        secret: req.node_secret,
        running_containers: req.running_containers,
    };
    let node = req.node_id;
    let deferred = tracker.deferred_node_updates;
    let reply = tracker
        .driver
        .call_periodic_unordered(
            move |core, now| {
                if deferred {
                    core.node_heartbeat_deferred(now, &node, status)
                } else {
                    core.node_heartbeat(now, &node, status)
                }
            },
            reveals_nothing,
        )
        .await
        .map_err(driver_status)?
        .map_err(|e| rm_status(&e))?;
    Ok(NodeHeartbeatResponse {
        response_id: req.response_id.wrapping_add(1),
        node_action: action(reply.action()),
        containers_to_cleanup: reply
            .containers_to_stop
            .iter()
            .map(ToString::to_string)
            .collect(),
        applications_to_cleanup: reply
            .apps_to_cleanup
            .iter()
            .map(ToString::to_string)
            .collect(),
        next_heartbeat_interval_ms: tracker.heartbeat_interval_ms,
        containers_to_be_removed_from_nm: acknowledged,
        container_token_master_key: reply.master_key.as_ref().map(WireKey::from_key),
        send_all_statuses: reply.send_all_statuses,
        ..Default::default()
    })
}

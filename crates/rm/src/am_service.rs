//! The AM service (YARN's `ApplicationMasterProtocol`, port 8030). Every call carries the
//! attempt id and token as metadata; the core checks them before anything changes.

use std::collections::BTreeMap;

use tonic::{Request, Response, Status};
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_server::ApplicationMasterProtocol;
use weft_proto::v1::{
    AllocateRequest as WireAllocate, AllocateResponse as WireAllocateResponse, Container,
    ContainerState, ContainerStatus, DemandRequest as WireDemand, DemandStatus as WireDemandStatus,
    FinalApplicationStatus, FinishApplicationMasterRequest, FinishApplicationMasterResponse,
    GangRequest, NodeReport as WireNodeReport, NodeState as WireNodeState, PreemptionMessage,
    RegisterApplicationMasterRequest, RegisterApplicationMasterResponse, StrictPreemptionContract,
};
use weft_rm_core::{
    demand_state_name, AllocateRequest, AllocateResponse, AllocatedContainer, AmDemand,
    FinalStatus, NmToken, NodeState, ResourceAsk,
};
use weft_types::yarn_id::{AttemptId, ContainerId};
use weft_types::{Resource, ResourceTypes};

use crate::driver::Driver;
use crate::status::{driver_status, rm_status};

/// The service.
pub(crate) struct AmService {
    pub(crate) driver: Driver,
    pub(crate) types: ResourceTypes,
    pub(crate) rm_identifier: i64,
    /// Whether the RM serves the Allocate stream (`allocate_stream`), told at registration.
    pub(crate) allocate_stream: bool,
    /// Whether the RM serves the framed transport (`framed_transport`), told at registration.
    pub(crate) framed_transport: bool,
}

/// The most gangs one Allocate call may carry (each is kept until it is delivered).
const MAX_GANGS_PER_CALL: usize = 64;
/// The most demands one Allocate call may carry.
const MAX_DEMANDS_PER_CALL: usize = 64;
/// The longest demand description (a ResourceDescription's JSON).
const MAX_DEMAND_TEXT: usize = 16 * 1024;
/// The most asks one demand may cover (its `*` entry and its places).
const MAX_ASKS_PER_DEMAND: usize = 100;

/// The attempt and token a call's metadata carries.
pub(crate) fn credentials<T>(request: &Request<T>) -> Result<(AttemptId, String), Status> {
    let creds = AmCredentials::from_request(request).ok_or_else(|| {
        Status::permission_denied(
            "missing AM credentials: send the weft-attempt-id and weft-am-token metadata",
        )
    })?;
    let attempt = creds
        .attempt_id
        .parse::<AttemptId>()
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    Ok((attempt, creds.token))
}

impl AmService {
    fn wire_resource(&self, r: &Resource) -> weft_proto::v1::Resource {
        weft_proto::v1::Resource::from_types(r, &self.types)
    }

    /// Takes the container: its strings move to the wire (an Allocate may carry thousands).
    fn container(&self, c: AllocatedContainer) -> Container {
        Container {
            container_id: c.id.to_string(),
            node_id: c.node_id,
            node_address: c.node_address,
            resource: Some(self.wire_resource(&c.resource)),
            priority: c.priority,
            container_token: c.token,
            allocation_request_id: c
                .demand_id
                .and_then(|id| i64::try_from(id).ok())
                .unwrap_or(0),
            demand_id: c.demand_id,
            ..Default::default()
        }
    }

    /// The call's demands: each description read as JSON (bounded) and the asks it covers
    /// folded in: the `*` entry becomes its ResourceRequest (or must agree with the one it
    /// has), host and rack entries its places.
    fn demands(&self, req: &WireAllocate) -> Result<Vec<AmDemand>, Status> {
        if req.demands.len() > MAX_DEMANDS_PER_CALL {
            return Err(Status::invalid_argument(format!(
                "demands: {} in one call; at most {MAX_DEMANDS_PER_CALL}",
                req.demands.len()
            )));
        }
        req.demands
            .iter()
            .enumerate()
            .map(|(i, d)| self.demand(i, d))
            .collect()
    }

    fn demand(&self, i: usize, d: &WireDemand) -> Result<AmDemand, Status> {
        let at = |field: &str, why: String| {
            Status::invalid_argument(format!("demands[{i}].{field}: {why}"))
        };
        if d.description.len() > MAX_DEMAND_TEXT {
            return Err(at(
                "description",
                format!("{} bytes; at most {MAX_DEMAND_TEXT}", d.description.len()),
            ));
        }
        if d.asks.len() > MAX_ASKS_PER_DEMAND {
            return Err(at(
                "asks",
                format!("{} entries; at most {MAX_ASKS_PER_DEMAND}", d.asks.len()),
            ));
        }
        let mut description: serde_json::Value = serde_json::from_str(&d.description)
            .map_err(|e| at("description", format!("not JSON: {e}")))?;
        let mut demand = AmDemand::default();
        let mut any = None;
        for ask in &d.asks {
            match ask.resource_name.as_str() {
                "" | "*" => any = Some(ask),
                rack if rack.starts_with('/') => demand.racks.push(rack.to_owned()),
                host => demand.hosts.push(host.to_owned()),
            }
        }
        if let Some(ask) = any {
            let size = ask
                .capability
                .as_ref()
                .ok_or_else(|| at("asks", "the * entry has no capability".to_owned()))?
                .to_types(&self.types)
                .map_err(|e| at("asks", e.to_string()))?;
            let wrapped = serde_json::json!({
                "capability": {"memory": size.memory_mb(), "vCores": size.vcores()},
                "num-containers": ask.num_containers,
                "priority": ask.priority,
                "relax-locality": ask.relax_locality.unwrap_or(true),
            });
            let object = description
                .as_object_mut()
                .ok_or_else(|| at("description", "not a JSON object".to_owned()))?;
            match object.get("ResourceRequest") {
                None => {
                    object.insert("ResourceRequest".to_owned(), wrapped);
                }
                Some(given) => {
                    let same = |pointer: &str| given.pointer(pointer) == wrapped.pointer(pointer);
                    let agree = same("/capability/memory")
                        && same("/capability/vCores")
                        && same("/num-containers")
                        && given
                            .get("priority")
                            .map_or(ask.priority == 0, |p| Some(p) == wrapped.get("priority"));
                    if !agree {
                        return Err(at(
                            "asks",
                            "the * entry disagrees with the description's ResourceRequest (priority, size or count)".to_owned(),
                        ));
                    }
                }
            }
        } else if !d.asks.is_empty() {
            return Err(at(
                "asks",
                "places without a * entry: the * entry gives the demand's size and count"
                    .to_owned(),
            ));
        }
        demand.description = description;
        Ok(demand)
    }

    /// YARN's absolute-per-location asks as the core's increments: the `*` entry of each
    /// (priority, size) gives the count, host and rack entries the preferences.
    /// The call's gangs in the scheduler's terms (at most [`MAX_GANGS_PER_CALL`]).
    fn gangs(&self, req: &WireAllocate) -> Result<Vec<weft_sched::GangAsk>, Status> {
        if req.gangs.len() > MAX_GANGS_PER_CALL {
            return Err(Status::invalid_argument(format!(
                "{} gangs in one call; at most {MAX_GANGS_PER_CALL}",
                req.gangs.len()
            )));
        }
        req.gangs
            .iter()
            .map(|g| {
                let resources = g
                    .capability
                    .as_ref()
                    .ok_or_else(|| Status::invalid_argument("a gang has no capability"))?
                    .to_types(&self.types)
                    .map_err(|e| Status::invalid_argument(e.to_string()))?;
                Ok(weft_sched::GangAsk {
                    gang: g.gang_id,
                    priority: g.priority,
                    resources,
                    size: g.size,
                    hold_timeout: (g.hold_timeout_ms > 0)
                        .then(|| weft_types::Duration::from_millis(g.hold_timeout_ms)),
                    style: if g.hard {
                        weft_sched::GangStyle::Hard
                    } else {
                        weft_sched::GangStyle::Soft
                    },
                    tag: weft_sched::AskTag::NONE,
                })
            })
            .collect()
    }

    fn asks(&self, req: &WireAllocate) -> Result<Vec<ResourceAsk>, Status> {
        let mut by_key: BTreeMap<(i32, i64, i64), ResourceAsk> = BTreeMap::new();
        let mut places: Vec<((i32, i64, i64), String)> = Vec::new();
        for r in &req.ask {
            let size = r
                .capability
                .as_ref()
                .ok_or_else(|| Status::invalid_argument("an ask has no capability"))?
                .to_types(&self.types)
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            let count = u32::try_from(r.num_containers).map_err(|_| {
                Status::invalid_argument(format!("num_containers {} is negative", r.num_containers))
            })?;
            let key = (r.priority, size.memory_mb(), size.vcores());
            if r.resource_name == "*" || r.resource_name.is_empty() {
                by_key.insert(
                    key,
                    ResourceAsk {
                        priority: r.priority,
                        resource: size,
                        count,
                        hosts: Vec::new(),
                        racks: Vec::new(),
                        relax_locality: r.relax_locality.unwrap_or(true),
                    },
                );
            } else {
                places.push((key, r.resource_name.clone()));
            }
        }
        for (key, place) in places {
            if let Some(ask) = by_key.get_mut(&key) {
                if place.starts_with('/') {
                    ask.racks.push(place);
                } else {
                    ask.hosts.push(place);
                }
            }
        }
        Ok(by_key.into_values().collect())
    }
}

impl AmService {
    /// The core's request for an Allocate from `attempt` (the unary call's and the stream's),
    /// checked as a whole, with the response id its answer carries (the request's plus one).
    pub(crate) fn allocate_request(
        &self,
        attempt: &AttemptId,
        wire: WireAllocate,
    ) -> Result<(AllocateRequest, i32), Status> {
        same_attempt(attempt, &wire.attempt_id)?;
        let asks = self.asks(&wire)?;
        let gangs = self.gangs(&wire)?;
        let demands = self.demands(&wire)?;
        if wire.kill_demands.len() > MAX_DEMANDS_PER_CALL
            || wire.complete_demands.len() > MAX_DEMANDS_PER_CALL
        {
            return Err(Status::invalid_argument(format!(
                "kill_demands, complete_demands: at most {MAX_DEMANDS_PER_CALL} each in one call"
            )));
        }
        let releases = wire
            .release
            .iter()
            .map(|c| {
                c.parse::<ContainerId>()
                    .map_err(|e| Status::invalid_argument(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let blacklist = wire.blacklist_request.unwrap_or_default();
        let req = AllocateRequest {
            asks,
            releases,
            blacklist_additions: blacklist.blacklist_additions,
            blacklist_removals: blacklist.blacklist_removals,
            progress: wire.progress,
            gangs,
            demands,
            kill_demands: wire.kill_demands,
            complete_demands: wire
                .complete_demands
                .iter()
                .map(|o| (o.demand_id, o.succeeded))
                .collect(),
        };
        Ok((req, wire.response_id.wrapping_add(1)))
    }

    /// The wire answer to an Allocate the core answered.
    pub(crate) fn allocate_answer(
        &self,
        reply: AllocateResponse,
        response_id: i32,
    ) -> WireAllocateResponse {
        WireAllocateResponse {
            response_id,
            allocated_containers: reply
                .allocated
                .into_iter()
                .map(|c| self.container(c))
                .collect(),
            completed_container_statuses: reply
                .completed
                .iter()
                .map(|c| ContainerStatus {
                    container_id: c.id.to_string(),
                    state: ContainerState::Complete as i32,
                    exit_status: c.exit_status,
                    diagnostics: c.diagnostics.clone(),
                    capability: None,
                })
                .collect(),
            available_resources: Some(self.wire_resource(&reply.headroom)),
            updated_nodes: reply
                .updated_nodes
                .iter()
                .map(|n| WireNodeReport {
                    node_id: n.node_id.clone(),
                    node_state: node_state(n.state),
                    ..Default::default()
                })
                .collect(),
            num_cluster_nodes: i32::try_from(reply.cluster_nodes).unwrap_or(i32::MAX),
            nm_tokens: nm_tokens(reply.nm_tokens),
            preempt: preemption_message(&reply.preempt),
            demand_updates: reply
                .demand_updates
                .into_iter()
                .map(|u| WireDemandStatus {
                    demand_id: u.demand_id,
                    state: demand_state_name(u.state).to_owned(),
                    reason: u.reason.as_str().to_owned(),
                    detail: u.detail,
                    at_ms: u.at.as_millis(),
                })
                .collect(),
            ..Default::default()
        }
    }
}

/// Refuses a request that names an attempt other than the call's (`attempt_id`, when set).
fn same_attempt(attempt: &AttemptId, named: &str) -> Result<(), Status> {
    if named.is_empty() || named.parse::<AttemptId>().is_ok_and(|n| n == *attempt) {
        return Ok(());
    }
    Err(Status::permission_denied(format!(
        "this call speaks for attempt {attempt}, not {named}"
    )))
}

fn nm_tokens(tokens: Vec<NmToken>) -> Vec<weft_proto::v1::NmToken> {
    tokens
        .into_iter()
        .map(|t| weft_proto::v1::NmToken {
            node_id: t.node_id,
            token: t.token,
        })
        .collect()
}

/// The containers the scheduler will take back, as YARN's strict preemption contract. Left
/// out while nothing is marked: Hadoop's Fair Scheduler sends an empty contract on every reply
/// instead, and AMs treat both alike (preemption spec §C; see application_master.proto).
fn preemption_message(marked: &[ContainerId]) -> Option<PreemptionMessage> {
    (!marked.is_empty()).then(|| PreemptionMessage {
        strict_contract: Some(StrictPreemptionContract {
            containers: marked.iter().map(ContainerId::to_string).collect(),
        }),
        contract: None,
    })
}

fn node_state(s: NodeState) -> i32 {
    (match s {
        NodeState::Running => WireNodeState::Running,
        NodeState::Unhealthy => WireNodeState::Unhealthy,
        NodeState::Lost => WireNodeState::Lost,
        NodeState::Decommissioned => WireNodeState::Decommissioned,
        NodeState::Shutdown => WireNodeState::Shutdown,
    }) as i32
}

#[tonic::async_trait]
impl ApplicationMasterProtocol for AmService {
    async fn register_application_master(
        &self,
        request: Request<RegisterApplicationMasterRequest>,
    ) -> Result<Response<RegisterApplicationMasterResponse>, Status> {
        let (attempt, token) = credentials(&request)?;
        let req = request.into_inner();
        let port = u32::try_from(req.rpc_port).unwrap_or(0);
        let url = Some(req.tracking_url);
        let reply = self
            .driver
            .call(move |core, now| core.am_register(now, attempt, &token, &req.host, port, url))
            .await
            .map_err(driver_status)?
            .map_err(|e| rm_status(&e))?;
        tracing::info!(%attempt, "AM registered");
        Ok(Response::new(RegisterApplicationMasterResponse {
            maximum_capability: Some(self.wire_resource(&reply.maximum_capability)),
            queue: reply.queue,
            containers_from_previous_attempts: reply
                .running_containers
                .into_iter()
                .map(|c| self.container(c))
                .collect(),
            rm_identifier: self.rm_identifier,
            nm_tokens_from_previous_attempts: nm_tokens(reply.nm_tokens),
            pending_gangs: reply
                .pending_gangs
                .iter()
                .map(|g| GangRequest {
                    gang_id: g.gang,
                    priority: g.priority,
                    capability: Some(self.wire_resource(&g.resources)),
                    size: g.size,
                    hold_timeout_ms: g.hold_timeout.map_or(0, |d| d.as_millis()),
                    hard: g.style == weft_sched::GangStyle::Hard,
                })
                .collect(),
            allocate_stream: self.allocate_stream,
            framed_transport: self.framed_transport,
        }))
    }

    async fn allocate(
        &self,
        request: Request<WireAllocate>,
    ) -> Result<Response<WireAllocateResponse>, Status> {
        let (attempt, token) = credentials(&request)?;
        let (req, response_id) = self.allocate_request(&attempt, request.into_inner())?;
        let reply = self
            .driver
            .call_periodic_unordered(
                move |core, now| core.am_allocate(now, attempt, &token, req),
                allocate_reveals_nothing,
            )
            .await
            .map_err(driver_status)?
            .map_err(|e| rm_status(&e))?;
        Ok(Response::new(self.allocate_answer(reply, response_id)))
    }

    async fn finish_application_master(
        &self,
        request: Request<FinishApplicationMasterRequest>,
    ) -> Result<Response<FinishApplicationMasterResponse>, Status> {
        let (attempt, token) = credentials(&request)?;
        let req = request.into_inner();
        let status = match FinalApplicationStatus::try_from(req.final_application_status) {
            Ok(FinalApplicationStatus::Succeeded) | Ok(FinalApplicationStatus::Ended) => {
                FinalStatus::Succeeded
            }
            Ok(FinalApplicationStatus::Failed) => FinalStatus::Failed,
            Ok(FinalApplicationStatus::Killed) => FinalStatus::Killed,
            Ok(FinalApplicationStatus::Undefined) | Err(_) => FinalStatus::Undefined,
        };
        let url = Some(req.tracking_url);
        let diagnostics = req.diagnostics;
        self.driver
            .call(move |core, now| core.am_finish(now, attempt, &token, status, &diagnostics, url))
            .await
            .map_err(driver_status)?
            .map_err(|e| rm_status(&e))?;
        tracing::info!(%attempt, ?status, "AM finished");
        Ok(Response::new(FinishApplicationMasterResponse {
            is_unregistered: true,
        }))
    }
}

/// Whether an Allocate answer shows the AM nothing a write could have decided, so it need not
/// wait for the store (`Driver::call_periodic_unordered`): containers allocated and completed
/// are not stored (an RM restart learns them from the NMs' reports, as YARN's does), but a
/// demand's new state is, and a refusal may tell of a finish or kill still being written.
pub(crate) fn allocate_reveals_nothing(
    reply: &Result<weft_rm_core::AllocateResponse, weft_rm_core::RmError>,
) -> bool {
    matches!(reply, Ok(r) if r.demand_updates.is_empty())
}

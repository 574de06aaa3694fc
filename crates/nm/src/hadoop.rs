//! Hadoop's ContainerManagementProtocol over Hadoop IPC (`yarn.nodemanager.address`), so
//! Hadoop's `NMClient` (the Spark AM's executor launcher) starts, stops and watches
//! containers here: startContainers, stopContainers and getContainerStatuses; every other
//! method answers Hadoop's no-such-method error.
//!
//! Authorization, as agreed with the RM's AM protocol: the server is simple-only, so the
//! caller is the connection's user, which `NMClient` sets to its application attempt id. A
//! start presents a Hadoop container token whose identifier is a `ContainerTokenIdentifierProto`
//! and whose password is the UTF-8 text of Weft's own container token; it is verified with the
//! node's key ring exactly as the gRPC service verifies it, and its container must be the one
//! the Hadoop identifier names. Stops and status queries touch only the caller's application's
//! containers. Each refusal goes back per container in `failed_requests`, with Hadoop's
//! exception class, as Hadoop's NM answers.

use std::collections::BTreeMap;

use prost::Message;
use weft_hadoop_ipc::{decode_request, exception, CallFuture, Caller, Protocol, RpcError};
use weft_proto::exit_status;
use weft_proto::hadoop::common::TokenProto;
use weft_proto::hadoop::yarn::{
    ContainerExceptionMapProto, ContainerIdProto, ContainerLaunchContextProto, ContainerStateProto,
    ContainerStatusProto, GetContainerStatusesRequestProto, GetContainerStatusesResponseProto,
    LocalResourceProto, LocalResourceTypeProto, SerializedExceptionProto,
    StartContainerRequestProto, StartContainersRequestProto, StartContainersResponseProto,
    StopContainersRequestProto, StopContainersResponseProto,
};
use weft_proto::hadoop::{self as wire, CONTAINER_MANAGEMENT_PROTOCOL};
use weft_proto::hadoop_tokens::{
    container_token_identifier, weft_token_text, CONTAINER_TOKEN_KIND,
};
use weft_proto::v1::{ContainerState, Resource as WireResource};
use weft_types::yarn_id::{AttemptId, ContainerId};
use weft_types::Resource;

use crate::clock::now_ms;
use crate::launch::LaunchSpec;
use crate::localize::{LocalResourceSpec, ResourceKind};
use crate::security::{Refusal, Security};
use crate::service::{ContainerManager, STOPPED_BY_AM};
use crate::table::Entry;

/// Hadoop's class for a container token that does not verify. The binary name (`$`), which
/// the client's `Class.forName` resolves; Hadoop's own NM writes the canonical name.
const INVALID_TOKEN: &str = "org.apache.hadoop.security.token.SecretManager$InvalidToken";

/// Container ids per call (each start, stop or status is one entry).
const MAX_CONTAINERS_PER_CALL: usize = 1_000;

/// The protocol on the NM's Hadoop IPC listener; clones share the NM's containers.
#[derive(Clone)]
pub(crate) struct HadoopContainerManager {
    pub(crate) manager: ContainerManager,
}

impl Protocol for HadoopContainerManager {
    fn name(&self) -> &'static str {
        CONTAINER_MANAGEMENT_PROTOCOL
    }

    fn call(&self, caller: Caller, method: &str, request: Vec<u8>) -> CallFuture {
        let this = self.clone();
        let method = method.to_string();
        Box::pin(async move {
            match method.as_str() {
                "startContainers" => {
                    let req: StartContainersRequestProto = decode_request(&method, &request)?;
                    let attempt = caller_attempt(&caller)?;
                    bounded(req.start_container_request.len())?;
                    Ok(this.start_containers(attempt, &req).encode_to_vec())
                }
                "stopContainers" => {
                    let req: StopContainersRequestProto = decode_request(&method, &request)?;
                    let attempt = caller_attempt(&caller)?;
                    bounded(req.container_id.len())?;
                    Ok(this.stop_containers(attempt, &req).encode_to_vec())
                }
                "getContainerStatuses" => {
                    let req: GetContainerStatusesRequestProto = decode_request(&method, &request)?;
                    let attempt = caller_attempt(&caller)?;
                    bounded(req.container_id.len())?;
                    Ok(this.statuses(attempt, &req).encode_to_vec())
                }
                other => Err(RpcError::no_such_method(
                    CONTAINER_MANAGEMENT_PROTOCOL,
                    other,
                )),
            }
        })
    }
}

/// The caller: NMClient connects as its application attempt (Hadoop's NM takes the attempt
/// from the NM token; with simple auth the connection's user carries it).
fn caller_attempt(caller: &Caller) -> Result<AttemptId, RpcError> {
    caller.user.parse().map_err(|_| {
        RpcError::yarn(format!(
            "Unauthorized request: the caller {:?} is not an application attempt id (NMClient connects as its attempt, appattempt_<ts>_<app>_<n>)",
            caller.user
        ))
    })
}

fn bounded(n: usize) -> Result<(), RpcError> {
    if n > MAX_CONTAINERS_PER_CALL {
        return Err(RpcError::yarn(format!(
            "{n} containers in one call, more than the {MAX_CONTAINERS_PER_CALL} allowed"
        )));
    }
    Ok(())
}

fn failure(
    container: Option<ContainerId>,
    class_name: &str,
    message: String,
) -> ContainerExceptionMapProto {
    ContainerExceptionMapProto {
        container_id: container.map(wire::container_id_proto),
        exception: Some(SerializedExceptionProto {
            trace: Some(format!("{class_name}: {message}")),
            message: Some(message),
            class_name: Some(class_name.to_string()),
            cause: None,
        }),
    }
}

fn refused(container: Option<ContainerId>, refusal: Refusal) -> ContainerExceptionMapProto {
    match refusal {
        Refusal::InvalidToken(m) => failure(container, INVALID_TOKEN, m),
        Refusal::Denied(m) => failure(container, exception::YARN, m),
    }
}

/// A container's id and token as the request carries them, checked.
fn token_of(
    security: &Security,
    attempt: AttemptId,
    req: &StartContainerRequestProto,
    now: u64,
) -> Result<(ContainerId, weft_tokens::ContainerTokenIdentifier), (Option<ContainerId>, Refusal)> {
    let invalid = |id, m: &str| (id, Refusal::InvalidToken(m.to_string()));
    let token: &TokenProto = req
        .container_token
        .as_ref()
        .ok_or_else(|| invalid(None, "the request carries no container token"))?;
    let identifier =
        container_token_identifier(token).map_err(|e| invalid(None, &e.to_string()))?;
    let id = wire::container_id(identifier.container_id.as_ref())
        .map_err(|e| invalid(None, &format!("the container token's identifier: {e}")))?;
    let text = weft_token_text(token, CONTAINER_TOKEN_KIND)
        .map_err(|e| invalid(Some(id), &e.to_string()))?;
    let granted = security
        .verify_container_token(text, now)
        .map_err(|r| (Some(id), r))?;
    if granted.container != id {
        return Err(invalid(
            Some(id),
            &format!(
                "the container token's identifier names {id} but its password grants {}",
                granted.container
            ),
        ));
    }
    Security::authorize_app(&attempt, attempt.app, &granted).map_err(|r| (Some(id), r))?;
    Ok((id, granted))
}

impl HadoopContainerManager {
    fn start_containers(
        &self,
        attempt: AttemptId,
        req: &StartContainersRequestProto,
    ) -> StartContainersResponseProto {
        let mut response = StartContainersResponseProto::default();
        for one in &req.start_container_request {
            match self.start_one(attempt, one) {
                Ok(id) => response
                    .succeeded_requests
                    .push(wire::container_id_proto(id)),
                Err((id, refusal)) => {
                    tracing::warn!(?id, "Hadoop start refused: {refusal}");
                    response.failed_requests.push(refused(id, refusal));
                }
            }
        }
        response
    }

    fn start_one(
        &self,
        attempt: AttemptId,
        req: &StartContainerRequestProto,
    ) -> Result<ContainerId, (Option<ContainerId>, Refusal)> {
        let now = u64::try_from(now_ms()).unwrap_or_default();
        let (id, granted) = token_of(&self.manager.security, attempt, req, now)?;
        let denied = |m: String| (Some(id), Refusal::Denied(m));
        let key = id.to_string();
        if self.manager.table.contains(&key) {
            return Err(denied(format!(
                "Container {key} already is running on this node!!"
            )));
        }
        let ctx = req
            .container_launch_context
            .as_ref()
            .ok_or_else(|| denied("the request has no container launch context".into()))?;
        let spec = launch_spec(id, &granted, ctx).map_err(denied)?;
        crate::launch::validate(&spec).map_err(|e| denied(e.to_string()))?;
        self.manager
            .security
            .record_start(&granted, now)
            .map_err(|r| (Some(id), r))?;
        let handle = self
            .manager
            .executor
            .launch(spec)
            .map_err(|e| denied(e.to_string()))?;
        self.manager.table.insert(Entry {
            app_id: id.app.to_string(),
            user: granted.user.clone(),
            capability: WireResource::new(granted.memory_mb, granted.vcores),
            created_ms: now_ms(),
            handle,
            acked: false,
            running_delivered: false,
        });
        Ok(id)
    }

    fn stop_containers(
        &self,
        attempt: AttemptId,
        req: &StopContainersRequestProto,
    ) -> StopContainersResponseProto {
        let mut response = StopContainersResponseProto::default();
        for p in &req.container_id {
            match self.entry_for(attempt, p) {
                Ok((id, entry)) => {
                    // Stopping a completed container is a no-op that succeeds, as in YARN.
                    entry
                        .handle
                        .stop(exit_status::KILLED_BY_APPMASTER, STOPPED_BY_AM);
                    response
                        .succeeded_requests
                        .push(wire::container_id_proto(id));
                }
                Err(f) => response.failed_requests.push(*f),
            }
        }
        response
    }

    fn statuses(
        &self,
        attempt: AttemptId,
        req: &GetContainerStatusesRequestProto,
    ) -> GetContainerStatusesResponseProto {
        let mut response = GetContainerStatusesResponseProto::default();
        for p in &req.container_id {
            match self.entry_for(attempt, p) {
                Ok((id, entry)) => response.status.push(status_proto(id, &entry)),
                Err(f) => response.failed_requests.push(*f),
            }
        }
        response
    }

    /// The caller's container named by `p`, or the failure Hadoop's NM answers.
    fn entry_for(
        &self,
        attempt: AttemptId,
        p: &ContainerIdProto,
    ) -> Result<(ContainerId, Entry), Box<ContainerExceptionMapProto>> {
        let id = wire::container_id(Some(p)).map_err(|e| {
            Box::new(failure(
                None,
                exception::YARN,
                format!("invalid container id: {e}"),
            ))
        })?;
        Security::authorize_app_access(&attempt, attempt.app, id)
            .map_err(|m| Box::new(failure(Some(id), exception::YARN, m)))?;
        self.manager
            .table
            .get(&id.to_string())
            .map(|entry| (id, entry))
            .ok_or_else(|| {
                Box::new(failure(
                    Some(id),
                    exception::YARN,
                    format!("Container {id} is not handled by this NodeManager"),
                ))
            })
    }
}

/// What the executor runs for a Hadoop launch context: the token decides user and size.
fn launch_spec(
    id: ContainerId,
    granted: &weft_tokens::ContainerTokenIdentifier,
    ctx: &ContainerLaunchContextProto,
) -> Result<LaunchSpec, String> {
    let command = ctx.command.join(" ");
    if command.trim().is_empty() {
        return Err("the launch context has no command".into());
    }
    let mut env = BTreeMap::new();
    for e in &ctx.environment {
        let Some(key) = e.key.clone() else {
            return Err("an environment entry has no name".into());
        };
        env.insert(key, e.value.clone().unwrap_or_default());
    }
    let mut local_resources = BTreeMap::new();
    for entry in &ctx.local_resources {
        let Some(name) = entry.key.clone() else {
            return Err("a local resource has no link name".into());
        };
        let Some(value) = &entry.value else {
            return Err(format!("local resource {name} has no value"));
        };
        local_resources.insert(name.clone(), local_resource(&name, value)?);
    }
    Ok(LaunchSpec {
        container_id: id.to_string(),
        app_id: id.app.to_string(),
        user: granted.user.clone(),
        command,
        env,
        local_resources,
        tokens: ctx.tokens.clone().unwrap_or_default(),
        hadoop_quoting: true,
        memory_bytes: u64::try_from(granted.memory_mb)
            .unwrap_or(0)
            .saturating_mul(1 << 20),
        vcores: u32::try_from(granted.vcores).unwrap_or(u32::MAX),
    })
}

/// A `LocalResourceProto` as the URL and kind the localizer takes.
pub(crate) fn local_resource(
    name: &str,
    r: &LocalResourceProto,
) -> Result<LocalResourceSpec, String> {
    let (url, kind) = weft_proto::hadoop::local_resource_location(r)
        .map_err(|what| format!("local resource {name} {what}"))?;
    let kind = match kind {
        LocalResourceTypeProto::Archive => ResourceKind::Archive,
        LocalResourceTypeProto::Pattern => ResourceKind::Pattern,
        LocalResourceTypeProto::File => ResourceKind::File,
    };
    Ok(LocalResourceSpec {
        url,
        kind,
        pattern: r.pattern.clone().filter(|p| !p.is_empty()),
        timestamp: r.timestamp,
    })
}

fn status_proto(id: ContainerId, entry: &Entry) -> ContainerStatusProto {
    let s = entry.status();
    let state = if s.state == ContainerState::Complete as i32 {
        ContainerStateProto::CComplete
    } else {
        ContainerStateProto::CRunning
    };
    let capability = s.capability.unwrap_or_default();
    ContainerStatusProto {
        container_id: Some(wire::container_id_proto(id)),
        state: Some(state as i32),
        diagnostics: Some(s.diagnostics),
        exit_status: Some(s.exit_status),
        capability: Some(wire::resource_proto(Resource::new(
            capability.memory_mb,
            capability.vcores,
        ))),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;

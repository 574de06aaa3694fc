//! The NM's ContainerManagement service (YARN's ContainerManagementProtocol) for AMs and
//! the RM. Every call needs a valid NM token (UNAUTHENTICATED otherwise) and touches only
//! that token's application; a start needs the allocation's container token, which fixes the
//! container's user and size ([`Security`]). Per-container problems go to `failed_requests`,
//! as in YARN; a request that is malformed as a whole gets INVALID_ARGUMENT. Neither changes
//! anything.

use std::collections::BTreeMap;

use tonic::{Request, Response, Status};
use weft_proto::auth::nm_token;
use weft_proto::exit_status;
use weft_proto::v1::container_management_server::ContainerManagement;
use weft_proto::v1::{
    ContainerExceptionMap, GetContainerStatusesRequest, GetContainerStatusesResponse,
    LocalResourceType, StartContainerRequest, StartContainersRequest, StartContainersResponse,
    StopContainersRequest, StopContainersResponse,
};
use weft_tokens::NmTokenIdentifier;
use weft_types::yarn_id::ContainerId;

use crate::clock::now_ms;
use crate::executor::Executor;
use crate::launch::LaunchSpec;
use crate::localize::{LocalResourceSpec, ResourceKind};
use crate::security::Security;
use crate::table::{Entry, Table};

/// Diagnostics of a container stopped through this service.
pub(crate) const STOPPED_BY_AM: &str = "killed: container stopped by the ApplicationMaster";

/// User recorded for a request that names none (processes run as the NM's user anyway).
const DEFAULT_USER: &str = "weft";

/// The service; clones share the executor and the container table.
#[derive(Debug, Clone)]
pub(crate) struct ContainerManager {
    pub(crate) executor: Executor,
    pub(crate) table: Table,
    pub(crate) security: Security,
}

fn failure(container_id: &str, exception: String) -> ContainerExceptionMap {
    ContainerExceptionMap {
        container_id: container_id.to_string(),
        exception,
    }
}

/// Turns a wire request into what the executor runs, refusing anything it cannot honour.
pub(crate) fn launch_spec(req: &StartContainerRequest) -> Result<LaunchSpec, String> {
    let cid: ContainerId = req.container_id.parse().map_err(|e| format!("{e}"))?;
    let app_id = cid.app.to_string();
    if !req.application_id.is_empty() && req.application_id != app_id {
        return Err(format!(
            "application id {} does not match container {} (of {app_id})",
            req.application_id, req.container_id
        ));
    }
    let resource = req
        .resource
        .as_ref()
        .ok_or_else(|| "missing resource".to_string())?;
    if resource.memory_mb <= 0 || resource.vcores < 0 {
        return Err(format!(
            "invalid resource: memory {} MB, {} vcores",
            resource.memory_mb, resource.vcores
        ));
    }
    let ctx = req
        .container_launch_context
        .as_ref()
        .ok_or_else(|| "missing container_launch_context".to_string())?;
    let command = ctx.command.join(" ");
    if command.trim().is_empty() {
        return Err("the launch context has no command".into());
    }
    let mut local_resources = BTreeMap::new();
    for (name, res) in &ctx.local_resources {
        let kind = match LocalResourceType::try_from(res.r#type) {
            Ok(LocalResourceType::File) => ResourceKind::File,
            Ok(LocalResourceType::Archive) => ResourceKind::Archive,
            Ok(LocalResourceType::Pattern) => ResourceKind::Pattern,
            Err(_) => {
                return Err(format!(
                    "local resource {name:?}: unknown type {}",
                    res.r#type
                ))
            }
        };
        let spec = LocalResourceSpec {
            url: res.resource.clone(),
            kind,
            pattern: (!res.pattern.is_empty()).then(|| res.pattern.clone()),
            // proto3: 0 is "not set" (Weft's own clients send none).
            timestamp: (res.timestamp != 0).then_some(res.timestamp),
        };
        local_resources.insert(name.clone(), spec);
    }
    let user = if req.user.is_empty() {
        DEFAULT_USER.to_string()
    } else {
        req.user.clone()
    };
    Ok(LaunchSpec {
        container_id: req.container_id.clone(),
        app_id,
        user,
        command,
        env: ctx
            .environment
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        local_resources,
        tokens: ctx.tokens.clone(),
        hadoop_quoting: ctx.hadoop_quoting,
        memory_bytes: (resource.memory_mb as u64).saturating_mul(1 << 20),
        vcores: u32::try_from(resource.vcores).unwrap_or(u32::MAX),
    })
}

impl ContainerManager {
    fn start_one(
        &self,
        caller: &NmTokenIdentifier,
        req: &StartContainerRequest,
    ) -> Result<(), String> {
        if self.table.contains(&req.container_id) {
            return Err(format!(
                "container {} was already started on this node",
                req.container_id
            ));
        }
        // Validate the request before its token is spent on it.
        launch_spec(req)?;
        let now = u64::try_from(now_ms()).unwrap_or_default();
        let granted = self.security.authorize_start(caller, req, now)?;
        let mut req = req.clone();
        req.user = granted.user;
        let spec = launch_spec(&req)?;
        let app_id = spec.app_id.clone();
        let user = spec.user.clone();
        let capability = req.resource.clone().unwrap_or_default();
        let handle = self.executor.launch(spec).map_err(|e| e.to_string())?;
        self.table.insert(Entry {
            app_id,
            user,
            capability,
            created_ms: now_ms(),
            handle,
            acked: false,
            running_delivered: false,
        });
        Ok(())
    }
}

#[tonic::async_trait]
impl ContainerManagement for ContainerManager {
    async fn start_containers(
        &self,
        request: Request<StartContainersRequest>,
    ) -> Result<Response<StartContainersResponse>, Status> {
        let caller = self.security.caller(nm_token(&request))?;
        let requests = request.into_inner().start_container_request;
        if requests.is_empty() {
            return Err(Status::invalid_argument("no containers to start"));
        }
        let mut response = StartContainersResponse::default();
        for req in &requests {
            match self.start_one(&caller, req) {
                Ok(()) => response.succeeded_requests.push(req.container_id.clone()),
                Err(e) => {
                    tracing::warn!(container = %req.container_id, "start refused: {e}");
                    response.failed_requests.push(failure(&req.container_id, e));
                }
            }
        }
        Ok(Response::new(response))
    }

    async fn stop_containers(
        &self,
        request: Request<StopContainersRequest>,
    ) -> Result<Response<StopContainersResponse>, Status> {
        let caller = self.security.caller(nm_token(&request))?;
        let ids = request.into_inner().container_id;
        if ids.is_empty() {
            return Err(Status::invalid_argument("no containers to stop"));
        }
        let mut response = StopContainersResponse::default();
        for id in ids {
            if let Err(e) = self.security.authorize_access(&caller, &id) {
                tracing::warn!(container = %id, "stop refused: {e}");
                response.failed_requests.push(failure(&id, e));
                continue;
            }
            match self.table.get(&id) {
                Some(entry) => {
                    // Stopping a completed container is a no-op that succeeds, as in YARN.
                    entry
                        .handle
                        .stop(exit_status::KILLED_BY_APPMASTER, STOPPED_BY_AM);
                    response.succeeded_requests.push(id);
                }
                None => {
                    let e = format!("container {id} is not known on this node");
                    response.failed_requests.push(failure(&id, e));
                }
            }
        }
        Ok(Response::new(response))
    }

    async fn get_container_statuses(
        &self,
        request: Request<GetContainerStatusesRequest>,
    ) -> Result<Response<GetContainerStatusesResponse>, Status> {
        let caller = self.security.caller(nm_token(&request))?;
        let ids = request.into_inner().container_id;
        if ids.is_empty() {
            return Err(Status::invalid_argument("no container ids given"));
        }
        let mut response = GetContainerStatusesResponse::default();
        for id in ids {
            if let Err(e) = self.security.authorize_access(&caller, &id) {
                response.failed_requests.push(failure(&id, e));
                continue;
            }
            match self.table.get(&id) {
                Some(entry) => response.status.push(entry.status()),
                None => {
                    let e = format!("container {id} is not known on this node");
                    response.failed_requests.push(failure(&id, e));
                }
            }
        }
        Ok(Response::new(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_proto::v1::{ContainerLaunchContext, LocalResource, Resource};

    fn request() -> StartContainerRequest {
        StartContainerRequest {
            container_id: "container_1700000000000_0003_01_000002".into(),
            application_id: "application_1700000000000_0003".into(),
            user: "bob".into(),
            resource: Some(Resource::new(128, 1)),
            container_launch_context: Some(ContainerLaunchContext {
                command: vec!["echo".into(), "hi".into()],
                ..Default::default()
            }),
            container_token: String::new(),
        }
    }

    #[test]
    fn a_good_request_becomes_a_launch_spec() {
        let spec = launch_spec(&request()).unwrap();
        assert_eq!(spec.app_id, "application_1700000000000_0003");
        assert_eq!(spec.command, "echo hi");
        assert_eq!(spec.memory_bytes, 128 << 20);
        assert_eq!(spec.vcores, 1);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let mut r = request();
        r.container_id = "nonsense".into();
        assert!(launch_spec(&r).unwrap_err().contains("nonsense"));
        let mut r = request();
        r.application_id = "application_1700000000000_0004".into();
        assert!(launch_spec(&r).unwrap_err().contains("does not match"));
        let mut r = request();
        r.resource = None;
        assert_eq!(launch_spec(&r).unwrap_err(), "missing resource");
        let mut r = request();
        r.container_launch_context = None;
        assert!(launch_spec(&r).unwrap_err().contains("launch_context"));
        let mut r = request();
        if let Some(ctx) = r.container_launch_context.as_mut() {
            ctx.local_resources.insert(
                "a.zip".into(),
                LocalResource {
                    resource: "/tmp/a.zip".into(),
                    r#type: 7,
                    ..Default::default()
                },
            );
        }
        assert!(launch_spec(&r).unwrap_err().contains("unknown type 7"));
    }

    #[test]
    fn archives_tokens_and_hadoop_quoting_reach_the_launch_spec() {
        let mut r = request();
        if let Some(ctx) = r.container_launch_context.as_mut() {
            ctx.local_resources.insert(
                "conf".into(),
                LocalResource {
                    resource: "file:///staging/conf.zip".into(),
                    r#type: LocalResourceType::Archive as i32,
                    ..Default::default()
                },
            );
            ctx.tokens = b"HDTS".to_vec();
            ctx.hadoop_quoting = true;
        }
        let spec = launch_spec(&r).unwrap();
        assert_eq!(spec.local_resources["conf"].kind, ResourceKind::Archive);
        assert_eq!(spec.local_resources["conf"].url, "file:///staging/conf.zip");
        assert_eq!(spec.tokens, b"HDTS");
        assert!(spec.hadoop_quoting);
    }
}

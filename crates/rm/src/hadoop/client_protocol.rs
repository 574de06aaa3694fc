//! `ApplicationClientProtocol` (client → RM): each method decodes its request, runs one job
//! on the driver (the same rm-core calls REST makes) and encodes the answer; failures carry
//! the Java exception class Hadoop's RM throws in the same case.

use std::collections::{BTreeMap, BTreeSet};

use prost::Message;
use weft_hadoop_ipc::{decode_request, exception, CallFuture, Caller, Protocol, RpcError};
use weft_proto::hadoop::yarn::*;
use weft_proto::hadoop::{self as wire, CLIENT_PROTOCOL};
use weft_rm_core::{AppReport, AppState, AttemptReport, ContainerReport, RmCore, RmError};
use weft_sched::SchedulerKind;
use weft_types::yarn_id::{ApplicationId, AttemptId};
use weft_types::Time;

use super::records::{self, QueueContext, ReportContext};
use super::submission;
use crate::driver::{Driver, DriverError};

/// The protocol's handlers: getClusterMetrics, getNewApplication, submitApplication,
/// getApplicationReport, getApplications, forceKillApplication, getClusterNodes, getQueueInfo,
/// moveApplicationAcrossQueues, getApplicationAttempts, getApplicationAttemptReport,
/// getContainers and getContainerReport. Every other method of the protocol fails with
/// `RpcNoSuchMethodException` and leaves the connection usable (docs/TODO.md lists them).
#[derive(Clone)]
pub(crate) struct ClientProtocol {
    pub(crate) driver: Driver,
    /// The RM's web address (`host:port`) for reports' tracking URLs.
    pub(crate) web: String,
}

impl Protocol for ClientProtocol {
    fn name(&self) -> &'static str {
        CLIENT_PROTOCOL
    }

    fn call(&self, caller: Caller, method: &str, request: Vec<u8>) -> CallFuture {
        let this = self.clone();
        let method = method.to_string();
        Box::pin(async move {
            match method.as_str() {
                "getClusterMetrics" => this.cluster_metrics().await,
                "getNewApplication" => this.new_application().await,
                "submitApplication" => this.submit(&caller, &request).await,
                "getApplicationReport" => this.report(&request).await,
                "getApplications" => this.applications(&caller, &request).await,
                "forceKillApplication" => this.kill(&caller, &request).await,
                "getClusterNodes" => this.nodes(&request).await,
                "getQueueInfo" => this.queue_info(&request).await,
                "moveApplicationAcrossQueues" => this.move_app(&caller, &request).await,
                "getApplicationAttempts" => this.attempts(&request).await,
                "getApplicationAttemptReport" => this.attempt(&request).await,
                "getContainers" => this.containers(&request).await,
                "getContainerReport" => this.container(&request).await,
                other => Err(RpcError::no_such_method(CLIENT_PROTOCOL, other)),
            }
        })
    }
}

/// An rm-core refusal as the exception Hadoop's ClientRMService throws for it.
fn remote(e: RmError) -> RpcError {
    let message = e.to_string();
    match e {
        RmError::UnknownApp(id) => not_found(&id),
        RmError::Forbidden(_) | RmError::InvalidToken(_) => {
            RpcError::new(exception::ACCESS_CONTROL, message)
        }
        RmError::AboveMaximum { .. } => RpcError::new(exception::INVALID_RESOURCE_REQUEST, message),
        _ => RpcError::yarn(message),
    }
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(
        exception::APPLICATION_NOT_FOUND,
        format!("Application with id '{id}' doesn't exist in RM."),
    )
}

fn stopped(e: DriverError) -> RpcError {
    RpcError::yarn(e.to_string())
}

fn encoded(m: &impl Message) -> Result<Vec<u8>, RpcError> {
    Ok(m.encode_to_vec())
}

fn report_context(core: &RmCore, web: &str) -> ReportContext {
    ReportContext {
        web: web.to_string(),
        cluster_total: core.cluster_resources().0,
    }
}

/// Whether `queue` (with or without `root.`) names the app's full queue name.
fn same_queue(full: &str, asked: &str) -> bool {
    let asked = asked.trim();
    full == asked || full.strip_prefix("root.") == Some(asked)
}

impl ClientProtocol {
    async fn cluster_metrics(&self) -> Result<Vec<u8>, RpcError> {
        let m = self
            .driver
            .call(|core, now| core.cluster_metrics(now))
            .await
            .map_err(stopped)?;
        encoded(&GetClusterMetricsResponseProto {
            cluster_metrics: Some(records::cluster_metrics(&m)),
        })
    }

    async fn new_application(&self) -> Result<Vec<u8>, RpcError> {
        let (id, max) = self
            .driver
            .call(|core, now| (core.new_application(now), core.maximum_allocation()))
            .await
            .map_err(stopped)?;
        encoded(&GetNewApplicationResponseProto {
            application_id: Some(wire::application_id_proto(id)),
            maximum_capability: Some(wire::resource_proto(max)),
        })
    }

    async fn submit(&self, caller: &Caller, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: SubmitApplicationRequestProto = decode_request("submitApplication", request)?;
        let ctx = req.application_submission_context.ok_or_else(|| {
            RpcError::yarn("submitApplication: the request has no application_submission_context")
        })?;
        let (id, sub) = submission::from_context(&ctx, &caller.user)?;
        self.driver
            .ensure_groups(&caller.user)
            .await
            .map_err(stopped)?;
        let result = self
            .driver
            .call(move |core, now| core.submit(now, id, sub))
            .await
            .map_err(stopped)?;
        match result {
            Ok(()) => {
                tracing::info!(app = %id, user = %caller.user, "application submitted over Hadoop IPC")
            }
            // A client that retries a submission whose answer it lost must see success, as
            // Hadoop's RM answers a second submission of a known id.
            Err(RmError::AlreadySubmitted(_)) => {}
            Err(e) => return Err(remote(e)),
        }
        encoded(&SubmitApplicationResponseProto {})
    }

    async fn report(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetApplicationReportRequestProto =
            decode_request("getApplicationReport", request)?;
        let id = wire::application_id(req.application_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("getApplicationReport: {e}")))?;
        let web = self.web.clone();
        let found = self
            .driver
            .call(move |core, _| {
                let ctx = report_context(core, &web);
                core.app_report(&id).map(|r| records::app_report(&r, &ctx))
            })
            .await
            .map_err(stopped)?;
        let report = found.ok_or_else(|| not_found(&id.to_string()))?;
        encoded(&GetApplicationReportResponseProto {
            application_report: Some(report),
        })
    }

    async fn applications(&self, caller: &Caller, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetApplicationsRequestProto = decode_request("getApplications", request)?;
        let filter = AppFilter::new(&req, &caller.user);
        let web = self.web.clone();
        let applications = self
            .driver
            .call(move |core, _| {
                let ctx = report_context(core, &web);
                let mut matching: Vec<ApplicationReportProto> = core
                    .app_reports()
                    .iter()
                    .filter(|r| filter.matches(r))
                    .map(|r| records::app_report(r, &ctx))
                    .collect();
                if let Some(limit) = filter.limit {
                    matching.truncate(limit);
                }
                matching
            })
            .await
            .map_err(stopped)?;
        encoded(&GetApplicationsResponseProto { applications })
    }

    async fn kill(&self, caller: &Caller, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: KillApplicationRequestProto = decode_request("forceKillApplication", request)?;
        let id = wire::application_id(req.application_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("forceKillApplication: {e}")))?;
        self.driver
            .ensure_groups(&caller.user)
            .await
            .map_err(stopped)?;
        let user = caller.user.clone();
        let state = self
            .driver
            .call(move |core, now| core.kill(now, id, Some(&user)))
            .await
            .map_err(stopped)?
            .map_err(remote)?;
        if state == AppState::Killed {
            tracing::info!(app = %id, user = %caller.user, "application killed over Hadoop IPC");
        }
        // Weft's kill ends the app before it answers, so the kill is complete (a client
        // loops until it is).
        encoded(&KillApplicationResponseProto {
            is_kill_completed: Some(state.is_final()),
        })
    }

    async fn nodes(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetClusterNodesRequestProto = decode_request("getClusterNodes", request)?;
        let wanted: BTreeSet<i32> = req.node_states.iter().copied().collect();
        let nodes = self
            .driver
            .call(|core, _| core.node_infos())
            .await
            .map_err(stopped)?;
        let node_reports = nodes
            .iter()
            .filter(|n| {
                wanted.is_empty() || wanted.contains(&(records::node_state(n.state) as i32))
            })
            .map(records::node_report)
            .collect();
        encoded(&GetClusterNodesResponseProto { node_reports })
    }

    async fn queue_info(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetQueueInfoRequestProto = decode_request("getQueueInfo", request)?;
        let asked = req.queue_name.clone().unwrap_or_default();
        let web = self.web.clone();
        let found = self
            .driver
            .call(move |core, now| queue_info(core, now, &req, &web))
            .await
            .map_err(stopped)?;
        let info = found
            .ok_or_else(|| RpcError::new(exception::IO, format!("queue {asked} does not exist")))?;
        encoded(&GetQueueInfoResponseProto {
            queue_info: Some(info),
        })
    }

    async fn move_app(&self, caller: &Caller, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: MoveApplicationAcrossQueuesRequestProto =
            decode_request("moveApplicationAcrossQueues", request)?;
        let id = wire::application_id(Some(&req.application_id))
            .map_err(|e| RpcError::yarn(format!("moveApplicationAcrossQueues: {e}")))?;
        self.driver
            .ensure_groups(&caller.user)
            .await
            .map_err(stopped)?;
        let user = caller.user.clone();
        let target = req.target_queue;
        let moved = self
            .driver
            .call(move |core, now| core.move_app(now, id, &target, Some(&user)))
            .await
            .map_err(stopped)?
            .map_err(remote)?;
        tracing::info!(app = %id, queue = %moved, "application moved over Hadoop IPC");
        encoded(&MoveApplicationAcrossQueuesResponseProto {})
    }
}

/// An app's attempts, its user, and the tracking URL with the attempt it belongs to (the
/// current one).
struct AttemptsOf {
    attempts: Vec<AttemptReport>,
    user: String,
    tracking: Option<(AttemptId, String)>,
}

impl AttemptsOf {
    fn url_of(&self, attempt: AttemptId) -> Option<&str> {
        self.tracking
            .as_ref()
            .filter(|(current, _)| *current == attempt)
            .map(|(_, url)| url.as_str())
    }
}

/// `None` for an unknown app.
fn attempts_of(core: &RmCore, id: &ApplicationId) -> Option<AttemptsOf> {
    let r = core.app_report(id)?;
    let tracking = r.current_attempt.map(|a| a.id).zip(r.tracking_url);
    Some(AttemptsOf {
        attempts: core.attempt_reports(id)?,
        user: r.user,
        tracking,
    })
}

impl ClientProtocol {
    async fn attempts(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetApplicationAttemptsRequestProto =
            decode_request("getApplicationAttempts", request)?;
        let id = wire::application_id(req.application_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("getApplicationAttempts: {e}")))?;
        let found = self
            .driver
            .call(move |core, _| attempts_of(core, &id))
            .await
            .map_err(stopped)?;
        let of = found.ok_or_else(|| not_found(&id.to_string()))?;
        let application_attempts = of
            .attempts
            .iter()
            .map(|a| records::attempt_report(a, of.url_of(a.id)))
            .collect();
        encoded(&GetApplicationAttemptsResponseProto {
            application_attempts,
        })
    }

    async fn attempt(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetApplicationAttemptReportRequestProto =
            decode_request("getApplicationAttemptReport", request)?;
        let id = wire::attempt_id(req.application_attempt_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("getApplicationAttemptReport: {e}")))?;
        let app = id.app;
        let found = self
            .driver
            .call(move |core, _| attempts_of(core, &app))
            .await
            .map_err(stopped)?;
        let of = found.ok_or_else(|| not_found(&app.to_string()))?;
        let a = of
            .attempts
            .iter()
            .find(|a| a.id == id)
            .ok_or_else(|| attempt_not_found(&id.to_string()))?;
        encoded(&GetApplicationAttemptReportResponseProto {
            application_attempt_report: Some(records::attempt_report(a, of.url_of(a.id))),
        })
    }

    async fn containers(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetContainersRequestProto = decode_request("getContainers", request)?;
        let id = wire::attempt_id(req.application_attempt_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("getContainers: {e}")))?;
        let (user, known, list) = self.containers_of(id).await?;
        if !known {
            return Err(attempt_not_found(&id.to_string()));
        }
        let containers = list
            .iter()
            .filter(|c| c.attempt == id)
            .map(|c| records::container_report(c, &user))
            .collect();
        encoded(&GetContainersResponseProto { containers })
    }

    async fn container(&self, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: GetContainerReportRequestProto = decode_request("getContainerReport", request)?;
        let id = wire::container_id(req.container_id.as_ref())
            .map_err(|e| RpcError::yarn(format!("getContainerReport: {e}")))?;
        let (user, _, list) = self.containers_of(id.attempt_id()).await?;
        let c = list.iter().find(|c| c.id == id).ok_or_else(|| {
            RpcError::new(
                exception::CONTAINER_NOT_FOUND,
                format!("Container with id '{id}' doesn't exist in RM."),
            )
        })?;
        encoded(&GetContainerReportResponseProto {
            container_report: Some(records::container_report(c, &user)),
        })
    }

    /// The app's user, whether `attempt` is one of its attempts, and its containers (live and
    /// recently ended); ApplicationNotFoundException for an unknown app.
    async fn containers_of(
        &self,
        attempt: AttemptId,
    ) -> Result<(String, bool, Vec<ContainerReport>), RpcError> {
        let app = attempt.app;
        let found = self
            .driver
            .call(move |core, _| {
                let of = attempts_of(core, &app)?;
                let known = of.attempts.iter().any(|a| a.id == attempt);
                Some((
                    of.user,
                    known,
                    core.container_reports(&app).unwrap_or_default(),
                ))
            })
            .await
            .map_err(stopped)?;
        found.ok_or_else(|| not_found(&app.to_string()))
    }
}

fn attempt_not_found(id: &str) -> RpcError {
    RpcError::new(
        exception::APPLICATION_ATTEMPT_NOT_FOUND,
        format!("Application attempt with id '{id}' doesn't exist in RM."),
    )
}

/// `getQueueInfo` on the core: the queue (with or without `root.`; Hadoop's clients usually
/// send the short name of a queue under root), `None` when there is no such queue.
fn queue_info(
    core: &mut RmCore,
    _now: Time,
    req: &GetQueueInfoRequestProto,
    web: &str,
) -> Option<QueueInfoProto> {
    let asked = req.queue_name.as_deref().unwrap_or("root").trim();
    let snapshot = core.scheduler_snapshot();
    let at = snapshot
        .queues
        .iter()
        .position(|q| same_queue(&q.name, asked))?;
    let kind = core.scheduler().kind();
    let capacities: BTreeMap<String, (f32, f32, f32)> = core
        .scheduler()
        .capacity_details()
        .into_iter()
        .map(|d| {
            let f = |p: f64| (p / 100.0) as f32;
            (
                d.name,
                (f(d.capacity), f(d.max_capacity), f(d.used_capacity)),
            )
        })
        .collect();
    let reports = if req.include_applications() {
        let ctx = report_context(core, web);
        core.app_reports()
            .iter()
            .filter(|r| !r.state.is_final())
            .map(|r| (r.queue.clone(), records::app_report(r, &ctx)))
            .collect()
    } else {
        Vec::new()
    };
    let apps = |queue: &str| -> Vec<ApplicationReportProto> {
        reports
            .iter()
            .filter(|(q, _)| q == queue)
            .map(|(_, r)| r.clone())
            .collect()
    };
    let ctx = QueueContext {
        cluster: snapshot.cluster_capacity,
        scheduler_type: match kind {
            SchedulerKind::Fair => "fairScheduler",
            SchedulerKind::Capacity => "capacityScheduler",
            SchedulerKind::Fifo => "fifoScheduler",
        },
        capacities: &capacities,
        apps: &apps,
    };
    Some(records::queue_info(
        &snapshot.queues,
        at,
        &ctx,
        req.include_child_queues(),
        req.recursive(),
    ))
}

/// `GetApplicationsRequestProto`'s filters (each unset one matches everything).
struct AppFilter {
    types: BTreeSet<String>,
    states: BTreeSet<i32>,
    users: BTreeSet<String>,
    queues: Vec<String>,
    tags: BTreeSet<String>,
    name: Option<String>,
    started: (i64, i64),
    finished: (i64, i64),
    only_user: Option<String>,
    limit: Option<usize>,
}

impl AppFilter {
    fn new(req: &GetApplicationsRequestProto, caller: &str) -> AppFilter {
        let lower = |v: &[String]| v.iter().map(|s| s.trim().to_lowercase()).collect();
        AppFilter {
            types: lower(&req.application_types),
            states: req.application_states.iter().copied().collect(),
            users: req.users.iter().cloned().collect(),
            queues: req.queues.clone(),
            tags: lower(&req.application_tags),
            name: req.name.clone().filter(|n| !n.is_empty()),
            started: (
                req.start_begin.unwrap_or(0),
                req.start_end.unwrap_or(i64::MAX),
            ),
            finished: (
                req.finish_begin.unwrap_or(0),
                req.finish_end.unwrap_or(i64::MAX),
            ),
            only_user: (req.scope() == ApplicationsRequestScopeProto::Own)
                .then(|| caller.to_string()),
            limit: req
                .limit
                .filter(|l| *l > 0)
                .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
        }
    }

    fn matches(&self, r: &AppReport) -> bool {
        let within = |t: i64, (from, to): (i64, i64)| from <= t && t <= to;
        let ms = |t: Time| i64::try_from(t.as_millis()).unwrap_or(i64::MAX);
        (self.types.is_empty() || self.types.contains(&r.application_type.to_lowercase()))
            && (self.states.is_empty()
                || self.states.contains(&(records::app_state(r.state) as i32)))
            && (self.users.is_empty() || self.users.contains(&r.user))
            && (self.queues.is_empty() || self.queues.iter().any(|q| same_queue(&r.queue, q)))
            && (self.tags.is_empty() || r.tags.iter().any(|t| self.tags.contains(t)))
            && self.name.as_ref().is_none_or(|n| *n == r.name)
            && self.only_user.as_ref().is_none_or(|u| *u == r.user)
            && within(ms(r.submit_time), self.started)
            && within(r.finish_time.map_or(0, ms), self.finished)
    }
}
